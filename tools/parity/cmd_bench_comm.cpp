// `parity bench comm` (run as `mpirun -np R parity bench comm ...`): collectives swept over sizes
// in nccl-tests conventions (checked, then timed; algbw/busbw), results JSON, and the planner's α–β
// calibration (--calibration-out, or --fit-from RESULTS.json without running). Rank 0 prints.
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "parity/comm/bench.hpp"
#include "parity/comm/session.hpp"

namespace parity::cli {
namespace {

struct CommArgs {
  std::string backend = comm::default_comm_backend();
  comm::CommBenchSettings settings;
  std::string out, calibration_out, fit_from;
  double timeout_ms = 600000.0;
};

Status fit_and_write(const comm::CommBenchReport& report, const std::string& calibration_out,
                    const std::string& results_path) {
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          comm::fit_and_write_comm_calibration(report, calibration_out, results_path));
  std::fputs(text.c_str(), stdout);
  return Status::ok();
}

Status run_bench_comm(const CommArgs& args) {
  if (!args.fit_from.empty()) {
    PARITY_ASSIGN_OR_RETURN(const auto report, comm::read_comm_bench_json(args.fit_from));
    return fit_and_write(report, args.calibration_out, args.fit_from);
  }
  PARITY_ASSIGN_OR_RETURN(const comm::CommBenchOptions options, comm::comm_bench_options_from_settings(args.settings));
  comm::CommOptions comm_options;
  comm_options.timeout_ms = args.timeout_ms;
  PARITY_ASSIGN_OR_RETURN(comm::CommSession session, comm::open_comm_session(args.backend, comm_options));
  comm::Communicator& communicator = *session.collective;
  PARITY_ASSIGN_OR_RETURN(const auto report, comm::run_comm_bench(communicator, options));
  if (communicator.rank() != 0) return Status::ok();
  std::printf("%s", comm::comm_bench_table(report).c_str());
  if (!args.out.empty()) {
    PARITY_RETURN_IF_ERROR(comm::write_comm_bench_json(report, args.out));
    std::printf("wrote %s\n", args.out.c_str());
  }
  return args.calibration_out.empty() ? Status::ok()
                                      : fit_and_write(report, args.calibration_out, args.out);
}

}  // namespace

void add_bench_comm_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<CommArgs>();
  auto* cmd =
      bench.add_subcommand("comm",
                           "Collectives (nccl-tests conventions) and the planner's alpha-beta fit; "
                           "run under mpirun -np R");
  comm::CommBenchSettings& settings = args->settings;
  const auto flag = [cmd](const char* name, auto& value, const char* help) {
    cmd->add_option(name, value, help);
  };
  flag("--backend", args->backend, "local, mpi (CPU ranks) or nccl (GPUs)");
  flag("--min-bytes", settings.min_bytes, "smallest size S (e.g. 8, 1KiB)");
  flag("--max-bytes", settings.max_bytes, "largest size S");
  flag("--step-factor", settings.step_factor, "size multiplier between steps (> 1)");
  flag("--collectives", settings.collectives, "comma list (also: broadcast)");
  flag("--placement", settings.placement, "both, out_of_place or in_place");
  flag("--dtype", settings.dtype, "fp32, fp64, bf16, fp16, int32, int64");
  flag("--op", settings.op, "sum or max");
  flag("--warmup", settings.warmup, "untimed calls per size");
  flag("--reps", settings.repetitions, "timed repetitions per size (median reported)");
  flag("--timeout-ms", args->timeout_ms, "a collective not done by then fails (0: no deadline)");
  flag("--out", args->out, "results JSON with provenance (rank 0 writes)");
  flag("--calibration-out", args->calibration_out,
       "fit alpha-beta, write the calibration JSON ('auto': <data dir>/calibration/comm_*.json)");
  flag("--fit-from", args->fit_from, "fit a results JSON written earlier (no run)");
  cmd->callback([args, &outcome] { outcome.status = run_bench_comm(*args); });
}

}  // namespace parity::cli
