// `parity bench train --comm nccl|local`: the distributed training step against the single-process
// step on the same resident batch (train::benchmark_distributed_step), alternating rounds, medians,
// the overhead in percent; rank 0 prints and writes the JSON.
#include "cmd_bench_train_comm.hpp"

#include <cstdio>

#include "comm_session.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "parity/train/report_text.hpp"

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
  std::fputs(train::dist_step_bench_text(report, spec, options, rounds).c_str(), stdout);
  if (out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(train::write_dist_step_bench_json(report, spec, options, out));
  std::printf("wrote %s\n", out.c_str());
  return Status::ok();
}

}  // namespace parity::cli
