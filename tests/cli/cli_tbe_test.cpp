// `parity tbe check` and `parity bench tbe` through the real binary: exit codes and messages.
#include <gtest/gtest.h>

#include <utility>

#include "cli/run_cli.hpp"
#include "parity/build_info.hpp"

namespace parity::testing {
namespace {

TEST(CliTbe, CheckRunsEveryPathAndPasses) {
  const auto result = run_cli("tbe check");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("cpu (openmp)   forward sum"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("backward + rowwise_adagrad"), std::string::npos) << result.output;
  EXPECT_EQ(result.output.find("FAIL"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("cpu bounds check (fix mode, 1 planted): 1 bad indices"), std::string::npos)
      << result.output;
}

TEST(CliTbe, SeedsParseStrictly) {
  for (const char* command : {"tbe check --seed -1", "tbe check --seed 12x", "bench tbe --config C1 --seed -1",
                              "tbe check --seed 18446744073709551616"}) {
    const auto result = run_cli(command);
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_NE(result.output.find("--seed"), std::string::npos) << command << "\n" << result.output;
  }
  EXPECT_EQ(run_cli("tbe check --seed 18446744073709551615").exit_code, 0);
}

TEST(CliTbe, BenchRejectsUnknownConfigAndMissingShape) {
  auto result = run_cli("bench tbe --config C9");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--config='C9' is not one of C1"), std::string::npos) << result.output;
  result = run_cli("bench tbe --tables 4");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("or all of --tables --rows --dim --batch"), std::string::npos) << result.output;
  result = run_cli("bench tbe --config C2 --dim 6");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("dim=6"), std::string::npos) << result.output;
  result = run_cli("bench tbe --config C2 --optimizer lamb");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("optimizer='lamb'"), std::string::npos) << result.output;
  result = run_cli("bench tbe --config C2 --backward-variant fast");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--backward-variant='fast' is not one of both"), std::string::npos) << result.output;
  result = run_cli("bench tbe --config C2 --reps 0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--reps=0"), std::string::npos) << result.output;
}

TEST(CliTbe, BenchNeedsADeviceAfterValidation) {
  if (build::kHasCuda) GTEST_SKIP() << "CUDA build: the device path is exercised on the GPU machine";
  const auto result = run_cli("bench tbe --config C1");
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("built without CUDA"), std::string::npos) << result.output;
}

// The workload flags validate before the device is needed: good ones reach the device check
// (exit 3 without CUDA), bad ones are usage errors naming the flag and the value.
TEST(CliTbe, BenchWorkloadFlagsValidateFirst) {
  if (build::kHasCuda) GTEST_SKIP() << "CUDA build: the device path is exercised on the GPU machine";
  for (const char* good : {"bench tbe --config C2 --zipf 0.8", "bench tbe --config D5",
                           "bench tbe --rows 1000 --dim 16,32 --tables 4 --batch 64 --pooling-factor 0..10 --weighted "
                           "--weights-dtype bf16 --output-dtype fp32 --index-dtype int32 --optimizer rowwise-adagrad",
                           "bench tbe --config C4 --pooling mean --pooling-factor one-hot --optimizer adam"}) {
    const auto result = run_cli(good);
    EXPECT_EQ(result.exit_code, 3) << good << "\n" << result.output;
  }
  const std::pair<const char*, const char*> bad[] = {
      {"bench tbe --config C2 --zipf -1", "--zipf='-1'"},
      {"bench tbe --config C2 --dim 16,32,64", "--dim lists 3 values"},
      {"bench tbe --config C2 --rows 10x", "--rows='10x'"},
      {"bench tbe --config C2 --pooling max", "--pooling='max'"},
      {"bench tbe --config C2 --pooling mean --weighted", "--weighted"},
      {"bench tbe --config C2 --output-dtype int8", "--output-dtype='int8'"},
      {"bench tbe --config C2 --pooling-factor 3..1", "--pooling-factor='3..1'"},
      {"bench tbe --layout /nonexistent/parity_layout.json", "--layout"},
  };
  for (const auto& [command, needle] : bad) {
    const auto result = run_cli(command);
    EXPECT_EQ(result.exit_code, 2) << command << "\n" << result.output;
    EXPECT_NE(result.output.find(needle), std::string::npos) << command << "\n" << result.output;
  }
}

}  // namespace
}  // namespace parity::testing
