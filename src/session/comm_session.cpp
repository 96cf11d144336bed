// open_comm_session (parity/comm/session.hpp). PARITY_HAS_MPI and PARITY_HAS_NCCL come from the
// parity_mpi and parity_nccl targets this library links when the build has them.
#include "parity/comm/session.hpp"

#ifdef PARITY_HAS_MPI
#include "parity/comm/mpi.hpp"
#endif
#ifdef PARITY_HAS_NCCL
#include "parity/comm/nccl.hpp"
#endif

namespace parity::comm {
namespace {

#ifdef PARITY_HAS_MPI
constexpr bool kHasMpi = true;

Status start_mpi(CommSession& session) {
  auto mpi = std::make_shared<MpiSession>();
  PARITY_RETURN_IF_ERROR(mpi->status());
  session.mpi = mpi;
  return Status::ok();
}
#else
constexpr bool kHasMpi = false;
#endif

#ifdef PARITY_HAS_NCCL
constexpr bool kHasNccl = true;
#else
constexpr bool kHasNccl = false;
#endif

}  // namespace

bool is_backend_built(std::string_view backend) {
  return backend == "local" || (backend == "mpi" && kHasMpi) || (backend == "nccl" && kHasNccl);
}

std::string default_comm_backend() { return kHasMpi ? "mpi" : "local"; }

Result<CommSession> open_comm_session(std::string_view backend, const CommOptions& options) {
  CommSession session;
  if (backend == "local") {
    session.host = make_local_communicator(options);
    session.collective = make_local_communicator(options);
    return session;
  }
  if (backend == "mpi") {
#ifndef PARITY_HAS_MPI
    return unsupported("--backend mpi: this build has no MPI communicator (install libopenmpi-dev and reconfigure)");
#else
    PARITY_RETURN_IF_ERROR(start_mpi(session));
    PARITY_ASSIGN_OR_RETURN(session.collective, make_mpi_communicator(options));
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
  PARITY_ASSIGN_OR_RETURN(session.host, make_mpi_communicator(options));
#else
  session.host = make_local_communicator(options);  // one rank: no MPI in this build
#endif
  PARITY_ASSIGN_OR_RETURN(session.collective, make_nccl_communicator(*session.host, -1, options));
  return session;
#endif
}

}  // namespace parity::comm
