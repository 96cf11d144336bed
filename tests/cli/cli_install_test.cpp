// `cmake --install` into a temporary prefix: the installed CLI runs from there and reads the
// installed data (<prefix>/share/parity) with no PARITY_DATA_DIR, and PARITY_DATA_DIR overrides it.
#include <gtest/gtest.h>

#include <filesystem>

#include "cli/run_cli.hpp"

namespace parity::testing {
namespace {

TEST(CliInstall, InstalledCliFindsItsDataInThePrefix) {
  const auto prefix = std::filesystem::temp_directory_path() / "parity_install_test";
  std::filesystem::remove_all(prefix);
  const auto install = run_command(std::string(PARITY_CMAKE_COMMAND) + " --install " + PARITY_BUILD_DIR +
                                   " --prefix " + prefix.string());
  ASSERT_EQ(install.exit_code, 0) << install.output;
  const auto cli = (prefix / "bin" / "parity").string();
  ASSERT_TRUE(std::filesystem::exists(cli));
  EXPECT_TRUE(std::filesystem::exists(prefix / "include" / "parity" / "core" / "status.hpp"));
  EXPECT_TRUE(std::filesystem::exists(prefix / "include" / "parity" / "build_info.hpp"));
  ASSERT_TRUE(std::filesystem::exists(prefix / "share" / "parity" / "hardware" / "mi300x.json"));
  // From another directory, without PARITY_DATA_DIR: the installed catalogue.
  const std::string run = "cd / && env -u PARITY_DATA_DIR " + cli;
  auto listed = run_command(run + " hw list");
  ASSERT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("h200"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("mi300x"), std::string::npos) << listed.output;
  // It is the prefix's copy that is read, not the source tree's: remove an entry there only.
  std::filesystem::remove(prefix / "share" / "parity" / "hardware" / "mi300x.json");
  auto shown = run_command(run + " hw show mi300x");
  EXPECT_EQ(shown.exit_code, 2) << shown.output;
  EXPECT_EQ(run_command(run + " hw show h200").exit_code, 0);
  // PARITY_DATA_DIR overrides the installed data.
  auto overridden = run_command("cd / && PARITY_DATA_DIR=" + (prefix / "no_such_dir").string() + " " + cli + " hw list");
  EXPECT_NE(overridden.exit_code, 0) << overridden.output;
  EXPECT_NE(overridden.output.find("no_such_dir"), std::string::npos) << overridden.output;
  std::filesystem::remove_all(prefix);
}

}  // namespace
}  // namespace parity::testing
