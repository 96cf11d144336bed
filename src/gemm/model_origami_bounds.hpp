// The Origami model's first-stage bounds (docs/gemm_model.md, "Hierarchical selection"): per
// problem (TileBoundTerms), per output grid (MT_M, MT_N, split: GridBound) and per MT_K
// (DepthBound), each at or below the port's cycles() for every candidate they cover. Internal
// header: inline because the searches (model_origami_select.cpp) call them for every run and grid
// of every selection.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model_math.hpp"
#include "model_origami.hpp"
#include "model_origami_terms.hpp"

namespace parity::gemm::origami_terms {

// A run's key: MT_M, MT_N, MT_K and split as one 128-bit value: the four ints are adjacent in
// PreparedCandidate, so a run's end is found with two 8-byte compares per candidate.
struct TileKey {
  std::uint64_t mn, k_split;
  bool operator==(const TileKey&) const = default;
};
static_assert(
    offsetof(PreparedCandidate, tile_n) == offsetof(PreparedCandidate, tile_m) + sizeof(int) &&
    offsetof(PreparedCandidate, tile_k) == offsetof(PreparedCandidate, tile_m) + 2 * sizeof(int) &&
    offsetof(PreparedCandidate, split_k) == offsetof(PreparedCandidate, tile_m) + 3 * sizeof(int));
inline TileKey tile_key(const PreparedCandidate& c) {
  TileKey key;
  std::memcpy(&key, &c.tile_m, sizeof(key));
  return key;
}

}  // namespace parity::gemm::origami_terms

namespace parity::gemm {

// The first-stage bound's terms per problem (TileBoundTerms), per output grid (MT_M, MT_N, split:
// GridBound) and per MT_K (DepthBound). A walk keeps the last grid's and MT_K's terms while
// consecutive runs share them (the reference space varies MT_K fastest); a selection over an
// OrigamiRunIndex computes each distinct size's once. Every value is computed by the same
// operations either way, so the bounds are bit-identical.
struct OrigamiModel::TileBoundTerms {
  double m = 0, n = 0, k = 0, batch = 0, cus = 0, out_bytes = 0, mnk = 0, type_factor = 0;
  double element_bytes = 0;
  // grid_tile_count_floors_us's per-problem factors: MFMA cycles per MT_M MT_N MT_K at the fastest
  // native instruction, L2 cycles per row element of one tile's operands across the CUs.
  double compute_cycles_per_mnk = 0, l2_cycles_per_row_element = 0;
};

struct OrigamiModel::GridBound {
  // split_k: the candidates' own split; max_grid_split: the most a stream-K grid can add, CUs /
  // tiles.
  double split_k = 1, max_grid_split = 1, timesteps = 0, decay = 0, stores = 0;
  // Padded output elements (grid_m MT_M x grid_n MT_N), MFMA cycles per unit of MT_K at the
  // fastest native instruction, L2 cycles per byte of an operand row's K extent.
  double padded_mn = 0, compute_cycles_per_k = 0, l2_cycles_per_row_byte = 0;
  // run_bound_us's per-grid factors: the padding waste per unit of padded K (padded_mn / MNK)
  // and the microseconds per tile cycle over the timesteps, margin included.
  double etp_per_padded_k = 0, us_per_tile_cycle = 0;
};

// What the grid floor needs of a grid's MT_K values: the smallest's and largest's terms, and a
// padding penalty at or below each of theirs.
struct OrigamiModel::GridDepths {
  const DepthBound* smallest = nullptr;
  const DepthBound* largest = nullptr;
  double padding_min = 0;
};

struct OrigamiModel::DepthBound {
  double tile_k = 0, k_tiles = 0, padding = 0;
  double k_tiles_over_8 = 0;  // floor(ceil(K / MT_K) / 8): the K splits of >= 8 iterations
  double padded_k = 0;        // ceil(K / MT_K) MT_K
  double k_line_bytes = 0;    // one K-iteration's row of MT_K elements in whole 128-byte lines
};

// The per-problem tables of a search over an OrigamiRunIndex: output tile counts per distinct
// MT_M and MT_N, the MT_K terms per distinct MT_K, the padding floor per MT_K and per grid (at
// its largest MT_K: a column for the estimates' loop).
struct OrigamiModel::ProblemTables {
  std::vector<double> tiles_m, tiles_n, padding_upto, grid_padding;
  std::vector<DepthBound> depths;
};

inline OrigamiModel::TileBoundTerms OrigamiModel::tile_bound_terms(
    const GemmProblem& problem) const {
  using namespace origami_terms;  // the port's constants and helpers
  TileBoundTerms terms;
  terms.m = static_cast<double>(problem.m);
  terms.n = static_cast<double>(problem.n);
  terms.k = static_cast<double>(problem.k);
  terms.batch = static_cast<double>(problem.batch);
  terms.cus = static_cast<double>(hw_.num_cus);
  terms.out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  terms.mnk = terms.m * terms.n * terms.k;
  terms.type_factor = input_type_factor(device_, problem.a_dtype);
  terms.element_bytes = element_bytes_of(problem);
  terms.compute_cycles_per_mnk = 2.0 * min_cycles_per_flop_ * terms.type_factor;
  terms.l2_cycles_per_row_element = terms.cus / hw_.l2_bytes_per_cycle * terms.element_bytes;
  return terms;
}

inline OrigamiModel::GridBound OrigamiModel::grid_bound(const TileBoundTerms& t, int tile_m,
                                                        int tile_n, int split, double grid_m,
                                                        double grid_n) const {
  using namespace origami_terms;  // the port's constants and helpers
  const double tm = tile_m, tn = tile_n;
  GridBound g;
  const double tiles = grid_m * grid_n * t.batch;
  const double split_k = split;
  g.split_k = std::max(1.0, split_k);
  g.max_grid_split = fast_floor(t.cus / tiles);
  g.timesteps = ceil_div(tiles, t.cus);
  g.padded_mn = grid_m * tm * grid_n * tn;
  g.compute_cycles_per_k = 2.0 * tm * tn * min_cycles_per_flop_ * t.type_factor;
  g.l2_cycles_per_row_byte = (tm + tn) * t.cus / hw_.l2_bytes_per_cycle;
  g.etp_per_padded_k = g.padded_mn / t.mnk;
  g.us_per_tile_cycle = g.timesteps / hw_.cycles_per_us * kRoundingMargin;
  const double waves = std::max(ceil_div(tiles * split_k, t.cus), g.timesteps);
  g.decay = occupancy_decay(static_cast<U64>(std::min(waves, static_cast<double>(kMaxOccupancy))));
  // Stores: at least the output bytes of the largest tile kind that exists (min(MT, size) per
  // dimension) through its share of the full DRAM bandwidth, shared by at least the active
  // workgroups' lower bound. With >= 2 x CUs tiles Origami keeps only the interior and one edge,
  // which may not exist when the problem is smaller than the tile: then no floor.
  const double active =
      tiles > t.cus ? fast_floor(tiles / (fast_floor(tiles / t.cus) + 1.0)) : tiles;
  const bool has_interior = t.m >= tm && t.n >= tn;
  g.stores =
      tiles >= 2.0 * t.cus && !has_interior
          ? 0.0
          : std::min(tm, t.m) * std::min(tn, t.n) * t.out_bytes * active / hw_.dram_bytes_per_cycle;
  return g;
}

inline OrigamiModel::DepthBound OrigamiModel::depth_bound(const TileBoundTerms& t, int tile_k) {
  using namespace origami_terms;  // the port's constants and helpers
  DepthBound d;
  const double tk = tile_k;
  const double k_over_tk = t.k / tk;
  d.tile_k = tk;
  d.k_tiles = fast_ceil(k_over_tk);
  d.padding = (t.k - fast_floor(k_over_tk) * tk) / t.k * kKPaddingPenalty;
  d.k_tiles_over_8 = fast_floor(d.k_tiles / 8.0);
  d.padded_k = d.k_tiles * tk;
  const double line_elements = kL2LineBytes / t.element_bytes;
  d.k_line_bytes = fast_ceil(tk / line_elements) * line_elements * t.element_bytes;
  return d;
}

inline double OrigamiModel::run_bound_us(const TileBoundTerms& t, const GridBound& g,
                                         const DepthBound& d) const {
  using namespace origami_terms;  // the port's constants and helpers
  // Every term of cycles() at or below its value for any candidate of this tile and split:
  // timesteps >= ceil(tiles / CUs); the split never exceeds max(split_k, min(CUs / tiles,
  // ceil(K / MT_K) / 8)); L_mem >= max(t_L2, 200) (t_L2: MT_M + MT_N rows of MT_K in whole
  // 128-byte lines, as l2_cycles counts them); MFMA cycles >= the tile's flops at the fastest
  // native instruction; decay >= 0.95^min(8, waves); a store floor; no reduction kernel.
  // Origami's grid splits K only into pieces of >= 8 iterations (k_split_aware_grid).
  const double tk = d.tile_k;
  const double max_split = std::max(g.split_k, std::min(g.max_grid_split, d.k_tiles_over_8));
  const double iters = std::max(ceil_div(t.k, max_split * tk) - 1.0, 1.0);
  const double etp = g.etp_per_padded_k * d.padded_k;
  const double lm = std::max(g.l2_cycles_per_row_byte * d.k_line_bytes, kDramLatencyCycles);
  const double lc = g.compute_cycles_per_k * tk;
  const double tile = iters * std::max(lc, lm) * etp + kPrologueWeight * lm * etp * g.decay +
                      kEpilogueWeight * ((lc * etp + g.stores) * g.decay + d.padding) +
                      kWorkgroupSetupCycles + kLoopCyclesPerIter * iters;
  // Reassociated from timesteps x tile / clock x margin: a few ulps, far inside the margin.
  return tile * g.us_per_tile_cycle;
}

inline double OrigamiModel::grid_floor_us(const TileBoundTerms& t, const GridBound& g,
                                          const GridDepths& d) const {
  using namespace origami_terms;  // the port's constants and helpers
  // At or below run_bound_us of every run of the grid, whatever its MT_K in [tk_min, tk_max]:
  // the split ms <= max(split_k, min(CUs / tiles, ceil(K / tk_min) / 8)) and ms MT_K <=
  // max(split_k tk_max, min(CUs / tiles tk_max, (K + tk_max) / 8)); etp >= padded_mn max(K,
  // tk_min) / MNK; iters + 1 >= max(K / (ms MT_K), 2). So the compute of the iterations and the
  // epilogue's last one is >= etp c max(K / ms, 2 tk_min) (as 2 x decay >= 2 x 0.95^8 > 1); the
  // iterations' and prologue's memory likewise at min(1, 1.5 x decay), with L_mem >= max(t_L2,
  // 200) and t_L2 >= the unrounded row bytes and >= one 128-byte line per row; the stores, the
  // smallest padding penalty, setup and the loop of the fewest iterations add.
  const double tk_min = d.smallest->tile_k, tk_max = d.largest->tile_k;
  const double ms = std::max(g.split_k, std::min(g.max_grid_split, d.smallest->k_tiles_over_8));
  const double span =
      std::max(g.split_k * tk_max, std::min(g.max_grid_split * tk_max, (t.k + tk_max) / 8.0));
  const double etp = g.padded_mn * std::max(t.k, tk_min) / t.mnk;
  const double k_span = std::max(t.k / ms, 2.0 * tk_min);   // <= MT_K (iters + 1)
  const double iters_plus_one = std::max(t.k / span, 2.0);  // <= iters + 1
  const double compute = etp * g.compute_cycles_per_k * k_span;
  const double row_bytes = std::max(t.element_bytes * k_span, kL2LineBytes * iters_plus_one);
  const double memory =
      etp * std::min(1.0, kPrologueWeight * g.decay) *
      std::max(g.l2_cycles_per_row_byte * row_bytes, kDramLatencyCycles * iters_plus_one);
  const double tile = std::max(compute, memory) +
                      kEpilogueWeight * (g.stores * g.decay + d.padding_min) +
                      kWorkgroupSetupCycles + kLoopCyclesPerIter * (iters_plus_one - 1.0);
  // The floor's own rounding differs from the run bounds': a relative 1e-9 below absorbs it.
  return g.timesteps * tile / hw_.cycles_per_us * kRoundingMargin * (1.0 - 1e-9);
}

}  // namespace parity::gemm
