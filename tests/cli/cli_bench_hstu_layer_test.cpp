// `parity bench hstu-layer`: bad input names the option (exit 2); a small run on the CPU prints
// both passes and writes its JSON; a GPU request in a build without the GPU backend is refused with
// every variant's reason (exit 3).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

using testing::run_cli;

TEST(CliBenchHstuLayer, BadInputNamesTheOption) {
  auto result = run_cli("bench hstu-layer --heads 0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("heads=0"), std::string::npos) << result.output;
  result = run_cli("bench hstu-layer --model-dim 64x");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--model-dim"), std::string::npos) << result.output;
  result = run_cli("bench hstu-layer --reps 0");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--reps=0"), std::string::npos) << result.output;
  result = run_cli("bench hstu-layer --min-length-fraction 1.5");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--min-length-fraction=1.5"), std::string::npos) << result.output;
  result = run_cli("bench hstu-layer --device tpu");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--device"), std::string::npos) << result.output;
}

TEST(CliBenchHstuLayer, RunsOnTheCpuAndWritesItsResults) {
  const std::string out = ::testing::TempDir() + "hstu_layer_bench.json";
  std::remove(out.c_str());
  const auto result = run_cli("bench hstu-layer --batch 3 --seq-len 40 --model-dim 32 --heads 2 --dim-qk 16 "
                              "--dim-v 24 --max-targets 3 --reps 2 --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("forward  median"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("backward median"), std::string::npos) << result.output;
  std::ifstream file(out);
  ASSERT_TRUE(file.good()) << out;
  std::stringstream text;
  text << file.rdbuf();
  for (const char* key : {"\"benchmark\": \"hstu_layer\"", "\"provenance\"", "\"forward\"", "\"backward\"",
                          "\"saved_bytes\"", "\"median_ms\""}) {
    EXPECT_NE(text.str().find(key), std::string::npos) << key << " in " << text.str();
  }
}

TEST(CliBenchHstuLayer, AGpuRequestIsRefusedWithTheReason) {
  const auto result = run_cli("bench hstu-layer --batch 2 --seq-len 16 --device gpu");
  EXPECT_EQ(result.exit_code, 3) << result.output;
  EXPECT_NE(result.output.find("hstu_layer_forward_cpu"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("hstu_layer_forward_gpu"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace parity
