#include "parity/gemm/calibration_file.hpp"

#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hw/json_checks.hpp"
#include "parity/core/parse.hpp"

namespace parity::gemm {
namespace {

using nlohmann::json;
namespace jc = hw::detail;

constexpr std::array<std::string_view, 5> kCalibrationKeys{"schema", "device", "scalars",
                                                           "variant_efficiency", "provenance"};

Status read_scalars(const json& root, std::string_view origin, ModelScalars& scalars) {
  const auto it = root.find("scalars");
  PARITY_CHECK_ARG(it != root.end(), origin, ": missing required key 'scalars'");
  PARITY_RETURN_IF_ERROR(jc::expect_object(*it, jc::key_context(origin, "scalars"),
                                           "an object of scalar name -> number"));
  std::vector<std::string_view> names;
  for (int i = 0; i < kNumModelScalars; ++i) names.push_back(scalar_name(i));
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(*it, names, origin, "scalars"));
  std::array<double, kNumModelScalars> values{};
  for (int i = 0; i < kNumModelScalars; ++i) {
    // A fitted file names every scalar: a missing one would silently take a default.
    const std::array<double, 2> bounds = scalar_bounds(i);
    PARITY_ASSIGN_OR_RETURN(
        values[static_cast<std::size_t>(i)],
        jc::read_number_in(*it, scalar_name(i), origin, "scalars", bounds[0], bounds[1]));
  }
  const auto variant_efficiency = scalars.variant_efficiency;
  scalars = scalars_from_array(values);
  scalars.variant_efficiency = variant_efficiency;
  return Status::ok();
}

Status read_variant_efficiency(const json& root, std::string_view origin, ModelScalars& scalars) {
  const auto it = root.find("variant_efficiency");
  if (it == root.end()) return Status::ok();
  const std::size_t expected = scalars.variant_efficiency.size();
  PARITY_CHECK_ARG(it->is_array() && it->size() == expected,
                   jc::key_context(origin, "variant_efficiency"), ": expected an array of ",
                   expected, " positive numbers, got ", jc::describe(*it));
  // The fit sets each to a geometric-mean residual (0.97-1.02 on the H200); [0.5, 1.5] is far
  // wider, yet keeps a multiplier of the sustained rate from lifting predictions past the peak.
  constexpr double kMinEfficiency = 0.5;
  constexpr double kMaxEfficiency = 1.5;
  for (std::size_t i = 0; i < expected; ++i) {
    const std::string where =
        jc::key_context(origin, detail::concat("variant_efficiency[", i, "]"));
    const json& value = (*it)[i];
    PARITY_CHECK_ARG(value.is_number(), where, ": expected a number, got ", jc::describe(value));
    const double number = value.get<double>();
    PARITY_CHECK_ARG(number >= kMinEfficiency && number <= kMaxEfficiency, where, ": value ",
                     number, " is out of range [", kMinEfficiency, ", ", kMaxEfficiency, "]");
    scalars.variant_efficiency[i] = number;
  }
  return Status::ok();
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  for (std::size_t begin = 0;;) {
    const std::size_t comma = line.find(',', begin);
    fields.push_back(
        trim(line.substr(begin, comma == std::string_view::npos ? comma : comma - begin)));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  return fields;
}

}  // namespace

Result<GemmCalibration> parse_gemm_calibration(std::string_view text, std::string_view origin) {
  PARITY_ASSIGN_OR_RETURN(const json root, jc::parse_json_text(text, origin));
  PARITY_RETURN_IF_ERROR(jc::expect_object(root, origin, "a GEMM calibration JSON object"));
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(root, kCalibrationKeys, origin, ""));
  PARITY_ASSIGN_OR_RETURN(const std::string schema,
                          jc::read_string(root, "schema", origin, "", jc::Emptiness::kAllowEmpty));
  PARITY_CHECK_ARG(schema == kGemmCalibrationSchema, jc::key_context(origin, "schema"), ": value '",
                   schema, "' is not supported; expected '", kGemmCalibrationSchema, "'");
  GemmCalibration calibration;
  calibration.is_default = false;
  PARITY_ASSIGN_OR_RETURN(calibration.device, jc::read_string(root, "device", origin, "",
                                                              jc::Emptiness::kRequireNonEmpty));
  PARITY_RETURN_IF_ERROR(read_scalars(root, origin, calibration.scalars));
  PARITY_RETURN_IF_ERROR(read_variant_efficiency(root, origin, calibration.scalars));
  if (const auto it = root.find("provenance"); it != root.end()) {
    PARITY_RETURN_IF_ERROR(
        jc::expect_object(*it, jc::key_context(origin, "provenance"), "a JSON object"));
    calibration.provenance_json = it->dump();
  }
  return calibration;
}

Result<ShapeSuite> parse_shape_suite(std::string_view text, std::string_view origin) {
  ShapeSuite suite;
  std::size_t header_fields = 0;
  int line_number = 0;
  for (std::size_t line_start = 0; line_start < text.size();) {
    const std::size_t newline = text.find('\n', line_start);
    const std::string_view raw =
        text.substr(line_start, newline == std::string_view::npos ? newline : newline - line_start);
    line_start = newline == std::string_view::npos ? text.size() : newline + 1;
    ++line_number;
    const std::string_view line = trim(raw);
    if (line.empty() || line.front() == '#') continue;
    // Built only on failure: "<origin>: line N".
    const auto at_line = [&] { return detail::concat(origin, ": line ", line_number); };
    const std::vector<std::string_view> fields = split_fields(line);
    if (header_fields == 0) {
      PARITY_CHECK_ARG(fields.size() >= 4 && fields[0] == "name" && fields[1] == "m" &&
                           fields[2] == "n" && fields[3] == "k",
                       at_line(), ": header '", line, "' (expected name,m,n,k[,...])");
      header_fields = fields.size();
      continue;
    }
    PARITY_CHECK_ARG(fields.size() == header_fields, at_line(), " has ", fields.size(),
                     " fields (the header has ", header_fields, ")");
    PARITY_CHECK_ARG(!fields[0].empty(), at_line(), ": name is empty");
    GemmProblem problem;
    std::int64_t* const sizes[] = {&problem.m, &problem.n, &problem.k};
    static constexpr const char* kSizeNames[] = {"m", "n", "k"};
    for (std::size_t i = 0; i < 3; ++i) {
      auto size = parse_int64(fields[1 + i], kSizeNames[i], 1);
      if (!size) return size.status().with_context(at_line());
      *sizes[i] = *size;
    }
    PARITY_RETURN_IF_ERROR(problem.validate().with_context(at_line()));
    suite.names.emplace_back(fields[0]);
    suite.problems.push_back(problem);
  }
  PARITY_CHECK_ARG(header_fields != 0, origin,
                   ": empty shape suite (expected the header name,m,n,k[,...] and rows)");
  PARITY_CHECK_ARG(!suite.problems.empty(), origin, ": the shape suite has a header but no shapes");
  return suite;
}

Result<GemmCalibration> load_gemm_calibration_file(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          jc::read_text_file(path, "a GEMM calibration JSON file"));
  return parse_gemm_calibration(text, path.string());
}

Result<ShapeSuite> load_shape_suite_file(const std::filesystem::path& csv_path) {
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          jc::read_text_file(csv_path, "a shape-suite CSV"));
  return parse_shape_suite(text, csv_path.string());
}

}  // namespace parity::gemm
