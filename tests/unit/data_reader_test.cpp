// The binary reader: drop_last, prefetch on and off give the same batches, seek resumes exactly,
// and damaged datasets give clear errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "data_test_util.hpp"
#include "parity/data/dataset.hpp"

namespace parity::data {
namespace {

class BinaryReaderTest : public testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    SyntheticOptions options;
    options.train_samples = 1000;
    options.eval_samples = 10;
    ASSERT_TRUE(generate_synthetic(testing::small_schema(), options, path("ds")).is_ok());
  }
  std::vector<Batch> read_all(const ReaderOptions& options) {
    auto reader = open_dataset(path("ds"), "train", options);
    EXPECT_TRUE(reader.is_ok()) << reader.status().to_string();
    std::vector<Batch> batches;
    Batch batch;
    while (*(*reader)->next(&batch)) batches.push_back(batch);
    return batches;
  }
};

void expect_equal(const Batch& a, const Batch& b) {
  EXPECT_EQ(a.batch_size, b.batch_size);
  EXPECT_EQ(a.dense, b.dense);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.labels, b.labels);
}

TEST_F(BinaryReaderTest, DropLastAndPrefetchDepths) {
  const auto dropped = read_all({.batch_size = 300});
  ASSERT_EQ(dropped.size(), 3u);
  const auto kept = read_all({.batch_size = 300, .drop_last = false});
  ASSERT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept.back().batch_size, 100);
  EXPECT_EQ(kept.back().offsets.size(), 3u * 100 + 1);
  for (const int depth : {0, 1, 5}) {
    const auto batches =
        read_all({.batch_size = 300, .drop_last = false, .prefetch_batches = depth});
    ASSERT_EQ(batches.size(), kept.size());
    for (std::size_t i = 0; i < batches.size(); ++i) expect_equal(batches[i], kept[i]);
  }
}

TEST_F(BinaryReaderTest, SeekResumesExactly) {
  const auto whole = read_all({.batch_size = 100});
  auto reader = open_dataset(path("ds"), "train", {.batch_size = 100});
  ASSERT_TRUE(reader.is_ok());
  Batch batch;
  ASSERT_TRUE(*(*reader)->next(&batch));
  ASSERT_TRUE(*(*reader)->next(&batch));
  EXPECT_EQ((*reader)->position_samples(), 200);
  EXPECT_EQ((*reader)->num_samples(), 1000);
  // A fresh reader seeking to the checkpointed position continues with the same batch.
  auto resumed = open_dataset(path("ds"), "train", {.batch_size = 100});
  ASSERT_TRUE((*resumed)->seek_samples(200).is_ok());
  ASSERT_TRUE(*(*resumed)->next(&batch));
  expect_equal(batch, whole[2]);
  // Mid-batch positions work too: the batch starting at sample 250 is half of 2 and half of 3.
  ASSERT_TRUE((*resumed)->seek_samples(250).is_ok());
  ASSERT_TRUE(*(*resumed)->next(&batch));
  EXPECT_EQ(batch.labels[0], whole[2].labels[50]);
  EXPECT_EQ(batch.labels[99], whole[3].labels[49]);
  // The end, and a new epoch.
  ASSERT_TRUE((*resumed)->seek_samples(1000).is_ok());
  EXPECT_FALSE(*(*resumed)->next(&batch));
  EXPECT_FALSE(*(*resumed)->next(&batch));
  ASSERT_TRUE((*resumed)->seek_samples(0).is_ok());
  ASSERT_TRUE(*(*resumed)->next(&batch));
  expect_equal(batch, whole[0]);
  EXPECT_EQ((*resumed)->seek_samples(1001).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*resumed)->seek_samples(-1).code(), StatusCode::kInvalidArgument);
}

TEST_F(BinaryReaderTest, ClearErrors) {
  EXPECT_EQ(open_dataset(path("ds"), "test", {.batch_size = 1}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_NE(
      open_dataset(path("ds"), "train", {.batch_size = 0}).status().message().find("batch_size"),
      std::string::npos);
  auto missing = open_dataset(path("nowhere"), "train", {.batch_size = 1});
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
  std::filesystem::resize_file(path("ds/train/sparse_1.i32"), 100);
  auto cut = open_dataset(path("ds"), "train", {.batch_size = 1});
  EXPECT_NE(cut.status().message().find("sparse_1.i32: has 100 bytes, expected 12000"),
            std::string::npos)
      << cut.status().message();
  std::filesystem::remove(path("ds/manifest.json"));
  auto no_manifest = open_dataset(path("ds"), "train", {.batch_size = 1});
  EXPECT_NE(no_manifest.status().message().find("no manifest.json"), std::string::npos);
}

TEST_F(BinaryReaderTest, DamagedValuesAreErrorsNotBatches) {
  {  // sample 3's id in table 0 (100 rows, int32) becomes 100
    std::fstream ids(path("ds/train/sparse_0.i32"),
                     std::ios::in | std::ios::out | std::ios::binary);
    const std::int32_t bad = 100;
    ids.seekp(3 * 4);
    ids.write(reinterpret_cast<const char*>(&bad), 4);
  }
  auto reader = open_dataset(path("ds"), "train", {.batch_size = 10});
  ASSERT_TRUE(reader.is_ok());
  Batch batch;
  auto has = (*reader)->next(&batch);
  ASSERT_FALSE(has.is_ok());
  EXPECT_NE(has.status().message().find("sparse_0.i32: sample 3 id 100 is out of range [0, 100)"),
            std::string::npos)
      << has.status().message();
  {
    std::fstream labels(path("ds/eval/labels.u8"), std::ios::in | std::ios::out | std::ios::binary);
    labels.seekp(9);
    labels.put(7);
  }
  auto eval = open_dataset(path("ds"), "eval", {.batch_size = 10, .prefetch_batches = 0});
  has = (*eval)->next(&batch);
  ASSERT_FALSE(has.is_ok());
  EXPECT_NE(has.status().message().find("labels.u8: sample 9 has label 7"), std::string::npos)
      << has.status().message();
}

}  // namespace
}  // namespace parity::data
