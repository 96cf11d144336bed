// NCCL communicator (GPU ranks, one per process). Non-blocking communicator (config.blocking = 0):
// every NCCL call may return ncclInProgress and is then polled with ncclCommGetAsyncError against
// the deadline; synchronize(stream) polls cudaStreamQuery and the async error the same way. On a
// deadline or an NCCL error the communicator is aborted (ncclCommAbort), which releases peers'
// kernels, and the call returns kCommError naming the collective and rank.
// all_to_all(v) are grouped ncclSend/ncclRecv (as nccl-tests does). bf16/fp16 reductions use
// NCCL's own (per-step rounding in the type); rank-order reductions are host-only for now.
// start_all_reduce runs on a communication stream of its own, ordered after the caller's stream
// by an event; wait() orders the caller's stream after it by another.
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <thread>

#include "backends/cuda/common/cuda_try.hpp"
#include "parity/comm/nccl.hpp"

namespace parity::comm {
namespace {

using Clock = std::chrono::steady_clock;

Status nccl_error(ncclResult_t result, const char* call) {
  return {StatusCode::kCommError,
          parity::detail::concat(call, " failed: ", ncclGetErrorString(result))};
}

ncclDataType_t nccl_datatype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return ncclFloat32;
    case DType::kF64:
      return ncclFloat64;
    case DType::kBF16:
      return ncclBfloat16;
    case DType::kF16:
      return ncclFloat16;
    case DType::kI32:
      return ncclInt32;
    case DType::kI64:
      return ncclInt64;
    default:
      return ncclUint8;
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAvg:
      return ncclAvg;
    case ReduceOp::kMax:
      return ncclMax;
  }
  return ncclSum;
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(CommOptions options, int rank, int size, int device)
      : Communicator(std::move(options)), rank_(rank), size_(size), device_(device) {}
  ~NcclCommunicator() override {
    cudaSetDevice(device_);
    if (comm_ != nullptr && !is_aborted_) {
      // A healthy communicator is destroyed; a failed one aborted, which never waits for peers.
      if (failure().is_ok()) {
        ncclCommDestroy(comm_);
      } else {
        ncclCommAbort(comm_);
      }
    }
    if (barrier_scratch_ != nullptr) cudaFree(barrier_scratch_);
    if (inputs_ready_ != nullptr) cudaEventDestroy(inputs_ready_);
    if (comm_stream_ != nullptr) cudaStreamDestroy(comm_stream_);
  }

  // Creates the NCCL communicator with the id from rank 0, within the timeout.
  Status init(const ncclUniqueId& id) {
    PARITY_CUDA_TRY(cudaSetDevice(device_));
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t result = ncclCommInitRankConfig(&comm_, size_, id, rank_, &config);
    if (result != ncclSuccess && result != ncclInProgress)
      return nccl_error(result, "ncclCommInitRankConfig");
    PARITY_RETURN_IF_ERROR(settle("ncclCommInitRankConfig"));
    PARITY_CUDA_TRY(cudaMalloc(&barrier_scratch_, sizeof(float)));
    return Status::ok();
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend_name() const override { return "nccl"; }
  DeviceKind buffer_device() const override { return DeviceKind::kGpu; }

  Result<void*> allocate_buffer(std::int64_t bytes) override {
    PARITY_CUDA_TRY(cudaSetDevice(device_));
    void* buffer = nullptr;
    PARITY_CUDA_TRY(cudaMalloc(&buffer, static_cast<std::size_t>(bytes > 0 ? bytes : 1)));
    return buffer;
  }
  void free_buffer(void* buffer) override {
    if (buffer != nullptr) cudaFree(buffer);
  }
  Status copy_from_host(void* buffer, const void* host, std::int64_t bytes) override {
    PARITY_CUDA_TRY(
        cudaMemcpy(buffer, host, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice));
    return Status::ok();
  }
  Status copy_to_host(void* host, const void* buffer, std::int64_t bytes) override {
    PARITY_CUDA_TRY(
        cudaMemcpy(host, buffer, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost));
    return Status::ok();
  }

 protected:
  Status execute(const CollectiveProblem& problem, const void* send, void* recv,
                 void* stream) override {
    const bool is_reduction = problem.collective == Collective::kAllReduce ||
                              problem.collective == Collective::kReduceScatter;
    if (is_reduction && options().reduction_order == ReductionOrder::kRankOrder &&
        problem.op != ReduceOp::kMax) {
      return unsupported(
          "reduction_order: rank_order is implemented for host communicators only (local, mpi)");
    }
    PARITY_CUDA_TRY(cudaSetDevice(device_));
    auto* s = static_cast<cudaStream_t>(stream);
    const ncclDataType_t type = nccl_datatype(problem.dtype);
    const auto count = static_cast<std::size_t>(problem.count);
    ncclResult_t result = ncclSuccess;
    switch (problem.collective) {
      case Collective::kAllReduce:
        result = ncclAllReduce(send, recv, count, type, nccl_op(problem.op), comm_, s);
        break;
      case Collective::kReduceScatter:
        result = ncclReduceScatter(send, recv, count, type, nccl_op(problem.op), comm_, s);
        break;
      case Collective::kAllGather:
        result = ncclAllGather(send, recv, count, type, comm_, s);
        break;
      case Collective::kBroadcast:
        result = ncclBroadcast(recv, recv, count, type, problem.root, comm_, s);
        break;
      case Collective::kAllToAll:
      case Collective::kAllToAllv:
        result = grouped_all_to_all(problem, send, recv, s);
        break;
      case Collective::kBarrier: {
        // NCCL has no barrier: a one-element all_reduce, waited for.
        result =
            ncclAllReduce(barrier_scratch_, barrier_scratch_, 1, ncclFloat32, ncclSum, comm_, s);
        if (result != ncclSuccess && result != ncclInProgress)
          return nccl_error(result, "ncclAllReduce (barrier)");
        PARITY_RETURN_IF_ERROR(settle("ncclAllReduce (barrier)"));
        return wait_stream(stream);
      }
    }
    if (result != ncclSuccess && result != ncclInProgress)
      return abort_with(nccl_error(result, "NCCL collective"));
    return settle(collective_name(problem.collective).data());
  }

  // start_all_reduce: the all_reduce runs on the communicator's own stream once the work queued
  // on `stream` so far is done (an event), so the caller's stream goes on computing meanwhile.
  Result<std::unique_ptr<BackendRequest>> start(const CollectiveProblem& problem, const void* send,
                                                void* recv, void* stream,
                                                std::int64_t /*call*/) override {
    if (options().reduction_order == ReductionOrder::kRankOrder && problem.op != ReduceOp::kMax) {
      return unsupported(
          "reduction_order: rank_order is implemented for host communicators only (local, mpi)");
    }
    PARITY_CUDA_TRY(cudaSetDevice(device_));
    if (comm_stream_ == nullptr) {
      PARITY_CUDA_TRY(cudaStreamCreateWithFlags(&comm_stream_, cudaStreamNonBlocking));
      PARITY_CUDA_TRY(cudaEventCreateWithFlags(&inputs_ready_, cudaEventDisableTiming));
    }
    auto* caller = static_cast<cudaStream_t>(stream);
    PARITY_CUDA_TRY(cudaEventRecord(inputs_ready_, caller));
    PARITY_CUDA_TRY(cudaStreamWaitEvent(comm_stream_, inputs_ready_, 0));
    const ncclResult_t result =
        ncclAllReduce(send, recv, static_cast<std::size_t>(problem.count),
                      nccl_datatype(problem.dtype), nccl_op(problem.op), comm_, comm_stream_);
    if (result != ncclSuccess && result != ncclInProgress)
      return abort_with(nccl_error(result, "ncclAllReduce (started)"));
    PARITY_RETURN_IF_ERROR(settle("ncclAllReduce (started)"));
    cudaEvent_t done = nullptr;
    PARITY_CUDA_TRY(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    const cudaError_t recorded = cudaEventRecord(done, comm_stream_);
    if (recorded != cudaSuccess) {
      cudaEventDestroy(done);
      return abort_with(device_error("cudaEventRecord failed: ", cudaGetErrorString(recorded)));
    }
    return std::unique_ptr<BackendRequest>(std::make_unique<Request>(*this, done, caller));
  }

  // Polls the stream and NCCL's async error until the stream drains or the deadline passes.
  Status wait_stream(void* stream) override {
    const auto deadline = deadline_from_now();
    while (true) {
      const cudaError_t query = cudaStreamQuery(static_cast<cudaStream_t>(stream));
      if (query == cudaSuccess) return Status::ok();
      if (query != cudaErrorNotReady) {
        return abort_with(device_error("cudaStreamQuery failed: ", cudaGetErrorString(query)));
      }
      ncclResult_t async_error = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async_error);
      if (async_error != ncclSuccess && async_error != ncclInProgress) {
        return abort_with(nccl_error(async_error, "ncclCommGetAsyncError"));
      }
      if (options().timeout_ms > 0.0 && Clock::now() >= deadline) {
        return abort_with({StatusCode::kCommError,
                           parity::detail::concat(
                               "stream not drained after ", options().timeout_ms,
                               " ms (a peer rank is lost or hung); NCCL communicator aborted")});
      }
      std::this_thread::yield();
    }
  }

 private:
  // A started all_reduce: `done` recorded on the communicator's stream after it. wait() makes the
  // caller's stream wait for it (the host does not block; synchronize(stream) reports errors and
  // the deadline); test() queries the event and NCCL's async error.
  class Request final : public BackendRequest {
   public:
    Request(NcclCommunicator& comm, cudaEvent_t done, cudaStream_t caller)
        : comm_(comm), done_(done), caller_(caller) {}
    ~Request() override { cudaEventDestroy(done_); }
    Result<bool> test() override {
      const cudaError_t query = cudaEventQuery(done_);
      if (query == cudaSuccess) return true;
      if (query != cudaErrorNotReady) {
        return comm_.abort_with(device_error("cudaEventQuery failed: ", cudaGetErrorString(query)));
      }
      ncclResult_t async_error = ncclSuccess;
      ncclCommGetAsyncError(comm_.comm_, &async_error);
      if (async_error != ncclSuccess && async_error != ncclInProgress) {
        return comm_.abort_with(nccl_error(async_error, "ncclCommGetAsyncError"));
      }
      return false;
    }
    Status wait() override {
      const cudaError_t waited = cudaStreamWaitEvent(caller_, done_, 0);
      if (waited != cudaSuccess) {
        return comm_.abort_with(
            device_error("cudaStreamWaitEvent failed: ", cudaGetErrorString(waited)));
      }
      return Status::ok();
    }

   private:
    NcclCommunicator& comm_;
    cudaEvent_t done_;
    cudaStream_t caller_;
  };

  ncclResult_t grouped_all_to_all(const CollectiveProblem& problem, const void* send, void* recv,
                                  cudaStream_t s) {
    const auto element_bytes = dtype_size_bytes(problem.dtype);
    const ncclDataType_t type = nccl_datatype(problem.dtype);
    ncclResult_t result = ncclGroupStart();
    for (int peer = 0; peer < size_ && (result == ncclSuccess || result == ncclInProgress);
         ++peer) {
      const AllToAllvLayout* layout = problem.layout;
      const std::int64_t send_count = layout ? layout->send_counts[peer] : problem.count;
      const std::int64_t send_displ = layout ? layout->send_displs[peer] : problem.count * peer;
      const std::int64_t recv_count = layout ? layout->recv_counts[peer] : problem.count;
      const std::int64_t recv_displ = layout ? layout->recv_displs[peer] : problem.count * peer;
      if (send_count > 0) {
        result = ncclSend(
            static_cast<const char*>(send) + send_displ * static_cast<std::int64_t>(element_bytes),
            static_cast<std::size_t>(send_count), type, peer, comm_, s);
      }
      if (recv_count > 0 && (result == ncclSuccess || result == ncclInProgress)) {
        result = ncclRecv(
            static_cast<char*>(recv) + recv_displ * static_cast<std::int64_t>(element_bytes),
            static_cast<std::size_t>(recv_count), type, peer, comm_, s);
      }
    }
    const ncclResult_t end = ncclGroupEnd();
    return result == ncclSuccess || result == ncclInProgress ? end : result;
  }

  Clock::time_point deadline_from_now() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double, std::milli>(options().timeout_ms));
  }

  // A non-blocking communicator's call may still be in progress: wait until NCCL says it is done.
  Status settle(const char* call) {
    const auto deadline = deadline_from_now();
    while (true) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t query = ncclCommGetAsyncError(comm_, &state);
      if (query != ncclSuccess) return abort_with(nccl_error(query, "ncclCommGetAsyncError"));
      if (state == ncclSuccess) return Status::ok();
      if (state != ncclInProgress) return abort_with(nccl_error(state, call));
      if (options().timeout_ms > 0.0 && Clock::now() >= deadline) {
        return abort_with(
            {StatusCode::kCommError, parity::detail::concat(call, " still in progress after ",
                                                            options().timeout_ms, " ms; aborted")});
      }
      std::this_thread::yield();
    }
  }

  Status abort_with(Status status) {
    if (comm_ != nullptr && !is_aborted_) {
      ncclCommAbort(comm_);
      is_aborted_ = true;
    }
    if (status.code() != StatusCode::kCommError) return {StatusCode::kCommError, status.message()};
    return status;
  }

  int rank_;
  int size_;
  int device_;
  ncclComm_t comm_ = nullptr;
  bool is_aborted_ = false;
  float* barrier_scratch_ = nullptr;
  cudaStream_t comm_stream_ = nullptr;  // started collectives (created on the first start)
  cudaEvent_t inputs_ready_ = nullptr;  // recorded on the caller's stream before each start
};

}  // namespace

Result<std::unique_ptr<Communicator>> make_nccl_communicator(Communicator& bootstrap, int device,
                                                             CommOptions options) {
  PARITY_CHECK_ARG(bootstrap.buffer_device() == DeviceKind::kCpu,
                   "bootstrap: must be a host communicator (", bootstrap.backend_name(),
                   " is not)");
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    return unsupported("nccl communicator: no CUDA device visible");
  }
  if (device < 0) device = bootstrap.rank() % device_count;
  PARITY_CHECK_ARG(device < device_count, "device: ", device, " is out of range [0, ", device_count,
                   ")");
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) {
    const ncclResult_t result = ncclGetUniqueId(&id);
    if (result != ncclSuccess) return nccl_error(result, "ncclGetUniqueId");
  }
  // The id is 128 bytes: broadcast as 16 int64 over the host communicator.
  static_assert(sizeof(ncclUniqueId) % sizeof(std::int64_t) == 0);
  PARITY_RETURN_IF_ERROR(
      bootstrap.broadcast(&id, sizeof(id) / sizeof(std::int64_t), DType::kI64, 0));
  auto comm = std::make_unique<NcclCommunicator>(std::move(options), bootstrap.rank(),
                                                 bootstrap.size(), device);
  PARITY_RETURN_IF_ERROR(comm->init(id));
  return std::unique_ptr<Communicator>(std::move(comm));
}

}  // namespace parity::comm
