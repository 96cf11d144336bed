// `parity hw probe`: measures the local GPU's real ceilings (bf16 GEMM rate on large shapes via
// cuBLASLt's heuristic choice, device copy bandwidth counting bytes read + written, SM count, L2,
// clocks before/after) and writes the calibration file the models read, plus a results JSON.
// Arguments are validated first (exit 2), then a CUDA device is required (exit 3).
#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/provenance.hpp"
#include "parity/bench/results.hpp"
#include "parity/hw/calibration.hpp"
#include "parity/hw/catalogue.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
#include "parity/gemm/cublaslt.hpp"
#endif

namespace parity::cli {
namespace {

struct ProbeArgs {
  std::string out;      // calibration file; default <data dir>/calibration/<device>.json
  std::string results;  // results JSON; none by default
  std::string bytes_text = std::to_string(bench::kDefaultHbmTotalBytes);
  int warmup = 10;
  int reps = 30;
};

struct GemmShape {
  std::int64_t m, n, k;
};
// Large square and rectangular bf16 products: compute-bound, well past wave quantisation, the
// shapes on which cuBLASLt reaches its best rate on Hopper (the best median is the ceiling).
constexpr std::array<GemmShape, 2> kProbeGemmShapes{{{8192, 8192, 8192}, {16384, 8192, 8192}}};

#ifdef PARITY_HAS_CUDA
// The catalogue key for the runtime's device name ("NVIDIA H200" -> alias nvidia_h200 -> "h200");
// the normalised runtime name when the catalogue does not know the device.
std::string catalogue_device_name(const std::string& runtime_name) {
  auto spec = hw::find_hardware(runtime_name);
  return spec.is_ok() ? spec->name : hw::normalize_hardware_name(runtime_name);
}

double clock_or_zero(int mhz) { return mhz > 0 ? static_cast<double>(mhz) : 0.0; }

Status run_probe_on_device(const ProbeArgs& args, std::int64_t copy_total_bytes,
                           const bench::TimingOptions& options) {
  ProcessArgs process_args;
  const nlohmann::json provenance = bench::provenance_json(process_args.argc(), process_args.argv(), 0);
  PARITY_ASSIGN_OR_RETURN(const gpu::DeviceProperties props, gpu::device_properties(0));
  PARITY_ASSIGN_OR_RETURN(const bench::DeviceClocks clocks_before, bench::read_device_clocks());

  PARITY_ASSIGN_OR_RETURN(const bench::HbmMeasurement hbm, bench::measure_hbm_copy(copy_total_bytes, options));
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
    nlohmann::json row = bench::sample_stats_json(timing->stats);
    row["m"] = shape.m;
    row["n"] = shape.n;
    row["k"] = shape.k;
    row["dtype"] = "bf16";
    row["median_tflops"] = timing->median_tflops;
    row["configuration"] = timing->configuration;
    row["max_relative_error"] = timing->max_relative_error;
    gemm_rows.push_back(row);
    std::printf("bf16 GEMM %-18s median %.4f ms  %7.1f TFLOP/s  (%s; check max rel err %.2e)\n", label.c_str(),
                timing->stats.median_ms, timing->median_tflops, timing->configuration.c_str(),
                timing->max_relative_error);
    if (timing->median_tflops > best_tflops) {
      best_tflops = timing->median_tflops;
      best_shape = label;
    }
  }
  PARITY_ASSIGN_OR_RETURN(const bench::DeviceClocks clocks_after, bench::read_device_clocks());

  hw::Calibration calibration;
  calibration.device_name = catalogue_device_name(props.name);
  const std::filesystem::path out_path =
      args.out.empty() ? hw::resolve_data_dir(std::nullopt) / "calibration" / (calibration.device_name + ".json")
                       : std::filesystem::path(args.out);
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

  std::printf("device: %s (%s), %d SMs, L2 %.1f MiB\n", props.name.c_str(), calibration.device_name.c_str(),
              props.sm_count, static_cast<double>(props.l2_bytes) / (1 << 20));
  std::printf("copy bandwidth (read + written, %.2f GB per copy): kernel %.3f TB/s, cudaMemcpyAsync %.3f TB/s, "
              "ceiling %.3f TB/s\n",
              static_cast<double>(hbm.total_bytes) / 1e9, hbm.kernel.median_tbps, hbm.runtime_copy.median_tbps,
              hbm.ceiling().median_tbps);
  std::printf("bf16 GEMM ceiling: %.1f TFLOP/s (%s, cuBLASLt heuristic, median)\n", best_tflops, best_shape.c_str());
  std::printf("clocks: SM %d -> %d MHz (max %d), memory %d -> %d MHz (%s)\n", clocks_before.sm_clock_mhz,
              clocks_after.sm_clock_mhz, clocks_after.max_sm_clock_mhz, clocks_before.memory_clock_mhz,
              clocks_after.memory_clock_mhz, clocks_after.source.c_str());
  std::printf("wrote %s\n", out_path.string().c_str());

  if (!args.results.empty()) {
    nlohmann::json document = bench::results_document("hw_probe", provenance);
    document["copy"] = bench::hbm_measurement_json(hbm);
    document["gemm_bf16"] = gemm_rows;
    document["gemm_bf16_best"] = {{"shape", best_shape}, {"median_tflops", best_tflops}};
    document["calibration"] = hw::calibration_to_json(calibration);
    document["calibration_path"] = out_path.string();
    return finish_results_document(document, clocks_before, clocks_after, args.results);
  }
  return Status::ok();
}
#endif

Status run_probe(const ProbeArgs& args) {
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const std::int64_t copy_total_bytes, copy_bytes_from_flag("hw probe", args.bytes_text));
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const bench::TimingOptions options,
                          timing_options_from_flags("hw probe", args.warmup, args.reps));
  PARITY_RETURN_IF_ERROR(require_cuda_device("hw probe"));
#ifdef PARITY_HAS_CUDA
  return run_probe_on_device(args, copy_total_bytes, options);
#else
  return internal_error("hw probe: unreachable without CUDA");
#endif
}

}  // namespace

void add_probe_command(CLI::App& hw, Outcome& outcome) {
  auto args = std::make_shared<ProbeArgs>();
  auto* probe = hw.add_subcommand("probe", "Measure this GPU's ceilings and write its calibration file");
  probe->add_option("--out", args->out, "calibration file (default: <data dir>/calibration/<device>.json)");
  probe->add_option("--results", args->results, "also write a results JSON with provenance to FILE");
  probe->add_option("--bytes", args->bytes_text, "copy size, bytes read + written (e.g. 4GiB)")
      ->capture_default_str();
  probe->add_option("--warmup", args->warmup, "untimed iterations before each timing")->capture_default_str();
  probe->add_option("--reps", args->reps, "timed repetitions per measurement")->capture_default_str();
  probe->callback([args, &outcome] { outcome.status = run_probe(*args); });
}

}  // namespace parity::cli
