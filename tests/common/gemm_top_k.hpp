// The top-k list a selector should return, derived from the exhaustive ranking (Selector::rank):
// its first k configurations, or (TopKList::kDistinctTiles) the first configuration of each
// macro tile in ranking order, candidates predicted infeasible left out.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <tuple>
#include <vector>

#include "parity/gemm/candidate.hpp"
#include "parity/gemm/selector.hpp"

namespace parity::testing {

inline std::vector<gemm::RankedCandidate> expected_top_k(
    const std::vector<gemm::RankedCandidate>& ranking, std::span<const gemm::Candidate> candidates,
    std::size_t k, gemm::TopKList list) {
  using gemm::Candidate, gemm::RankedCandidate, gemm::TopKList;
  std::vector<RankedCandidate> top;
  std::vector<std::tuple<int, int, int>> tiles;
  for (const RankedCandidate& r : ranking) {
    if (top.size() == k) break;
    if (list == TopKList::kConfigs) {
      top.push_back(r);
      continue;
    }
    const Candidate& c = candidates[r.index];
    const std::tuple<int, int, int> tile{c.tile_m, c.tile_n, c.tile_k};
    if (!std::isfinite(r.predicted_us) || std::find(tiles.begin(), tiles.end(), tile) != tiles.end()) {
      continue;
    }
    tiles.push_back(tile);
    top.push_back(r);
  }
  return top;
}

}  // namespace parity::testing
