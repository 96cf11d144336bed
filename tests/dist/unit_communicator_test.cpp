// The one-rank (local) communicator against the serial computation, and argument validation:
// every error names the collective, the call number, the rank and the parameter.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dist/async_checks.hpp"
#include "dist/collective_checks.hpp"
#include "parity/comm/communicator.hpp"

namespace parity::comm {
namespace {

using testing::Placement;

TEST(LocalCommunicator, EveryCollectiveMatchesTheSerialComputation) {
  auto comm = make_local_communicator();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);
  testing::check_every_collective(*comm);
  EXPECT_TRUE(comm->barrier().is_ok());
}

TEST(LocalCommunicator, RankOrderModeIsTheIdentityOnOneRank) {
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto comm = make_local_communicator(options);
  for (DType dtype : {DType::kF32, DType::kBF16})
    testing::check_rank_order_all_reduce(*comm, dtype, 1001, 17);
}

TEST(LocalCommunicator, StartedAllReducesMatchTheSerialComputation) {
  auto comm = make_local_communicator();
  testing::check_async_all_reduce(*comm);
  testing::check_async_equals_blocking(*comm, 41);
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;  // completes inside start_all_reduce
  auto rank_order = make_local_communicator(options);
  testing::check_async_all_reduce(*rank_order);
}

TEST(CommunicatorValidation, StartedCollectiveErrorsNameTheHandleAndBuffers) {
  auto comm = make_local_communicator();
  auto other = make_local_communicator();
  testing::check_async_errors(*comm, *other);
}

Status expect_error(Status status, StatusCode code, const std::string& substring) {
  EXPECT_EQ(status.code(), code) << status.to_string();
  EXPECT_NE(status.message().find(substring), std::string::npos)
      << "message '" << status.message() << "' lacks '" << substring << "'";
  return status;
}

TEST(CommunicatorValidation, ErrorsNameCollectiveCallRankAndParameter) {
  auto comm = make_local_communicator();
  std::vector<float> a(8), b(8);
  (void)expect_error(comm->all_reduce(a.data(), b.data(), -1, DType::kF32, ReduceOp::kSum),
                     StatusCode::kInvalidArgument,
                     "all_reduce call #1 (rank 0 of 1): count: -1 must be >= 0");
  (void)expect_error(comm->all_gather(a.data(), b.data(), 4, DType::kU8),
                     StatusCode::kInvalidArgument,
                     "all_gather call #2 (rank 0 of 1): dtype: uint8 is not a collective type");
  (void)expect_error(comm->broadcast(a.data(), 4, DType::kF32, 1), StatusCode::kInvalidArgument,
                     "broadcast call #3 (rank 0 of 1): root: 1 is out of range [0, 1)");
  (void)expect_error(comm->all_to_all(nullptr, b.data(), 4, DType::kF32),
                     StatusCode::kInvalidArgument, "send: null, but 4 elements are to be sent");
  (void)expect_error(comm->all_reduce(a.data(), a.data() + 1, 4, DType::kF32, ReduceOp::kSum),
                     StatusCode::kInvalidArgument,
                     "recv: overlaps send but is not the in-place layout");
  (void)expect_error(comm->all_to_all(a.data(), a.data(), 4, DType::kF32),
                     StatusCode::kInvalidArgument, "all_to_all(v): never in place");
  (void)expect_error(
      comm->reduce_scatter(a.data(), b.data(), 2, DType::kF32, static_cast<ReduceOp>(9)),
      StatusCode::kInvalidArgument, "op: 9 is not sum, avg or max");
  EXPECT_EQ(comm->call_count(), 7);
  EXPECT_TRUE(comm->failure().is_ok()) << "argument errors must not mark the communicator failed";
}

TEST(CommunicatorValidation, AllToAllvLayoutIsCheckedAgainstTheBuffers) {
  auto comm = make_local_communicator();
  std::vector<float> a(8), b(8);
  AllToAllvLayout layout{{5}, {4}, {5}, {0}, 8, 8};
  (void)expect_error(comm->all_to_allv(a.data(), b.data(), layout, DType::kF32),
                     StatusCode::kInvalidArgument,
                     "all_to_allv call #1 (rank 0 of 1): send_displs[0]=4 + send_counts[0]=5 "
                     "exceeds send_capacity=8");
  layout = {{2}, {0}, {2}, {7}, 8, 8};
  (void)expect_error(comm->all_to_allv(a.data(), b.data(), layout, DType::kF32),
                     StatusCode::kInvalidArgument,
                     "recv_displs[0]=7 + recv_counts[0]=2 exceeds recv_capacity=8");
  layout = {{2, 1}, {0}, {2}, {0}, 8, 8};
  (void)expect_error(comm->all_to_allv(a.data(), b.data(), layout, DType::kF32),
                     StatusCode::kInvalidArgument,
                     "send_counts: has 2 entries, expected one per rank (1)");
  layout = {{-2}, {0}, {2}, {0}, 8, 8};
  (void)expect_error(comm->all_to_allv(a.data(), b.data(), layout, DType::kF32),
                     StatusCode::kInvalidArgument, "send_counts[0]=-2 must be >= 0");
  layout = {{2}, {0}, {3}, {0}, 8, 8};
  (void)expect_error(comm->all_to_allv(a.data(), b.data(), layout, DType::kF32),
                     StatusCode::kInvalidArgument,
                     "recv_counts[0]=3 differs from send_counts[0]=2");
  layout = {{2}, {6}, {2}, {1}, 8, 8};
  EXPECT_TRUE(comm->all_to_allv(a.data(), b.data(), layout, DType::kF32).is_ok());
}

TEST(CommunicatorNames, ParseWhatTheyPrint) {
  for (const char* name : {"all_reduce", "reduce_scatter", "all_gather", "all_to_all",
                           "all_to_allv", "broadcast", "barrier"}) {
    auto parsed = parse_collective(name);
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(collective_name(*parsed), name);
  }
  EXPECT_FALSE(parse_collective("allreduce").is_ok());
  EXPECT_EQ(parse_reduce_op("avg").value(), ReduceOp::kAvg);
  EXPECT_NE(parse_reduce_op("mean").status().message().find("expected sum, avg or max"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::comm
