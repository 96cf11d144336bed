#include "model_hopper.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "model_math.hpp"

namespace parity::gemm {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// A tile whose fp32 accumulators exceed 192x128 (96 KiB) leaves too few registers for two
// consumer warpgroups to run ping-pong with overlapped epilogues; charge the lost overlap. A fixed
// prior: 256x128 / 128x256 / 192x192 tiles ran ~7% below 128..192 x 128 tiles of the same shape
// on the H200 calibration split (docs/gemm_model.md).
constexpr double kLargeAccumulatorEfficiency = 0.93;
constexpr double kLargeAccumulatorElements = 192.0 * 128.0;
constexpr double kWidestMmaExtent = 256.0;
constexpr double kSectorBytes = 32.0;
// TMA descriptors need 16-byte aligned global addresses and strides; cp.async copies 4, 8 or 16.
constexpr int kTmaAlignmentBytes = 16;
constexpr double kAsyncCopyMinBytes = 4.0;
// cuBLASLt's Hopper family runs custom options 4..7 as cooperative schedules (one epilogue
// exposed per tile); options 0..3 are ping-pong (docs/gemm_model.md).
constexpr int kFirstCooperativeVariant = 4;
constexpr double kReferenceEpilogueBytes = 128.0 * 128.0 * 2.0;
// Fraction of the L2 a working set can use before re-reads go to DRAM: H200's L2 is two halves
// and data used by SMs on both sides is held twice (origami.md §7.6).
constexpr double kL2UsableFraction = 0.5;

// Kernels without TMA move every operand element through the load units (cp.async into shared
// memory and ldmatrix into registers on 4- and 8-byte rows, one element per register load on
// 2-byte rows), with no producer warp and no multicast: their rate falls with the operand
// elements fed per FMA, 1 / I = (tm + tn) / (tm tn), far more steeply than the TMA kernels'
// (feed_intensity ~5). Measured (vith14 weight gradient, 1280x5120x3084, 8-byte rows, equal work
// per SM): 256x128 and 128x256 run 24% faster than 128x128, 256x64 47% slower; on 2-byte rows with
// long K-loops 64x64 and 64x128 run 15-30% slower than predicted without it, 256x128 ~10% faster.
// The factor I / (I + knee), normalised to 1 at the 128x128 tile (I = 64) so the fitted legacy
// scalars keep their meaning; a fixed prior (knees of 12-32 on 2-byte rows score alike under the
// suites' cross-validation, docs/gemm_model.md).
constexpr double kLegacyFeedKnee = 32.0;
constexpr double kLegacyReferenceIntensity = 64.0;

double legacy_feed_factor(double intensity) {
  return intensity / (intensity + kLegacyFeedKnee) /
         (kLegacyReferenceIntensity / (kLegacyReferenceIntensity + kLegacyFeedKnee));
}

int usable_sms_for_cluster(int num_sms, int cluster_size, int max_active_clusters_of_4) {
  // Clusters must fit inside one GPC; beyond pairs some SMs of each GPC stay idle: the part's
  // known count of 4-CTA clusters, else one cluster's worth assumed lost (documented).
  if (cluster_size == 4 && max_active_clusters_of_4 > 0) {
    return std::min(num_sms, 4 * max_active_clusters_of_4);
  }
  int usable = num_sms - num_sms % cluster_size;
  if (cluster_size > 2) usable -= cluster_size;
  return std::max(usable, cluster_size);
}

}  // namespace

double HopperModel::tile_efficiency(const ProblemClass& key, const Candidate& c, bool uses_tma,
                                    int cluster_size) const {
  const double tm = c.tile_m, tn = c.tile_n;
  // Operand feed from shared memory per K-step: every consumer warpgroup that multiplies into a
  // tile reads the whole B slice. A ping-pong schedule gives each warpgroup a tile of its own (A
  // and B read once per tile); a cooperative one (TMA family, variants 4..7) splits the tile's M
  // rows over two warpgroups, so B is read twice: tm*tn FMAs per (tm + 2 tn) elements fed.
  const bool is_cooperative = uses_tma && c.variant >= kFirstCooperativeVariant;
  const double intensity = tm * tn / (tm + (is_cooperative ? 2.0 : 1.0) * tn);
  double efficiency = scalars_.mma_efficiency * intensity / (intensity + scalars_.feed_intensity);
  if (uses_tma && tm * tn > kLargeAccumulatorElements) efficiency *= kLargeAccumulatorEfficiency;
  // A tile extent beyond 256 (the widest wgmma N, two 128-row consumer warpgroups) needs extra
  // instruction issue and staging per K-step: rate ~ sqrt(256 / extent) (a fixed prior read off
  // the baseline timings of 320- and 512-wide tiles, not fitted per device).
  const double widest = std::max(tm, tn);
  if (widest > kWidestMmaExtent) efficiency *= std::sqrt(kWidestMmaExtent / widest);
  if (!uses_tma) {
    // One element per load below 4 bytes (cp.async moves 4, 8 or 16): half the operand rate.
    efficiency *= scalars_.legacy_efficiency *
                  std::min(1.0, static_cast<double>(key.alignment_bytes) / kAsyncCopyMinBytes);
    efficiency *= legacy_feed_factor(intensity);
  } else if (cluster_size == 1) {
    efficiency *= scalars_.single_cta_efficiency;
  } else if (cluster_size == 2) {
    efficiency *= scalars_.cluster_efficiency;
  } else {
    efficiency *= scalars_.cluster4_efficiency;
  }
  if (c.variant >= 0 && c.variant < static_cast<int>(scalars_.variant_efficiency.size())) {
    efficiency *= scalars_.variant_efficiency[static_cast<std::size_t>(c.variant)];
  }
  return efficiency;
}

void HopperModel::prepare_epilogue(const ProblemClass& key, const Candidate& c,
                                   PreparedCandidate& p) const {
  const double c_bytes = static_cast<double>(dtype_size_bytes(key.c_dtype));
  const double tm = c.tile_m, tn = c.tile_n;
  const bool is_split = p.split_k > 1;
  HopperTerms& h = p.hopper;
  h.store_bytes_per_tile = tm * tn * (is_split ? 4.0 : c_bytes);
  // The output is column-major: a tile column is tm contiguous elements. When its bytes are not a
  // whole number of 32-byte DRAM sectors (168 bf16 = 336 bytes; 8 bf16), neighbouring tiles share
  // a sector at every tile boundary: the L2 writes the two partial sectors at a column's ends back
  // whole (floor(bytes / 32) + 2 sectors written) and reads them from DRAM first to merge (two
  // sectors read). No fitted scalar: the sector size is the DRAM access granularity.
  const double column_bytes = tm * (is_split ? 4.0 : c_bytes);
  if (column_bytes > kSectorBytes * fast_floor(column_bytes / kSectorBytes)) {
    h.store_bytes_per_tile = tn * (kSectorBytes * (fast_floor(column_bytes / kSectorBytes) + 2.0) +
                                   2.0 * kSectorBytes);
  }
  if (p.uses_tma && c.variant >= kFirstCooperativeVariant) {
    h.exposed_epilogue_us = scalars_.epilogue_us * tm * tn * c_bytes / kReferenceEpilogueBytes;
  } else if (p.uses_tma) {
    // Ping-pong: a warpgroup's epilogue runs while the other warpgroup's K-loop holds the tensor
    // cores, so a tile costs max(K-loop, epilogue): only the epilogue's excess over one K-loop is
    // exposed (short-K shapes with many waves of small tiles), taken at the reference tile.
    h.pingpong_epilogue_us = scalars_.epilogue_us;
  }
}

void HopperModel::prepare_bounds(const ProblemClass& key, PreparedCandidate& p) const {
  HopperTerms& h = p.hopper;
  const double c_bytes = static_cast<double>(dtype_size_bytes(key.c_dtype));
  const double tm = p.tile_m, tn = p.tile_n, tk = p.tile_k;
  const bool is_split = p.split_k > 1;
  h.full_wave_splits = std::min<double>(p.split_k, h.usable_sms);
  h.full_wave_positions = std::max(1.0, h.usable_sms / h.full_wave_splits);
  h.full_wave_rows = std::sqrt(h.full_wave_positions) * h.window_aspect;
  // The unclipped window (valid while the grid is at least this large; checked per problem).
  const double rows_hint = std::max(1.0, h.full_wave_rows);
  h.full_wave_cols_used = fast_ceil(h.full_wave_positions / rows_hint);
  h.full_wave_rows_used = fast_ceil(h.full_wave_positions / h.full_wave_cols_used);
  h.full_wave_inv_bw_fraction = std::max(1.0, scalars_.bw_saturation * device_.num_sms / h.usable_sms);
  h.inv_tile_m = 1.0 / tm;
  h.inv_tile_n = 1.0 / tn;
  h.inv_tile_k = 1.0 / tk;
  h.inv_split_k = 1.0 / p.split_k;
  h.inv_usable_sms = 1.0 / h.usable_sms;
  h.min_grid_m = h.cluster_m;
  h.min_grid_n = h.cluster_n;
  h.splits = p.split_k;
  h.wave_fixed_us = scalars_.tile_overhead_us;
  h.split_fixed_us = is_split ? scalars_.splitk_overhead_us : 0.0;
  h.reduce_bytes_per_output = is_split ? p.split_k * 4.0 + c_bytes : 0.0;
  const double dram_bw = device_.hbm_bytes_per_s * scalars_.dram_efficiency * 1e-6;  // bytes/us
  h.l2_us_per_iter = p.l2_bytes_per_iter / (dram_bw * scalars_.l2_bandwidth_ratio);
  h.full_wave_iter_us = compute_l2_norm(h.compute_us_per_iter, h.usable_sms * h.l2_us_per_iter);
  h.min_exposed_store_us =
      h.store_bytes_per_tile * scalars_.bw_saturation * device_.num_sms / dram_bw;
}

PreparedCandidate HopperModel::prepare(const ProblemClass& key, const Candidate& c) const {
  PreparedCandidate p = prepare_common(c);
  const double a_bytes = static_cast<double>(dtype_size_bytes(key.a_dtype));
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  HopperTerms& h = p.hopper;
  // DRAM bytes one tile row of the window (tm rows of A) and one tile column (tn columns of B)
  // read per K-iteration: the window counts tile positions, not matrix rows.
  h.a_bytes_per_row_iter = tm * tk * a_bytes;
  h.b_bytes_per_col_iter = tn * tk * a_bytes;
  h.window_aspect = std::sqrt(tn / tm);
  const int cluster_size = std::max(1, c.cluster_m) * std::max(1, c.cluster_n);
  // TMA needs 16-byte aligned rows: below that the library runs kernels that load through
  // cp.async or registers, with no multicast, no clusters and no warp-specialised overlap.
  p.uses_tma = key.alignment_bytes >= kTmaAlignmentBytes;
  h.usable_sms = usable_sms_for_cluster(device_.num_sms, p.uses_tma ? cluster_size : 1,
                                        device_.max_active_clusters_of_4);
  h.cluster_m = p.uses_tma ? std::max(1, c.cluster_m) : 1;
  h.cluster_n = p.uses_tma ? std::max(1, c.cluster_n) : 1;
  h.inv_cluster_m = 1.0 / h.cluster_m;
  h.inv_cluster_n = 1.0 / h.cluster_n;
  // Needs two pipeline stages of A and B tiles in shared memory.
  p.is_feasible = 2.0 * (tm + tn) * tk * a_bytes <= device_.smem_bytes_per_sm;
  double peak = device_.peak_bf16_flops_per_s;
  if (key.a_dtype == DType::kF16) peak = device_.peak_fp16_flops_per_s;
  if (key.a_dtype == DType::kF32) peak = device_.peak_tf32_flops_per_s;
  prepare_epilogue(key, c, p);
  const double efficiency = tile_efficiency(key, c, p.uses_tma, cluster_size);
  h.compute_us_per_iter = 2.0 * tm * tn * tk / (peak / device_.num_sms * efficiency) * 1e6;
  // TMA multicast: the A tile is shared by the cluster's CTAs along N, the B tile along M.
  p.l2_bytes_per_iter = (tm * a_bytes / h.cluster_n + tn * a_bytes / h.cluster_m) * tk;
  prepare_bounds(key, p);
  if (!p.uses_tma) prepare_legacy(key, c, p);
  return p;
}

HopperProblemTerms HopperModel::problem_terms(const GemmProblem& problem) const {
  HopperProblemTerms t;
  t.m = static_cast<double>(problem.m);
  t.n = static_cast<double>(problem.n);
  t.k = static_cast<double>(problem.k);
  t.batch = static_cast<double>(problem.batch);
  t.out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  const double in_bytes = static_cast<double>(dtype_size_bytes(problem.a_dtype));
  const double dram_bw = device_.hbm_bytes_per_s * scalars_.dram_efficiency * 1e-6;  // bytes/us
  t.inv_dram_bw = 1.0 / dram_bw;
  t.inv_l2_bw = 1.0 / (dram_bw * scalars_.l2_bandwidth_ratio);
  // Inter-wave reuse: the fraction of A and B the L2 can keep between the waves that re-read it.
  t.operand_bytes = t.batch * (t.m * t.k + t.k * t.n) * in_bytes;
  t.reuse = std::min(1.0, kL2UsableFraction * device_.l2_bytes_per_domain / t.operand_bytes);
  const double window_floor_bytes = (t.batch * t.m + t.n) * t.k * in_bytes;
  t.operand_floor_us =
      (t.reuse * t.operand_bytes + (1.0 - t.reuse) * window_floor_bytes) * t.inv_dram_bw;
  t.window_us_per_byte = (1.0 - t.reuse) * t.inv_dram_bw;
  t.saturating_sms = scalars_.bw_saturation * device_.num_sms;
  t.outputs = t.batch * t.m * t.n;
  t.output_us_per_byte = t.outputs * t.inv_dram_bw;
  return t;
}

double HopperModel::predict_us(const GemmProblem& problem, const PreparedCandidate& c) const {
  if (!c.is_feasible) return kInfinity;
  const HopperProblemTerms terms = problem_terms(problem);
  return c.uses_tma ? predict<false>(terms, c, nullptr) : predict_legacy<false>(terms, c, nullptr);
}

void HopperModel::predict_all_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                 std::size_t count, double* predicted_us) const {
  const HopperProblemTerms terms = problem_terms(problem);
  for (std::size_t i = 0; i < count; ++i) {
    const PreparedCandidate& c = prepared[i];
    predicted_us[i] = !c.is_feasible ? kInfinity
                      : c.uses_tma   ? predict<false>(terms, c, nullptr)
                                     : predict_legacy<false>(terms, c, nullptr);
  }
}

TimeBreakdown HopperModel::explain(const GemmProblem& problem, const PreparedCandidate& c) const {
  TimeBreakdown breakdown;
  if (!c.is_feasible) {
    breakdown.total_us = kInfinity;
    return breakdown;
  }
  const HopperProblemTerms terms = problem_terms(problem);
  breakdown.total_us = c.uses_tma ? predict<true>(terms, c, &breakdown)
                                  : predict_legacy<true>(terms, c, &breakdown);
  return breakdown;
}

}  // namespace parity::gemm
