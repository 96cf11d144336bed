// CPU half of device_timing.hpp: option validation and names, usable before any device exists
// (the CLI validates arguments first, so bad input is exit 2 even in a CPU-only build).
#include "parity/bench/device_timing.hpp"

namespace parity::bench {

Status validate_timing_options(const TimingOptions& options) {
  PARITY_CHECK_ARG(options.repetitions >= 1, "repetitions=", options.repetitions, " must be >= 1");
  PARITY_CHECK_ARG(options.warmup_iterations >= 0, "warmup_iterations=", options.warmup_iterations,
                   " must be >= 0");
  PARITY_CHECK_ARG(options.flush_bytes >= 0, "flush_bytes=", options.flush_bytes,
                   " must be >= 0 (0 = twice the device's L2)");
  return Status::ok();
}

const char* cache_mode_name(TimingOptions::CacheMode mode) {
  return mode == TimingOptions::CacheMode::kFlushL2 ? "flush_l2" : "warm";
}

Result<TimingOptions::CacheMode> parse_cache_mode(const std::string& text) {
  if (text == "flush" || text == "flush_l2") return TimingOptions::CacheMode::kFlushL2;
  if (text == "warm") return TimingOptions::CacheMode::kWarm;
  return invalid_argument("--cache='", text, "' is not a cache mode; expected flush or warm");
}

}  // namespace parity::bench
