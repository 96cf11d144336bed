// MPI communicator (CPU ranks). Errors are returned (MPI_ERRORS_RETURN on a duplicate of
// MPI_COMM_WORLD) and mapped to kCommError with MPI's error string. With a timeout every collective
// is the non-blocking MPI call polled against a deadline; on expiry the rank tells its peers which
// call it is stuck in and listens for theirs, so the error names the ranks that never answered.
// Open MPI 4.1 has no ULFM: a dead rank usually makes mpirun end the job first (docs/comm.md).
// start_all_reduce is MPI_Iallreduce; its request is tested on demand (Open MPI progresses
// non-blocking collectives only inside MPI calls) and waited for against the same deadline.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "parity/comm/mpi.hpp"

namespace parity::comm {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTimeoutNoticeTag =
    7411;  // point-to-point tag of the timeout notices (no collective uses tags)

Status mpi_error(int rc, const char* call) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  int error_class = 0;
  MPI_Error_class(rc, &error_class);
  return {StatusCode::kCommError,
          parity::detail::concat(call, " failed: ", text, " (MPI error class ", error_class, ")")};
}

#define PARITY_MPI_TRY(call)                                                    \
  do {                                                                          \
    const int parity_mpi_rc_ = (call);                                          \
    if (parity_mpi_rc_ != MPI_SUCCESS) return mpi_error(parity_mpi_rc_, #call); \
  } while (0)

MPI_Datatype mpi_datatype(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return MPI_FLOAT;
    case DType::kF64:
      return MPI_DOUBLE;
    case DType::kI32:
      return MPI_INT32_T;
    case DType::kI64:
      return MPI_INT64_T;
    case DType::kBF16:
    case DType::kF16:
      return MPI_UINT16_T;  // moved as bits; reductions arrive here as fp32
    case DType::kU8:
      return MPI_UINT8_T;
  }
  return MPI_DATATYPE_NULL;
}

Result<int> to_mpi_count(std::int64_t count, const char* name) {
  if (count > INT_MAX) {
    return unsupported(name, ": ", count, " elements exceed MPI's int count limit (", INT_MAX,
                       "); split the call");
  }
  return static_cast<int>(count);
}

Result<std::vector<int>> to_mpi_counts(const std::vector<std::int64_t>& values, const char* name) {
  std::vector<int> out;
  out.reserve(values.size());
  for (std::int64_t v : values) {
    PARITY_ASSIGN_OR_RETURN(const int c, to_mpi_count(v, name));
    out.push_back(c);
  }
  return out;
}

struct TimeoutNotice {
  std::int64_t call = -1;
  std::int64_t collective = -1;
};

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator(CommOptions options, MPI_Comm comm, int rank, int size)
      : Communicator(std::move(options)), comm_(comm), rank_(rank), size_(size) {}
  ~MpiCommunicator() override {
    // Started collectives never waited for still use the communicator: leak it.
    if (pending_collectives() > 0) return;
    // A collective abandoned by a timeout may still be progressed by MPI later (MPI forbids freeing
    // or cancelling collective requests), and Open MPI's libnbc then touches the communicator: it
    // is released only once every abandoned request has completed, and leaked otherwise.
    for (MPI_Request& request : abandoned_) {
      int is_done = 0;
      if (request != MPI_REQUEST_NULL &&
          MPI_Test(&request, &is_done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !is_done) {
        return;
      }
    }
    MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string_view backend_name() const override { return "mpi"; }
  DeviceKind buffer_device() const override { return DeviceKind::kCpu; }

 protected:
  Status execute(const CollectiveProblem& problem, const void* send, void* recv,
                 void* /*stream*/) override {
    const bool is_blocking = options().timeout_ms <= 0.0;
    MPI_Request request = MPI_REQUEST_NULL;
    if (problem.collective == Collective::kReduceScatter && send != recv &&
        static_cast<const char*>(send) +
                problem.count * rank_ *
                    static_cast<std::int64_t>(dtype_size_bytes(problem.dtype)) ==
            static_cast<const char*>(recv)) {
      const std::size_t bytes =
          static_cast<std::size_t>(problem.count * size_) * dtype_size_bytes(problem.dtype);
      // In place: MPI's reduce_scatter in-place layout differs from NCCL's, so stage the input.
      void* staged = scratch(ScratchSlot::kStaging, static_cast<std::int64_t>(bytes));
      std::memcpy(staged, send, bytes);
      send = staged;
    }
    PARITY_RETURN_IF_ERROR(issue(problem, send, recv, is_blocking ? nullptr : &request));
    if (is_blocking) return Status::ok();
    return wait_with_deadline(request, problem.collective, call_count(), Clock::now());
  }

  // start_all_reduce's MPI_Iallreduce (MPI_Test / the deadline wait on demand).
  Result<std::unique_ptr<BackendRequest>> start(const CollectiveProblem& problem, const void* send,
                                                void* recv, void* /*stream*/,
                                                std::int64_t call) override {
    MPI_Request request = MPI_REQUEST_NULL;
    PARITY_RETURN_IF_ERROR(issue(problem, send, recv, &request));
    return std::unique_ptr<BackendRequest>(
        std::make_unique<Request>(*this, request, problem.collective, call));
  }

 private:
  class Request final : public BackendRequest {
   public:
    Request(MpiCommunicator& comm, MPI_Request request, Collective collective, std::int64_t call)
        : comm_(comm), request_(request), collective_(collective), call_(call),
          started_(Clock::now()) {}
    ~Request() override {
      if (request_ != MPI_REQUEST_NULL) comm_.abandoned_.push_back(request_);
    }
    Result<bool> test() override {
      int is_done = 0;
      PARITY_MPI_TRY(MPI_Test(&request_, &is_done, MPI_STATUS_IGNORE));
      return is_done != 0;
    }
    Status wait() override {
      if (comm_.options().timeout_ms <= 0.0) {
        PARITY_MPI_TRY(MPI_Wait(&request_, MPI_STATUS_IGNORE));
        return Status::ok();
      }
      return comm_.wait_with_deadline(request_, collective_, call_, started_);
    }

   private:
    MpiCommunicator& comm_;
    MPI_Request request_;
    Collective collective_;
    std::int64_t call_;
    Clock::time_point started_;
  };

  // Blocking call when `request` is null, the non-blocking one otherwise.
  Status issue(const CollectiveProblem& problem, const void* send, void* recv,
               MPI_Request* request) {
    const MPI_Datatype type = mpi_datatype(problem.dtype);
    const MPI_Op op = problem.op == ReduceOp::kMax ? MPI_MAX : MPI_SUM;
    if (problem.collective == Collective::kBarrier) {
      PARITY_MPI_TRY(request ? MPI_Ibarrier(comm_, request) : MPI_Barrier(comm_));
      return Status::ok();
    }
    if (problem.collective == Collective::kAllToAllv)
      return issue_all_to_allv(*problem.layout, type, send, recv, request);
    PARITY_ASSIGN_OR_RETURN(const int count, to_mpi_count(problem.count, "count"));
    switch (problem.collective) {
      case Collective::kAllReduce: {
        const void* source = send == recv ? MPI_IN_PLACE : send;
        PARITY_MPI_TRY(request ? MPI_Iallreduce(source, recv, count, type, op, comm_, request)
                               : MPI_Allreduce(source, recv, count, type, op, comm_));
        return Status::ok();
      }
      case Collective::kReduceScatter:
        PARITY_MPI_TRY(request
                           ? MPI_Ireduce_scatter_block(send, recv, count, type, op, comm_, request)
                           : MPI_Reduce_scatter_block(send, recv, count, type, op, comm_));
        return Status::ok();
      case Collective::kAllGather: {
        const void* source =
            send != recv && send != nullptr &&
                    static_cast<const char*>(recv) +
                            problem.count * rank_ *
                                static_cast<std::int64_t>(dtype_size_bytes(problem.dtype)) ==
                        send
                ? MPI_IN_PLACE
                : send;
        PARITY_MPI_TRY(request
                           ? MPI_Iallgather(source, count, type, recv, count, type, comm_, request)
                           : MPI_Allgather(source, count, type, recv, count, type, comm_));
        return Status::ok();
      }
      case Collective::kAllToAll:
        PARITY_MPI_TRY(request ? MPI_Ialltoall(send, count, type, recv, count, type, comm_, request)
                               : MPI_Alltoall(send, count, type, recv, count, type, comm_));
        return Status::ok();
      case Collective::kBroadcast:
        PARITY_MPI_TRY(request ? MPI_Ibcast(recv, count, type, problem.root, comm_, request)
                               : MPI_Bcast(recv, count, type, problem.root, comm_));
        return Status::ok();
      default:
        break;
    }
    return internal_error("mpi communicator: unhandled collective ",
                          collective_name(problem.collective));
  }

  Status issue_all_to_allv(const AllToAllvLayout& layout, MPI_Datatype type, const void* send,
                           void* recv, MPI_Request* request) {
    PARITY_ASSIGN_OR_RETURN(send_counts_, to_mpi_counts(layout.send_counts, "send_counts"));
    PARITY_ASSIGN_OR_RETURN(send_displs_, to_mpi_counts(layout.send_displs, "send_displs"));
    PARITY_ASSIGN_OR_RETURN(recv_counts_, to_mpi_counts(layout.recv_counts, "recv_counts"));
    PARITY_ASSIGN_OR_RETURN(recv_displs_, to_mpi_counts(layout.recv_displs, "recv_displs"));
    // The int arrays are members: a non-blocking all_to_allv reads them until it completes.
    PARITY_MPI_TRY(
        request ? MPI_Ialltoallv(send, send_counts_.data(), send_displs_.data(), type, recv,
                                 recv_counts_.data(), recv_displs_.data(), type, comm_, request)
                : MPI_Alltoallv(send, send_counts_.data(), send_displs_.data(), type, recv,
                                recv_counts_.data(), recv_displs_.data(), type, comm_));
    return Status::ok();
  }

  // Polls the request until done or the deadline; yields so oversubscribed ranks share the cores,
  // and sleeps briefly once a call has run long enough that 0.1 ms cannot matter.
  Status wait_with_deadline(MPI_Request& request, Collective collective, std::int64_t call,
                            Clock::time_point start) {
    const auto timeout = std::chrono::duration<double, std::milli>(options().timeout_ms);
    while (true) {
      int is_done = 0;
      PARITY_MPI_TRY(MPI_Test(&request, &is_done, MPI_STATUS_IGNORE));
      if (is_done) return Status::ok();
      const auto elapsed = Clock::now() - start;
      if (elapsed >= timeout) {
        abandoned_.push_back(request);
        request = MPI_REQUEST_NULL;  // abandoned_ owns it now
        return diagnose_timeout(collective, call);
      }
      if (elapsed > std::chrono::milliseconds(100)) {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      } else {
        std::this_thread::yield();
      }
    }
  }

  // Sends "I am stuck in call #k" to every peer, then collects peers' notices for a grace period.
  Status diagnose_timeout(Collective collective, std::int64_t call) {
    timeout_notice_[0] = call;
    timeout_notice_[1] = static_cast<std::int64_t>(collective);
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      MPI_Request send_request = MPI_REQUEST_NULL;
      if (MPI_Isend(timeout_notice_, 2, MPI_INT64_T, peer, kTimeoutNoticeTag, comm_,
                    &send_request) == MPI_SUCCESS) {
        MPI_Request_free(&send_request);  // the buffer is a member, so it outlives the send
      }
    }
    std::vector<TimeoutNotice> notices(static_cast<std::size_t>(size_));
    const double grace_ms = std::clamp(options().timeout_ms / 2.0, 200.0, 5000.0);
    const auto grace_end = Clock::now() + std::chrono::duration<double, std::milli>(grace_ms);
    int answered = 0;
    while (Clock::now() < grace_end && answered < size_ - 1) {
      int has_message = 0;
      MPI_Status status;
      if (MPI_Iprobe(MPI_ANY_SOURCE, kTimeoutNoticeTag, comm_, &has_message, &status) !=
          MPI_SUCCESS)
        break;
      if (!has_message) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      std::int64_t received[2] = {-1, -1};
      if (MPI_Recv(received, 2, MPI_INT64_T, status.MPI_SOURCE, kTimeoutNoticeTag, comm_,
                   MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        break;
      }
      if (notices[status.MPI_SOURCE].call < 0) ++answered;
      notices[status.MPI_SOURCE] = {received[0], received[1]};
    }
    return timeout_status(notices, grace_ms, call);
  }

  Status timeout_status(const std::vector<TimeoutNotice>& notices, double grace_ms,
                        std::int64_t call) const {
    std::string silent;
    std::string same_call;
    std::string elsewhere;
    for (int peer = 0; peer < size_; ++peer) {
      if (peer == rank_) continue;
      const TimeoutNotice& n = notices[peer];
      if (n.call < 0) {
        silent += (silent.empty() ? "" : ", ") + std::to_string(peer);
      } else if (n.call == call) {
        same_call += (same_call.empty() ? "" : ", ") + std::to_string(peer);
      } else {
        elsewhere += parity::detail::concat("; rank ", peer, " is stuck in ",
                                            collective_name(static_cast<Collective>(n.collective)),
                                            " call #", n.call);
      }
    }
    std::string message =
        parity::detail::concat("not complete after ", options().timeout_ms, " ms");
    if (!silent.empty()) {
      message += parity::detail::concat(
          "; lost rank(s) ", silent, ": no answer within ", grace_ms,
          " ms (dead, hung, or not calling collectives on this communicator)");
    }
    if (!same_call.empty()) message += "; rank(s) " + same_call + " wait in the same call";
    message += elsewhere;
    return {StatusCode::kCommError, message};
  }

  MPI_Comm comm_;
  int rank_;
  int size_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  std::vector<MPI_Request> abandoned_;
  std::int64_t timeout_notice_[2] = {-1, -1};
};

}  // namespace

MpiSession::MpiSession() {
  int is_initialized = 0;
  MPI_Initialized(&is_initialized);
  if (!is_initialized) {
    int provided = 0;
    const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) {
      status_ = Status(StatusCode::kCommError,
                       "MPI_Init_thread failed (is this process started by mpirun?)");
      return;
    }
    is_owner_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size_);
}

MpiSession::~MpiSession() {
  int is_finalized = 0;
  MPI_Finalized(&is_finalized);
  if (is_owner_ && !is_finalized) MPI_Finalize();
}

namespace {

// A communicator over MPI_COMM_WORLD's ranks [0, num_ranks) (all: a duplicate); null on the others.
Result<std::unique_ptr<Communicator>> make_communicator(CommOptions options, int num_ranks) {
  int is_initialized = 0;
  MPI_Initialized(&is_initialized);
  if (!is_initialized)
    return Status(StatusCode::kCommError,
                  "mpi communicator: MPI is not running (create an MpiSession)");
  PARITY_CHECK_ARG(options.timeout_ms >= 0.0, "timeout_ms: ", options.timeout_ms, " must be >= 0");
  int world_rank = 0;
  int world_size = 1;
  PARITY_MPI_TRY(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  PARITY_MPI_TRY(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  if (num_ranks < 0) num_ranks = world_size;
  PARITY_CHECK_ARG(num_ranks >= 1 && num_ranks <= world_size, "num_ranks: ", num_ranks,
                   " is out of range [1, ", world_size, "]");
  MPI_Comm comm = MPI_COMM_NULL;
  if (num_ranks == world_size) {
    PARITY_MPI_TRY(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  } else {
    PARITY_MPI_TRY(MPI_Comm_split(MPI_COMM_WORLD, world_rank < num_ranks ? 0 : MPI_UNDEFINED,
                                  world_rank, &comm));
    if (comm == MPI_COMM_NULL) return std::unique_ptr<Communicator>();
  }
  PARITY_MPI_TRY(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  int rank = 0;
  int size = 1;
  PARITY_MPI_TRY(MPI_Comm_rank(comm, &rank));
  PARITY_MPI_TRY(MPI_Comm_size(comm, &size));
  return std::unique_ptr<Communicator>(
      std::make_unique<MpiCommunicator>(std::move(options), comm, rank, size));
}

}  // namespace

Result<std::unique_ptr<Communicator>> make_mpi_communicator(CommOptions options) {
  return make_communicator(std::move(options), -1);
}

Result<std::unique_ptr<Communicator>> make_mpi_communicator_of_first_ranks(int num_ranks,
                                                                         CommOptions options) {
  return make_communicator(std::move(options), num_ranks);
}

}  // namespace parity::comm
