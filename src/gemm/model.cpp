#include "parity/gemm/model.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace parity::gemm {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// predict_top_us keeps its running top-k on the stack; larger k predicts everything.
constexpr std::size_t kMaxPrunedKeep = 16;
// The bounds sum their terms in another order than the exact prediction: shrink them by far more
// than the rounding difference so a bound never exceeds the value it bounds.
constexpr double kCoarseRoundingMargin = 1.0 - 1e-12;
constexpr double kBytesPerMib = 1048576.0;
// Hopper: a tile whose fp32 accumulators exceed 192x128 (96 KiB) leaves too few registers for
// two consumer warpgroups to run ping-pong with overlapped epilogues; charge the lost overlap.
// A fixed prior: 256x128 / 128x256 / 192x192 tiles ran ~7% below 128..192 x 128 tiles of the same
// shape on the H200 calibration split (bench/results/2026-11-29-h200-run1, docs/gemm.md).
constexpr double kLargeAccumulatorEfficiency = 0.93;
constexpr double kLargeAccumulatorElements = 192.0 * 128.0;
constexpr double kWidestMmaExtent = 256.0;
constexpr double kSectorBytes = 32.0;
// TMA descriptors need 16-byte aligned global addresses and strides; cp.async copies 4, 8 or 16.
constexpr int kTmaAlignmentBytes = 16;
constexpr double kAsyncCopyMinBytes = 4.0;
// cuBLASLt's Hopper family runs custom options 4..7 as cooperative schedules: on the 128x128 tile
// (the one tile offered with all eight) they trail options 0..3 by 10-15% at K = 512 and by 1-3%
// at K >= 4096, the signature of an epilogue exposed once per tile (run 1 and 2 measurements,
// docs/gemm.md); larger tiles are offered with options 4..7 only.
constexpr int kFirstCooperativeVariant = 4;
constexpr double kReferenceEpilogueBytes = 128.0 * 128.0 * 2.0;
// Fraction of the L2 a working set can use before re-reads go to DRAM: H200's L2 is two halves
// and data used by SMs on both sides is held twice (origami.md §7.6).
constexpr double kL2UsableFraction = 0.5;
// Origami constants (origami.md §2.5-2.8), in cycles.
constexpr double kOrigamiDramLatencyCycles = 200.0;
constexpr double kOrigamiLaunchCycles = 4.5 * 2200.0;
constexpr double kOrigamiTileFixedCycles = 1500.0;
constexpr double kOrigamiLoopCyclesPerIter = 500.0;
constexpr double kOrigamiSplitKPeerCycles = 35.0 + 2.0 * 100.0 + 1900.0;
constexpr int kOrigamiPrefetchDepth = 2;

// Ceil and floor of non-negative values below 2^63 with one conversion instruction: the baseline
// x86-64 target has no roundsd, and std::ceil as a library call dominated selection latency.
inline double fast_floor(double x) { return static_cast<double>(static_cast<std::int64_t>(x)); }
inline double fast_ceil(double x) {
  const double t = fast_floor(x);
  return t < x ? t + 1.0 : t;
}
inline double ceil_div(double a, double b) { return fast_ceil(a / b); }

// Compute and L2 -> SM time of one K-iteration combine as a 4-norm, not a hard max: near the L2
// limit the TMA loads queue behind each other and the consumers wait on some of them even when
// the tensor cores are nominally the bottleneck (cluster shapes of one tile that move 4-25% more
// L2 bytes ran 3-14% slower on compute-bound shapes, docs/gemm.md "After run 12"). p = 4 is a
// fixed form, not fitted: p = 2..8 gave the same calibration cross-validation within 0.002. The
// 4-norm is >= the max, so every lower bound built on the max stays a lower bound.
inline double compute_l2_norm(double compute_us, double l2_us) {
  const double c2 = compute_us * compute_us, l2 = l2_us * l2_us;
  return std::sqrt(std::sqrt(c2 * c2 + l2 * l2));
}

int usable_sms_for_cluster(int num_sms, int cluster_size) {
  // Clusters must fit inside one GPC; beyond pairs some SMs of each GPC stay idle. Without a
  // runtime cudaOccupancyMaxActiveClusters we assume one cluster's worth is lost (documented).
  int usable = num_sms - num_sms % cluster_size;
  if (cluster_size > 2) usable -= cluster_size;
  return std::max(usable, cluster_size);
}

}  // namespace

Result<DeviceParams> device_params_from_spec(const hw::HardwareSpec& spec) {
  DeviceParams d;
  d.name = spec.name;
  d.num_sms = static_cast<int>(spec.sm_count.value);
  PARITY_CHECK_ARG(d.num_sms > 0, "gemm model: ", spec.name, " has sm_count=", d.num_sms);
  const double peak_clock_mhz = spec.peak_rate_clock_mhz.value > 0 ? spec.peak_rate_clock_mhz.value
                                                                   : spec.boost_clock_mhz.value;
  PARITY_CHECK_ARG(peak_clock_mhz > 0, "gemm model: ", spec.name, " has no clock");
  d.clock_ghz = peak_clock_mhz / 1000.0;
  d.peak_bf16_flops_per_s = spec.dense_bf16_tflops.value * 1e12;
  PARITY_CHECK_ARG(d.peak_bf16_flops_per_s > 0, "gemm model: ", spec.name,
                   " has dense_bf16_tflops=0");
  d.peak_fp16_flops_per_s = spec.dense_fp16_tflops.value > 0 ? spec.dense_fp16_tflops.value * 1e12
                                                              : d.peak_bf16_flops_per_s;
  // TF32 tensor rate is half the 16-bit rate on Hopper and CDNA3 (datasheets).
  d.peak_tf32_flops_per_s = d.peak_bf16_flops_per_s / 2.0;
  d.hbm_bytes_per_s = spec.hbm_bandwidth_tbps.value * 1e12;
  PARITY_CHECK_ARG(d.hbm_bytes_per_s > 0, "gemm model: ", spec.name, " has hbm_bandwidth_tbps=0");
  const int chiplets = std::max(1, static_cast<int>(spec.chiplet_count.value));
  d.smem_bytes_per_sm = spec.shared_memory_per_sm_kib.value * 1024.0;
  if (spec.vendor == hw::Vendor::kAmd) {
    d.kind = ModelKind::kOrigami;
    d.num_l2_domains = chiplets;
    d.l2_bytes_per_domain = spec.l2_cache_mib.value * kBytesPerMib / chiplets;
    d.llc_bytes = spec.last_level_cache_mib.value * kBytesPerMib;
    if (spec.architecture == "cdna3") {
      // gfx942 constants (origami.md §2.2).
      d.arch = "gfx942";
      d.l2_bw_tbps = 17.0;
      d.mall_bw_tbps = 1.21875 * 6.0;
      d.hbm_model_bw_tbps = 4.0;
      d.bw_fraction_quadratic = {0.0, 0.015, 0.0};
      d.memory_clock_ghz = 1.3;
      d.mi_k_16 = 16;
      d.mi_k_32 = 8;
    } else if (spec.architecture == "cdna4") {
      d.arch = "gfx950";
      d.l2_bw_tbps = 17.0;
      d.mall_bw_tbps = 8.53;
      d.hbm_model_bw_tbps = 6.0;
      d.bw_fraction_quadratic = {0.0274, 0.00707, -1.3e-5};
      d.memory_clock_ghz = 1.6;
      d.mi_k_16 = 32;
      d.mi_k_32 = 16;
    } else {
      // Other AMD parts: physical bandwidths at the compute clock, CDNA3 instruction shapes.
      d.arch = spec.architecture;
      d.hbm_model_bw_tbps = spec.hbm_bandwidth_tbps.value;
      d.mall_bw_tbps = 1.5 * d.hbm_model_bw_tbps;
      d.l2_bw_tbps = 3.0 * d.hbm_model_bw_tbps;
      d.memory_clock_ghz = d.clock_ghz;
      d.mem_clock_ratio = 1.0;
    }
    // One 16x16 MFMA of K=mi_k_16 takes 16 cycles on one of 4 units: fix its latency so the table
    // reproduces the catalogue's dense peak (2048 flop/clk/CU on CDNA3, 4096 on CDNA4).
    const double flops_per_clock_per_cu = d.peak_bf16_flops_per_s / (d.num_sms * d.clock_ghz * 1e9);
    d.mi_latency_16_cycles = 2.0 * 16 * 16 * d.mi_k_16 * 4.0 / flops_per_clock_per_cu;
    d.mi_latency_32_cycles = 2.0 * 32 * 32 * d.mi_k_32 * 4.0 / flops_per_clock_per_cu;
    if (d.smem_bytes_per_sm <= 0) d.smem_bytes_per_sm = 64.0 * 1024.0;
  } else {
    d.kind = ModelKind::kHopper;
    d.arch = spec.architecture;
    d.num_l2_domains = 1;
    d.l2_bytes_per_domain = spec.l2_cache_mib.value * kBytesPerMib;
    d.llc_bytes = 0.0;
    if (d.smem_bytes_per_sm <= 0) d.smem_bytes_per_sm = 228.0 * 1024.0;
  }
  PARITY_CHECK_ARG(d.l2_bytes_per_domain > 0, "gemm model: ", spec.name, " has l2_cache_mib=0");
  return d;
}

std::array<double, kNumModelScalars> scalars_to_array(const ModelScalars& s) {
  return {s.mma_efficiency, s.feed_intensity,    s.dram_efficiency,
          s.l2_bandwidth_ratio, s.launch_us,     s.tile_overhead_us,
          s.splitk_overhead_us, s.bw_saturation, s.cluster_efficiency, s.tail_boost,
          s.single_cta_efficiency, s.cluster4_efficiency, s.epilogue_us, s.legacy_efficiency};
}

ModelScalars scalars_from_array(const std::array<double, kNumModelScalars>& v) {
  ModelScalars s;
  s.mma_efficiency = v[0];
  s.feed_intensity = v[1];
  s.dram_efficiency = v[2];
  s.l2_bandwidth_ratio = v[3];
  s.launch_us = v[4];
  s.tile_overhead_us = v[5];
  s.splitk_overhead_us = v[6];
  s.bw_saturation = v[7];
  s.cluster_efficiency = v[8];
  s.tail_boost = v[9];
  s.single_cta_efficiency = v[10];
  s.cluster4_efficiency = v[11];
  s.epilogue_us = v[12];
  s.legacy_efficiency = v[13];
  return s;
}

std::string_view scalar_name(int index) {
  static constexpr std::string_view kNames[kNumModelScalars] = {
      "mma_efficiency",     "feed_intensity", "dram_efficiency",
      "l2_bandwidth_ratio", "launch_us",      "tile_overhead_us",
      "splitk_overhead_us", "bw_saturation",  "cluster_efficiency", "tail_boost",
      "single_cta_efficiency", "cluster4_efficiency", "epilogue_us", "legacy_efficiency"};
  return index >= 0 && index < kNumModelScalars ? kNames[index] : "?";
}

std::array<double, 2> scalar_bounds(int index) {
  static constexpr double kBounds[kNumModelScalars][2] = {
      {0.3, 1.0}, {0.5, 64.0}, {0.3, 1.0}, {1.0, 8.0}, {0.5, 20.0},
      {0.01, 10.0}, {0.1, 20.0}, {0.1, 1.0}, {0.7, 1.1}, {0.001, 0.5}, {0.4, 1.1}, {0.5, 1.1},
      {0.01, 5.0}, {0.02, 1.0}};
  if (index < 0 || index >= kNumModelScalars) return {0.0, 0.0};
  const std::string env = "PARITY_EXP_B" + std::to_string(index);
  if (const char* v = std::getenv(env.c_str())) {
    double lo = 0, hi = 0;
    if (std::sscanf(v, "%lf,%lf", &lo, &hi) == 2) return {lo, hi};
  }
  return {kBounds[index][0], kBounds[index][1]};
}

ModelScalars default_scalars(const DeviceParams& device) {
  ModelScalars s;
  if (device.kind == ModelKind::kOrigami) {
    // Origami's own constants: main-loop efficiency 1, launch 4.5*2200 cycles, tile 1500 cycles.
    s.mma_efficiency = 1.0;
    s.launch_us = kOrigamiLaunchCycles / (device.clock_ghz * 1e3);
    s.tile_overhead_us = kOrigamiTileFixedCycles / (device.clock_ghz * 1e3);
  }
  return s;
}

GemmModel::GemmModel(DeviceParams device, ModelScalars scalars)
    : device_(std::move(device)), scalars_(scalars) {}

PreparedCandidate GemmModel::prepare(const ProblemClass& key, const Candidate& c) const {
  PreparedCandidate p;
  p.tile_m = c.tile_m;
  p.tile_n = c.tile_n;
  p.tile_k = c.tile_k;
  p.split_k = std::max(1, c.split_k);
  p.is_stream_k = c.decomposition == Decomposition::kStreamK;
  p.group_size = std::max(1, c.group_size);
  p.is_xcd_contiguous = c.xcd_mapping == XcdMapping::kContiguous;
  p.occupancy = std::max(1, c.occupancy);
  const double a_bytes = static_cast<double>(dtype_size_bytes(key.a_dtype));
  const double c_bytes = static_cast<double>(dtype_size_bytes(key.c_dtype));
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  p.arithmetic_intensity = 2.0 * tm * tn * tk / (tm * tk + tn * tk + tm * tn);
  // DRAM bytes one tile row of the window (tm rows of A) and one tile column (tn columns of B)
  // read per K-iteration: the window below counts tile positions, not matrix rows.
  p.a_bytes_per_row_iter = tm * tk * a_bytes;
  p.b_bytes_per_col_iter = tn * tk * a_bytes;
  p.window_aspect = std::sqrt(tn / tm);
  const bool is_split = p.split_k > 1 && !p.is_stream_k;
  p.store_bytes_per_tile = tm * tn * (is_split ? 4.0 : c_bytes);
  const int cluster_size = std::max(1, c.cluster_m) * std::max(1, c.cluster_n);

  if (device_.kind == ModelKind::kOrigami) {
    p.usable_sms = device_.num_sms;
    p.is_feasible = (tm * a_bytes + tn * a_bytes) * tk <= device_.smem_bytes_per_sm;
    const bool is_wide = c.mi_m >= 32;
    const double latency = is_wide ? device_.mi_latency_32_cycles : device_.mi_latency_16_cycles;
    const int mi_m = is_wide ? 32 : 16;
    const int mi_k = is_wide ? device_.mi_k_32 : device_.mi_k_16;
    p.amd_compute_cycles_per_iter = latency / 4.0 * ceil_div(tm, mi_m) * ceil_div(tn, mi_m) *
                                    ceil_div(tk, mi_k);
    // Without native TF32 (gfx950) fp32 inputs run as three bf16 passes (origami.md §2.2).
    if (key.a_dtype == DType::kF32) p.amd_compute_cycles_per_iter *= device_.arch == "gfx950" ? 6 : 2;
    p.amd_compute_cycles_per_iter /= scalars_.mma_efficiency;
    return p;
  }

  // TMA needs 16-byte aligned rows: below that the library runs kernels that load through
  // cp.async or registers, with no multicast, no clusters and no warp-specialised overlap.
  const bool uses_tma = key.alignment_bytes >= kTmaAlignmentBytes;
  p.uses_tma = uses_tma;
  // The output is column-major: a tile column is tm contiguous elements. When its bytes are not a
  // whole number of 32-byte DRAM sectors (168 bf16 = 336 bytes; 8 bf16), neighbouring tiles share
  // a sector at every tile boundary: the L2 writes the two partial sectors at a column's ends back
  // whole (floor(bytes / 32) + 2 sectors written) and reads them from DRAM first to merge (two
  // sectors read). No fitted scalar: the sector size is the DRAM access granularity.
  const double column_bytes = tm * (is_split ? 4.0 : c_bytes);
  if (column_bytes > kSectorBytes * fast_floor(column_bytes / kSectorBytes)) {
    p.store_bytes_per_tile = tn * (kSectorBytes * (fast_floor(column_bytes / kSectorBytes) + 2.0) +
                                   2.0 * kSectorBytes);
  }
  const int launched_cluster = uses_tma ? cluster_size : 1;
  p.usable_sms = usable_sms_for_cluster(device_.num_sms, launched_cluster);
  p.cluster_m = uses_tma ? std::max(1, c.cluster_m) : 1;
  p.cluster_n = uses_tma ? std::max(1, c.cluster_n) : 1;
  p.inv_cluster_m = 1.0 / p.cluster_m;
  p.inv_cluster_n = 1.0 / p.cluster_n;
  // Needs two pipeline stages of A and B tiles in shared memory.
  p.is_feasible = 2.0 * (tm + tn) * tk * a_bytes <= device_.smem_bytes_per_sm;
  double peak = device_.peak_bf16_flops_per_s;
  if (key.a_dtype == DType::kF16) peak = device_.peak_fp16_flops_per_s;
  if (key.a_dtype == DType::kF32) peak = device_.peak_tf32_flops_per_s;
  // Operand feed from shared memory per K-step: every consumer warpgroup that multiplies into a
  // tile reads the whole B slice. A ping-pong schedule gives each warpgroup a tile of its own (A
  // and B read once per tile); a cooperative one (TMA family, variants 4..7) splits the tile's M
  // rows over two warpgroups, so B is read twice: tm*tn FMAs per (tm + 2 tn) elements fed.
  const bool is_cooperative = uses_tma && c.variant >= kFirstCooperativeVariant;
  static const int exp_coop = std::getenv("PARITY_EXP_COOP") ? std::atoi(std::getenv("PARITY_EXP_COOP")) : 0;
  double intensity = tm * tn / (tm + (is_cooperative ? 2.0 : 1.0) * tn);
  if (is_cooperative && exp_coop == 1) {
    const double big = std::max(tm, tn), small = std::min(tm, tn);
    intensity = (big / 2) * small / (big / 2 + small);
  } else if (exp_coop == 3) {
    const double mm = c.mi_m, mn = std::min<double>(c.mi_n, tn);
    intensity = mm * mn / (mm + mn);
  } else if (exp_coop == 4) {
    const double mm = c.mi_m, mn = std::min<double>(c.mi_n, tn);
    intensity = mm * mn / (mm + mn);
    if (is_cooperative) intensity = std::min(intensity, tm * tn / (tm + 2.0 * tn));
  } else if (!is_cooperative && exp_coop == 5) {
    const double rows = std::min(tm, 128.0);
    intensity = rows * tn / (rows + tn);
  } else if (!is_cooperative && exp_coop == 6) {
    const double rows = std::min(tm, 128.0), cols = std::min(tn, 128.0);
    intensity = rows * cols / (rows + cols);
  } else if (!is_cooperative && exp_coop == 5) {
    const double rows = std::min(tm, 128.0);
    intensity = rows * tn / (rows + tn);
  } else if (is_cooperative && exp_coop == 2) {
    intensity = tm >= 128 ? tm * tn / (tm + 2.0 * tn) : tm * tn / (2.0 * tm + tn);
  }
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
  } else if (cluster_size == 1) {
    efficiency *= scalars_.single_cta_efficiency;
  } else if (cluster_size == 2) {
    efficiency *= scalars_.cluster_efficiency;
  } else {
    efficiency *= scalars_.cluster4_efficiency;
  }
  if (uses_tma && c.variant >= kFirstCooperativeVariant) {
    p.exposed_epilogue_us = scalars_.epilogue_us * tm * tn * c_bytes / kReferenceEpilogueBytes;
  } else if (uses_tma) {
    // Ping-pong: a warpgroup's epilogue runs while the other warpgroup's K-loop holds the tensor
    // cores, so a tile costs max(K-loop, epilogue): only the epilogue's excess over one K-loop is
    // exposed (short-K shapes with many waves of small tiles). The epilogue's latency (registers ->
    // shared memory -> TMA store, wait before the buffer is reused) is the same per-tile cost the
    // cooperative schedules expose in full, taken at the reference tile: a latency, not a rate.
    p.pingpong_epilogue_us = scalars_.epilogue_us;
  }
  if (c.variant >= 0 && c.variant < static_cast<int>(scalars_.variant_efficiency.size())) {
    efficiency *= scalars_.variant_efficiency[static_cast<std::size_t>(c.variant)];
  }
  p.compute_us_per_iter = 2.0 * tm * tn * tk / (peak / device_.num_sms * efficiency) * 1e6;
  // TMA multicast: the A tile is shared by the cluster's CTAs along N, the B tile along M.
  p.l2_bytes_per_iter = (tm * a_bytes / p.cluster_n + tn * a_bytes / p.cluster_m) * tk;
  p.full_wave_splits = std::min<double>(p.split_k, p.usable_sms);
  p.full_wave_positions = std::max(1.0, p.usable_sms / p.full_wave_splits);
  p.full_wave_rows = std::sqrt(p.full_wave_positions) * p.window_aspect;
  // The unclipped window (valid while the grid is at least this large; checked per problem).
  const double rows_hint = std::max(1.0, p.full_wave_rows);
  p.full_wave_cols_used = fast_ceil(p.full_wave_positions / rows_hint);
  p.full_wave_rows_used = fast_ceil(p.full_wave_positions / p.full_wave_cols_used);
  p.full_wave_inv_bw_fraction =
      std::max(1.0, scalars_.bw_saturation * device_.num_sms / p.usable_sms);
  p.inv_tile_m = 1.0 / tm;
  p.inv_tile_n = 1.0 / tn;
  p.inv_tile_k = 1.0 / tk;
  p.inv_split_k = 1.0 / p.split_k;
  p.inv_usable_sms = 1.0 / p.usable_sms;
  p.tiles_per_output = p.split_k / (tm * tn);
  p.wave_fixed_us = scalars_.tile_overhead_us;
  p.split_fixed_us = is_split ? scalars_.splitk_overhead_us : 0.0;
  p.reduce_bytes_per_output = is_split ? p.split_k * 4.0 + c_bytes : 0.0;
  const double dram_bw = device_.hbm_bytes_per_s * scalars_.dram_efficiency * 1e-6;  // bytes/us
  p.min_l2_us_per_flop =
      p.l2_bytes_per_iter / (2.0 * tm * tn * tk) / (dram_bw * scalars_.l2_bandwidth_ratio);
  p.full_wave_compute_us_per_k = p.compute_us_per_iter / (p.split_k * tk);
  p.min_compute_us_per_k = p.full_wave_compute_us_per_k / (1.0 + scalars_.tail_boost);
  return p;
}

double GemmModel::predict_us(const GemmProblem& problem, const Candidate& candidate) const {
  return predict_us(problem, prepare(problem_class(problem), candidate));
}

double GemmModel::predict_us(const GemmProblem& problem, const PreparedCandidate& c) const {
  if (!c.is_feasible) return kInfinity;
  return device_.kind == ModelKind::kOrigami ? predict_origami_us(problem, c)
                                             : predict_hopper_us(problem_terms(problem), c);
}

void GemmModel::predict_all_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                               std::size_t count, double* predicted_us) const {
  if (device_.kind == ModelKind::kOrigami) {
    for (std::size_t i = 0; i < count; ++i) {
      predicted_us[i] = prepared[i].is_feasible ? predict_origami_us(problem, prepared[i]) : kInfinity;
    }
    return;
  }
  const ProblemTerms terms = problem_terms(problem);
  for (std::size_t i = 0; i < count; ++i) {
    predicted_us[i] = prepared[i].is_feasible ? predict_hopper_us(terms, prepared[i]) : kInfinity;
  }
}

std::size_t GemmModel::predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                      std::size_t count, std::size_t keep, double tie_epsilon,
                                      double* predicted_us, double* cutoff_us) const {
  if (device_.kind != ModelKind::kHopper || keep == 0 || keep > kMaxPrunedKeep || count < keep) {
    predict_all_us(problem, prepared, count, predicted_us);
    if (cutoff_us != nullptr) *cutoff_us = kInfinity;
    return count;
  }
  const ProblemTerms terms = problem_terms(problem);
  // Pass 1: every candidate's coarse bound (launch; the fewest waves the output allows, each a
  // boosted K-loop with its fixed costs; the L2 time; the split-K reduction: one rounding, no
  // tile counts), and the
  // finer bound where the coarse one could still make it a seed; remember the `keep` smallest
  // bounds (ascending) as seeds.
  const double flops = 2.0 * terms.m * terms.n * terms.k * terms.batch;
  const double outputs = terms.batch * terms.m * terms.n;
  const double output_us = outputs * terms.inv_dram_bw;
  std::array<double, kMaxPrunedKeep> seed_bound{};
  std::array<std::size_t, kMaxPrunedKeep> seed_index{};
  std::size_t seeds = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const PreparedCandidate& c = prepared[i];
    constexpr double kGuard = 1e-9;
    const double waves = fast_ceil(outputs * c.tiles_per_output * c.inv_usable_sms - kGuard);
    const double compute_us = terms.k * (std::max(0.0, waves - 1.0) * c.full_wave_compute_us_per_k +
                                         c.min_compute_us_per_k);
    // Per wave max(memory, compute + cooperative epilogue): the sums bound the sum of the maxima.
    const double loop_us =
        std::max(compute_us + waves * c.exposed_epilogue_us, flops * c.min_l2_us_per_flop);
    double bound = c.is_feasible ? (scalars_.launch_us + waves * c.wave_fixed_us + loop_us +
                                    c.split_fixed_us + output_us * c.reduce_bytes_per_output) *
                                       kCoarseRoundingMargin
                                 : kInfinity;
    predicted_us[i] = bound;
    if (bound == kInfinity || (seeds == keep && bound >= seed_bound[keep - 1])) continue;
    // A possible seed: rank seeds by the finer bound (tile counts, waves, L2 time).
    bound = hopper_lower_bound_us(terms, c);
    predicted_us[i] = bound;
    if (seeds == keep && bound >= seed_bound[keep - 1]) continue;
    std::size_t at = seeds < keep ? seeds++ : keep - 1;
    while (at > 0 && seed_bound[at - 1] > bound) {
      seed_bound[at] = seed_bound[at - 1];
      seed_index[at] = seed_index[at - 1];
      --at;
    }
    seed_bound[at] = bound;
    seed_index[at] = i;
  }
  // Pass 2: the most promising candidates exactly first (a tight threshold early), then every
  // other candidate whose bound does not already rule it out. best[] holds the smallest exact
  // predictions so far, ascending.
  std::array<double, kMaxPrunedKeep> best{};
  std::size_t filled = 0, exact = 0;
  const auto predict_exact = [&](std::size_t i) {
    const double value = predict_hopper_us(terms, prepared[i]);
    predicted_us[i] = value;
    ++exact;
    if (filled < keep || value < best[keep - 1]) {
      std::size_t at = filled < keep ? filled++ : keep - 1;
      while (at > 0 && best[at - 1] > value) {
        best[at] = best[at - 1];
        --at;
      }
      best[at] = value;
    }
  };
  for (std::size_t s = 0; s < seeds; ++s) predict_exact(seed_index[s]);
  // Seeds in index order, walked beside i: skipping them costs one comparison per candidate (a
  // scan of all seeds per candidate was ~4k comparisons per selection).
  std::array<std::size_t, kMaxPrunedKeep> seeds_in_order = seed_index;
  std::sort(seeds_in_order.begin(), seeds_in_order.begin() + static_cast<std::ptrdiff_t>(seeds));
  std::size_t next_seed = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (next_seed < seeds && seeds_in_order[next_seed] == i) {
      ++next_seed;
      continue;
    }
    if (predicted_us[i] == kInfinity) continue;
    if (filled == keep) {
      const double threshold = std::max(best[keep - 1], best[0] * (1.0 + tie_epsilon));
      if (predicted_us[i] > threshold) continue;  // stays at its coarse bound
      const double bound = hopper_lower_bound_us(terms, prepared[i]);
      if (bound > threshold) {
        predicted_us[i] = bound;  // stays at the finer bound
        continue;
      }
    }
    predict_exact(i);
  }
  if (cutoff_us != nullptr) {
    *cutoff_us = filled == keep ? std::max(best[keep - 1], best[0] * (1.0 + tie_epsilon)) : kInfinity;
  }
  return exact;
}

// Tiles launched (grid padded to whole clusters, times batch and split-K) and K iterations per
// tile, shared by the prediction and its lower bound. Quotients of exact integers by tile sizes
// <= 1024: a 1e-9 guard absorbs the reciprocal's rounding without crossing a true integer
// boundary (those are >= 1/1024 apart).
struct HopperGrid {
  double grid_m;
  double grid_n;
  double tiles;
  double iters;
};

inline HopperGrid hopper_grid(const GemmModel::ProblemTerms& t, const PreparedCandidate& c) {
  constexpr double kGuard = 1e-9;
  auto& memo = t.memo;
  if (c.inv_tile_m != memo.inv_tile_m || c.cluster_m != memo.cluster_m) {
    memo.inv_tile_m = c.inv_tile_m;
    memo.cluster_m = c.cluster_m;
    // Clusters launch whole: the grid is padded to a multiple of the cluster shape.
    memo.grid_m = fast_ceil(t.m * c.inv_tile_m - kGuard);
    if (c.cluster_m > 1) memo.grid_m = fast_ceil(memo.grid_m * c.inv_cluster_m - kGuard) * c.cluster_m;
  }
  if (c.inv_tile_n != memo.inv_tile_n || c.cluster_n != memo.cluster_n) {
    memo.inv_tile_n = c.inv_tile_n;
    memo.cluster_n = c.cluster_n;
    memo.grid_n = fast_ceil(t.n * c.inv_tile_n - kGuard);
    if (c.cluster_n > 1) memo.grid_n = fast_ceil(memo.grid_n * c.inv_cluster_n - kGuard) * c.cluster_n;
  }
  if (c.inv_split_k != memo.inv_split_k || c.inv_tile_k != memo.inv_tile_k) {
    memo.inv_split_k = c.inv_split_k;
    memo.inv_tile_k = c.inv_tile_k;
    const double k_per_split = fast_ceil(t.k * c.inv_split_k - kGuard);
    memo.iters = std::max(1.0, fast_ceil(k_per_split * c.inv_tile_k - kGuard));
  }
  return {memo.grid_m, memo.grid_n, memo.grid_m * memo.grid_n * t.batch * c.split_k, memo.iters};
}

double GemmModel::hopper_lower_bound_us(const ProblemTerms& t, const PreparedCandidate& c) const {
  // predict_hopper_us without DRAM, store and the finer window terms, and with the largest tail
  // boost: every wave's K-loop is at least max(its compute, its L2 -> SM time) per iteration (the
  // same products as the exact wave), the exposed fill at least a wave's min(L2 time, compute),
  // and every dropped term is >= 0. A slightly shrunk sum absorbs the different order of additions.
  constexpr double kGuard = 1e-9;
  constexpr double kRoundingMargin = 1.0 - 1e-12;
  const HopperGrid grid = hopper_grid(t, c);
  const double splits = c.split_k;
  const double tiles = grid.tiles;
  const double iters = grid.iters;
  const double full_waves = fast_floor(tiles * c.inv_usable_sms + kGuard);
  const double last_wave_tiles = tiles - full_waves * c.usable_sms;
  const double has_last_wave = last_wave_tiles > 0 ? 1.0 : 0.0;
  const double full_l2_us = full_waves > 0 ? c.usable_sms * c.l2_bytes_per_iter * t.inv_l2_bw : 0.0;
  const double last_l2_us = last_wave_tiles * c.l2_bytes_per_iter * t.inv_l2_bw;
  const double full_iter_us = std::max(c.compute_us_per_iter, full_l2_us);
  const double last_iter_us =
      std::max(c.compute_us_per_iter / (1.0 + scalars_.tail_boost), last_l2_us);
  // Each wave's K-loop and cooperative epilogue cost at least max(iters x max(compute, L2),
  // iters x compute + epilogue) (the exact wave: max(iters x max(DRAM, norm of compute and L2),
  // same); the norm is >= the max).
  const double last_compute_us = c.compute_us_per_iter / (1.0 + scalars_.tail_boost);
  const double full_loop_us =
      std::max(iters * full_iter_us, iters * c.compute_us_per_iter + c.exposed_epilogue_us);
  const double last_loop_us =
      std::max(iters * last_iter_us, iters * last_compute_us + c.exposed_epilogue_us);
  double total_us = scalars_.launch_us + (full_waves + has_last_wave) * scalars_.tile_overhead_us +
                    full_waves * full_loop_us + has_last_wave * last_loop_us +
                    std::max(std::min(full_l2_us, c.compute_us_per_iter),
                             std::min(last_l2_us, c.compute_us_per_iter / (1.0 + scalars_.tail_boost)));
  if (c.split_k > 1) {
    const double reduce_bytes = t.batch * t.m * t.n * (splits * 4.0 + t.out_bytes);
    total_us += scalars_.splitk_overhead_us + reduce_bytes * t.inv_dram_bw;
  }
  return total_us * kRoundingMargin;
}

GemmModel::ProblemTerms GemmModel::problem_terms(const GemmProblem& problem) const {
  ProblemTerms t;
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
  t.saturating_sms = scalars_.bw_saturation * device_.num_sms;
  return t;
}

double GemmModel::predict_hopper_us(const ProblemTerms& t, const PreparedCandidate& c) const {
  // Quotients of exact integers by tile sizes <= 1024: a 1e-9 guard absorbs the reciprocal's
  // rounding without ever crossing a true integer boundary (those are >= 1/1024 apart).
  constexpr double kGuard = 1e-9;
  const HopperGrid grid = hopper_grid(t, c);
  const double grid_m = grid.grid_m;
  const double grid_n = grid.grid_n;
  const double splits = c.split_k;
  const double tiles = grid.tiles;
  const double sms = c.usable_sms;
  const double iters = grid.iters;
  const double compulsory_per_tile_iter = t.operand_bytes / (tiles * iters);

  // Batched problems stack their grids along M (distinct operands per batch entry).
  const double grid_rows = grid_m * t.batch;

  // One wave of `active` concurrent tiles: K-loop at the slower of DRAM and the 4-norm of compute
  // and L2 -> SM time (compute_l2_norm), plus the
  // pipeline fill, the output store and the fixed per-tile cost. The window
  // of concurrently running tiles touches rows_used x cols_used tile positions per split (the best
  // raster: cols/rows ~ sqrt(tile_n/tile_m)); each split reads its own K range.
  // Warp-specialised persistent kernels overlap one tile's epilogue with the next tile's loads:
  // the output store costs bandwidth inside the K-loop, and only the first pipeline fill and the
  // last epilogue are exposed (added once, below).
  double exposed_fill_us = 0.0, exposed_store_us = 0.0;
  const double inv_iters = 1.0 / iters;
  const auto wave_us = [&](double active, double active_splits, double rows_used, double cols_used,
                           double inv_bw_fraction, double compute_us) {
    const double l2_us = active * c.l2_bytes_per_iter * t.inv_l2_bw;
    const double window_bytes = active_splits * (rows_used * c.a_bytes_per_row_iter +
                                                 cols_used * c.b_bytes_per_col_iter);
    const double store_bytes = active * c.store_bytes_per_tile;
    const double dram_bytes = (1.0 - t.reuse) * window_bytes +
                              t.reuse * active * compulsory_per_tile_iter + store_bytes * inv_iters;
    const double dram_us = dram_bytes * t.inv_dram_bw * inv_bw_fraction;
    const double memory_us = std::max(l2_us, dram_us);
    const double iter_us = std::max(dram_us, compute_l2_norm(compute_us, l2_us));
    // A pipeline of n iterations costs n max(memory, compute) + min(memory, compute): the first
    // loads wait for nothing to overlap, but a memory-bound loop already paid for its bytes, so
    // only the shorter stage is exposed (not a whole memory iteration counted twice).
    exposed_fill_us = std::max(exposed_fill_us, std::min(memory_us, compute_us));
    // The last wave's store has no next tile to hide behind; the part of it that the K-loop
    // already paid as bandwidth beyond compute (memory-bound iterations include store/iters) is
    // not charged again: short-K grids of large tiles are not charged their last store twice.
    const double store_us = store_bytes * t.inv_dram_bw * inv_bw_fraction;
    exposed_store_us = std::max(0.0, store_us - iters * std::max(0.0, memory_us - compute_us));
    // A cooperative tile's epilogue stalls both consumer warpgroups, but not the TMA producer: it
    // keeps filling the freed pipeline stages with the next tile's K-blocks, so the epilogue hides
    // in the time a memory-bound K-loop leaves the tensor cores idle. The tile costs
    // max(memory stream, K-loop compute + epilogue) (the whole epilogue when compute-bound).
    const double loop_us = iters * iter_us;
    return std::max(loop_us, iters * compute_us + c.exposed_epilogue_us) +
           scalars_.tile_overhead_us + std::max(0.0, c.pingpong_epilogue_us - loop_us);
  };
  const auto window = [&](double positions, double rows_hint, double& rows_used, double& cols_used) {
    rows_used = std::clamp(rows_hint, 1.0, grid_rows);
    cols_used = std::min(grid_n, fast_ceil(positions / rows_used));
    rows_used = std::min(grid_rows, fast_ceil(positions / cols_used));
  };

  const double full_waves = fast_floor(tiles * c.inv_usable_sms + kGuard);
  const double last_wave_tiles = tiles - full_waves * sms;
  double total_us = scalars_.launch_us;
  if (full_waves > 0) {
    // The full-wave window was prepared once; recompute only when the grid clips it.
    double rows_used = c.full_wave_rows_used, cols_used = c.full_wave_cols_used;
    if (c.full_wave_rows > grid_rows || cols_used > grid_n || rows_used > grid_rows) {
      window(c.full_wave_positions, c.full_wave_rows, rows_used, cols_used);
    }
    total_us += full_waves * wave_us(sms, c.full_wave_splits, rows_used, cols_used,
                                     c.full_wave_inv_bw_fraction, c.compute_us_per_iter);
  }
  if (last_wave_tiles > 0) {
    const double active_splits = std::min(splits, last_wave_tiles);
    const double positions = std::max(1.0, last_wave_tiles / active_splits);
    double rows_used = 0, cols_used = 0;
    window(positions, std::sqrt(positions) * c.window_aspect, rows_used, cols_used);
    const double inv_bw_fraction = std::max(1.0, t.saturating_sms / last_wave_tiles);
    const double busy_fraction = last_wave_tiles * c.inv_usable_sms;
    const double compute_us =
        c.compute_us_per_iter / (1.0 + scalars_.tail_boost * (1.0 - busy_fraction));
    total_us += wave_us(last_wave_tiles, active_splits, rows_used, cols_used, inv_bw_fraction,
                        compute_us);
  }
  total_us += exposed_fill_us + exposed_store_us;
  if (c.split_k > 1) {
    // Separate reduction kernel: reads s fp32 partials, writes D.
    const double reduce_bytes = t.batch * t.m * t.n * (splits * 4.0 + t.out_bytes);
    total_us += scalars_.splitk_overhead_us + reduce_bytes * t.inv_dram_bw;
  }
  return total_us;
}

double GemmModel::predict_origami_us(const GemmProblem& problem, const PreparedCandidate& c) const {
  const DeviceParams& d = device_;
  const double m = static_cast<double>(problem.m), n = static_cast<double>(problem.n),
               k = static_cast<double>(problem.k), batch = static_cast<double>(problem.batch);
  const double in_bytes = static_cast<double>(dtype_size_bytes(problem.a_dtype));
  const double out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  const double cus = d.num_sms;
  const double grid_m = ceil_div(m, tm), grid_n = ceil_div(n, tn);
  const double tiles = grid_m * grid_n * batch;

  // Grid: data-parallel (G = tiles * split) or stream-K (one workgroup per CU).
  const double splits = c.is_stream_k ? std::max(1.0, std::min(16.0, std::floor(cus / tiles)))
                                      : static_cast<double>(c.split_k);
  const double grid = tiles * splits;
  const double active = std::min(grid, cus);
  double timesteps = std::ceil(grid / cus);
  const double k_iters_total = std::max(1.0, std::floor(k / tk));
  const double kappa = std::max(1.0, std::ceil(k_iters_total / splits));
  const double utilization =
      m * n * k / (grid_m * tm * grid_n * tn * std::ceil(k / tk) * tk);
  const double occupancy_factor =
      std::pow(0.95, std::min(timesteps, 4.0)) * std::pow(0.95, c.occupancy - 1.0);

  // Bandwidths in bytes per compute cycle (Origami's conversion, origami.md §2.1).
  const double clock_hz = d.clock_ghz * 1e9;
  const double l2_bpc = d.l2_bw_tbps * 1e12 / clock_hz;
  // Origami's quirk: the MALL and HBM constants are divided by the memory clock, yet used per
  // compute cycle. dram_efficiency rescales HBM relative to its default (0.9 = as published).
  const double mall_bpc = d.mall_bw_tbps * 1e12 / (d.memory_clock_ghz * 1e9 * d.mem_clock_ratio);
  const double hbm_bpc =
      d.hbm_model_bw_tbps * 1e12 / (d.memory_clock_ghz * 1e9) * scalars_.dram_efficiency / 0.9;
  const auto& q = d.bw_fraction_quadratic;
  const double bw_fraction = std::clamp(q[2] * active * active + q[1] * active + q[0], 0.01, 1.0);

  // Bytes one workgroup loads per K-iteration (rows rounded to whole 64-byte lines).
  const double line = 64.0;
  const double a_iter = std::min(m, tm) * std::ceil(tk * in_bytes / line) * line;
  const double b_iter = std::min(n, tn) * std::ceil(tk * in_bytes / line) * line;

  // L2 hit rates: the tiles one XCD runs in a timestep, under WGM grouping and the XCD mapping.
  const double xcds = d.num_l2_domains;
  const double per_xcd = std::max(1.0, std::ceil(active / xcds));
  const double group = std::min(static_cast<double>(c.group_size), grid_m);
  double rows_l2 = 0, cols_l2 = 0;
  if (c.is_xcd_contiguous) {
    // Each XCD owns a contiguous block of the WGM walk: group rows x (per_xcd / group) columns.
    rows_l2 = std::min(group, per_xcd);
    cols_l2 = std::min(grid_n * splits, std::ceil(per_xcd / rows_l2));
  } else {
    // Round-robin dealing: an XCD's tiles are every xcds-th tile of the walk, so they spread over
    // xcds times as many columns (rows stay within the group).
    rows_l2 = std::min(group, per_xcd);
    cols_l2 = std::min({grid_n * splits, per_xcd, std::ceil(per_xcd * xcds / rows_l2)});
  }
  // Shrink to what fits in one XCD's L2 (double-buffered K-slices).
  while (rows_l2 > 1 && (rows_l2 * a_iter + cols_l2 * b_iter) * kOrigamiPrefetchDepth >
                            d.l2_bytes_per_domain) {
    rows_l2 -= 1;
  }
  const double hit_l2 =
      std::max(0.0, 1.0 - (rows_l2 * a_iter + cols_l2 * b_iter) / (per_xcd * (a_iter + b_iter)));
  // MALL: the whole timestep's window over the device (no capacity term, as in Origami).
  const double rows_mall = std::min(std::max(group, 1.0), active);
  const double cols_mall = std::min(grid_n * splits, std::ceil(active / rows_mall));
  const double hit_mall = d.llc_bytes > 0
      ? std::max(0.0, 1.0 - (rows_mall * a_iter + cols_mall * b_iter) / (active * (a_iter + b_iter)))
      : 0.0;

  const double bytes = active * (a_iter + b_iter);
  const double t_l2 = bytes / (l2_bpc * active / cus);
  const double t_mall = d.llc_bytes > 0 ? (1.0 - hit_l2) * bytes / (mall_bpc * bw_fraction) : 0.0;
  const double t_hbm = (1.0 - hit_mall) * (1.0 - hit_l2) * bytes / (hbm_bpc * bw_fraction) +
                       kOrigamiDramLatencyCycles;
  const double mem_cycles = std::max({t_l2, t_mall, t_hbm});
  const double compute_cycles = c.amd_compute_cycles_per_iter / utilization;

  // Tile: prologue, steady state with prefetch depth 2, drain, loop bookkeeping, epilogue.
  const double n_main = std::max(kappa - kOrigamiPrefetchDepth, 0.0);
  const double n_drain = std::min(kOrigamiPrefetchDepth - 1.0, kappa - 1.0);
  double loop_cycles = std::max(n_main * mem_cycles, n_main * compute_cycles) +
                       (n_drain + 1.0) * compute_cycles + kOrigamiLoopCyclesPerIter * kappa;
  const double tail_k = k - k_iters_total * tk;
  if (tail_k > 0) loop_cycles += (tail_k / tk) * std::max(mem_cycles, compute_cycles);
  double epilogue_cycles = occupancy_factor * tm * tn * out_bytes / (l2_bpc / cus);
  if (splits > 1) {
    epilogue_cycles += (splits - 1.0) * kOrigamiSplitKPeerCycles +
                       (splits - 1.0) * tm * tn * 4.0 / (hbm_bpc / cus);
  }
  const double tile_cycles = occupancy_factor * mem_cycles + loop_cycles + epilogue_cycles +
                             scalars_.tile_overhead_us * d.clock_ghz * 1e3;
  if (c.is_stream_k) {
    // Stream-K: MAC iterations spread evenly over the CUs; fractional timesteps, a fix-up per
    // extra peer sharing a tile (origami.md §6.1).
    const double total_iters = tiles * std::max(1.0, std::ceil(k / tk));
    const double iters_per_cu = std::ceil(total_iters / cus);
    timesteps = iters_per_cu / std::max(1.0, std::ceil(k / tk)) * splits;
  }
  const double total_cycles = timesteps * tile_cycles;
  return scalars_.launch_us + total_cycles / (d.clock_ghz * 1e3);
}

}  // namespace parity::gemm
