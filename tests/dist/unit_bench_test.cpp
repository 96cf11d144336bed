// The collectives benchmark's maths and files: size sweep, nccl-tests bus-bandwidth factors, the
// α–β fit (recovers exact synthetic constants; clamps a negative latency), the results JSON round
// trip, and a tiny local-backend run (checked before timing).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "parity/comm/bench.hpp"

namespace parity::comm {
namespace {

TEST(CommBench, SweepIsGeometricAndInclusive) {
  EXPECT_EQ(sweep_sizes(8, 64, 2.0), (std::vector<std::int64_t>{8, 16, 32, 64}));
  EXPECT_EQ(sweep_sizes(8, 63, 2.0), (std::vector<std::int64_t>{8, 16, 32}));
  EXPECT_EQ(sweep_sizes(1, 4, 1.1), (std::vector<std::int64_t>{1, 2, 3, 4}));  // always advances
}

TEST(CommBench, BusBandwidthFactorsFollowNcclTests) {
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::kAllReduce, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::kAllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::kReduceScatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_bandwidth_factor(Collective::kBroadcast, 4), 1.0);
  EXPECT_EQ(ring_steps(Collective::kAllReduce, 4), 6);
  EXPECT_EQ(ring_steps(Collective::kAllGather, 4), 3);
}

TEST(CommBench, FitRecoversExactAlphaBeta) {
  // t = 20 us + x / (5 GB/s) with x = S * 1.5 (all_reduce on 4 ranks): 5 GB/s = 5e3 bytes/us.
  std::vector<std::int64_t> bytes;
  std::vector<double> times_us;
  for (std::int64_t s = 8; s <= (1 << 24); s *= 4) {
    bytes.push_back(s);
    times_us.push_back(20.0 + static_cast<double>(s) * 1.5 / 5e3);
  }
  auto fit = fit_alpha_beta(Collective::kAllReduce, 4, bytes, times_us);
  ASSERT_TRUE(fit.is_ok()) << fit.status().to_string();
  // Exact data: the weighted normal equations reproduce the constants to rounding (1e-9 relative).
  EXPECT_NEAR(fit->latency_us, 20.0, 20.0 * 1e-9);
  EXPECT_NEAR(fit->bus_bandwidth_gbps, 5.0, 5.0 * 1e-9);
  EXPECT_NEAR(fit->alpha_us, 20.0 / 6.0, 1e-9);
  EXPECT_LT(fit->max_relative_residual, 1e-9);
  EXPECT_FALSE(fit->is_latency_clamped);
}

TEST(CommBench, FitClampsANegativeLatencyAndRejectsFlatTimes) {
  // Pure bandwidth with a shortfall at small sizes pulls the free intercept below zero.
  auto fit = fit_alpha_beta(Collective::kAllGather, 2, {1000, 2000, 4000}, {0.05, 0.2, 0.4});
  ASSERT_TRUE(fit.is_ok()) << fit.status().to_string();
  EXPECT_TRUE(fit->is_latency_clamped);
  EXPECT_EQ(fit->latency_us, 0.0);
  auto flat = fit_alpha_beta(Collective::kAllGather, 2, {1000, 2000}, {5.0, 5.0});
  EXPECT_FALSE(flat.is_ok());
  EXPECT_NE(flat.status().message().find("times do not grow with size"), std::string::npos);
  EXPECT_FALSE(fit_alpha_beta(Collective::kAllGather, 1, {1, 2}, {1.0, 2.0}).is_ok());
}

TEST(CommBench, OptionsNameTheFlag) {
  CommBenchOptions options;
  options.step_factor = 1.0;
  EXPECT_NE(options.validate().message().find("--step-factor: 1 must be > 1"), std::string::npos);
  options = {};
  options.op = ReduceOp::kAvg;
  EXPECT_NE(options.validate().message().find("--op: avg cannot be checked exactly"),
            std::string::npos);
  EXPECT_FALSE(parse_collective_list("all_reduce,allgather").is_ok());
  EXPECT_EQ(parse_collective_list("all_to_all,broadcast")->size(), 2u);
  EXPECT_FALSE(parse_bench_placements("inplace").is_ok());
}

TEST(CommBench, LocalRunIsCheckedAndRoundTripsThroughJson) {
  auto comm = make_local_communicator();
  CommBenchOptions options;
  options.min_bytes = 8;
  options.max_bytes = 4096;
  options.step_factor = 8.0;
  options.collectives = {Collective::kAllReduce, Collective::kAllGather, Collective::kBroadcast};
  options.dtype = DType::kBF16;
  options.repetitions = 3;
  options.warmup = 1;
  auto report = run_comm_bench(*comm, options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  // all_reduce 2 placements x 4 sizes (8, 64, 512, 4096), all_gather the same, broadcast in place.
  ASSERT_EQ(report->rows.size(), 20u);
  for (const auto& row : report->rows) {
    EXPECT_EQ(row.wrong_elements, 0);
    EXPECT_EQ(row.time.count, 3);
    EXPECT_EQ(row.busbw_gbps, row.algbw_gbps * bus_bandwidth_factor(row.collective, 1));
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / "parity_comm_bench_test.json").string();
  ASSERT_TRUE(write_comm_bench_json(*report, path).is_ok());
  auto back = read_comm_bench_json(path);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->backend, "local");
  ASSERT_EQ(back->rows.size(), report->rows.size());
  EXPECT_EQ(back->rows[3].bytes, 4096);
  EXPECT_EQ(back->rows[3].time.median_ms, report->rows[3].time.median_ms);
  std::remove(path.c_str());
  EXPECT_FALSE(fit_report(*back).is_ok()) << "one rank moves no data: nothing to fit";
}

}  // namespace
}  // namespace parity::comm
