// Planner validation against the trainer (include/parity/plan/validate.hpp).
#include "parity/plan/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/results_json.hpp"
#include "parity/core/parse.hpp"
#include "parity/hw/catalogue.hpp"
#include "parity/model/spec.hpp"
#include "parity/plan/cost_model.hpp"
#include "parity/train/step_bench.hpp"

namespace parity::plan {
namespace {

double relative(double predicted, double measured) {
  return measured > 0.0 ? (predicted - measured) / measured : 0.0;
}

std::int64_t lookups_per_step(const model::ModelSpec& spec, std::int64_t batch) {
  std::int64_t ids = 0;
  for (const auto& feature : spec.embedding.features) ids += feature.ids_per_sample;
  return ids * batch;
}

// The planner's single-GPU prediction: every table whole on rank 0, as the trainer holds them.
Status predict_row(const ValidationConfig& config, const model::ModelSpec& spec,
                   const ValidationOptions& options, ValidationRow& row) {
  PARITY_ASSIGN_OR_RETURN(const PlannerModel model, planner_model_from_spec(spec));
  PARITY_ASSIGN_OR_RETURN(const hw::HardwareSpec gpu, hw::find_hardware(options.hardware, options.data_dir));
  PARITY_ASSIGN_OR_RETURN(const Machine machine, make_machine(gpu, 1, 1));
  PARITY_ASSIGN_OR_RETURN(const PlannerCalibration calibration, load_planner_calibration(gpu, options.data_dir));
  PARITY_ASSIGN_OR_RETURN(GemmPricer pricer, GemmPricer::create(gpu, options.data_dir));
  Plan plan;
  plan.config = {config.batch, config.batch, config.checkpointing, config.precision};
  for (const PlannerTable& table : model.tables) {
    plan.tables.push_back({table.name, ShardingType::kTableWise, {{0, 0, table.rows, 0, table.dim}}});
  }
  PARITY_ASSIGN_OR_RETURN(const ConfigCosts costs,
                          config_costs(machine, model, calibration, pricer, plan.config));
  PARITY_ASSIGN_OR_RETURN(plan.prediction,
                          predict(machine, model, calibration, costs, plan.tables));
  const MemoryBreakdown& memory = plan.prediction.memory_per_rank.at(0);
  row.predicted_step_ms = plan.prediction.step_us * 1e-3;
  const TimeBreakdown& step = plan.prediction.step;
  // The trainer's phases: the loss runs inside its "gemms" phase (after the top MLP's forward).
  row.predicted_phase_ms[0] = (step.tbe_forward_us + step.tbe_backward_us) * 1e-3;
  row.predicted_phase_ms[1] = (costs.mlp_us + costs.loss_us) * 1e-3;
  row.predicted_phase_ms[2] = costs.interaction_us * 1e-3;
  row.predicted_phase_ms[3] = (step.optimizer_us + step.overhead_us) * 1e-3;
  row.predicted_buffer_bytes =
      memory.total() - memory.workspaces - memory.runtime_reserve - memory.allocator_reserve;
  row.predicted_peak_bytes =
      options.device == DeviceKind::kGpu ? plan.prediction.peak_memory_bytes : row.predicted_buffer_bytes;
  return Status::ok();
}

void measure_row(const model::ModelSpec& spec, const ValidationOptions& options, ValidationRow& row) {
  train::StepBenchOptions bench;
  bench.device = options.device;
  bench.batch_size = row.config.batch;
  bench.warmup_steps = options.warmup_steps;
  bench.timed_steps = options.timed_steps;
  bench.breakdown_steps = 2;  // samples the memory in use inside the steps too
  bench.seed = options.seed;
  const auto report = train::benchmark_training_step(spec, bench);
  if (!report.is_ok()) {
    row.error = report.status().to_string();
    return;
  }
  row.is_measured = true;
  row.measured_step_ms = report->median_step_ms;
  row.measured_buffer_bytes = static_cast<double>(report->model_buffer_bytes);
  for (const auto& phase : report->breakdown) {
    for (int p = 0; p < ValidationRow::kPhases; ++p) {
      if (phase.name == ValidationRow::kPhaseNames[p]) row.measured_phase_ms[p] += phase.median_ms;
    }
  }
  row.measured_peak_bytes = options.device == DeviceKind::kGpu
                                ? static_cast<double>(report->peak_device_bytes_in_use)
                                : row.measured_buffer_bytes;
}

}  // namespace

std::string ValidationConfig::label() const {
  return model + " " + std::to_string(batch) + " " + std::string(precision_name(precision)) + " " +
         std::string(checkpointing_name(checkpointing)) +
         (optimizer.empty() ? "" : " " + optimizer);
}

Status apply_validation_optimizer(const ValidationConfig& config, model::ModelSpec& spec) {
  if (config.optimizer.empty()) return Status::ok();
  PARITY_CHECK_ARG(
      config.optimizer == "sgd" || config.optimizer == "adagrad" || config.optimizer == "adam",
      "optimizer: '", config.optimizer, "' is not one of sgd, adagrad, adam");
  PARITY_ASSIGN_OR_RETURN(spec.dense_optimizer.kind,
                          model::parse_dense_optimizer_kind(config.optimizer));
  PARITY_ASSIGN_OR_RETURN(
      spec.embedding.optimizer.kind,
      embedding::parse_optimizer_kind(config.optimizer == "adagrad" ? "rowwise_adagrad"
                                                                    : config.optimizer));
  return Status::ok();
}

double ValidationRow::step_error() const { return relative(predicted_step_ms, measured_step_ms); }
double ValidationRow::memory_error() const { return relative(predicted_peak_bytes, measured_peak_bytes); }
double ValidationRow::buffer_error() const { return relative(predicted_buffer_bytes, measured_buffer_bytes); }

std::vector<ValidationConfig> default_validation_configs(DeviceKind device) {
  using P = Precision;
  using C = Checkpointing;
  if (device != DeviceKind::kGpu) {
    // The CPU trainer runs fp32/TF32 (bf16 is GPU only); tiny trains a step in milliseconds.
    return {{"tiny", 256, P::kFp32, C::kNone, {}},
            {"tiny", 1024, P::kFp32, C::kNone, {}},
            {"tiny", 4096, P::kFp32, C::kNone, {}},
            {"tiny", 4096, P::kFp32, C::kFull, {}},
            {"tiny", 8192, P::kTf32, C::kNone, {}}};
  }
  return {{"dlrm-kaggle", 16384, P::kBf16, C::kNone, {}},
          {"dlrm-kaggle", 65536, P::kBf16, C::kNone, {}},
          {"dlrm-kaggle", 65536, P::kBf16, C::kFull, {}},
          {"dlrm-kaggle", 131072, P::kBf16, C::kNone, {}},
          {"dlrm-kaggle", 65536, P::kTf32, C::kNone, {}},
          {"dlrm-kaggle", 65536, P::kFp32, C::kNone, {}},
          {"dlrm-v2", 16384, P::kBf16, C::kNone, {}},
          {"dlrm-v2", 65536, P::kBf16, C::kNone, {}},
          {"dlrm-v2", 65536, P::kBf16, C::kFull, {}},
          {"dlrm-v2", 65536, P::kTf32, C::kNone, {}},
          {"dlrm-v2", 16384, P::kFp32, C::kNone, {}}};
}

namespace {

Result<ValidationConfig> parse_validation_config(const std::string& item) {
  std::vector<std::string> parts;
  std::stringstream fields(item);
  for (std::string part; std::getline(fields, part, ':');) parts.push_back(part);
  PARITY_CHECK_ARG(parts.size() == 4 || parts.size() == 5, "--configs: '", item,
                   "' is not MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER] (e.g. "
                   "dlrm-kaggle:65536:bf16:none)");
  ValidationConfig config;
  config.model = parts[0];
  PARITY_ASSIGN_OR_RETURN(config.batch, parse_int64(parts[1], "--configs batch", 1));
  PARITY_ASSIGN_OR_RETURN(config.precision, parse_precision(parts[2]));
  PARITY_ASSIGN_OR_RETURN(config.checkpointing, parse_checkpointing(parts[3]));
  if (parts.size() == 5) {
    config.optimizer = parts[4];
    model::ModelSpec probe;
    PARITY_RETURN_IF_ERROR(apply_validation_optimizer(config, probe));
  }
  return config;
}

}  // namespace

Result<std::vector<ValidationConfig>> parse_validation_configs(std::string_view text) {
  std::vector<ValidationConfig> configs;
  std::stringstream stream{std::string(text)};
  for (std::string item; std::getline(stream, item, ',');) {
    PARITY_ASSIGN_OR_RETURN(ValidationConfig config, parse_validation_config(item));
    configs.push_back(std::move(config));
  }
  PARITY_CHECK_ARG(!configs.empty(), "--configs: empty; give at least one MODEL:BATCH:PRECISION:CHECKPOINTING");
  return configs;
}

Result<std::vector<ValidationConfig>> read_validation_configs_file(
    const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) return io_error("--configs-file: cannot read '", path.string(), "'");
  std::vector<ValidationConfig> configs;
  int line_number = 0;
  for (std::string line; std::getline(file, line);) {
    ++line_number;
    line = line.substr(0, line.find('#'));
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    auto config = parse_validation_config(line);
    if (!config.is_ok()) {
      return invalid_argument(path.string(), ":", line_number, ": ", config.status().message());
    }
    configs.push_back(std::move(config).value());
  }
  PARITY_CHECK_ARG(!configs.empty(), "--configs-file: '", path.string(),
                   "' lists no configuration");
  return configs;
}

Result<std::vector<ValidationConfig>> validation_configs(DeviceKind device, const std::string& configs_text,
                                                         const std::string& configs_file) {
  PARITY_CHECK_ARG(configs_text.empty() || configs_file.empty(), "--configs and --configs-file: give one of the two");
  if (!configs_text.empty()) return parse_validation_configs(configs_text);
  if (!configs_file.empty()) return read_validation_configs_file(configs_file);
  return default_validation_configs(device);
}

Status ValidationOptions::validate() const {
  PARITY_CHECK_ARG(warmup_steps >= 0 && warmup_steps <= 1000, "--warmup: ", warmup_steps, " is out of range [0, 1000]");
  PARITY_CHECK_ARG(timed_steps >= 1 && timed_steps <= 10000, "--steps: ", timed_steps, " is out of range [1, 10000]");
  return Status::ok();
}

double kendall_tau(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  if (n < 2) return 0.0;
  double score = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const double product = (a[i] - a[j]) * (b[i] - b[j]);
      score += product > 0 ? 1.0 : (product < 0 ? -1.0 : 0.0);
    }
  }
  return score / (static_cast<double>(n) * static_cast<double>(n - 1) / 2.0);
}

Result<ValidationReport> validate_plans(const std::vector<ValidationConfig>& configs,
                                        const ValidationOptions& options) {
  PARITY_RETURN_IF_ERROR(options.validate());
  PARITY_CHECK_ARG(!configs.empty(), "plan validate: no configurations");
  // Specs first (bad input fails before anything runs), with the precision and checkpointing.
  struct Pending {
    ValidationConfig config;
    model::ModelSpec spec;
    std::int64_t lookups = 0;
  };
  std::vector<Pending> pending;
  for (const ValidationConfig& config : configs) {
    PARITY_ASSIGN_OR_RETURN(model::ModelSpec spec, model::load_spec(config.model));
    apply_precision_and_checkpointing(config.precision, config.checkpointing, spec);
    PARITY_RETURN_IF_ERROR(apply_validation_optimizer(config, spec));
    PARITY_RETURN_IF_ERROR(spec.validate());
    pending.push_back({config, spec, lookups_per_step(spec, config.batch)});
  }
  // The GPU ops keep their largest workspace (the TBE backward's grows with the lookups), so run
  // in ascending lookups per step: each configuration's memory then holds its own workspace.
  std::stable_sort(pending.begin(), pending.end(),
                   [](const Pending& x, const Pending& y) { return x.lookups < y.lookups; });
  ValidationReport report;
  report.device = std::string(device_kind_name(options.device));
  report.hardware = options.hardware;
  std::vector<double> predicted, measured;
  for (const Pending& item : pending) {
    ValidationRow row;
    row.config = item.config;
    PARITY_RETURN_IF_ERROR(predict_row(item.config, item.spec, options, row));
    if (options.predict_only) {
      row.error = "predicted only";
    } else {
      measure_row(item.spec, options, row);
    }
    if (row.is_measured) {
      ++report.measured;
      predicted.push_back(row.predicted_step_ms);
      measured.push_back(row.measured_step_ms);
      report.max_abs_step_error = std::max(report.max_abs_step_error, std::abs(row.step_error()));
      report.max_abs_memory_error = std::max(report.max_abs_memory_error, std::abs(row.memory_error()));
      report.step_within_tolerance +=
          std::abs(row.step_error()) <= ValidationReport::kStepTolerance ? 1 : 0;
      report.memory_within_tolerance +=
          std::abs(row.memory_error()) <= ValidationReport::kMemoryTolerance ? 1 : 0;
    }
    report.rows.push_back(std::move(row));
  }
  report.kendall_tau_step = kendall_tau(predicted, measured);
  return report;
}

std::string validation_report_text(const ValidationReport& report) {
  std::ostringstream out;
  char line[256];
  out << "plan validate: planner (MODELLED for " << report.hardware << ") vs trainer (MEASURED on the "
      << report.device << ")\n";
  if (report.device != "gpu") {
    out << "CPU run: the predictions are for the " << report.hardware
        << "; the CPU step times and buffers exercise the pipeline, they do not validate the GPU model\n";
  }
  std::snprintf(line, sizeof(line), "%-36s %10s %10s %7s  %9s %9s %7s  %9s %9s %7s\n",
                "configuration", "pred ms", "meas ms", "err", "pred GB", "peak GB", "err",
                "pred buf", "meas buf", "err");
  out << line;
  for (const ValidationRow& row : report.rows) {
    if (!row.is_measured) {
      std::snprintf(line, sizeof(line),
                    "%-36s %10.3f %10s  %9s %9.3f  (not measured: ", row.config.label().c_str(),
                    row.predicted_step_ms, "-", "", row.predicted_peak_bytes / 1e9);
      out << line << row.error << "; predicted ms";
      for (int p = 0; p < ValidationRow::kPhases; ++p) {
        std::snprintf(line, sizeof(line), " %s %.3f", ValidationRow::kPhaseNames[p],
                      row.predicted_phase_ms[p]);
        out << line;
      }
      out << ")\n";
      continue;
    }
    std::snprintf(line, sizeof(line),
                  "%-36s %10.3f %10.3f %+6.1f%%  %9.3f %9.3f %+6.1f%%  %9.3f %9.3f %+6.1f%%\n",
                  row.config.label().c_str(), row.predicted_step_ms, row.measured_step_ms,
                  100 * row.step_error(), row.predicted_peak_bytes / 1e9,
                  row.measured_peak_bytes / 1e9, 100 * row.memory_error(),
                  row.predicted_buffer_bytes / 1e9, row.measured_buffer_bytes / 1e9,
                  100 * row.buffer_error());
    out << line;
  }
  std::snprintf(line, sizeof(line),
                "%d of %zu measured; max |step error| %.1f%%, max |peak memory error| %.1f%%, Kendall tau "
                "(step time order) %.3f\n",
                report.measured, report.rows.size(), 100 * report.max_abs_step_error,
                100 * report.max_abs_memory_error, report.kendall_tau_step);
  out << line;
  std::snprintf(line, sizeof(line),
                "summary: step time within 10%% on %d of %d, peak memory within 5%% on %d of %d, "
                "Kendall tau %.3f "
                "(targets: >= 8 configurations, tau >= 0.8)\n",
                report.step_within_tolerance, report.measured, report.memory_within_tolerance,
                report.measured, report.kendall_tau_step);
  out << line << "targets (H200): step time within 10%, peak memory within 5%, Kendall tau >= 0.8\n"
      << "\nwhere the step goes, predicted / measured ms (instrumented steps):\n";
  for (const ValidationRow& row : report.rows) {
    if (!row.is_measured) continue;
    out << "  " << row.config.label() << ":";
    for (int p = 0; p < ValidationRow::kPhases; ++p) {
      std::snprintf(line, sizeof(line), " %s %.3f / %.3f", ValidationRow::kPhaseNames[p], row.predicted_phase_ms[p],
                    row.measured_phase_ms[p]);
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

Status write_validation_json(const ValidationReport& report, const std::string& path) {
  nlohmann::json document = bench::results_document("plan_validate", bench::provenance_json(1));
  document["device"] = report.device;
  document["predicted_for"] = report.hardware;
  document["method"] = {{"predicted", "parity plan's single-GPU prediction, every table table-wise on rank 0"},
                        {"measured", "train::benchmark_training_step (parity bench train): median step with the "
                                     "batch resident; peak device memory in use (cudaMemGetInfo) at phase "
                                     "boundaries and after the steps"},
                        {"order", "ascending lookups per step (GPU workspaces only grow)"}};
  nlohmann::json rows = nlohmann::json::array();
  for (const ValidationRow& row : report.rows) {
    nlohmann::json entry = {
        {"model", row.config.model},
        {"batch", row.config.batch},
        {"precision", std::string(precision_name(row.config.precision))},
        {"checkpointing", std::string(checkpointing_name(row.config.checkpointing))},
        {"optimizer", row.config.optimizer.empty() ? "spec" : row.config.optimizer},
        {"measured", row.is_measured},
        {"predicted_step_ms", row.predicted_step_ms},
        {"predicted_peak_bytes", row.predicted_peak_bytes},
        {"predicted_buffer_bytes", row.predicted_buffer_bytes}};
    if (row.is_measured) {
      entry["measured_step_ms"] = row.measured_step_ms;
      entry["measured_peak_bytes"] = row.measured_peak_bytes;
      entry["measured_buffer_bytes"] = row.measured_buffer_bytes;
      entry["step_error"] = row.step_error();
      entry["peak_memory_error"] = row.memory_error();
      entry["buffer_error"] = row.buffer_error();
      for (int p = 0; p < ValidationRow::kPhases; ++p) {
        entry["phases_ms"][ValidationRow::kPhaseNames[p]] = {{"predicted", row.predicted_phase_ms[p]},
                                                             {"measured", row.measured_phase_ms[p]}};
      }
    } else {
      entry["error"] = row.error;
    }
    rows.push_back(std::move(entry));
  }
  document["rows"] = std::move(rows);
  document["kendall_tau_step"] = report.kendall_tau_step;
  document["max_abs_step_error"] = report.max_abs_step_error;
  document["max_abs_peak_memory_error"] = report.max_abs_memory_error;
  document["step_within_10pct"] = report.step_within_tolerance;
  document["peak_memory_within_5pct"] = report.memory_within_tolerance;
  document["measured_rows"] = report.measured;
  return bench::write_json_file(path, document);
}

Result<ValidationRequest> validation_request_from_settings(const ValidationSettings& settings) {
  ValidationRequest request;
  request.options = settings.options;
  PARITY_ASSIGN_OR_RETURN(request.options.device, parse_device_kind(settings.device));
  if (!settings.data_dir.empty()) request.options.data_dir = std::filesystem::path(settings.data_dir);
  PARITY_RETURN_IF_ERROR(request.options.validate());
  PARITY_ASSIGN_OR_RETURN(request.configs,
                          validation_configs(request.options.device, settings.configs, settings.configs_file));
  return request;
}

}  // namespace parity::plan
