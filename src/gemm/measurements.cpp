#include "parity/gemm/measurements.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace parity::gemm {
namespace {

using nlohmann::json;

Result<MeasuredShape> parse_shape(const json& item, std::size_t index) {
  MeasuredShape shape;
  const std::string where = detail::concat("measurements: shapes[", index, "]");
  PARITY_CHECK_ARG(item.is_object(), where, " is not an object");
  for (const char* key : {"m", "n", "k"}) {
    PARITY_CHECK_ARG(item.contains(key) && item[key].is_number_integer(), where, ".", key,
                     " is missing or not an integer");
  }
  shape.name = item.value("name", detail::concat("shape", index));
  shape.problem.m = item["m"].get<std::int64_t>();
  shape.problem.n = item["n"].get<std::int64_t>();
  shape.problem.k = item["k"].get<std::int64_t>();
  shape.problem.batch = item.value("batch", std::int64_t{1});
  PARITY_ASSIGN_OR_RETURN(const DType dtype, parse_gemm_dtype(item.value("dtype", "bf16")));
  shape.problem.a_dtype = shape.problem.b_dtype = shape.problem.c_dtype = dtype;
  PARITY_ASSIGN_OR_RETURN(shape.problem.layout, parse_layout(item.value("layout", "TN")));
  PARITY_RETURN_IF_ERROR(shape.problem.validate().with_context(where));
  shape.heuristic_us = item.value("heuristic_us", 0.0);
  PARITY_CHECK_ARG(item.contains("candidates") && item["candidates"].is_array(), where,
                   ".candidates is missing or not an array");
  std::size_t c = 0;
  for (const auto& row : item["candidates"]) {
    const std::string cwhere = detail::concat(where, ".candidates[", c++, "]");
    PARITY_CHECK_ARG(row.contains("config") && row["config"].is_string(), cwhere,
                     ".config is missing");
    PARITY_CHECK_ARG(row.contains("median_ms") && row["median_ms"].is_number(), cwhere,
                     ".median_ms is missing");
    MeasuredCandidate measured;
    auto parsed = parse_candidate(row["config"].get<std::string>());
    if (!parsed) return parsed.status().with_context(cwhere);
    measured.candidate = std::move(parsed).value();
    measured.median_ms = row["median_ms"].get<double>();
    PARITY_CHECK_ARG(measured.median_ms > 0.0, cwhere, ".median_ms=", measured.median_ms,
                     " must be > 0");
    measured.spread_ms = row.value("spread_ms", 0.0);
    measured.heuristic_rank = row.value("heuristic_rank", measured.candidate.heuristic_rank);
    measured.candidate.heuristic_rank = measured.heuristic_rank;
    shape.candidates.push_back(std::move(measured));
  }
  // Screened-only candidates (gemm measure's "screened" list): the selector ranks the whole
  // enumerated space, so calibration and evaluation see it too. Their few-repetition medians are
  // put on the full-timing scale by the shape's median full/screened ratio.
  if (item.contains("screened") && item["screened"].is_array()) {
    std::vector<double> ratios;
    std::vector<std::string> timed_configs;
    for (const auto& row : item["candidates"]) {
      timed_configs.push_back(row["config"].get<std::string>());
      const double screen_ms = row.value("screen_ms", 0.0);
      if (screen_ms > 0.0) ratios.push_back(row["median_ms"].get<double>() / screen_ms);
    }
    double scale = 1.0;
    if (!ratios.empty()) {
      std::nth_element(ratios.begin(), ratios.begin() + static_cast<std::ptrdiff_t>(ratios.size() / 2),
                       ratios.end());
      scale = ratios[ratios.size() / 2];
    }
    std::size_t s = 0;
    for (const auto& row : item["screened"]) {
      const std::string swhere = detail::concat(where, ".screened[", s++, "]");
      PARITY_CHECK_ARG(row.contains("config") && row["config"].is_string(), swhere,
                       ".config is missing");
      const std::string config = row["config"].get<std::string>();
      const double screen_ms = row.value("screen_ms", 0.0);
      if (!(screen_ms > 0.0)) continue;  // failed or not screened
      if (std::find(timed_configs.begin(), timed_configs.end(), config) != timed_configs.end()) {
        continue;
      }
      MeasuredCandidate measured;
      auto parsed = parse_candidate(config);
      if (!parsed) return parsed.status().with_context(swhere);
      measured.candidate = std::move(parsed).value();
      measured.median_ms = screen_ms * scale;
      measured.heuristic_rank = row.value("heuristic_rank", measured.candidate.heuristic_rank);
      measured.candidate.heuristic_rank = measured.heuristic_rank;
      measured.is_screened_only = true;
      shape.candidates.push_back(std::move(measured));
    }
  }
  return shape;
}

}  // namespace

Result<MeasurementSet> parse_measurements_json(const std::string& text) {
  const json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  PARITY_CHECK_ARG(!root.is_discarded() && root.is_object(),
                   "measurements: not a JSON object");
  PARITY_CHECK_ARG(root.value("schema", "") == kMeasurementsSchema, "measurements: schema='",
                   root.value("schema", ""), "' (expected ", kMeasurementsSchema, ")");
  MeasurementSet set;
  set.device = root.value("device", "");
  if (root.contains("provenance")) set.provenance_json = root["provenance"].dump();
  PARITY_CHECK_ARG(root.contains("shapes") && root["shapes"].is_array(),
                   "measurements: shapes is missing or not an array");
  std::size_t index = 0;
  for (const auto& item : root["shapes"]) {
    PARITY_ASSIGN_OR_RETURN(auto shape, parse_shape(item, index++));
    set.shapes.push_back(std::move(shape));
  }
  return set;
}

Result<MeasurementSet> read_measurements_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return io_error("measurements: cannot open '", path, "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  auto set = parse_measurements_json(buffer.str());
  if (!set) return set.status().with_context(path);
  return set;
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
