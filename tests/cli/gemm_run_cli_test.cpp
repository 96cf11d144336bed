// CLI: gemm run / gemm measure / bench gemm argument validation (exit 2 with the parameter named)
// and, without a CUDA device, a clean "unsupported here" (exit 3).
#include <gtest/gtest.h>

#include "cli/run_cli.hpp"

namespace parity::testing {
namespace {

void expect_bad_input(const std::string& args, const std::string& fragment) {
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(fragment), std::string::npos) << args << "\n" << r.output;
}

TEST(GemmRunCli, RejectsBadShapesTypesAndCounts) {
  expect_bad_input("gemm run --m 0 --n 64 --k 64", "m=0");
  expect_bad_input("gemm run --m 64 --n -3 --k 64", "n=-3");
  expect_bad_input("gemm run --m 64 --n 64 --k 64 --dtype int8", "int8");
  expect_bad_input("gemm run --m 64 --n 64 --k 64 --layout XY", "XY");
  expect_bad_input("gemm run --m 64 --n 64 --k 64 --reps 0", "--reps=0");
  expect_bad_input("gemm run --m 64 --n 64 --k 64 --hw no_such_gpu", "no_such_gpu");
  expect_bad_input("gemm run --n 64 --k 64", "--m");
}

TEST(GemmRunCli, MeasureNeedsShapesAndOut) {
  expect_bad_input("gemm measure --out /tmp/x.json", "--shapes");
  expect_bad_input("gemm measure --shapes bench/shapes/gemm_shapes_dev.csv", "--out");
  expect_bad_input("gemm measure --shapes bench/shapes/gemm_shapes_dev.csv --out /tmp/x.json --stride 0",
                   "--stride=0");
  const CliResult missing = run_cli("gemm measure --shapes /nonexistent.csv --out /tmp/x.json");
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.output.find("/nonexistent.csv"), std::string::npos) << missing.output;
}

TEST(BenchGemmCli, RejectsBadInput) {
  expect_bad_input("bench gemm --m 0 --n 64 --k 64", "--m=0");
  expect_bad_input("bench gemm --m 64 --n 64 --k 64 --dtype int8", "int8");
  expect_bad_input("bench gemm --m 64 --n 64 --k 64 --reps 0", "--reps=0 must be >= 1");
  expect_bad_input("bench gemm --m 64 --n 64 --k 64 --warmup-ms -1", "--warmup-ms=-1 must be in [0, ");
  expect_bad_input("bench gemm --m 64 --n 64 --k 64 --flush-bytes 12XB", "--flush-bytes='12XB'");
  expect_bad_input("bench gemm --m 64 --n 64 --k 64 --cache cold", "cold");
  expect_bad_input("bench gemm --m 64 --n 64 --k 64 --shapes bench/shapes/gemm_shapes_dev.csv",
                   "not both");
}

TEST(BenchGemmCli, ValidInputRunsOrSaysWhyNot) {
  for (const char* args : {"bench gemm --m 96 --n 64 --k 72 --warmup 1 --reps 3",
                           "gemm run --m 96 --n 64 --k 72 --warmup 1 --reps 3"}) {
    const CliResult r = run_cli(args);
    if (r.exit_code == 3) {
      const bool explained = r.output.find("built without CUDA") != std::string::npos ||
                             r.output.find("no CUDA device visible") != std::string::npos;
      EXPECT_TRUE(explained) << args << "\n" << r.output;
    } else {
      EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
      EXPECT_NE(r.output.find("heuristic"), std::string::npos) << args << "\n" << r.output;
    }
  }
}

}  // namespace
}  // namespace parity::testing
