// Replaying a recorded GEMM measurement file (gzipped, read through zlib) with its recorded
// calibration gives the recorded picks and figures (bench/results/2026-11-29-h200-run21-gemm/pass4).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "parity/core/text_file.hpp"

namespace parity::testing {
namespace {

TEST(CliGemmReplay, RecordedPassGivesTheRecordedPicks) {
  const std::string run = "bench/results/2026-11-29-h200-run21-gemm/pass4";
  const auto out = std::filesystem::temp_directory_path() / "parity_gemm_replay";
  std::filesystem::remove_all(out);
  const auto r = run_cli("gemm eval --measurements " + run + "/gemm_measurements_evaluation.json.gz --calibration " +
                         run + "/h200_gemm.json --out-dir " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto recorded_text = read_text_file(run + "/gemm_eval.json.gz");
  auto replayed_text = read_text_file(out / "gemm_eval.json");
  ASSERT_TRUE(recorded_text.is_ok() && replayed_text.is_ok());
  const auto recorded = nlohmann::json::parse(*recorded_text);
  const auto replayed = nlohmann::json::parse(*replayed_text);
  ASSERT_EQ(recorded["shapes"].size(), replayed["shapes"].size());
  ASSERT_EQ(replayed["shapes"].size(), 66u);
  for (std::size_t i = 0; i < recorded["shapes"].size(); ++i) {
    EXPECT_EQ(recorded["shapes"][i]["selected_config"], replayed["shapes"][i]["selected_config"])
        << recorded["shapes"][i]["name"];
  }
  // The figures docs/gemm.md quotes for this pass.
  EXPECT_NEAR(replayed["selector"]["geomean_oracle_over_chosen"].get<double>(), 0.981, 0.0005);
  EXPECT_NEAR(replayed["selector"]["worst"].get<double>(), 0.937, 0.0005);
  EXPECT_NEAR(replayed["heuristic_top1"]["geomean_oracle_over_chosen"].get<double>(), 0.960, 0.0005);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace parity::testing
