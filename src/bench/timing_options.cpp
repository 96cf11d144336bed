// CPU half of device_timing.hpp: option validation and names, usable before any device exists
// (the CLI validates arguments first, so bad input is exit 2 even in a CPU-only build).
#include <algorithm>
#include <cmath>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"

namespace parity::bench {

Status validate_timing_options(const TimingOptions& options) {
  PARITY_CHECK_ARG(options.repetitions >= 1, "repetitions=", options.repetitions, " must be >= 1");
  PARITY_CHECK_ARG(options.warmup_iterations >= 0, "warmup_iterations=", options.warmup_iterations,
                   " must be >= 0");
  PARITY_CHECK_ARG(options.flush_bytes >= 0, "flush_bytes=", options.flush_bytes,
                   " must be >= 0 (0 = twice the device's L2)");
  PARITY_CHECK_ARG(std::isfinite(options.warmup_ms) && options.warmup_ms >= 0.0 &&
                       options.warmup_ms <= kMaxTimedMilliseconds,
                   "warmup_ms=", options.warmup_ms, " must be in [0, ", kMaxTimedMilliseconds, "]");
  PARITY_CHECK_ARG(std::isfinite(options.rep_ms) && options.rep_ms >= 0.0 && options.rep_ms <= kMaxTimedMilliseconds,
                   "rep_ms=", options.rep_ms, " must be in [0, ", kMaxTimedMilliseconds, "]");
  return Status::ok();
}

ResolvedCounts resolve_time_based_counts(const TimingOptions& options, double estimate_ms) {
  ResolvedCounts counts{options.warmup_iterations, options.repetitions};
  // A zero or invalid estimate (work below the event resolution) counts as 1 us.
  const double per_run_ms = std::isfinite(estimate_ms) && estimate_ms > 1e-3 ? estimate_ms : 1e-3;
  auto runs_for = [&](double ms) {
    return static_cast<int>(std::min<double>(std::ceil(ms / per_run_ms), kMaxTimeBasedRepetitions));
  };
  if (options.warmup_ms > 0.0) counts.warmup_iterations = std::max(counts.warmup_iterations, runs_for(options.warmup_ms));
  if (options.rep_ms > 0.0) counts.repetitions = std::max(counts.repetitions, runs_for(options.rep_ms));
  return counts;
}

const char* cache_mode_name(TimingOptions::CacheMode mode) {
  switch (mode) {
    case TimingOptions::CacheMode::kFlushL2: return "flush_l2";
    case TimingOptions::CacheMode::kFlushL2Clean: return "flush_l2_clean";
    case TimingOptions::CacheMode::kWarm: return "warm";
  }
  return "unknown";
}

Result<TimingOptions::CacheMode> parse_cache_mode(const std::string& text) {
  if (text == "flush" || text == "flush_l2") return TimingOptions::CacheMode::kFlushL2;
  if (text == "flush-clean" || text == "flush_l2_clean") return TimingOptions::CacheMode::kFlushL2Clean;
  if (text == "warm") return TimingOptions::CacheMode::kWarm;
  return invalid_argument("--cache='", text, "' is not a cache mode; expected flush, flush-clean or warm");
}

Result<TimingOptions> timing_options_from_settings(std::string_view command, const TimingSettings& settings) {
  PARITY_CHECK_ARG(settings.reps >= 1, command, ": --reps=", settings.reps, " must be >= 1");
  PARITY_CHECK_ARG(settings.warmup >= 0, command, ": --warmup=", settings.warmup, " must be >= 0");
  PARITY_CHECK_ARG(std::isfinite(settings.warmup_ms) && settings.warmup_ms >= 0.0 &&
                       settings.warmup_ms <= kMaxTimedMilliseconds,
                   command, ": --warmup-ms=", settings.warmup_ms, " must be in [0, ", kMaxTimedMilliseconds, "]");
  PARITY_CHECK_ARG(std::isfinite(settings.rep_ms) && settings.rep_ms >= 0.0 && settings.rep_ms <= kMaxTimedMilliseconds,
                   command, ": --rep-ms=", settings.rep_ms, " must be in [0, ", kMaxTimedMilliseconds, "]");
  TimingOptions options;
  options.warmup_iterations = settings.warmup;
  options.repetitions = settings.reps;
  options.warmup_ms = settings.warmup_ms;
  options.rep_ms = settings.rep_ms;
  PARITY_ASSIGN_OR_RETURN(options.flush_bytes, parse_byte_count(settings.flush_bytes, "--flush-bytes"));
  PARITY_ASSIGN_OR_RETURN(options.cache, parse_cache_mode(settings.cache));
  PARITY_RETURN_IF_ERROR(validate_timing_options(options));
  return options;
}

}  // namespace parity::bench
