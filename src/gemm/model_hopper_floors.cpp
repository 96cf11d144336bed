// The grouped Hopper search's group floors (group_floors_us): coarse_bound_us of every group's
// floor terms in one loop over columns, for every aligned selection on NVIDIA. Its own
// translation unit for -fno-trapping-math (CMakeLists.txt), as model_origami_estimates.cpp: the
// loop vectorises, with both arms of each branch computed, so the values are coarse_bound_us's.
// Compiled twice, chosen on the first call: for AVX2 (no FMA: bit-identical lanes), each
// rounding one vroundpd, and for baseline x86-64, each rounding compare-free (ceil_nonnegative,
// floor_nonnegative; SSE2 has no rounding instruction). On the loop's operands (at least
// 1/2048 - guard and 1/SMs - guard, below 2^52) both equal fast_ceil's and fast_floor's values.
// Each floor's low 16 bits are cleared in the loop (the search's sort keys, kGroupMask).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "model_hopper.hpp"
#include "model_math.hpp"

namespace parity::gemm {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();

template <class Rounding>
[[gnu::always_inline]] inline void group_floors(const HopperProblemTerms& terms,
                                                const HopperGroupIndex::FloorColumns& columns,
                                                double launch_us, double tail_boost,
                                                double* __restrict floors_us) {
  const HopperProblemTerms t = terms;  // a copy: the loop's stores cannot alias it
  const std::size_t count = columns.splits.size();
  // floors_us is restrict: its stores alias no column, so the loop vectorises without a runtime
  // overlap check per column.
  const HopperGroupIndex::FloorColumns& g = columns;
  for (std::size_t i = 0; i < count; ++i) {
    // coarse_shape: the K-iterations (>= 1/2048 - guard > 0) and the tile extents.
    const double iters = Rounding::ceil(t.k * g.inv_split_k[i] * g.inv_tile_k[i] - kGridGuard);
    const double rows = t.m * g.inv_tile_m[i], cols = t.n * g.inv_tile_n[i];
    // coarse_bound_us, term by term (tiles >= 1, so waves_exact > 0).
    const double tiles = std::max(rows, g.min_grid_m[i]) * std::max(cols, g.min_grid_n[i]) *
                         t.batch * g.splits[i];
    const double waves_exact = tiles * g.inv_usable_sms[i] - kGridGuard;
    const double full_waves = Rounding::floor(waves_exact);
    const double busy_fraction = waves_exact - full_waves;
    const bool has_last_wave = busy_fraction > 0;
    const double waves = has_last_wave ? full_waves + 1.0 : full_waves;
    const double boost = 1.0 / (1.0 + tail_boost * (1.0 - busy_fraction));
    const double boosted_wave = has_last_wave ? boost : 0.0;
    const double compute_us = iters * g.compute_us_per_iter[i] * (full_waves + boosted_wave);
    const double dram_us =
        t.operand_floor_us +
        std::max(tiles, t.saturating_sms) * g.store_bytes_per_tile[i] * t.inv_dram_bw;
    const double cooperative_us =
        compute_us + waves * g.exposed_epilogue_us[i] +
        std::max(0.0, g.min_exposed_store_us[i] - g.exposed_epilogue_us[i]);
    const double norm_us = iters * (full_waves * g.full_wave_iter_us[i] +
                                    boosted_wave * g.compute_us_per_iter[i]);
    const double loop_us =
        std::max(std::max(std::max(cooperative_us, norm_us), waves * g.pingpong_epilogue_us[i]),
                 std::max(tiles * iters * g.l2_us_per_iter[i], dram_us));
    const double bound_us = (launch_us + waves * g.wave_fixed_us[i] + loop_us +
                             g.split_fixed_us[i] +
                             t.output_us_per_byte * g.reduce_bytes_per_output[i]) *
                            kCoarseRoundingMargin;
    const double floor_us = g.infeasible[i] > 0.0 ? kInfinity : bound_us;
    floors_us[i] = std::bit_cast<double>(std::bit_cast<std::uint64_t>(floor_us) & ~kGroupMask);
  }
}

[[gnu::target("avx2")]] void group_floors_avx2(const HopperProblemTerms& terms,
                                               const HopperGroupIndex::FloorColumns& columns,
                                               double launch_us, double tail_boost,
                                               double* floors_us) {
  group_floors<InstructionRounding>(terms, columns, launch_us, tail_boost, floors_us);
}

void group_floors_baseline(const HopperProblemTerms& terms,
                           const HopperGroupIndex::FloorColumns& columns, double launch_us,
                           double tail_boost, double* floors_us) {
  group_floors<CompareFreeRounding>(terms, columns, launch_us, tail_boost, floors_us);
}

}  // namespace

void HopperModel::group_floors_loop(const HopperProblemTerms& terms,
                                    const HopperGroupIndex::FloorColumns& columns,
                                    double launch_us, double tail_boost, double* floors_us) {
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (has_avx2) {
    group_floors_avx2(terms, columns, launch_us, tail_boost, floors_us);
  } else {
    group_floors_baseline(terms, columns, launch_us, tail_boost, floors_us);
  }
}

void HopperModel::group_floors_us(const HopperProblemTerms& terms,
                                  const HopperGroupIndex::FloorColumns& groups,
                                  double* floors_us) const {
  group_floors_loop(terms, groups, scalars_.launch_us, scalars_.tail_boost, floors_us);
}

}  // namespace parity::gemm
