// The grids' estimates (grid_tile_count_floors_us): one loop over every grid of a run index,
// for every selection on AMD. Its own translation unit for -fno-trapping-math (CMakeLists.txt):
// under the default GCC keeps each std::max of computed values as a branch, as the operations
// in its arms might trap, and the loop does not vectorise; the values are the same either way
// (the operations and their order do not change, only which of them may run speculatively).
// Each grid's MT_M and MT_N tile counts and MT_K splits are rounded here (the problem tables'
// values) rather than gathered. The loop is compiled twice, chosen once on the first call: for
// AVX2 (4 grids per vector, each rounding one vroundpd) and for baseline x86-64 (2 per vector,
// each rounding compare-free: ceil_nonnegative, floor_nonnegative, SSE2 has no rounding
// instruction). Both roundings are exact on the loop's operands, so the values are the same.
#include <algorithm>
#include <cstddef>

#include "model_math.hpp"
#include "model_origami.hpp"
#include "model_origami_bounds.hpp"
#include "model_origami_terms.hpp"

namespace parity::gemm {

using namespace origami_terms;  // the port's shared constants and helpers (internal header)

namespace {

// The loop itself (its roundings exact on its operands: 0, or at least 2^-21 and below 2^52, a
// size over a tile size, a tile count over the CUs). Without FMA contraction (the avx2 target
// does not enable FMA) every lane of either compilation computes the same operations in the
// same order: bit-identical values.
// (Terms: OrigamiModel::TileBoundTerms, deduced: a private member type.)
template <class Rounding, class Terms>
[[gnu::always_inline]] inline void tile_count_floors_loop(
    const Terms& terms, const OrigamiRunIndex::GridColumns& grids,
    const double* padding_min, double cycles_per_us, double* floors_us) {
  // At or below grid_floor_us from the tile counts and the MT_K range alone (no decay or
  // stores): its split and span with CUs / tiles unrounded (>= max_grid_split); the memory
  // weight min(1, 1.5 x decay) >= 1.5 x 0.95^8 > 0.99.
  const Terms t = terms;  // a copy: the loop's stores cannot alias it
  const std::size_t grid_count = grids.tile_m.size();
  const double* const tile_m = grids.tile_m.data();
  const double* const tile_n = grids.tile_n.data();
  const double* const split_of = grids.split_k.data();
  const double* const tk_min_of = grids.tk_min.data();
  const double* const tk_max_of = grids.tk_max.data();
  const double* const infeasible = grids.infeasible.data();
  for (std::size_t gi = 0; gi < grid_count; ++gi) {
    const double tm = tile_m[gi], tn = tile_n[gi];
    const double tk_min = tk_min_of[gi], tk_max = tk_max_of[gi];
    const double grid_m = Rounding::ceil(t.m / tm), grid_n = Rounding::ceil(t.n / tn);
    const double k_tiles_over_8 = Rounding::floor(Rounding::ceil(t.k / tk_min) / 8.0);
    const double tiles = grid_m * grid_n * t.batch;
    const double split_k = split_of[gi];
    const double grid_split = t.cus / tiles;
    const double ms = std::max(split_k, std::min(grid_split, k_tiles_over_8));
    const double span =
        std::max(split_k * tk_max, std::min(grid_split * tk_max, (t.k + tk_max) / 8.0));
    const double etp = grid_m * tm * grid_n * tn * std::max(t.k, tk_min) / t.mnk;
    const double k_span = std::max(t.k / ms, 2.0 * tk_min);
    const double iters_plus_one = std::max(t.k / span, 2.0);
    const double compute = etp * tm * tn * t.compute_cycles_per_mnk * k_span;
    const double row_elements = std::max(k_span, kL2LineBytes * iters_plus_one / t.element_bytes);
    const double memory = etp * 0.99 *
                          std::max((tm + tn) * t.l2_cycles_per_row_element * row_elements,
                                   kDramLatencyCycles * iters_plus_one);
    const double tile = std::max(compute, memory) + kEpilogueWeight * padding_min[gi] +
                        kWorkgroupSetupCycles + kLoopCyclesPerIter * (iters_plus_one - 1.0);
    // A relative 1e-6 below absorbs the two computations' different rounding.
    const double floor_us = Rounding::ceil(tiles / t.cus) * tile / cycles_per_us *
                            kRoundingMargin * (1.0 - 1e-6);
    floors_us[gi] = std::max(floor_us, infeasible[gi]);  // +infinity without a feasible run
  }
}

template <class Terms>
[[gnu::target("avx2")]] void tile_count_floors_avx2(const Terms& terms,
                                                    const OrigamiRunIndex::GridColumns& grids,
                                                    const double* padding_min,
                                                    double cycles_per_us, double* floors_us) {
  tile_count_floors_loop<InstructionRounding>(terms, grids, padding_min, cycles_per_us, floors_us);
}

template <class Terms>
void tile_count_floors_baseline(const Terms& terms,
                                const OrigamiRunIndex::GridColumns& grids,
                                const double* padding_min, double cycles_per_us,
                                double* floors_us) {
  tile_count_floors_loop<CompareFreeRounding>(terms, grids, padding_min, cycles_per_us, floors_us);
}

}  // namespace

void OrigamiModel::tile_count_floors_us(const TileBoundTerms& terms,
                                        const OrigamiRunIndex::GridColumns& grids,
                                        const double* padding_min, double cycles_per_us,
                                        double* floors_us) {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (has_avx2) {
    tile_count_floors_avx2(terms, grids, padding_min, cycles_per_us, floors_us);
  } else {
    tile_count_floors_baseline(terms, grids, padding_min, cycles_per_us, floors_us);
  }
}

void OrigamiModel::grid_tile_count_floors_us(const TileBoundTerms& terms,
                                             const OrigamiRunIndex::GridColumns& grids,
                                             const double* padding_min, double* floors_us) const {
  tile_count_floors_us(terms, grids, padding_min, hw_.cycles_per_us, floors_us);
}

}  // namespace parity::gemm
