// Calibration: what `parity hw probe` measured on one device, stored as
// <data dir>/calibration/<device>.json and read by the models. apply_calibration replaces the
// catalogue's ceilings with the measured ones (provenance kind measured_here).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "parity/core/status.hpp"
#include "parity/hw/hardware_spec.hpp"

namespace parity::hw {

inline constexpr int kCalibrationSchemaVersion = 1;

struct CalibrationProvenance {
  std::string commit;  // git SHA of the build that measured
  std::string date;    // YYYY-MM-DD, optionally followed by "T..." (ISO 8601 time)
  std::string device;  // device name as the runtime reports it: "NVIDIA H200"
  std::string driver;  // driver / runtime versions
};

// Measured values are >= 0; 0 means "not measured" and apply_calibration leaves that field alone.
struct Calibration {
  std::string device_name;           // catalogue name: "h200"
  double copy_bandwidth_tbps = 0.0;  // device-to-device copy, bytes read + written per second
  double bf16_gemm_tflops = 0.0;     // best measured dense BF16 GEMM rate
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  double sm_clock_before_mhz = 0.0;  // SM clock before and after the measurements
  double sm_clock_after_mhz = 0.0;
  std::map<std::string, double> model_parameters;  // fitted scalars of the GEMM model, by name
  CalibrationProvenance provenance;
};

// From JSON text; `origin` (a file name) prefixes every message. Never throws.
Result<Calibration> parse_calibration_text(std::string_view text, std::string_view origin);
Result<Calibration> load_calibration_file(const std::filesystem::path& path);
// Writes the JSON (creating parent directories); kIoError names the path on failure.
Status write_calibration_file(const std::filesystem::path& path, const Calibration& calibration);

// `spec` with the measured ceilings (HBM bandwidth <- copy bandwidth, dense BF16 <- GEMM rate,
// SM count, L2) replaced, each with provenance kind measured_here naming the calibration.
HardwareSpec apply_calibration(HardwareSpec spec, const Calibration& calibration);

}  // namespace parity::hw
