// `parity bench train --comm nccl|local`: the distributed training step against the single-process
// step on the same resident batch (train::benchmark_distributed_step), alternating rounds, medians,
// the overhead in percent; rank 0 prints and writes the JSON.
#include "cmd_bench_train_comm.hpp"

#include <cstdio>

#include "comm_session.hpp"
#include "parity/train/gpu_dist_trainer.hpp"

namespace parity::cli {

Status run_bench_train_comm(const model::ModelSpec& spec, const train::StepBenchOptions& options,
                            const std::string& backend, int rounds, const std::string& out) {
  const DeviceKind wanted = backend == "nccl" ? DeviceKind::kGpu : DeviceKind::kCpu;
  PARITY_CHECK_ARG(options.device == wanted, "--device: ", device_kind_name(options.device), " does not go with ",
                   "--comm ", backend, " (", backend == "nccl" ? "use --device cuda" : "use --device cpu", ")");
  PARITY_ASSIGN_OR_RETURN(CommSession session, open_comm_session(backend, {}));
  PARITY_ASSIGN_OR_RETURN(const auto report,
                          train::benchmark_distributed_step(spec, options, *session.collective, rounds));
  if (session.collective->rank() != 0) return Status::ok();
  const double batch = static_cast<double>(options.batch_size);
  std::printf("bench train --comm %s: %s %s, batch %lld, %d rank(s), %zu timed steps each in %d alternating rounds\n",
              report.backend.c_str(), spec.name.c_str(), std::string(model::dense_precision_name(spec.precision)).c_str(),
              static_cast<long long>(options.batch_size), report.ranks, report.distributed_step_ms.size(), rounds);
  if (!report.single_step_ms.empty()) {
    std::printf("single process: %.3f ms/step (%.3f M samples/s)\n", report.median_single_ms,
                batch / (report.median_single_ms * 1e-3) / 1e6);
  }
  std::printf("distributed:    %.3f ms/step (%.3f M samples/s)\n", report.median_distributed_ms,
              batch / (report.median_distributed_ms * 1e-3) / 1e6);
  if (!report.single_step_ms.empty()) {
    std::printf("overhead: %+.2f%% (medians); first-step loss difference %.3g (0: the same bits)\n",
                report.overhead_percent, report.first_loss_difference);
  }
  if (out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(train::write_dist_step_bench_json(report, spec, options, out));
  std::printf("wrote %s\n", out.c_str());
  return Status::ok();
}

}  // namespace parity::cli
