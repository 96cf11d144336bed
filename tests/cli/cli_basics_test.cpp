#include <gtest/gtest.h>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

TEST(Cli, VersionExitsZero) {
  const auto r = testing::run_cli("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("parity"), std::string::npos);
}

TEST(Cli, UnknownSubcommandIsUsageError) {
  const auto r = testing::run_cli("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

}  // namespace
}  // namespace parity
