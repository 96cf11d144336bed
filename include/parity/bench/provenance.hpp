// Provenance of every results file: what was built (commit, build type, compiled archs), where
// it ran (device, SM count, L2, clocks now and max, driver/CUDA versions, hostname), when (UTC)
// and how (argv, seed). CPU-only builds, and CUDA builds with no device, report "device": null.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "parity/core/status.hpp"

#ifdef PARITY_HAS_CUDA
#include "parity/bench/device_timing.hpp"
#endif

namespace parity::bench {

namespace detail {
/// Host and build fields; "device" is null. Implemented in the CPU library.
nlohmann::json host_provenance_json(int argc, char** argv, std::uint64_t seed);
#ifdef PARITY_HAS_CUDA
/// Device 0's fields, or null without a device. Implemented in parity_gpu.
nlohmann::json device_provenance_json();
#endif
}  // namespace detail

/// Clocks as a JSON object (null fields where unknown); used for "clocks_before"/"clocks_after".
#ifdef PARITY_HAS_CUDA
nlohmann::json clocks_json(const DeviceClocks& clocks);
#endif

/// Host, build and (in CUDA builds with a device) device provenance in one object.
inline nlohmann::json provenance_json(int argc, char** argv, std::uint64_t seed) {
  nlohmann::json document = detail::host_provenance_json(argc, argv, seed);
#ifdef PARITY_HAS_CUDA
  document["device"] = detail::device_provenance_json();
#endif
  return document;
}

/// Writes `document` (2-space indent, trailing newline), creating parent directories; kIoError
/// naming the path on failure.
Status write_json_file(const std::string& path, const nlohmann::json& document);

}  // namespace parity::bench
