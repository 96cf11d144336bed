// Communicator's public calls: numbering, validation (with the collective and rank in every
// message), host buffer checks, the optional cross-rank consistency check, and the host-side
// pieces every host backend shares: bf16/fp16 reductions in fp32, avg as sum + division, and the
// deterministic rank-order reductions built on the backend's all_to_all(v).
#include "parity/comm/communicator.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "comm/host_reduce.hpp"
#include "comm/pending_collective.hpp"

namespace parity::comm {
namespace {

bool ranges_overlap(const void* a, std::int64_t a_bytes, const void* b, std::int64_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return false;
  const auto* a0 = static_cast<const char*>(a);
  const auto* b0 = static_cast<const char*>(b);
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

// The in-place layouts this interface accepts (NCCL's): all_reduce/broadcast send == recv,
// all_gather send == recv + rank*count, reduce_scatter recv == send + rank*count.
bool is_in_place_layout(const CollectiveProblem& problem, const void* send, const void* recv,
                        int rank) {
  const std::int64_t offset_bytes =
      problem.count * rank * static_cast<std::int64_t>(dtype_size_bytes(problem.dtype));
  switch (problem.collective) {
    case Collective::kAllReduce:
    case Collective::kBroadcast:
      return send == recv;
    case Collective::kAllGather:
      return send == static_cast<const char*>(recv) + offset_bytes;
    case Collective::kReduceScatter:
      return recv == static_cast<const char*>(send) + offset_bytes;
    default:
      return false;
  }
}

// Near-equal split of `count` into `parts` blocks (the first count % parts get one more).
std::int64_t block_elements(std::int64_t count, int parts, int index) {
  return count / parts + (index < count % parts ? 1 : 0);
}
std::int64_t block_offset(std::int64_t count, int parts, int index) {
  return index * (count / parts) + std::min<std::int64_t>(index, count % parts);
}

std::atomic<std::uint64_t> next_communicator_id{1};

}  // namespace

Communicator::Communicator(CommOptions options)
    : options_(std::move(options)),
      scratch_(new std::vector<std::vector<char>>(static_cast<std::size_t>(ScratchSlot::kCount))),
      id_(next_communicator_id.fetch_add(1)) {}

Communicator::~Communicator() {
  if (failure_.is_ok()) delete scratch_;  // else leaked on purpose: see scratch()
  // Collectives never waited for may still be written by the transport: leak their buffers.
  for (auto& pending : pending_) (void)pending.release();
}

void* Communicator::scratch(ScratchSlot slot, std::int64_t bytes) {
  std::vector<char>& buffer = (*scratch_)[static_cast<std::size_t>(slot)];
  if (buffer.size() < static_cast<std::size_t>(bytes))
    buffer.resize(static_cast<std::size_t>(bytes));
  return buffer.data();
}

std::string Communicator::call_context(Collective collective) const {
  return parity::detail::concat(collective_name(collective), " call #", call_count_, " (rank ",
                                rank(), " of ", size(), ")");
}

Status Communicator::all_reduce(const void* send, void* recv, std::int64_t count, DType dtype,
                                ReduceOp op, void* stream) {
  return run({Collective::kAllReduce, dtype, op, count, 0, nullptr}, send, recv, stream);
}
Status Communicator::reduce_scatter(const void* send, void* recv, std::int64_t recv_count,
                                    DType dtype, ReduceOp op, void* stream) {
  return run({Collective::kReduceScatter, dtype, op, recv_count, 0, nullptr}, send, recv, stream);
}
Status Communicator::all_gather(const void* send, void* recv, std::int64_t send_count, DType dtype,
                                void* stream) {
  return run({Collective::kAllGather, dtype, ReduceOp::kSum, send_count, 0, nullptr}, send, recv,
             stream);
}
Status Communicator::all_to_all(const void* send, void* recv, std::int64_t count_per_peer,
                                DType dtype, void* stream) {
  return run({Collective::kAllToAll, dtype, ReduceOp::kSum, count_per_peer, 0, nullptr}, send, recv,
             stream);
}
Status Communicator::all_to_allv(const void* send, void* recv, const AllToAllvLayout& layout,
                                 DType dtype, void* stream) {
  return run({Collective::kAllToAllv, dtype, ReduceOp::kSum, 0, 0, &layout}, send, recv, stream);
}
Status Communicator::broadcast(void* buffer, std::int64_t count, DType dtype, int root,
                               void* stream) {
  return run({Collective::kBroadcast, dtype, ReduceOp::kSum, count, root, nullptr}, buffer, buffer,
             stream);
}
Status Communicator::barrier() {
  return run({Collective::kBarrier, DType::kF32, ReduceOp::kSum, 0, 0, nullptr}, nullptr, nullptr,
             nullptr);
}

Status Communicator::synchronize(void* stream) {
  if (!failure_.is_ok()) return failure_;
  Status status = wait_stream(stream);
  if (status.code() == StatusCode::kCommError) failure_ = status;
  return status;
}

Result<void*> Communicator::allocate_buffer(std::int64_t bytes) {
  if (bytes < 0) return invalid_argument("bytes: ", bytes, " must be >= 0");
  void* buffer = ::operator new(static_cast<std::size_t>(bytes > 0 ? bytes : 1), std::nothrow);
  if (buffer == nullptr)
    return Status(StatusCode::kOutOfMemory,
                  parity::detail::concat("allocate_buffer: ", bytes, " bytes"));
  return buffer;
}
void Communicator::free_buffer(void* buffer) { ::operator delete(buffer); }
Status Communicator::copy_from_host(void* buffer, const void* host, std::int64_t bytes) {
  if (bytes > 0) std::memcpy(buffer, host, static_cast<std::size_t>(bytes));
  return Status::ok();
}
Status Communicator::copy_to_host(void* host, const void* buffer, std::int64_t bytes) {
  if (bytes > 0) std::memcpy(host, buffer, static_cast<std::size_t>(bytes));
  return Status::ok();
}

Status Communicator::run(const CollectiveProblem& problem, const void* send, void* recv,
                         void* stream) {
  ++call_count_;
  const std::string context = call_context(problem.collective);
  if (!failure_.is_ok()) {
    return {StatusCode::kCommError,
            context + ": the communicator failed earlier (" + failure_.message() + ")"};
  }
  Status status = run_checked(problem, send, recv, stream);
  if (status.is_ok()) return status;
  status = status.with_context(context);
  if (status.code() == StatusCode::kCommError) failure_ = status;
  return status;
}

Status Communicator::run_checked(const CollectiveProblem& problem, const void* send, void* recv,
                                 void* stream) {
  PARITY_RETURN_IF_ERROR(check_arguments(problem, send, recv));
  const int world = size();
  if (options_.check_consistency && buffer_device() == DeviceKind::kCpu && world > 1) {
    PARITY_RETURN_IF_ERROR(check_peer_consistency(problem));
  }
  const bool is_reduction = problem.collective == Collective::kAllReduce ||
                            problem.collective == Collective::kReduceScatter;
  if (is_reduction && buffer_device() == DeviceKind::kCpu)
    return run_host_reduction(problem, send, recv);
  return execute(problem, send, recv, stream);
}

// Sizes, null pointers and (host buffers) overlaps that are not the in-place layout.
Status Communicator::check_arguments(const CollectiveProblem& problem, const void* send,
                                     const void* recv) {
  PARITY_RETURN_IF_ERROR(problem.validate(size()));
  const int world = size();
  if (problem.collective == Collective::kAllToAllv) {
    const AllToAllvLayout& layout = *problem.layout;
    PARITY_CHECK_ARG(layout.send_counts[rank()] == layout.recv_counts[rank()], "recv_counts[",
                     rank(), "]=", layout.recv_counts[rank()], " differs from send_counts[", rank(),
                     "]=", layout.send_counts[rank()], " (the block this rank sends to itself)");
  }
  const std::int64_t element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.dtype));
  const std::int64_t send_bytes = problem.send_elements(world) * element_bytes;
  const std::int64_t recv_bytes = problem.recv_elements(world) * element_bytes;
  PARITY_CHECK_ARG(send != nullptr || send_bytes == 0, "send: null, but ",
                   problem.send_elements(world), " elements are to be sent");
  PARITY_CHECK_ARG(recv != nullptr || recv_bytes == 0, "recv: null, but ",
                   problem.recv_elements(world), " elements are to be received");
  if (buffer_device() == DeviceKind::kCpu && problem.collective != Collective::kBroadcast &&
      ranges_overlap(send, send_bytes, recv, recv_bytes)) {
    PARITY_CHECK_ARG(
        is_in_place_layout(problem, send, recv, rank()),
        "recv: overlaps send but is not the in-place layout (all_reduce: recv == send; all_gather: "
        "send == recv + rank*count; reduce_scatter: recv == send + rank*count; all_to_all(v): "
        "never in place)");
  }
  return Status::ok();
}

Status Communicator::run_host_reduction(const CollectiveProblem& problem, const void* send,
                                        void* recv) {
  const bool is_half = problem.dtype == DType::kBF16 || problem.dtype == DType::kF16;
  const bool is_rank_order = options_.reduction_order == ReductionOrder::kRankOrder &&
                             detail::is_float_dtype(problem.dtype) && problem.op != ReduceOp::kMax;
  if (!is_half && problem.op != ReduceOp::kAvg && !is_rank_order)
    return execute(problem, send, recv, nullptr);

  CollectiveProblem work = problem;
  work.dtype = is_half ? DType::kF32 : problem.dtype;
  work.op = problem.op == ReduceOp::kAvg ? ReduceOp::kSum : problem.op;
  const int world = size();
  const void* work_send = send;
  void* work_recv = recv;
  float* recv_f32 = nullptr;
  if (is_half) {  // fp32 copies in and out: accumulate in fp32, round once at the end
    auto* send_f32 =
        static_cast<float*>(scratch(ScratchSlot::kWideSend, problem.send_elements(world) * 4));
    recv_f32 =
        static_cast<float*>(scratch(ScratchSlot::kWideRecv, problem.recv_elements(world) * 4));
    detail::widen_to_f32(problem.dtype, send, send_f32, problem.send_elements(world));
    work_send = send_f32;
    work_recv = recv_f32;
  }
  PARITY_RETURN_IF_ERROR(is_rank_order ? run_rank_order_reduction(work, work_send, work_recv)
                                       : execute(work, work_send, work_recv, nullptr));
  if (problem.op == ReduceOp::kAvg)
    detail::divide_in_place(work.dtype, work_recv, work.recv_elements(world), world);
  if (is_half) detail::narrow_from_f32(problem.dtype, recv_f32, recv, problem.recv_elements(world));
  return Status::ok();
}

// Deterministic reductions: every element is folded over ranks 0..n-1 in order by exactly one rank,
// from blocks exchanged with all_to_all(v); all_reduce then all-gathers the folded blocks.
Status Communicator::run_rank_order_reduction(const CollectiveProblem& problem, const void* send,
                                              void* recv) {
  const int world = size();
  const int me = rank();
  const std::size_t element_bytes = dtype_size_bytes(problem.dtype);
  if (problem.collective == Collective::kReduceScatter) {
    void* gathered = scratch(ScratchSlot::kBlocks,
                             problem.count * world * static_cast<std::int64_t>(element_bytes));
    CollectiveProblem exchange{
        Collective::kAllToAll, problem.dtype, ReduceOp::kSum, problem.count, 0, nullptr};
    PARITY_RETURN_IF_ERROR(execute(exchange, send, gathered, nullptr));
    detail::fold_blocks(problem.dtype, problem.op, gathered, world, problem.count, recv);
    return Status::ok();
  }
  const std::int64_t count = problem.count;
  const std::int64_t mine = block_elements(count, world, me);
  AllToAllvLayout scatter;  // block j of every rank goes to rank j
  AllToAllvLayout gather;   // the folded block of every rank goes to every rank
  scatter.send_capacity = count;
  scatter.recv_capacity = mine * world;
  gather.send_capacity = mine;
  gather.recv_capacity = count;
  for (int peer = 0; peer < world; ++peer) {
    scatter.send_counts.push_back(block_elements(count, world, peer));
    scatter.send_displs.push_back(block_offset(count, world, peer));
    scatter.recv_counts.push_back(mine);
    scatter.recv_displs.push_back(mine * peer);
    gather.send_counts.push_back(mine);
    gather.send_displs.push_back(0);
    gather.recv_counts.push_back(block_elements(count, world, peer));
    gather.recv_displs.push_back(block_offset(count, world, peer));
  }
  void* blocks =
      scratch(ScratchSlot::kBlocks, mine * world * static_cast<std::int64_t>(element_bytes));
  void* folded = scratch(ScratchSlot::kFolded, mine * static_cast<std::int64_t>(element_bytes));
  CollectiveProblem exchange{Collective::kAllToAllv, problem.dtype, ReduceOp::kSum, 0, 0, &scatter};
  PARITY_RETURN_IF_ERROR(execute(exchange, send, blocks, nullptr));
  detail::fold_blocks(problem.dtype, problem.op, blocks, world, mine, folded);
  exchange.layout = &gather;
  return execute(exchange, folded, recv, nullptr);
}

// All ranks exchange the call's signature; a mismatch names the first disagreeing rank and field.
Status Communicator::check_peer_consistency(const CollectiveProblem& problem) {
  constexpr std::size_t kFields = 5;
  const char* const field_names[kFields] = {"collective", "count", "dtype", "op", "root"};
  const int world = size();
  const auto n = static_cast<std::size_t>(world);
  // Scratch, not the stack: a timed-out exchange may still touch its buffers.
  auto* mine = static_cast<std::int64_t*>(
      scratch(ScratchSlot::kConsistency,
              static_cast<std::int64_t>(std::max(kFields * (n + 1), 2 * n + 2 * n * n) *
                                        sizeof(std::int64_t))));
  std::int64_t* all = mine + kFields;
  const std::int64_t signature[kFields] = {static_cast<std::int64_t>(problem.collective),
                                           problem.count, static_cast<std::int64_t>(problem.dtype),
                                           static_cast<std::int64_t>(problem.op), problem.root};
  std::copy(signature, signature + kFields, mine);
  CollectiveProblem gather{Collective::kAllGather,
                           DType::kI64,
                           ReduceOp::kSum,
                           static_cast<std::int64_t>(kFields),
                           0,
                           nullptr};
  PARITY_RETURN_IF_ERROR(execute(gather, mine, all, nullptr));
  for (std::size_t peer = 0; peer < n; ++peer) {
    for (std::size_t f = 0; f < kFields; ++f) {
      const std::int64_t theirs = all[peer * kFields + f];
      if (theirs == mine[f]) continue;
      if (f == 0) {
        return invalid_argument("collective: rank ", peer, " called ",
                                collective_name(static_cast<Collective>(theirs)), " in this call");
      }
      return invalid_argument(field_names[f], ": rank ", peer, " passed ", theirs, ", this rank ",
                              mine[f]);
    }
  }
  if (problem.collective != Collective::kAllToAllv) return Status::ok();
  // Every rank gathers every rank's send and recv counts, so all detect the same mismatch.
  std::int64_t* counts = mine;  // [send_counts | recv_counts] of this rank, then every rank's
  std::int64_t* matrix = mine + 2 * n;
  std::copy(problem.layout->send_counts.begin(), problem.layout->send_counts.end(), counts);
  std::copy(problem.layout->recv_counts.begin(), problem.layout->recv_counts.end(), counts + n);
  CollectiveProblem exchange{
      Collective::kAllGather, DType::kI64, ReduceOp::kSum, 2 * world, 0, nullptr};
  PARITY_RETURN_IF_ERROR(execute(exchange, counts, matrix, nullptr));
  for (std::size_t from = 0; from < n; ++from) {
    for (std::size_t to = 0; to < n; ++to) {
      const std::int64_t sent = matrix[from * 2 * n + to];
      const std::int64_t expected = matrix[to * 2 * n + n + from];
      PARITY_CHECK_ARG(sent == expected, "recv_counts: rank ", to, " expects recv_counts[", from,
                       "]=", expected, " but rank ", from, " sends ", sent);
    }
  }
  return Status::ok();
}

}  // namespace parity::comm
