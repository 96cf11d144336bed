// Checkpoint contents (internal): the model's parameters and optimiser state as blobs, plus a
// JSON "meta" blob (spec, batch size, seed, step, epoch, reader position, evaluations) and the
// per-step losses, written through write_checkpoint_file (atomic, CRC-checked).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
