// `parity train --distributed --backend nccl|local` and `parity bench train --comm local`: the GPU
// distributed trainer's CLI on the CPU (the local backend runs its code on one CPU rank) and the
// errors that name what is wrong (device, backend, flag combination).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

using testing::run_cli;

TEST(CliTrainNccl, LocalBackendTrainsAndBenchReportsTheOverhead) {
  const auto out = std::filesystem::temp_directory_path() / "parity_cli_train_nccl";
  std::filesystem::remove_all(out);
  auto result = run_cli("train --model tiny --synthetic 2000 --batch 128 --steps 4 --threads 1 --distributed "
                        "--backend local --out " + out.string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("distributed: 1 ranks over local"), std::string::npos) << result.output;
  EXPECT_TRUE(std::filesystem::exists(out / "checkpoint.rank0-of-1.ckpt")) << result.output;
  result = run_cli("bench train --model tiny --device cpu --batch 128 --warmup 1 --steps 4 --rounds 2 --comm local "
                   "--out " + (out / "bench.json").string());
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("overhead: "), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("first-step loss difference 0 "), std::string::npos) << result.output;
  EXPECT_TRUE(std::filesystem::exists(out / "bench.json"));
  std::filesystem::remove_all(out);
}

TEST(CliTrainNccl, ErrorsNameTheFlag) {
  const std::string base = "train --model tiny --synthetic 2000 --batch 128 --steps 2 --out " +
                           (std::filesystem::temp_directory_path() / "parity_cli_train_nccl_errors").string();
  auto result = run_cli(base + " --distributed --backend nccl --device cpu");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--device: cpu does not go with --backend nccl"), std::string::npos) << result.output;
  result = run_cli(base + " --distributed --backend bogus");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--backend: 'bogus'"), std::string::npos) << result.output;
  result = run_cli(base + " --backend nccl");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--backend: only with --distributed"), std::string::npos) << result.output;
  result = run_cli(base + " --distributed --backend local --gradient-chunks 2");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("gradient-chunks: 2"), std::string::npos) << result.output;
  result = run_cli("bench train --model tiny --device cuda --batch 64 --comm local");
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("--device: gpu does not go with --comm local"), std::string::npos) << result.output;
}

}  // namespace
}  // namespace parity
