// Device-event timing of a piece of GPU work: each repetition is timed alone between two events
// on the stream; by default the L2 is flushed before every repetition by writing a scratch buffer
// of twice its size, outside the timed region. Nothing is allocated or synchronised inside the
// timed loop: all repetitions are queued, then the host waits once and reads the events.
// Implemented in parity_gpu (src/backends/cuda/bench/); only PARITY_HAS_CUDA builds link it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "parity/bench/stats.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

struct TimingOptions {
  int warmup_iterations = 10;
  int repetitions = 50;
  // Time-based minimums, as triton.testing.do_bench sizes its loops: when > 0, the counts grow to
  // cover this many milliseconds at the work's estimated time (5 flushed runs). A long warm-up
  // brings the GPU to the clocks it holds under sustained load, so two tools compared at the same
  // warm-up see the same power state (a 0.35 ms GEMM runs 15% slower after ~50 ms of load).
  double warmup_ms = 0.0;
  double rep_ms = 0.0;
  // kFlushL2: a memset over flush_bytes before each repetition, as triton's do_bench and nvbench
  // flush (the L2 is left full of the memset's dirty lines, which the timed work then writes back
  // as it evicts them: ~60 MB on an H200, ~15 us of DRAM writes inside the timing).
  // kFlushL2Clean: the same memset, then a read of the buffer, so the L2 holds clean lines that
  // are dropped without a write-back: the timed work's own traffic only.
  enum class CacheMode { kFlushL2, kFlushL2Clean, kWarm } cache = CacheMode::kFlushL2;
  std::int64_t flush_bytes = 0;  // 0 = 2 x the device's L2
};

/// Validates the options (repetitions >= 1, warmup >= 0, flush_bytes >= 0, warmup_ms and rep_ms
/// finite, >= 0 and <= kMaxTimedMilliseconds) with messages naming the field; CPU code (the CLI)
/// calls this before anything touches a device.
inline constexpr double kMaxTimedMilliseconds = 600000.0;
/// Upper bound on the repetitions a time-based run may grow to (bounds event memory).
inline constexpr int kMaxTimeBasedRepetitions = 100000;
Status validate_timing_options(const TimingOptions& options);

/// The timing settings as a command line or a binding gives them (the flush size as text:
/// "256MiB", 0 = twice the L2; the cache mode as parse_cache_mode reads it).
struct TimingSettings {
  int warmup = 10;
  int reps = 50;
  std::string cache = "flush";
  double warmup_ms = 0.0;
  double rep_ms = 0.0;
  std::string flush_bytes = "0";
};
/// Checked TimingOptions; errors name the command and the flag ("bench hbm: --reps=0 must be >= 1").
Result<TimingOptions> timing_options_from_settings(std::string_view command, const TimingSettings& settings);

/// "flush_l2" / "flush_l2_clean" / "warm" (results files), and the CLI spelling "flush" /
/// "flush-clean" / "warm".
const char* cache_mode_name(TimingOptions::CacheMode mode);
Result<TimingOptions::CacheMode> parse_cache_mode(const std::string& text);

/// Runs `work` warmup_iterations times untimed, then repetitions times, each between its own pair
/// of events; a non-ok Status from `work` stops the run and is returned with context. With
/// warmup_ms/rep_ms set, both counts are first raised by resolve_time_based_counts. Timed runs are
/// queued behind a held kernel (stream_hold.hpp) and released up to 32 at a time, so `work` must
/// only queue: a `work` that synchronises the stream waits for the hold's ~2.5 s timeout once per
/// batch (its timings stay right; the run gets slow).
///
/// The counts a time-based run uses: max(count, ceil(ms / estimate_ms)), repetitions capped at
/// kMaxTimeBasedRepetitions. Pure; exposed for tests.
struct ResolvedCounts {
  int warmup_iterations = 0;
  int repetitions = 0;
};
ResolvedCounts resolve_time_based_counts(const TimingOptions& options, double estimate_ms);
Result<SampleStats> time_on_device(const std::function<Status(gpu::StreamHandle)>& work,
                                   const TimingOptions& options, gpu::StreamHandle stream = nullptr);

/// The scratch size the flush will write: options.flush_bytes, or 2 x the current device's L2;
/// 0 in warm mode. Reported in results files.
Result<std::int64_t> resolved_flush_bytes(const TimingOptions& options);

/// Clocks as the driver reports them now (NVML, loaded at run time from the driver's
/// libnvidia-ml.so.1). Fields NVML cannot give are -1; `source` says where the numbers came from.
struct DeviceClocks {
  int sm_clock_mhz = -1;
  int memory_clock_mhz = -1;
  int max_sm_clock_mhz = -1;
  int max_memory_clock_mhz = -1;
  int temperature_c = -1;
  double power_w = -1.0;
  std::string source;  // "nvml" or "cuda-runtime (max only; NVML unavailable: <why>)"
};
Result<DeviceClocks> read_device_clocks(int device_index = 0);

}  // namespace parity::bench
