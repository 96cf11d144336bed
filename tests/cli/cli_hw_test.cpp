// `parity hw list | show | compare`: output content and exit codes through the real binary.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/run_cli.hpp"

namespace parity {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& fragment) {
  return text.find(fragment) != std::string::npos;
}

// The first output line that starts with `label`, or "" if none.
std::string line_starting_with(const std::string& output, const std::string& label) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(label, 0) == 0) return line;
  }
  return "";
}

TEST(CliHw, ListShowsEveryGpu) {
  const auto r = testing::run_cli("hw list");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* name :
       {"h100", "h200", "b200", "gb200", "mi300x", "mi325x", "mi350x", "mi355x"}) {
    EXPECT_NE(line_starting_with(r.output, std::string(name) + " "), "") << name << "\n"
                                                                         << r.output;
  }
  const std::string mi350x = line_starting_with(r.output, "mi350x ");
  EXPECT_TRUE(contains(mi350x, "2300") && contains(mi350x, "288") && contains(mi350x, "538"))
      << mi350x;
}

TEST(CliHw, ShowPrintsEveryFieldWithProvenance) {
  const auto r = testing::run_cli("hw show H200");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string capacity = line_starting_with(r.output, "HBM capacity");
  EXPECT_TRUE(contains(capacity, "141 GB") && contains(capacity, "[vendor_spec 2023-11]"))
      << capacity;
  for (const char* label : {"Dense BF16", "Dense FP8", "L2 cache", "Last-level cache", "SMs / CUs",
                            "Peak-rate clock", "Warp / wavefront", "Scale-up per GPU", "TDP"}) {
    EXPECT_NE(line_starting_with(r.output, label), "") << label << "\n" << r.output;
  }
  EXPECT_TRUE(contains(r.output, "wgmma.mma_async")) << r.output;
}

TEST(CliHw, ShowJsonIsTheCatalogueEntry) {
  const auto r = testing::run_cli("hw show h100_sxm --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto parsed = nlohmann::json::parse(r.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(parsed.is_discarded()) << r.output;
  EXPECT_EQ(parsed.at("name"), "h100");
  EXPECT_EQ(parsed.at("hbm_capacity_gb").at("value"), 80);
  EXPECT_EQ(parsed.at("hbm_capacity_gb").at("provenance").at("kind"), "vendor_spec");
}

TEST(CliHw, CompareMi350xB200ShowsTheBriefsRatios) {
  const auto r = testing::run_cli("hw compare mi350x b200");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string hbm = line_starting_with(r.output, "HBM capacity");
  EXPECT_TRUE(contains(hbm, "288 GB") && contains(hbm, "180 GB") && contains(hbm, "1.60")) << hbm;
  const std::string bf16 = line_starting_with(r.output, "Dense BF16");
  EXPECT_TRUE(contains(bf16, "2300") && contains(bf16, "2250") && contains(bf16, "1.02")) << bf16;
  const std::string scale_up = line_starting_with(r.output, "Scale-up per GPU");
  EXPECT_TRUE(contains(scale_up, "538 GB/s") && contains(scale_up, "900 GB/s") &&
              contains(scale_up, "0.60"))
      << scale_up;
  const std::string topology = line_starting_with(r.output, "Scale-up topology");
  EXPECT_TRUE(contains(topology, "full_mesh") && contains(topology, "switched")) << topology;
}

TEST(CliHw, UnknownNameExitsTwoAndListsKnownNames) {
  for (const char* args : {"hw show h300", "hw compare mi350x h300", "hw compare h300 b200"}) {
    const auto r = testing::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, "unknown GPU 'h300'")) << r.output;
    EXPECT_TRUE(contains(r.output, "mi355x") && contains(r.output, "h100")) << r.output;
  }
}

TEST(CliHw, UsageErrorsExitTwo) {
  EXPECT_EQ(testing::run_cli("hw show").exit_code, 2);
  EXPECT_EQ(testing::run_cli("hw compare mi350x").exit_code, 2);
  EXPECT_EQ(testing::run_cli("hw list --bogus").exit_code, 2);
}

TEST(CliHw, DataDirOptionIsUsedAndBadCataloguesAreReported) {
  const auto missing = testing::run_cli("hw list --data-dir /nonexistent/parity_data");
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_TRUE(contains(missing.output, "/nonexistent/parity_data/hardware")) << missing.output;

  // A catalogue with one file whose bandwidth lacks provenance: exit 2, message names file and key.
  const fs::path data = fs::path(::testing::TempDir()) / "parity_cli_hw_data";
  fs::remove_all(data);
  fs::create_directories(data / "hardware");
  std::ifstream in(fs::path(PARITY_SOURCE_DIR) / "data" / "hardware" / "h200.json");
  nlohmann::json spec = nlohmann::json::parse(in);
  spec["hbm_bandwidth_tbps"] = 4.8;
  std::ofstream(data / "hardware" / "h200.json") << spec.dump(2);
  const auto bad = testing::run_cli("hw list --data-dir " + data.string());
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_TRUE(contains(bad.output, "h200.json: key 'hbm_bandwidth_tbps'") &&
              contains(bad.output, "has no provenance"))
      << bad.output;

  // Fixed, the same directory lists exactly that one GPU.
  std::ifstream good_in(fs::path(PARITY_SOURCE_DIR) / "data" / "hardware" / "h200.json");
  std::ofstream(data / "hardware" / "h200.json") << good_in.rdbuf();
  const auto good = testing::run_cli("hw list --data-dir " + data.string());
  ASSERT_EQ(good.exit_code, 0) << good.output;
  EXPECT_NE(line_starting_with(good.output, "h200 "), "");
  EXPECT_EQ(line_starting_with(good.output, "b200 "), "") << good.output;
}

}  // namespace
}  // namespace parity
