// The NCCL communicator on one GPU rank (local bootstrap): the bench driver's checked sweep over
// every benchmarked collective on device buffers, argument errors, and the rank-order refusal.
// Skips cleanly without a CUDA device.
#include <gtest/gtest.h>

#include "common/test_support.hpp"
#include "parity/comm/bench.hpp"
#include "parity/comm/nccl.hpp"

namespace parity::comm {
namespace {

TEST(NcclCommunicator, CheckedSweepOnOneRank) {
  PARITY_REQUIRE_GPU();
  auto bootstrap = make_local_communicator();
  CommOptions options;
  options.timeout_ms = 30000.0;
  auto comm = make_nccl_communicator(*bootstrap, -1, options);
  ASSERT_TRUE(comm.is_ok()) << comm.status().to_string();
  EXPECT_EQ((*comm)->backend_name(), "nccl");
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kI64}) {
    CommBenchOptions bench;
    bench.max_bytes = 1 << 16;
    bench.step_factor = 16.0;
    bench.collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                         Collective::kAllToAll, Collective::kBroadcast};
    bench.dtype = dtype;
    bench.repetitions = 3;
    auto report = run_comm_bench(**comm, bench);
    ASSERT_TRUE(report.is_ok()) << report.status().to_string();
    for (const auto& row : report->rows) EXPECT_EQ(row.wrong_elements, 0);
  }
  const Status bad = (*comm)->all_reduce(nullptr, nullptr, -3, DType::kF32, ReduceOp::kSum);
  EXPECT_NE(bad.message().find("count: -3 must be >= 0"), std::string::npos) << bad.to_string();
}

TEST(NcclCommunicator, RankOrderIsRefusedWithAReason) {
  PARITY_REQUIRE_GPU();
  auto bootstrap = make_local_communicator();
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto comm = make_nccl_communicator(*bootstrap, -1, options);
  ASSERT_TRUE(comm.is_ok()) << comm.status().to_string();
  auto buffer = (*comm)->allocate_buffer(64);
  ASSERT_TRUE(buffer.is_ok());
  const Status status = (*comm)->all_reduce(*buffer, *buffer, 4, DType::kF32, ReduceOp::kSum);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported) << status.to_string();
  (*comm)->free_buffer(*buffer);
}

}  // namespace
}  // namespace parity::comm
