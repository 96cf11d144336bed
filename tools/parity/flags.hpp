// What several commands share: flags parsed strictly (include/parity/core/parse.hpp: a seed of
// "-1" or "12x" is a usage error, exit 2, never a wrapped or truncated value), the timing flags
// (bench::TimingSettings, checked by bench::timing_options_from_settings) with a benchmark's --out,
// --data-dir, and the "needs a CUDA
// device" check that device-measuring commands make after validating their arguments.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <string>

#include "parity/bench/device_timing.hpp"
#include "parity/core/parse.hpp"
#include "parity/core/status.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
#endif

namespace parity::cli {

/// --seed as an unsigned 64-bit integer, the whole text or a usage error naming the flag.
inline CLI::Option* add_seed_option(CLI::App* command, std::uint64_t& seed, const std::string& help) {
  return command
      ->add_option_function<std::string>(
          "--seed",
          [&seed](const std::string& text) {
            auto value = parse_uint64(text, "--seed");
            if (!value) throw CLI::ValidationError(value.status().message());
            seed = *value;
          },
          help)
      ->default_str(std::to_string(seed));
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

/// A device benchmark's flags: the timing flags, then --out (its results JSON, provenance included).
inline void add_bench_flags(CLI::App* cmd, bench::TimingSettings& timing, TimingFlags which, std::string& out) {
  add_timing_flags(cmd, timing, which);
  cmd->add_option("--out", out, "write the results JSON (with provenance) to FILE");
}

/// --data-dir, for every command that reads the catalogue or calibration files (the order of
/// hw::resolve_data_dir).
inline void add_data_dir_option(CLI::App* cmd, std::string& data_dir) {
  cmd->add_option("--data-dir", data_dir,
                  "data directory with hardware/ and calibration/ (default: $PARITY_DATA_DIR, else the installed "
                  "data, else the source tree's data/)");
}

/// Text on stdout, flushed (progress lines of long runs show as they come).
inline void print_flushed(const std::string& text) {
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
}

/// A report the library returned, on stdout; an error is returned unprinted.
inline Status print_report(const Result<std::string>& report) {
  PARITY_RETURN_IF_ERROR(report.status());
  std::fputs(report->c_str(), stdout);
  return Status::ok();
}

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

/// A device-measuring command from the request the library built from its settings: the
/// request's error first (an input error, exit 2, in every build), then require_cuda_device, then
/// `run(request)` (returning the report text) printed. In a build without CUDA `run` is never
/// called, so it may name functions only parity_gpu defines (a generic lambda's body is then
/// never instantiated).
template <typename Request, typename Run>
Status run_on_cuda_device(const std::string& command, const Result<Request>& request, Run&& run) {
  PARITY_RETURN_IF_ERROR(request.status());
  PARITY_RETURN_IF_ERROR(require_cuda_device(command));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(const std::string report, run(*request));
  print_flushed(report);
#else
  (void)run;
#endif
  return Status::ok();
}

}  // namespace parity::cli
