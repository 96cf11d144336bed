// Training-step throughput (include/parity/train/step_bench.hpp).
#include "parity/train/step_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bench/results_json.hpp"
#include "core/device_hooks.hpp"
#include "parity/core/rng.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train {
namespace {

// One batch like the PyTorch baselines draw it: N(0, 1) dense features, ids uniform (or Zipf) per
// table, labels Bernoulli(0.25).
data::Batch synthetic_batch(const model::ModelSpec& spec, const StepBenchOptions& options) {
  Rng rng(options.seed);
  data::Batch batch;
  const std::int64_t rows = options.batch_size;
  batch.batch_size = rows;
  batch.dense.resize(static_cast<std::size_t>(rows * spec.num_dense_features));
  for (auto& v : batch.dense) v = static_cast<float>(rng.normal());
  batch.offsets.push_back(0);
  for (const auto& feature : spec.embedding.features) {
    const std::int64_t table_rows = spec.embedding.tables[static_cast<std::size_t>(feature.table)].num_rows;
    for (std::int64_t b = 0; b < rows; ++b) {
      for (int i = 0; i < feature.ids_per_sample; ++i) {
        batch.indices.push_back(options.zipf_alpha > 0 ? rng.zipf_index(table_rows, options.zipf_alpha)
                                                       : rng.uniform_int(0, table_rows - 1));
      }
      batch.offsets.push_back(static_cast<std::int64_t>(batch.indices.size()));
    }
  }
  batch.labels.resize(static_cast<std::size_t>(rows));
  for (auto& y : batch.labels) y = rng.uniform() < 0.25 ? 1.0f : 0.0f;
  return batch;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs `steps` steps, staging the batch each step when `restage`; every step ends with the device
// idle (the loss is read back), so wall time per step is the step's time.
Status time_steps(detail::DlrmModel& model, const data::Batch& batch, int steps, bool restage,
                  std::int64_t* step_counter, std::vector<double>* times_ms, double* last_loss) {
  for (int i = 0; i < steps; ++i) {
    const double start = now_ms();
    if (restage) PARITY_RETURN_IF_ERROR(model.stage_inputs(batch));
    PARITY_ASSIGN_OR_RETURN(const double loss, model.train_step_staged(batch.batch_size, (*step_counter)++));
    if (const auto* hooks = parity::detail::device_hooks(); hooks != nullptr && batch.batch_size > 0) {
      PARITY_RETURN_IF_ERROR(hooks->synchronize(nullptr));
    }
    if (times_ms != nullptr) times_ms->push_back(now_ms() - start);
    if (!std::isfinite(loss)) return internal_error("bench train: step ", *step_counter - 1, " has loss ", loss);
    *last_loss = loss;
  }
  return Status::ok();
}

}  // namespace

Status StepBenchOptions::validate() const {
  PARITY_CHECK_ARG(batch_size >= 1 && batch_size <= (std::int64_t{1} << 24), "batch: ", batch_size,
                   " is out of range [1, 2^24]");
  PARITY_CHECK_ARG(warmup_steps >= 0 && warmup_steps <= 10000, "warmup: ", warmup_steps, " is out of range [0, 10000]");
  PARITY_CHECK_ARG(timed_steps >= 1 && timed_steps <= 100000, "steps: ", timed_steps, " is out of range [1, 100000]");
  PARITY_CHECK_ARG(std::isfinite(zipf_alpha) && zipf_alpha >= 0, "zipf: ", zipf_alpha, " must be finite and >= 0");
  return Status::ok();
}

Result<StepBenchReport> benchmark_training_step(const model::ModelSpec& spec, const StepBenchOptions& options) {
  PARITY_RETURN_IF_ERROR(options.validate());
  PARITY_RETURN_IF_ERROR(spec.validate());
  ExecutionContext context;
  context.device = options.device;
  PARITY_ASSIGN_OR_RETURN(auto model, detail::DlrmModel::create(spec, options.batch_size, context));
  PARITY_RETURN_IF_ERROR(model.initialize(options.seed));
  const data::Batch batch = synthetic_batch(spec, options);
  PARITY_RETURN_IF_ERROR(model.stage_inputs(batch));
  StepBenchReport report;
  report.model = spec.name;
  report.precision = std::string(model::dense_precision_name(spec.precision));
  report.device = std::string(device_kind_name(options.device));
  report.batch_size = options.batch_size;
  report.dense_parameters = model.dense_parameter_count();
  std::int64_t step = 0;
  double loss = 0.0;
  PARITY_RETURN_IF_ERROR(time_steps(model, batch, 1, false, &step, nullptr, &loss));
  report.first_loss = loss;
  PARITY_RETURN_IF_ERROR(time_steps(model, batch, options.warmup_steps, false, &step, nullptr, &loss));
  PARITY_RETURN_IF_ERROR(time_steps(model, batch, options.timed_steps, false, &step, &report.step_ms, &loss));
  PARITY_RETURN_IF_ERROR(time_steps(model, batch, options.timed_steps, true, &step, &report.staged_step_ms, &loss));
  report.last_loss = loss;
  report.median_step_ms = median(report.step_ms);
  report.samples_per_second = static_cast<double>(options.batch_size) / (report.median_step_ms * 1e-3);
  report.median_staged_step_ms = median(report.staged_step_ms);
  report.staged_samples_per_second = static_cast<double>(options.batch_size) / (report.median_staged_step_ms * 1e-3);
  if (const auto* hooks = parity::detail::device_hooks(); hooks != nullptr && options.device == DeviceKind::kGpu) {
    PARITY_ASSIGN_OR_RETURN(report.peak_device_bytes, hooks->memory_in_use());
  }
  return report;
}

Status write_step_bench_json(const StepBenchReport& report, const StepBenchOptions& options, const std::string& path) {
  nlohmann::json document = bench::results_document("train_step", bench::provenance_json(options.seed));
  document["method"] = {{"batch_resident", "one synthetic batch staged once; each step timed to completion"},
                        {"staged", "the same batch copied from the host before every step"},
                        {"warmup_steps", options.warmup_steps},
                        {"timed_steps", options.timed_steps},
                        {"zipf_alpha", options.zipf_alpha}};
  document["model"] = report.model;
  document["precision"] = report.precision;
  document["device"] = report.device;
  document["batch_size"] = report.batch_size;
  document["dense_parameters"] = report.dense_parameters;
  document["step_ms"] = report.step_ms;
  document["median_step_ms"] = report.median_step_ms;
  document["samples_per_second"] = report.samples_per_second;
  document["staged_step_ms"] = report.staged_step_ms;
  document["median_staged_step_ms"] = report.median_staged_step_ms;
  document["staged_samples_per_second"] = report.staged_samples_per_second;
  document["first_loss"] = report.first_loss;
  document["last_loss"] = report.last_loss;
  document["device_bytes_in_use"] = report.peak_device_bytes;
  return bench::write_json_file(path, document);
}

}  // namespace parity::train
