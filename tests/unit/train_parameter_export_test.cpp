// The initial-parameter export (`parity train --export-initial`): named fp32 tensors with torch's
// shapes, inside the initialisation bounds, identical for the same seed and different for another.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "parity/train/checkpoint_file.hpp"
#include "parity/train/trainer.hpp"

namespace parity::train {
namespace {

namespace fs = std::filesystem;

std::vector<NamedBlob> export_tiny(std::uint64_t seed, const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("parity_export_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  TrainOptions options;
  auto spec = model::preset("tiny");
  EXPECT_TRUE(spec.is_ok());
  options.spec = *spec;
  options.synthetic_samples = 1024;
  options.batch_size = 128;
  options.max_steps = 1;
  options.out_dir = dir.string();
  options.seed = seed;
  options.initial_parameters_path = (dir / "initial.params").string();
  const auto summary = train(options);
  EXPECT_TRUE(summary.is_ok()) << summary.status().to_string();
  auto blobs = read_checkpoint_file(options.initial_parameters_path);
  EXPECT_TRUE(blobs.is_ok()) << blobs.status().to_string();
  fs::remove_all(dir);
  return blobs.is_ok() ? *blobs : std::vector<NamedBlob>{};
}

TEST(TrainParameterExport, TensorsHaveTorchShapesAndInitialisationBounds) {
  const auto blobs = export_tiny(7, "a");
  ASSERT_FALSE(blobs.empty());
  const auto index_blob = find_blob(blobs, "index");
  ASSERT_TRUE(index_blob.is_ok());
  const auto index = nlohmann::json::parse((*index_blob)->bytes.begin(), (*index_blob)->bytes.end());
  EXPECT_EQ(index.at("format"), "parity.parameters/1");
  const auto spec = *model::preset("tiny");
  // bottom.0: Linear(13 -> first width), stored [out, in] like torch.nn.Linear.
  const auto shape = index.at("tensors").at("bottom.0.weight").at("shape");
  EXPECT_EQ(shape[0].get<int>(), spec.bottom_mlp[0]);
  EXPECT_EQ(shape[1].get<int>(), spec.num_dense_features);
  const auto weight = find_blob(blobs, "bottom.0.weight");
  ASSERT_TRUE(weight.is_ok());
  ASSERT_EQ((*weight)->bytes.size(), sizeof(float) * spec.bottom_mlp[0] * spec.num_dense_features);
  const double bound = 1.0 / std::sqrt(static_cast<double>(spec.num_dense_features));
  const std::size_t count = (*weight)->bytes.size() / sizeof(float);
  double sum_abs = 0;
  for (std::size_t i = 0; i < count; ++i) {
    float value = 0;
    std::memcpy(&value, (*weight)->bytes.data() + i * sizeof(float), sizeof(float));
    ASSERT_LE(std::abs(value), bound) << "element " << i;
    sum_abs += std::abs(value);
  }
  EXPECT_GT(sum_abs / static_cast<double>(count), bound / 4);  // U(-b, b) has mean |x| = b/2
  for (std::size_t t = 0; t < spec.embedding.tables.size(); ++t) {
    const auto table = index.at("tensors").at("embedding." + std::to_string(t) + ".weight").at("shape");
    EXPECT_EQ(table[0].get<std::int64_t>(), spec.embedding.tables[t].num_rows);
    EXPECT_EQ(table[1].get<int>(), spec.embedding.tables[t].dim);
  }
  EXPECT_TRUE(index.at("tensors").contains("top." + std::to_string(spec.top_mlp.size() - 1) + ".bias"));
}

TEST(TrainParameterExport, SameSeedSameBytesOtherSeedOtherBytes) {
  const auto a = export_tiny(7, "b");
  const auto b = export_tiny(7, "c");
  const auto c = export_tiny(8, "d");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), c.size());
  bool any_difference = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].bytes, b[i].bytes) << a[i].name;
    if (a[i].name != "index") any_difference |= a[i].bytes != c[i].bytes;
  }
  EXPECT_TRUE(any_difference);
}

}  // namespace
}  // namespace parity::train
