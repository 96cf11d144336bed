// Helpers shared by the device-measuring subcommands (bench hbm, hw probe, bench gemm): the
// "needs a CUDA device" check that comes after argument validation, and the process's own argv
// for provenance (read back from /proc, since subcommand callbacks do not receive argv).
#pragma once

#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/provenance.hpp"
#include "parity/build_info.hpp"
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

#ifdef PARITY_HAS_CUDA
/// Adds clocks_before/clocks_after to a results document and writes it to `out` (if not empty).
inline Status finish_results_document(nlohmann::json& document, const bench::DeviceClocks& before,
                                      const bench::DeviceClocks& after, const std::string& out) {
  document["clocks_before"] = bench::clocks_json(before);
  document["clocks_after"] = bench::clocks_json(after);
  if (out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(bench::write_json_file(out, document));
  std::printf("wrote %s\n", out.c_str());
  return Status::ok();
}
#endif

/// The command line as argv strings (empty if /proc is unavailable).
class ProcessArgs {
 public:
  ProcessArgs() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string current;
    for (char c : raw) {
      if (c == '\0') {
        args_.push_back(current);
        current.clear();
      } else {
        current.push_back(c);
      }
    }
    if (!current.empty()) args_.push_back(current);
    for (auto& arg : args_) pointers_.push_back(arg.data());
  }
  int argc() const { return static_cast<int>(pointers_.size()); }
  char** argv() { return pointers_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> pointers_;
};

}  // namespace parity::cli
