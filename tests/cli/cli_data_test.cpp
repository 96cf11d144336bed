// `parity data generate` and `parity data convert-criteo`: outputs, exit codes and messages.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/run_cli.hpp"
#include "parity/data/dataset.hpp"

namespace parity {
namespace {

class CliDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::temp_directory_path() / ("parity_cli_data_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
};

TEST_F(CliDataTest, GenerateTiny) {
  const auto r = testing::run_cli(
      "data generate --model tiny --samples 2000 --eval-samples 500 --seed 3 --out " +
      path("tiny"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("train 2000 + eval 500 samples"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("planted model AUC"), std::string::npos) << r.output;
  auto info = data::read_dataset_info(path("tiny"));
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->seed, 3u);
  EXPECT_EQ(info->eval_samples, 500);
}

TEST_F(CliDataTest, GenerateBadInput) {
  auto r = testing::run_cli("data generate --model nope --samples 10 --out " + path("x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("unknown preset 'nope'"), std::string::npos) << r.output;
  r = testing::run_cli("data generate --samples 0 --out " + path("x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--samples: 0 is out of range"), std::string::npos) << r.output;
  r = testing::run_cli("data generate --samples 10 --zipf -1 --out " + path("x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("zipf_alpha"), std::string::npos) << r.output;
  r = testing::run_cli("data generate --samples 10 --planted-auc 0.9 --out " + path("x"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  r = testing::run_cli("data generate --samples 10");  // --out missing
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

TEST_F(CliDataTest, ConvertCriteo) {
  std::string line = "1";
  for (int j = 0; j < 13; ++j) line += "\t" + std::to_string(j);
  for (int t = 0; t < 26; ++t) line += "\t68fd1e64";
  {
    std::ofstream out(path("day.tsv"));
    out << line << "\n" << line << "\r\n" << line << "\tx\n" << line << "\n";
  }
  auto r =
      testing::run_cli("data convert-criteo --tsv " + path("day.tsv") + " --out " + path("ds"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("day.tsv:3: too many columns (found 41, expected 40)"), std::string::npos)
      << r.output;
  r = testing::run_cli("data convert-criteo --tsv " + path("day.tsv") +
                       " --max-bad-lines 1 --out " + path("ds"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 lines read, train 3 + eval 0 samples, 1 bad lines"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("bad line: " + path("day.tsv") + ":3:"), std::string::npos) << r.output;
  r = testing::run_cli("data convert-criteo --tsv " + path("missing.tsv") + " --out " +
                       path("ds2"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("does not exist"), std::string::npos) << r.output;
  r = testing::run_cli("data convert-criteo --model tiny --tsv " + path("day.tsv") + " --out " +
                       path("ds3"));
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("criteo schema"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace parity
