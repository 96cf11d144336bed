// Text of training runs and step benchmarks (parity/train/report_text.hpp), the distributed
// settings (parity/train/dist_setup.hpp) and the spec overrides (model::apply_spec_overrides).
#include <gtest/gtest.h>

#include <string>

#include "parity/model/spec.hpp"
#include "parity/train/dist_setup.hpp"
#include "parity/train/report_text.hpp"

namespace parity::train {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TrainReportText, ClockRoundsAndMarksUnknown) {
  EXPECT_EQ(clock_text(-1), "?");
  EXPECT_EQ(clock_text(0), "0:00:00");
  EXPECT_EQ(clock_text(59.6), "0:01:00");
  EXPECT_EQ(clock_text(3723), "1:02:03");
}

TEST(TrainReportText, ProgressAndEvaluationLines) {
  TrainProgress progress;
  progress.step = 5;
  progress.total_steps = 10;
  progress.samples_per_second = 1234.4;
  progress.loss = 0.5;
  progress.learning_rate = 0.01;
  progress.eta_seconds = 61;
  EXPECT_EQ(progress_text(progress), "step 5/10  1234 samples/s  loss 0.50000  lr 0.01  ETA 0:01:01");
  EvalRecord eval;
  eval.step = 7;
  eval.ne = 0.9;
  eval.auc = 0.75;
  eval.logloss = 0.45;
  eval.samples = 100;
  EXPECT_EQ(evaluation_text(eval), "eval  step 7: NE 0.90000  AUC 0.75000  logloss 0.45000  (100 samples)\n");
}

TrainProgress step_progress(std::int64_t step, std::int64_t total_steps) {
  TrainProgress progress;
  progress.step = step;
  progress.total_steps = total_steps;
  return progress;
}

TEST(TrainReportText, PlainProgressLinesAreThrottledToTenSecondsButTheLastStepAlwaysShows) {
  ProgressText text(ProgressText::Style::kPlainLines);
  EXPECT_EQ(text.render(step_progress(1, 4), 100.0).rfind("train  25% step 1/4  ", 0), 0u);
  EXPECT_EQ(text.render(step_progress(2, 4), 105.0), "");  // 5 s after the last line
  EXPECT_NE(text.render(step_progress(3, 4), 110.0), "");  // 10 s after
  const std::string last = text.render(step_progress(4, 4), 110.5);
  EXPECT_EQ(last.rfind("train 100% step 4/4", 0), 0u) << last;
  EXPECT_EQ(last.back(), '\n');
  EXPECT_EQ(text.end_bar(), "");  // no bar in plain lines
  TrainProgress checkpoint;
  checkpoint.event = TrainProgress::Event::kCheckpoint;
  EXPECT_EQ(text.render(checkpoint, 500.0), "");
}

TEST(TrainReportText, TerminalBarIsRedrawnInPlaceAndClosedBeforeAnEvaluation) {
  ProgressText text(ProgressText::Style::kTerminalBar);
  const std::string half = text.render(step_progress(5, 10), 0.0);
  // 30 columns, half filled, then the cleared rest of the line.
  EXPECT_EQ(half.rfind("\r[" + std::string(15, '#') + std::string(15, ' ') + "]  50% step 5/10", 0), 0u) << half;
  EXPECT_EQ(half.substr(half.size() - 3), "\033[K");
  EXPECT_EQ(text.render(step_progress(6, 10), 0.05), "");  // within 0.1 s
  TrainProgress evaluation;
  evaluation.event = TrainProgress::Event::kEvaluation;
  const std::string eval_text = text.render(evaluation, 0.06);
  EXPECT_EQ(eval_text.rfind("\neval  step 0:", 0), 0u) << eval_text;  // the open bar ends first
  EXPECT_EQ(text.end_bar(), "");
}

TEST(TrainReportText, SummaryNamesOptionalPartsOnlyWhenPresent) {
  TrainSummary summary;
  summary.steps = 3;
  summary.samples = 768;
  summary.epochs_completed = 1;
  summary.num_threads = 2;
  summary.metrics_log_path = std::string(5000, 'm');  // longer than one formatted line
  const std::string fresh = summary_text(summary);
  EXPECT_EQ(fresh.rfind("done: 3 steps, 768 samples, 1 epoch(s) on 2 thread(s)", 0), 0u) << fresh;
  EXPECT_FALSE(contains(fresh, "resumed"));
  EXPECT_FALSE(contains(fresh, "eval:"));
  EXPECT_FALSE(contains(fresh, "planted"));
  EXPECT_TRUE(contains(fresh, "files: " + summary.metrics_log_path + ", ")) << "a long path is cut";
  summary.resumed_from_step = 2;
  summary.evaluations.push_back(EvalRecord{});
  summary.planted_auc = 0.7;
  const std::string resumed = summary_text(summary);
  EXPECT_TRUE(contains(resumed, "resumed from the checkpoint at step 2\n"));
  EXPECT_TRUE(contains(resumed, "eval: NE "));
  EXPECT_TRUE(contains(resumed, "planted model's AUC on the eval split: 0.70000\n"));
}

TEST(TrainReportText, StepBenchSharesAddUpAndOptionalLines) {
  StepBenchReport report;
  report.model = "tiny";
  report.precision = "fp32";
  report.device = "cpu";
  report.batch_size = 64;
  report.breakdown = {{"embeddings", 1.0}, {"gemms", 3.0}};
  report.breakdown_step_ms = 4.0;
  StepBenchOptions options;
  options.breakdown_steps = 2;
  const std::string text = step_bench_text(report, options);
  EXPECT_EQ(text.rfind("bench train: tiny fp32 on cpu, batch 64: ", 0), 0u) << text;
  EXPECT_TRUE(contains(text, "embeddings 1.000 ms (25%), gemms 3.000 ms (75%), step 4.000 ms\n")) << text;
  EXPECT_TRUE(contains(text, "GEMM choice: measured;"));
  EXPECT_FALSE(contains(text, "dReLU fused"));
  options.fused_drelu = true;
  EXPECT_TRUE(contains(step_bench_text(report, options), "dReLU fused"));
}

TEST(TrainReportText, DistStepBenchWithoutTheSingleRunHasNoOverhead) {
  DistStepBenchReport report;
  report.backend = "local";
  report.distributed_step_ms = {2.0, 2.0};
  report.median_distributed_ms = 2.0;
  auto spec = model::preset("tiny");
  ASSERT_TRUE(spec.is_ok());
  StepBenchOptions options;
  options.batch_size = 2000;
  const std::string text = dist_step_bench_text(report, *spec, options, 3);
  // 2000 samples in 2 ms: 1e6 samples/s.
  EXPECT_TRUE(contains(text, "distributed:    2.000 ms/step (1.000 M samples/s)\n")) << text;
  EXPECT_TRUE(contains(text, "2 timed steps each in 3 alternating rounds")) << text;
  EXPECT_FALSE(contains(text, "overhead"));
  report.single_step_ms = {1.0};
  report.median_single_ms = 1.0;
  report.overhead_percent = 100.0;
  EXPECT_TRUE(contains(dist_step_bench_text(report, *spec, options, 3), "overhead: +100.00%"));
}

TEST(DistSetup, ParsesAndNamesTheSetting) {
  DistTrainSettings settings;
  auto defaults = dist_train_options(settings);
  ASSERT_TRUE(defaults.is_ok()) << defaults.status().to_string();
  EXPECT_EQ(defaults->gradient_chunks, 0);
  EXPECT_EQ(defaults->bucket_bytes, 4 << 20);
  EXPECT_EQ(defaults->dense_reduction, DistTrainOptions::DenseReduction::kOverlapped);
  EXPECT_FALSE(settings.has_host_reduction_settings());
  settings.dense_reduction = "after-backward";
  settings.gradient_chunks = "8";
  EXPECT_TRUE(settings.has_host_reduction_settings());
  auto parsed = dist_train_options(settings);
  ASSERT_TRUE(parsed.is_ok());
  EXPECT_EQ(parsed->gradient_chunks, 8);
  EXPECT_EQ(parsed->dense_reduction, DistTrainOptions::DenseReduction::kAfterBackward);
  settings.bucket_bytes = "0";
  EXPECT_TRUE(contains(dist_train_options(settings).status().message(), "--bucket-bytes"));
  settings.bucket_bytes = "4MiB";
  settings.dense_reduction = "sometimes";
  EXPECT_TRUE(contains(dist_train_options(settings).status().message(), "--dense-reduction: 'sometimes'"));
  settings.gradient_chunks = "8x";
  EXPECT_EQ(dist_train_options(settings).status().code(), StatusCode::kInvalidArgument);
}

TEST(DistSetup, TimeoutIsPositiveSecondsInMilliseconds) {
  DistTrainSettings settings;
  settings.comm_timeout = "1.5";
  auto ms = comm_timeout_ms(settings);
  ASSERT_TRUE(ms.is_ok());
  EXPECT_DOUBLE_EQ(*ms, 1500.0);
  settings.comm_timeout = "0";
  EXPECT_TRUE(contains(comm_timeout_ms(settings).status().message(), "--comm-timeout: 0 must be > 0 seconds"));
}

TEST(DistSetup, PlanPlacementAndReductionTimings) {
  DistTrainSettings settings;
  DistTrainOptions options;
  EXPECT_TRUE(apply_plan_placement(settings, 2, options).is_ok());  // no plan: greedy later
  EXPECT_TRUE(options.placement.table_owner.empty());
  settings.plan = "/nonexistent/parity_plan.json";
  const Status missing = apply_plan_placement(settings, 2, options);
  EXPECT_FALSE(missing.is_ok());
  EXPECT_TRUE(contains(missing.to_string(), "/nonexistent/parity_plan.json")) << missing.to_string();
  DenseReductionTimings timings;
  timings.buckets = 3;
  EXPECT_TRUE(contains(reduction_timings_text(settings, options, timings), "3 bucket(s) of <= 4194304 B"));
  options.gradient_chunks = 4;
  EXPECT_TRUE(contains(reduction_timings_text(settings, options, timings), "none (gradient chunks"));
}

TEST(SpecOverrides, AppliesPrecisionCapAndOptimizer) {
  auto spec = model::preset("dlrm-kaggle");
  ASSERT_TRUE(spec.is_ok());
  model::SpecOverrides overrides;
  overrides.precision = "bf16";
  overrides.table_cap = "1000";
  overrides.optimizer = "adagrad";
  ASSERT_TRUE(model::apply_spec_overrides(*spec, overrides).is_ok());
  EXPECT_EQ(spec->precision, model::DensePrecision::kBf16);
  for (const auto& table : spec->embedding.tables) EXPECT_LE(table.num_rows, 1000);
  EXPECT_EQ(spec->embedding.optimizer.kind, embedding::OptimizerKind::kRowwiseAdagrad);
  overrides = {};
  overrides.optimizer = "lamb";
  EXPECT_TRUE(contains(model::apply_spec_overrides(*spec, overrides).message(), "optimizer: 'lamb'"));
  overrides = {};
  overrides.table_cap = "0";
  EXPECT_TRUE(contains(model::apply_spec_overrides(*spec, overrides).message(), "--table-cap"));
}

}  // namespace
}  // namespace parity::train
