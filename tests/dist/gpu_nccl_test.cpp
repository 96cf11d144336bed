// The NCCL communicator on one GPU rank (local bootstrap): the bench driver's checked sweep over
// every benchmarked collective on device buffers, argument errors, the started (asynchronous)
// all_reduce, and the rank-order refusal.
// Skips cleanly without a CUDA device.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "common/test_support.hpp"
#include "parity/comm/bench.hpp"
#include "parity/comm/nccl.hpp"

namespace parity::comm {
namespace {

// One NCCL rank over the local bootstrap. The bootstrap communicator must outlive the NCCL one,
// so both are owned here for the test's lifetime.
struct OneRankNccl {
  std::unique_ptr<Communicator> bootstrap;
  std::unique_ptr<Communicator> nccl;
};

Result<OneRankNccl> open_one_rank_nccl(const CommOptions& options) {
  OneRankNccl session;
  session.bootstrap = make_local_communicator();
  PARITY_ASSIGN_OR_RETURN(session.nccl, make_nccl_communicator(*session.bootstrap, -1, options));
  return session;
}

TEST(NcclCommunicator, CheckedSweepOnOneRank) {
  PARITY_REQUIRE_GPU();
  CommOptions options;
  options.timeout_ms = 30000.0;
  auto session = open_one_rank_nccl(options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Communicator& comm = *session->nccl;
  EXPECT_EQ(comm.backend_name(), "nccl");
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kI64}) {
    CommBenchOptions bench;
    bench.max_bytes = 1 << 16;
    bench.step_factor = 16.0;
    bench.collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                         Collective::kAllToAll, Collective::kBroadcast};
    bench.dtype = dtype;
    bench.repetitions = 3;
    auto report = run_comm_bench(comm, bench);
    ASSERT_TRUE(report.is_ok()) << report.status().to_string();
    for (const auto& row : report->rows) EXPECT_EQ(row.wrong_elements, 0);
  }
  const Status bad = comm.all_reduce(nullptr, nullptr, -3, DType::kF32, ReduceOp::kSum);
  EXPECT_NE(bad.message().find("count: -3 must be >= 0"), std::string::npos) << bad.to_string();
}

// start_all_reduce on the communicator's own stream, ordered after the default stream by events:
// on one rank the result is the input; two in flight at once; the handle errors.
TEST(NcclCommunicator, StartedAllReduceOnOneRank) {
  PARITY_REQUIRE_GPU();
  CommOptions options;
  options.timeout_ms = 30000.0;
  auto session = open_one_rank_nccl(options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Communicator& comm = *session->nccl;
  constexpr std::int64_t kCount = 1001;
  std::vector<float> host(kCount), result(kCount, -1.0f);
  for (std::int64_t i = 0; i < kCount; ++i) host[static_cast<std::size_t>(i)] = static_cast<float>(i % 7 - 3);
  std::vector<void*> buffers;
  for (int b = 0; b < 3; ++b) {
    auto buffer = comm.allocate_buffer(kCount * 4);
    ASSERT_TRUE(buffer.is_ok()) << buffer.status().to_string();
    buffers.push_back(*buffer);
  }
  ASSERT_TRUE(comm.copy_from_host(buffers[0], host.data(), kCount * 4).is_ok());
  auto first = comm.start_all_reduce(buffers[0], buffers[1], kCount, DType::kF32, ReduceOp::kSum);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto second = comm.start_all_reduce(buffers[0], buffers[2], kCount, DType::kF32, ReduceOp::kAvg);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  const Status clash = comm.start_all_reduce(buffers[1], buffers[1], kCount, DType::kF32, ReduceOp::kSum).status();
  EXPECT_NE(clash.message().find("still pending"), std::string::npos) << clash.to_string();
  ASSERT_TRUE(comm.test(*first).is_ok());
  ASSERT_TRUE(comm.wait(*second).is_ok());
  ASSERT_TRUE(comm.wait(*first).is_ok());
  ASSERT_TRUE(comm.synchronize(nullptr).is_ok());
  for (int b = 1; b < 3; ++b) {
    ASSERT_TRUE(comm.copy_to_host(result.data(), buffers[static_cast<std::size_t>(b)], kCount * 4).is_ok());
    EXPECT_EQ(result, host) << "buffer " << b;
  }
  const Status twice = comm.wait(*first);
  EXPECT_NE(twice.message().find("is not pending"), std::string::npos) << twice.to_string();
  EXPECT_EQ(comm.pending_collectives(), 0);
  for (void* buffer : buffers) comm.free_buffer(buffer);
}

TEST(NcclCommunicator, RankOrderIsRefusedWithAReason) {
  PARITY_REQUIRE_GPU();
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto session = open_one_rank_nccl(options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  Communicator& comm = *session->nccl;
  auto buffer = comm.allocate_buffer(64);
  ASSERT_TRUE(buffer.is_ok());
  const Status status = comm.all_reduce(*buffer, *buffer, 4, DType::kF32, ReduceOp::kSum);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.to_string();
  comm.free_buffer(*buffer);
}

}  // namespace
}  // namespace parity::comm
