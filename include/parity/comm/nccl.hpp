// The NCCL backend (GPU ranks): declared here with no NCCL or CUDA type, implemented in the
// parity_nccl library (built with the cuda preset where the toolkit ships NCCL; PARITY_HAS_NCCL is
// then defined for its users). Buffers are device pointers, collectives queue on the caller's
// stream; synchronize(stream) waits for them within the timeout, polling ncclCommGetAsyncError,
// and aborts the NCCL communicator (ncclCommAbort) when the deadline passes or NCCL reports an
// error, so a lost peer becomes a kCommError instead of a hang.
#pragma once

#include <memory>

#include "parity/comm/communicator.hpp"

namespace parity::comm {

/// One NCCL rank per process. The unique id is created by rank 0 and broadcast over `bootstrap`
/// (the MPI communicator across processes, or the local one for a single rank); ranks and size
/// are the bootstrap's. `device` < 0 picks bootstrap.rank() % device count.
Result<std::unique_ptr<Communicator>> make_nccl_communicator(Communicator& bootstrap,
                                                             int device = -1,
                                                             CommOptions options = {});

}  // namespace parity::comm
