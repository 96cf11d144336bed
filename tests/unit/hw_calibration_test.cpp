// Calibration files: JSON round trip, strict rejection, and apply_calibration replacing exactly
// the measured ceilings with measured_here provenance.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "hw/hw_json.hpp"
#include "parity/hw/calibration.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::hw {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

Calibration sample_calibration() {
  Calibration calibration;
  calibration.device_name = "h200";
  calibration.copy_bandwidth_tbps = 4.1;
  calibration.bf16_gemm_tflops = 731.5;
  calibration.sm_count = 132;
  calibration.l2_bytes = 60 * 1024 * 1024;
  calibration.sm_clock_before_mhz = 1980;
  calibration.sm_clock_after_mhz = 1755;
  calibration.model_parameters = {{"gemm.max_efficiency", 0.81}, {"gemm.launch_overhead_us", 4.5}};
  calibration.provenance = {"0123abcd4567", "2026-11-29T09:12:00Z", "NVIDIA H200",
                            "580.65 / CUDA 13.0"};
  return calibration;
}

void expect_same(const Calibration& a, const Calibration& b) {
  EXPECT_EQ(a.device_name, b.device_name);
  EXPECT_EQ(a.copy_bandwidth_tbps, b.copy_bandwidth_tbps);
  EXPECT_EQ(a.bf16_gemm_tflops, b.bf16_gemm_tflops);
  EXPECT_EQ(a.sm_count, b.sm_count);
  EXPECT_EQ(a.l2_bytes, b.l2_bytes);
  EXPECT_EQ(a.sm_clock_before_mhz, b.sm_clock_before_mhz);
  EXPECT_EQ(a.sm_clock_after_mhz, b.sm_clock_after_mhz);
  EXPECT_EQ(a.model_parameters, b.model_parameters);
  EXPECT_EQ(a.provenance.commit, b.provenance.commit);
  EXPECT_EQ(a.provenance.date, b.provenance.date);
  EXPECT_EQ(a.provenance.device, b.provenance.device);
  EXPECT_EQ(a.provenance.driver, b.provenance.driver);
}

void expect_rejected(const json& calibration, std::initializer_list<std::string> fragments) {
  const auto result = parse_calibration(calibration, "cal.json");
  ASSERT_FALSE(result.is_ok()) << "accepted: " << calibration.dump();
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  for (const std::string& fragment : fragments) {
    EXPECT_NE(result.status().message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << result.status().message();
  }
}

TEST(HwCalibration, JsonAndFileRoundTrip) {
  const Calibration original = sample_calibration();
  const auto parsed = parse_calibration(calibration_to_json(original), "memory");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  expect_same(*parsed, original);

  const fs::path path = fs::path(::testing::TempDir()) / "parity_hw_cal" / "nested" / "h200.json";
  fs::remove_all(path.parent_path().parent_path());
  ASSERT_TRUE(write_calibration_file(path, original).is_ok());
  const auto loaded = load_calibration_file(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  expect_same(*loaded, original);
}

TEST(HwCalibration, RejectsBadInput) {
  const json good = calibration_to_json(sample_calibration());

  json negative = good;
  negative["copy_bandwidth_tbps"] = -1.5;
  expect_rejected(negative, {"cal.json: key 'copy_bandwidth_tbps'", "-1.5", ">= 0"});

  json unknown = good;
  unknown["copy_bandwith_tbps"] = 4.0;
  expect_rejected(unknown,
                  {"unknown key 'copy_bandwith_tbps'", "did you mean 'copy_bandwidth_tbps'"});

  json no_provenance = good;
  no_provenance.erase("provenance");
  expect_rejected(no_provenance, {"missing required key 'provenance'"});

  json bad_date = good;
  bad_date["provenance"]["date"] = "yesterday";
  expect_rejected(bad_date, {"key 'provenance.date'", "'yesterday'"});

  json month_only = good;
  month_only["provenance"]["date"] = "2026-11";
  expect_rejected(month_only, {"key 'provenance.date'", "YYYY-MM-DD"});

  json parameter = good;
  parameter["model_parameters"]["gemm.max_efficiency"] = "high";
  expect_rejected(parameter, {"key 'model_parameters.gemm.max_efficiency'", "expected a number"});

  json fractional_sm = good;
  fractional_sm["sm_count"] = 13.5;
  expect_rejected(fractional_sm, {"key 'sm_count'", "whole number"});

  json schema = good;
  schema["schema_version"] = 2;
  expect_rejected(schema, {"key 'schema_version'", "value 2", "expected 1"});

  json missing = good;
  missing.erase("bf16_gemm_tflops");
  expect_rejected(missing, {"missing required key 'bf16_gemm_tflops'"});
}

TEST(HwCalibration, MissingFileIsNotFound) {
  const auto result =
      load_calibration_file(fs::path(::testing::TempDir()) / "no_such_calibration.json");
  ASSERT_FALSE(result.is_ok());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
}

TEST(HwCalibration, ApplyReplacesMeasuredCeilingsOnly) {
  const auto h200 = find_hardware("h200");
  ASSERT_TRUE(h200.is_ok()) << h200.status().to_string();
  const Calibration calibration = sample_calibration();
  const HardwareSpec calibrated = apply_calibration(*h200, calibration);

  EXPECT_EQ(calibrated.hbm_bandwidth_tbps.value, 4.1);
  EXPECT_EQ(calibrated.dense_bf16_tflops.value, 731.5);
  EXPECT_EQ(calibrated.sm_count.value, 132.0);
  EXPECT_EQ(calibrated.l2_cache_mib.value, 60.0);  // 60 MiB in bytes, converted back exactly
  EXPECT_EQ(calibrated.last_level_cache_mib.value, 60.0) << "NVIDIA: last-level cache is the L2";
  for (const Quantity* measured : {&calibrated.hbm_bandwidth_tbps, &calibrated.dense_bf16_tflops,
                                   &calibrated.sm_count, &calibrated.l2_cache_mib}) {
    EXPECT_EQ(measured->provenance.kind, ProvenanceKind::kMeasuredHere);
    EXPECT_NE(measured->provenance.source.find("0123abcd4567"), std::string::npos);
    EXPECT_EQ(measured->provenance.date, "2026-11-29");
  }
  // Everything not measured is untouched.
  EXPECT_TRUE(calibrated.dense_fp8_tflops == h200->dense_fp8_tflops);
  EXPECT_TRUE(calibrated.hbm_capacity_gb == h200->hbm_capacity_gb);
  EXPECT_TRUE(calibrated.boost_clock_mhz == h200->boost_clock_mhz);
}

TEST(HwCalibration, ZeroMeansNotMeasuredAndAmdKeepsItsMall) {
  const auto mi300x = find_hardware("mi300x");
  ASSERT_TRUE(mi300x.is_ok()) << mi300x.status().to_string();
  Calibration calibration = sample_calibration();
  calibration.copy_bandwidth_tbps = 0.0;
  calibration.bf16_gemm_tflops = 0.0;
  calibration.sm_count = 0;
  const HardwareSpec calibrated = apply_calibration(*mi300x, calibration);
  EXPECT_TRUE(calibrated.hbm_bandwidth_tbps == mi300x->hbm_bandwidth_tbps);
  EXPECT_TRUE(calibrated.dense_bf16_tflops == mi300x->dense_bf16_tflops);
  EXPECT_TRUE(calibrated.sm_count == mi300x->sm_count);
  EXPECT_EQ(calibrated.l2_cache_mib.value, 60.0);
  EXPECT_EQ(calibrated.last_level_cache_mib.value, 256.0) << "the Infinity Cache is not the L2";
}

}  // namespace
}  // namespace parity::hw
