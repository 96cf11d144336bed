// A distributed command's communicators, opened by backend name with what this build has: `host`
// (MPI across the processes of mpirun, or the local communicator when the build has no MPI: one
// rank) bootstraps and agrees on errors; `collective` moves the data (NCCL, one GPU per rank; MPI,
// CPU ranks; or the local communicator, whose host buffers run the same path on the CPU).
// Implemented in the parity_comm_session library, which links the MPI and NCCL communicators this
// build has; no MPI or NCCL type appears here.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "parity/comm/communicator.hpp"

namespace parity::comm {

class MpiSession;

struct CommSession {
  std::shared_ptr<MpiSession> mpi;          // when MPI is used; declared first, so it outlives both
  std::unique_ptr<Communicator> host;        // null for "mpi" (the collective is MPI's)
  std::unique_ptr<Communicator> collective;

  /// Whether a communicator reported a lost or hung peer: closing the session would then wait for
  /// that peer forever (MPI_Finalize), so a command ends its process before (docs/comm.md, "Faults").
  bool has_failed_peer() const {
    return (host && !host->failure().is_ok()) || (collective && !collective->failure().is_ok());
  }
};

/// Whether this build has the communicator: "local" always, "mpi" with parity_mpi, "nccl" with
/// parity_nccl; false for any other name.
bool is_backend_built(std::string_view backend);

/// "mpi" when this build has MPI, else "local": the default backend of a multi-rank command.
std::string default_comm_backend();

/// backend: "nccl", "mpi" or "local". kInvalidArgument for another name ("--backend: 'x' is not one
/// of mpi, nccl, local"), kUnsupported naming what this build lacks, kCommError when MPI or NCCL
/// cannot start.
Result<CommSession> open_comm_session(std::string_view backend, const CommOptions& options);

}  // namespace parity::comm
