#include "parity/gemm/origami_agreement.hpp"

#include <algorithm>
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

AgreementReport compare_with_origami(Selector& selector, const std::vector<OrigamiRanking>& rankings,
                                     const std::vector<Candidate>& space) {
  std::vector<Candidate> comparable;
  for (const Candidate& c : space) {
    const double footprint_bytes = static_cast<double>(c.tile_m + c.tile_n) * c.tile_k * 2.0;
    if (c.decomposition == Decomposition::kDataParallel && c.xcd_mapping == XcdMapping::kContiguous &&
        footprint_bytes <= kOrigamiTileFootprintBytes) {
      comparable.push_back(c);
    }
  }
  AgreementReport report;
  double rho_shared_sum = 0, rho_theirs_sum = 0, top1_rank_sum = 0;
  for (const OrigamiRanking& theirs : rankings) {
    if (theirs.top.empty()) continue;
    auto ranked = selector.rank(theirs.problem, comparable);
    if (!ranked) continue;
    ++report.problems;
    const std::size_t n_top = std::min<std::size_t>(theirs.top.size(), ranked->size());
    std::vector<FullKey> ours_full;
    std::set<TileKey> ours_tiles, their_tiles;
    for (std::size_t i = 0; i < n_top; ++i) {
      const Candidate& c = comparable[(*ranked)[i].index];
      ours_full.push_back(full_key(c));
      ours_tiles.insert(tile_key(c));
    }
    const Candidate& our_top = comparable[ranked->front().index];
    report.top1_exact += full_key(our_top) == full_key(theirs.top.front()) ? 1.0 : 0.0;
    report.top1_macro_tile += tile_key(our_top) == tile_key(theirs.top.front()) ? 1.0 : 0.0;
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
    for (std::size_t i = 0; i < ranked->size(); ++i) {
      if (full_key(comparable[(*ranked)[i].index]) == full_key(theirs.top.front())) {
        top1_rank_sum += static_cast<double>(i);
        break;
      }
      if (i + 1 == ranked->size()) top1_rank_sum += static_cast<double>(ranked->size());
    }
  }
  if (report.problems > 0) {
    const double n = report.problems;
    report.top1_exact /= n;
    report.top1_macro_tile /= n;
    report.top10_overlap_exact /= n;
    report.top10_overlap_macro_tile /= n;
    report.spearman_their_top10 = rho_theirs_sum / n;
    report.rank_of_their_top1 = top1_rank_sum / n;
  }
  if (report.spearman_shared_problems > 0) {
    report.spearman_shared = rho_shared_sum / report.spearman_shared_problems;
  }
  return report;
}

}  // namespace parity::gemm
