// Checkpoint contents (internal): the model's parameters and optimiser state as blobs, plus a
// JSON "meta" blob (spec, batch size, seed, step, epoch, reader position, evaluations) and the
// per-step losses, written through write_checkpoint_file (atomic, CRC-checked).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "parity/data/dataset.hpp"
#include "parity/train/trainer.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train::detail {

struct TrainState {
  std::int64_t step = 0;
  std::int64_t epoch = 0;
  std::int64_t reader_position = 0;  // samples of the current epoch handed out
  std::int64_t samples = 0;          // training samples seen in total
  std::vector<double> step_losses;
  std::vector<EvalRecord> evaluations;
};

inline constexpr int kCheckpointFormat = 1;

/// The checkpoint's "meta" object (format, spec, batch size, seed, step, epoch, reader position,
/// samples, evaluations); the distributed trainer adds its own keys to it.
nlohmann::json checkpoint_meta(const TrainState& state, const TrainOptions& options);
/// Checks a "meta" object against the run (format, spec, batch size; errors name `path`) and
/// restores the state's counters and evaluations (not the step losses).
Status restore_checkpoint_meta(const nlohmann::json& meta, const std::string& path, const TrainOptions& options,
                               TrainState* state);
/// The "history.step_losses" blob of a checkpoint into state->step_losses (state->step entries).
Status restore_step_losses(const std::vector<NamedBlob>& blobs, const std::string& path, TrainState* state);

/// The training data directory: options.data_dir, or out_dir/data generated for the model unless a
/// matching synthetic dataset is already there (generation is deterministic for a seed).
struct PreparedData {
  std::string dir;
  double planted_auc = -1;
};
Result<PreparedData> prepare_data(const TrainOptions& options);
/// The dataset's layout against the model's; errors name the directory and the feature.
Status check_schema(const data::DatasetSchema& have, const data::DatasetSchema& want, const std::string& dir);

/// NE, exact AUC and log loss over the eval split (at most max_samples, 0: all) from each batch's
/// logits (host memory, batch order).
Result<EvalRecord> evaluate_split(data::BatchReader& reader, std::int64_t max_samples, std::int64_t step,
                                  const std::function<Result<const float*>(const data::Batch&)>& logits_of);

/// What the step loop asks of a trainer (single-rank or distributed).
struct StepLoopHooks {
  std::function<Result<double>(const data::Batch& batch, std::int64_t step)> train_step;  // mean loss
  std::function<Result<EvalRecord>(std::int64_t step)> evaluate;  // over the eval split
  std::function<Status(const TrainState& state)> write_evaluations;  // metrics.jsonl, training.svg
  std::function<Status(const TrainState& state)> save_checkpoint;
};
/// The step loop of train() and train_distributed(): epochs over `reader` (already at the state's
/// position), progress events, evaluation and checkpoint cadence, the final evaluation and
/// checkpoint (at summary->checkpoint_path unless it holds this step); fills the summary's counters,
/// losses and evaluations.
Status run_step_loop(const TrainOptions& options, data::BatchReader& reader, const StepLoopHooks& hooks,
                     TrainState* state, TrainSummary* summary);

/// Sets this thread's OpenMP team size for a run and restores it afterwards.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(int num_threads);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  int saved_ = 1;
};

Status save_checkpoint(const std::string& path, DlrmModel& model, const TrainState& state,
                       const TrainOptions& options);
/// Restores model and state; errors name the file and what does not match (spec, batch size,
/// a blob's size).
Status load_checkpoint(const std::string& path, DlrmModel& model, TrainState* state,
                       const TrainOptions& options);

/// metrics.jsonl (one line per evaluation), training.svg, summary.json.
Status write_metrics_log(const std::string& path, const std::vector<EvalRecord>& evaluations);
Status write_training_svg(const std::string& path, const std::string& title,
                          const std::vector<double>& step_losses,
                          const std::vector<EvalRecord>& evaluations);
Status write_summary(const std::string& path, const TrainSummary& summary, const TrainOptions& options);

}  // namespace parity::train::detail
