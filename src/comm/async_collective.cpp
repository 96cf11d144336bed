// Communicator's asynchronous all_reduce: start_all_reduce / test / wait / progress. Arguments are
// validated as for the blocking calls, plus the handle (empty, foreign, already waited for) and
// overlaps with collectives still pending. Host backends widen bf16/fp16 to per-handle fp32
// copies at the start and divide (avg) and narrow at completion, as the blocking path does.
#include <algorithm>
#include <string>

#include "comm/host_reduce.hpp"
#include "comm/pending_collective.hpp"

namespace parity::comm {
namespace {

// Two buffers of `bytes` and `other_bytes` share a byte.
bool ranges_intersect(const void* a, const void* b, std::int64_t bytes, std::int64_t other_bytes) {
  if (bytes == 0 || other_bytes == 0 || a == nullptr || b == nullptr) return false;
  const auto* a0 = static_cast<const char*>(a);
  const auto* b0 = static_cast<const char*>(b);
  return a0 < b0 + other_bytes && b0 < a0 + bytes;
}

bool is_half(DType dtype) { return dtype == DType::kBF16 || dtype == DType::kF16; }

}  // namespace

Communicator::BackendRequest::~BackendRequest() = default;

Result<std::unique_ptr<Communicator::BackendRequest>> Communicator::start(
    const CollectiveProblem& problem, const void* send, void* recv, void* stream,
    std::int64_t /*call*/) {
  PARITY_RETURN_IF_ERROR(execute(problem, send, recv, stream));
  return std::unique_ptr<BackendRequest>();
}

Result<CollectiveHandle> Communicator::start_all_reduce(const void* send, void* recv,
                                                        std::int64_t count, DType dtype,
                                                        ReduceOp op, void* stream) {
  ++call_count_;
  const CollectiveProblem problem{Collective::kAllReduce, dtype, op, count, 0, nullptr};
  const std::string context = call_context(problem.collective);
  if (!failure_.is_ok()) {
    return Status(StatusCode::kCommError,
                  context + ": the communicator failed earlier (" + failure_.message() + ")");
  }
  Result<CollectiveHandle> handle = start_checked(problem, send, recv, stream);
  if (handle.is_ok()) return handle;
  Status status = handle.status().with_context(context);
  if (status.code() == StatusCode::kCommError) failure_ = status;
  return status;
}

Result<CollectiveHandle> Communicator::start_checked(const CollectiveProblem& problem,
                                                     const void* send, void* recv, void* stream) {
  PARITY_RETURN_IF_ERROR(check_arguments(problem, send, recv));
  const std::int64_t bytes =
      problem.count * static_cast<std::int64_t>(dtype_size_bytes(problem.dtype));
  for (const auto& other : pending_) {
    // The pending collective writes its recv and reads its send until it completes.
    const bool is_clash = ranges_intersect(recv, other->send, bytes, other->bytes) ||
                          ranges_intersect(recv, other->recv, bytes, other->bytes) ||
                          ranges_intersect(send, other->recv, bytes, other->bytes);
    PARITY_CHECK_ARG(!is_clash, "send/recv: overlap the buffers of ",
                     collective_name(other->problem.collective), " call #", other->call,
                     ", still pending (wait for it first)");
  }
  if (options_.check_consistency && buffer_device() == DeviceKind::kCpu && size() > 1) {
    PARITY_RETURN_IF_ERROR(check_peer_consistency(problem));
  }
  auto pending = std::make_unique<Pending>();
  pending->call = call_count_;
  pending->problem = problem;
  pending->send = send;
  pending->recv = recv;
  pending->bytes = bytes;
  const bool is_rank_order = options_.reduction_order == ReductionOrder::kRankOrder &&
                             detail::is_float_dtype(problem.dtype) && problem.op != ReduceOp::kMax;
  if (buffer_device() != DeviceKind::kCpu) {
    PARITY_ASSIGN_OR_RETURN(pending->request, start(problem, send, recv, stream, call_count_));
  } else if (is_rank_order) {
    // A chain of exchanges with a fold between them: run to completion now.
    PARITY_RETURN_IF_ERROR(run_host_reduction(problem, send, recv));
  } else {
    pending->has_host_epilogue = true;
    CollectiveProblem work = problem;
    work.op = problem.op == ReduceOp::kAvg ? ReduceOp::kSum : problem.op;
    const void* work_send = send;
    void* work_recv = recv;
    if (is_half(problem.dtype)) {
      work.dtype = DType::kF32;
      pending->wide_send.resize(static_cast<std::size_t>(problem.count));
      pending->wide_recv.resize(static_cast<std::size_t>(problem.count));
      detail::widen_to_f32(problem.dtype, send, pending->wide_send.data(), problem.count);
      work_send = pending->wide_send.data();
      work_recv = pending->wide_recv.data();
    }
    PARITY_ASSIGN_OR_RETURN(pending->request,
                            start(work, work_send, work_recv, nullptr, call_count_));
  }
  pending_.push_back(std::move(pending));
  return CollectiveHandle{id_, call_count_};
}

Result<Communicator::Pending*> Communicator::find_pending(const CollectiveHandle& handle) {
  PARITY_CHECK_ARG(handle.communicator_id != 0,
                   "handle: empty (not returned by start_all_reduce)");
  PARITY_CHECK_ARG(handle.communicator_id == id_, "handle: started by communicator #",
                   handle.communicator_id, ", not by this one (#", id_, ")");
  for (auto& pending : pending_) {
    if (pending->call == handle.call) return pending.get();
  }
  if (handle.call >= 1 && handle.call <= call_count_) {
    return invalid_argument("handle: call #", handle.call,
                            " is not pending (already waited for, or not a started collective)");
  }
  return invalid_argument("handle: call #", handle.call, " was never made (", call_count_,
                          " calls so far)");
}

// The backend's completion, then avg's division and the rounding back to bf16/fp16.
Status Communicator::finish(Pending& pending) {
  if (pending.request != nullptr) {
    PARITY_RETURN_IF_ERROR(pending.request->wait());
    pending.request.reset();
  }
  if (!pending.has_host_epilogue) return Status::ok();
  const CollectiveProblem& problem = pending.problem;
  const bool is_wide = is_half(problem.dtype);
  void* work_recv = is_wide ? static_cast<void*>(pending.wide_recv.data()) : pending.recv;
  if (problem.op == ReduceOp::kAvg) {
    detail::divide_in_place(is_wide ? DType::kF32 : problem.dtype, work_recv, problem.count,
                            size());
  }
  if (is_wide) {
    detail::narrow_from_f32(problem.dtype, pending.wide_recv.data(), pending.recv, problem.count);
  }
  return Status::ok();
}

// Drops a finished or failed collective; after a communication failure its buffers are leaked,
// since the transport may still write them.
void Communicator::forget(const Pending& pending, bool is_failed) {
  const auto at = std::find_if(pending_.begin(), pending_.end(),
                               [&](const auto& entry) { return entry.get() == &pending; });
  if (at == pending_.end()) return;
  if (is_failed) (void)at->release();
  pending_.erase(at);
}

// A failed test/wait: the message gets the call's context; a communication failure is kept.
Status Communicator::fail_pending(Pending& pending, Status status) {
  const std::string context = parity::detail::concat(
      collective_name(pending.problem.collective), " call #", pending.call, " (rank ", rank(),
      " of ", size(), ")");
  status = status.with_context(context);
  if (status.code() == StatusCode::kCommError) {
    if (failure_.is_ok()) failure_ = status;
    forget(pending, true);
  }
  return status;
}

Result<bool> Communicator::test(const CollectiveHandle& handle) {
  PARITY_ASSIGN_OR_RETURN(Pending * pending, find_pending(handle));
  if (!failure_.is_ok()) {
    return fail_pending(*pending, Status(StatusCode::kCommError, "the communicator failed earlier (" +
                                                                     failure_.message() + ")"));
  }
  if (pending->request == nullptr) return true;
  Result<bool> is_done = pending->request->test();
  if (!is_done.is_ok()) return fail_pending(*pending, is_done.status());
  if (*is_done) pending->request.reset();
  return *is_done;
}

Status Communicator::wait(const CollectiveHandle& handle) {
  Result<Pending*> found = find_pending(handle);
  if (!found.is_ok()) {
    return found.status().with_context(
        parity::detail::concat("wait (rank ", rank(), " of ", size(), ")"));
  }
  Pending& pending = **found;
  if (!failure_.is_ok()) {
    return fail_pending(pending, Status(StatusCode::kCommError, "the communicator failed earlier (" +
                                                                    failure_.message() + ")"));
  }
  Status status = finish(pending);
  if (!status.is_ok()) return fail_pending(pending, std::move(status));
  forget(pending, false);
  return Status::ok();
}

Status Communicator::progress() {
  if (!failure_.is_ok()) return failure_;
  for (std::size_t i = 0; i < pending_.size(); ++i) {
    Pending& pending = *pending_[i];
    if (pending.request == nullptr) continue;
    Result<bool> is_done = pending.request->test();
    if (!is_done.is_ok()) return fail_pending(pending, is_done.status());
    if (*is_done) pending.request.reset();
  }
  return Status::ok();
}

}  // namespace parity::comm
