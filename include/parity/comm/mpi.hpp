// The MPI backend (CPU ranks, launched with mpirun): declared here with no MPI type, implemented
// in the parity_mpi library, which only builds where CMake finds MPI (PARITY_HAS_MPI is then
// defined for its users). Debian's Open MPI 4.1 has no ULFM: when a rank dies, mpirun terminates
// the job (naming the lost rank) and survivors may be killed before they can report; a rank that
// hangs instead is reported by the collective timeout (docs/comm.md, "Faults").
#pragma once

#include <memory>

#include "parity/comm/communicator.hpp"

namespace parity::comm {

/// Starts MPI (MPI_Init_thread, MPI_THREAD_FUNNELED) unless it is already running, and finalizes it
/// on destruction if it started it. Communicators must be destroyed before it.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  /// ok, or kCommError when MPI could not start.
  const Status& status() const { return status_; }
  int world_rank() const { return world_rank_; }
  int world_size() const { return world_size_; }

 private:
  Status status_;
  bool is_owner_ = false;
  int world_rank_ = 0;
  int world_size_ = 1;
};

/// A communicator over all ranks of MPI_COMM_WORLD (a duplicate, errors returned rather than fatal:
/// MPI_ERRORS_RETURN). MPI must be running (an MpiSession). With options.timeout_ms > 0 every
/// collective is non-blocking and polled against the deadline; 0 uses the blocking calls.
Result<std::unique_ptr<Communicator>> make_mpi_communicator(CommOptions options = {});
/// The same over MPI_COMM_WORLD's ranks [0, num_ranks) (MPI_Comm_split; every world rank calls
/// it): the communicator on those ranks, null on the others (e.g. a run re-sharded onto fewer
/// ranks inside one mpirun job).
Result<std::unique_ptr<Communicator>> make_mpi_communicator_of_first_ranks(int num_ranks,
                                                                         CommOptions options = {});

}  // namespace parity::comm
