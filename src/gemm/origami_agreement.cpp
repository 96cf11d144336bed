#include "parity/gemm/origami_agreement.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <optional>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "parity/core/parse.hpp"

namespace parity::gemm {
namespace {

using FullKey = std::tuple<int, int, int, int, int, int, int>;
using TileKey = std::tuple<int, int, int>;

FullKey full_key(const Candidate& c) {
  return {c.tile_m, c.tile_n, c.tile_k, c.mi_m, c.mi_k, c.occupancy, c.group_size};
}
TileKey tile_key(const Candidate& c) { return {c.tile_m, c.tile_n, c.tile_k}; }

// Ranks with ties sharing their mean rank.
std::vector<double> fractional_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double mean = 0.5 * static_cast<double>(i + j);
    for (std::size_t t = i; t <= j; ++t) ranks[order[t]] = mean;
    i = j + 1;
  }
  return ranks;
}

// Spearman rho as the Pearson correlation of fractional ranks; 0 when either side is constant.
double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const auto rx = fractional_ranks(x), ry = fractional_ranks(y);
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += rx[i] / n, my += ry[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : 0.0;
}

}  // namespace

namespace {

constexpr std::string_view kOrigamiHeader =
    "problem,rank,latency,mt_m,mt_n,mt_k,mi_m,mi_n,mi_k,occ,wgm";

// "MxNxK" or "MxNxKxBatch", each a strict positive integer, the problem passing validate().
// Messages carry no location: the caller prefixes "<file>: line N".
Result<GemmProblem> parse_origami_problem(std::string_view text) {
  static constexpr const char* kNames[] = {"problem m", "problem n", "problem k", "problem batch"};
  std::int64_t dims[4] = {0, 0, 0, 1};
  std::size_t count = 0;
  for (std::size_t start = 0;;) {
    PARITY_CHECK_ARG(count < 4, "problem '", text, "' has more than 4 sizes (MxNxK[xB])");
    const std::size_t x = text.find('x', start);
    const std::string_view part = text.substr(start, x == std::string_view::npos ? x : x - start);
    PARITY_ASSIGN_OR_RETURN(dims[count], parse_int64(part, kNames[count], 1));
    ++count;
    if (x == std::string_view::npos) break;
    start = x + 1;
  }
  PARITY_CHECK_ARG(count >= 3, "problem '", text, "' is not MxNxK[xB]");
  GemmProblem problem;
  problem.m = dims[0];
  problem.n = dims[1];
  problem.k = dims[2];
  problem.batch = dims[3];
  PARITY_RETURN_IF_ERROR(problem.validate());
  return problem;
}

// One ranked row after its problem: rank, latency and the configuration. Tile and instruction
// sizes are strict integers in [1, bound] (bounds far above any listed kernel: tiles up to 1024,
// MFMA sizes up to 32, occupancy 2, WGM 8 in the shipped lists).
Status parse_origami_row(const std::vector<std::string_view>& f, OrigamiRanking& ranking) {
  PARITY_ASSIGN_OR_RETURN(const std::int64_t rank, parse_int64(f[1], "rank", 0, 1 << 20));
  PARITY_CHECK_ARG(rank == static_cast<std::int64_t>(ranking.top.size()), "rank ", rank,
                   " of problem '", f[0], "' (expected ", ranking.top.size(),
                   ": ranks count up from 0)");
  PARITY_ASSIGN_OR_RETURN(const double latency, parse_double(f[2], "latency"));
  PARITY_CHECK_ARG(latency > 0.0, "latency ", f[2], " must be > 0");
  static constexpr struct {
    const char* name;
    int Candidate::*member;
    std::int64_t maximum;
  } kColumns[] = {
      {"mt_m", &Candidate::tile_m, 1 << 16},   {"mt_n", &Candidate::tile_n, 1 << 16},
      {"mt_k", &Candidate::tile_k, 1 << 16},   {"mi_m", &Candidate::mi_m, 1 << 10},
      {"mi_n", &Candidate::mi_n, 1 << 10},     {"mi_k", &Candidate::mi_k, 1 << 10},
      {"occ", &Candidate::occupancy, 1 << 10}, {"wgm", &Candidate::group_size, 1 << 20}};
  Candidate c;
  for (std::size_t i = 0; i < std::size(kColumns); ++i) {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t value,
                            parse_int64(f[3 + i], kColumns[i].name, 1, kColumns[i].maximum));
    c.*kColumns[i].member = static_cast<int>(value);
  }
  c.stages = 2;
  c.decomposition = Decomposition::kStreamK;  // Origami ranks with its k-split-aware grid
  c.xcd_mapping = XcdMapping::kContiguous;
  ranking.top.push_back(c);
  ranking.latency.push_back(latency);
  return Status::ok();
}

std::vector<std::string_view> split_commas(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t begin = 0;;) {
    const std::size_t comma = line.find(',', begin);
    fields.push_back(line.substr(begin, comma == std::string_view::npos ? comma : comma - begin));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return fields;
}

}  // namespace

Result<std::vector<OrigamiRanking>> parse_origami_rankings(std::string_view text,
                                                           std::string_view origin,
                                                           GemmLayout layout) {
  std::vector<OrigamiRanking> rankings;
  std::set<std::string, std::less<>> finished_problems;
  bool seen_header = false;
  int line_number = 0;
  // Built only on failure: "<origin>: line N".
  const auto at_line = [&] { return detail::concat(origin, ": line ", line_number); };
  for (std::size_t line_start = 0; line_start < text.size();) {
    const std::size_t newline = text.find('\n', line_start);
    std::string_view line =
        text.substr(line_start, newline == std::string_view::npos ? newline : newline - line_start);
    line_start = newline == std::string_view::npos ? text.size() : newline + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!seen_header) {
      PARITY_CHECK_ARG(line == kOrigamiHeader, at_line(), ": header '", line, "' (expected '",
                       kOrigamiHeader, "')");
      seen_header = true;
      continue;
    }
    const std::vector<std::string_view> f = split_commas(line);
    PARITY_CHECK_ARG(f.size() == 11, at_line(), " has ", f.size(),
                     " fields (expected 11: ", kOrigamiHeader, ")");
    if (rankings.empty() || rankings.back().problem_text != f[0]) {
      PARITY_CHECK_ARG(finished_problems.find(f[0]) == finished_problems.end(), at_line(),
                       ": problem '", f[0], "' appears again after other problems");
      if (!rankings.empty()) finished_problems.insert(rankings.back().problem_text);
      OrigamiRanking ranking;
      ranking.problem_text = std::string(f[0]);
      auto problem = parse_origami_problem(f[0]);
      if (!problem) return problem.status().with_context(at_line());
      ranking.problem = *problem;
      ranking.problem.layout = layout;
      rankings.push_back(std::move(ranking));
    }
    const Status row = parse_origami_row(f, rankings.back());
    if (!row.is_ok()) return row.with_context(at_line());
  }
  PARITY_CHECK_ARG(!rankings.empty(), origin, ": no rankings (expected the header '",
                   kOrigamiHeader, "' and at least one row)");
  return rankings;
}

GemmLayout origami_file_layout(const std::filesystem::path& csv_path) {
  const std::string stem = csv_path.stem().string();
  const std::size_t underscore = stem.rfind('_');
  if (underscore == std::string::npos || stem.size() - underscore != 3) return GemmLayout::kTN;
  // Only the four upper-case suffixes count ("_bf16" or a lower-case tail is not a layout).
  const std::string_view suffix = std::string_view(stem).substr(underscore + 1);
  for (const GemmLayout layout : {GemmLayout::kTN, GemmLayout::kTT, GemmLayout::kNN, GemmLayout::kNT}) {
    if (suffix == layout_name(layout)) return layout;
  }
  return GemmLayout::kTN;
}

Result<std::vector<OrigamiRanking>> read_origami_rankings(const std::filesystem::path& csv_path) {
  std::ifstream in(csv_path, std::ios::binary);
  if (!in) return io_error("origami rankings: cannot open '", csv_path.string(), "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error("origami rankings: read of '", csv_path.string(), "' failed");
  return parse_origami_rankings(text.str(), csv_path.string(), origami_file_layout(csv_path));
}

Result<DeviceParams> origami_reference_device(const DeviceParams& catalogue_device) {
  DeviceParams d = catalogue_device;
  constexpr double kMib = 1048576.0;
  if (d.arch == "gfx942") {
    d.num_sms = 228;
    d.clock_ghz = 1.7;
    d.l2_bytes_per_domain = 24.0 * kMib;
  } else if (d.arch == "gfx950") {
    d.num_sms = 304;
    d.clock_ghz = 2.1;
    d.l2_bytes_per_domain = 32.0 * kMib;
  } else {
    return invalid_argument("gemm agree: no Origami baseline hardware for arch '", d.arch, "'");
  }
  d.num_l2_domains = 8;
  // get_hardware_for_arch derives the memory clock from the compute clock (clock / 1.5).
  d.memory_clock_ghz = d.clock_ghz / d.mem_clock_ratio;
  d.smem_bytes_per_sm = 64.0 * 1024.0;
  d.mi_latency_16_cycles = 16.0;
  d.mi_latency_32_cycles = 32.0;
  return d;
}

std::vector<Candidate> origami_reference_space(const DeviceParams& reference_device) {
  const int mt_sizes[] = {16, 32, 48, 96, 128, 192, 224, 256, 336, 448, 512};
  const int depth_unroll[] = {16, 32, 64, 128, 512, 1024};
  struct Mi {
    int m, k;
  };
  // Origami's order of the bf16 instructions (its hash map's iteration order, read off the
  // baselines' ties: equal latencies keep list order): CDNA3 32x32x8, 16x16x16; CDNA4 32x32x8,
  // 16x16x32, 32x32x16, 16x16x16 (the CDNA3 shapes are still offered on CDNA4).
  std::vector<Mi> instructions = {{32, 8}, {16, 16}};
  if (reference_device.arch == "gfx950") instructions = {{32, 8}, {16, 32}, {32, 16}, {16, 16}};
  // Macro tile outermost (Origami's harness loops the instruction outermost): the selector prunes
  // runs of one macro tile, and the order within a macro tile (instruction, occupancy, WGM) is
  // Origami's, so equal predictions of one tile keep its list order.
  std::vector<Candidate> space;
  for (const int tm : mt_sizes) {
    for (const int tn : mt_sizes) {
      for (const int tk : depth_unroll) {
        for (const Mi& mi : instructions) {
          for (const int occupancy : {1, 2}) {
            for (const int wgm : {1, 4, 8}) {
              Candidate c;
              c.tile_m = tm;
              c.tile_n = tn;
              c.tile_k = tk;
              c.mi_m = c.mi_n = mi.m;
              c.mi_k = mi.k;
              c.stages = 2;
              c.occupancy = occupancy;
              c.group_size = wgm;
              c.xcd_mapping = XcdMapping::kContiguous;
              c.decomposition = Decomposition::kStreamK;  // Origami's default k-split-aware grid
              space.push_back(c);
            }
          }
        }
      }
    }
  }
  return space;
}

std::string_view ranking_half_name(RankingHalf half) {
  switch (half) {
    case RankingHalf::kPort: return "port";
    case RankingHalf::kHeldOut: return "held-out";
    case RankingHalf::kAll: break;
  }
  return "all";
}

Result<RankingHalf> parse_ranking_half(std::string_view text) {
  if (text == "all") return RankingHalf::kAll;
  if (text == "port") return RankingHalf::kPort;
  if (text == "held-out") return RankingHalf::kHeldOut;
  return invalid_argument("gemm agree: half '", text, "' is not one of all, port, held-out");
}

std::uint64_t ranking_split_key(std::string_view problem_text) {
  // FNV-1a over the text, then splitmix64's finaliser with the seed mixed in: a fixed, seeded
  // order that does not depend on the file's order (both arch files list the same problems).
  std::uint64_t h = 1469598103934665603ull;
  for (const char ch : problem_text) {
    h ^= static_cast<unsigned char>(ch);
    h *= 1099511628211ull;
  }
  std::uint64_t z = h + kOrigamiSplitSeed + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<OrigamiRanking> select_half(const std::vector<OrigamiRanking>& rankings,
                                        RankingHalf half) {
  if (half == RankingHalf::kAll) return rankings;
  // The port half is the floor(n/2) problems of smallest key (ties by text), in file order.
  std::vector<std::size_t> order(rankings.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  const auto key = [&](std::size_t i) {
    return std::make_pair(ranking_split_key(rankings[i].problem_text), rankings[i].problem_text);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key(a) < key(b); });
  std::vector<bool> is_port(rankings.size(), false);
  for (std::size_t i = 0; i < rankings.size() / 2; ++i) is_port[order[i]] = true;
  std::vector<OrigamiRanking> out;
  for (std::size_t i = 0; i < rankings.size(); ++i) {
    if ((half == RankingHalf::kPort) == is_port[i]) out.push_back(rankings[i]);
  }
  return out;
}

namespace {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))];
}

}  // namespace

namespace {

// One problem's agreement figures (AgreementReport averages them).
struct ProblemScore {
  double top1_exact = 0, top1_tile = 0, in_top5 = 0, tile_in_top5 = 0;
  double overlap_exact = 0, overlap_tile = 0, rho_theirs = 0, rank_of_top1 = 0, select_us = 0;
  std::optional<double> rho_shared;  // when >= 3 configs are in both top-10s
};

// Our five best distinct macro tiles: those of our top configs, continued down the full ranking.
std::vector<TileKey> best_tiles(const std::vector<FullKey>& top, const std::vector<RankedCandidate>& ranked,
                                const std::vector<Candidate>& comparable) {
  std::vector<TileKey> tiles;
  const auto add = [&](const TileKey& t) {
    if (tiles.size() < 5 && std::find(tiles.begin(), tiles.end(), t) == tiles.end()) tiles.push_back(t);
  };
  for (const FullKey& f : top) add({std::get<0>(f), std::get<1>(f), std::get<2>(f)});
  for (std::size_t i = 0; i < ranked.size() && tiles.size() < 5; ++i) {
    add(tile_key(comparable[ranked[i].index]));
  }
  return tiles;
}

std::optional<ProblemScore> score_problem(Selector& selector, const OrigamiRanking& theirs,
                                          const std::vector<Candidate>& comparable) {
  constexpr std::size_t kTop = 10;
  // Steady-state selection latency: one untimed call (it also prepares the problem class), then
  // the median of kRepeats timed calls (the full ranking below would otherwise leave the caches
  // cold for the next problem's single call).
  constexpr int kRepeats = 5;
  auto selection = selector.select(theirs.problem, kTop);
  std::array<double, kRepeats> repeat_us{};
  for (double& us : repeat_us) {
    const auto begin = std::chrono::steady_clock::now();
    const auto again = selector.select(theirs.problem, kTop);
    const auto end = std::chrono::steady_clock::now();
    if (!again) return std::nullopt;
    us = std::chrono::duration<double, std::micro>(end - begin).count();
  }
  std::nth_element(repeat_us.begin(), repeat_us.begin() + kRepeats / 2, repeat_us.end());
  auto ranked = selector.rank(theirs.problem, comparable);
  if (!selection || !ranked) return std::nullopt;
  ProblemScore score;
  score.select_us = repeat_us[kRepeats / 2];
  // ours_full: the selector's top-k list (one configuration per macro tile by default), what a
  // user autotunes over; ours_configs: our 10 best configurations, the counterpart of their
  // top-10 list (a list of configurations) for the overlap and rank figures.
  std::vector<FullKey> ours_full, ours_configs;
  std::set<TileKey> ours_tiles, their_tiles;
  for (const RankedCandidate& r : selection->top) ours_full.push_back(full_key(comparable[r.index]));
  for (std::size_t i = 0; i < std::min(kTop, ranked->size()); ++i) {
    const Candidate& c = comparable[(*ranked)[i].index];
    ours_configs.push_back(full_key(c));
    ours_tiles.insert(tile_key(c));
  }
  const FullKey their_top = full_key(theirs.top.front());
  const TileKey their_tile = tile_key(theirs.top.front());
  score.top1_exact = ours_full.front() == their_top ? 1.0 : 0.0;
  score.top1_tile = tile_key(comparable[selection->top.front().index]) == their_tile ? 1.0 : 0.0;
  const auto top5_end = ours_full.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(5, ours_full.size()));
  score.in_top5 = std::find(ours_full.begin(), top5_end, their_top) != top5_end ? 1.0 : 0.0;
  const auto tiles = best_tiles(ours_full, *ranked, comparable);
  score.tile_in_top5 = std::find(tiles.begin(), tiles.end(), their_tile) != tiles.end() ? 1.0 : 0.0;
  std::vector<double> their_rank_shared, our_rank_shared;
  for (std::size_t i = 0; i < theirs.top.size(); ++i) {
    their_tiles.insert(tile_key(theirs.top[i]));
    const auto it = std::find(ours_configs.begin(), ours_configs.end(), full_key(theirs.top[i]));
    if (it == ours_configs.end()) continue;
    their_rank_shared.push_back(static_cast<double>(i));
    our_rank_shared.push_back(static_cast<double>(it - ours_configs.begin()));
  }
  score.overlap_exact = static_cast<double>(their_rank_shared.size()) / static_cast<double>(theirs.top.size());
  int tiles_shared = 0;
  for (const auto& t : their_tiles) tiles_shared += ours_tiles.count(t) > 0 ? 1 : 0;
  score.overlap_tile = static_cast<double>(tiles_shared) / static_cast<double>(their_tiles.size());
  if (their_rank_shared.size() >= 3) score.rho_shared = spearman(their_rank_shared, our_rank_shared);
  // Their 10 configs through our model: does our latency order follow theirs?
  const ProblemClass key = problem_class(theirs.problem);
  std::vector<double> our_latency;
  for (const Candidate& c : theirs.top) {
    our_latency.push_back(selector.model().predict_us(theirs.problem, selector.model().prepare(key, c)));
  }
  score.rho_theirs = spearman(theirs.latency, our_latency);
  score.rank_of_top1 = static_cast<double>(ranked->size());
  for (std::size_t i = 0; i < ranked->size(); ++i) {
    if (full_key(comparable[(*ranked)[i].index]) == their_top) {
      score.rank_of_top1 = static_cast<double>(i);
      break;
    }
  }
  return score;
}

}  // namespace

AgreementReport compare_with_origami(Selector& selector, const std::vector<OrigamiRanking>& all,
                                     const std::vector<Candidate>& space, RankingHalf half) {
  std::vector<Candidate> comparable;
  for (const Candidate& c : space) {
    const double footprint_bytes = static_cast<double>(c.tile_m + c.tile_n) * c.tile_k * 2.0;
    if (c.xcd_mapping == XcdMapping::kContiguous && footprint_bytes <= kOrigamiTileFootprintBytes) {
      comparable.push_back(c);
    }
  }
  selector.set_candidates(comparable);
  AgreementReport report;
  report.half = half;
  double rho_shared_sum = 0;
  std::vector<double> select_us;
  for (const OrigamiRanking& theirs : select_half(all, half)) {
    if (theirs.top.empty()) continue;
    const auto score = score_problem(selector, theirs, comparable);
    if (!score) continue;
    ++report.problems;
    report.top1_exact += score->top1_exact;
    report.top1_macro_tile += score->top1_tile;
    report.their_top1_in_our_top5 += score->in_top5;
    report.their_top1_tile_in_our_top5_tiles += score->tile_in_top5;
    report.top10_overlap_exact += score->overlap_exact;
    report.top10_overlap_macro_tile += score->overlap_tile;
    report.spearman_their_top10 += score->rho_theirs;
    report.rank_of_their_top1 += score->rank_of_top1;
    if (score->rho_shared) {
      rho_shared_sum += *score->rho_shared;
      ++report.spearman_shared_problems;
    }
    select_us.push_back(score->select_us);
  }
  if (report.problems > 0) {
    const double n = report.problems;
    for (double* v : {&report.top1_exact, &report.top1_macro_tile, &report.their_top1_in_our_top5,
                      &report.their_top1_tile_in_our_top5_tiles, &report.top10_overlap_exact,
                      &report.top10_overlap_macro_tile, &report.spearman_their_top10,
                      &report.rank_of_their_top1}) {
      *v /= n;
    }
  }
  if (report.spearman_shared_problems > 0) {
    report.spearman_shared = rho_shared_sum / report.spearman_shared_problems;
  }
  report.selection_p50_us = percentile(select_us, 0.5);
  report.selection_p99_us = percentile(select_us, 0.99);
  return report;
}

}  // namespace parity::gemm
