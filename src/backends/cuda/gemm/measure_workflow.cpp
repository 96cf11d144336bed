// gemm run / gemm measure drivers (include/parity/bench/gemm_measure.hpp): selection, timing
// through measure_shape, the measurements/results JSON and the printed table.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "bench/results_json.hpp"
#include "core/text_format.hpp"
#include "parity/bench/gemm_measure.hpp"
#include "parity/core/gpu.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

using nlohmann::json;


double tflops_of(const GemmProblem& problem, double ms) {
  return ms > 0.0 ? problem.flop_count() / (ms * 1e-3) / 1e12 : 0.0;
}

json pick_json(const ShapeMeasurement& m, int index) {
  if (index < 0) return nullptr;
  const auto& c = m.candidates[static_cast<std::size_t>(index)];
  return {{"config", c.candidate.describe()},
          {"configuration", c.configuration},
          {"median_ms", c.stats.median_ms},
          {"tflops", tflops_of(m.problem, c.stats.median_ms)}};
}

json candidate_row(const GemmProblem& p, const TimedCandidate& c) {
  json sources = json::array();
  if (c.from_pruned_set) sources.push_back("pruned");
  if (c.candidate.heuristic_rank >= 0) sources.push_back("heuristic");
  if (c.selector_rank >= 0) sources.push_back("selector");
  json row = {{"config", c.candidate.describe()},
              {"configuration", c.configuration},
              {"heuristic_rank", c.candidate.heuristic_rank},
              {"selector_rank", c.selector_rank},
              {"sources", sources}};
  if (c.screen_ms > 0.0) row["screen_ms"] = c.screen_ms;
  if (!c.error.empty()) {
    row["error"] = c.error;
  } else if (c.is_timed) {
    row["median_ms"] = c.stats.median_ms;
    row["spread_ms"] = c.stats.p90_ms - c.stats.p10_ms;
    row["p10_ms"] = c.stats.p10_ms;
    row["p90_ms"] = c.stats.p90_ms;
    row["min_ms"] = c.stats.min_ms;
    row["count"] = c.stats.count;
    row["tflops"] = tflops_of(p, c.stats.median_ms);
    row["max_relative_error"] = c.max_relative_error;
  }
  return row;
}

// One shape in the measurements file (core keys of measurements.hpp plus measure's own).
json shape_json(const std::string& name, const ShapeMeasurement& m, const std::vector<double>& selector_predicted_us) {
  const auto& p = m.problem;
  json item = {{"name", name},
               {"m", p.m},
               {"n", p.n},
               {"k", p.k},
               {"batch", p.batch},
               {"dtype", gemm_dtype_name(p.a_dtype)},
               {"layout", layout_name(p.layout)},
               {"alignment_bytes", p.alignment_class_bytes()},
               {"flop_count", p.flop_count()},
               {"heuristic_us", m.heuristic_us},
               {"check_ms", m.check_ms},
               {"tolerance", m.tolerance}};
  json timed = json::array(), screened = json::array(), failed = json::array();
  for (const auto& c : m.candidates) {
    json row = candidate_row(p, c);
    (!c.error.empty() ? failed : c.is_timed ? timed : screened).push_back(std::move(row));
  }
  item["candidates"] = std::move(timed);
  item["screened"] = std::move(screened);
  item["failed"] = std::move(failed);
  item["oracle"] = pick_json(m, m.oracle);
  item["heuristic_top1"] = pick_json(m, m.heuristic_top1);
  item["selector_top1"] = pick_json(m, m.selector_top1);
  if (m.selector_top1 >= 0 && !selector_predicted_us.empty()) {
    item["selector_top1"]["predicted_ms"] = selector_predicted_us.front() * 1e-3;
  }
  json retimed = json::array();
  for (const auto& r : m.noise) {
    retimed.push_back({{"config", m.candidates[r.index].candidate.describe()},
                       {"first_ms", r.first_ms},
                       {"second_ms", r.second_ms}});
  }
  item["noise_floor"] = {{"retimed", retimed}, {"max_relative_spread", m.noise_max_relative_spread}};
  item["rounds"] = m.rounds;
  return item;
}

json enumeration_json(const CublasLtProvider& provider) {
  json out = json::array();
  for (const auto& r : provider.enumeration_reports()) {
    out.push_back({{"class", r.problem_class},
                   {"algo_ids", r.algo_ids},
                   {"family_algo_id", r.family_algo_id},
                   {"configs_built", r.configs_built},
                   {"configs_passed_check", r.configs_passed_check},
                   {"enumerate_ms", r.enumerate_ms}});
  }
  return out;
}

// "NVIDIA H200" -> "h200", "NVIDIA H100 80GB HBM3" -> "h100": the catalogue key the measurements
// are filed under (the normalised runtime name for a GPU the catalogue lacks).
std::string catalogue_name_of_device() {
  auto props = gpu::device_properties(0);
  if (!props.is_ok()) return "";
  if (auto spec = hw::find_hardware_for_device(props->name); spec.is_ok()) return spec->name;
  std::string name = props->name;
  if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
  return hw::normalize_hardware_name(name);
}

struct Selected {
  std::vector<Candidate> picks;  // best first
  std::vector<double> predicted_us;
  double select_us = 0.0;
};

Result<Selected> select_top(Selector& selector, const GemmProblem& problem,
                            const std::vector<Candidate>& candidates, std::size_t top) {
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(const Selection selection, selector.select(problem, candidates, top));
  Selected out;
  out.select_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  for (const auto& ranked : selection.top) {
    out.picks.push_back(candidates[ranked.index]);
    out.predicted_us.push_back(ranked.predicted_us);
  }
  return out;
}

std::string timing_line(const char* label, const GemmProblem& problem, const TimedCandidate& c,
                        const std::string& predicted) {
  return format_text("%-10s %10.4f %10s %8.1f %9.2e  %s\n", label, c.stats.median_ms, predicted.c_str(),
                tflops_of(problem, c.stats.median_ms), c.max_relative_error, c.configuration.c_str());
}

std::string run_report_text(const GemmRunRequest& request, const CublasLtProvider& provider, std::size_t candidates,
                            const Selected& selected, const ShapeMeasurement& m) {
  const auto& problem = request.problem;
  std::string text = format_text("gemm run: %s on %s (cuBLASLt %zu)\n", problem.describe().c_str(),
                            request.model.device.name.c_str(), CublasLtProvider::library_version());
  const auto report = provider.enumeration_reports();
  if (!report.empty()) {
    text += format_text("enumeration (once per class): %d configs built, %d pass AlgoCheck, %.1f ms; this shape: %zu "
                   "candidates, check %.2f ms, heuristic %.0f us, selection %.1f us\n",
                   report.front().configs_built, report.front().configs_passed_check, report.front().enumerate_ms,
                   candidates, provider.last_check_ms(), m.heuristic_us, selected.select_us);
  }
  const auto& chosen = m.candidates[static_cast<std::size_t>(m.selector_top1)];
  const double predicted_ms = selected.predicted_us.front() * 1e-3;
  text += format_text("%-10s %10s %10s %8s %9s  %s\n", "", "median_ms", "pred_ms", "TFLOP/s", "max_rel", "configuration");
  text += timing_line("selector", problem, chosen, format_text("%.4f", predicted_ms));
  if (m.heuristic_top1 >= 0) text += timing_line("heuristic", problem, m.candidates[m.heuristic_top1], "-");
  if (m.oracle >= 0) text += timing_line("best-timed", problem, m.candidates[m.oracle], "-");
  text += format_text("measured/predicted %.3f", chosen.stats.median_ms / predicted_ms);
  if (m.heuristic_top1 >= 0) {
    text += format_text(", heuristic/selector time %.3f",
                   m.candidates[static_cast<std::size_t>(m.heuristic_top1)].stats.median_ms / chosen.stats.median_ms);
  }
  return text + format_text(" (median of %d flushed repetitions each, interleaved)\n", request.options.repetitions);
}

}  // namespace

Result<std::string> run_selected_gemm(const GemmRunRequest& request) {
  PARITY_RETURN_IF_ERROR(request.problem.validate().with_context("gemm run"));
  Selector selector = make_selector(request.model);
  PARITY_ASSIGN_OR_RETURN(auto provider, CublasLtProvider::create());
  PARITY_ASSIGN_OR_RETURN(const auto candidates, provider->enumerate(request.problem));
  PARITY_ASSIGN_OR_RETURN(const Selected selected, select_top(selector, request.problem, candidates, 5));
  if (selected.picks.empty()) return unsupported("gemm run: the selector ranked no candidate");
  MeasureOptions options = request.options;
  options.noise_top = 0;
  options.screen_all = false;  // the choice and the heuristic's 8 only
  PARITY_ASSIGN_OR_RETURN(const ShapeMeasurement m,
                          measure_shape(*provider, request.problem, {selected.picks.front()}, options));
  if (m.selector_top1 < 0) {
    const auto& c = m.candidates.empty() ? TimedCandidate{} : m.candidates.back();
    return internal_error("gemm run: the selector's choice (", c.configuration, ") was not timed: ", c.error);
  }
  std::string text = run_report_text(request, *provider, candidates.size(), selected, m);
  if (!request.out.empty()) {
    json document;
    document["benchmark"] = "gemm_run";
    document["provenance"] = bench::provenance_json(options.seed);
    document["shape"] = shape_json("", m, selected.predicted_us);
    document["selection_us"] = selected.select_us;
    document["enumeration"] = enumeration_json(*provider);
    PARITY_RETURN_IF_ERROR(bench::write_json_file(request.out, document));
    text += "wrote " + request.out + "\n";
  }
  return text;
}

namespace {

json measure_provenance(const SuiteMeasureRequest& request, const CublasLtProvider& provider) {
  const MeasureOptions& options = request.options;
  json provenance = bench::provenance_json(options.seed);
  provenance["cublaslt_version"] = CublasLtProvider::library_version();
  provenance["method"] = {{"cache", "flush_l2"},
                          {"screen_repetitions", options.screen_repetitions},
                          {"repetitions", options.repetitions},
                          {"warmup_iterations", options.warmup_iterations},
                          {"interleaved_rounds", "per shape: its \"rounds\" (>= repetitions)"},
                          {"min_timed_ms", options.min_timed_ms},
                          {"max_repetitions", options.max_repetitions},
                          {"top_k", options.top_k},
                          {"noise_top", options.noise_top},
                          {"check_samples", options.check_samples},
                          {"max_workspace_bytes", provider.max_workspace_bytes()},
                          {"shapes_file", request.shapes},
                          {"stride", request.stride},
                          {"limit", request.limit}};
  return provenance;
}

// Written after every shape (to a temporary, then renamed: never half a file), so a run cut short
// keeps what it measured.
Status write_atomically(const std::string& out, const json& document) {
  const std::string partial = out + ".partial";
  PARITY_RETURN_IF_ERROR(bench::write_json_file(partial, document));
  std::error_code rename_error;
  std::filesystem::rename(partial, out, rename_error);
  if (rename_error) {
    return io_error("gemm measure: cannot rename '", partial, "' to '", out, "': ", rename_error.message());
  }
  return Status::ok();
}

// Geomeans of t_oracle / t over the shapes measured so far.
struct SuiteTally {
  double log_heuristic = 0.0, log_selector = 0.0;
  int shapes = 0, selector_shapes = 0;
};

std::string shape_line(const std::string& name, const ShapeMeasurement& m, SuiteTally& tally) {
  int timed = 0;
  for (const auto& c : m.candidates) timed += c.is_timed ? 1 : 0;
  auto ms = [&](int index) { return index < 0 ? NAN : m.candidates[static_cast<std::size_t>(index)].stats.median_ms; };
  const double oracle_ms = ms(m.oracle), heuristic_ms = ms(m.heuristic_top1), selector_ms = ms(m.selector_top1);
  if (std::isfinite(oracle_ms / heuristic_ms)) tally.log_heuristic += std::log(oracle_ms / heuristic_ms);
  if (std::isfinite(oracle_ms / selector_ms)) {
    tally.log_selector += std::log(oracle_ms / selector_ms);
    ++tally.selector_shapes;
  }
  ++tally.shapes;
  return format_text("%-28s %6lld %6lld %6lld %5zu %5d %10.4f %10.4f %10.4f %7.3f %7.3f %6.3f %6d\n", name.c_str(),
                static_cast<long long>(m.problem.m), static_cast<long long>(m.problem.n),
                static_cast<long long>(m.problem.k), m.candidates.size(), timed, oracle_ms, heuristic_ms,
                selector_ms, oracle_ms / heuristic_ms, oracle_ms / selector_ms, m.noise_max_relative_spread,
                m.rounds);
}

std::string suite_summary(const CublasLtProvider& provider, const SuiteTally& tally, const std::string& out) {
  std::string text;
  for (const auto& r : provider.enumeration_reports()) {
    text += format_text("enumeration %s: algo ids %zu, family %d, %d built, %d pass AlgoCheck, %.1f ms (once)\n",
                   r.problem_class.c_str(), r.algo_ids.size(), r.family_algo_id, r.configs_built,
                   r.configs_passed_check, r.enumerate_ms);
  }
  if (tally.shapes > 0) {
    text += format_text("geomean t_oracle/t: heuristic top-1 %.3f over %d shapes", std::exp(tally.log_heuristic / tally.shapes),
                   tally.shapes);
    if (tally.selector_shapes > 0) {
      text += format_text(", selector (current scalars) %.3f over %d", std::exp(tally.log_selector / tally.selector_shapes),
                     tally.selector_shapes);
    }
    text += "\n";
  }
  return text + format_text("wrote %s (%d shapes)\n", out.c_str(), tally.shapes);
}

}  // namespace

Result<std::string> measure_gemm_suite(const SuiteMeasureRequest& request,
                                       const std::function<void(const std::string&)>& print) {
  PARITY_RETURN_IF_ERROR(validate(request));
  PARITY_ASSIGN_OR_RETURN(const ShapeSuite suite, read_shape_suite(request.shapes));
  PARITY_ASSIGN_OR_RETURN(auto provider, CublasLtProvider::create());
  std::optional<Selector> selector;
  if (request.model) selector.emplace(make_selector(*request.model));
  json document = {{"schema", kMeasurementsSchema},
                   {"device", catalogue_name_of_device()},
                   {"provenance", measure_provenance(request, *provider)},
                   {"shapes", json::array()}};
  print(format_text("%-28s %6s %6s %6s %5s %5s %10s %10s %10s %7s %7s %6s %6s\n", "shape", "m", "n", "k", "cands", "timed",
               "oracle_ms", "heur1_ms", "select_ms", "h1/orc", "sel/orc", "noise", "rounds"));
  SuiteTally tally;
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < suite.problems.size(); i += static_cast<std::size_t>(request.stride)) {
    if (request.limit > 0 && tally.shapes >= request.limit) break;
    const double spent_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (request.time_budget_s > 0.0 && tally.shapes > 0 &&
        spent_s + spent_s / tally.shapes > request.time_budget_s) {
      print(format_text("time budget: stopping after %d shapes (%.0f s spent, budget %.0f s)\n", tally.shapes, spent_s,
                   request.time_budget_s));
      break;
    }
    GemmProblem problem = suite.problems[i];
    problem.a_dtype = problem.b_dtype = problem.c_dtype = request.dtype;
    Selected selected;
    if (selector) {
      PARITY_ASSIGN_OR_RETURN(const auto candidates, provider->enumerate(problem));
      PARITY_ASSIGN_OR_RETURN(selected, select_top(*selector, problem, candidates, 3));
    }
    auto measured = measure_shape(*provider, problem, selected.picks, request.options);
    if (!measured.is_ok()) return measured.status().with_context("gemm measure " + suite.names[i]);
    document["shapes"].push_back(shape_json(suite.names[i], *measured, selected.predicted_us));
    document["enumeration"] = enumeration_json(*provider);
    PARITY_RETURN_IF_ERROR(write_atomically(request.out, document));
    print(shape_line(suite.names[i], *measured, tally));
  }
  // Round trip through the shared reader, so calibrate/eval are sure to accept the file.
  PARITY_RETURN_IF_ERROR(read_measurements_file(request.out).status());
  return suite_summary(*provider, tally, request.out);
}

}  // namespace parity::gemm
