#include "parity/gemm/origami_agreement.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

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

Result<std::vector<OrigamiRanking>> read_origami_rankings(const std::filesystem::path& csv_path) {
  std::ifstream in(csv_path);
  if (!in) return io_error("origami rankings: cannot open '", csv_path.string(), "'");
  std::vector<OrigamiRanking> rankings;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line.rfind("problem,", 0) == 0) continue;
    std::vector<std::string> f;
    std::stringstream row(line);
    std::string field;
    while (std::getline(row, field, ',')) f.push_back(field);
    PARITY_CHECK_ARG(f.size() == 11, "origami rankings: '", csv_path.string(), "' line ",
                     line_number, " has ", f.size(), " fields (expected 11)");
    if (rankings.empty() || rankings.back().problem_text != f[0]) {
      OrigamiRanking ranking;
      ranking.problem_text = f[0];
      long long dims[4] = {0, 0, 0, 1};
      std::stringstream dims_in(f[0]);
      std::string part;
      int d = 0;
      while (std::getline(dims_in, part, 'x') && d < 4) dims[d++] = std::stoll(part);
      PARITY_CHECK_ARG(d >= 3, "origami rankings: line ", line_number, " problem '", f[0],
                       "' is not MxNxK[xB]");
      ranking.problem.m = dims[0];
      ranking.problem.n = dims[1];
      ranking.problem.k = dims[2];
      ranking.problem.batch = dims[3];
      rankings.push_back(std::move(ranking));
    }
    Candidate c;
    c.tile_m = std::stoi(f[3]);
    c.tile_n = std::stoi(f[4]);
    c.tile_k = std::stoi(f[5]);
    c.mi_m = std::stoi(f[6]);
    c.mi_n = std::stoi(f[7]);
    c.mi_k = std::stoi(f[8]);
    c.occupancy = std::stoi(f[9]);
    c.group_size = std::stoi(f[10]);
    c.stages = 2;
    c.xcd_mapping = XcdMapping::kContiguous;
    rankings.back().top.push_back(c);
    rankings.back().latency.push_back(std::stod(f[2]));
  }
  return rankings;
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
