#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli/run_cli.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/measurements.hpp"

namespace parity {
namespace {

using testing::run_cli;

void expect_bad_input(const std::string& args, const std::string& expected) {
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
}

TEST(CliGemm, SelectPrintsChoiceAndTopFive) {
  const auto r = run_cli("gemm select --hw h200 --m 4096 --n 4096 --k 4096");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("choice:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("TFLOP/s"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("   5. "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("   6. "), std::string::npos) << r.output;
}

TEST(CliGemm, SelectJsonOnAmdSaysModelled) {
  for (const char* hw : {"mi300x", "mi350x"}) {
    const auto r = run_cli(std::string("gemm select --hw ") + hw + " --m 8192 --n 1024 --k 4096 --json --top 3");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto out = nlohmann::json::parse(r.output);
    EXPECT_EQ(out["top"].size(), 3u);
    EXPECT_GT(out["choice"]["predicted_us"].get<double>(), 0.0);
    EXPECT_NE(out["basis"].get<std::string>().find("not a measurement"), std::string::npos);
  }
}

TEST(CliGemm, SelectRejectsBadInput) {
  expect_bad_input("gemm select --hw h200 --m -5 --n 64 --k 64", "m=-5");
  expect_bad_input("gemm select --hw h200 --m 64 --n 0 --k 64", "n=0");
  expect_bad_input("gemm select --hw h200 --m 64 --n 64 --k 64 --dtype int8", "dtype");
  expect_bad_input("gemm select --hw h200 --m 64 --n 64 --k 1001 --align 16", "lda=1001");
  expect_bad_input("gemm select --hw h200 --m 64 --n 64 --k 128 --lda 100", "lda=100");
  expect_bad_input("gemm select --hw h200 --m 64 --n 64 --k 64 --layout XY", "layout");
  expect_bad_input("gemm select --hw no_such_gpu --m 64 --n 64 --k 64", "--hw");
  expect_bad_input("gemm select --m 64 --n 64 --k 64", "--hw");
  expect_bad_input("gemm select --hw h200 --m 64 --n 64 --k 64 --top 0", "--top=0");
}

// Overall and per alignment class, on the Hopper and the AMD model (random sizes are mostly
// misaligned, so most of the 200 land in the misaligned class).
TEST(CliGemm, LatencyReport) {
  for (const char* hw : {"h200", "mi300x"}) {
    const auto r = run_cli(std::string("gemm select --hw ") + hw + " --latency --latency-samples 200 --json");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const auto out = nlohmann::json::parse(r.output);
    EXPECT_EQ(out["samples"].get<int>(), 200) << hw;
    EXPECT_GT(out["p99_us"].get<double>(), 0.0) << hw;
    EXPECT_GT(out["misaligned_samples"].get<int>(), 150) << hw;
    EXPECT_LE(out["misaligned_samples"].get<int>(), 200) << hw;
    EXPECT_GT(out["misaligned_p50_us"].get<double>(), 0.0) << hw;
    EXPECT_GT(out["aligned_p50_us"].get<double>(), 0.0) << hw;
  }
}

TEST(CliGemm, AgreeWithOrigamiRankings) {
  const auto r = run_cli("gemm agree --hw mi300x --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto out = nlohmann::json::parse(r.output);
  EXPECT_EQ(out["problems"].get<int>(), 200);
  expect_bad_input("gemm agree --hw h200", "not an AMD GPU");
}

// calibrate and eval on a small synthetic measurements file: the pipeline runs on any machine.
TEST(CliGemm, CalibrateAndEvalOnSyntheticMeasurements) {
  const auto dir = std::filesystem::temp_directory_path() / "parity_cli_gemm_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  gemm::MeasurementSet set;
  set.device = "h200";
  set.provenance_json = R"({"kind":"synthetic test data"})";
  const auto space = gemm::hopper_modelled_space(gemm::ProblemClass{});
  const std::int64_t sizes[][3] = {{16384, 8192, 1280}, {16384, 1024, 8192}, {4096, 4096, 4096},
                                   {1000, 1000, 1000},  {65536, 1024, 1024}, {3000, 700, 5000}};
  for (const auto& size : sizes) {
    gemm::MeasuredShape shape;
    shape.name = "s" + std::to_string(size[0]) + "x" + std::to_string(size[1]);
    shape.problem.m = size[0];
    shape.problem.n = size[1];
    shape.problem.k = size[2];
    for (std::size_t i = 0; i < space.size(); i += 9) {
      gemm::MeasuredCandidate m;
      m.candidate = space[i];
      // Any positive, shape-dependent timing works for the plumbing.
      m.median_ms = 1e-3 * (10.0 + static_cast<double>((i * 7 + static_cast<std::size_t>(size[1])) % 23));
      m.heuristic_rank = i == 0 ? 0 : -1;
      shape.candidates.push_back(m);
    }
    set.shapes.push_back(shape);
  }
  const auto measurements = (dir / "m.json").string();
  ASSERT_TRUE(gemm::write_measurements_file(set, measurements).is_ok());
  const auto calibration = (dir / "h200_gemm.json").string();
  auto r = run_cli("gemm calibrate --measurements " + measurements + " --out " + calibration +
                   " --max-evals 200");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(calibration));
  r = run_cli("gemm eval --measurements " + measurements + " --calibration " + calibration +
              " --split all --out-dir " + (dir / "eval").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (const char* file : {"gemm_eval.json", "gemm_eval.md", "gemm_eval.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / "eval" / file)) << file;
  }
  {
    // One row per measured candidate of every shape, one model rank 0 per shape.
    std::ifstream csv(dir / "eval" / "gemm_eval_candidates.csv");
    std::string line;
    ASSERT_TRUE(std::getline(csv, line));
    EXPECT_EQ(line.rfind("shape,m,n,k,", 0), 0u) << line;
    std::size_t rows = 0, picks = 0, expected_rows = 0;
    while (std::getline(csv, line)) {
      ++rows;
      picks += line.substr(line.rfind(',') + 1) == "0" ? 1 : 0;
    }
    for (const auto& shape : set.shapes) expected_rows += shape.candidates.size();
    EXPECT_EQ(rows, expected_rows);
    EXPECT_EQ(picks, set.shapes.size());
  }
  // A recorded run's gzipped file replays without unpacking, to the same report.
  ASSERT_EQ(std::system(("gzip -kf " + measurements).c_str()), 0);
  r = run_cli("gemm eval --measurements " + measurements + ".gz --calibration " + calibration +
              " --split all --out-dir " + (dir / "eval_gz").string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto slurp = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(slurp(dir / "eval_gz" / "gemm_eval.json"), slurp(dir / "eval" / "gemm_eval.json"));
  // A missing input file is an input error naming it (exit 2), compressed or not.
  r = run_cli("gemm eval --measurements " + (dir / "absent.json.gz").string() + " --out-dir " +
              (dir / "eval").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("absent.json.gz"), std::string::npos) << r.output;
  expect_bad_input("gemm eval --measurements " + measurements + " --split sideways --out-dir " +
                       (dir / "eval").string(),
                   "--split");
  expect_bad_input("gemm calibrate --measurements " + measurements, "--out");
  // Several files: every admitted shape of each is used, evaluation rows are refused with a
  // message (65536x1024x1024 is an evaluation row's size in the dev suite), provenance lists both.
  const auto calibration2 = (dir / "h200_gemm_two.json").string();
  r = run_cli("gemm calibrate --measurements " + measurements + " --measurements " + measurements +
              ".gz --out " + calibration2 + " --max-evals 200");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("from 2 file(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("s65536x1024 (65536x1024x1024) ignored: evaluation row"), std::string::npos)
      << r.output;
  const auto written = nlohmann::json::parse(slurp(calibration2));
  EXPECT_EQ(written["provenance"]["measurements"].size(), 2u);
  EXPECT_FALSE(written["provenance"]["ignored"].empty());
  r = run_cli("gemm calibrate --measurements " + measurements + " --cv-folds 2 --max-evals 100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("2-fold cross-validation"), std::string::npos) << r.output;
  r = run_cli("gemm calibrate --measurements " + measurements +
              " --cv-folds 2 --max-evals 100 --vendor-band -1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  expect_bad_input("gemm calibrate --measurements " + measurements + " --cv-folds 1", "--cv-folds=1");
  r = run_cli("gemm calibrate --measurements " + measurements + " --out " + calibration2 +
              " --calibration-shapes " + (dir / "absent.csv").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--calibration-shapes"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("absent.csv"), std::string::npos) << r.output;
  // --fit-only: the named scalars move, every other one and the variant table stay at the
  // --calibration file's values (the first fit above), which the provenance records.
  const auto calibration3 = (dir / "h200_gemm_legacy.json").string();
  r = run_cli("gemm calibrate --measurements " + measurements + " --calibration " + calibration + " --out " +
              calibration3 + " --max-evals 200 --fit-only legacy_efficiency,launch_us");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto before = nlohmann::json::parse(slurp(calibration));
  const auto after = nlohmann::json::parse(slurp(calibration3));
  for (const auto& [name, value] : before["scalars"].items()) {
    if (name == "legacy_efficiency" || name == "launch_us") continue;
    EXPECT_EQ(after["scalars"][name], value) << name;
  }
  EXPECT_NE(after["scalars"]["launch_us"], before["scalars"]["launch_us"]);
  EXPECT_EQ(after["variant_efficiency"], before["variant_efficiency"]);
  EXPECT_EQ(after["provenance"]["fit_only"].size(), 2u);
  expect_bad_input("gemm calibrate --measurements " + measurements + " --out " + calibration3 +
                       " --fit-only legacy_speed",
                   "--fit-only: 'legacy_speed'");
  // A file recorded under the runtime's name for a catalogue GPU ("h100_80gb_hbm3", as measure
  // wrote H100 files before it resolved names) calibrates that GPU, and only that one.
  gemm::MeasurementSet h100_set = set;
  h100_set.device = "h100_80gb_hbm3";
  const auto h100_measurements = (dir / "m_h100.json").string();
  ASSERT_TRUE(gemm::write_measurements_file(h100_set, h100_measurements).is_ok());
  const auto h100_calibration = (dir / "h100_gemm.json").string();
  r = run_cli("gemm calibrate --hw h100 --measurements " + h100_measurements + " --out " + h100_calibration +
              " --max-evals 50");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(nlohmann::json::parse(slurp(h100_calibration))["device"], "h100");
  expect_bad_input("gemm calibrate --hw h200 --measurements " + h100_measurements + " --out " + calibration3,
                   "recorded on device 'h100'");
  // A missing input file is an input error (exit 2), as for the .gz form and the catalogue.
  r = run_cli("gemm eval --measurements " + (dir / "missing.json").string() + " --out-dir " +
              (dir / "eval").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("missing.json"), std::string::npos) << r.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace parity
