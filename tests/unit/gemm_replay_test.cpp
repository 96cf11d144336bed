// Replaying a recorded GEMM measurement file (gzipped, read through zlib) gives the recorded picks:
// bench/results/2026-11-29-h200-run21-gemm/pass4 was selected in hybrid mode (the vendor's top-1
// inside the model's 3% band; always the vendor's top-1 without TMA when it was measured) with
// that pass's calibration. Kernels without TMA have had their own model since (with the
// legacy_latency_ctas scalar the recorded calibration predates), so only TMA-class shapes
// (16-byte aligned rows) must pick, and score, exactly as recorded.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "parity/core/text_file.hpp"
#include "parity/gemm/workflow.hpp"

namespace parity::gemm {
namespace {

TEST(GemmReplay, RecordedPassGivesTheRecordedPicks) {
  const std::string source_dir = PARITY_SOURCE_DIR;
  const std::string run = source_dir + "/bench/results/2026-11-29-h200-run21-gemm/pass4";
  const auto dir = std::filesystem::temp_directory_path() / "parity_gemm_replay";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // The recorded calibration with the scalar added since (any value: see above).
  auto recorded_calibration = read_text_file(run + "/h200_gemm.json");
  ASSERT_TRUE(recorded_calibration.is_ok()) << recorded_calibration.status().to_string();
  auto calibration = nlohmann::json::parse(*recorded_calibration);
  ASSERT_FALSE(calibration["scalars"].contains("legacy_latency_ctas"));
  calibration["scalars"]["legacy_latency_ctas"] = 1.0;
  ASSERT_TRUE(write_text_file(dir / "h200_gemm.json", calibration.dump()).is_ok());

  EvalRequest request;
  request.model.hw = "h200";
  request.model.data_dir = std::filesystem::path(source_dir) / "data";
  request.model.calibration_file = (dir / "h200_gemm.json").string();
  request.measurements = run + "/gemm_measurements_evaluation.json.gz";
  request.out_dir = (dir / "out").string();
  request.selector.mode = SelectionMode::kHybrid;
  auto report = evaluate(request);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();

  auto recorded_text = read_text_file(run + "/gemm_eval.json.gz");
  ASSERT_TRUE(recorded_text.is_ok());
  const auto recorded = nlohmann::json::parse(*recorded_text);
  ASSERT_EQ(report->shapes.size(), 66u);
  ASSERT_EQ(recorded["shapes"].size(), report->shapes.size());
  int tma_shapes = 0;
  for (std::size_t i = 0; i < report->shapes.size(); ++i) {
    const auto& shape = report->shapes[i];
    ASSERT_EQ(recorded["shapes"][i]["name"].get<std::string>(), shape.name);
    if (shape.problem.alignment_class_bytes() < 16) continue;
    ++tma_shapes;
    EXPECT_EQ(recorded["shapes"][i]["selected_config"].get<std::string>(), shape.selected_config) << shape.name;
    EXPECT_NEAR(recorded["shapes"][i]["selected_ratio"].get<double>(), shape.selected_ratio, 1e-9) << shape.name;
  }
  EXPECT_GE(tma_shapes, 50);  // most of the suite: the check covers the figures docs/gemm.md quotes
  EXPECT_NEAR(report->heuristic.geomean, 0.960, 0.0005);  // the vendor's picks do not depend on us
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace parity::gemm
