// `bench comm`'s driver on R ranks: every (collective, placement, size) passes its check before
// timing, on every dtype family the trainer uses, and sizes round to whole per-rank counts.
#include <gtest/gtest.h>

#include "dist/dist_world.hpp"
#include "parity/comm/bench.hpp"

namespace parity::comm::testing {
namespace {

class DistBench : public DistTest {};

TEST_F(DistBench, SweepIsCheckedOnEveryRank) {
  for (DType dtype : {DType::kF32, DType::kBF16, DType::kI64}) {
    CommBenchOptions options;
    options.min_bytes = 8;
    options.max_bytes = 3000;
    options.step_factor = 3.0;
    options.collectives = {Collective::kAllReduce, Collective::kAllGather,
                           Collective::kReduceScatter, Collective::kAllToAll,
                           Collective::kBroadcast};
    options.dtype = dtype;
    options.op = ReduceOp::kMax;
    options.warmup = 1;
    options.repetitions = 2;
    auto report = run_comm_bench(world(), options);
    ASSERT_TRUE(report.is_ok()) << report.status().to_string();
    ASSERT_FALSE(report->rows.empty());
    const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(dtype));
    for (const CommBenchRow& row : report->rows) {
      EXPECT_EQ(row.wrong_elements, 0);
      const bool is_per_rank =
          row.collective != Collective::kAllReduce && row.collective != Collective::kBroadcast;
      EXPECT_EQ(row.bytes, row.count * element_bytes * (is_per_rank ? world().size() : 1));
      EXPECT_GT(row.time.median_ms, 0.0);
    }
  }
}

}  // namespace
}  // namespace parity::comm::testing
