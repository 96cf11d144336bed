#include "parity/gemm/measurements.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "hw/json_checks.hpp"

namespace parity::gemm {
namespace {

using nlohmann::json;
namespace jc = hw::detail;

constexpr std::int64_t kMaxRank = 1 << 20;  // far above any heuristic's list; keeps int exact
// Times outside [1 ns, ~3 hours] are no GPU kernel's: garbage that would turn ratios and sums
// into 0, inf or NaN downstream.
constexpr double kMinTimeMs = 1e-6;
constexpr double kMaxTimeMs = 1e7;

// A kernel time in milliseconds within [kMinTimeMs, kMaxTimeMs].
Result<double> read_time_ms(const json& row, std::string_view key, std::string_view origin,
                            const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(const double ms, jc::read_number(row, key, origin, path));
  PARITY_CHECK_ARG(ms > 0.0, jc::key_context(origin, jc::join_key(path, key)), ": value ", ms,
                   " must be > 0");
  PARITY_CHECK_ARG(ms >= kMinTimeMs && ms <= kMaxTimeMs,
                   jc::key_context(origin, jc::join_key(path, key)), ": value ", ms,
                   " ms is outside [", kMinTimeMs, ", ", kMaxTimeMs, "] (not a kernel time)");
  return ms;
}

// Optional time in [0, maximum]; 0 (the default) means not recorded. (Spreads may be tiny; a
// screened time too small to be real scales out of range and is refused there.)
Result<double> read_optional_time(const json& row, std::string_view key, std::string_view origin,
                                  const std::string& path, double maximum = kMaxTimeMs) {
  PARITY_ASSIGN_OR_RETURN(const double value,
                          jc::read_optional_number(row, key, origin, path, 0.0));
  PARITY_CHECK_ARG(value >= 0.0, jc::key_context(origin, jc::join_key(path, key)), ": value ",
                   value, " must be >= 0");
  PARITY_CHECK_ARG(value <= maximum, jc::key_context(origin, jc::join_key(path, key)), ": value ",
                   value, " must be <= ", maximum);
  return value;
}

enum class RowKind : std::uint8_t { kTimed, kScreenedOnly };

Result<MeasuredCandidate> parse_candidate_row(const json& row, std::string_view origin,
                                              const std::string& path, RowKind kind) {
  PARITY_RETURN_IF_ERROR(
      jc::expect_object(row, jc::key_context(origin, path), R"({"config": ..., ...})"));
  PARITY_ASSIGN_OR_RETURN(
      const std::string config,
      jc::read_string(row, "config", origin, path, jc::Emptiness::kRequireNonEmpty));
  MeasuredCandidate measured;
  auto parsed = parse_candidate(config);
  if (!parsed) return parsed.status().with_context(jc::key_context(origin, path + ".config"));
  measured.candidate = std::move(parsed).value();
  if (kind == RowKind::kTimed) {
    PARITY_ASSIGN_OR_RETURN(measured.median_ms, read_time_ms(row, "median_ms", origin, path));
    PARITY_ASSIGN_OR_RETURN(measured.spread_ms, read_optional_time(row, "spread_ms", origin, path));
  }
  // Read here for every row, so a wrongly typed one is an error even without a screened list.
  PARITY_RETURN_IF_ERROR(read_optional_time(row, "screen_ms", origin, path).status());
  PARITY_ASSIGN_OR_RETURN(const std::int64_t rank,
                          jc::read_optional_integer(row, "heuristic_rank", origin, path, -1,
                                                    kMaxRank, measured.candidate.heuristic_rank));
  // Without the key the rank comes from the config's hrank, which must obey the same range.
  PARITY_CHECK_ARG(rank >= -1 && rank <= kMaxRank, jc::key_context(origin, path + ".config"),
                   ": hrank=", rank, " is out of range [-1, ", kMaxRank, "]");
  measured.heuristic_rank = static_cast<int>(rank);
  measured.candidate.heuristic_rank = measured.heuristic_rank;
  measured.is_screened_only = kind == RowKind::kScreenedOnly;
  return measured;
}

// Screened-only candidates (gemm measure's "screened" list): the selector ranks the whole
// enumerated space, so calibration and evaluation see it too. Their few-repetition medians are
// put on the full-timing scale by the shape's median full/screened ratio.
Status add_screened_rows(const json& item, std::string_view origin, const std::string& where,
                         MeasuredShape& shape) {
  if (!item.contains("screened")) return Status::ok();
  const json& screened = item.at("screened");
  const std::string list_path = where + ".screened";
  PARITY_CHECK_ARG(screened.is_array(), jc::key_context(origin, list_path),
                   ": expected an array, got ", jc::describe(screened));
  std::vector<double> ratios;
  std::vector<std::string> timed_configs;
  const json& timed_rows = item.at("candidates");
  for (std::size_t i = 0; i < timed_rows.size(); ++i) {
    const std::string path = detail::concat(where, ".candidates[", i, "]");
    timed_configs.push_back(timed_rows[i].at("config").get<std::string>());
    PARITY_ASSIGN_OR_RETURN(const double screen_ms,
                            read_optional_time(timed_rows[i], "screen_ms", origin, path));
    if (screen_ms > 0.0) ratios.push_back(shape.candidates[i].median_ms / screen_ms);
  }
  double scale = 1.0;
  if (!ratios.empty()) {
    const auto middle = ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2);
    std::nth_element(ratios.begin(), middle, ratios.end());
    scale = *middle;
  }
  for (std::size_t s = 0; s < screened.size(); ++s) {
    const std::string path = detail::concat(list_path, "[", s, "]");
    PARITY_ASSIGN_OR_RETURN(MeasuredCandidate measured,
                            parse_candidate_row(screened[s], origin, path, RowKind::kScreenedOnly));
    PARITY_ASSIGN_OR_RETURN(const double screen_ms,
                            read_optional_time(screened[s], "screen_ms", origin, path));
    if (screen_ms == 0.0) continue;  // failed or not screened
    const std::string config = screened[s].at("config").get<std::string>();
    if (std::find(timed_configs.begin(), timed_configs.end(), config) != timed_configs.end()) {
      continue;
    }
    measured.median_ms = screen_ms * scale;
    PARITY_CHECK_ARG(measured.median_ms >= kMinTimeMs && measured.median_ms <= kMaxTimeMs,
                     jc::key_context(origin, path + ".screen_ms"), ": value ", screen_ms,
                     " scaled by the shape's full/screened ratio ", scale, " is outside [",
                     kMinTimeMs, ", ", kMaxTimeMs, "] ms");
    shape.candidates.push_back(std::move(measured));
  }
  return Status::ok();
}

Result<MeasuredShape> parse_shape(const json& item, std::size_t index, std::string_view origin) {
  const std::string where = detail::concat("shapes[", index, "]");
  PARITY_RETURN_IF_ERROR(
      jc::expect_object(item, jc::key_context(origin, where),
                        R"({"m": ..., "n": ..., "k": ..., "candidates": [...]})"));
  MeasuredShape shape;
  PARITY_ASSIGN_OR_RETURN(shape.name, jc::read_optional_string(item, "name", origin, where,
                                                               detail::concat("shape", index)));
  PARITY_ASSIGN_OR_RETURN(shape.problem.m, jc::read_integer(item, "m", origin, where, 1));
  PARITY_ASSIGN_OR_RETURN(shape.problem.n, jc::read_integer(item, "n", origin, where, 1));
  PARITY_ASSIGN_OR_RETURN(shape.problem.k, jc::read_integer(item, "k", origin, where, 1));
  PARITY_ASSIGN_OR_RETURN(shape.problem.batch,
                          jc::read_optional_integer(item, "batch", origin, where, 1, INT64_MAX, 1));
  PARITY_ASSIGN_OR_RETURN(const std::string dtype_text,
                          jc::read_optional_string(item, "dtype", origin, where, "bf16"));
  auto dtype = parse_gemm_dtype(dtype_text);
  if (!dtype) return dtype.status().with_context(jc::key_context(origin, where + ".dtype"));
  shape.problem.a_dtype = shape.problem.b_dtype = shape.problem.c_dtype = *dtype;
  PARITY_ASSIGN_OR_RETURN(const std::string layout_text,
                          jc::read_optional_string(item, "layout", origin, where, "TN"));
  auto layout = parse_layout(layout_text);
  if (!layout) return layout.status().with_context(jc::key_context(origin, where + ".layout"));
  shape.problem.layout = *layout;
  PARITY_RETURN_IF_ERROR(shape.problem.validate().with_context(jc::key_context(origin, where)));
  PARITY_ASSIGN_OR_RETURN(shape.heuristic_us, read_optional_time(item, "heuristic_us", origin,
                                                                 where, kMaxTimeMs * 1e3));
  const auto candidates = item.find("candidates");
  PARITY_CHECK_ARG(candidates != item.end(), origin, ": missing required key '", where,
                   ".candidates'");
  PARITY_CHECK_ARG(candidates->is_array(), jc::key_context(origin, where + ".candidates"),
                   ": expected an array, got ", jc::describe(*candidates));
  for (std::size_t c = 0; c < candidates->size(); ++c) {
    const std::string path = detail::concat(where, ".candidates[", c, "]");
    PARITY_ASSIGN_OR_RETURN(MeasuredCandidate measured,
                            parse_candidate_row((*candidates)[c], origin, path, RowKind::kTimed));
    shape.candidates.push_back(std::move(measured));
  }
  PARITY_RETURN_IF_ERROR(add_screened_rows(item, origin, where, shape));
  return shape;
}

}  // namespace

Result<MeasurementSet> parse_measurements_json(std::string_view text, std::string_view origin) {
  PARITY_ASSIGN_OR_RETURN(const json root, jc::parse_json_text(text, origin));
  PARITY_RETURN_IF_ERROR(jc::expect_object(root, origin, "a measurements JSON object"));
  PARITY_ASSIGN_OR_RETURN(const std::string schema,
                          jc::read_string(root, "schema", origin, "", jc::Emptiness::kAllowEmpty));
  PARITY_CHECK_ARG(schema == kMeasurementsSchema, jc::key_context(origin, "schema"), ": value '",
                   schema, "' is not supported; expected '", kMeasurementsSchema, "'");
  MeasurementSet set;
  PARITY_ASSIGN_OR_RETURN(set.device, jc::read_optional_string(root, "device", origin, "", ""));
  if (root.contains("provenance")) {
    const json& provenance = root.at("provenance");
    PARITY_RETURN_IF_ERROR(
        jc::expect_object(provenance, jc::key_context(origin, "provenance"), "a JSON object"));
    set.provenance_json = provenance.dump();
  }
  const auto shapes = root.find("shapes");
  PARITY_CHECK_ARG(shapes != root.end(), origin, ": missing required key 'shapes'");
  PARITY_CHECK_ARG(shapes->is_array(), jc::key_context(origin, "shapes"),
                   ": expected an array, got ", jc::describe(*shapes));
  for (std::size_t index = 0; index < shapes->size(); ++index) {
    PARITY_ASSIGN_OR_RETURN(auto shape, parse_shape((*shapes)[index], index, origin));
    set.shapes.push_back(std::move(shape));
  }
  return set;
}

Result<MeasurementSet> read_measurements_file(const std::string& path) {
  PARITY_ASSIGN_OR_RETURN(const std::string text, jc::read_text_file(path, "a measurements file"));
  return parse_measurements_json(text, path);
}

std::string measurements_to_json(const MeasurementSet& set) {
  json root;
  root["schema"] = kMeasurementsSchema;
  root["device"] = set.device;
  const json provenance = json::parse(set.provenance_json, nullptr, false);
  root["provenance"] = provenance.is_discarded() ? json::object() : provenance;
  root["shapes"] = json::array();
  for (const auto& shape : set.shapes) {
    json item;
    item["name"] = shape.name;
    item["m"] = shape.problem.m;
    item["n"] = shape.problem.n;
    item["k"] = shape.problem.k;
    item["batch"] = shape.problem.batch;
    item["dtype"] = std::string(gemm_dtype_name(shape.problem.a_dtype));
    item["layout"] = std::string(layout_name(shape.problem.layout));
    item["heuristic_us"] = shape.heuristic_us;
    item["candidates"] = json::array();
    for (const auto& measured : shape.candidates) {
      if (measured.is_screened_only) {
        if (!item.contains("screened")) item["screened"] = json::array();
        item["screened"].push_back({{"config", measured.candidate.describe()},
                                    {"screen_ms", measured.median_ms},
                                    {"heuristic_rank", measured.heuristic_rank}});
        continue;
      }
      item["candidates"].push_back({{"config", measured.candidate.describe()},
                                    {"median_ms", measured.median_ms},
                                    {"spread_ms", measured.spread_ms},
                                    {"heuristic_rank", measured.heuristic_rank}});
    }
    root["shapes"].push_back(std::move(item));
  }
  return root.dump(1);
}

Status write_measurements_file(const MeasurementSet& set, const std::string& path) {
  std::ofstream out(path);
  if (!out) return io_error("measurements: cannot write '", path, "'");
  out << measurements_to_json(set) << "\n";
  return out ? Status::ok() : io_error("measurements: write to '", path, "' failed");
}

}  // namespace parity::gemm
