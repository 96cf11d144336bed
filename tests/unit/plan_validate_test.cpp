// The validation driver's pieces (plan/validate.hpp): Kendall's tau against hand-counted pairs,
// the configuration parser's errors, the default GPU list's coverage, and a CPU run of the driver.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

TEST(PlanValidate, ParsesTheOptionalOptimizer) {
  const auto configs =
      parse_validation_configs("dlrm-kaggle:8192:bf16:full:adam,dlrm-v2:8192:tf32:none:sgd");
  ASSERT_TRUE(configs.is_ok()) << configs.status().to_string();
  EXPECT_EQ((*configs)[0].label(), "dlrm-kaggle 8192 bf16 full adam");
  model::ModelSpec spec = model::preset("dlrm-v2").value();
  ASSERT_TRUE(apply_validation_optimizer((*configs)[1], spec).is_ok());
  EXPECT_EQ(spec.dense_optimizer.kind, model::DenseOptimizerKind::kSgd);
  EXPECT_EQ(spec.embedding.optimizer.kind, embedding::OptimizerKind::kSgd);
  ValidationConfig adagrad = (*configs)[1];
  adagrad.optimizer = "adagrad";  // row-wise for the tables, as `parity bench train --optimizer`
  ASSERT_TRUE(apply_validation_optimizer(adagrad, spec).is_ok());
  EXPECT_EQ(spec.embedding.optimizer.kind, embedding::OptimizerKind::kRowwiseAdagrad);
  const auto bad = parse_validation_configs("tiny:512:fp32:none:lamb");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'lamb'"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(parse_validation_configs("tiny:512:fp32:none:sgd:extra").is_ok());
}

TEST(PlanValidate, ReadsASetFileAndNamesTheBadLine) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "parity_plan_validate_set_test";
  std::filesystem::create_directories(dir);
  const std::filesystem::path good = dir / "good.txt", bad = dir / "bad.txt";
  std::ofstream(good)
      << "# a comment\n\n  tiny:256:fp32:none   # trailing\ntiny:512:tf32:full:adam\n";
  std::ofstream(bad) << "tiny:256:fp32:none\ntiny:256x:fp32:none\n";
  const auto configs = read_validation_configs_file(good);
  ASSERT_TRUE(configs.is_ok()) << configs.status().to_string();
  ASSERT_EQ(configs->size(), 2u);
  EXPECT_EQ((*configs)[1].label(), "tiny 512 tf32 full adam");
  const auto failed = read_validation_configs_file(bad);
  ASSERT_FALSE(failed.is_ok());
  EXPECT_NE(failed.status().message().find("bad.txt:2"), std::string::npos)
      << failed.status().message();
  EXPECT_EQ(read_validation_configs_file(dir / "missing.txt").status().code(),
            StatusCode::kIoError);
  std::filesystem::remove_all(dir);
}

// The committed held-out sets (bench/plan/validation_set_*.txt, scripts/plan_validation_set.py)
// parse and have 12 configurations each. Each held-out set excludes the development list and every earlier set (a scored set is
// development data), by (preset, batch, precision, checkpointing) whatever the optimiser, and
// repeats no configuration of its own.
TEST(PlanValidate, HeldOutSetsAreDisjointFromTheDevelopmentListAndEarlierSets) {
  std::set<std::string> seen;
  for (const ValidationConfig& config : default_validation_configs(DeviceKind::kGpu)) {
    seen.insert(config.label());
  }
  for (const char* file : {"bench/plan/validation_set_1.txt", "bench/plan/validation_set_2.txt"}) {
    const auto configs =
        read_validation_configs_file(std::filesystem::path(PARITY_SOURCE_DIR) / file);
    ASSERT_TRUE(configs.is_ok()) << configs.status().to_string();
    EXPECT_EQ(configs->size(), 12u) << file;
    std::set<std::string> this_set;
    for (ValidationConfig config : *configs) {
      config.optimizer.clear();
      EXPECT_EQ(seen.count(config.label()), 0u) << file << ": " << config.label();
      EXPECT_TRUE(this_set.insert(config.label()).second) << file << ": " << config.label();
    }
    seen.insert(this_set.begin(), this_set.end());
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
  EXPECT_NE(validation_report_text(*report).find("summary: step time within 10% on"),
            std::string::npos);
  EXPECT_LE(report->step_within_tolerance, report->measured);
  options.timed_steps = 0;
  EXPECT_EQ(validate_plans(configs, options).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace parity::plan
