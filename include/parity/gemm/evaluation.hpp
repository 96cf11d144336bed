// Selector evaluation on measured data (CPU only): per shape, the model's pick among the measured
// candidates vs the vendor heuristic's top-1 vs the oracle (fastest measured), and a summary;
// rendered as JSON, Markdown and an SVG chart (efficiency per shape, predicted vs measured).
#pragma once

#include <string>
#include <vector>

#include "parity/gemm/measurements.hpp"
#include "parity/gemm/selector.hpp"

namespace parity::gemm {

struct EvaluationReport;

struct ShapeEvaluation {
  std::size_t shape_index = 0;  // into the shapes evaluate_selector was given
  std::vector<RankedCandidate> ranking;  // the selector's order of that shape's candidates
  std::string name;
  GemmProblem problem;
  int candidates = 0;
  double oracle_ms = 0.0;
  std::string oracle_config;
  double selected_ms = 0.0;
  double selected_predicted_us = 0.0;
  std::string selected_config;
  double heuristic_ms = 0.0;  // 0 when the heuristic's top-1 was not measured
  std::string heuristic_config;
  bool selected_is_screened_only = false;  // the pick was only screened: its time is an estimate
  double selected_ratio = 0.0;   // t_oracle / t_selected
  double heuristic_ratio = 0.0;  // t_oracle / t_heuristic_top1 (0 when absent)
  double kendall_tau = 0.0;      // predicted vs measured order over this shape's candidates
  // The pick is indistinguishable from the oracle: t_selected <= t_oracle + spread(oracle) +
  // spread(selected), spreads as recorded by the measurement (0 when not recorded).
  bool is_within_noise = false;
  std::vector<std::array<double, 2>> predicted_vs_measured_us;
};

struct RatioSummary {
  int shapes = 0;
  double geomean = 0.0;
  double worst = 0.0;
  double within_5_percent = 0.0;  // fraction of shapes with ratio >= 0.95
  double within_10_percent = 0.0;
  double time_weighted = 0.0;     // sum t_oracle / sum t_chosen
};

// One selection mode's figures (selector.hpp SelectionMode): ratios over all shapes and over the
// TMA-aligned / misaligned (alignment < 16 bytes) ones, and the mode's selection latency with
// everything it needs: the model over its modelled space on unseen shapes, plus for hybrid the
// vendor heuristic query recorded by `gemm measure` (median over the shapes; not included, and
// said so, when the file has none).
struct ModeFigures {
  std::string mode;  // "analytical" or "hybrid"
  RatioSummary all, aligned, misaligned;
  double model_p50_us = 0.0, model_p99_us = 0.0;
  double vendor_query_us = 0.0;
  bool is_vendor_query_recorded = false;
  double p50_us() const { return model_p50_us + vendor_query_us; }
  double p99_us() const { return model_p99_us + vendor_query_us; }
};
// The ratios of `report` (one mode's evaluate_selector) split by alignment; latency left to fill.
ModeFigures mode_figures(const EvaluationReport& report, std::string mode);

struct EvaluationReport {
  std::string device;
  std::string mode;  // the selection mode of `shapes` and `selector` below
  std::vector<ModeFigures> modes;  // both modes' figures (analytical first)
  std::string split;  // "evaluation", "calibration" or "all"
  std::string calibration_source;
  std::vector<ShapeEvaluation> shapes;
  RatioSummary selector;
  RatioSummary heuristic;
  double mean_kendall_tau = 0.0;
  double selector_within_noise = 0.0;   // fraction of shapes whose pick is within the noise floor
  double heuristic_within_noise = 0.0;
};

EvaluationReport evaluate_selector(Selector& selector, const std::vector<MeasuredShape>& shapes);
RatioSummary summarize_ratios(const std::vector<double>& ratios, const std::vector<double>& oracle_ms,
                              const std::vector<double>& chosen_ms);

std::string evaluation_to_json(const EvaluationReport& report);
std::string evaluation_to_markdown(const EvaluationReport& report);
// Two panels: t_oracle/t_chosen per shape (selector and heuristic), and log-log predicted vs
// measured time of every measured candidate.
std::string evaluation_to_svg(const EvaluationReport& report);

}  // namespace parity::gemm
