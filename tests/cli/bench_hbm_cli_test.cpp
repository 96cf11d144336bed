// `parity bench hbm` at the edge: bad input is exit 2 naming the parameter in every build, and a
// build or machine that cannot run it says so with exit 3 only after the arguments are checked.
#include <gtest/gtest.h>

#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

void expect_bad_input(const std::string& args, const std::string& message_part) {
  const auto r = testing::run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message_part), std::string::npos) << args << "\n" << r.output;
}

TEST(CliBenchHbm, RejectsBadBytes) {
  expect_bad_input("bench hbm --bytes=-5", "bytes=-5 must be > 0");
  expect_bad_input("bench hbm --bytes 0", "bytes=0 must be > 0");
  expect_bad_input("bench hbm --bytes 3", "bytes=3 must be even");
  expect_bad_input("bench hbm --bytes 4XB", "--bytes='4XB' is not a byte count");
  expect_bad_input("bench hbm --bytes 0.5", "--bytes='0.5' is not a whole number");
}

TEST(CliBenchHbm, RejectsBadTimingOptions) {
  expect_bad_input("bench hbm --reps 0", "--reps=0 must be >= 1");
  expect_bad_input("bench hbm --reps=-3", "--reps=-3 must be >= 1");
  expect_bad_input("bench hbm --warmup-ms -5", "--warmup-ms=-5 must be in [0, ");
  expect_bad_input("bench hbm --rep-ms 1e9", "--rep-ms=1e+09 must be in [0, ");
  expect_bad_input("bench hbm --warmup=-1", "--warmup=-1 must be >= 0");
  expect_bad_input("bench hbm --cache cold", "--cache='cold' is not a cache mode");
}

TEST(CliBenchHbm, ValidInputRunsOrSaysWhyNot) {
  const auto r = testing::run_cli("bench hbm --bytes 64MiB --warmup 1 --reps 3");
  if (r.exit_code == 3) {
    const bool explained = r.output.find("built without CUDA") != std::string::npos ||
                           r.output.find("no CUDA device visible") != std::string::npos;
    EXPECT_TRUE(explained) << r.output;
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("ceiling:"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace parity
