// Training-step throughput (include/parity/train/step_bench.hpp).
#include "parity/train/step_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bench/results_json.hpp"
#include "core/device_hooks.hpp"
#include "nn/gemm_cache.hpp"
#include "parity/core/rng.hpp"
#include "parity/train/report_text.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train {
namespace {

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

// The instrumented pass's observer: a timestamp at every phase boundary (a device event on the
// GPU, the host clock on the CPU, whose ops run synchronously), phase durations summed per step,
// and the device memory in use sampled after each step.
class PhaseTimer final : public detail::StepPhaseObserver {
 public:
  explicit PhaseTimer(const parity::detail::DeviceHooks* gpu_hooks) : hooks_(gpu_hooks) {}
  PhaseTimer(const PhaseTimer&) = delete;
  PhaseTimer& operator=(const PhaseTimer&) = delete;
  ~PhaseTimer() override {
    for (void* event : events_) hooks_->event_destroy(event);
  }

  Status enter(detail::StepPhase phase) override {
    phases_.push_back(static_cast<int>(phase));
    return stamp();
  }
  // Ends the step: adds each phase's time to `phase_ms` (kStepPhaseCount entries) and resets.
  Status finish_step(std::vector<double>* phase_ms) {
    PARITY_RETURN_IF_ERROR(stamp());
    phase_ms->assign(detail::kStepPhaseCount, 0.0);
    for (std::size_t i = 0; i < phases_.size(); ++i) {
      double elapsed_ms = host_ms_[i + 1] - host_ms_[i];
      if (hooks_ != nullptr) {
        PARITY_ASSIGN_OR_RETURN(elapsed_ms, hooks_->event_elapsed_ms(events_[i], events_[i + 1]));
      }
      (*phase_ms)[static_cast<std::size_t>(phases_[i])] += elapsed_ms;
    }
    phases_.clear();
    host_ms_.clear();
    used_ = 0;
    // Once per step, after it (cudaMemGetInfo between phases could stall the queue the events time);
    // the ops allocate their scratch in the first steps and never free it, so this is the peak.
    if (hooks_ != nullptr) {
      PARITY_ASSIGN_OR_RETURN(const std::int64_t in_use, hooks_->memory_in_use());
      peak_bytes_in_use_ = std::max(peak_bytes_in_use_, in_use);
    }
    return Status::ok();
  }
  std::int64_t peak_bytes_in_use() const { return peak_bytes_in_use_; }

 private:
  Status stamp() {
    if (hooks_ == nullptr) {
      host_ms_.push_back(now_ms());
      return Status::ok();
    }
    host_ms_.push_back(0.0);
    if (used_ == events_.size()) {
      PARITY_ASSIGN_OR_RETURN(void* event, hooks_->event_create());
      events_.push_back(event);
    }
    return hooks_->event_record(events_[used_++], nullptr);
  }

  const parity::detail::DeviceHooks* hooks_;  // null on the CPU
  std::vector<void*> events_;                 // reused step after step
  std::size_t used_ = 0;
  std::vector<int> phases_;
  std::vector<double> host_ms_;
  std::int64_t peak_bytes_in_use_ = 0;
};

// The instrumented steps: medians per phase into the report.
Status measure_breakdown(detail::DlrmModel& model, const data::Batch& batch, const StepBenchOptions& options,
                         std::int64_t* step_counter, StepBenchReport* report) {
  if (options.breakdown_steps == 0) return Status::ok();
  const auto* hooks = options.device == DeviceKind::kGpu ? parity::detail::device_hooks() : nullptr;
  if (options.device == DeviceKind::kGpu && hooks == nullptr) return unsupported("bench train: no GPU backend");
  PhaseTimer timer(hooks);
  model.set_phase_observer(&timer);
  std::vector<std::vector<double>> per_phase(detail::kStepPhaseCount);
  std::vector<double> totals;
  Status status = Status::ok();
  for (int i = 0; i < options.breakdown_steps && status.is_ok(); ++i) {
    const auto loss = model.train_step_staged(batch.batch_size, (*step_counter)++);
    std::vector<double> phase_ms;
    status = loss.is_ok() ? timer.finish_step(&phase_ms) : loss.status();
    if (!status.is_ok()) break;
    double total = 0.0;
    for (int p = 0; p < detail::kStepPhaseCount; ++p) {
      per_phase[static_cast<std::size_t>(p)].push_back(phase_ms[static_cast<std::size_t>(p)]);
      total += phase_ms[static_cast<std::size_t>(p)];
    }
    totals.push_back(total);
  }
  model.set_phase_observer(nullptr);
  PARITY_RETURN_IF_ERROR(status);
  for (int p = 0; p < detail::kStepPhaseCount; ++p) {
    report->breakdown.push_back({detail::step_phase_name(static_cast<detail::StepPhase>(p)),
                                 median(per_phase[static_cast<std::size_t>(p)])});
  }
  report->breakdown_step_ms = median(totals);
  report->peak_device_bytes_in_use = std::max(report->peak_device_bytes_in_use, timer.peak_bytes_in_use());
  return Status::ok();
}

}  // namespace

data::Batch synthetic_step_batch(const model::ModelSpec& spec, const StepBenchOptions& options) {
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

Status StepBenchOptions::validate() const {
  PARITY_CHECK_ARG(batch_size >= 1 && batch_size <= (std::int64_t{1} << 24), "batch: ", batch_size,
                   " is out of range [1, 2^24]");
  PARITY_CHECK_ARG(warmup_steps >= 0 && warmup_steps <= 10000, "warmup: ", warmup_steps, " is out of range [0, 10000]");
  PARITY_CHECK_ARG(timed_steps >= 1 && timed_steps <= 100000, "steps: ", timed_steps, " is out of range [1, 100000]");
  PARITY_CHECK_ARG(std::isfinite(zipf_alpha) && zipf_alpha >= 0, "zipf: ", zipf_alpha, " must be finite and >= 0");
  PARITY_CHECK_ARG(breakdown_steps >= 0 && breakdown_steps <= 100000, "breakdown-steps: ", breakdown_steps,
                   " is out of range [0, 100000]");
  return Status::ok();
}

Result<StepBenchReport> benchmark_training_step(const model::ModelSpec& spec, const StepBenchOptions& options) {
  PARITY_RETURN_IF_ERROR(options.validate());
  PARITY_RETURN_IF_ERROR(spec.validate());
  ExecutionContext context;
  context.device = options.device;
  context.gemm_choice = options.gemm_choice;
  PARITY_ASSIGN_OR_RETURN(auto model, detail::DlrmModel::create(spec, options.batch_size, context));
  PARITY_RETURN_IF_ERROR(model.set_fused_drelu(options.fused_drelu));
  PARITY_RETURN_IF_ERROR(model.initialize(options.seed));
  const data::Batch batch = synthetic_step_batch(spec, options);
  PARITY_RETURN_IF_ERROR(model.stage_inputs(batch));
  StepBenchReport report;
  report.model = spec.name;
  report.precision = std::string(model::dense_precision_name(spec.precision));
  report.device = std::string(device_kind_name(options.device));
  report.batch_size = options.batch_size;
  report.dense_parameters = model.dense_parameter_count();
  report.model_buffer_bytes = model.buffer_bytes();
  std::int64_t step = 0;
  double loss = 0.0;
  // The first step also creates every GEMM plan (selection, and measuring with kMeasured).
  std::vector<double> first_step_ms;
  PARITY_RETURN_IF_ERROR(time_steps(model, batch, 1, false, &step, &first_step_ms, &loss));
  report.first_step_ms = first_step_ms.front();
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
    report.peak_device_bytes_in_use = report.peak_device_bytes;
  }
  // After the timed steps, so instrumentation never touches the headline figures.
  PARITY_RETURN_IF_ERROR(measure_breakdown(model, batch, options, &step, &report));
  report.gemm_plans = nn::detail::gemm_cache().plan_descriptions();
  return report;
}

Status write_step_bench_json(const StepBenchReport& report, const StepBenchOptions& options, const std::string& path) {
  nlohmann::json document = bench::results_document("train_step", bench::provenance_json(options.seed));
  document["method"] = {{"batch_resident", "one synthetic batch staged once; each step timed to completion"},
                        {"staged", "the same batch copied from the host before every step"},
                        {"warmup_steps", options.warmup_steps},
                        {"timed_steps", options.timed_steps},
                        {"zipf_alpha", options.zipf_alpha},
                        {"fused_drelu", options.fused_drelu},
                        {"gemm_choice", std::string(gemm_choice_name(options.gemm_choice))}};
  document["model"] = report.model;
  document["precision"] = report.precision;
  document["device"] = report.device;
  document["batch_size"] = report.batch_size;
  document["dense_parameters"] = report.dense_parameters;
  document["step_ms"] = report.step_ms;
  document["median_step_ms"] = report.median_step_ms;
  document["first_step_ms"] = report.first_step_ms;
  document["gemm_plans"] = report.gemm_plans;
  document["samples_per_second"] = report.samples_per_second;
  document["staged_step_ms"] = report.staged_step_ms;
  document["median_staged_step_ms"] = report.median_staged_step_ms;
  document["staged_samples_per_second"] = report.staged_samples_per_second;
  document["first_loss"] = report.first_loss;
  document["last_loss"] = report.last_loss;
  document["device_bytes_in_use"] = report.peak_device_bytes;
  document["peak_device_bytes_in_use"] = report.peak_device_bytes_in_use;
  document["model_buffer_bytes"] = report.model_buffer_bytes;
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& phase : report.breakdown) phases[phase.name] = phase.median_ms;
  document["breakdown"] = {{"method", "separate instrumented steps after the timed ones; device events at phase "
                                      "boundaries (host clock on the CPU); medians per phase"},
                           {"steps", options.breakdown_steps},
                           {"phase_ms", phases},
                           {"step_ms", report.breakdown_step_ms}};
  return bench::write_json_file(path, document);
}

Status run_step_bench(const model::ModelSpec& spec, const StepBenchOptions& options, const std::string& out,
                      const std::function<void(const std::string&)>& print) {
  PARITY_ASSIGN_OR_RETURN(const StepBenchReport report, benchmark_training_step(spec, options));
  print(step_bench_text(report, options));
  if (out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(write_step_bench_json(report, options, out));
  print("wrote " + out + "\n");
  return Status::ok();
}

}  // namespace parity::train
