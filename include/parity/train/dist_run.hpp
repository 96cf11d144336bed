// A distributed run on this process's rank, from its settings to its report: the checks made before
// any communicator starts, the communicators (parity/comm/session.hpp), the plan's placement and the
// rank handling: only rank 0 reports progress and prints; an error carries "rank R of N".
// Implemented in parity_comm_session, with the communicators this build has.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/dist_setup.hpp"
#include "parity/train/step_bench.hpp"
#include "parity/train/train_settings.hpp"
#include "parity/train/trainer.hpp"

namespace parity::train {

/// Where a distributed run reports. Only rank 0 calls `print` and `on_summary`.
struct DistRunReport {
  std::function<void(const std::string&)> print;       // the start line, timings, files written
  std::function<void(const TrainSummary&)> on_summary;  // after training
  /// Called on a rank whose run failed with a lost or hung peer, with the error, while the
  /// communicators are still open: closing them would wait for that peer forever (MPI_Finalize),
  /// so a command ends its process here. A caller that returns waits.
  std::function<void(const Status&)> on_peer_lost;
};

/// "rank R of N": the context of a distributed run's errors.
std::string rank_context(int rank, int size);

/// backend "mpi": train_distributed on the CPU ranks of mpirun (kUnsupported naming --distributed
/// in builds without MPI); "nccl": train_distributed_gpu with one GPU per rank; "local":
/// train_distributed_gpu on one CPU rank. options.on_progress is kept on rank 0 only; the plan in
/// settings.plan gives the placement. Returns this rank's status.
Status run_distributed_train(TrainOptions options, const DistTrainSettings& settings, std::string_view backend,
                             const DistRunReport& report);

/// `parity train` as a command line or a binding gives it.
struct TrainRun {
  TrainSettings settings;
  std::string plan;             // a plan from `parity plan`: --distributed only (its table-wise placement)
  bool distributed = false;
  std::string backend = "mpi";  // distributed: mpi (CPU ranks), nccl (GPU ranks) or local
  DistTrainSettings dist;       // its plan from `plan`
};
/// Checks the run (a plan without --distributed is kUnsupported; --backend needs --distributed),
/// then trains: run_distributed_train, or train() in this process with `report.print` given the
/// start line and `report.on_summary` the summary. `on_progress`: TrainOptions::on_progress.
Status run_train_command(const TrainRun& run, const std::function<void(const TrainProgress&)>& on_progress,
                         const DistRunReport& report);

/// `parity bench train --comm`: benchmark_distributed_step on the ranks of backend "nccl" (GPU
/// ranks) or "local" (one CPU rank); rank 0 prints its text and, with `out`, writes the JSON and
/// prints "wrote OUT". `flag` names the setting that chose the backend in errors.
Status run_distributed_step_bench(const model::ModelSpec& spec, const StepBenchOptions& options,
                                  std::string_view backend, std::string_view flag, int rounds,
                                  const std::string& out, const std::function<void(const std::string&)>& print);

/// `parity bench train` as a command line or a binding gives it.
struct StepBenchRun {
  StepBenchSettings settings;
  std::string out;   // results JSON (empty: none)
  std::string comm;  // empty: the single-process benchmark (run_step_bench); nccl or local: --comm
  int rounds = 5;    // --comm: alternating rounds the timed steps are split into
};
/// The spec and options from run.settings, then run_step_bench, or run_distributed_step_bench on
/// run.comm (errors name --comm); `print` gets the text.
Status run_step_bench_command(const StepBenchRun& run, const std::function<void(const std::string&)>& print);

}  // namespace parity::train
