// The validation driver's pieces (plan/validate.hpp): Kendall's tau against hand-counted pairs,
// the configuration parser's errors, the default GPU list's coverage, and a CPU run of the driver.
#include <gtest/gtest.h>

#include <set>

#include "parity/plan/validate.hpp"

namespace parity::plan {
namespace {

TEST(PlanValidate, KendallTauCountsPairs) {
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3, 4}, {40, 30, 20, 10}), -1.0);
  // One adjacent swap: 5 concordant, 1 discordant of 6 pairs.
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3, 4}, {10, 30, 20, 40}), 4.0 / 6.0);
  // A tie counts as neither: 2 concordant of 3 pairs.
  EXPECT_DOUBLE_EQ(kendall_tau({1, 2, 3}, {5, 5, 9}), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(kendall_tau({1}, {1}), 0.0);
}

TEST(PlanValidate, ParsesConfigurationsStrictly) {
  const auto configs = parse_validation_configs("dlrm-kaggle:65536:bf16:none,tiny:512:fp32:full");
  ASSERT_TRUE(configs.is_ok()) << configs.status().to_string();
  ASSERT_EQ(configs->size(), 2u);
  EXPECT_EQ((*configs)[0].label(), "dlrm-kaggle 65536 bf16 none");
  EXPECT_EQ((*configs)[1].checkpointing, Checkpointing::kFull);
  for (const char* bad : {"tiny:512:fp32", "tiny:64x:fp32:none", "tiny:0:fp32:none", "tiny:512:fp64:none",
                          "tiny:512:fp32:some", ""}) {
    const auto parsed = parse_validation_configs(bad);
    EXPECT_FALSE(parsed.is_ok()) << bad;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(PlanValidate, DefaultGpuListCoversTheTargets) {
  const auto configs = default_validation_configs(DeviceKind::kGpu);
  EXPECT_GE(configs.size(), 8u);  // issue 16: >= 8 configurations
  std::set<std::string> models, precisions, policies;
  std::set<std::int64_t> batches;
  for (const ValidationConfig& config : configs) {
    models.insert(config.model);
    precisions.insert(std::string(precision_name(config.precision)));
    policies.insert(std::string(checkpointing_name(config.checkpointing)));
    batches.insert(config.batch);
  }
  EXPECT_EQ(models, (std::set<std::string>{"dlrm-kaggle", "dlrm-v2"}));
  EXPECT_EQ(precisions, (std::set<std::string>{"fp32", "tf32", "bf16"}));
  EXPECT_EQ(policies, (std::set<std::string>{"none", "full"}));
  EXPECT_GE(batches.size(), 3u);
}

TEST(PlanValidate, CpuRunMeasuresEveryRowInAscendingLookups) {
  ValidationOptions options;
  options.device = DeviceKind::kCpu;
  options.warmup_steps = 0;
  options.timed_steps = 1;
  const auto configs = parse_validation_configs("tiny:256:fp32:none,tiny:64:fp32:full").value();
  const auto report = validate_plans(configs, options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  ASSERT_EQ(report->rows.size(), 2u);
  EXPECT_EQ(report->rows[0].config.batch, 64);  // fewer lookups per step first
  EXPECT_EQ(report->measured, 2);
  for (const ValidationRow& row : report->rows) {
    EXPECT_TRUE(row.is_measured) << row.error;
    EXPECT_GT(row.measured_step_ms, 0.0);
    EXPECT_GT(row.predicted_step_ms, 0.0);
    // The CPU buffers differ from the planner's GPU layout only by the padding (tiny: 13 -> 16
    // dense columns, dot output 52 -> 56): a few percent at most.
    EXPECT_LT(std::abs(row.buffer_error()), 0.05) << row.config.label();
    EXPECT_GT(row.measured_phase_ms[0], 0.0);  // the instrumented steps ran
  }
  EXPECT_NE(validation_report_text(*report).find("CPU run"), std::string::npos);
  options.timed_steps = 0;
  EXPECT_EQ(validate_plans(configs, options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace parity::plan
