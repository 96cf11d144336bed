// Helpers shared by the GEMM models (internal).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

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
// fast_ceil's and fast_floor's values for x = 0 or 2^-60 <= x < 2^52 without a conversion or a
// compare, so that a loop of them vectorises on baseline x86-64 (under the default
// -ftrapping-math GCC keeps a compare's select as a branch): r = x + 2^52 - 2^52 is the nearest
// integer, and (x - r) 2^80 is exact, 0 or at least 1 in size, so clamped to [0, 1] it is the
// step between r and the ceil (or floor).
inline double rounded_nonnegative(double x) { return (x + 0x1p52) - 0x1p52; }
inline double step_above_zero(double d) { return std::min(1.0, std::max(0.0, d * 0x1p80)); }
inline double ceil_nonnegative(double x) {
  const double r = rounded_nonnegative(x);
  return r + step_above_zero(x - r);
}
inline double floor_nonnegative(double x) {
  const double r = rounded_nonnegative(x);
  return r - step_above_zero(r - x);
}
// The two forms of a vectorised loop's roundings, as template arguments: compare-free for
// baseline x86-64 (SSE2 has no rounding instruction), std::ceil / std::floor for a loop compiled
// for AVX2 (one vroundpd each). Both give fast_ceil's and fast_floor's values for x = 0 or
// 2^-60 <= x < 2^52.
struct CompareFreeRounding {
  [[gnu::always_inline]] static double ceil(double x) { return ceil_nonnegative(x); }
  [[gnu::always_inline]] static double floor(double x) { return floor_nonnegative(x); }
};
struct InstructionRounding {
  [[gnu::always_inline]] static double ceil(double x) { return std::ceil(x); }
  [[gnu::always_inline]] static double floor(double x) { return std::floor(x); }
};

// One macro tile (tile_m x tile_n x tile_k; each below 2^21) as one key: the unit of a
// per-tile top-k list (TopKList::kDistinctTiles).
inline std::uint64_t macro_tile_key(const PreparedCandidate& c) {
  return (static_cast<std::uint64_t>(c.tile_m) << 42) | (static_cast<std::uint64_t>(c.tile_n) << 21) |
         static_cast<std::uint64_t>(c.tile_k);
}

// A pruned search's `keep` smallest exact predictions so far, ascending (its cutoff is
// max(keep-th, best x (1 + tie_epsilon))). Per tile, a macro tile holds one place, at
// its best prediction (a tile pushed out can only come back below the last place, which never
// rises, so each kept value is its tile's best so far).
struct TopValues {
  std::size_t keep = 0;
  bool per_tile = false;
  std::vector<double> values;
  std::vector<std::uint64_t> tiles;  // per value, when per_tile

  void reset(std::size_t keep_places, bool one_per_tile) {
    keep = keep_places;
    per_tile = one_per_tile;
    values.clear();
    tiles.clear();
  }
  double cutoff(double tie_epsilon) const {
    return values.size() < keep ? std::numeric_limits<double>::infinity()
                                : std::max(values[keep - 1], values[0] * (1.0 + tie_epsilon));
  }
  // Per tile, the best value held for `tile` (+infinity when none or not per tile): a candidate of
  // that tile above it can neither enter the list nor change the tile's entry.
  double held(std::uint64_t tile) const {
    if (!per_tile) return std::numeric_limits<double>::infinity();
    const auto at = std::find(tiles.begin(), tiles.end(), tile);
    return at == tiles.end() ? std::numeric_limits<double>::infinity() : values[static_cast<std::size_t>(at - tiles.begin())];
  }
  // Insertion by moving the larger values up one place (no vector insert or erase: a search
  // adds dozens of values); equal values keep their order, as an upper_bound insertion would.
  void add(std::uint64_t tile, double value) {
    if (keep == 0) return;
    std::size_t at = values.size();
    if (per_tile) {
      const auto held_at = std::find(tiles.begin(), tiles.end(), tile);
      if (held_at != tiles.end()) {
        at = static_cast<std::size_t>(held_at - tiles.begin());
        if (!(value < values[at])) return;
        // The tile's entry moves down to the value's place; the list keeps its length.
      } else if (at >= keep) {
        if (!(value < values.back())) return;
        at = keep - 1;  // the last place's value leaves the list
      } else {
        values.push_back(value);
        tiles.push_back(tile);
      }
      while (at > 0 && values[at - 1] > value) {
        values[at] = values[at - 1];
        tiles[at] = tiles[at - 1];
        --at;
      }
      values[at] = value;
      tiles[at] = tile;
      return;
    }
    if (at >= keep) {
      if (!(value < values.back())) return;
      at = keep - 1;
    } else {
      values.push_back(value);
    }
    while (at > 0 && values[at - 1] > value) {
      values[at] = values[at - 1];
      --at;
    }
    values[at] = value;
  }
};

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
