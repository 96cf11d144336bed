#include "parity/gemm/origami_agreement.hpp"

#include <algorithm>
#include <chrono>
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
                                                           std::string_view origin) {
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
      rankings.push_back(std::move(ranking));
    }
    const Status row = parse_origami_row(f, rankings.back());
    if (!row.is_ok()) return row.with_context(at_line());
  }
  PARITY_CHECK_ARG(!rankings.empty(), origin, ": no rankings (expected the header '",
                   kOrigamiHeader, "' and at least one row)");
  return rankings;
}

Result<std::vector<OrigamiRanking>> read_origami_rankings(const std::filesystem::path& csv_path) {
  std::ifstream in(csv_path, std::ios::binary);
  if (!in) return io_error("origami rankings: cannot open '", csv_path.string(), "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error("origami rankings: read of '", csv_path.string(), "' failed");
  return parse_origami_rankings(text.str(), csv_path.string());
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

std::vector<OrigamiRanking> select_half(const std::vector<OrigamiRanking>& rankings,
                                        RankingHalf half) {
  std::vector<OrigamiRanking> out;
  for (std::size_t i = 0; i < rankings.size(); ++i) {
    const bool is_port = i % 2 == 0;
    if (half == RankingHalf::kAll || (half == RankingHalf::kPort) == is_port) {
      out.push_back(rankings[i]);
    }
  }
  return out;
}

namespace {

// Our ranks of the comparable space for one problem: the top `keep` through the selector (the
// pruned path, timed), and where Origami's top-1 falls in our full order (exact, untimed).
struct OurRanking {
  std::vector<std::size_t> top;  // indices into the comparable space, best first
  double select_us = 0.0;
  std::size_t rank_of_their_top1 = 0;
};

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(q * static_cast<double>(values.size() - 1))];
}

}  // namespace

AgreementReport compare_with_origami(Selector& selector, const std::vector<OrigamiRanking>& all,
                                     const std::vector<Candidate>& space, RankingHalf half) {
  std::vector<Candidate> comparable;
  for (const Candidate& c : space) {
    const double footprint_bytes = static_cast<double>(c.tile_m + c.tile_n) * c.tile_k * 2.0;
    if (c.decomposition == Decomposition::kDataParallel && c.xcd_mapping == XcdMapping::kContiguous &&
        footprint_bytes <= kOrigamiTileFootprintBytes) {
      comparable.push_back(c);
    }
  }
  selector.set_candidates(comparable);
  const std::vector<OrigamiRanking> rankings = select_half(all, half);
  AgreementReport report;
  report.half = half;
  double rho_shared_sum = 0, rho_theirs_sum = 0, top1_rank_sum = 0;
  std::vector<double> select_us;
  constexpr std::size_t kTop = 10;
  for (const OrigamiRanking& theirs : rankings) {
    if (theirs.top.empty()) continue;
    const auto begin = std::chrono::steady_clock::now();
    auto selection = selector.select(theirs.problem, kTop);
    const auto end = std::chrono::steady_clock::now();
    if (!selection) continue;
    select_us.push_back(std::chrono::duration<double, std::micro>(end - begin).count());
    auto ranked = selector.rank(theirs.problem, comparable);
    if (!ranked) continue;
    ++report.problems;
    std::vector<FullKey> ours_full;
    std::vector<TileKey> ours_tile_order;
    std::set<TileKey> ours_tiles, their_tiles;
    for (const RankedCandidate& r : selection->top) {
      const Candidate& c = comparable[r.index];
      ours_full.push_back(full_key(c));
      ours_tiles.insert(tile_key(c));
      if (std::find(ours_tile_order.begin(), ours_tile_order.end(), tile_key(c)) ==
          ours_tile_order.end()) {
        ours_tile_order.push_back(tile_key(c));
      }
    }
    // Our five best distinct macro tiles: continue down the full ranking when the top-10 configs
    // hold fewer.
    for (std::size_t i = 0; i < ranked->size() && ours_tile_order.size() < 5; ++i) {
      const TileKey t = tile_key(comparable[(*ranked)[i].index]);
      if (std::find(ours_tile_order.begin(), ours_tile_order.end(), t) == ours_tile_order.end()) {
        ours_tile_order.push_back(t);
      }
    }
    const Candidate& our_top = comparable[selection->top.front().index];
    const FullKey their_top = full_key(theirs.top.front());
    report.top1_exact += full_key(our_top) == their_top ? 1.0 : 0.0;
    report.top1_macro_tile += tile_key(our_top) == tile_key(theirs.top.front()) ? 1.0 : 0.0;
    const auto in_top5 = std::find(ours_full.begin(), ours_full.begin() + std::min<std::ptrdiff_t>(5, static_cast<std::ptrdiff_t>(ours_full.size())), their_top);
    report.their_top1_in_our_top5 +=
        in_top5 != ours_full.begin() + std::min<std::ptrdiff_t>(5, static_cast<std::ptrdiff_t>(ours_full.size())) ? 1.0 : 0.0;
    report.their_top1_tile_in_our_top5_tiles +=
        std::find(ours_tile_order.begin(), ours_tile_order.end(), tile_key(theirs.top.front())) !=
                ours_tile_order.end()
            ? 1.0
            : 0.0;
    int shared = 0;
    std::vector<double> their_rank_shared, our_rank_shared;
    for (std::size_t i = 0; i < theirs.top.size(); ++i) {
      their_tiles.insert(tile_key(theirs.top[i]));
      const auto it = std::find(ours_full.begin(), ours_full.end(), full_key(theirs.top[i]));
      if (it != ours_full.end()) {
        ++shared;
        their_rank_shared.push_back(static_cast<double>(i));
        our_rank_shared.push_back(static_cast<double>(it - ours_full.begin()));
      }
    }
    report.top10_overlap_exact += static_cast<double>(shared) / static_cast<double>(theirs.top.size());
    int tiles_shared = 0;
    for (const auto& t : their_tiles) tiles_shared += ours_tiles.count(t) > 0 ? 1 : 0;
    report.top10_overlap_macro_tile +=
        static_cast<double>(tiles_shared) / static_cast<double>(their_tiles.size());
    if (shared >= 3) {
      rho_shared_sum += spearman(their_rank_shared, our_rank_shared);
      ++report.spearman_shared_problems;
    }
    // Their 10 configs through our model: does our latency order follow their latency order?
    const ProblemClass key = problem_class(theirs.problem);
    std::vector<double> our_latency;
    for (const Candidate& c : theirs.top) {
      our_latency.push_back(selector.model().predict_us(theirs.problem, selector.model().prepare(key, c)));
    }
    rho_theirs_sum += spearman(theirs.latency, our_latency);
    // Where our full ranking puts their top-1.
    std::size_t at = ranked->size();
    for (std::size_t i = 0; i < ranked->size(); ++i) {
      if (full_key(comparable[(*ranked)[i].index]) == their_top) {
        at = i;
        break;
      }
    }
    top1_rank_sum += static_cast<double>(at);
  }
  if (report.problems > 0) {
    const double n = report.problems;
    report.top1_exact /= n;
    report.top1_macro_tile /= n;
    report.top10_overlap_exact /= n;
    report.top10_overlap_macro_tile /= n;
    report.their_top1_in_our_top5 /= n;
    report.their_top1_tile_in_our_top5_tiles /= n;
    report.spearman_their_top10 = rho_theirs_sum / n;
    report.rank_of_their_top1 = top1_rank_sum / n;
  }
  if (report.spearman_shared_problems > 0) {
    report.spearman_shared = rho_shared_sum / report.spearman_shared_problems;
  }
  report.selection_p50_us = percentile(select_us, 0.5);
  report.selection_p99_us = percentile(select_us, 0.99);
  return report;
}

}  // namespace parity::gemm
