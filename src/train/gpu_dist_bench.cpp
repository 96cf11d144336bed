// benchmark_distributed_step(): the distributed step's overhead against the single-process step on
// the same batch, timed in alternating rounds (include/parity/train/gpu_dist_trainer.hpp).
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

#include "bench/results_json.hpp"
#include "parity/bench/stats.hpp"
#include "core/device_hooks.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "train/gpu_dist_step.hpp"

namespace parity::train {

namespace {

// `steps` steps on the staged batch, each timed to completion (the device drained).
Status timed_steps(detail::DlrmModel& model, std::int64_t rows, int steps, std::int64_t* step_counter,
                   std::vector<double>* times_ms, double* loss) {
  const auto* hooks = model.context().device == DeviceKind::kGpu ? parity::detail::device_hooks() : nullptr;
  for (int i = 0; i < steps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    PARITY_ASSIGN_OR_RETURN(*loss, model.train_step_staged(rows, (*step_counter)++));
    if (hooks != nullptr) PARITY_RETURN_IF_ERROR(hooks->synchronize(model.context().stream));
    const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - start;
    if (times_ms != nullptr) times_ms->push_back(elapsed.count());
    if (!std::isfinite(*loss)) return internal_error("bench train: step ", *step_counter - 1, " has loss ", *loss);
  }
  return Status::ok();
}

}  // namespace

Result<DistStepBenchReport> benchmark_distributed_step(const model::ModelSpec& spec, const StepBenchOptions& options,
                                                      comm::Communicator& collective, int rounds) {
  PARITY_RETURN_IF_ERROR(options.validate());
  PARITY_RETURN_IF_ERROR(spec.validate());
  PARITY_CHECK_ARG(rounds >= 1 && rounds <= options.timed_steps, "rounds: ", rounds, " is out of range [1, steps=",
                   options.timed_steps, "]");
  const int ranks = collective.size(), rank = collective.rank();
  PARITY_CHECK_ARG(options.batch_size % ranks == 0, "batch: ", options.batch_size, " is not divisible by the ", ranks,
                   " ranks");
  PARITY_CHECK_ARG(collective.buffer_device() == options.device, "comm: the ", collective.backend_name(),
                   " communicator moves ", device_kind_name(collective.buffer_device()), " buffers; the benchmark runs on ",
                   device_kind_name(options.device));
  ExecutionContext context;
  context.device = options.device;
  const std::int64_t local_rows = options.batch_size / ranks;
  PARITY_ASSIGN_OR_RETURN(const TablePlacement placement, greedy_table_placement(spec, ranks));
  const data::Batch batch = synthetic_step_batch(spec, options);  // the global batch, the same on every rank
  PARITY_ASSIGN_OR_RETURN(auto distributed, detail::DlrmModel::create(
                                                detail::dense_only_spec(spec),
                                                local_rows, context));
  PARITY_RETURN_IF_ERROR(distributed.initialize(options.seed));
  PARITY_ASSIGN_OR_RETURN(auto step, detail::ShardedStep::create(spec, placement, local_rows, collective,
                                                                 distributed, options.seed));
  PARITY_RETURN_IF_ERROR(step->stage_global_batch(batch));
  PARITY_RETURN_IF_ERROR(
      distributed.stage_inputs(detail::dense_slice(batch, rank * local_rows, local_rows)));
  // The single-process model only where it is the same computation (one rank).
  Result<detail::DlrmModel> single = unsupported("single-process comparison: one rank only");
  if (ranks == 1) {
    single = detail::DlrmModel::create(spec, options.batch_size, context);
    PARITY_RETURN_IF_ERROR(single.status());
    PARITY_RETURN_IF_ERROR(single->initialize(options.seed));
    PARITY_RETURN_IF_ERROR(single->stage_inputs(batch));
  }
  DistStepBenchReport report;
  report.backend = std::string(collective.backend_name());
  report.ranks = ranks;
  std::int64_t single_steps = 0, distributed_steps = 0;
  double single_loss = 0, distributed_loss = 0;
  // The first step of each (same weights, same batch) before any timing: one rank must match.
  PARITY_RETURN_IF_ERROR(timed_steps(distributed, local_rows, 1, &distributed_steps, nullptr, &distributed_loss));
  const double distributed_first_loss = distributed_loss;
  PARITY_RETURN_IF_ERROR(timed_steps(distributed, local_rows, options.warmup_steps, &distributed_steps, nullptr,
                                     &distributed_loss));
  if (single.is_ok()) {
    PARITY_RETURN_IF_ERROR(timed_steps(*single, options.batch_size, 1, &single_steps, nullptr, &single_loss));
    report.first_loss_difference = std::abs(single_loss - distributed_first_loss);
    PARITY_RETURN_IF_ERROR(timed_steps(*single, options.batch_size, options.warmup_steps, &single_steps, nullptr,
                                       &single_loss));
  }
  const int per_round = (options.timed_steps + rounds - 1) / rounds;
  for (int round = 0; round < rounds; ++round) {
    if (single.is_ok()) {
      PARITY_RETURN_IF_ERROR(timed_steps(*single, options.batch_size, per_round, &single_steps,
                                         &report.single_step_ms, &single_loss));
    }
    PARITY_RETURN_IF_ERROR(timed_steps(distributed, local_rows, per_round, &distributed_steps,
                                       &report.distributed_step_ms, &distributed_loss));
  }
  if (single.is_ok()) {
    PARITY_ASSIGN_OR_RETURN(const auto stats, bench::summarize(report.single_step_ms));
    report.median_single_ms = stats.median_ms;
  }
  PARITY_ASSIGN_OR_RETURN(const auto stats, bench::summarize(report.distributed_step_ms));
  report.median_distributed_ms = stats.median_ms;
  report.overhead_percent =
      report.median_single_ms > 0 ? 100.0 * (report.median_distributed_ms / report.median_single_ms - 1.0) : 0.0;
  report.single_last_loss = single_loss;
  report.distributed_last_loss = distributed_loss;
  return report;
}

Status write_dist_step_bench_json(const DistStepBenchReport& report, const model::ModelSpec& spec,
                                  const StepBenchOptions& options, const std::string& path) {
  nlohmann::json document = bench::results_document("train_step_distributed", bench::provenance_json(options.seed));
  document["method"] = {
      {"batch_resident", "one synthetic batch staged once on the device; each step timed to completion"},
      {"alternation", "rounds of equal step counts: single-process, then distributed, repeated"},
      {"warmup_steps", options.warmup_steps},
      {"timed_steps_each", report.distributed_step_ms.size()},
      {"overhead_percent", "100 * (median distributed / median single - 1)"}};
  document["model"] = spec.name;
  document["precision"] = std::string(model::dense_precision_name(spec.precision));
  document["device"] = std::string(device_kind_name(options.device));
  document["batch_size"] = options.batch_size;
  document["backend"] = report.backend;
  document["ranks"] = report.ranks;
  document["single_step_ms"] = report.single_step_ms;
  document["distributed_step_ms"] = report.distributed_step_ms;
  document["median_single_ms"] = report.median_single_ms;
  document["median_distributed_ms"] = report.median_distributed_ms;
  document["overhead_percent"] = report.overhead_percent;
  document["single_samples_per_second"] =
      report.median_single_ms > 0 ? static_cast<double>(options.batch_size) / (report.median_single_ms * 1e-3) : 0.0;
  document["distributed_samples_per_second"] = static_cast<double>(options.batch_size) /
                                               (report.median_distributed_ms * 1e-3);
  document["first_loss_difference"] = report.first_loss_difference;
  document["single_last_loss"] = report.single_last_loss;
  document["distributed_last_loss"] = report.distributed_last_loss;
  return bench::write_json_file(path, document);
}

}  // namespace parity::train
