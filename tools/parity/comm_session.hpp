// The communicators of a distributed command: `host` (MPI across the processes of mpirun, or the
// local one when this build has no MPI: one rank) bootstraps and agrees on errors; `collective`
// moves the data (NCCL, one GPU per rank; MPI, CPU ranks; or the local communicator, whose host
// buffers run the same path on the CPU).
#pragma once

#include <memory>
#include <string>

#include "parity/comm/communicator.hpp"

namespace parity::cli {

struct CommSession {
  std::shared_ptr<void> mpi;  // the MPI session (when used): outlives the communicators
  std::unique_ptr<comm::Communicator> host;        // null for "mpi" (the collective is MPI's)
  std::unique_ptr<comm::Communicator> collective;
};

/// backend: "nccl", "mpi" or "local". Errors name what this build lacks.
Result<CommSession> open_comm_session(const std::string& backend, const comm::CommOptions& options);

}  // namespace parity::cli
