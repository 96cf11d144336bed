// run_distributed_train and run_distributed_step_bench (parity/train/dist_run.hpp): the rank
// handling the CLI and a binding share. Every setting is checked before a communicator starts.
#include "parity/train/dist_run.hpp"

#include "parity/comm/session.hpp"
#include "parity/train/dist_trainer.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "parity/train/report_text.hpp"

namespace parity::train {
namespace {

comm::CommOptions comm_options_with_timeout(double timeout_ms) {
  comm::CommOptions options;
  options.timeout_ms = timeout_ms;
  return options;
}

// Rank handling common to both runs: progress on rank 0 only, the plan's placement for this many
// ranks.
Status place_on_ranks(const comm::Communicator& world, TrainOptions options, const DistTrainSettings& settings,
                      DistTrainOptions& dist) {
  if (world.rank() != 0) options.on_progress = nullptr;
  dist.train = std::move(options);
  return apply_plan_placement(settings, world.size(), dist);
}

// The end of a run on one rank: a failure names the rank (and reaches on_peer_lost while the
// communicators are open when a peer is gone); rank 0 reports the summary.
Status finish(const Result<TrainSummary>& summary, const comm::CommSession& session, const comm::Communicator& world,
              const DistRunReport& report) {
  if (!summary.is_ok()) {
    const Status failed = summary.status().with_context(rank_context(world.rank(), world.size()));
    if (session.has_failed_peer() && report.on_peer_lost) report.on_peer_lost(failed);
    return failed;
  }
  if (world.rank() == 0 && report.on_summary) report.on_summary(*summary);
  return Status::ok();
}

void print_on_root(const comm::Communicator& world, const DistRunReport& report, const std::string& text) {
  if (world.rank() == 0 && report.print) report.print(text);
}

// mpirun's CPU ranks: train_distributed over the MPI world.
Status run_mpi_train(TrainOptions options, const DistTrainSettings& settings, const DistRunReport& report) {
  PARITY_ASSIGN_OR_RETURN(DistTrainOptions dist, dist_train_options(settings));
  PARITY_ASSIGN_OR_RETURN(const double timeout_ms, comm_timeout_ms(settings));
  if (!comm::is_backend_built("mpi")) {
    return unsupported("--distributed: this build has no MPI communicator (install libopenmpi-dev and reconfigure)");
  }
  PARITY_ASSIGN_OR_RETURN(comm::CommSession session,
                          comm::open_comm_session("mpi", comm_options_with_timeout(timeout_ms)));
  comm::Communicator& world = *session.collective;
  PARITY_RETURN_IF_ERROR(place_on_ranks(world, std::move(options), settings, dist));
  print_on_root(world, report, mpi_train_start_text(world.size(), settings, dist));
  DenseReductionTimings timings;
  PARITY_RETURN_IF_ERROR(finish(train_distributed(dist, world, &timings), session, world, report));
  if (settings.report_timings) print_on_root(world, report, reduction_timings_text(settings, dist, timings));
  return Status::ok();
}

// NCCL's GPU ranks (bootstrapped over MPI, or the local communicator for one rank) or the local
// communicator on the CPU: train_distributed_gpu.
Status run_gpu_train(TrainOptions options, const DistTrainSettings& settings, std::string_view backend,
                     const DistRunReport& report) {
  PARITY_ASSIGN_OR_RETURN(const double timeout_ms, comm_timeout_ms(settings));
  // --dense-reduction and --bucket-bytes apply to the GPU trainer too (docs/training.md,
  // "Distributed on GPUs"); its reduction is not timed per bucket.
  PARITY_CHECK_ARG(!settings.report_timings, "--reduction-timings: only with --backend mpi, not ", backend);
  PARITY_ASSIGN_OR_RETURN(DistTrainOptions dist, dist_train_options(settings));
  PARITY_RETURN_IF_ERROR(check_device_for_backend(options.device, backend, "--backend"));
  PARITY_ASSIGN_OR_RETURN(comm::CommSession session,
                          comm::open_comm_session(backend, comm_options_with_timeout(timeout_ms)));
  comm::Communicator& world = *session.collective;
  PARITY_RETURN_IF_ERROR(place_on_ranks(world, std::move(options), settings, dist));
  print_on_root(world, report, gpu_train_start_text(world.size(), world.backend_name(), backend, settings));
  return finish(train_distributed_gpu(dist, *session.host, world), session, world, report);
}

}  // namespace

std::string rank_context(int rank, int size) {
  return "rank " + std::to_string(rank) + " of " + std::to_string(size);
}

Status run_distributed_train(TrainOptions options, const DistTrainSettings& settings, std::string_view backend,
                             const DistRunReport& report) {
  if (backend == "mpi") return run_mpi_train(std::move(options), settings, report);
  return run_gpu_train(std::move(options), settings, backend, report);
}

Status run_train_command(const TrainRun& run, const std::function<void(const TrainProgress&)>& on_progress,
                         const DistRunReport& report) {
  if (!run.plan.empty() && !run.distributed) {
    return unsupported("--plan ", run.plan, ": applying a plan is not wired into train yet; pass --batch "
                       "and set precision/activation_checkpointing in the spec");
  }
  PARITY_ASSIGN_OR_RETURN(TrainOptions options, train_options_from_settings(run.settings));
  options.on_progress = on_progress;
  PARITY_CHECK_ARG(run.distributed || run.backend == "mpi", "--backend: only with --distributed");
  if (run.distributed) {
    DistTrainSettings dist = run.dist;
    dist.plan = run.plan;
    return run_distributed_train(options, dist, run.backend, report);
  }
  report.print(train_start_text(options));
  PARITY_ASSIGN_OR_RETURN(const TrainSummary summary, train(options));
  report.on_summary(summary);
  return Status::ok();
}

Status run_distributed_step_bench(const model::ModelSpec& spec, const StepBenchOptions& options,
                                  std::string_view backend, std::string_view flag, int rounds,
                                  const std::string& out, const std::function<void(const std::string&)>& print) {
  PARITY_RETURN_IF_ERROR(check_device_for_backend(options.device, backend, flag));
  PARITY_ASSIGN_OR_RETURN(comm::CommSession session, comm::open_comm_session(backend, {}));
  PARITY_ASSIGN_OR_RETURN(const DistStepBenchReport report,
                          benchmark_distributed_step(spec, options, *session.collective, rounds));
  if (session.collective->rank() != 0) return Status::ok();
  print(dist_step_bench_text(report, spec, options, rounds));
  if (out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(write_dist_step_bench_json(report, spec, options, out));
  print("wrote " + out + "\n");
  return Status::ok();
}

Status run_step_bench_command(const StepBenchRun& run, const std::function<void(const std::string&)>& print) {
  PARITY_ASSIGN_OR_RETURN(const model::ModelSpec spec, model::load_spec(run.settings.model, run.settings.overrides));
  PARITY_ASSIGN_OR_RETURN(const StepBenchOptions options, step_bench_options_from_settings(run.settings));
  if (!run.comm.empty()) return run_distributed_step_bench(spec, options, run.comm, "--comm", run.rounds, run.out, print);
  return run_step_bench(spec, options, run.out, print);
}

}  // namespace parity::train
