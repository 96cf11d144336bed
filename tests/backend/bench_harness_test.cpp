// The portable copy kernel (bit-exact on awkward sizes), the device timer (sane statistics,
// errors propagated), clocks and device provenance, on the GPU.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "common/test_support.hpp"
#include "parity/bench/copy.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "bench/results_json.hpp"
#include "parity/bench/stream_hold.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"

namespace parity::bench {
namespace {

TEST(GpuCopy, KernelCopiesExactlyOnAwkwardSizes) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(21);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  // Below one vector, one vector, vector + tail, several chunks + tail, and 24 MiB: more than one
  // wave of resident blocks on any current GPU (132 SMs x 8 blocks x 1024 vectors = 17 MB).
  for (std::int64_t size : {0LL, 1LL, 15LL, 16LL, 17LL, 4099LL, (1LL << 20) + 7, (24LL << 20) + 13}) {
    std::vector<std::uint8_t> host(static_cast<std::size_t>(size));
    for (auto& byte : host) byte = static_cast<std::uint8_t>(static_cast<int>(rng.normal() * 64.0) & 0xff);
    auto src = gpu::upload(host);
    ASSERT_TRUE(src.is_ok()) << src.status().to_string();
    // One guard vector past the end, filled with a sentinel the copy must leave alone.
    auto dst = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(size) + 16);
    ASSERT_TRUE(dst.is_ok()) << dst.status().to_string();
    ASSERT_TRUE(dst->fill_bytes(0xA5).is_ok());
    const Status copied = copy_device_vectorized(dst->data(), src->data(), size);
    ASSERT_TRUE(copied.is_ok()) << copied.to_string();
    auto back = gpu::download<std::uint8_t>(*dst, static_cast<std::size_t>(size) + 16);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    for (std::int64_t i = 0; i < size; ++i) {
      ASSERT_EQ((*back)[static_cast<std::size_t>(i)], host[static_cast<std::size_t>(i)]) << "size=" << size << " i=" << i;
    }
    for (std::int64_t i = size; i < size + 16; ++i) {
      ASSERT_EQ((*back)[static_cast<std::size_t>(i)], 0xA5) << "guard overwritten: size=" << size << " i=" << i;
    }
    if (size > 0) {
      auto mismatched = count_mismatched_bytes(dst->data(), src->data(), size);
      ASSERT_TRUE(mismatched.is_ok()) << mismatched.status().to_string();
      EXPECT_EQ(*mismatched, 0) << "size=" << size;
    }
  }
}

TEST(GpuCopy, MismatchCounterSeesEveryDifferentByte) {
  PARITY_REQUIRE_GPU();
  std::vector<std::uint8_t> a(1000, 7);
  std::vector<std::uint8_t> b = a;
  b[0] = 1;    // first vector
  b[17] = 2;   // second vector
  b[18] = 3;   // same vector, second byte
  b[999] = 4;  // the tail beyond the last whole vector
  auto da = gpu::upload(a);
  auto db = gpu::upload(b);
  ASSERT_TRUE(da.is_ok() && db.is_ok());
  auto mismatched = count_mismatched_bytes(da->data(), db->data(), 1000);
  ASSERT_TRUE(mismatched.is_ok()) << mismatched.status().to_string();
  EXPECT_EQ(*mismatched, 4);
}

TEST(GpuCopy, RejectsMisalignedPointersAndNegativeSize) {
  PARITY_REQUIRE_GPU();
  auto buffer = gpu::DeviceBuffer::allocate(256);
  ASSERT_TRUE(buffer.is_ok());
  char* base = buffer->as<char>();
  Status misaligned = copy_device_vectorized(base + 1, base + 128, 32);
  EXPECT_EQ(misaligned.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(misaligned.message().find("16-byte aligned"), std::string::npos) << misaligned.message();
  Status negative = copy_device_vectorized(base, base + 128, -1);
  EXPECT_EQ(negative.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(negative.message().find("size_bytes=-1"), std::string::npos) << negative.message();
}

TEST(GpuTiming, CopyTimesAreSaneAndOrdered) {
  PARITY_REQUIRE_GPU();
  constexpr std::int64_t kCopyBytes = 256LL << 20;  // 4x the largest L2 we know of: HBM-bound
  auto src = gpu::DeviceBuffer::allocate(kCopyBytes);
  auto dst = gpu::DeviceBuffer::allocate(kCopyBytes);
  ASSERT_TRUE(src.is_ok() && dst.is_ok());
  TimingOptions options;
  options.warmup_iterations = 2;
  options.repetitions = 7;
  auto stats = time_on_device(
      [&](gpu::StreamHandle stream) { return copy_device_vectorized(dst->data(), src->data(), kCopyBytes, stream); },
      options);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(stats->count, 7);
  EXPECT_LE(stats->min_ms, stats->p10_ms);
  EXPECT_LE(stats->p10_ms, stats->median_ms);
  EXPECT_LE(stats->median_ms, stats->p90_ms);
  EXPECT_LE(stats->p90_ms, stats->max_ms);
  // Physical sanity: 512 MiB moved must take longer than at 20 TB/s (far above any HBM today)
  // and less than at 0.05 TB/s (far below any GPU of the last decade).
  const double tbps = bandwidth_tbps(2.0 * kCopyBytes, stats->median_ms);
  EXPECT_GT(tbps, 0.05);
  EXPECT_LT(tbps, 20.0);
}

TEST(GpuTiming, EveryCacheModeTimesAndTheCleanFlushReadLeavesDataAlone) {
  PARITY_REQUIRE_GPU();
  constexpr std::int64_t kBytes = 8LL << 20;
  auto src = gpu::DeviceBuffer::allocate(kBytes);
  auto dst = gpu::DeviceBuffer::allocate(kBytes);
  auto sink = gpu::DeviceBuffer::allocate(16);
  ASSERT_TRUE(src.is_ok() && dst.is_ok() && sink.is_ok());
  ASSERT_TRUE(fill_word_pattern(src->data(), kBytes, 7).is_ok());
  for (auto mode : {TimingOptions::CacheMode::kFlushL2, TimingOptions::CacheMode::kFlushL2Clean,
                    TimingOptions::CacheMode::kWarm}) {
    SCOPED_TRACE(cache_mode_name(mode));
    TimingOptions options;
    options.warmup_iterations = 1;
    options.repetitions = 5;
    options.cache = mode;
    auto stats = time_on_device(
        [&](gpu::StreamHandle stream) { return copy_device_vectorized(dst->data(), src->data(), kBytes, stream); },
        options);
    ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
    EXPECT_EQ(stats->count, 5);
    EXPECT_GT(stats->median_ms, 0.0);
  }
  auto mismatched = count_mismatched_bytes(src->data(), dst->data(), kBytes);
  ASSERT_TRUE(mismatched.is_ok());
  EXPECT_EQ(*mismatched, 0);
  // The read-back of the clean flush reads only: the buffer it reads is unchanged.
  ASSERT_TRUE(read_device_vectors(dst->data(), kBytes, sink->data()).is_ok());
  mismatched = count_mismatched_bytes(src->data(), dst->data(), kBytes);
  ASSERT_TRUE(mismatched.is_ok());
  EXPECT_EQ(*mismatched, 0);
  const Status bad_size = read_device_vectors(dst->data(), 17, sink->data());
  EXPECT_EQ(bad_size.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_size.message().find("size_bytes=17"), std::string::npos) << bad_size.message();
  const Status misaligned = read_device_vectors(static_cast<char*>(dst->data()) + 4, 16, sink->data());
  EXPECT_EQ(misaligned.code(), StatusCode::kInvalidArgument) << misaligned.to_string();
}

TEST(GpuStreamHold, WorkQueuedBehindAHoldStartsOnlyAtTheRelease) {
  PARITY_REQUIRE_GPU();
  constexpr std::int64_t kBytes = 1 << 20;
  constexpr auto kHostWait = std::chrono::milliseconds(30);
  auto buffer = gpu::DeviceBuffer::allocate(kBytes);
  auto hold = StreamHold::create();
  auto timer = gpu::EventTimer::create();
  ASSERT_TRUE(buffer.is_ok() && hold.is_ok() && timer.is_ok());
  // start -> hold -> fill -> stop, released 30 ms later: the interval spans the wait.
  ASSERT_TRUE(timer->start().is_ok());
  ASSERT_TRUE(hold->hold(nullptr).is_ok());
  ASSERT_TRUE(fill_word_pattern(buffer->data(), kBytes, 3).is_ok());
  ASSERT_TRUE(timer->stop().is_ok());
  std::this_thread::sleep_for(kHostWait);
  hold->release();
  ASSERT_TRUE(gpu::synchronize().is_ok());
  auto waited = timer->elapsed_ms();
  ASSERT_TRUE(waited.is_ok());
  EXPECT_GE(*waited, 20.0);
  // hold -> start -> fill -> (the host sleeps 30 ms) -> stop -> release: the device runs start,
  // fill and stop back to back, so the host's wait is not in the interval.
  ASSERT_TRUE(hold->hold(nullptr).is_ok());
  ASSERT_TRUE(timer->start().is_ok());
  ASSERT_TRUE(fill_word_pattern(buffer->data(), kBytes, 4).is_ok());
  std::this_thread::sleep_for(kHostWait);
  ASSERT_TRUE(timer->stop().is_ok());
  hold->release();
  ASSERT_TRUE(gpu::synchronize().is_ok());
  auto back_to_back = timer->elapsed_ms();
  ASSERT_TRUE(back_to_back.is_ok());
  EXPECT_LT(*back_to_back, 5.0);
  // A hold dropped without its release lets the stream go at once (no wait for the timeout).
  const auto dropped_at = std::chrono::steady_clock::now();
  {
    auto dropped = StreamHold::create();
    ASSERT_TRUE(dropped.is_ok());
    ASSERT_TRUE(dropped->hold(nullptr).is_ok());
  }
  ASSERT_TRUE(gpu::synchronize().is_ok());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - dropped_at).count(), 1.0);
}

TEST(GpuTiming, HostTimeSpentQueueingTheWorkIsNotTimed) {
  PARITY_REQUIRE_GPU();
  // Each run's work sleeps 5 ms on the host before queueing a tiny copy: far longer than the flush
  // ahead of it, so without the hold the device would idle ~5 ms inside every timed interval.
  auto src = gpu::DeviceBuffer::allocate(4096);
  auto dst = gpu::DeviceBuffer::allocate(4096);
  ASSERT_TRUE(src.is_ok() && dst.is_ok());
  TimingOptions options;
  options.warmup_iterations = 0;
  options.repetitions = 3;
  auto stats = time_on_device(
      [&](gpu::StreamHandle stream) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        return copy_device_vectorized(dst->data(), src->data(), 4096, stream);
      },
      options);
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_LT(stats->max_ms, 1.0);
}

TEST(GpuTiming, WorkErrorsArePropagatedWithContext) {
  PARITY_REQUIRE_GPU();
  TimingOptions options;
  options.warmup_iterations = 0;
  options.repetitions = 3;
  int calls = 0;
  auto stats = time_on_device(
      [&](gpu::StreamHandle) {
        ++calls;
        return calls == 2 ? invalid_argument("planted failure") : Status::ok();
      },
      options);
  ASSERT_FALSE(stats.is_ok());
  EXPECT_EQ(stats.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(stats.status().message().find("planted failure"), std::string::npos) << stats.status().message();
  options.repetitions = 0;
  auto rejected = time_on_device([](gpu::StreamHandle) { return Status::ok(); }, options);
  ASSERT_FALSE(rejected.is_ok());
  EXPECT_NE(rejected.status().message().find("repetitions=0"), std::string::npos);
}

TEST(GpuHbm, MeasurementIsCheckedAndReportsBothMethods) {
  PARITY_REQUIRE_GPU();
  TimingOptions options;
  options.warmup_iterations = 1;
  options.repetitions = 5;
  auto measurement = measure_hbm_copy((512LL << 20) + 2, options);  // odd copy size: exercises the tail
  ASSERT_TRUE(measurement.is_ok()) << measurement.status().to_string();
  EXPECT_EQ(measurement->verified_mismatched_bytes, 0);
  EXPECT_EQ(measurement->kernel.stats.count, 5);
  EXPECT_EQ(measurement->runtime_copy.stats.count, 5);
  EXPECT_GT(measurement->kernel.median_tbps, 0.05);
  EXPECT_GT(measurement->runtime_copy.median_tbps, 0.05);
  EXPECT_GT(measurement->flush_bytes, 0);
  const nlohmann::json json = hbm_measurement_json(*measurement);
  EXPECT_EQ(json["methods"].size(), 2u);
  EXPECT_EQ(json["check"]["mismatched_bytes"], 0);
}

TEST(GpuProvenance, DeviceFieldsAndClocksArePresent) {
  PARITY_REQUIRE_GPU();
  const nlohmann::json doc = provenance_json(std::vector<std::string>{}, 5);
  ASSERT_TRUE(doc["device"].is_object()) << doc.dump(2);
  EXPECT_GT(doc["device"]["sm_count"].get<int>(), 0);
  EXPECT_GT(doc["device"]["l2_bytes"].get<std::int64_t>(), 0);
  EXPECT_FALSE(doc["device"]["name"].get<std::string>().empty());
  ASSERT_TRUE(doc["device"]["clocks"].is_object()) << doc.dump(2);
  auto clocks = read_device_clocks();
  ASSERT_TRUE(clocks.is_ok()) << clocks.status().to_string();
  EXPECT_GT(clocks->max_sm_clock_mhz, 0) << clocks->source;
  if (clocks->source == "nvml") {
    EXPECT_GT(clocks->sm_clock_mhz, 0);
    EXPECT_LE(clocks->sm_clock_mhz, clocks->max_sm_clock_mhz);
  }
}

}  // namespace
}  // namespace parity::bench
