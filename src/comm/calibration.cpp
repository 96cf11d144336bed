// The collectives benchmark's files and the planner's α–β fit: results JSON (write, read back) and
// the calibration JSON data/calibration/comm_<backend>_<host>.json (schema in docs/comm.md).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "bench/results_json.hpp"
#include "parity/comm/bench.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::comm {
namespace {

nlohmann::json row_json(const CommBenchRow& row, int ranks) {
  return {{"collective", collective_name(row.collective)},
          {"placement", bench_placement_name(row.placement)},
          {"bytes", row.bytes},
          {"count", row.count},
          {"time", bench::sample_stats_json(row.time)},
          {"algbw_gbps", row.algbw_gbps},
          {"busbw_gbps", row.busbw_gbps},
          {"busbw_factor", bus_bandwidth_factor(row.collective, ranks)},
          {"wrong", row.wrong_elements}};
}

Result<CommBenchRow> row_from_json(const nlohmann::json& item) {
  CommBenchRow row;
  PARITY_ASSIGN_OR_RETURN(row.collective,
                          parse_collective(item.at("collective").get<std::string>()));
  row.placement = item.at("placement").get<std::string>() == "in_place"
                      ? BenchPlacement::kInPlace
                      : BenchPlacement::kOutOfPlace;
  row.bytes = item.at("bytes").get<std::int64_t>();
  row.count = item.at("count").get<std::int64_t>();
  row.time.median_ms = item.at("time").at("median_ms").get<double>();
  row.time.count = item.at("time").at("count").get<int>();
  row.algbw_gbps = item.at("algbw_gbps").get<double>();
  row.busbw_gbps = item.at("busbw_gbps").get<double>();
  row.wrong_elements = item.at("wrong").get<std::int64_t>();
  return row;
}

nlohmann::json fit_json(const AlphaBetaFit& fit) {
  return {{"latency_us", fit.latency_us},
          {"alpha_us", fit.alpha_us},
          {"steps", fit.steps},
          {"beta_us_per_byte", fit.beta_us_per_byte},
          {"bus_bandwidth_gbps", fit.bus_bandwidth_gbps},
          {"busbw_factor", fit.busbw_factor},
          {"points", fit.points},
          {"min_bytes", fit.min_bytes},
          {"max_bytes", fit.max_bytes},
          {"max_relative_residual", fit.max_relative_residual},
          {"latency_clamped_to_zero", fit.is_latency_clamped}};
}

}  // namespace

Status write_comm_bench_json(const CommBenchReport& report, const std::string& path) {
  try {
    nlohmann::json document = bench::results_document("comm", bench::provenance_json(0));
    document["backend"] = report.backend;
    document["ranks"] = report.ranks;
    document["host"] = local_host_name();
    document["dtype"] = dtype_name(report.options.dtype);
    document["op"] = reduce_op_name(report.options.op);
    document["warmup"] = report.options.warmup;
    document["repetitions"] = report.options.repetitions;
    document["time_definition"] =
        "per repetition: the slowest rank's wall time of barrier-aligned call + synchronize";
    nlohmann::json rows = nlohmann::json::array();
    for (const CommBenchRow& row : report.rows) rows.push_back(row_json(row, report.ranks));
    document["rows"] = rows;
    return bench::write_json_file(path, document);
  } catch (const std::exception& e) {
    return internal_error("bench comm: building the results JSON failed: ", e.what());
  }
}

Result<CommBenchReport> read_comm_bench_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) return io_error("bench comm results: cannot open '", path, "'");
  try {
    const nlohmann::json document = nlohmann::json::parse(in);
    if (document.value("benchmark", "") != "comm") {
      return invalid_argument("bench comm results '", path, "': \"benchmark\" is not \"comm\"");
    }
    CommBenchReport report;
    report.backend = document.at("backend").get<std::string>();
    report.ranks = document.at("ranks").get<int>();
    PARITY_ASSIGN_OR_RETURN(report.options.dtype,
                            parse_dtype(document.at("dtype").get<std::string>()));
    for (const auto& item : document.at("rows")) {
      PARITY_ASSIGN_OR_RETURN(CommBenchRow row, row_from_json(item));
      report.rows.push_back(row);
    }
    return report;
  } catch (const std::exception& e) {
    return invalid_argument("bench comm results '", path, "': ", e.what());
  }
}

Result<AlphaBetaFit> fit_alpha_beta(Collective collective, int ranks,
                                    const std::vector<std::int64_t>& bytes,
                                    const std::vector<double>& median_us) {
  PARITY_CHECK_ARG(ranks >= 2, "ranks: ", ranks,
                   " (a fit needs >= 2 ranks: one rank moves no data)");
  PARITY_CHECK_ARG(bytes.size() == median_us.size(), "median_us: ", median_us.size(),
                   " values for ", bytes.size(), " sizes");
  AlphaBetaFit fit;
  fit.collective = collective;
  fit.busbw_factor = bus_bandwidth_factor(collective, ranks);
  fit.steps = ring_steps(collective, ranks);
  fit.points = static_cast<int>(bytes.size());
  // Weighted normal equations with weights 1/t^2 (relative residuals): small sizes pin the
  // latency, large ones the bandwidth, instead of the largest size dominating.
  double sw = 0, swx = 0, swxx = 0, swt = 0, swxt = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    PARITY_CHECK_ARG(median_us[i] > 0.0 && std::isfinite(median_us[i]), "median_us[", i,
                     "]=", median_us[i], " must be > 0");
    const double x = static_cast<double>(bytes[i]) * fit.busbw_factor;
    const double w = 1.0 / (median_us[i] * median_us[i]);
    sw += w, swx += w * x, swxx += w * x * x, swt += w * median_us[i], swxt += w * x * median_us[i];
    fit.min_bytes = i == 0 ? bytes[i] : std::min(fit.min_bytes, bytes[i]);
    fit.max_bytes = std::max(fit.max_bytes, bytes[i]);
  }
  PARITY_CHECK_ARG(fit.max_bytes > fit.min_bytes, "bytes: a fit needs at least two distinct sizes");
  const double determinant = sw * swxx - swx * swx;
  fit.latency_us = (swxx * swt - swx * swxt) / determinant;
  fit.beta_us_per_byte = (sw * swxt - swx * swt) / determinant;
  if (fit.latency_us < 0.0) {  // the data cannot resolve a latency: bandwidth-only fit through 0
    fit.is_latency_clamped = true;
    fit.latency_us = 0.0;
    fit.beta_us_per_byte = swxt / swxx;
  }
  if (!(fit.beta_us_per_byte > 0.0)) {
    return invalid_argument(
        collective_name(collective),
        ": times do not grow with size (extend --max-bytes so bandwidth shows)");
  }
  fit.alpha_us = fit.latency_us / fit.steps;
  fit.bus_bandwidth_gbps = 1e-3 / fit.beta_us_per_byte;  // 1 byte/us = 1e-3 GB/s
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const double predicted =
        fit.latency_us + fit.beta_us_per_byte * static_cast<double>(bytes[i]) * fit.busbw_factor;
    fit.max_relative_residual =
        std::max(fit.max_relative_residual, std::abs(predicted - median_us[i]) / median_us[i]);
  }
  return fit;
}

std::string alpha_beta_summary(const AlphaBetaFit& fit) {
  char line[320];
  std::snprintf(
      line, sizeof(line),
      "fit %-15s latency %.2f us (alpha %.3f us x %d steps), bus bandwidth %.3f GB/s, %d sizes "
      "%lld..%lld B, max relative residual %.2f%s",
      std::string(collective_name(fit.collective)).c_str(), fit.latency_us, fit.alpha_us, fit.steps,
      fit.bus_bandwidth_gbps, fit.points, static_cast<long long>(fit.min_bytes),
      static_cast<long long>(fit.max_bytes), fit.max_relative_residual,
      fit.is_latency_clamped ? " (latency clamped to 0)" : "");
  return line;
}

Result<std::vector<AlphaBetaFit>> fit_report(const CommBenchReport& report) {
  std::map<Collective, std::pair<std::vector<std::int64_t>, std::vector<double>>> points;
  for (const CommBenchRow& row : report.rows) {
    if (row.placement != BenchPlacement::kOutOfPlace && row.collective != Collective::kBroadcast)
      continue;
    points[row.collective].first.push_back(row.bytes);
    points[row.collective].second.push_back(row.time.median_ms * 1e3);
  }
  PARITY_CHECK_ARG(!points.empty(), "rows: no out-of-place measurements to fit");
  std::vector<AlphaBetaFit> fits;
  for (const auto& [collective, data] : points) {
    Result<AlphaBetaFit> fit = fit_alpha_beta(collective, report.ranks, data.first, data.second);
    if (!fit.is_ok()) return fit.status().with_context("fit");
    fits.push_back(*fit);
  }
  return fits;
}

std::string local_host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name;
}

std::string comm_calibration_path(const std::string& data_dir, const std::string& backend,
                                  const std::string& host) {
  return data_dir + "/calibration/comm_" + backend + "_" + host + ".json";
}

Status write_comm_calibration(const CommBenchReport& report, const std::vector<AlphaBetaFit>& fits,
                              const std::string& host, const std::string& results_path,
                              const std::string& path) {
  try {
    nlohmann::json collectives = nlohmann::json::object();
    for (const AlphaBetaFit& fit : fits)
      collectives[std::string(collective_name(fit.collective))] = fit_json(fit);
    nlohmann::json document = {
        {"schema", "parity.comm_calibration/1"},
        {"backend", report.backend},
        {"host", host},
        {"ranks", report.ranks},
        {"dtype", dtype_name(report.options.dtype)},
        {"model",
         "t_us = latency_us + beta_us_per_byte * bytes * busbw_factor; alpha_us = latency_us / "
         "steps"},
        {"fit", "least squares of relative residuals over the out-of-place median times"},
        {"collectives", collectives},
        {"source",
         {{"results_file",
           results_path.empty() ? nlohmann::json(nullptr) : nlohmann::json(results_path)},
          {"provenance", bench::provenance_json(0)}}}};
    return bench::write_json_file(path, document);
  } catch (const std::exception& e) {
    return internal_error("bench comm: building the calibration JSON failed: ", e.what());
  }
}

Result<std::string> fit_and_write_comm_calibration(const CommBenchReport& report,
                                                   const std::string& calibration_path,
                                                   const std::string& results_path) {
  PARITY_ASSIGN_OR_RETURN(const auto fits, fit_report(report));
  std::string text;
  for (const auto& fit : fits) text += alpha_beta_summary(fit) + "\n";
  const std::string host = local_host_name();
  const std::string path =
      calibration_path == "auto" || calibration_path.empty()
          ? comm_calibration_path(hw::resolve_data_dir(std::nullopt).string(), report.backend, host)
          : calibration_path;
  PARITY_RETURN_IF_ERROR(write_comm_calibration(report, fits, host, results_path, path));
  return text + "wrote " + path + "\n";
}

}  // namespace parity::comm
