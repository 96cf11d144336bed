// `parity plan` and `parity plan compare` through the real binary: output, files, exit codes and
// messages for bad input.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

TEST(CliPlan, PlansAPresetAndWritesJsonAndSvg) {
  const fs::path out = fs::temp_directory_path() / "parity_cli_plan_test";
  fs::remove_all(out);
  const auto r = testing::run_cli("plan --model dlrm-v2 --hw h200 --gpus 8 --batch 65536 --out " +
                                  out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "plan: dlrm-v2 on 8 x h200")) << r.output;
  EXPECT_TRUE(contains(r.output, "MODELLED")) << r.output;
  EXPECT_TRUE(contains(r.output, "C21")) << r.output;
  EXPECT_TRUE(contains(r.output, "Pareto front")) << r.output;
  std::ifstream plan_file(out / "plan.json");
  ASSERT_TRUE(plan_file.good());
  const auto plan = nlohmann::json::parse(plan_file, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(plan.is_discarded());
  EXPECT_EQ(plan["schema"], "parity.plan/1");
  EXPECT_EQ(plan["config"]["global_batch"], 65536);
  EXPECT_EQ(plan["tables"].size(), 26u);
  EXPECT_TRUE(fs::exists(out / "pareto.svg"));
  fs::remove_all(out);
}

TEST(CliPlan, CompareShowsPortAndCodesign) {
  const auto r = testing::run_cli(
      "plan compare --model dlrm-v2 --from b200 --to mi350x --gpus 8 --batch 65536 --headroom 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "b200-optimal on b200")) << r.output;
  EXPECT_TRUE(contains(r.output, "direct port on mi350x")) << r.output;
  EXPECT_TRUE(contains(r.output, "co-designed on mi350x")) << r.output;
  EXPECT_TRUE(contains(r.output, "what changed")) << r.output;
  EXPECT_TRUE(contains(r.output, "model headroom")) << r.output;
  EXPECT_TRUE(contains(r.output, "table rows x1.5")) << r.output;
}

TEST(CliPlan, UnknownGpuListsTheKnownOnes) {
  const auto r = testing::run_cli("plan --model tiny --hw a100 --gpus 8 --batch 1024");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown GPU 'a100'")) << r.output;
  EXPECT_TRUE(contains(r.output, "mi350x")) << r.output;
}

TEST(CliPlan, ZeroGpusIsAnInputError) {
  const auto r = testing::run_cli("plan --model tiny --hw h200 --gpus 0 --batch 1024");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--gpus: 0 must be >= 1")) << r.output;
}

TEST(CliPlan, BatchNotDivisibleByRanks) {
  const auto r = testing::run_cli("plan --model tiny --hw h200 --gpus 8 --batch 1001");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "batch: 1001 is not divisible by the 8 ranks")) << r.output;
}

TEST(CliPlan, MalformedNumbersAndListsAreRejected) {
  auto r = testing::run_cli("plan --model tiny --hw h200 --gpus 8 --batch 64x");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run_cli("plan --model tiny --hw h200 --gpus 8 --batch-range 1024");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "is not A:B")) << r.output;
  r = testing::run_cli("plan --model tiny --hw h200 --gpus 8 --batch 1024 --precision fp64");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "precision: unknown value 'fp64'")) << r.output;
  r = testing::run_cli("plan --model tiny --hw h200 --gpus 16 --nodes 1 --batch 1024");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "scale-up domain holds 8")) << r.output;
}

TEST(CliPlan, ModelThatCannotFitSaysByHowMuch) {
  // dlrm-v2's 105 GB of tables on one 80 GB H100.
  const auto r = testing::run_cli("plan --model dlrm-v2 --hw h100 --gpus 1 --batch 1024");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "does not fit on 1 x h100")) << r.output;
  EXPECT_TRUE(contains(r.output, "more than its 80.00 GB HBM")) << r.output;
}

TEST(CliPlan, ValidateRunsTheCpuTrainerAndWritesJson) {
  const fs::path out = fs::temp_directory_path() / "parity_cli_plan_validate.json";
  fs::remove(out);
  const auto r = testing::run_cli(
      "plan validate --device cpu --configs tiny:512:fp32:none,tiny:128:fp32:full,tiny:2048:tf32:none "
      "--warmup 0 --steps 2 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "CPU run")) << r.output;
  EXPECT_TRUE(contains(r.output, "3 of 3 measured")) << r.output;
  EXPECT_TRUE(contains(r.output, "Kendall tau")) << r.output;
  // Rows run in ascending lookups per step: 128 first.
  EXPECT_LT(r.output.find("tiny 128 fp32 full"), r.output.find("tiny 512 fp32 none")) << r.output;
  std::ifstream file(out);
  const auto json = nlohmann::json::parse(file, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(json.is_discarded());
  EXPECT_EQ(json["benchmark"], "plan_validate");
  ASSERT_EQ(json["rows"].size(), 3u);
  for (const auto& row : json["rows"]) {
    EXPECT_TRUE(row["measured"].get<bool>());
    EXPECT_GT(row["measured_step_ms"].get<double>(), 0.0);
    // The CPU trainer's buffers against the planner's (GPU-layout) buffers: only the padding of
    // tiny's 13 dense features and 52-wide dot output differs, well inside 5%.
    EXPECT_LT(std::abs(row["buffer_error"].get<double>()), 0.05) << row.dump();
  }
  fs::remove(out);
}

TEST(CliPlan, ValidateRejectsBadConfigurations) {
  auto r = testing::run_cli("plan validate --device cpu --configs tiny:512:fp32");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "is not MODEL:BATCH:PRECISION:CHECKPOINTING")) << r.output;
  r = testing::run_cli("plan validate --device cpu --configs tiny:0:fp32:none");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run_cli("plan validate --device cpu --configs tiny:64x:fp32:none");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run_cli("plan validate --device cpu --configs nosuch:512:fp32:none");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "nosuch")) << r.output;
}

// The held-out set predicted without a device: every row, its four phases, exit 0; both
// --configs and --configs-file is an error.
TEST(CliPlan, ValidatePredictOnlyReadsTheHeldOutSet) {
  auto r = testing::run_cli(
      "plan validate --predict-only --configs-file bench/plan/validation_set_1.txt");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "0 of 12 measured")) << r.output;
  EXPECT_TRUE(contains(r.output, "dlrm-kaggle 98304 bf16 full adagrad")) << r.output;
  EXPECT_TRUE(contains(r.output, "interaction")) << r.output;
  r = testing::run_cli(
      "plan validate --predict-only --configs tiny:512:fp32:none "
      "--configs-file bench/plan/validation_set_1.txt");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run_cli("plan validate --predict-only --configs-file no/such/file.txt");
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "no/such/file.txt")) << r.output;
}

TEST(CliPlan, ValidateOnTheGpuSaysWhenThereIsNone) {
  const auto r = testing::run_cli("plan validate --configs tiny:512:bf16:none");
  if (r.exit_code == 0) GTEST_SKIP() << "a GPU is visible: the GPU path ran";
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "--device cpu")) << r.output;
}

// Issue 16's target: planning a 26-table model for 64 GPUs in <= 1 s on one CPU core. The planner
// is single-threaded, so the child's CPU time is its one-core time. Reported, not asserted (a
// shared build machine's timings vary); docs/planner.md records the figure.
TEST(CliPlan, TwentySixTablesOnSixtyFourGpusCpuTimeReported) {
  const auto child_cpu_seconds = [] {
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  };
  const struct {
    const char* what;
    const char* args;
  } cases[] = {
      {"global batch 65536, 4 configurations", "--batch 65536"},
      {"batch range 512..16384 per GPU, 24 configurations", ""},
  };
  for (const auto& c : cases) {
    const double before = child_cpu_seconds();
    const auto wall_start = std::chrono::steady_clock::now();
    const auto r = testing::run_cli(std::string("plan --model dlrm-v2 --hw h200 --gpus 64 ") + c.args);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    const double cpu = child_cpu_seconds() - before;
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "plan: dlrm-v2 on 64 x h200")) << r.output;
    std::cout << "[ timing   ] parity plan, dlrm-v2 (26 tables) on 64 x h200, " << c.what << ": " << cpu
              << " s CPU, " << wall << " s wall (target <= 1 s on one core)\n";
    ::testing::Test::RecordProperty(std::string("cpu_seconds_") + (c.args[0] != 0 ? "fixed_batch" : "batch_range"),
                                    std::to_string(cpu));
  }
}

}  // namespace
}  // namespace parity
