// `parity bench comm` as one call, for the CLI and bindings: the sweep of parity/comm/bench.hpp on
// the ranks of a communicator opened by name (parity/comm/session.hpp), rank 0 reporting, and the
// planner's alpha-beta calibration fitted from it or from a results JSON written earlier.
// Implemented in parity_comm_session.
#pragma once

#include <functional>
#include <string>

#include "parity/comm/bench.hpp"
#include "parity/comm/session.hpp"

namespace parity::comm {

struct CommBenchRun {
  std::string backend = default_comm_backend();  // mpi, nccl or local
  CommBenchSettings settings;
  std::string out;              // results JSON (rank 0 writes), or empty
  std::string calibration_out;  // calibration JSON ('auto': <data dir>/calibration/comm_*.json), or empty
  std::string fit_from;         // fit this results JSON instead of running
  double timeout_ms = 600000.0;  // a collective not done by then fails (0: no deadline)
};

/// With fit_from: fits it and writes calibration_out (no communicator starts). Otherwise runs the
/// sweep on every rank; rank 0 prints the table, writes `out` ("wrote OUT") and, with
/// calibration_out, the fit. Other ranks print nothing.
Status run_comm_bench_command(const CommBenchRun& run, const std::function<void(const std::string&)>& print);

}  // namespace parity::comm
