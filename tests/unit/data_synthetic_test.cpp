// The synthetic generator: deterministic for a seed whatever the thread count, valid batches,
// the planted model's AUC near its target, Zipf skew, and option checks.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "data_test_util.hpp"
#include "parity/data/dataset.hpp"

namespace parity::data {
namespace {

using testing::small_schema;

class SyntheticTest : public testing::TempDirTest {
 protected:
  static std::string file_text(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

TEST_F(SyntheticTest, WritesReadableValidBatches) {
  SyntheticOptions options;
  options.train_samples = 5000;
  options.eval_samples = 3000;
  auto report = generate_synthetic(small_schema(), options, path("ds"));
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  auto info = read_dataset_info(path("ds"));
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_EQ(info->train_samples, 5000);
  EXPECT_EQ(info->eval_samples, 3000);
  EXPECT_EQ(info->source, "synthetic");
  EXPECT_EQ(info->schema.tables.size(), 3u);
  EXPECT_EQ(info->schema.tables[2].num_rows, std::int64_t{3} << 31);
  EXPECT_TRUE(std::filesystem::exists(path("ds/train/sparse_2.i64")));
  EXPECT_TRUE(std::filesystem::exists(path("ds/train/sparse_1.i32")));
  for (const std::string split : {"train", "eval"}) {
    auto reader = open_dataset(path("ds"), split, {.batch_size = 512, .drop_last = false});
    ASSERT_TRUE(reader.is_ok()) << reader.status().to_string();
    Batch batch;
    std::int64_t seen = 0;
    while (true) {
      auto has = (*reader)->next(&batch);
      ASSERT_TRUE(has.is_ok()) << has.status().to_string();
      if (!*has) break;
      ASSERT_TRUE(validate_batch(small_schema(), batch).is_ok())
          << validate_batch(small_schema(), batch).to_string();
      seen += batch.batch_size;
    }
    EXPECT_EQ(seen, split == "train" ? 5000 : 3000);
  }
  EXPECT_GT(report->bytes_written, 0);
  EXPECT_NEAR(report->positive_rate, 0.25, 0.03);  // binomial sd sqrt(.25*.75/8000) = 0.005: 6 sd
}

TEST_F(SyntheticTest, SameSeedSameBytesAnyThreadCount) {
  SyntheticOptions options;
  options.train_samples = 40000;  // several chunks
  options.eval_samples = 1000;
  options.num_threads = 1;
  ASSERT_TRUE(generate_synthetic(small_schema(), options, path("one")).is_ok());
  options.num_threads = 3;
  ASSERT_TRUE(generate_synthetic(small_schema(), options, path("three")).is_ok());
  options.seed = 2;
  ASSERT_TRUE(generate_synthetic(small_schema(), options, path("other")).is_ok());
  for (const std::string file :
       {"manifest.json", "train/dense.f32", "train/labels.u8", "train/sparse_0.i32",
        "train/sparse_1.i32", "train/sparse_2.i64", "eval/labels.u8"}) {
    EXPECT_EQ(file_text(path("one/" + file)), file_text(path("three/" + file))) << file;
    EXPECT_NE(file_text(path("one/" + file)), file_text(path("other/" + file))) << file;
  }
}

TEST_F(SyntheticTest, OneClassEvalSplitHasNoAuc) {
  SyntheticOptions options;
  options.train_samples = 10;
  options.eval_samples = 1;  // one label: the AUC is undefined
  auto report = generate_synthetic(small_schema(), options, path("ds"));
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_TRUE(std::isnan(report->planted_auc));
  auto info = read_dataset_info(path("ds"));
  ASSERT_TRUE(info.is_ok()) << info.status().to_string();
  EXPECT_TRUE(std::isnan(info->planted_auc));
}

TEST_F(SyntheticTest, RewritingLeavesNoStaleFiles) {
  SyntheticOptions options;
  options.train_samples = 100;
  ASSERT_TRUE(generate_synthetic(small_schema(), options, path("ds")).is_ok());
  DatasetSchema one_table = small_schema();
  one_table.tables.resize(1);
  ASSERT_TRUE(generate_synthetic(one_table, options, path("ds")).is_ok());
  EXPECT_TRUE(std::filesystem::exists(path("ds/train/sparse_0.i32")));
  EXPECT_FALSE(std::filesystem::exists(path("ds/train/sparse_1.i32")));
  EXPECT_FALSE(std::filesystem::exists(path("ds/train/sparse_2.i64")));
}

TEST_F(SyntheticTest, PlantedAucNearTarget) {
  for (const double target : {0.70, 0.78, 0.80}) {
    SyntheticOptions options;
    options.train_samples = 1000;
    options.eval_samples = 200000;
    options.planted_auc_target = target;
    auto report = generate_synthetic(small_schema(), options, path("auc"));
    ASSERT_TRUE(report.is_ok()) << report.status().to_string();
    // The AUC's sampling sd at n=200k, 25% positives is about 0.0015 (Hanley-McNeil); the
    // calibration sample (100k) adds about as much: 0.01 is over 4 combined sd.
    EXPECT_NEAR(report->planted_auc, target, 0.01) << "target " << target;
    auto info = read_dataset_info(path("auc"));
    ASSERT_TRUE(info.is_ok());
    EXPECT_EQ(info->planted_auc, report->planted_auc);
  }
}

// Row 0's share is P(T(u) < 2) for the inverse power transform T: (2^(1-a) - 1) / (E^(1-a) - 1),
// ln 2 / ln E at a = 1, 1/E at a = 0. Checked on a small table (alias sampling) and on one above
// the alias limit (the transform itself), within 5 binomial standard deviations.
TEST_F(SyntheticTest, ZipfRowZeroShareMatchesTheTransform) {
  constexpr std::int64_t kSamples = 40000;
  for (const std::int64_t rows : {std::int64_t{1000}, std::int64_t{70000}}) {
    for (const double alpha : {0.0, 0.5, 1.0, 1.05, 2.0}) {
      DatasetSchema schema;
      schema.num_dense = 1;
      schema.tables = {{rows, 1}};
      SyntheticOptions options;
      options.train_samples = kSamples;
      options.zipf_alpha = alpha;
      options.planted_auc_target = 0.6;  // reachable through the dense feature for any alpha
      ASSERT_TRUE(generate_synthetic(schema, options, path("zipf")).is_ok()) << "alpha " << alpha;
      auto reader = open_dataset(path("zipf"), "train", {.batch_size = kSamples});
      ASSERT_TRUE(reader.is_ok());
      Batch batch;
      ASSERT_TRUE(*(*reader)->next(&batch));
      std::int64_t row_zero = 0;
      for (const std::int64_t id : batch.indices) row_zero += id == 0 ? 1 : 0;
      const double n = static_cast<double>(rows);
      double expected = 1.0 / n;
      if (alpha == 1.0) expected = std::log(2.0) / std::log(n);
      if (alpha != 0.0 && alpha != 1.0)
        expected = (std::pow(2.0, 1 - alpha) - 1) / (std::pow(n, 1 - alpha) - 1);
      const double share = static_cast<double>(row_zero) / kSamples;
      const double sd = std::sqrt(expected * (1 - expected) / kSamples);
      EXPECT_NEAR(share, expected, 5 * sd + 1.0 / kSamples)
          << "rows " << rows << " alpha " << alpha;
    }
  }
}

TEST_F(SyntheticTest, RejectsBadOptions) {
  SyntheticOptions options;
  options.train_samples = 100;
  options.planted_auc_target = 0.9;
  auto report = generate_synthetic(small_schema(), options, path("bad"));
  EXPECT_EQ(report.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(report.status().message().find("planted_auc_target"), std::string::npos);
  options.planted_auc_target = 0.78;
  options.zipf_alpha = -1;
  EXPECT_NE(generate_synthetic(small_schema(), options, path("bad"))
                .status()
                .message()
                .find("zipf_alpha"),
            std::string::npos);
  options.zipf_alpha = 1;
  DatasetSchema one_row;
  one_row.num_dense = 0;
  one_row.tables = {{1, 1}};
  EXPECT_NE(
      generate_synthetic(one_row, options, path("bad")).status().message().find("not reachable"),
      std::string::npos);
  DatasetSchema empty;
  EXPECT_NE(generate_synthetic(empty, options, path("bad")).status().message().find("no tables"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::data
