#include "parity/hw/calibration.hpp"

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hw/hw_json.hpp"
#include "hw/json_checks.hpp"

namespace parity::hw {

using detail::DateForm;
using detail::Emptiness;
using detail::join_key;
using detail::key_context;
using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 10> kCalibrationKeys{
    "schema_version",   "device_name", "copy_bandwidth_tbps", "bf16_gemm_tflops",
    "sm_count",         "l2_bytes",    "sm_clock_before_mhz", "sm_clock_after_mhz",
    "model_parameters", "provenance"};
constexpr std::array<std::string_view, 4> kProvenanceKeys{"commit", "date", "device", "driver"};

// A measured ceiling: 0 (not measured) or within [minimum, maximum]. The range is far wider than
// any real device's, so it catches only unit mistakes (GB/s written as TB/s) and garbage that
// would push a model past physics or divide it into infinity.
Result<double> read_measurement(const json& object, std::string_view key, std::string_view origin,
                                double minimum, double maximum) {
  PARITY_ASSIGN_OR_RETURN(const double value, detail::read_number(object, key, origin, ""));
  if (value < 0.0) {
    return invalid_argument(key_context(origin, key), ": value ", value,
                            " must be >= 0 (0 means not measured)");
  }
  if (value != 0.0 && (value < minimum || value > maximum)) {
    return invalid_argument(key_context(origin, key), ": value ", value, " is outside [", minimum,
                            ", ", maximum, "] (0 means not measured): a unit mistake?");
  }
  return value;
}

constexpr double kMinRate = 1e-3;                 // TB/s or TFLOP/s: 1 GB/s, 1 GFLOP/s
constexpr double kMinClockMhz = 1.0;
constexpr double kMaxCopyBandwidthTbps = 100.0;  // H200: 4.8 TB/s peak
constexpr double kMaxGemmTflops = 100000.0;      // B200: 2250 dense BF16
constexpr double kMaxClockMhz = 10000.0;         // GPUs boost to ~2.1 GHz
constexpr std::int64_t kMaxL2Bytes = std::int64_t{1} << 40;

Provenance measured_here(const Calibration& calibration, std::string_view what) {
  Provenance provenance;
  provenance.kind = ProvenanceKind::kMeasuredHere;
  provenance.source = parity::detail::concat("calibration of ", calibration.device_name, " (", what,
                                             "): device '", calibration.provenance.device,
                                             "', driver ", calibration.provenance.driver,
                                             ", commit ", calibration.provenance.commit);
  provenance.date = calibration.provenance.date.substr(0, 10);  // YYYY-MM-DD without the time
  return provenance;
}

}  // namespace

json calibration_to_json(const Calibration& calibration) {
  json parameters = json::object();
  for (const auto& [name, value] : calibration.model_parameters) parameters[name] = value;
  return {{"schema_version", kCalibrationSchemaVersion},
          {"device_name", calibration.device_name},
          {"copy_bandwidth_tbps", calibration.copy_bandwidth_tbps},
          {"bf16_gemm_tflops", calibration.bf16_gemm_tflops},
          {"sm_count", calibration.sm_count},
          {"l2_bytes", calibration.l2_bytes},
          {"sm_clock_before_mhz", calibration.sm_clock_before_mhz},
          {"sm_clock_after_mhz", calibration.sm_clock_after_mhz},
          {"model_parameters", std::move(parameters)},
          {"provenance",
           {{"commit", calibration.provenance.commit},
            {"date", calibration.provenance.date},
            {"device", calibration.provenance.device},
            {"driver", calibration.provenance.driver}}}};
}

Result<Calibration> parse_calibration(const json& object, std::string_view origin) {
  PARITY_RETURN_IF_ERROR(detail::expect_object(object, origin, "a calibration JSON object"));
  PARITY_RETURN_IF_ERROR(detail::check_known_keys(object, kCalibrationKeys, origin, ""));
  PARITY_RETURN_IF_ERROR(detail::check_schema_version(object, origin, kCalibrationSchemaVersion));
  Calibration calibration;
  PARITY_ASSIGN_OR_RETURN(
      calibration.device_name,
      detail::read_string(object, "device_name", origin, "", Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(calibration.copy_bandwidth_tbps,
                          read_measurement(object, "copy_bandwidth_tbps", origin, kMinRate,
                                           kMaxCopyBandwidthTbps));
  PARITY_ASSIGN_OR_RETURN(calibration.bf16_gemm_tflops,
                          read_measurement(object, "bf16_gemm_tflops", origin, kMinRate,
                                           kMaxGemmTflops));
  PARITY_ASSIGN_OR_RETURN(const std::int64_t sm_count,
                          detail::read_integer(object, "sm_count", origin, "", 0));
  constexpr std::int64_t kMaxSmCount = 1 << 20;  // keeps the int conversion exact; no GPU is near
  if (sm_count > kMaxSmCount) {
    return invalid_argument(key_context(origin, "sm_count"), ": value ", sm_count,
                            " must be <= ", kMaxSmCount);
  }
  calibration.sm_count = static_cast<int>(sm_count);
  PARITY_ASSIGN_OR_RETURN(calibration.l2_bytes,
                          detail::read_integer(object, "l2_bytes", origin, "", 0, kMaxL2Bytes));
  PARITY_ASSIGN_OR_RETURN(calibration.sm_clock_before_mhz,
                          read_measurement(object, "sm_clock_before_mhz", origin, kMinClockMhz,
                                           kMaxClockMhz));
  PARITY_ASSIGN_OR_RETURN(calibration.sm_clock_after_mhz,
                          read_measurement(object, "sm_clock_after_mhz", origin, kMinClockMhz,
                                           kMaxClockMhz));

  if (object.contains("model_parameters")) {
    const json& parameters = object.at("model_parameters");
    PARITY_RETURN_IF_ERROR(detail::expect_object(
        parameters, key_context(origin, "model_parameters"), "an object of name -> number"));
    for (const auto& item : parameters.items()) {
      PARITY_ASSIGN_OR_RETURN(const double value, detail::read_number(parameters, item.key(),
                                                                      origin, "model_parameters"));
      calibration.model_parameters[item.key()] = value;
    }
  }

  const std::string provenance_path = "provenance";
  if (!object.contains(provenance_path)) {
    return invalid_argument(origin,
                            ": missing required key 'provenance' (commit, date, device, driver)");
  }
  const json& provenance = object.at(provenance_path);
  PARITY_RETURN_IF_ERROR(
      detail::expect_object(provenance, key_context(origin, provenance_path),
                            R"({"commit": ..., "date": ..., "device": ..., "driver": ...})"));
  PARITY_RETURN_IF_ERROR(
      detail::check_known_keys(provenance, kProvenanceKeys, origin, provenance_path));
  PARITY_ASSIGN_OR_RETURN(calibration.provenance.commit,
                          detail::read_string(provenance, "commit", origin, provenance_path,
                                              Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(calibration.provenance.date,
                          detail::read_string(provenance, "date", origin, provenance_path,
                                              Emptiness::kRequireNonEmpty));
  if (!detail::is_valid_date(calibration.provenance.date, DateForm::kDateOrTimestamp) ||
      calibration.provenance.date.size() < 10) {
    return invalid_argument(key_context(origin, join_key(provenance_path, "date")), ": date '",
                            calibration.provenance.date,
                            "' must be YYYY-MM-DD or an ISO 8601 timestamp YYYY-MM-DDThh:mm:ssZ");
  }
  PARITY_ASSIGN_OR_RETURN(calibration.provenance.device,
                          detail::read_string(provenance, "device", origin, provenance_path,
                                              Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(calibration.provenance.driver,
                          detail::read_string(provenance, "driver", origin, provenance_path,
                                              Emptiness::kRequireNonEmpty));
  return calibration;
}

Result<Calibration> parse_calibration_text(std::string_view text, std::string_view origin) {
  PARITY_ASSIGN_OR_RETURN(const json parsed, detail::parse_json_text(text, origin));
  return parse_calibration(parsed, origin);
}

Result<Calibration> load_calibration_file(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(const json parsed, detail::read_json_file(path));
  return parse_calibration(parsed, path.string());
}

Status write_calibration_file(const std::filesystem::path& path, const Calibration& calibration) {
  std::error_code error;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), error);
    if (error) {
      return io_error("write_calibration_file: cannot create '", path.parent_path().string(),
                      "': ", error.message());
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    return io_error("write_calibration_file: cannot open '", path.string(), "' for writing");
  out << calibration_to_json(calibration).dump(2) << "\n";
  out.close();
  if (!out) return io_error("write_calibration_file: write to '", path.string(), "' failed");
  return Status::ok();
}

HardwareSpec apply_calibration(HardwareSpec spec, const Calibration& calibration) {
  if (calibration.copy_bandwidth_tbps > 0.0) {
    spec.hbm_bandwidth_tbps = {calibration.copy_bandwidth_tbps,
                               measured_here(calibration, "device-to-device copy bandwidth")};
  }
  if (calibration.bf16_gemm_tflops > 0.0) {
    spec.dense_bf16_tflops = {calibration.bf16_gemm_tflops,
                              measured_here(calibration, "best dense BF16 GEMM rate")};
  }
  if (calibration.sm_count > 0) {
    spec.sm_count = {static_cast<double>(calibration.sm_count),
                     measured_here(calibration, "SM count reported by the runtime")};
  }
  if (calibration.l2_bytes > 0) {
    constexpr double kBytesPerMib = 1024.0 * 1024.0;
    // On NVIDIA the L2 is the last-level cache; keep the two equal there.
    const bool llc_is_l2 = spec.last_level_cache_mib.value == spec.l2_cache_mib.value;
    spec.l2_cache_mib = {static_cast<double>(calibration.l2_bytes) / kBytesPerMib,
                         measured_here(calibration, "L2 size reported by the runtime")};
    if (llc_is_l2) spec.last_level_cache_mib = spec.l2_cache_mib;
  }
  return spec;
}

}  // namespace parity::hw
