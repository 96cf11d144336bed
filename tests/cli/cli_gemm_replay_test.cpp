// Replaying a recorded GEMM measurement file (gzipped, read through zlib) with its recorded
// calibration gives the recorded picks (bench/results/2026-11-29-h200-run21-gemm/pass4) on every
// TMA-aligned shape. The pass ranked with the vendor bands (today's hybrid mode). Since then the
// model has a scalar for kernels without TMA (legacy_latency_ctas), absent from the recorded file:
// it is added here at the committed calibration's value, and it only moves misaligned shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "parity/core/text_file.hpp"

namespace parity::testing {
namespace {

TEST(CliGemmReplay, RecordedPassGivesTheRecordedPicks) {
  const std::string run = "bench/results/2026-11-29-h200-run21-gemm/pass4";
  const auto out = std::filesystem::temp_directory_path() / "parity_gemm_replay";
  std::filesystem::remove_all(out);
  std::filesystem::create_directories(out);
  auto recorded_calibration_text = read_text_file(run + "/h200_gemm.json");
  auto committed_calibration_text = read_text_file("data/calibration/h200_gemm.json");
  ASSERT_TRUE(recorded_calibration_text.is_ok() && committed_calibration_text.is_ok());
  auto calibration = nlohmann::json::parse(*recorded_calibration_text);
  const auto committed = nlohmann::json::parse(*committed_calibration_text);
  calibration["scalars"]["legacy_latency_ctas"] = committed["scalars"]["legacy_latency_ctas"];
  const auto calibration_path = out / "h200_gemm_recorded.json";
  std::ofstream(calibration_path) << calibration.dump(2);
  const auto r = run_cli("gemm eval --mode hybrid --measurements " + run +
                         "/gemm_measurements_evaluation.json.gz --calibration " + calibration_path.string() +
                         " --out-dir " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto recorded_text = read_text_file(run + "/gemm_eval.json.gz");
  auto replayed_text = read_text_file(out / "gemm_eval.json");
  ASSERT_TRUE(recorded_text.is_ok() && replayed_text.is_ok());
  const auto recorded = nlohmann::json::parse(*recorded_text);
  const auto replayed = nlohmann::json::parse(*replayed_text);
  ASSERT_EQ(recorded["shapes"].size(), replayed["shapes"].size());
  ASSERT_EQ(replayed["shapes"].size(), 66u);
  int aligned = 0;
  for (std::size_t i = 0; i < recorded["shapes"].size(); ++i) {
    const auto& shape = recorded["shapes"][i];
    // bf16 TN: rows of A and B are k elements, of D m elements; 16 bytes = 8 elements.
    const bool is_aligned = shape["m"].get<long long>() % 8 == 0 && shape["k"].get<long long>() % 8 == 0;
    if (!is_aligned) continue;
    ++aligned;
    EXPECT_EQ(shape["selected_config"], replayed["shapes"][i]["selected_config"]) << shape["name"];
  }
  EXPECT_GT(aligned, 40);
  // The vendor's figures do not depend on the model.
  EXPECT_NEAR(replayed["heuristic_top1"]["geomean_oracle_over_chosen"].get<double>(), 0.960, 0.0005);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace parity::testing
