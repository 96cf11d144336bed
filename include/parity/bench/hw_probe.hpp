// `parity hw probe` as a library call (parity_gpu): measures the local GPU's real ceilings (bf16
// GEMM rate on large shapes via cuBLASLt's heuristic choice, device copy bandwidth counting bytes
// read + written, SM count, L2, clocks before/after) and writes the calibration file the models
// read, plus an optional results JSON.
#pragma once

#include <cstdint>
#include <string>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

struct HwProbeRequest {
  std::int64_t copy_total_bytes = 0;  // read + written per copy
  TimingOptions timing;
  std::string out;      // calibration file; empty: <data dir>/calibration/<device>.json
  std::string results;  // results JSON; empty: none
};

/// `parity hw probe` as a command line or a binding gives it (the copy size as text).
struct HwProbeSettings {
  std::string copy_total_bytes = std::to_string(kDefaultHbmTotalBytes);  // --bytes: "4GiB", ...
  TimingSettings timing{.warmup = 10, .reps = 30};
  std::string out;
  std::string results;
};
/// The checked request (CPU, before any device); errors name "hw probe" and the flag.
Result<HwProbeRequest> hw_probe_request_from_settings(const HwProbeSettings& settings);

/// Returns the printed report. Model parameters fitted earlier into an existing calibration
/// file are kept.
Result<std::string> run_hw_probe(const HwProbeRequest& request);

}  // namespace parity::bench
