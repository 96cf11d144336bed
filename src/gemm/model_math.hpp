// Helpers shared by the GEMM models (internal).
#pragma once

#include <algorithm>
#include <cstdint>

#include "parity/gemm/model.hpp"

namespace parity::gemm {

// Ceil and floor of non-negative values below 2^63 with one conversion instruction: the baseline
// x86-64 target has no roundsd, and std::ceil as a library call dominated selection latency.
// Callers keep their arguments below 2^53 (problem sizes are bounded by GemmProblem::validate).
inline double fast_floor(double x) { return static_cast<double>(static_cast<std::int64_t>(x)); }
inline double fast_ceil(double x) {
  const double t = fast_floor(x);
  return t < x ? t + 1.0 : t;
}
inline double ceil_div(double a, double b) { return fast_ceil(a / b); }

// One macro tile (tile_m x tile_n x tile_k; each below 2^21) as one key: the unit of a
// per-tile top-k list (TopKList::kDistinctTiles).
inline std::uint64_t macro_tile_key(const PreparedCandidate& c) {
  return (static_cast<std::uint64_t>(c.tile_m) << 42) | (static_cast<std::uint64_t>(c.tile_n) << 21) |
         static_cast<std::uint64_t>(c.tile_k);
}

// The model-independent part of a prepared candidate: tile, split and the tie-break intensity.
inline PreparedCandidate prepare_common(const Candidate& c) {
  PreparedCandidate p;
  p.tile_m = c.tile_m;
  p.tile_n = c.tile_n;
  p.tile_k = c.tile_k;
  p.split_k = std::max(1, c.split_k);
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  p.arithmetic_intensity = 2.0 * tm * tn * tk / (tm * tk + tn * tk + tm * tn);
  return p;
}

}  // namespace parity::gemm
