// open_comm_session (comm_session.hpp).
#include "comm_session.hpp"

#ifdef PARITY_HAS_MPI
#include "parity/comm/mpi.hpp"
#endif
#ifdef PARITY_HAS_NCCL
#include "parity/comm/nccl.hpp"
#endif

namespace parity::cli {
namespace {

#ifdef PARITY_HAS_MPI
Status start_mpi(CommSession& session) {
  auto mpi = std::make_shared<comm::MpiSession>();
  PARITY_RETURN_IF_ERROR(mpi->status());
  session.mpi = mpi;
  return Status::ok();
}
#endif

}  // namespace

Result<CommSession> open_comm_session(const std::string& backend, const comm::CommOptions& options) {
  CommSession session;
  if (backend == "local") {
    session.host = comm::make_local_communicator(options);
    session.collective = comm::make_local_communicator(options);
    return session;
  }
  if (backend == "mpi") {
#ifndef PARITY_HAS_MPI
    return unsupported("--backend mpi: this build has no MPI communicator (install libopenmpi-dev and reconfigure)");
#else
    PARITY_RETURN_IF_ERROR(start_mpi(session));
    PARITY_ASSIGN_OR_RETURN(session.collective, comm::make_mpi_communicator(options));
    return session;
#endif
  }
  if (backend != "nccl") return invalid_argument("--backend: '", backend, "' is not one of mpi, nccl, local");
#ifndef PARITY_HAS_NCCL
  return unsupported("--backend nccl: this build has no NCCL communicator (configure with the cuda preset, whose "
                     "toolkit ships NCCL)");
#else
#ifdef PARITY_HAS_MPI
  PARITY_RETURN_IF_ERROR(start_mpi(session));
  PARITY_ASSIGN_OR_RETURN(session.host, comm::make_mpi_communicator(options));
#else
  session.host = comm::make_local_communicator(options);  // one rank: no MPI in this build
#endif
  PARITY_ASSIGN_OR_RETURN(session.collective, comm::make_nccl_communicator(*session.host, -1, options));
  return session;
#endif
}

}  // namespace parity::cli
