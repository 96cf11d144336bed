// `parity bench interaction`: bad input names the option (exit 2) before any device is needed;
// without a GPU backend or device the run is refused (exit 3); with one, a small run checks and
// times every GPU variant.
#include <gtest/gtest.h>

#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

using testing::run_cli;

TEST(CliBenchInteraction, BadInputNamesTheOption) {
  auto result = run_cli("bench interaction --dim 0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("dim=0"), std::string::npos) << result.output;
  result = run_cli("bench interaction --batch 64x");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  result = run_cli("bench interaction --dtype fp8");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--dtype"), std::string::npos) << result.output;
  result = run_cli("bench interaction --stride 100");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--stride=100 is below the output width 479"), std::string::npos)
      << result.output;
  result = run_cli("bench interaction --check-samples 0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--check-samples=0"), std::string::npos) << result.output;
  result = run_cli("bench interaction --reps 0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
}

TEST(CliBenchInteraction, RunsOnAGpuOrIsRefused) {
  const auto result = run_cli(
      "bench interaction --batch 37 --embeddings 5 --dim 64 --dtype fp32 --warmup 1 --reps 3");
  if (result.exit_code == 3) {
    EXPECT_NE(result.output.find("bench interaction"), std::string::npos) << result.output;
    return;
  }
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("dot_interaction_forward_gpu_gram_tiles"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("dot_interaction_backward_gpu_register_columns"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("dot_interaction_forward_gpu_shared"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("GB/s"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace parity
