// comm::Communicator: the collectives the trainer needs (all_reduce, reduce_scatter, all_gather,
// all_to_all, all_to_allv, broadcast, barrier) behind one plain C++ interface. Backends: local (one
// rank, copies), MPI (CPU ranks, parity_mpi) and NCCL (GPUs, parity_nccl). See docs/comm.md.
//
// Buffers are host pointers for the local and MPI backends, device pointers (with a stream) for
// NCCL: `buffer_device()` says which. Counts and displacements are in elements of `dtype`.
// In place follows NCCL: all_reduce/broadcast send == recv; all_gather send == recv + rank*count;
// reduce_scatter recv == send + rank*recv_count. Every call validates its arguments first and a
// failure names the collective, the call number, the rank and the parameter:
//   "all_to_allv call #3 (rank 1 of 4): send_displs[2]=10 + send_counts[2]=5 exceeds
//   send_capacity=12".
// bf16/fp16 reductions accumulate in fp32 on host backends (one rounding at the end).
// start_all_reduce / test / progress / wait: the asynchronous all_reduce (docs/comm.md,
// "Asynchronous all_reduce"), e.g. for gradient buckets overlapped with the backward.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::comm {

enum class ReduceOp : std::uint8_t { kSum, kAvg, kMax };
enum class Collective : std::uint8_t {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kAllToAll,
  kAllToAllv,
  kBroadcast,
  kBarrier,
};

std::string_view reduce_op_name(ReduceOp op);  // "sum", "avg", "max"
Result<ReduceOp> parse_reduce_op(std::string_view text);
std::string_view collective_name(Collective collective);  // "all_reduce", ...
Result<Collective> parse_collective(std::string_view text);

/// kFast: the backend's own algorithm (MPI/NCCL pick it; results may depend on rank count).
/// kRankOrder: float sums folded in rank order 0, 1, ..., n-1 on every rank, so the result is the
/// same bits on every rank and in every run, and equals a serial left fold of the contributions.
enum class ReductionOrder : std::uint8_t { kFast, kRankOrder };

struct CommOptions {
  /// A collective not complete after this long fails with kCommError naming the ranks that did
  /// not answer; 0 = wait forever (blocking calls). Default: torch.distributed's 10 minutes.
  double timeout_ms = 600000.0;
  ReductionOrder reduction_order = ReductionOrder::kFast;
  /// Before each collective, all ranks exchange (collective, count, dtype, op, root) and fail with
  /// an error naming the ranks that disagree. One extra small all_gather per call (debugging).
  bool check_consistency = false;
};

/// Per-peer element counts and displacements for all_to_allv (one entry per rank) and the element
/// capacity of each buffer, so every block can be checked to lie inside its buffer.
struct AllToAllvLayout {
  std::vector<std::int64_t> send_counts;
  std::vector<std::int64_t> send_displs;
  std::vector<std::int64_t> recv_counts;
  std::vector<std::int64_t> recv_displs;
  std::int64_t send_capacity = 0;
  std::int64_t recv_capacity = 0;
};

/// One collective call's sizes (the op pattern's Problem). `count` means: all_reduce elements;
/// reduce_scatter elements received per rank; all_gather elements sent per rank; all_to_all
/// elements per peer; broadcast elements; unused for all_to_allv (layout) and barrier.
struct CollectiveProblem {
  Collective collective = Collective::kBarrier;
  DType dtype = DType::kF32;
  ReduceOp op = ReduceOp::kSum;
  std::int64_t count = 0;
  int root = 0;
  const AllToAllvLayout* layout = nullptr;

  /// Sizes, dtype, op, root and (all_to_allv) every block inside its buffer. Messages start with
  /// the parameter ("count: -1 must be >= 0"); Communicator adds the collective and rank.
  Status validate(int world_size) const;
  std::int64_t send_elements(int world_size) const;  // elements read from the send buffer
  std::int64_t recv_elements(int world_size) const;  // elements written to the recv buffer
};

/// Element types every collective accepts: fp32, fp64, bf16, fp16, int32, int64.
Status check_collective_dtype(DType dtype);

/// A collective started by Communicator::start_all_reduce: a plain value naming the communicator
/// and the call. wait() consumes it; waiting twice, or on another communicator, is an error.
struct CollectiveHandle {
  std::uint64_t communicator_id = 0;  // 0: not returned by a start_* call
  std::int64_t call = 0;              // the call number (as in error messages)
};

class Communicator {
 public:
  virtual ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string_view backend_name() const = 0;  // "local", "mpi", "nccl"
  /// kCpu: buffers are host memory; kGpu: device memory, collectives queue on `stream`.
  virtual DeviceKind buffer_device() const = 0;
  const CommOptions& options() const { return options_; }

  Status all_reduce(const void* send, void* recv, std::int64_t count, DType dtype, ReduceOp op,
                    void* stream = nullptr);
  Status reduce_scatter(const void* send, void* recv, std::int64_t recv_count, DType dtype,
                        ReduceOp op, void* stream = nullptr);
  Status all_gather(const void* send, void* recv, std::int64_t send_count, DType dtype,
                    void* stream = nullptr);
  Status all_to_all(const void* send, void* recv, std::int64_t count_per_peer, DType dtype,
                    void* stream = nullptr);
  Status all_to_allv(const void* send, void* recv, const AllToAllvLayout& layout, DType dtype,
                     void* stream = nullptr);
  Status broadcast(void* buffer, std::int64_t count, DType dtype, int root, void* stream = nullptr);
  Status barrier();
  /// Waits for the collectives queued on `stream` (NCCL) within the timeout; host backends
  /// complete every collective before returning, so this only reports an earlier failure there.
  Status synchronize(void* stream);

  /// Asynchronous all_reduce: validates and starts it, then returns at once. Until wait() the
  /// buffers belong to the collective (do not read recv or write send); starting a collective
  /// whose buffers overlap a pending one's is refused. Every rank starts the same collectives in
  /// the same order (MPI's rule), interleaved with blocking calls as it likes.
  /// MPI: MPI_Iallreduce. Open MPI progresses it only inside MPI calls, so a rank that computes
  /// between start and wait should call progress() (or test()) between pieces of work.
  /// NCCL: enqueued on the communicator's own stream after the work queued on `stream` so far;
  /// wait() makes `stream` wait for it (stream-ordered, the host does not block).
  /// local: complete on return. Rank-order float reductions (CommOptions) are a chain of
  /// exchanges and complete inside start_all_reduce; bf16/fp16 are widened to fp32 per handle.
  Result<CollectiveHandle> start_all_reduce(const void* send, void* recv, std::int64_t count,
                                            DType dtype, ReduceOp op, void* stream = nullptr);
  /// Whether the collective has completed (then wait() returns at once); drives MPI progress.
  Result<bool> test(const CollectiveHandle& handle);
  /// Completes the collective (host backends: recv holds the result on return, within the
  /// timeout counted from its start) and forgets the handle.
  Status wait(const CollectiveHandle& handle);
  /// Drives every pending collective one step (MPI_Test each): call between pieces of compute.
  Status progress();
  /// Collectives started and not yet waited for.
  int pending_collectives() const { return static_cast<int>(pending_.size()); }

  /// Buffers of this backend's kind (host for local/MPI, device for NCCL) and copies to/from the
  /// host, so benchmarks and tests are written once for every backend.
  virtual Result<void*> allocate_buffer(std::int64_t bytes);
  virtual void free_buffer(void* buffer);
  virtual Status copy_from_host(void* buffer, const void* host, std::int64_t bytes);
  virtual Status copy_to_host(void* host, const void* buffer, std::int64_t bytes);

  /// Calls made so far (the number in error messages).
  std::int64_t call_count() const { return call_count_; }
  /// The first communication failure (a timeout or a backend error), or ok. After one, every call
  /// returns it again: a collective cannot be retried once peers may be mid-way through it.
  const Status& failure() const { return failure_; }

 protected:
  explicit Communicator(CommOptions options);

  /// The backend's collective on validated arguments. For host backends the base class has already
  /// turned bf16/fp16 reductions into fp32 ones and avg into sum (+ division), so `execute` sees
  /// op in {sum, max} on fp32/fp64/int32/int64, and any dtype for data movement.
  virtual Status execute(const CollectiveProblem& problem, const void* send, void* recv,
                         void* stream) = 0;
  /// The backend's wait for `stream` (device backends); a kCommError marks the communicator failed.
  virtual Status wait_stream(void* /*stream*/) { return Status::ok(); }

  /// One started backend collective (the backend's request); destroyed once complete.
  class BackendRequest {
   public:
    virtual ~BackendRequest();
    virtual Result<bool> test() = 0;
    virtual Status wait() = 0;
  };
  /// Starts the backend's non-blocking collective on validated arguments (all_reduce with op in
  /// {sum, max} on fp32/fp64/int32/int64 for host backends; any op and dtype on NCCL). `call` is
  /// its number, for error messages. nullptr: complete already (the default runs execute()).
  virtual Result<std::unique_ptr<BackendRequest>> start(const CollectiveProblem& problem,
                                                        const void* send, void* recv,
                                                        void* stream, std::int64_t call);

  /// "all_reduce call #7 (rank 1 of 4)": the prefix every message of the current call carries.
  std::string call_context(Collective collective) const;

  /// Host scratch owned by the communicator, reused across calls (slot: one per concurrent use).
  /// After a communication failure it is leaked rather than freed: a collective abandoned by a
  /// timeout may still be written by the transport.
  enum class ScratchSlot : int {
    kWideSend,
    kWideRecv,
    kBlocks,
    kFolded,
    kStaging,
    kConsistency,
    kCount
  };
  void* scratch(ScratchSlot slot, std::int64_t bytes);

 private:
  Status run(const CollectiveProblem& problem, const void* send, void* recv, void* stream);
  Status run_checked(const CollectiveProblem& problem, const void* send, void* recv, void* stream);
  Status run_host_reduction(const CollectiveProblem& problem, const void* send, void* recv);
  Status run_rank_order_reduction(const CollectiveProblem& problem, const void* send, void* recv);
  Status check_peer_consistency(const CollectiveProblem& problem);
  Status check_arguments(const CollectiveProblem& problem, const void* send, const void* recv);
  struct Pending;
  Result<CollectiveHandle> start_checked(const CollectiveProblem& problem, const void* send,
                                         void* recv, void* stream);
  Result<Pending*> find_pending(const CollectiveHandle& handle);
  Status finish(Pending& pending);
  void forget(const Pending& pending, bool is_failed);
  Status fail_pending(Pending& pending, Status status);

  CommOptions options_;
  std::vector<std::vector<char>>* scratch_;  // owned; see scratch()
  std::int64_t call_count_ = 0;
  Status failure_;
  std::uint64_t id_;                               // process-unique, for foreign handles
  std::vector<std::unique_ptr<Pending>> pending_;  // started, not yet waited for
};

/// The one-rank communicator: every collective is a copy (or nothing), in host memory.
std::unique_ptr<Communicator> make_local_communicator(CommOptions options = {});

}  // namespace parity::comm
