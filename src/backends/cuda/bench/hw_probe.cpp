// `parity hw probe` driver (include/parity/bench/hw_probe.hpp).
#include <array>
#include <filesystem>

#include "bench/results_json.hpp"
#include "core/text_format.hpp"
#include "hw/hw_json.hpp"
#include "parity/bench/gemm_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/hw_probe.hpp"
#include "parity/core/gpu.hpp"
#include "parity/hw/calibration.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::bench {
namespace {

struct GemmShape {
  std::int64_t m, n, k;
};
// Large square and rectangular bf16 products: compute-bound, well past wave quantisation, the
// shapes on which cuBLASLt reaches its best rate on Hopper (the best median is the ceiling).
constexpr std::array<GemmShape, 2> kProbeGemmShapes{{{8192, 8192, 8192}, {16384, 8192, 8192}}};

// The catalogue key for the runtime's device name ("NVIDIA H200" -> alias nvidia_h200 -> "h200");
// the normalised runtime name when the catalogue does not know the device.
std::string catalogue_device_name(const std::string& runtime_name) {
  auto spec = hw::find_hardware_for_device(runtime_name);
  return spec.is_ok() ? spec->name : hw::normalize_hardware_name(runtime_name);
}

double clock_or_zero(int mhz) { return mhz > 0 ? static_cast<double>(mhz) : 0.0; }

}  // namespace

// Long on purpose: the probe's measurements in the order the report prints them.
Result<std::string> run_hw_probe(const HwProbeRequest& request) {
  const TimingOptions& options = request.timing;
  const nlohmann::json provenance = provenance_json(0);
  PARITY_ASSIGN_OR_RETURN(const gpu::DeviceProperties props, gpu::device_properties(0));
  PARITY_ASSIGN_OR_RETURN(const DeviceClocks clocks_before, read_device_clocks());

  PARITY_ASSIGN_OR_RETURN(const HbmMeasurement hbm, measure_hbm_copy(request.copy_total_bytes, options));
  std::string text;
  nlohmann::json gemm_rows = nlohmann::json::array();
  double best_tflops = 0.0;
  std::string best_shape;
  for (const GemmShape& shape : kProbeGemmShapes) {
    auto timing = gemm::time_cublaslt_heuristic(shape.m, shape.n, shape.k, DType::kBF16, options);
    if (!timing.is_ok()) {
      return timing.status().with_context("hw probe: bf16 GEMM " + std::to_string(shape.m) + "x" +
                                          std::to_string(shape.n) + "x" + std::to_string(shape.k));
    }
    const std::string label =
        std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
    nlohmann::json row = sample_stats_json(timing->stats);
    row["m"] = shape.m;
    row["n"] = shape.n;
    row["k"] = shape.k;
    row["dtype"] = "bf16";
    row["median_tflops"] = timing->median_tflops;
    row["configuration"] = timing->configuration;
    row["max_relative_error"] = timing->max_relative_error;
    gemm_rows.push_back(row);
    text += format_text("bf16 GEMM %-18s median %.4f ms  %7.1f TFLOP/s  (%s; check max rel err %.2e)\n", label.c_str(),
                timing->stats.median_ms, timing->median_tflops, timing->configuration.c_str(),
                timing->max_relative_error);
    if (timing->median_tflops > best_tflops) {
      best_tflops = timing->median_tflops;
      best_shape = label;
    }
  }
  PARITY_ASSIGN_OR_RETURN(const DeviceClocks clocks_after, read_device_clocks());

  hw::Calibration calibration;
  calibration.device_name = catalogue_device_name(props.name);
  const std::filesystem::path out_path =
      request.out.empty() ? hw::resolve_data_dir(std::nullopt) / "calibration" / (calibration.device_name + ".json")
                       : std::filesystem::path(request.out);
  // Keep model parameters fitted earlier (gemm calibrate) when re-probing the same device.
  if (std::filesystem::exists(out_path)) {
    auto previous = hw::load_calibration_file(out_path);
    if (previous.is_ok()) calibration.model_parameters = previous->model_parameters;
  }
  calibration.copy_bandwidth_tbps = hbm.ceiling().median_tbps;
  calibration.bf16_gemm_tflops = best_tflops;
  calibration.sm_count = props.sm_count;
  calibration.l2_bytes = props.l2_bytes;
  calibration.sm_clock_before_mhz = clock_or_zero(clocks_before.sm_clock_mhz);
  calibration.sm_clock_after_mhz = clock_or_zero(clocks_after.sm_clock_mhz);
  calibration.provenance.commit = provenance["commit"].get<std::string>();
  calibration.provenance.date = provenance["timestamp_utc"].get<std::string>();
  calibration.provenance.device = props.name;
  calibration.provenance.driver = "driver " + std::to_string(props.driver_version) + ", CUDA runtime " +
                                  std::to_string(props.runtime_version);
  PARITY_RETURN_IF_ERROR(hw::write_calibration_file(out_path, calibration));

  text += format_text("device: %s (%s), %d SMs, L2 %.1f MiB\n", props.name.c_str(), calibration.device_name.c_str(),
              props.sm_count, static_cast<double>(props.l2_bytes) / (1 << 20));
  text += format_text("copy bandwidth (read + written, %.2f GB per copy): kernel %.3f TB/s, cudaMemcpyAsync %.3f TB/s, "
              "ceiling %.3f TB/s\n",
              static_cast<double>(hbm.total_bytes) / 1e9, hbm.kernel.median_tbps, hbm.runtime_copy.median_tbps,
              hbm.ceiling().median_tbps);
  text += format_text("bf16 GEMM ceiling: %.1f TFLOP/s (%s, cuBLASLt heuristic, median)\n", best_tflops, best_shape.c_str());
  text += format_text("clocks: SM %d -> %d MHz (max %d), memory %d -> %d MHz (%s)\n", clocks_before.sm_clock_mhz,
              clocks_after.sm_clock_mhz, clocks_after.max_sm_clock_mhz, clocks_before.memory_clock_mhz,
              clocks_after.memory_clock_mhz, clocks_after.source.c_str());
  text += format_text("wrote %s\n", out_path.string().c_str());

  if (!request.results.empty()) {
    nlohmann::json document = results_document("hw_probe", provenance);
    document["copy"] = hbm_measurement_json(hbm);
    document["gemm_bf16"] = gemm_rows;
    document["gemm_bf16_best"] = {{"shape", best_shape}, {"median_tflops", best_tflops}};
    document["calibration"] = hw::calibration_to_json(calibration);
    document["calibration_path"] = out_path.string();
    PARITY_RETURN_IF_ERROR(finish_results_document(document, clocks_before, clocks_after, request.results, &text));
  }
  return text;
}

}  // namespace parity::bench
