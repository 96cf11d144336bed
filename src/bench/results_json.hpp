// Results files (private to the library: public headers carry no JSON types). Every benchmark
// writes {"benchmark", "provenance", its own fields, "clocks_before"/"clocks_after"}. Provenance:
// what was built (commit, build type, compiled archs), where it ran (device, SM count, L2, clocks
// now and max, driver/CUDA versions, hostname), when (UTC) and how (argv, seed). CPU-only builds,
// and CUDA builds with no device, report "device": null. Rates: see docs/benchmarking.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "parity/bench/hbm.hpp"
#include "parity/bench/stats.hpp"
#include "parity/core/status.hpp"

#ifdef PARITY_HAS_CUDA
#include "parity/bench/device_timing.hpp"
#endif

namespace parity::embedding {
class TbeLayout;
}  // namespace parity::embedding

namespace parity::bench {

struct TbeBenchSpec;
struct TbeForwardBandwidth;

/// This process's argv, read back from /proc/self/cmdline (empty where /proc is unavailable).
std::vector<std::string> process_command_line();

namespace detail {
/// Host and build fields; "device" is null. Implemented in the CPU library.
nlohmann::json host_provenance_json(const std::vector<std::string>& argv, std::uint64_t seed);
#ifdef PARITY_HAS_CUDA
/// Device 0's fields, or null without a device. Implemented in parity_gpu.
nlohmann::json device_provenance_json();
#endif
}  // namespace detail

#ifdef PARITY_HAS_CUDA
/// Clocks as a JSON object (null fields where unknown); used for "clocks_before"/"clocks_after".
nlohmann::json clocks_json(const DeviceClocks& clocks);
#endif

/// Host, build and (in CUDA translation units with a device) device provenance in one object.
inline nlohmann::json provenance_json(const std::vector<std::string>& argv, std::uint64_t seed) {
  nlohmann::json document = detail::host_provenance_json(argv, seed);
#ifdef PARITY_HAS_CUDA
  document["device"] = detail::device_provenance_json();
#endif
  return document;
}
/// The same for this process's own command line.
inline nlohmann::json provenance_json(std::uint64_t seed) { return provenance_json(process_command_line(), seed); }

/// Writes `document` (2-space indent, trailing newline), creating parent directories; kIoError
/// naming the path on failure.
Status write_json_file(const std::string& path, const nlohmann::json& document);

#ifdef PARITY_HAS_CUDA
/// Adds clocks_before/clocks_after to a results document and writes it to `out` (if not empty);
/// appends "wrote OUT" to `text` when written.
inline Status finish_results_document(nlohmann::json& document, const DeviceClocks& before,
                                      const DeviceClocks& after, const std::string& out, std::string* text) {
  document["clocks_before"] = clocks_json(before);
  document["clocks_after"] = clocks_json(after);
  if (out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(write_json_file(out, document));
  *text += "wrote " + out + "\n";
  return Status::ok();
}
#endif

/// {"median_ms", "p10_ms", "p90_ms", "min_ms", "max_ms", "mean_ms", "count"}.
nlohmann::json sample_stats_json(const SampleStats& stats);

/// {"benchmark": name, "provenance": provenance}; callers add their fields.
nlohmann::json results_document(const std::string& benchmark, nlohmann::json provenance);

/// The HBM copy measurement as a results-file fragment (no provenance; the caller adds it).
nlohmann::json hbm_measurement_json(const HbmMeasurement& measurement);

/// `bench tbe`'s results fragments: each feature's table, rows, dim and draw; the forward
/// bandwidth against the copy measured in the same call, with the targets.
nlohmann::json tbe_feature_draws_json(const TbeBenchSpec& spec, const embedding::TbeLayout& layout);
nlohmann::json tbe_forward_bandwidth_json(const TbeForwardBandwidth& fwd, const HbmMeasurement& copy);

}  // namespace parity::bench
