// Device memory bandwidth: a device-to-device copy counted as bytes read + bytes written, timed
// with the harness (events, L2 flushed) for two copies in the same run, the portable vectorised
// kernel and the runtime's cudaMemcpyAsync; the faster median is the ceiling.
// CPU part (parsing, validation) in the CPU library; device part in parity_gpu.
#pragma once

#include <cstdint>
#include <string>

#include "parity/bench/copy.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/bench/stats.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

inline constexpr std::int64_t kDefaultHbmTotalBytes = std::int64_t{4} << 30;  // 2 GiB read + 2 GiB written

/// "4294967296", "4GiB", "512MiB", "4GB", "1e9" style byte counts; kInvalidArgument naming
/// `parameter` when the text is not a whole, positive-or-zero count.
Result<std::int64_t> parse_byte_count(const std::string& text, const std::string& parameter);

/// total_bytes (read + written) must be positive and even: the copy moves total_bytes / 2.
Status validate_hbm_total_bytes(std::int64_t total_bytes);
/// The copy size as text ("4GiB"), parsed and validated; errors name `command` and --bytes.
Result<std::int64_t> parse_hbm_total_bytes(const std::string& command, const std::string& text);

/// `parity bench hbm` as a command line or a binding gives it (the copy size as text).
struct HbmBenchSettings {
  std::string total_bytes = std::to_string(kDefaultHbmTotalBytes);  // --bytes: "4GiB", "1e9", ...
  TimingSettings timing;
  std::string out;  // results JSON with provenance (empty: none)
};
/// What run_hbm_bench takes, checked.
struct HbmBenchRequest {
  std::int64_t total_bytes = kDefaultHbmTotalBytes;
  TimingOptions timing;
  std::string out;
};
/// The checked request (CPU, before any device); errors name "bench hbm" and the flag.
Result<HbmBenchRequest> hbm_bench_request_from_settings(const HbmBenchSettings& settings);

/// bytes / (ms * 1e-3) / 1e12; 0 when ms <= 0.
double bandwidth_tbps(double bytes, double ms);

struct CopyTiming {
  std::string method;  // "copy_kernel_vectorized_16B" or "cudaMemcpyAsync_d2d"
  SampleStats stats;
  double median_tbps = 0.0;  // from the median time
  double p10_ms_tbps = 0.0;  // from the p10 time (the faster tail)
  double p90_ms_tbps = 0.0;  // from the p90 time (the slower tail)
  double min_ms_tbps = 0.0;  // from the fastest repetition
};
CopyTiming make_copy_timing(std::string method, const SampleStats& stats, std::int64_t total_bytes);

struct HbmMeasurement {
  std::int64_t total_bytes = 0;  // read + written
  std::int64_t copy_bytes = 0;   // total_bytes / 2
  TimingOptions options;
  std::int64_t flush_bytes = 0;  // resolved scratch size (0 in warm mode)
  std::int64_t verified_mismatched_bytes = 0;
  CopyTiming kernel;
  CopyTiming runtime_copy;
  const CopyTiming& ceiling() const {
    return kernel.median_tbps >= runtime_copy.median_tbps ? kernel : runtime_copy;
  }
};

// ---- parity_gpu (PARITY_HAS_CUDA builds) ----

/// Allocates, fills, checks both copies bit for bit, then times both with `options`.
Result<HbmMeasurement> measure_hbm_copy(std::int64_t total_bytes, const TimingOptions& options);

/// `parity bench hbm`: the measurement with clocks before/after; writes the results JSON (with
/// provenance) to `out` when not empty. Returns the printed table.
Result<std::string> run_hbm_bench(std::int64_t total_bytes, const TimingOptions& options, const std::string& out);

}  // namespace parity::bench
