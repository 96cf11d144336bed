// `parity hw probe` at the edge: bad input is exit 2 naming the parameter in every build; a build
// or machine without a CUDA device answers exit 3 with the reason, after the arguments are checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

TEST(CliHwProbe, RejectsBadInput) {
  struct Case {
    const char* args;
    const char* message_part;
  };
  for (const Case& c : {Case{"hw probe --reps 0", "--reps=0 must be >= 1"},
                        Case{"hw probe --warmup=-1", "--warmup=-1 must be >= 0"},
                        Case{"hw probe --bytes=-8", "bytes=-8 must be > 0"},
                        Case{"hw probe --bytes 7", "bytes=7 must be even"},
                        Case{"hw probe --bytes lots", "--bytes='lots' is not a byte count"}}) {
    const auto r = testing::run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.message_part), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(CliHwProbe, ValidInputRunsOrSaysWhyNot) {
  const auto dir = std::filesystem::temp_directory_path() / ("parity_probe_" + std::to_string(::getpid()));
  const auto calibration = dir / "calibration.json";
  const auto results = dir / "results.json";
  const auto r = testing::run_cli("hw probe --bytes 256MiB --warmup 1 --reps 3 --out " + calibration.string() +
                                  " --results " + results.string());
  if (r.exit_code == 3) {
    const bool explained = r.output.find("built without CUDA") != std::string::npos ||
                           r.output.find("no CUDA device visible") != std::string::npos;
    EXPECT_TRUE(explained) << r.output;
    EXPECT_FALSE(std::filesystem::exists(calibration));
  } else {
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(std::filesystem::exists(calibration)) << r.output;
    EXPECT_TRUE(std::filesystem::exists(results)) << r.output;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace parity
