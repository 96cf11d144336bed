// `parity plan` and `parity plan compare` through the real binary: output, files, exit codes and
// messages for bad input.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace parity
