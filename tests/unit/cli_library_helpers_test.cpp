// Library helpers the commands call instead of doing the work themselves: timing settings from
// text (bench), the copy size, GEMM problems from text, the model source's data directory, and
// the data commands' report text.
#include <gtest/gtest.h>

#include <string>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/comm/bench.hpp"
#include "parity/data/criteo.hpp"
#include "parity/data/dataset.hpp"
#include "parity/gemm/problem.hpp"
#include "parity/gemm/workflow.hpp"

namespace parity {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TimingSettings, ParsedAndCheckedWithTheCommandAndFlag) {
  bench::TimingSettings settings;
  settings.flush_bytes = "256MiB";
  settings.cache = "flush-clean";
  auto options = bench::timing_options_from_settings("bench x", settings);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  EXPECT_EQ(options->flush_bytes, 256ll << 20);
  EXPECT_EQ(options->cache, bench::TimingOptions::CacheMode::kFlushL2Clean);
  EXPECT_EQ(options->repetitions, 50);
  settings.reps = 0;
  EXPECT_TRUE(contains(bench::timing_options_from_settings("bench x", settings).status().message(),
                       "bench x: --reps=0 must be >= 1"));
  settings.reps = 1;
  settings.rep_ms = bench::kMaxTimedMilliseconds * 2;
  EXPECT_TRUE(contains(bench::timing_options_from_settings("bench x", settings).status().message(), "--rep-ms"));
  settings.rep_ms = 0;
  settings.cache = "cold";
  EXPECT_EQ(bench::timing_options_from_settings("bench x", settings).status().code(), StatusCode::kInvalidArgument);
  settings.cache = "warm";
  settings.flush_bytes = "64x";
  EXPECT_TRUE(contains(bench::timing_options_from_settings("bench x", settings).status().message(), "--flush-bytes"));
}

TEST(HbmTotalBytes, EvenAndPositive) {
  auto bytes = bench::parse_hbm_total_bytes("bench hbm", "4GiB");
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ(*bytes, 4ll << 30);
  EXPECT_TRUE(contains(bench::parse_hbm_total_bytes("bench hbm", "3").status().to_string(), "bench hbm --bytes"));
  EXPECT_FALSE(bench::parse_hbm_total_bytes("bench hbm", "0").is_ok());
}

TEST(GemmProblemFromText, ParsesDtypeLayoutEpilogueAndValidates) {
  gemm::GemmProblem sizes;
  sizes.m = 128;
  sizes.n = 64;
  sizes.k = 32;
  auto problem = gemm::gemm_problem_from_text(sizes, "fp16", "NT", "relu");
  ASSERT_TRUE(problem.is_ok()) << problem.status().to_string();
  EXPECT_EQ(problem->a_dtype, DType::kF16);
  EXPECT_EQ(problem->c_dtype, DType::kF16);
  EXPECT_EQ(problem->layout, gemm::GemmLayout::kNT);
  EXPECT_EQ(problem->epilogue, gemm::Epilogue::kRelu);
  EXPECT_TRUE(contains(gemm::gemm_problem_from_text(sizes, "int4", "TN").status().message(), "dtype"));
  EXPECT_FALSE(gemm::gemm_problem_from_text(sizes, "bf16", "XY").is_ok());
  sizes.k = 0;
  EXPECT_FALSE(gemm::gemm_problem_from_text(sizes, "bf16", "TN").is_ok());
}

TEST(GemmModelSource, DataDirFromTextOnlyWhenGiven) {
  gemm::ModelSource source{"h200", std::nullopt, ""};
  EXPECT_FALSE(gemm::with_data_dir(source, "").data_dir.has_value());
  EXPECT_EQ(gemm::with_data_dir(source, "/data").data_dir, std::filesystem::path("/data"));
}

TEST(DataReportText, SyntheticAndCriteoLines) {
  data::DatasetSchema schema;
  schema.tables.resize(3);
  data::SyntheticOptions options;
  options.train_samples = 900;
  options.eval_samples = 100;
  data::SyntheticReport report;
  report.bytes_written = 2'000'000;
  const std::string text = data::synthetic_report_text("/out", "tiny", schema, options, report, 0.5);
  // 2e6 bytes written: 2.0 MB.
  EXPECT_EQ(text.rfind("wrote /out: model tiny, 3 tables, train 900 + eval 100 samples, 2.0 MB in 0.50 s", 0), 0u)
      << text;
  EXPECT_TRUE(contains(text, "on the eval split")) << text;
  data::CriteoConvertReport criteo;
  criteo.lines = 4;
  criteo.train_samples = 3;
  criteo.bad_lines = 1;
  criteo.first_bad_lines.push_back(data::BadLine{});
  criteo.first_bad_lines.back().reason = "day.tsv:3: 12 fields";
  const std::string converted = data::criteo_report_text("/out", criteo, 1.0);
  EXPECT_TRUE(contains(converted, "4 lines read, train 3 + eval 0 samples, 1 bad lines")) << converted;
  EXPECT_TRUE(contains(converted, "bad line: day.tsv:3: 12 fields\n")) << converted;
}

TEST(CommCalibration, NoRowsOrAnUnwritablePathIsAnError) {
  comm::CommBenchReport report;
  report.backend = "local";
  const auto written = comm::fit_and_write_comm_calibration(report, "/nonexistent/dir/calibration.json", "");
  EXPECT_FALSE(written.is_ok());
}

}  // namespace
}  // namespace parity
