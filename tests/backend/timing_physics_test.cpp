// Physics checks of the device timer: measurements that contradict the hardware mean the timer
// or the flush is broken, whatever the absolute numbers. A read of half the L2 must take longer
// when the L2 was flushed than when the data is already resident; a copy can never beat the
// memory bandwidth the catalogue records for the device.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "common/test_support.hpp"
#include "parity/bench/copy.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/core/gpu.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::bench {
namespace {

Result<SampleStats> time_read(const gpu::DeviceBuffer& data, std::int64_t bytes, void* sink,
                              TimingOptions::CacheMode cache) {
  TimingOptions options;
  options.cache = cache;
  options.warmup_iterations = 5;
  options.repetitions = 100;
  return time_on_device(
      [&](gpu::StreamHandle stream) { return read_device_vectors(data.data(), bytes, sink, stream); },
      options);
}

TEST(GpuTimingPhysics, FlushedReadIsSlowerThanAWarmOne) {
  PARITY_REQUIRE_GPU();
  const auto props = gpu::device_properties();
  ASSERT_TRUE(props.is_ok()) << props.status().to_string();
  ASSERT_GT(props->l2_bytes, 0);
  // Half the L2: resident after the warm-up in warm mode, in DRAM after every flush. At L2 reads
  // >= 2x DRAM bandwidth on every GPU this project models, even with ~2-5 us of launch latency
  // in both timings, the flushed median must be clearly slower; 10% is far inside that margin.
  const std::int64_t bytes = (props->l2_bytes / 2) / 16 * 16;
  auto data = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(bytes));
  auto sink = gpu::DeviceBuffer::allocate(16);
  ASSERT_TRUE(data.is_ok() && sink.is_ok());
  ASSERT_TRUE(fill_word_pattern(data->data(), bytes, 7).is_ok());
  const auto warm = time_read(*data, bytes, sink->data(), TimingOptions::CacheMode::kWarm);
  const auto flushed = time_read(*data, bytes, sink->data(), TimingOptions::CacheMode::kFlushL2Clean);
  ASSERT_TRUE(warm.is_ok()) << warm.status().to_string();
  ASSERT_TRUE(flushed.is_ok()) << flushed.status().to_string();
  EXPECT_GT(flushed->median_ms, 1.1 * warm->median_ms)
      << "read of " << bytes << " B: flushed median " << flushed->median_ms << " ms vs warm "
      << warm->median_ms << " ms";
}

TEST(GpuTimingPhysics, CopyIsUnderTheCatalogueBandwidth) {
  PARITY_REQUIRE_GPU();
  const auto props = gpu::device_properties();
  ASSERT_TRUE(props.is_ok()) << props.status().to_string();
  const auto spec = hw::find_hardware(props->name);
  if (!spec.is_ok()) GTEST_SKIP() << "no catalogue entry for '" << props->name << "'";
  TimingOptions options;
  options.repetitions = 20;
  // 1 GiB moved (512 MiB read + 512 MiB written): ~17x the largest L2, so caches cannot help.
  const auto measured = measure_hbm_copy(std::int64_t{1} << 30, options);
  ASSERT_TRUE(measured.is_ok()) << measured.status().to_string();
  EXPECT_EQ(measured->verified_mismatched_bytes, 0);
  const double peak_tbps = spec->hbm_bandwidth_tbps.value;
  // The fastest single repetition, not the median: no repetition may beat the hardware.
  EXPECT_LT(measured->kernel.min_ms_tbps, peak_tbps) << spec->name;
  EXPECT_LT(measured->runtime_copy.min_ms_tbps, peak_tbps) << spec->name;
  // And a working copy reaches a sizeable share of it (a timer reading 10x too long fails here).
  EXPECT_GT(measured->ceiling().median_tbps, 0.5 * peak_tbps) << spec->name;
}

}  // namespace
}  // namespace parity::bench
