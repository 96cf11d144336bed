// `parity train --distributed`, run as `mpirun -np R parity train --distributed ...`: the MPI world
// communicator, the placement (from --plan or greedy), train::train_distributed. Rank 0 prints.
#include "cmd_train_dist.hpp"

#include <cstdio>
#include <cstdlib>

#include "commands.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/core/parse.hpp"
#include "parity/plan/plan_io.hpp"
#include "parity/train/dist_trainer.hpp"
#ifdef PARITY_HAS_MPI
#include "parity/comm/mpi.hpp"
#endif

namespace parity::cli {

Status run_distributed_train(train::TrainOptions options, const DistributedTrainFlags& flags,
                             const std::function<void(const train::TrainSummary&)>& print_summary) {
  train::DistTrainOptions dist;
  PARITY_ASSIGN_OR_RETURN(const std::int64_t chunks, parse_int64(flags.gradient_chunks, "--gradient-chunks", 0, 1 << 20));
  dist.gradient_chunks = static_cast<int>(chunks);
  PARITY_ASSIGN_OR_RETURN(const double timeout_s, parse_double(flags.comm_timeout, "--comm-timeout"));
  PARITY_CHECK_ARG(timeout_s > 0, "--comm-timeout: ", timeout_s, " must be > 0 seconds");
  PARITY_ASSIGN_OR_RETURN(dist.bucket_bytes, bench::parse_byte_count(flags.bucket_bytes, "--bucket-bytes"));
  PARITY_CHECK_ARG(dist.bucket_bytes >= 1, "--bucket-bytes: ", dist.bucket_bytes, " must be >= 1");
  if (flags.dense_reduction == "after-backward") {
    dist.dense_reduction = train::DistTrainOptions::DenseReduction::kAfterBackward;
  } else {
    PARITY_CHECK_ARG(flags.dense_reduction == "overlapped", "--dense-reduction: '", flags.dense_reduction,
                     "' is not overlapped or after-backward");
  }
#ifndef PARITY_HAS_MPI
  (void)options;
  (void)print_summary;
  return unsupported("--distributed: this build has no MPI communicator (install libopenmpi-dev and reconfigure)");
#else
  comm::MpiSession session;  // outlives the communicator
  PARITY_RETURN_IF_ERROR(session.status());
  comm::CommOptions comm_options;
  comm_options.timeout_ms = timeout_s * 1000.0;
  PARITY_ASSIGN_OR_RETURN(auto world, comm::make_mpi_communicator(comm_options));
  const std::string where = "rank " + std::to_string(world->rank()) + " of " + std::to_string(world->size());
  if (!flags.plan.empty()) {
    PARITY_ASSIGN_OR_RETURN(const plan::Plan plan, plan::read_plan_file(flags.plan));
    auto placement = train::placement_from_plan(plan, options.spec, world->size());
    if (!placement.is_ok()) return placement.status().with_context("--plan " + flags.plan);
    dist.placement = *placement;
  }
  const bool is_root = world->rank() == 0;
  if (!is_root) options.on_progress = nullptr;
  dist.train = options;
  if (is_root) {
    // Only the plan's placement (all four types) is applied: batch and precision come from the
    // flags and the spec.
    std::printf("distributed: %d ranks over MPI, placement %s, gradient chunks %s\n", world->size(),
                flags.plan.empty() ? "greedy table-wise by bytes" : (flags.plan + " (its table placement only)").c_str(),
                chunks == 0 ? "one per rank" : std::to_string(chunks).c_str());
    std::fflush(stdout);
  }
  train::DenseReductionTimings timings;
  auto summary = train::train_distributed(dist, *world, &timings);
  if (!summary.is_ok() && !world->failure().is_ok()) {
    exit_without_finalize(summary.status().with_context(where));
  }
  if (!summary.is_ok()) return summary.status().with_context(where);
  if (is_root) print_summary(*summary);
  if (is_root && flags.report_timings) {
    const bool is_chunked = dist.gradient_chunks > 0 || options.determinism == train::Determinism::kBitwise;
    if (is_chunked) {
      std::printf("reduction timings: none (gradient chunks gather the dense gradient in one all_gather)\n");
    } else {
      std::printf("reduction timings (rank 0, %s, %d bucket(s) of <= %lld B, mean of %lld steps): dense backward "
                  "%.3f ms/step, exposed communication %.3f ms/step (waits %.3f), buckets in flight %.3f ms/step, %.1f started during the backward\n",
                  flags.dense_reduction.c_str(), timings.buckets, static_cast<long long>(dist.bucket_bytes),
                  static_cast<long long>(timings.steps), timings.backward_ms, timings.exposed_comm_ms,
                  timings.wait_ms, timings.in_flight_ms, timings.started_during_backward);
    }
  }
  return Status::ok();
#endif
}

}  // namespace parity::cli
