// run_comm_bench_command (parity/comm/bench_run.hpp).
#include "parity/comm/bench_run.hpp"

namespace parity::comm {
namespace {

Status fit_and_write(const CommBenchReport& report, const std::string& calibration_out, const std::string& results_path,
                     const std::function<void(const std::string&)>& print) {
  PARITY_ASSIGN_OR_RETURN(const std::string text, fit_and_write_comm_calibration(report, calibration_out, results_path));
  print(text);
  return Status::ok();
}

}  // namespace

Status run_comm_bench_command(const CommBenchRun& run, const std::function<void(const std::string&)>& print) {
  if (!run.fit_from.empty()) {
    PARITY_ASSIGN_OR_RETURN(const CommBenchReport report, read_comm_bench_json(run.fit_from));
    return fit_and_write(report, run.calibration_out, run.fit_from, print);
  }
  PARITY_ASSIGN_OR_RETURN(const CommBenchOptions options, comm_bench_options_from_settings(run.settings));
  CommOptions comm_options;
  comm_options.timeout_ms = run.timeout_ms;
  PARITY_ASSIGN_OR_RETURN(CommSession session, open_comm_session(run.backend, comm_options));
  Communicator& communicator = *session.collective;
  PARITY_ASSIGN_OR_RETURN(const CommBenchReport report, run_comm_bench(communicator, options));
  if (communicator.rank() != 0) return Status::ok();
  print(comm_bench_table(report));
  if (!run.out.empty()) {
    PARITY_RETURN_IF_ERROR(write_comm_bench_json(report, run.out));
    print("wrote " + run.out + "\n");
  }
  return run.calibration_out.empty() ? Status::ok() : fit_and_write(report, run.calibration_out, run.out, print);
}

}  // namespace parity::comm
