// Helpers shared by the device-measuring subcommands (bench hbm/gemm/tbe/attention/interaction,
// hw probe, gemm run): the "needs a CUDA device" check that comes after argument validation, and
// the timing flags (bench::TimingSettings, checked by bench::timing_options_from_settings).
#pragma once

#include <CLI/CLI.hpp>
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

/// Which timing flags a command takes besides --warmup and --reps.
enum class TimingFlags { kCounts, kCountsAndCache, kAll };

/// --warmup, --reps; with kCountsAndCache --cache; with kAll also --flush-bytes, --warmup-ms and
/// --rep-ms (time-based minimums, do_bench's way of sizing). Defaults are the settings' values.
inline void add_timing_flags(CLI::App* cmd, bench::TimingSettings& settings, TimingFlags which) {
  cmd->add_option("--warmup", settings.warmup, "untimed iterations before timing");
  cmd->add_option("--reps", settings.reps, "timed repetitions (each timed alone)");
  if (which == TimingFlags::kCounts) return;
  cmd->add_option("--cache", settings.cache,
                  "flush (memset of 2 x L2 before each repetition, as do_bench), flush-clean (then read back: no "
                  "dirty lines left) or warm (not flushed)");
  if (which == TimingFlags::kCountsAndCache) return;
  cmd->add_option("--flush-bytes", settings.flush_bytes,
                  "bytes written to flush the L2 before each repetition (0 = twice the L2; do_bench writes 256MiB)");
  cmd->add_option("--warmup-ms", settings.warmup_ms,
                  "warm up for at least this many ms (raises --warmup; do_bench's default is 25). A long warm-up "
                  "measures the clocks the GPU holds under sustained load");
  cmd->add_option("--rep-ms", settings.rep_ms, "time at least this many ms of repetitions (raises --reps; do_bench: 100)");
}

}  // namespace parity::cli
