// `parity bench comm` (run as `mpirun -np R parity bench comm ...`): collectives swept over sizes
// in nccl-tests conventions (checked, then timed; algbw/busbw), results JSON, and the planner's α–β
// calibration (--calibration-out, or --fit-from RESULTS.json without running). Rank 0 prints.
#include <cstdio>
#include <memory>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/comm/bench.hpp"
#include "parity/comm/communicator.hpp"
#include "parity/hw/catalogue.hpp"
#ifdef PARITY_HAS_MPI
#include "parity/comm/mpi.hpp"
#endif
#ifdef PARITY_HAS_NCCL
#include "parity/comm/nccl.hpp"
#endif

namespace parity::cli {
namespace {

struct CommArgs {
#ifdef PARITY_HAS_MPI
  std::string backend = "mpi";
#else
  std::string backend = "local";
#endif
  std::string min_bytes = "8", max_bytes = "1GiB",
              collectives = "all_reduce,all_gather,reduce_scatter,all_to_all";
  std::string placement = "both", dtype = "fp32", op = "sum", out, calibration_out, fit_from;
  double step_factor = 2.0, timeout_ms = 600000.0;
  int warmup = 5, reps = 20;
};

Result<comm::CommBenchOptions> options_from(const CommArgs& args) {
  comm::CommBenchOptions options;
  PARITY_ASSIGN_OR_RETURN(options.min_bytes,
                          bench::parse_byte_count(args.min_bytes, "--min-bytes"));
  PARITY_ASSIGN_OR_RETURN(options.max_bytes,
                          bench::parse_byte_count(args.max_bytes, "--max-bytes"));
  options.step_factor = args.step_factor;
  PARITY_ASSIGN_OR_RETURN(options.collectives, comm::parse_collective_list(args.collectives));
  PARITY_ASSIGN_OR_RETURN(options.placements, comm::parse_bench_placements(args.placement));
  PARITY_ASSIGN_OR_RETURN(options.dtype, parse_dtype(args.dtype));
  PARITY_ASSIGN_OR_RETURN(options.op, comm::parse_reduce_op(args.op));
  options.warmup = args.warmup;
  options.repetitions = args.reps;
  PARITY_RETURN_IF_ERROR(options.validate());
  return options;
}

Status fit_and_write(const comm::CommBenchReport& report, const std::string& calibration_out,
                     const std::string& results_path) {
  PARITY_ASSIGN_OR_RETURN(const auto fits, comm::fit_report(report));
  for (const auto& fit : fits) std::printf("%s\n", comm::alpha_beta_summary(fit).c_str());
  const std::string host = comm::local_host_name();
  const std::string data_dir = hw::resolve_data_dir(std::nullopt).string();
  const std::string path = calibration_out == "auto" || calibration_out.empty()
                               ? comm::comm_calibration_path(data_dir, report.backend, host)
                               : calibration_out;
  PARITY_RETURN_IF_ERROR(comm::write_comm_calibration(report, fits, host, results_path, path));
  std::printf("wrote %s\n", path.c_str());
  return Status::ok();
}

// local: one process. mpi: CPU ranks. nccl: GPU ranks bootstrapped over MPI (local for one).
Result<std::unique_ptr<comm::Communicator>> make_backend(
    const std::string& backend, comm::CommOptions options,
    std::unique_ptr<comm::Communicator>& bootstrap) {
  if (backend == "local") return comm::make_local_communicator(options);
#ifdef PARITY_HAS_MPI
  if (backend == "mpi") return comm::make_mpi_communicator(options);
#endif
#ifdef PARITY_HAS_NCCL
  if (backend == "nccl") {
#ifdef PARITY_HAS_MPI
    PARITY_ASSIGN_OR_RETURN(bootstrap, comm::make_mpi_communicator(options));
#else
    bootstrap = comm::make_local_communicator(options);
#endif
    return comm::make_nccl_communicator(*bootstrap, -1, options);
  }
#endif
  (void)bootstrap;
  return unsupported("bench comm: --backend ", backend,
                     " is not built here (mpi needs MPI, nccl a CUDA build with NCCL)");
}

Status run_bench_comm(const CommArgs& args) {
  if (!args.fit_from.empty()) {
    PARITY_ASSIGN_OR_RETURN(const auto report, comm::read_comm_bench_json(args.fit_from));
    return fit_and_write(report, args.calibration_out, args.fit_from);
  }
  PARITY_ASSIGN_OR_RETURN(const comm::CommBenchOptions options, options_from(args));
#ifdef PARITY_HAS_MPI
  std::unique_ptr<comm::MpiSession> session;
  if (args.backend != "local") {
    session = std::make_unique<comm::MpiSession>();
    PARITY_RETURN_IF_ERROR(session->status());
  }
#endif
  comm::CommOptions comm_options;
  comm_options.timeout_ms = args.timeout_ms;
  std::unique_ptr<comm::Communicator> bootstrap;
  PARITY_ASSIGN_OR_RETURN(auto communicator, make_backend(args.backend, comm_options, bootstrap));
  PARITY_ASSIGN_OR_RETURN(const auto report, comm::run_comm_bench(*communicator, options));
  if (communicator->rank() != 0) return Status::ok();
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
  const auto flag = [cmd](const char* name, auto& value, const char* help) {
    cmd->add_option(name, value, help)->capture_default_str();
  };
  flag("--backend", args->backend, "local, mpi (CPU ranks) or nccl (GPUs)");
  flag("--min-bytes", args->min_bytes, "smallest size S (e.g. 8, 1KiB)");
  flag("--max-bytes", args->max_bytes, "largest size S");
  flag("--step-factor", args->step_factor, "size multiplier between steps (> 1)");
  flag("--collectives", args->collectives, "comma list (also: broadcast)");
  flag("--placement", args->placement, "both, out_of_place or in_place");
  flag("--dtype", args->dtype, "fp32, fp64, bf16, fp16, int32, int64");
  flag("--op", args->op, "sum or max");
  flag("--warmup", args->warmup, "untimed calls per size");
  flag("--reps", args->reps, "timed repetitions per size (median reported)");
  flag("--timeout-ms", args->timeout_ms, "a collective not done by then fails (0: no deadline)");
  flag("--out", args->out, "results JSON with provenance (rank 0 writes)");
  flag("--calibration-out", args->calibration_out,
       "fit alpha-beta, write the calibration JSON ('auto': <data dir>/calibration/comm_*.json)");
  flag("--fit-from", args->fit_from, "fit a results JSON written earlier (no run)");
  cmd->callback([args, &outcome] { outcome.status = run_bench_comm(*args); });
}

}  // namespace parity::cli
