// The training runs and step benchmarks as text lines: what `parity train` and `parity bench
// train` print, for any caller (a binding's logger, a notebook). No trailing state, no printing.
#pragma once

#include <cstdint>
#include <string>

#include "parity/model/spec.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "parity/train/step_bench.hpp"
#include "parity/train/trainer.hpp"

namespace parity::train {

/// "h:mm:ss" (seconds rounded), "?" for a negative (unknown) duration.
std::string clock_text(double seconds);

/// "step S/T  R samples/s  loss L  lr X  ETA h:mm:ss" (no newline).
std::string progress_text(const TrainProgress& progress);

/// "eval  step S: NE ...  AUC ...  logloss ...  (N samples)\n".
std::string evaluation_text(const EvalRecord& evaluation);

/// Progress as console text: on a terminal a bar redrawn in place ("\r[###   ]  50% step ...",
/// at most every 0.1 s), otherwise a plain line ("train  50% step ...\n", every 10 s); the last
/// step and every evaluation always. The caller writes what render() returns (empty: nothing now).
class ProgressText {
 public:
  enum class Style : std::uint8_t { kTerminalBar, kPlainLines };
  explicit ProgressText(Style style) : style_(style) {}
  /// now_seconds: any monotonic clock in seconds (the throttle's).
  std::string render(const TrainProgress& progress, double now_seconds);
  /// "\n" when a bar is open (so the next line starts clean), else "".
  std::string end_bar();

 private:
  Style style_;
  bool is_bar_open_ = false;
  double last_seconds_ = -1e300;  // the first step is always shown
};

/// "train: model M (P dense parameters, R embedding rows), batch B, device D\n".
std::string train_start_text(const TrainOptions& options);

/// The end-of-run lines: steps, samples and rate; resume point; last evaluation; planted AUC; files.
std::string summary_text(const TrainSummary& summary);

/// The step benchmark's lines: resident and staged throughput, losses, GEMM choice and first step,
/// the phase breakdown (shares of the instrumented step) and the memory in use.
std::string step_bench_text(const StepBenchReport& report, const StepBenchOptions& options);

/// The one-rank overhead benchmark's lines (benchmark_distributed_step): both medians, samples/s
/// and the overhead in percent.
std::string dist_step_bench_text(const DistStepBenchReport& report, const model::ModelSpec& spec,
                                 const StepBenchOptions& options, int rounds);

}  // namespace parity::train
