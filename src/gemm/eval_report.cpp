// `gemm eval` as a library call: the selector scored on the measured shapes of one split, written
// as gemm_eval.{json,md,svg} and the per-candidate CSV (include/parity/gemm/workflow.hpp).
#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "gemm/workflow_text.hpp"
#include "parity/core/text_file.hpp"
#include "parity/gemm/workflow.hpp"

namespace parity::gemm {

// One row per measured candidate of every evaluated shape, in the order evaluate_selector ranked
// them (the pick has model_rank 0): the residual analyses of docs/gemm.md read this.
Status write_candidates_csv(const std::filesystem::path& path, const EvaluationReport& report,
                            const std::vector<MeasuredShape>& shapes) {
  std::ofstream out(path);
  if (!out) return io_error("gemm eval: cannot write '", path.string(), "'");
  out << "shape,m,n,k,batch,alignment_bytes,tile_m,tile_n,tile_k,cluster_m,cluster_n,split_k,"
         "mi_m,mi_n,family,variant,reduction,stages,heuristic_rank,screened_only,measured_us,"
         "predicted_us,model_rank\n";
  out << std::setprecision(6);
  for (const auto& evaluated : report.shapes) {
    const auto& shape = shapes[evaluated.shape_index];
    const auto& p = shape.problem;
    for (std::size_t r = 0; r < evaluated.ranking.size(); ++r) {
      const auto& entry = evaluated.ranking[r];
      const auto& measured = shape.candidates[entry.index];
      const auto& c = measured.candidate;
      out << shape.name << ',' << p.m << ',' << p.n << ',' << p.k << ',' << p.batch << ','
          << p.alignment_class_bytes() << ',' << c.tile_m << ',' << c.tile_n << ',' << c.tile_k
          << ',' << c.cluster_m << ',' << c.cluster_n << ',' << c.split_k << ',' << c.mi_m << ','
          << c.mi_n << ',' << c.kernel_family << ',' << c.variant << ',' << reduction_name(c.reduction)
          << ',' << c.stages << ',' << measured.heuristic_rank
          << ',' << (measured.is_screened_only ? 1 : 0) << ',' << measured.median_ms * 1e3 << ','
          << entry.predicted_us << ',' << r << '\n';
    }
  }
  return out ? Status::ok() : io_error("gemm eval: write to '", path.string(), "' failed");
}

namespace {

// Both modes' ratios on `shapes` and their selection latency: the model over its modelled space on
// unseen shapes, plus (hybrid) the median vendor heuristic query `gemm measure` recorded.
Result<std::vector<ModeFigures>> both_modes(const LoadedModel& model, const SelectorOptions& options,
                                            const std::vector<MeasuredShape>& shapes) {
  constexpr int kLatencySamples = 2000;
  constexpr std::size_t kTop = 5;
  PARITY_ASSIGN_OR_RETURN(const auto latency,
                          measure_selection_latency(model, shapes.front().problem, kLatencySamples, kTop));
  std::vector<double> query_us;
  for (const auto& shape : shapes) {
    if (shape.heuristic_us > 0) query_us.push_back(shape.heuristic_us);
  }
  std::sort(query_us.begin(), query_us.end());
  std::vector<ModeFigures> modes;
  for (const SelectionMode mode : {SelectionMode::kAnalytical, SelectionMode::kHybrid}) {
    SelectorOptions mode_options = options;
    mode_options.mode = mode;
    Selector selector = make_selector(model, mode_options);
    ModeFigures figures = mode_figures(evaluate_selector(selector, shapes),
                                       std::string(selection_mode_name(mode)));
    figures.model_p50_us = latency.p50_us;
    figures.model_p99_us = latency.p99_us;
    if (mode == SelectionMode::kHybrid && !query_us.empty()) {
      figures.is_vendor_query_recorded = true;
      figures.vendor_query_us = query_us[query_us.size() / 2];
    }
    modes.push_back(figures);
  }
  return modes;
}

}  // namespace

Result<EvaluationReport> evaluate(const EvalRequest& request) {
  PARITY_CHECK_ARG(!request.out_dir.empty(), "gemm eval: --out-dir DIR is required");
  PARITY_CHECK_ARG(request.split == "evaluation" || request.split == "calibration" || request.split == "all",
                   "gemm eval: --split='", request.split, "' (expected evaluation, calibration, all)");
  PARITY_ASSIGN_OR_RETURN(const auto set, load_measurements(request.measurements));
  ModelSource source = request.model;
  if (source.hw.empty()) source.hw = set.device;
  PARITY_ASSIGN_OR_RETURN(const auto model, load_model(source));
  PARITY_ASSIGN_OR_RETURN(const auto suite, read_shape_suite(request.shapes));
  PARITY_ASSIGN_OR_RETURN(const auto extra,
                          read_calibration_shapes(request.calibration_shapes.empty()
                                                      ? default_calibration_shape_paths()
                                                      : request.calibration_shapes));
  std::vector<MeasuredShape> shapes;
  for (const auto& shape : set.shapes) {
    const bool is_evaluation = split_of(shape, suite, &extra) == ShapeSplit::kEvaluation;
    if (request.split == "all" || (request.split == "evaluation") == is_evaluation) shapes.push_back(shape);
  }
  PARITY_CHECK_ARG(!shapes.empty(), "gemm eval: no ", request.split, " shapes in '", request.measurements, "'");
  Selector selector = make_selector(model, request.selector);
  auto report = evaluate_selector(selector, shapes);
  report.mode = std::string(selection_mode_name(request.selector.mode));
  PARITY_ASSIGN_OR_RETURN(report.modes, both_modes(model, request.selector, shapes));
  report.split = request.split;
  report.calibration_source = model.calibration_label;
  std::error_code ec;
  std::filesystem::create_directories(request.out_dir, ec);
  const std::filesystem::path dir(request.out_dir);
  PARITY_RETURN_IF_ERROR(write_text_file(dir / "gemm_eval.json", evaluation_to_json(report)));
  PARITY_RETURN_IF_ERROR(write_text_file(dir / "gemm_eval.md", evaluation_to_markdown(report)));
  PARITY_RETURN_IF_ERROR(write_text_file(dir / "gemm_eval.svg", evaluation_to_svg(report)));
  PARITY_RETURN_IF_ERROR(write_candidates_csv(dir / "gemm_eval_candidates.csv", report, shapes));
  return report;
}

std::string eval_summary_text(const EvaluationReport& report, const std::string& out_dir) {
  std::ostringstream out;
  const auto line = [&out](const char* name, const RatioSummary& s) {
    out << "  " << std::left << std::setw(24) << name << std::right << "geomean " << fixed(s.geomean, 3)
        << "  worst " << fixed(s.worst, 3) << "  within 5% " << fixed(100 * s.within_5_percent, 0)
        << "%  (" << s.shapes << " shapes)\n";
  };
  out << "gemm eval on " << report.device << " (" << report.split << " shapes, "
      << report.calibration_source << "): t_oracle / t_chosen\n";
  line(report.mode == "hybrid" ? "selector (hybrid)" : "selector (analytical)", report.selector);
  line("heuristic top-1", report.heuristic);
  for (const ModeFigures& m : report.modes) {
    out << "  mode " << std::left << std::setw(11) << m.mode << std::right << "geomean "
        << fixed(m.all.geomean, 3) << "  worst " << fixed(m.all.worst, 3) << "  within 5% "
        << fixed(100 * m.all.within_5_percent, 0) << "%; aligned " << fixed(m.aligned.geomean, 3)
        << " (" << m.aligned.shapes << "), misaligned " << fixed(m.misaligned.geomean, 3) << " ("
        << m.misaligned.shapes << "); selection p50 " << fixed(m.p50_us(), 1) << " us, p99 "
        << fixed(m.p99_us(), 1) << " us";
    if (m.mode == "hybrid") {
      out << (m.is_vendor_query_recorded
                  ? " (incl. the vendor query, " + fixed(m.vendor_query_us, 1) + " us recorded)"
                  : " (vendor query NOT included: not recorded in the measurements)");
    }
    out << "\n";
  }
  out << "  within the noise floor: model " << fixed(100 * report.selector_within_noise, 0)
      << "%, heuristic " << fixed(100 * report.heuristic_within_noise, 0) << "%\n"
      << "  mean Kendall tau " << fixed(report.mean_kendall_tau, 3) << "\n  wrote "
      << (std::filesystem::path(out_dir) / "gemm_eval.{json,md,svg}").string()
      << ", gemm_eval_candidates.csv\n";
  return out.str();
}

Result<std::string> eval_command_report(EvalRequest request, const std::string& mode) {
  PARITY_ASSIGN_OR_RETURN(request.selector.mode, parse_selection_mode(mode));
  PARITY_ASSIGN_OR_RETURN(const EvaluationReport report, evaluate(request));
  return eval_summary_text(report, request.out_dir);
}

}  // namespace parity::gemm
