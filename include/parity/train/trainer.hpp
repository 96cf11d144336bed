// train(): the end-to-end training loop. Reads a dataset directory (or generates a synthetic one
// for the model), trains on the CPU (the GPU path plugs in through the ops' GPU variants), evaluates
// NE and exact AUC on the eval split, reports progress through a callback, checkpoints atomically
// and resumes from the last good checkpoint, and writes metrics.jsonl, training.svg and
// summary.json to the output directory (docs/training.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parity/core/op.hpp"
#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/checkpoint_file.hpp"

namespace parity::train {

enum class ResumeMode : std::uint8_t { kFresh, kFromLatestCheckpoint };
enum class Determinism : std::uint8_t { kDefault, kBitwise };

struct EvalRecord {
  std::int64_t step = 0;
  std::int64_t samples = 0;  // evaluated
  double ne = 0;
  double auc = 0;
  double logloss = 0;
  double train_loss = 0;  // mean training loss since the previous evaluation
};

struct TrainProgress {
  enum class Event : std::uint8_t { kStep, kEvaluation, kCheckpoint };
  Event event = Event::kStep;
  std::int64_t step = 0;         // steps done
  std::int64_t total_steps = 0;  // planned (max_steps or epochs x steps per epoch)
  std::int64_t samples = 0;      // training samples seen
  double loss = 0;               // mean loss of the recent steps
  double learning_rate = 0;      // dense base rate after the schedule
  double samples_per_second = 0;
  double elapsed_seconds = 0;
  double eta_seconds = -1;  // -1 when unknown
  EvalRecord evaluation;    // kEvaluation
  std::string checkpoint_path;  // kCheckpoint
};

struct TrainOptions {
  model::ModelSpec spec;
  std::string data_dir;                // a dataset directory (train and eval splits), or
  std::int64_t synthetic_samples = 0;  // > 0: generate this many training samples into out_dir/data
  DeviceKind device = DeviceKind::kCpu;
  std::int64_t batch_size = 256;
  std::int64_t eval_every_steps = 0;        // 0: evaluate at the end only
  std::int64_t eval_max_samples = 0;        // 0: the whole eval split
  std::int64_t checkpoint_every_steps = 0;  // 0: at every evaluation and at the end
  std::string out_dir;
  // Non-empty: a fresh run writes its initial parameters there (named fp32 tensors in the
  // checkpoint container, docs/training.md) before the first step, for reference comparisons.
  std::string initial_parameters_path;
  ResumeMode resume = ResumeMode::kFresh;
  Determinism determinism = Determinism::kDefault;
  // How the GPU GEMMs are chosen (op.hpp). kMeasured times the best few candidates once per
  // problem (well under a second per model), paid back within a few steps; a kBitwise run uses
  // kAuto instead, so the kernels (and their rounding) never depend on a timing.
  GemmChoice gemm_choice = GemmChoice::kMeasured;
  std::uint64_t seed = 1;
  std::int64_t max_steps = 0;   // 0: no limit
  std::int64_t max_epochs = 1;  // passes over the training split
  double learning_rate = 0;     // > 0 replaces both base learning rates
  // CPU threads for the ops (OpenMP, this call only). 0: automatic: one thread when a step is
  // below ~1 GFLOP (fork-join costs outweigh the gain), else every core.
  int num_threads = 0;
  std::function<void(const TrainProgress&)> on_progress;
  CheckpointWriteOptions checkpoint_write;  // test hook for crash tests
  /// Checks sizes, paths and the device; names the option and the value.
  Status validate() const;
};

struct TrainSummary {
  std::int64_t steps = 0;
  std::int64_t samples = 0;
  std::int64_t epochs_completed = 0;
  std::int64_t resumed_from_step = -1;  // -1: fresh start
  double train_seconds = 0;             // training steps only (no evaluation, no checkpoints)
  double samples_per_second = 0;        // of this process's steps
  std::vector<double> step_losses;      // every step's mean loss from step 1 (across resumes)
  std::vector<EvalRecord> evaluations;  // across resumes
  double planted_auc = -1;              // synthetic data: the planted model's AUC; -1 otherwise
  int num_threads = 0;                  // CPU threads the ops ran on
  std::string data_dir;
  std::string metrics_log_path;  // metrics.jsonl
  std::string svg_path;          // training.svg
  std::string checkpoint_path;   // checkpoint.ckpt
  std::string summary_path;      // summary.json
};

Result<TrainSummary> train(const TrainOptions& options);

/// Bytes of memory this machine offers the CPU trainer (physical memory).
std::int64_t host_memory_bytes();

}  // namespace parity::train
