// Strict readers of the GEMM calibration inputs, from text so they can be fuzzed without files:
// the calibration JSON (<data dir>/calibration/<device>_gemm.json) and the shape-suite CSV
// (bench/shapes/*.csv). Every error is kInvalidArgument naming the origin (a file name), the key
// or line, and the value; neither function throws. Rules: docs/inputs.md.
#pragma once

#include <filesystem>
#include <string_view>

#include "parity/core/status.hpp"
#include "parity/gemm/calibration.hpp"

namespace parity::gemm {

// {"schema": kGemmCalibrationSchema, "device": "<catalogue name>", "scalars": {<every model
// scalar by name>: number within scalar_bounds}, "variant_efficiency": [8 positive numbers]
// (optional), "provenance": {...} (optional, kept verbatim)}. Unknown keys are errors (typos).
Result<GemmCalibration> parse_gemm_calibration(std::string_view text, std::string_view origin);

// A header "name,m,n,k[,more columns]" after optional '#' comment and blank lines, then one row
// per shape with as many fields as the header; m, n, k strict positive integers forming a valid
// GemmProblem. An empty or header-only suite is an error (the calibration/evaluation split would
// silently vanish).
Result<ShapeSuite> parse_shape_suite(std::string_view text, std::string_view origin);

// The files: read, then parsed as above with the path as origin (kNotFound when absent).
Result<GemmCalibration> load_gemm_calibration_file(const std::filesystem::path& path);
Result<ShapeSuite> load_shape_suite_file(const std::filesystem::path& csv_path);

}  // namespace parity::gemm
