// `parity train --distributed --backend nccl|local`: the NCCL communicator (bootstrapped over MPI,
// or the local communicator for one rank), the placement (from --plan or greedy), and
// train::train_distributed_gpu. Rank 0 prints.
#include <cstdio>

#include "cmd_train_dist.hpp"
#include "comm_session.hpp"
#include "commands.hpp"
#include "parity/train/gpu_dist_trainer.hpp"

namespace parity::cli {

Status run_gpu_distributed_train(train::TrainOptions options, const train::DistTrainSettings& settings,
                                 const std::string& backend, const PrintSummary& print_summary) {
  PARITY_ASSIGN_OR_RETURN(const double timeout_ms, train::comm_timeout_ms(settings));
  // --dense-reduction and --bucket-bytes apply to the GPU trainer too (docs/training.md,
  // "Distributed on GPUs"); its reduction is not timed per bucket.
  PARITY_CHECK_ARG(!settings.report_timings, "--reduction-timings: only with --backend mpi, not ", backend);
  PARITY_ASSIGN_OR_RETURN(train::DistTrainOptions dist, train::dist_train_options(settings));
  PARITY_RETURN_IF_ERROR(train::check_device_for_backend(options.device, backend, "--backend"));
  comm::CommOptions comm_options;
  comm_options.timeout_ms = timeout_ms;
  PARITY_ASSIGN_OR_RETURN(CommSession session, open_comm_session(backend, comm_options));
  comm::Communicator& world = *session.collective;
  const std::string where = "rank " + std::to_string(world.rank()) + " of " + std::to_string(world.size());
  const bool is_root = world.rank() == 0;
  if (!is_root) options.on_progress = nullptr;
  dist.train = options;
  PARITY_RETURN_IF_ERROR(train::apply_plan_placement(settings, world.size(), dist));
  if (is_root) {
    std::fputs(train::gpu_train_start_text(world.size(), world.backend_name(), backend, settings).c_str(), stdout);
    std::fflush(stdout);
  }
  auto summary = train::train_distributed_gpu(dist, *session.host, world);
  if (!summary.is_ok() && (!world.failure().is_ok() || !session.host->failure().is_ok())) {
    exit_without_finalize(summary.status().with_context(where));
  }
  if (!summary.is_ok()) return summary.status().with_context(where);
  if (is_root) print_summary(*summary);
  return Status::ok();
}

}  // namespace parity::cli
