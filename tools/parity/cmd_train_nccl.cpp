// `parity train --distributed --backend nccl`: the NCCL communicator (bootstrapped over MPI, or
// the local communicator for one rank), the placement (from --plan or greedy), and
// train::train_distributed_gpu. Rank 0 prints.
#include "cmd_train_nccl.hpp"

#include <cstdio>
#include <cstdlib>

#include "comm_session.hpp"
#include "commands.hpp"
#include "parity/core/parse.hpp"
#include "parity/plan/plan_io.hpp"
#include "parity/train/gpu_dist_trainer.hpp"

namespace parity::cli {

Status run_gpu_distributed_train(train::TrainOptions options, const DistributedTrainFlags& flags,
                                 const std::string& backend,
                                 const std::function<void(const train::TrainSummary&)>& print_summary) {
  train::DistTrainOptions dist;
  PARITY_ASSIGN_OR_RETURN(const std::int64_t chunks, parse_int64(flags.gradient_chunks, "--gradient-chunks", 0, 1 << 20));
  dist.gradient_chunks = static_cast<int>(chunks);
  PARITY_ASSIGN_OR_RETURN(const double timeout_s, parse_double(flags.comm_timeout, "--comm-timeout"));
  PARITY_CHECK_ARG(timeout_s > 0, "--comm-timeout: ", timeout_s, " must be > 0 seconds");
  // The GPU trainer's buckets are its own (docs/training.md, "Distributed on GPUs").
  PARITY_CHECK_ARG(flags.dense_reduction == "overlapped" && flags.bucket_bytes == "4MiB" && !flags.report_timings,
                   "--dense-reduction/--bucket-bytes/--reduction-timings: only with --backend mpi, not ", backend);
  const DeviceKind wanted = backend == "nccl" ? DeviceKind::kGpu : DeviceKind::kCpu;
  PARITY_CHECK_ARG(options.device == wanted, "--device: ", device_kind_name(options.device), " does not go with ",
                   "--backend ", backend, " (", backend == "nccl" ? "use --device cuda" : "use --device cpu", ")");
  comm::CommOptions comm_options;
  comm_options.timeout_ms = timeout_s * 1000.0;
  PARITY_ASSIGN_OR_RETURN(CommSession session, open_comm_session(backend, comm_options));
  comm::Communicator& world = *session.collective;
  const std::string where = "rank " + std::to_string(world.rank()) + " of " + std::to_string(world.size());
  if (!flags.plan.empty()) {
    PARITY_ASSIGN_OR_RETURN(const plan::Plan plan, plan::read_plan_file(flags.plan));
    auto placement = train::placement_from_plan(plan, options.spec, world.size());
    if (!placement.is_ok()) return placement.status().with_context("--plan " + flags.plan);
    dist.placement = *placement;
  }
  const bool is_root = world.rank() == 0;
  if (!is_root) options.on_progress = nullptr;
  dist.train = options;
  if (is_root) {
    std::printf("distributed: %d ranks over %s (one %s each), placement %s\n", world.size(),
                std::string(world.backend_name()).c_str(), backend == "nccl" ? "GPU" : "CPU process",
                flags.plan.empty() ? "greedy table-wise by bytes" : (flags.plan + " (its tables only)").c_str());
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
