// Statistics of repeated timings against values computed by hand (and by numpy.percentile, whose
// default linear interpolation is the convention: position q*(n-1)).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/stats.hpp"

namespace parity::bench {
namespace {

TEST(BenchStats, EvenCountInterpolates) {
  // 1..10 shuffled: median between 5 and 6; p10 at position 0.9 -> 1.9; p90 at 8.1 -> 9.1.
  auto stats = summarize({7, 3, 10, 1, 5, 9, 2, 8, 4, 6});
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->count, 10);
  EXPECT_DOUBLE_EQ(stats->median_ms, 5.5);
  EXPECT_DOUBLE_EQ(stats->p10_ms, 1.9);
  EXPECT_DOUBLE_EQ(stats->p90_ms, 9.1);
  EXPECT_DOUBLE_EQ(stats->min_ms, 1.0);
  EXPECT_DOUBLE_EQ(stats->max_ms, 10.0);
  EXPECT_DOUBLE_EQ(stats->mean_ms, 5.5);
}

TEST(BenchStats, OddCountTakesMiddleSample) {
  // {1, 2, 3}: the middle sample; then one outlier moves the mean and max, not the median.
  auto odd = summarize({3, 1, 2});
  ASSERT_TRUE(odd.is_ok());
  EXPECT_DOUBLE_EQ(odd->median_ms, 2.0);
  EXPECT_DOUBLE_EQ(odd->p10_ms, 1.2);  // position 0.2
  EXPECT_DOUBLE_EQ(odd->p90_ms, 2.8);  // position 1.8
  auto outlier = summarize({1, 2, 3, 4, 1000});
  ASSERT_TRUE(outlier.is_ok());
  EXPECT_DOUBLE_EQ(outlier->median_ms, 3.0);
  EXPECT_DOUBLE_EQ(outlier->mean_ms, 202.0);
  EXPECT_DOUBLE_EQ(outlier->max_ms, 1000.0);
}

TEST(BenchStats, SingleSampleIsEveryStatistic) {
  auto stats = summarize({0.25});
  ASSERT_TRUE(stats.is_ok());
  EXPECT_EQ(stats->count, 1);
  for (double v : {stats->median_ms, stats->p10_ms, stats->p90_ms, stats->min_ms, stats->max_ms, stats->mean_ms}) {
    EXPECT_DOUBLE_EQ(v, 0.25);
  }
}

TEST(BenchStats, RejectsEmptyNegativeAndNonFinite) {
  auto empty = summarize({});
  ASSERT_FALSE(empty.is_ok());
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos) << empty.status().message();

  auto negative = summarize({1.0, -0.5});
  ASSERT_FALSE(negative.is_ok());
  EXPECT_EQ(negative.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(negative.status().message().find("samples_ms[1]=-0.5"), std::string::npos)
      << negative.status().message();

  auto nan = summarize({std::numeric_limits<double>::quiet_NaN()});
  ASSERT_FALSE(nan.is_ok());
  EXPECT_NE(nan.status().message().find("samples_ms[0]"), std::string::npos);
  auto inf = summarize({1.0, 2.0, std::numeric_limits<double>::infinity()});
  ASSERT_FALSE(inf.is_ok());
  EXPECT_NE(inf.status().message().find("samples_ms[2]"), std::string::npos);
}

TEST(BenchTimingOptions, ValidationNamesTheField) {
  TimingOptions options;
  EXPECT_TRUE(validate_timing_options(options).is_ok());
  options.repetitions = 0;
  Status status = validate_timing_options(options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("repetitions=0"), std::string::npos) << status.message();
  options = TimingOptions{};
  options.warmup_iterations = -1;
  status = validate_timing_options(options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("warmup_iterations=-1"), std::string::npos) << status.message();
  options = TimingOptions{};
  options.flush_bytes = -8;
  status = validate_timing_options(options);
  EXPECT_NE(status.message().find("flush_bytes=-8"), std::string::npos) << status.message();
  options = TimingOptions{};
  options.warmup_ms = -1.0;
  status = validate_timing_options(options);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("warmup_ms=-1"), std::string::npos) << status.message();
  options.warmup_ms = 0.0;
  options.rep_ms = std::numeric_limits<double>::quiet_NaN();
  EXPECT_NE(validate_timing_options(options).message().find("rep_ms=nan"), std::string::npos);
}

TEST(BenchTimingOptions, TimeBasedCountsCoverTheRequestedTime) {
  TimingOptions options;
  options.warmup_iterations = 3;
  options.repetitions = 10;
  // Counts only: the estimate does not matter.
  ResolvedCounts counts = resolve_time_based_counts(options, 0.5);
  EXPECT_EQ(counts.warmup_iterations, 3);
  EXPECT_EQ(counts.repetitions, 10);
  // 25 ms of warm-up and 100 ms of repetitions at 0.4 ms per run: ceil(62.5) = 63, 250.
  options.warmup_ms = 25.0;
  options.rep_ms = 100.0;
  counts = resolve_time_based_counts(options, 0.4);
  EXPECT_EQ(counts.warmup_iterations, 63);
  EXPECT_EQ(counts.repetitions, 250);
  // A slow run never lowers the counts below the explicit ones.
  counts = resolve_time_based_counts(options, 50.0);
  EXPECT_EQ(counts.warmup_iterations, 3);
  EXPECT_EQ(counts.repetitions, 10);
  // Work below the event resolution (or a bad estimate) is capped, never unbounded.
  for (double estimate : {0.0, -1.0, std::numeric_limits<double>::quiet_NaN()}) {
    counts = resolve_time_based_counts(options, estimate);
    EXPECT_EQ(counts.repetitions, kMaxTimeBasedRepetitions) << "estimate " << estimate;
    EXPECT_EQ(counts.warmup_iterations, 25000) << "estimate " << estimate;
  }
}

TEST(BenchTimingOptions, CacheModeNamesRoundTrip) {
  auto flush = parse_cache_mode("flush");
  ASSERT_TRUE(flush.is_ok());
  EXPECT_EQ(*flush, TimingOptions::CacheMode::kFlushL2);
  EXPECT_STREQ(cache_mode_name(*flush), "flush_l2");
  auto flush_clean = parse_cache_mode("flush-clean");
  ASSERT_TRUE(flush_clean.is_ok());
  EXPECT_EQ(*flush_clean, TimingOptions::CacheMode::kFlushL2Clean);
  EXPECT_STREQ(cache_mode_name(*flush_clean), "flush_l2_clean");
  auto warm = parse_cache_mode("warm");
  ASSERT_TRUE(warm.is_ok());
  EXPECT_EQ(*warm, TimingOptions::CacheMode::kWarm);
  EXPECT_STREQ(cache_mode_name(*warm), "warm");
  auto bad = parse_cache_mode("cold");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--cache='cold'"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace parity::bench
