// HopperModel for kernels without TMA (operands aligned to < 16 bytes): cuBLASLt offers its
// pre-Hopper families there (mma.sync with cp.async or register loads). Unlike the warp-specialised
// TMA kernels (one persistent CTA per SM, loads overlapped by a producer warp), these hide load
// latency only through several co-resident CTAs per SM, take no clusters and no multicast, and
// reduce split-K partials in the output type, in fp32, or in place (atomics).
#include <algorithm>
#include <cmath>
#include <limits>

#include "model_hopper.hpp"
#include "model_math.hpp"

namespace parity::gemm {
namespace {

constexpr double kGuard = 1e-9;
// Shared memory: three pipeline stages of the A and B tiles (the depth cuBLASLt's sm80 families
// choose most often); registers: ~2 per accumulator element (accumulators plus fragments and
// addresses) out of 64K per SM. At most 8 CTAs per SM are counted.
constexpr double kLegacyStages = 3.0;
constexpr double kRegistersPerSm = 65536.0;
constexpr double kRegistersPerAccumulator = 2.0;
constexpr int kMaxResidentCtas = 8;
// The latency hidden per K-iteration is a time, not a share of the iteration's work: a stage of
// tk = 32 carries half the multiplies of a 64-deep one to cover the same load latency. So the
// latency is counted in 128x128x64 tile-iterations (1 at the 128x128x64 reference tile).
constexpr int kReferenceTileM = 128, kReferenceTileN = 128;
constexpr double kReferenceTileVolume = 128.0 * 128.0 * 64.0;

}  // namespace

void HopperModel::prepare_legacy(const ProblemClass& key, const Candidate& c,
                                 PreparedCandidate& p) const {
  HopperTerms& h = p.hopper;
  const double a_bytes = static_cast<double>(dtype_size_bytes(key.a_dtype));
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  // The cp.async families (4- and 8-byte rows) name their depth; the register-load one does not.
  const double stages = c.stages > 0 ? static_cast<double>(c.stages) : kLegacyStages;
  const double by_smem = fast_floor(device_.smem_bytes_per_sm / (stages * (tm + tn) * tk * a_bytes));
  const double by_registers = fast_floor(kRegistersPerSm / (kRegistersPerAccumulator * tm * tn));
  h.legacy_resident_ctas =
      static_cast<int>(std::clamp(std::min(by_smem, by_registers), 1.0, double{kMaxResidentCtas}));
  const double c_bytes = static_cast<double>(dtype_size_bytes(key.c_dtype));
  h.has_reduce_kernel = c.reduction != ReductionScheme::kInPlace;
  // The latency is a time: legacy_latency_ctas reference tile-iterations at the reference tile's
  // rate. In this tile's iterations (at its own, lower, rate for small tiles) that is fewer: the
  // volume ratio times the efficiency ratio. (Counting it at the tile's own rate priced a 16x16
  // tile's latency ~9x too long: 151 us predicted against 21 measured on a 319488 x 10 x 10 layer.)
  Candidate reference = c;
  reference.tile_m = kReferenceTileM;
  reference.tile_n = kReferenceTileN;
  const double rate_ratio = std::min(
      1.0, tile_efficiency(key, c, false, 1) / tile_efficiency(key, reference, false, 1));
  const double latency_tiles =
      scalars_.legacy_latency_ctas * kReferenceTileVolume / (tm * tn * tk) * rate_ratio;
  h.legacy_latency_tiles = latency_tiles;
  h.legacy_iters_per_volume = 1.0 / (tm * tn * tk * h.usable_sms);
  h.legacy_waves_per_output = p.split_k / (tm * tn * h.usable_sms * h.legacy_resident_ctas);
  h.legacy_latency_us_per_iter = latency_tiles * h.compute_us_per_iter;
  h.legacy_wave_fixed_us = scalars_.tile_overhead_us;
  // A CTA's output store follows its last multiply; the other co-resident CTAs' loads and
  // multiplies overlap it, except one tile's worth per SM and wave, at the SM's share of DRAM
  // bandwidth (every SM stores at once at the end of a wave). Without it short K-loops on large
  // tiles (one CTA per SM) looked as fast as on small ones (eight per SM), which run ~25% faster.
  h.legacy_wave_store_bytes = (p.split_k > 1 ? kLegacyPartialBytes : c_bytes) * tm * tn * h.usable_sms;
}


template <bool kExplain>
double HopperModel::predict_legacy(const HopperProblemTerms& t, const PreparedCandidate& p,
                                   TimeBreakdown* breakdown) const {
  const HopperTerms& c = p.hopper;
  if (splits_short_k_loop(t.k, c.inv_tile_k, p.split_k)) return std::numeric_limits<double>::infinity();
  const double splits = p.split_k;
  // Candidates come grouped by tile shape: the grid's roundings are memoised per problem.
  const HopperGrid grid = hopper_grid(t, p);
  const double grid_m = grid.grid_m, grid_n = grid.grid_n, iters = grid.iters, tiles = grid.tiles;
  const double sms = c.usable_sms;
  const double slots = sms * c.legacy_resident_ctas;
  // Latency hiding grows with the work in flight per SM, r x tm x tn x tk multiplies per stage: the
  // SM runs at W / (W + H) of its legacy rate with W = r tm tn tk and H = legacy_latency_ctas
  // 128x128x64 tile-iterations. Each of the r CTAs then takes compute x (r + h) per iteration, h =
  // H / (tm tn tk) (compute_us_per_iter is one iteration at the SM's full legacy rate). No
  // separate pipeline fill per CTA: with each wave's exposed store it priced short K-loops on
  // small tiles ~2x too high (cross-validated over the recorded suites: docs/gemm_model.md).
  const double h = c.legacy_latency_tiles;
  const double tile_store_us = c.legacy_wave_store_bytes * t.inv_dram_bw;
  const auto wave_us = [&](double wave_tiles) {
    const double resident = std::clamp(wave_tiles / sms, 1.0, static_cast<double>(c.legacy_resident_ctas));
    return iters * (resident + h) * c.compute_us_per_iter + tile_store_us +
           scalars_.tile_overhead_us;
  };
  const double full_waves = fast_floor(tiles / slots + kGuard);
  const double last_wave_tiles = tiles - full_waves * slots;
  double compute_us = full_waves > 0 ? full_waves * wave_us(slots) : 0.0;
  if (last_wave_tiles > 0) compute_us += wave_us(last_wave_tiles);
  // DRAM floor: operands once plus the re-reads the L2 cannot hold, and every tile's store.
  const double rereads = std::max(1.0, std::min(grid_m, grid_n) * (1.0 - t.reuse));
  const double store_bytes =
      t.batch * grid_m * grid_n * splits * (splits > 1 ? kLegacyPartialBytes : t.out_bytes) /
      (c.inv_tile_m * c.inv_tile_n);
  const double dram_us = (t.operand_bytes * rereads + store_bytes) * t.inv_dram_bw;
  double reduce_us = 0.0;
  if (p.split_k > 1 && c.has_reduce_kernel) {
    // Separate reduction kernel: reads s partials, writes D.
    reduce_us = scalars_.splitk_overhead_us +
                t.batch * t.m * t.n * (splits * kLegacyPartialBytes + t.out_bytes) * t.inv_dram_bw;
  }
  const double total_us = scalars_.launch_us + std::max(compute_us, dram_us) + reduce_us;
  if constexpr (kExplain) {
    const double waves = full_waves + (last_wave_tiles > 0 ? 1.0 : 0.0);
    const double fixed_us = waves * scalars_.tile_overhead_us;
    // The waves' exposed stores are memory time (epilogue_us is the run epilogue's, model.cpp).
    const double store_us = waves * tile_store_us;
    breakdown->compute_us = compute_us - fixed_us - store_us;
    breakdown->memory_us = store_us + std::max(0.0, dram_us - compute_us);
    breakdown->launch_wave_us = scalars_.launch_us + fixed_us;
    breakdown->reduction_us = reduce_us;
    breakdown->waves = waves;
  }
  return total_us;
}

template double HopperModel::predict_legacy<true>(const HopperProblemTerms&,
                                                  const PreparedCandidate&, TimeBreakdown*) const;
template double HopperModel::predict_legacy<false>(const HopperProblemTerms&,
                                                   const PreparedCandidate&, TimeBreakdown*) const;

}  // namespace parity::gemm
