// train(): data preparation, the step loop, evaluation, progress, checkpoints and the run's files.
#include "parity/train/trainer.hpp"

#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include <chrono>
#include <cmath>
#include <deque>
#include <string>
#include <utility>
#include <filesystem>

#include "core/device_hooks.hpp"
#include "parity/data/dataset.hpp"
#include "parity/train/metrics.hpp"
#include "train/train_state.hpp"

namespace parity::train {

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int choose_threads(const TrainOptions& options) {
  if (options.num_threads > 0) return options.num_threads;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  // Forward + backward is about 6 FLOPs per dense parameter per sample (the dot interaction and
  // embeddings add little). Below 1 GFLOP a step spends more in ~30 fork-joins than it gains.
  const double step_flops = 6.0 * static_cast<double>(options.spec.dense_parameter_count()) *
                            static_cast<double>(options.batch_size);
  return step_flops < 1e9 ? 1 : static_cast<int>(std::max(1L, cores));
}

}  // namespace

namespace detail {

ThreadCountScope::ThreadCountScope(int num_threads) {
#ifdef _OPENMP
  saved_ = omp_get_max_threads();
  omp_set_num_threads(num_threads);
#else
  (void)num_threads;
#endif
}

ThreadCountScope::~ThreadCountScope() {
#ifdef _OPENMP
  omp_set_num_threads(saved_);
#endif
}

// Generates out_dir/data for the model unless a matching synthetic dataset is already there
// (a resumed run must read the same data; generation is deterministic for a seed anyway).
Result<PreparedData> prepare_data(const TrainOptions& options) {
  PreparedData prepared;
  if (options.synthetic_samples == 0) {
    prepared.dir = options.data_dir;
    auto info = data::read_dataset_info(options.data_dir);
    if (!info.is_ok()) return info.status().with_context("--data");
    if (info->source == "synthetic") prepared.planted_auc = info->planted_auc;
    return prepared;
  }
  prepared.dir = (std::filesystem::path(options.out_dir) / "data").string();
  const data::DatasetSchema schema = model::dataset_schema(options.spec);
  const std::int64_t eval_samples =
      std::max<std::int64_t>(std::min<std::int64_t>(options.synthetic_samples / 4, 500'000), 1000);
  auto existing = data::read_dataset_info(prepared.dir);
  if (existing.is_ok() && existing->train_samples == options.synthetic_samples &&
      existing->eval_samples == eval_samples && existing->seed == options.seed &&
      existing->schema.num_dense == schema.num_dense && existing->schema.tables.size() == schema.tables.size()) {
    prepared.planted_auc = existing->planted_auc;
    return prepared;
  }
  data::SyntheticOptions synthetic;
  synthetic.train_samples = options.synthetic_samples;
  synthetic.eval_samples = eval_samples;
  synthetic.seed = options.seed;
  PARITY_ASSIGN_OR_RETURN(const data::SyntheticReport report,
                          data::generate_synthetic(schema, synthetic, prepared.dir));
  prepared.planted_auc = report.planted_auc;
  return prepared;
}

Status check_schema(const data::DatasetSchema& have, const data::DatasetSchema& want, const std::string& dir) {
  PARITY_CHECK_ARG(have.num_dense == want.num_dense, dir, ": the dataset has ", have.num_dense,
                   " dense features; the model expects ", want.num_dense);
  PARITY_CHECK_ARG(have.tables.size() == want.tables.size(), dir, ": the dataset has ", have.tables.size(),
                   " categorical features; the model expects ", want.tables.size());
  for (std::size_t t = 0; t < want.tables.size(); ++t) {
    PARITY_CHECK_ARG(have.tables[t].ids_per_sample == want.tables[t].ids_per_sample, dir, ": feature ", t,
                     " has ", have.tables[t].ids_per_sample, " ids per sample; the model expects ",
                     want.tables[t].ids_per_sample);
    PARITY_CHECK_ARG(have.tables[t].num_rows <= want.tables[t].num_rows, dir, ": feature ", t,
                     " has ids up to ", have.tables[t].num_rows, " rows; the model's table has ",
                     want.tables[t].num_rows, " (raise the table size or hash the data)");
  }
  return Status::ok();
}

Result<EvalRecord> evaluate_split(data::BatchReader& reader, std::int64_t max_samples, std::int64_t step,
                                  const std::function<Result<const float*>(const data::Batch&)>& logits_of) {
  PARITY_RETURN_IF_ERROR(reader.seek_samples(0));
  MetricsAccumulator metrics;
  data::Batch batch;
  while (max_samples == 0 || metrics.count() < max_samples) {
    PARITY_ASSIGN_OR_RETURN(const bool has_batch, reader.next(&batch));
    if (!has_batch) break;
    PARITY_ASSIGN_OR_RETURN(const float* logits, logits_of(batch));
    metrics.add(batch.labels.data(), logits, batch.batch_size);
  }
  PARITY_CHECK_ARG(metrics.count() > 0, "evaluation: the eval split is empty");
  EvalRecord record;
  record.step = step;
  record.samples = metrics.count();
  record.ne = metrics.ne();
  record.auc = metrics.auc();
  record.logloss = metrics.logloss();
  return record;
}

// Progress events of the step loop: the mean of the last 100 step losses, throughput and ETA of
// this process's steps.
class ProgressReporter {
 public:
  ProgressReporter(const TrainOptions& options, std::int64_t total_steps, std::string checkpoint_path)
      : options_(options), total_steps_(total_steps), checkpoint_path_(std::move(checkpoint_path)) {}
  void add_step(double loss, double seconds) {
    recent_losses_.push_back(loss);
    if (recent_losses_.size() > 100) recent_losses_.pop_front();
    train_seconds_ += seconds;
    ++steps_;
  }
  double train_seconds() const { return train_seconds_; }
  double samples_per_second() const {
    return train_seconds_ > 0 ? static_cast<double>(steps_ * options_.batch_size) / train_seconds_ : 0;
  }
  void report(TrainProgress::Event event, const TrainState& state) const {
    if (!options_.on_progress) return;
    TrainProgress progress;
    progress.event = event;
    progress.step = state.step;
    progress.total_steps = total_steps_;
    progress.samples = state.samples;
    double sum = 0;
    for (double loss : recent_losses_) sum += loss;
    progress.loss = recent_losses_.empty() ? 0 : sum / static_cast<double>(recent_losses_.size());
    progress.learning_rate = options_.spec.lr_schedule.learning_rate(
        options_.spec.dense_optimizer.learning_rate, std::max<std::int64_t>(state.step - 1, 0));
    progress.elapsed_seconds = seconds_since(start_);
    progress.samples_per_second = samples_per_second();
    if (steps_ > 0 && train_seconds_ > 0) {
      progress.eta_seconds =
          static_cast<double>(total_steps_ - state.step) * train_seconds_ / static_cast<double>(steps_);
    }
    if (!state.evaluations.empty()) progress.evaluation = state.evaluations.back();
    if (event == TrainProgress::Event::kCheckpoint) progress.checkpoint_path = checkpoint_path_;
    options_.on_progress(progress);
  }

 private:
  const TrainOptions& options_;
  std::int64_t total_steps_;
  std::string checkpoint_path_;
  Clock::time_point start_ = Clock::now();
  std::deque<double> recent_losses_;
  double train_seconds_ = 0;
  std::int64_t steps_ = 0;
};

Status run_step_loop(const TrainOptions& options, data::BatchReader& reader, const StepLoopHooks& hooks,
                     TrainState* state, TrainSummary* summary) {
  const std::int64_t steps_per_epoch = std::max<std::int64_t>(reader.num_samples() / options.batch_size, 1);
  std::int64_t total_steps = steps_per_epoch * options.max_epochs;
  if (options.max_steps > 0) total_steps = std::min(total_steps, options.max_steps);
  ProgressReporter progress(options, total_steps, summary->checkpoint_path);
  std::int64_t last_eval_step = -1, last_checkpoint_step = state->step;
  double interval_loss_sum = 0;
  std::int64_t interval_steps = 0;
  const auto run_evaluation = [&]() -> Status {
    PARITY_ASSIGN_OR_RETURN(EvalRecord record, hooks.evaluate(state->step));
    record.train_loss = interval_steps > 0 ? interval_loss_sum / static_cast<double>(interval_steps) : 0;
    interval_loss_sum = 0;
    interval_steps = 0;
    state->evaluations.push_back(record);
    last_eval_step = state->step;
    progress.report(TrainProgress::Event::kEvaluation, *state);
    return hooks.write_evaluations(*state);
  };
  const auto save = [&]() -> Status {
    PARITY_RETURN_IF_ERROR(hooks.save_checkpoint(*state));
    last_checkpoint_step = state->step;
    progress.report(TrainProgress::Event::kCheckpoint, *state);
    return Status::ok();
  };

  data::Batch batch;
  while (options.max_steps == 0 || state->step < options.max_steps) {
    if (state->epoch >= options.max_epochs) break;
    PARITY_ASSIGN_OR_RETURN(const bool has_batch, reader.next(&batch));
    if (!has_batch) {
      ++state->epoch;
      state->reader_position = 0;
      if (state->epoch >= options.max_epochs) break;
      PARITY_RETURN_IF_ERROR(reader.seek_samples(0));
      continue;
    }
    const auto step_start = Clock::now();
    PARITY_ASSIGN_OR_RETURN(const double loss, hooks.train_step(batch, state->step));
    progress.add_step(loss, seconds_since(step_start));
    if (!std::isfinite(loss)) {
      return invalid_argument("training diverged: the loss is ", loss, " at step ", state->step + 1,
                              " (lower the learning rate)");
    }
    ++state->step;
    state->samples += batch.batch_size;
    state->reader_position = reader.position_samples();
    state->step_losses.push_back(loss);
    interval_loss_sum += loss;
    ++interval_steps;
    progress.report(TrainProgress::Event::kStep, *state);
    const bool eval_due = options.eval_every_steps > 0 && state->step % options.eval_every_steps == 0;
    if (eval_due) PARITY_RETURN_IF_ERROR(run_evaluation());
    const bool checkpoint_due = options.checkpoint_every_steps > 0
                                    ? state->step % options.checkpoint_every_steps == 0
                                    : eval_due;
    if (checkpoint_due) PARITY_RETURN_IF_ERROR(save());
  }
  if (last_eval_step != state->step || state->evaluations.empty()) PARITY_RETURN_IF_ERROR(run_evaluation());
  if (last_checkpoint_step != state->step || !std::filesystem::exists(summary->checkpoint_path)) {
    PARITY_RETURN_IF_ERROR(save());
  }
  summary->steps = state->step;
  summary->samples = state->samples;
  summary->epochs_completed = state->epoch;
  summary->train_seconds = progress.train_seconds();
  summary->samples_per_second = progress.samples_per_second();
  summary->step_losses = state->step_losses;
  summary->evaluations = state->evaluations;
  return Status::ok();
}

}  // namespace detail

std::int64_t host_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page_size > 0 ? static_cast<std::int64_t>(pages) * page_size : 0;
}

Status TrainOptions::validate() const {
  PARITY_CHECK_ARG(batch_size >= 1 && batch_size <= (std::int64_t{1} << 24), "batch: ", batch_size,
                   " is out of range [1, 16777216]");
  PARITY_CHECK_ARG(!out_dir.empty(), "out: the output directory is empty");
  PARITY_CHECK_ARG(synthetic_samples >= 0, "synthetic: ", synthetic_samples, " is negative");
  PARITY_CHECK_ARG((synthetic_samples > 0) != !data_dir.empty(),
                   "data: give exactly one of --data DIR and --synthetic N");
  PARITY_CHECK_ARG(synthetic_samples == 0 || synthetic_samples >= batch_size, "synthetic: ",
                   synthetic_samples, " samples are fewer than one batch of ", batch_size);
  PARITY_CHECK_ARG(eval_every_steps >= 0, "eval-every: ", eval_every_steps, " is negative");
  PARITY_CHECK_ARG(checkpoint_every_steps >= 0, "checkpoint-every: ", checkpoint_every_steps, " is negative");
  PARITY_CHECK_ARG(max_steps >= 0, "steps: ", max_steps, " is negative");
  PARITY_CHECK_ARG(max_epochs >= 1, "epochs: ", max_epochs, " is out of range [1, ...]");
  PARITY_CHECK_ARG(std::isfinite(learning_rate) && learning_rate >= 0, "lr: ", learning_rate,
                   " is not a finite value >= 0");
  PARITY_CHECK_ARG(num_threads >= 0 && num_threads <= 4096, "threads: ", num_threads,
                   " is out of range [0, 4096]");
  if (device == DeviceKind::kGpu && parity::detail::device_hooks() == nullptr) {
    return unsupported("device: this build has no GPU backend (configure with the cuda preset); use "
                       "--device cpu");
  }
  if (spec.precision == model::DensePrecision::kBf16 && device != DeviceKind::kGpu) {
    return unsupported("precision: bf16 dense compute runs on the GPU only (use fp32 or tf32 on the CPU)");
  }
  return spec.validate();
}

Result<TrainSummary> train(const TrainOptions& original_options) {
  TrainOptions options = original_options;
  if (options.learning_rate > 0) {
    options.spec.dense_optimizer.learning_rate = static_cast<float>(options.learning_rate);
    options.spec.embedding.optimizer.learning_rate = static_cast<float>(options.learning_rate);
  }
  PARITY_RETURN_IF_ERROR(options.validate());
  // On the GPU the allocations report a shortfall themselves (no total-memory hook yet).
  if (options.device == DeviceKind::kCpu) {
    PARITY_RETURN_IF_ERROR(model::check_fits(model::estimate_memory(options.spec, options.batch_size),
                                             host_memory_bytes(), "this machine's memory"));
  }
  const int num_threads = choose_threads(options);
  const detail::ThreadCountScope thread_scope(num_threads);
  std::error_code error;
  std::filesystem::create_directories(options.out_dir, error);
  if (error) return io_error("out: cannot create ", options.out_dir, ": ", error.message());

  PARITY_ASSIGN_OR_RETURN(const detail::PreparedData prepared, detail::prepare_data(options));
  data::ReaderOptions train_reader_options;
  train_reader_options.batch_size = options.batch_size;
  data::ReaderOptions eval_reader_options = train_reader_options;
  eval_reader_options.drop_last = false;
  PARITY_ASSIGN_OR_RETURN(auto train_reader, data::open_dataset(prepared.dir, "train", train_reader_options));
  PARITY_ASSIGN_OR_RETURN(auto eval_reader, data::open_dataset(prepared.dir, "eval", eval_reader_options));
  PARITY_RETURN_IF_ERROR(detail::check_schema(train_reader->schema(), model::dataset_schema(options.spec), prepared.dir));

  ExecutionContext context;
  context.device = options.device;
  context.deterministic = options.determinism == Determinism::kBitwise;
  context.gemm_choice = context.deterministic && options.gemm_choice == GemmChoice::kMeasured
                            ? GemmChoice::kAuto
                            : options.gemm_choice;
  PARITY_ASSIGN_OR_RETURN(detail::DlrmModel model,
                          detail::DlrmModel::create(options.spec, options.batch_size, context));
  PARITY_RETURN_IF_ERROR(model.initialize(options.seed));

  TrainSummary summary;
  summary.data_dir = prepared.dir;
  summary.num_threads = num_threads;
  summary.planted_auc = prepared.planted_auc;
  const std::filesystem::path out(options.out_dir);
  summary.checkpoint_path = (out / "checkpoint.ckpt").string();
  summary.metrics_log_path = (out / "metrics.jsonl").string();
  summary.svg_path = (out / "training.svg").string();
  summary.summary_path = (out / "summary.json").string();

  detail::TrainState state;
  if (options.resume == ResumeMode::kFromLatestCheckpoint && std::filesystem::exists(summary.checkpoint_path)) {
    PARITY_RETURN_IF_ERROR(detail::load_checkpoint(summary.checkpoint_path, model, &state, options));
    summary.resumed_from_step = state.step;
  }
  if (!options.initial_parameters_path.empty() && summary.resumed_from_step < 0) {
    PARITY_RETURN_IF_ERROR(model.write_parameter_file(options.initial_parameters_path));
  }
  PARITY_RETURN_IF_ERROR(train_reader->seek_samples(state.reader_position));

  detail::StepLoopHooks hooks;
  hooks.train_step = [&](const data::Batch& batch, std::int64_t step) { return model.train_step(batch, step); };
  hooks.evaluate = [&](std::int64_t step) {
    return detail::evaluate_split(*eval_reader, options.eval_max_samples, step,
                                  [&](const data::Batch& batch) -> Result<const float*> {
                                    PARITY_RETURN_IF_ERROR(model.forward(batch));
                                    return model.logits();
                                  });
  };
  hooks.write_evaluations = [&](const detail::TrainState& done) -> Status {
    PARITY_RETURN_IF_ERROR(detail::write_metrics_log(summary.metrics_log_path, done.evaluations));
    return detail::write_training_svg(summary.svg_path, options.spec.name + " on " + prepared.dir,
                                      done.step_losses, done.evaluations);
  };
  hooks.save_checkpoint = [&](const detail::TrainState& done) {
    return detail::save_checkpoint(summary.checkpoint_path, model, done, options);
  };
  PARITY_RETURN_IF_ERROR(detail::run_step_loop(options, *train_reader, hooks, &state, &summary));
  PARITY_RETURN_IF_ERROR(detail::write_summary(summary.summary_path, summary, options));
  return summary;
}

}  // namespace parity::train
