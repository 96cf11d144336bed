#include "parity/gemm/model.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "model_hopper.hpp"
#include "model_origami.hpp"
#include "parity/gemm/gemm.hpp"

namespace parity::gemm {
namespace {

constexpr double kBytesPerMib = 1048576.0;
constexpr int kHopperFullSms = 132;
constexpr int kHopperFullSmsClustersOf4 = 30;
// Origami's launch and per-tile fixed costs (origami.md §2.7-2.8), in cycles.
constexpr double kOrigamiLaunchCycles = 4.5 * 2200.0;
constexpr double kOrigamiTileFixedCycles = 1500.0;

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
    // The 132-SM Hopper parts (H100 SXM, H200) run 30 clusters of 4 at once, not the 32 one lost cluster leaves: on every
    // recorded GEMM suite of both, a 4-CTA cluster configuration runs 1.35-1.55x slower than its
    // 2-CTA twin (median) from 31 clusters on, and alike up to 30 (docs/gemm_model.md).
    if (spec.architecture == "hopper" && d.num_sms == kHopperFullSms) {
      d.max_active_clusters_of_4 = kHopperFullSmsClustersOf4;
    }
  }
  PARITY_CHECK_ARG(d.l2_bytes_per_domain > 0, "gemm model: ", spec.name, " has l2_cache_mib=0");
  return d;
}

std::array<double, kNumModelScalars> scalars_to_array(const ModelScalars& s) {
  return {s.mma_efficiency, s.feed_intensity,    s.dram_efficiency,
          s.l2_bandwidth_ratio, s.launch_us,     s.tile_overhead_us,
          s.splitk_overhead_us, s.bw_saturation, s.cluster_efficiency, s.tail_boost,
          s.single_cta_efficiency, s.cluster4_efficiency, s.epilogue_us, s.legacy_efficiency,
          s.legacy_latency_ctas};
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
  s.legacy_latency_ctas = v[14];
  return s;
}

std::string_view scalar_name(int index) {
  static constexpr std::string_view kNames[kNumModelScalars] = {
      "mma_efficiency",     "feed_intensity", "dram_efficiency",
      "l2_bandwidth_ratio", "launch_us",      "tile_overhead_us",
      "splitk_overhead_us", "bw_saturation",  "cluster_efficiency", "tail_boost",
      "single_cta_efficiency", "cluster4_efficiency", "epilogue_us", "legacy_efficiency",
      "legacy_latency_ctas"};
  return index >= 0 && index < kNumModelScalars ? kNames[index] : "?";
}

std::array<double, 2> scalar_bounds(int index) {
  static constexpr double kBounds[kNumModelScalars][2] = {
      {0.3, 1.0}, {0.5, 64.0}, {0.3, 1.0}, {1.0, 8.0}, {0.5, 20.0},
      {0.01, 10.0}, {0.1, 20.0}, {0.1, 1.0}, {0.7, 1.1}, {0.001, 0.5}, {0.4, 1.1}, {0.5, 1.1},
      {0.01, 5.0}, {0.02, 1.0}, {0.05, 8.0}};
  if (index < 0 || index >= kNumModelScalars) return {0.0, 0.0};
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

void PerformanceModel::predict_all_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                      std::size_t count, double* predicted_us) const {
  for (std::size_t i = 0; i < count; ++i) predicted_us[i] = predict_us(problem, prepared[i]);
}

std::size_t PerformanceModel::predict_top_us(const GemmProblem& problem,
                                             const PreparedCandidate* prepared, std::size_t count,
                                             std::size_t keep, double tie_epsilon,
                                             double* predicted_us, double* cutoff_us) const {
  predict_all_us(problem, prepared, count, predicted_us);
  if (cutoff_us != nullptr) *cutoff_us = exact_cutoff_us(predicted_us, count, keep, tie_epsilon);
  return count;
}

double exact_cutoff_us(const double* predicted_us, std::size_t count, std::size_t keep,
                       double tie_epsilon) {
  if (keep == 0 || count < keep) return std::numeric_limits<double>::infinity();
  constexpr std::size_t kSmallKeep = 16;
  if (keep <= kSmallKeep) {
    // The `keep` smallest values by insertion (ascending): no allocation, one pass.
    std::array<double, kSmallKeep> smallest{};
    std::size_t filled = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double value = predicted_us[i];
      if (filled == keep && !(value < smallest[keep - 1])) continue;
      std::size_t at = filled < keep ? filled++ : keep - 1;
      while (at > 0 && smallest[at - 1] > value) {
        smallest[at] = smallest[at - 1];
        --at;
      }
      smallest[at] = value;
    }
    return std::max(smallest[keep - 1], smallest[0] * (1.0 + tie_epsilon));
  }
  std::vector<double> sorted(predicted_us, predicted_us + count);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(keep - 1), sorted.end());
  const double kth = sorted[keep - 1];
  const double best = *std::min_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(keep));
  return std::max(kth, best * (1.0 + tie_epsilon));
}

std::unique_ptr<PerformanceModel> make_model(DeviceParams device, ModelScalars scalars) {
  if (device.kind == ModelKind::kOrigami) {
    return std::make_unique<OrigamiModel>(std::move(device), scalars);
  }
  return std::make_unique<HopperModel>(std::move(device), scalars);
}

GemmModel::GemmModel(DeviceParams device, ModelScalars scalars)
    : impl_(make_model(std::move(device), scalars)) {}

double GemmModel::predict_us(const GemmProblem& problem, const Candidate& candidate) const {
  return impl_->predict_us(problem, impl_->prepare(problem_class(problem), candidate));
}

double epilogue_extra_bytes(RunEpilogue epilogue, const GemmProblem& problem) {
  const double m = static_cast<double>(problem.m), n = static_cast<double>(problem.n);
  const double out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  const double bias_bytes = m * out_bytes;
  const double relu_mask_bytes = m * n / 8.0;  // one bit per element
  const double gelu_aux_bytes = m * n * out_bytes;
  double bytes = 0.0;
  switch (epilogue) {
    case RunEpilogue::kNone:
    case RunEpilogue::kRelu:
    case RunEpilogue::kGelu: bytes = 0.0; break;
    case RunEpilogue::kBias:
    case RunEpilogue::kBiasRelu:
    case RunEpilogue::kBiasGelu: bytes = bias_bytes; break;
    case RunEpilogue::kBiasReluAux: bytes = bias_bytes + relu_mask_bytes; break;
    case RunEpilogue::kBiasGeluAux: bytes = bias_bytes + gelu_aux_bytes; break;
    case RunEpilogue::kDRelu: bytes = relu_mask_bytes; break;
    case RunEpilogue::kDReluBgrad: bytes = relu_mask_bytes + m * 4.0; break;
    case RunEpilogue::kDGelu: bytes = gelu_aux_bytes; break;
    case RunEpilogue::kDGeluBgrad: bytes = gelu_aux_bytes + m * 4.0; break;
    case RunEpilogue::kBgradA: bytes = m * 4.0; break;
    case RunEpilogue::kBgradB: bytes = n * 4.0; break;
  }
  return bytes * static_cast<double>(problem.batch);
}

namespace {

// The epilogue's extra traffic streams beside the output store at the sustained DRAM rate.
double epilogue_us(const PerformanceModel& model, RunEpilogue epilogue, const GemmProblem& problem) {
  const double dram_bytes_per_us =
      model.device().hbm_bytes_per_s * model.scalars().dram_efficiency * 1e-6;
  return epilogue_extra_bytes(epilogue, problem) / dram_bytes_per_us;
}

}  // namespace

double GemmModel::predict_us(const GemmProblem& problem, const Candidate& candidate,
                             RunEpilogue epilogue) const {
  return predict_us(problem, candidate) + epilogue_us(*impl_, epilogue, problem);
}

TimeBreakdown GemmModel::explain(const GemmProblem& problem, const Candidate& candidate,
                                 RunEpilogue epilogue) const {
  TimeBreakdown breakdown =
      impl_->explain(problem, impl_->prepare(problem_class(problem), candidate));
  breakdown.epilogue_us = epilogue_us(*impl_, epilogue, problem);
  breakdown.total_us += breakdown.epilogue_us;
  return breakdown;
}

}  // namespace parity::gemm
