// Helpers shared by the device-measuring subcommands (bench hbm/gemm/tbe, hw probe, gemm run):
// the "needs a CUDA device" check that comes after argument validation, and the timing flags.
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/core/status.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
#endif

namespace parity::cli {

/// kUnsupported (exit 3) when this build has no CUDA backend or no device is visible.
inline Status require_cuda_device(const std::string& command) {
#ifdef PARITY_HAS_CUDA
  if (gpu::device_count() == 0) return unsupported(command, ": no CUDA device visible (needs an NVIDIA GPU)");
  return Status::ok();
#else
  return unsupported(command, ": built without CUDA; configure with `cmake --preset cuda` on a machine "
                              "with an NVIDIA GPU");
#endif
}

/// Timing flags checked with the flag names in the message ("bench hbm: --reps=0 must be >= 1").
inline Result<bench::TimingOptions> timing_options_from_flags(const std::string& command, int warmup, int reps,
                                                              const std::string& cache = "flush",
                                                              double warmup_ms = 0.0, double rep_ms = 0.0,
                                                              const std::string& flush_bytes = "0") {
  PARITY_CHECK_ARG(reps >= 1, command, ": --reps=", reps, " must be >= 1");
  PARITY_CHECK_ARG(warmup >= 0, command, ": --warmup=", warmup, " must be >= 0");
  PARITY_CHECK_ARG(std::isfinite(warmup_ms) && warmup_ms >= 0.0 && warmup_ms <= bench::kMaxTimedMilliseconds,
                   command, ": --warmup-ms=", warmup_ms, " must be in [0, ", bench::kMaxTimedMilliseconds, "]");
  PARITY_CHECK_ARG(std::isfinite(rep_ms) && rep_ms >= 0.0 && rep_ms <= bench::kMaxTimedMilliseconds, command,
                   ": --rep-ms=", rep_ms, " must be in [0, ", bench::kMaxTimedMilliseconds, "]");
  bench::TimingOptions options;
  options.warmup_iterations = warmup;
  options.repetitions = reps;
  options.warmup_ms = warmup_ms;
  options.rep_ms = rep_ms;
  PARITY_ASSIGN_OR_RETURN(options.flush_bytes, bench::parse_byte_count(flush_bytes, "--flush-bytes"));
  PARITY_ASSIGN_OR_RETURN(options.cache, bench::parse_cache_mode(cache));
  PARITY_RETURN_IF_ERROR(bench::validate_timing_options(options));
  return options;
}

/// --warmup-ms / --rep-ms (time-based minimums, do_bench's way of sizing) and --flush-bytes.
inline void add_time_based_flags(CLI::App* cmd, double& warmup_ms, double& rep_ms, std::string& flush_bytes) {
  cmd->add_option("--flush-bytes", flush_bytes,
                  "bytes written to flush the L2 before each repetition (0 = twice the L2; do_bench writes 256MiB)")
      ->capture_default_str();
  cmd->add_option("--warmup-ms", warmup_ms,
                  "warm up for at least this many ms (raises --warmup; do_bench's default is 25). A long warm-up "
                  "measures the clocks the GPU holds under sustained load")
      ->capture_default_str();
  cmd->add_option("--rep-ms", rep_ms, "time at least this many ms of repetitions (raises --reps; do_bench: 100)")
      ->capture_default_str();
}

/// The copy size flag (--bytes, read + written), parsed and validated.
inline Result<std::int64_t> copy_bytes_from_flag(const std::string& command, const std::string& text) {
  PARITY_ASSIGN_OR_RETURN(const std::int64_t total_bytes, bench::parse_byte_count(text, "--bytes"));
  const Status valid = bench::validate_hbm_total_bytes(total_bytes);
  if (!valid.is_ok()) return valid.with_context(command + " --bytes");
  return total_bytes;
}

}  // namespace parity::cli
