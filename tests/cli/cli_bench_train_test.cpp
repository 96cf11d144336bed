// `parity bench train`: a CPU run of tiny reports throughput and a finite, falling loss; bad input
// names the option; a GPU request without a GPU backend or device is refused (exit 3), not crashed.
#include <gtest/gtest.h>

#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

using testing::run_cli;

TEST(CliBenchTrain, TinyOnTheCpuReportsThroughput) {
  const auto result = run_cli("bench train --model tiny --device cpu --batch 256 --warmup 1 --steps 3");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("M samples/s (batch resident)"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("tiny fp32 on cpu, batch 256"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("step breakdown (10 instrumented steps, medians): embeddings"), std::string::npos)
      << result.output;
  EXPECT_NE(result.output.find("memory: model buffers"), std::string::npos) << result.output;
}

TEST(CliBenchTrain, BadInputNamesTheOption) {
  auto result = run_cli("bench train --model tiny --device cpu --batch 0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("batch"), std::string::npos) << result.output;
  result = run_cli("bench train --model tiny --device cpu --batch 64x");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  result = run_cli("bench train --model no-such-model --device cpu");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  result = run_cli("bench train --model tiny --device tpu");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("device"), std::string::npos) << result.output;
  result = run_cli("bench train --model tiny --device cpu --optimizer momentum --batch 64");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("optimizer: 'momentum'"), std::string::npos) << result.output;
  result = run_cli("bench train --model tiny --device cpu --precision bf16 --batch 64");
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("bf16"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace parity
