// Communicator::Pending: the bookkeeping of one collective started by start_all_reduce and not yet
// waited for (src/comm/async_collective.cpp). Private to the comm library.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "parity/comm/communicator.hpp"

namespace parity::comm {

struct Communicator::Pending {
  std::int64_t call = 0;
  CollectiveProblem problem;  // as the caller asked (dtype, op)
  const void* send = nullptr;
  void* recv = nullptr;
  std::int64_t bytes = 0;  // of send and of recv
  // bf16/fp16: the fp32 copies the backend reduces (accumulation in fp32, one rounding at the end).
  std::vector<float> wide_send, wide_recv;
  std::unique_ptr<BackendRequest> request;  // null once complete
  bool has_host_epilogue = false;           // avg's division / narrowing left for completion
};

}  // namespace parity::comm
