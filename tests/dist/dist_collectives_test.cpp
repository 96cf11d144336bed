// Every collective on R MPI ranks against the serial computation (every dtype, zero/odd counts,
// in place and out of place, uneven all_to_allv splits), deterministic rank-order reductions,
// the cross-rank consistency check, and a rank that stops answering.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "dist/async_checks.hpp"
#include "dist/collective_checks.hpp"
#include "dist/dist_world.hpp"
#include "parity/comm/mpi.hpp"

namespace parity::comm::testing {
namespace {

class DistCollectives : public DistTest {};

TEST_F(DistCollectives, EveryCollectiveMatchesTheSerialComputation) {
  check_every_collective(world());
}

TEST_F(DistCollectives, BlockingCallsMatchToo) {
  CommOptions options;
  options.timeout_ms = 0.0;  // blocking MPI calls, no deadline
  auto comm = make_mpi_communicator(options);
  PARITY_ASSERT_OK(comm.status());
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    check_all_reduce(**comm, dtype, ReduceOp::kAvg, 1001, Placement::kInPlace);
    check_reduce_scatter(**comm, dtype, ReduceOp::kSum, 7, Placement::kInPlace);
    check_all_gather(**comm, dtype, 7, Placement::kInPlace);
    check_all_to_allv(**comm, dtype);
  }
}

// start_all_reduce (MPI_Iallreduce): every dtype, op and odd count in flight at once, against the
// serial result; random fp32 sums equal the blocking all_reduce's bits; with the blocking
// communicator (timeout 0, MPI_Wait) and the rank-order one too; and the handle errors.
TEST_F(DistCollectives, StartedAllReducesMatchTheSerialComputation) {
  check_async_all_reduce(world());
  check_async_equals_blocking(world(), 97);
  for (const double timeout_ms : {0.0, 600000.0}) {
    CommOptions options;
    options.timeout_ms = timeout_ms;
    options.reduction_order = timeout_ms == 0.0 ? ReductionOrder::kFast : ReductionOrder::kRankOrder;
    auto comm = make_mpi_communicator(options);
    PARITY_ASSERT_OK(comm.status());
    check_async_all_reduce(**comm);
  }
  auto other = make_local_communicator();
  check_async_errors(world(), *other);
}

TEST_F(DistCollectives, RankOrderReductionEqualsTheSerialLeftFold) {
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto comm = make_mpi_communicator(options);
  PARITY_ASSERT_OK(comm.status());
  for (DType dtype : {DType::kF32, DType::kBF16}) {
    for (std::int64_t count : {0, 1, 5, 1001})
      check_rank_order_all_reduce(**comm, dtype, count, 2024);
  }
  // The ordinary paths still hold in this mode (avg, in place, reduce_scatter).
  check_all_reduce(**comm, DType::kF64, ReduceOp::kAvg, 7, Placement::kInPlace);
  check_reduce_scatter(**comm, DType::kF32, ReduceOp::kSum, 7, Placement::kInPlace);
  check_reduce_scatter(**comm, DType::kF16, ReduceOp::kAvg, 1, Placement::kOutOfPlace);
}

TEST_F(DistCollectives, ConsistencyCheckNamesTheDisagreeingRank) {
  CommOptions options;
  options.check_consistency = true;
  auto comm = make_mpi_communicator(options);
  PARITY_ASSERT_OK(comm.status());
  std::vector<float> a(16, 1.0f), b(16);
  const int last = (*comm)->size() - 1;
  const std::int64_t count = (*comm)->rank() == last ? 5 : 4;
  const Status status = (*comm)->all_reduce(a.data(), b.data(), count, DType::kF32, ReduceOp::kSum);
  if ((*comm)->size() == 1) GTEST_SKIP() << "needs two ranks";
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  const std::string expected = (*comm)->rank() == last
                                   ? "count: rank 0 passed 4, this rank 5"
                                   : "count: rank " + std::to_string(last) + " passed 5";
  EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("all_reduce call #1 (rank"), std::string::npos)
      << status.message();
  // all_to_allv: each peer's send count must be what this rank expects to receive.
  AllToAllvLayout layout;
  for (int r = 0; r < (*comm)->size(); ++r) {
    layout.send_counts.push_back(1);
    layout.send_displs.push_back(r);
    layout.recv_counts.push_back(r == 0 && (*comm)->rank() == last ? 0 : 1);
    layout.recv_displs.push_back(r);
  }
  layout.send_capacity = layout.recv_capacity = (*comm)->size();
  const Status v = (*comm)->all_to_allv(a.data(), b.data(), layout, DType::kF32);
  EXPECT_NE(v.message().find("rank " + std::to_string(last) +
                             " expects recv_counts[0]=0 but rank 0 sends 1"),
            std::string::npos)
      << v.to_string();
}

// The last rank does not enter the collective for 3x the timeout: the others must fail within the
// timeout plus the diagnosis grace, naming the collective, their rank and the silent rank. The
// late rank then makes the matching call, so the abandoned requests complete and MPI shuts down.
TEST_F(DistCollectives, FaultSilentRankIsNamedWithinTheTimeout) {
  if (world().size() < 2) GTEST_SKIP() << "needs two ranks";
  CommOptions options;
  options.timeout_ms = 1000.0;
  auto comm = make_mpi_communicator(options);
  PARITY_ASSERT_OK(comm.status());
  const int silent = (*comm)->size() - 1;
  // Static: after a timeout MPI may still write the failed call's buffers (docs/comm.md, "Faults").
  static std::vector<float> a(1001, 1.0f), b(1001);
  if ((*comm)->rank() == silent) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3000));
    const Status late = (*comm)->all_reduce(a.data(), b.data(), 1001, DType::kF32, ReduceOp::kSum);
    EXPECT_TRUE(late.is_ok() || late.code() == StatusCode::kCommError) << late.to_string();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const Status status = (*comm)->all_reduce(a.data(), b.data(), 1001, DType::kF32, ReduceOp::kSum);
  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(status.code(), StatusCode::kCommError) << status.to_string();
  const std::string context =
      "all_reduce call #1 (rank " + std::to_string((*comm)->rank()) + " of ";
  EXPECT_NE(status.message().find(context), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("lost rank(s) " + std::to_string(silent)), std::string::npos)
      << status.message();
  // timeout 1000 ms + grace clamp(timeout/2, 200, 5000) = 500 ms, plus scheduling slack on 2 cores
  EXPECT_LT(elapsed_ms, 2500.0);
  // The communicator refuses further calls with the first failure.
  const Status again = (*comm)->barrier();
  EXPECT_NE(again.message().find("failed earlier"), std::string::npos) << again.to_string();
}

}  // namespace
}  // namespace parity::comm::testing
