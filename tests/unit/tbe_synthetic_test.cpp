// Synthetic TBE batches: the structure every kernel test and benchmark relies on (offsets,
// index ranges, bag sizes, empty bags, hot rows, weights), determinism per seed, the packing
// helpers and the per-feature counts, each checked against a direct recount.
#include "parity/embedding/tbe_synthetic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

namespace parity::embedding {
namespace {

TbeLayout two_tables_three_features() {
  // Feature 2 reads table 0 again: features and tables differ.
  auto layout = TbeLayout::create({{1000, 8}, {37, 20}}, {0, 1, 0});
  EXPECT_TRUE(layout.is_ok()) << layout.status().to_string();
  return *layout;
}

void expect_well_formed(const TbeLayout& layout, const SyntheticBatchOptions& options,
                        const SyntheticBatch& batch) {
  const std::size_t bags = static_cast<std::size_t>(layout.num_features() * options.batch_size);
  ASSERT_EQ(batch.offsets.size(), bags + 1);
  EXPECT_EQ(batch.offsets.front(), 0);
  EXPECT_EQ(batch.offsets.back(), static_cast<std::int64_t>(batch.indices.size()));
  for (std::size_t bag = 0; bag < bags; ++bag) {
    ASSERT_LE(batch.offsets[bag], batch.offsets[bag + 1]) << "bag " << bag;
    const int feature = static_cast<int>(bag / static_cast<std::size_t>(options.batch_size));
    for (std::int64_t i = batch.offsets[bag]; i < batch.offsets[bag + 1]; ++i) {
      ASSERT_GE(batch.indices[i], 0);
      ASSERT_LT(batch.indices[i], layout.feature_rows(feature)) << "feature " << feature;
    }
  }
  EXPECT_EQ(batch.per_sample_weights.size(), options.weighted ? batch.indices.size() : 0u);
}

TEST(TbeSynthetic, FixedBagsHaveExactlyThePoolingFactor) {
  const TbeLayout layout = two_tables_three_features();
  SyntheticBatchOptions options;
  options.batch_size = 16;
  options.pooling_factor = 5;
  const SyntheticBatch batch = make_synthetic_batch(layout, options);
  expect_well_formed(layout, options, batch);
  for (std::size_t bag = 0; bag + 1 < batch.offsets.size(); ++bag) {
    EXPECT_EQ(batch.offsets[bag + 1] - batch.offsets[bag], 5);
  }
}

TEST(TbeSynthetic, VaryingEmptyHotAndWeightedBatchesStayInRange) {
  const TbeLayout layout = two_tables_three_features();
  SyntheticBatchOptions options;
  options.batch_size = 200;
  options.pooling_factor = 4;
  options.vary_bag_sizes = true;
  options.weighted = true;
  options.seed = 5;
  const SyntheticBatch varied = make_synthetic_batch(layout, options);
  expect_well_formed(layout, options, varied);
  std::set<std::int64_t> lengths;
  for (std::size_t bag = 0; bag + 1 < varied.offsets.size(); ++bag) {
    lengths.insert(varied.offsets[bag + 1] - varied.offsets[bag]);
  }
  EXPECT_EQ(*lengths.begin(), 0);   // 600 bags over 9 lengths: every length appears
  EXPECT_EQ(*lengths.rbegin(), 8);  // sizes in [0, 2L]
  for (const float w : varied.per_sample_weights) {
    EXPECT_GE(w, 0.5f);
    EXPECT_LT(w, 1.5f);
  }

  options.empty_bag_fraction = 1.0;
  const SyntheticBatch empty = make_synthetic_batch(layout, options);
  expect_well_formed(layout, options, empty);
  EXPECT_TRUE(empty.indices.empty());

  options.empty_bag_fraction = 0.0;
  options.vary_bag_sizes = false;
  options.hot_rows = 3;
  const SyntheticBatch hot = make_synthetic_batch(layout, options);
  expect_well_formed(layout, options, hot);
  for (const std::int64_t index : hot.indices) EXPECT_LT(index, 3);

  options.hot_rows = 0;
  options.zipf_alpha = 1.1;
  const SyntheticBatch skewed = make_synthetic_batch(layout, options);
  expect_well_formed(layout, options, skewed);
  // Skew concentrates the draws: fewer distinct rows of table 0 than a uniform batch touches.
  options.zipf_alpha = 0.0;
  const SyntheticBatch uniform = make_synthetic_batch(layout, options);
  const auto distinct_in_feature0 = [&](const SyntheticBatch& batch) {
    return std::set<std::int64_t>(batch.indices.begin(),
                                  batch.indices.begin() + batch.offsets[options.batch_size])
        .size();
  };
  EXPECT_LT(distinct_in_feature0(skewed), distinct_in_feature0(uniform));
}

TEST(TbeSynthetic, SameSeedSameBatchOtherSeedOther) {
  const TbeLayout layout = two_tables_three_features();
  SyntheticBatchOptions options;
  options.batch_size = 32;
  options.pooling_factor = 3;
  options.vary_bag_sizes = true;
  options.weighted = true;
  options.seed = 11;
  const SyntheticBatch a = make_synthetic_batch(layout, options);
  const SyntheticBatch b = make_synthetic_batch(layout, options);
  EXPECT_EQ(a.indices, b.indices);
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.per_sample_weights, b.per_sample_weights);
  options.seed = 12;
  EXPECT_NE(make_synthetic_batch(layout, options).indices, a.indices);
}

TEST(TbeSynthetic, PackIndicesKeepsValuesInBothWidths) {
  const std::vector<std::int64_t> values{0, 1, 2147483647, 5, 999};
  const auto narrow = pack_indices(values, DType::kI32);
  ASSERT_EQ(narrow.size(), values.size() * 4);
  const auto wide = pack_indices(values, DType::kI64);
  ASSERT_EQ(wide.size(), values.size() * 8);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::int32_t n32;
    std::memcpy(&n32, narrow.data() + 4 * i, 4);
    EXPECT_EQ(n32, values[i]);
    std::int64_t n64;
    std::memcpy(&n64, wide.data() + 8 * i, 8);
    EXPECT_EQ(n64, values[i]);
  }
  EXPECT_TRUE(pack_indices({}, DType::kI64).empty());
}

// Weights are normal(0, 1/sqrt(D)) per table, stored in the dtype; as_double holds exactly the
// stored values. The sample standard deviation of n draws is within 5 * sigma / sqrt(2n) of sigma.
TEST(TbeSynthetic, WeightsAreScaledNormalsStoredInTheDtype) {
  const TbeLayout layout = two_tables_three_features();
  for (const DType dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    std::vector<double> stored;
    const auto bytes = make_weights(layout, dtype, 3, &stored);
    ASSERT_EQ(bytes.size(),
              static_cast<std::size_t>(layout.total_weight_elements()) * dtype_size_bytes(dtype));
    ASSERT_EQ(stored.size(), static_cast<std::size_t>(layout.total_weight_elements()));
    for (std::size_t i = 0; i < stored.size(); i += 17) {
      EXPECT_EQ(stored[i], load_as_double(bytes, dtype, static_cast<std::int64_t>(i)));
    }
    EXPECT_EQ(make_weights(layout, dtype, 3), bytes) << "same seed, same weights";
    for (int t = 0; t < layout.num_tables(); ++t) {
      const double sigma = 1.0 / std::sqrt(static_cast<double>(layout.tables()[t].dim));
      double sum_sq = 0;
      double count = 0;
      for (std::int64_t r = 0; r < layout.tables()[t].num_rows; ++r) {
        // Rows are padded to 16 bytes; the first `dim` elements of each row are the weights.
        const std::int64_t row_stride =
            (layout.weights_offset(t + 1) - layout.weights_offset(t)) / layout.tables()[t].num_rows;
        for (int d = 0; d < layout.tables()[t].dim; ++d) {
          const double w =
              stored[static_cast<std::size_t>(layout.weights_offset(t) + r * row_stride + d)];
          sum_sq += w * w;
          ++count;
        }
      }
      EXPECT_NEAR(std::sqrt(sum_sq / count), sigma, 5 * sigma / std::sqrt(2 * count))
          << dtype_name(dtype) << " table " << t;
    }
  }
}

TEST(TbeSynthetic, CountPerFeatureMatchesARecount) {
  const TbeLayout layout = two_tables_three_features();
  SyntheticBatchOptions options;
  options.batch_size = 50;
  options.pooling_factor = 6;
  options.vary_bag_sizes = true;
  options.zipf_alpha = 1.05;
  const SyntheticBatch batch = make_synthetic_batch(layout, options);
  TbeProblem problem;
  problem.layout = layout;
  problem.batch_size = options.batch_size;
  problem.num_indices = static_cast<std::int64_t>(batch.indices.size());
  std::vector<std::int64_t> per_feature, unique_per_feature;
  count_per_feature(problem, batch, &per_feature, &unique_per_feature);
  ASSERT_EQ(per_feature.size(), 3u);
  std::int64_t total = 0;
  for (int f = 0; f < 3; ++f) {
    const std::int64_t begin = batch.offsets[static_cast<std::size_t>(f * options.batch_size)];
    const std::int64_t end = batch.offsets[static_cast<std::size_t>((f + 1) * options.batch_size)];
    std::set<std::int64_t> rows(batch.indices.begin() + begin, batch.indices.begin() + end);
    EXPECT_EQ(per_feature[f], end - begin);
    EXPECT_EQ(unique_per_feature[f], static_cast<std::int64_t>(rows.size()));
    EXPECT_LE(unique_per_feature[f], per_feature[f]);
    total += per_feature[f];
  }
  EXPECT_EQ(total, problem.num_indices);
}

}  // namespace
}  // namespace parity::embedding
