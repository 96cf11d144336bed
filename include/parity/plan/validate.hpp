// Planner validation: single-GPU configurations (preset x batch x precision x checkpointing),
// each predicted by the planner for a catalogue GPU and measured through the trainer's step
// benchmark (train/step_bench.hpp, the library behind `parity bench train`): predicted vs measured
// step time and peak memory, their errors, and Kendall's tau of the step-time order. The one
// planner file that runs the trainer; everything else in plan/ is a pure function.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/op.hpp"
#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"
#include "parity/plan/inputs.hpp"

namespace parity::plan {

struct ValidationConfig {
  std::string model;  // a preset or a spec path
  std::int64_t batch = 0;
  Precision precision = Precision::kBf16;
  Checkpointing checkpointing = Checkpointing::kNone;
  // Empty: the spec's optimisers. "sgd", "adagrad" (row-wise for the tables) or "adam": the dense
  // optimiser and the tables' alike, as `parity bench train --optimizer`.
  std::string optimizer;
  std::string label() const;  // "dlrm-kaggle 65536 bf16 none" (+ " adam" when set)
};

// GPU: >= 8 configurations over dlrm-kaggle and dlrm-v2, several batches, the three precisions
// and both checkpointing policies (about 4 minutes on an H200). CPU: tiny-sized ones (seconds).
std::vector<ValidationConfig> default_validation_configs(DeviceKind device);
// "MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER][,...]", e.g. "dlrm-kaggle:65536:bf16:none".
Result<std::vector<ValidationConfig>> parse_validation_configs(std::string_view text);
// A validation-set file: one MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER] per line; blank
// lines and '#' comments are skipped; errors name the file and the line.
Result<std::vector<ValidationConfig>> read_validation_configs_file(
    const std::filesystem::path& path);
// The configurations a validation runs: those of `configs_text` (parse_validation_configs) or of
// `configs_file` (read_validation_configs_file), else the device's defaults; both given is an
// error naming --configs and --configs-file.
Result<std::vector<ValidationConfig>> validation_configs(DeviceKind device, const std::string& configs_text,
                                                         const std::string& configs_file);
// Applies config.optimizer (when set) to `spec`; an unknown name is an error naming it.
Status apply_validation_optimizer(const ValidationConfig& config, model::ModelSpec& spec);

struct ValidationOptions {
  DeviceKind device = DeviceKind::kGpu;
  std::string hardware = "h200";  // the catalogue GPU the planner predicts for
  std::optional<std::filesystem::path> data_dir;
  int warmup_steps = 3;
  int timed_steps = 10;
  std::uint64_t seed = 1;
  bool predict_only = false;  // the planner's rows without running the trainer (no device needed)
  Status validate() const;
};

/// `parity plan validate` as a command line or a binding gives it (names and paths as text).
struct ValidationSettings {
  ValidationOptions options;  // hardware, steps, predict-only; device and data_dir from below
  std::string device = "gpu";  // gpu or cpu (parse_device_kind)
  std::string configs;         // empty: the device's defaults (validation_configs)
  std::string configs_file;
  std::string data_dir;  // empty: the default data directory
};
/// What validate_plans takes, checked.
struct ValidationRequest {
  ValidationOptions options;
  std::vector<ValidationConfig> configs;
  /// The trainer runs on a GPU: the caller checks that one is visible first.
  bool needs_gpu() const { return options.device == DeviceKind::kGpu && !options.predict_only; }
};
/// The checked options and configurations (CPU, before any device; errors name the flag).
Result<ValidationRequest> validation_request_from_settings(const ValidationSettings& settings);

struct ValidationRow {
  ValidationConfig config;
  bool is_measured = false;  // false: the trainer failed (error says why)
  std::string error;
  double predicted_step_ms = 0, measured_step_ms = 0;
  // Peak memory: the planner's rank total vs the device memory in use at its highest (every
  // allocation of the process: context, libraries, buffers, workspaces). On the CPU: the model's
  // buffers (no runtime or workspace there).
  double predicted_peak_bytes = 0, measured_peak_bytes = 0;
  // The trainer's own buffers: the planner's breakdown without workspaces and reserves vs
  // DlrmModel's allocations.
  double predicted_buffer_bytes = 0, measured_buffer_bytes = 0;
  // Where the step goes, predicted vs measured (the step benchmark's instrumented steps, its
  // phase names): embeddings (TBE forward + backward with the fused update), gemms (the MLPs'
  // GEMMs and element-wise passes, the loss), interaction (dot kernels or the cross network),
  // each with its recompute under checkpointing; other (dense optimiser, host overhead).
  static constexpr int kPhases = 4;
  static constexpr const char* kPhaseNames[kPhases] = {"embeddings", "gemms", "interaction",
                                                       "other"};
  double predicted_phase_ms[kPhases] = {0, 0, 0, 0};
  double measured_phase_ms[kPhases] = {0, 0, 0, 0};
  double step_error() const;    // (predicted - measured) / measured
  double memory_error() const;  // of the peak
  double buffer_error() const;
};

struct ValidationReport {
  std::string device;    // "gpu" or "cpu"
  std::string hardware;  // the catalogue GPU predicted for
  std::vector<ValidationRow> rows;  // in the order they ran (ascending lookups per step)
  double kendall_tau_step = 0;      // over the measured rows
  double max_abs_step_error = 0;
  double max_abs_memory_error = 0;
  int measured = 0;
  // Issue 16's targets: step time within 10%, peak memory within 5% of measured.
  static constexpr double kStepTolerance = 0.10, kMemoryTolerance = 0.05;
  int step_within_tolerance = 0;
  int memory_within_tolerance = 0;
};

// Plans and measures every configuration. A configuration the trainer cannot run is reported in
// its row (the others still run); bad options or an unknown model/GPU are errors.
Result<ValidationReport> validate_plans(const std::vector<ValidationConfig>& configs,
                                        const ValidationOptions& options);

// Kendall's tau-a of two equally long sequences: (concordant - discordant) pairs over all pairs;
// 1 for the same order, -1 for reversed; 0 for fewer than two values.
double kendall_tau(const std::vector<double>& a, const std::vector<double>& b);

std::string validation_report_text(const ValidationReport& report);
// Results JSON (provenance, every row); kIoError naming the path.
Status write_validation_json(const ValidationReport& report, const std::string& path);

}  // namespace parity::plan
