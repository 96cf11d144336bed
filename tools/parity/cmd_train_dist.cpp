// `parity train --distributed`, run as `mpirun -np R parity train --distributed ...`: the MPI world
// communicator, the placement (from --plan or greedy), train::train_distributed. Rank 0 prints.
#include "cmd_train_dist.hpp"

#include <cstdio>

#include "commands.hpp"
#include "parity/train/dist_trainer.hpp"
#ifdef PARITY_HAS_MPI
#include "parity/comm/mpi.hpp"
#endif

namespace parity::cli {

Status run_distributed_train(train::TrainOptions options, const train::DistTrainSettings& settings,
                             const PrintSummary& print_summary) {
  PARITY_ASSIGN_OR_RETURN(train::DistTrainOptions dist, train::dist_train_options(settings));
  PARITY_ASSIGN_OR_RETURN(const double timeout_ms, train::comm_timeout_ms(settings));
#ifndef PARITY_HAS_MPI
  (void)options;
  (void)print_summary;
  (void)timeout_ms;
  return unsupported("--distributed: this build has no MPI communicator (install libopenmpi-dev and reconfigure)");
#else
  comm::MpiSession session;  // outlives the communicator
  PARITY_RETURN_IF_ERROR(session.status());
  comm::CommOptions comm_options;
  comm_options.timeout_ms = timeout_ms;
  PARITY_ASSIGN_OR_RETURN(auto world, comm::make_mpi_communicator(comm_options));
  const std::string where = "rank " + std::to_string(world->rank()) + " of " + std::to_string(world->size());
  const bool is_root = world->rank() == 0;
  if (!is_root) options.on_progress = nullptr;
  dist.train = options;
  PARITY_RETURN_IF_ERROR(train::apply_plan_placement(settings, world->size(), dist));
  if (is_root) {
    std::fputs(train::mpi_train_start_text(world->size(), settings, dist).c_str(), stdout);
    std::fflush(stdout);
  }
  train::DenseReductionTimings timings;
  auto summary = train::train_distributed(dist, *world, &timings);
  if (!summary.is_ok() && !world->failure().is_ok()) {
    exit_without_finalize(summary.status().with_context(where));
  }
  if (!summary.is_ok()) return summary.status().with_context(where);
  if (is_root) print_summary(*summary);
  if (is_root && settings.report_timings) std::fputs(train::reduction_timings_text(settings, dist, timings).c_str(), stdout);
  return Status::ok();
#endif
}

}  // namespace parity::cli
