// evaluate_selector and its summaries on hand-built measurements whose answers are known: the
// oracle is the fastest fully timed candidate (screened-only estimates count only when nothing
// was timed, or when the pick itself is an estimate faster than every timed one), ratios and
// their summary statistics match hand computation, Kendall tau is +1 / -1 for model-ordered /
// reverse-ordered timings, and the renderers escape shape names.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/evaluation.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

Selector h200_selector() {
  auto spec = hw::find_hardware("h200");
  EXPECT_TRUE(spec.is_ok()) << spec.status().to_string();
  const DeviceParams device = device_params_from_spec(*spec).value();
  return Selector(GemmModel(device, default_scalars(device)));
}

// A shape whose candidates are timed at `scale` x the model's own prediction, in the model's
// order (scale > 0) or with each time taken from the mirrored candidate (reversed order).
MeasuredShape shape_timed_by_model(Selector& selector, const std::string& name, bool reversed) {
  MeasuredShape s;
  s.name = name;
  s.problem.m = 4096;
  s.problem.n = 2048;
  s.problem.k = 1024;
  const auto space = hopper_modelled_space(ProblemClass{});
  std::vector<double> predicted_ms;
  for (std::size_t i = 0; i < 8; ++i) {
    MeasuredCandidate m;
    m.candidate = space[i * 31];
    predicted_ms.push_back(selector.model().predict_us(s.problem, m.candidate) * 1e-3);
    s.candidates.push_back(m);
  }
  std::vector<std::size_t> order(predicted_ms.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](auto a, auto b) { return predicted_ms[a] < predicted_ms[b]; });
  for (std::size_t r = 0; r < order.size(); ++r) {
    // Distinct times 1, 2, 3, ... ms in predicted order (or reversed).
    const double ms = reversed ? static_cast<double>(order.size() - r) : static_cast<double>(r + 1);
    s.candidates[order[r]].median_ms = ms;
  }
  return s;
}

TEST(GemmEvaluation, KendallTauIsPlusOneInModelOrderAndMinusOneReversed) {
  Selector selector = h200_selector();
  const auto report =
      evaluate_selector(selector, {shape_timed_by_model(selector, "ordered", false),
                                   shape_timed_by_model(selector, "reversed", true)});
  ASSERT_EQ(report.shapes.size(), 2u);
  EXPECT_DOUBLE_EQ(report.shapes[0].kendall_tau, 1.0);
  EXPECT_DOUBLE_EQ(report.shapes[1].kendall_tau, -1.0);
  EXPECT_DOUBLE_EQ(report.mean_kendall_tau, 0.0);
  // Ordered: the pick is the 1 ms candidate. Reversed: the pick is the slowest, 8 ms, oracle 1 ms.
  EXPECT_DOUBLE_EQ(report.shapes[0].selected_ratio, 1.0);
  EXPECT_DOUBLE_EQ(report.shapes[1].selected_ms, 8.0);
  EXPECT_DOUBLE_EQ(report.shapes[1].selected_ratio, 1.0 / 8.0);
  EXPECT_DOUBLE_EQ(report.selector.geomean, std::sqrt(1.0 / 8.0));
  EXPECT_DOUBLE_EQ(report.selector.worst, 1.0 / 8.0);
  EXPECT_DOUBLE_EQ(report.selector.within_5_percent, 0.5);
  EXPECT_DOUBLE_EQ(report.selector.time_weighted, 2.0 / 9.0);  // (1 + 1) / (1 + 8)
  EXPECT_DOUBLE_EQ(report.selector_within_noise, 0.5);         // no spreads recorded
  EXPECT_EQ(report.heuristic.shapes, 0);                       // no heuristic top-1 measured
  EXPECT_EQ(report.shapes[1].shape_index, 1u);
  EXPECT_EQ(report.shapes[1].ranking.size(), 8u);
}

TEST(GemmEvaluation, OracleIgnoresScreenedEstimatesUnlessPickedOrAlone) {
  Selector selector = h200_selector();
  MeasuredShape s = shape_timed_by_model(selector, "screened", false);
  // A screened-only estimate far below every timed candidate that the model does not pick: not
  // the oracle (it is an estimate).
  const RankedCandidate ranked_last = evaluate_selector(selector, {s}).shapes[0].ranking.back();
  s.candidates[ranked_last.index].is_screened_only = true;
  s.candidates[ranked_last.index].median_ms = 0.01;
  auto report = evaluate_selector(selector, {s});
  EXPECT_DOUBLE_EQ(report.shapes[0].oracle_ms, 1.0);
  // The model's pick screened-only and faster than every timed one: the estimate is the oracle.
  MeasuredShape picked = shape_timed_by_model(selector, "picked", false);
  const std::size_t pick = evaluate_selector(selector, {picked}).shapes[0].ranking.front().index;
  picked.candidates[pick].is_screened_only = true;
  picked.candidates[pick].median_ms = 0.5;
  report = evaluate_selector(selector, {picked});
  EXPECT_TRUE(report.shapes[0].selected_is_screened_only);
  EXPECT_DOUBLE_EQ(report.shapes[0].oracle_ms, 0.5);
  EXPECT_DOUBLE_EQ(report.shapes[0].selected_ratio, 1.0);
  // Nothing timed in full: the fastest estimate is the oracle (the others run 2, 3, ... ms).
  for (auto& c : picked.candidates) c.is_screened_only = true;
  picked.candidates[pick].median_ms = 4.5;
  report = evaluate_selector(selector, {picked});
  EXPECT_DOUBLE_EQ(report.shapes[0].oracle_ms, 2.0);
  EXPECT_DOUBLE_EQ(report.shapes[0].selected_ratio, 2.0 / 4.5);
}

TEST(GemmEvaluation, ShapesWithoutCandidatesAreSkippedAndEmptyReportsAreZero) {
  Selector selector = h200_selector();
  MeasuredShape empty;
  empty.name = "empty";
  empty.problem.m = empty.problem.n = empty.problem.k = 64;
  const auto report = evaluate_selector(selector, {empty});
  EXPECT_TRUE(report.shapes.empty());
  EXPECT_EQ(report.selector.shapes, 0);
  EXPECT_EQ(report.mean_kendall_tau, 0.0);
  const RatioSummary none = summarize_ratios({}, {}, {});
  EXPECT_EQ(none.shapes, 0);
  EXPECT_EQ(none.geomean, 0.0);
}

TEST(GemmEvaluation, SummaryMatchesHandComputation) {
  const RatioSummary s = summarize_ratios({1.0, 0.96, 0.92, 0.5}, {1, 2, 3, 4}, {1, 2.5, 3, 8});
  EXPECT_EQ(s.shapes, 4);
  EXPECT_NEAR(s.geomean, std::pow(1.0 * 0.96 * 0.92 * 0.5, 0.25), 1e-15);
  EXPECT_DOUBLE_EQ(s.worst, 0.5);
  EXPECT_DOUBLE_EQ(s.within_5_percent, 0.5);    // 1.0 and 0.96
  EXPECT_DOUBLE_EQ(s.within_10_percent, 0.75);  // and 0.92
  EXPECT_DOUBLE_EQ(s.time_weighted, 10.0 / 14.5);
}

TEST(GemmEvaluation, RenderersCarryTheFiguresAndEscapeNames) {
  Selector selector = h200_selector();
  MeasuredShape s = shape_timed_by_model(selector, "a<b&c>", false);
  s.candidates[3].heuristic_rank = 0;
  auto report = evaluate_selector(selector, {s});
  report.split = "all";
  const auto json = nlohmann::json::parse(evaluation_to_json(report));
  EXPECT_EQ(json["schema"], "parity.gemm.eval/1");
  EXPECT_EQ(json["shapes"][0]["name"], "a<b&c>");
  EXPECT_DOUBLE_EQ(json["selector"]["geomean_oracle_over_chosen"].get<double>(), 1.0);
  EXPECT_EQ(json["heuristic_top1"]["shapes"], 1);
  const std::string svg = evaluation_to_svg(report);
  EXPECT_NE(svg.find("a&lt;b&amp;c&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("a<b"), std::string::npos);
  EXPECT_NE(evaluation_to_markdown(report).find("(all shapes)"), std::string::npos);
}

}  // namespace
}  // namespace parity::gemm
