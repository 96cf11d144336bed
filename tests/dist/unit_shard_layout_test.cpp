// The distributed trainer's exchange units on one rank (no communication: on one rank the routed
// batch is the unit slice itself): row shards' partial sums folded in shard order against the
// whole table's pooled sums, column shards side by side, and the placement's layouts.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "parity/core/dtype.hpp"
#include "train/dist_embedding.hpp"
#include "train/dist_placement.hpp"

namespace parity::train::detail {
namespace {

constexpr std::int64_t kRows = 1000;
constexpr int kDim = 16;
constexpr std::int64_t kBatch = 64;

model::ModelSpec one_table_spec(int ids_per_sample) {
  model::ModelSpec spec;
  spec.embedding.tables = {{"T", kRows, kDim}};
  spec.embedding.features = {{"F", 0, ids_per_sample}};
  spec.embedding.optimizer.kind = embedding::OptimizerKind::kSgd;
  return spec;
}

struct Pooled {
  std::vector<float> sharded;  // folded units, [kBatch][kDim]
  std::vector<float> whole;    // the whole table's TBE forward, [kBatch][kDim]
  std::vector<float> weights;
  data::Batch batch;
};

// Pools a random batch with `placement` on rank 0 of 1 and with the whole table.
Pooled pool_both_ways(const model::ModelSpec& spec, const TablePlacement& placement, unsigned seed) {
  Pooled out;
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  out.weights.resize(static_cast<std::size_t>(kRows * kDim));
  for (auto& w : out.weights) w = normal(rng);
  const int hots = spec.embedding.features[0].ids_per_sample;
  std::uniform_int_distribution<std::int64_t> row(0, kRows - 1);
  out.batch.batch_size = kBatch;
  for (std::int64_t b = 0; b <= kBatch; ++b) out.batch.offsets.push_back(b * hots);
  for (std::int64_t i = 0; i < kBatch * hots; ++i) out.batch.indices.push_back(row(rng));
  const auto layout = make_shard_layout(placement, spec, 1);
  EXPECT_TRUE(layout.is_ok()) << layout.status().to_string();
  auto full_layout = embedding::TbeLayout::create({{kRows, kDim}});
  EXPECT_TRUE(full_layout.is_ok());
  ExecutionContext context;
  context.deterministic = true;

  std::vector<int> piece_of_unit;
  auto sharded = EmbeddingShard::create(spec, layout->pieces_of(0, &piece_of_unit), piece_of_unit, context,
                                        embedding::PoolingMode::kSum);
  EXPECT_TRUE(sharded.is_ok()) << sharded.status().to_string();
  EXPECT_TRUE(sharded->copy_initial_weights(out.weights.data(), *full_layout).is_ok());
  comm::SparseBatch units = unit_slice(out.batch, *layout, 0, kBatch);
  sharded->set_batch(units.lengths, units.ids, kBatch);
  std::vector<float> unit_pooled(static_cast<std::size_t>(kBatch * layout->units_width()));
  EXPECT_TRUE(sharded->forward(unit_pooled.data()).is_ok());
  out.sharded.assign(static_cast<std::size_t>(kBatch * kDim), 0.0f);
  fold_units(*layout, spec, kBatch, unit_pooled.data(), nullptr, out.sharded.data());

  auto whole = EmbeddingShard::create(spec, std::vector<int>{0}, 0, context);
  EXPECT_TRUE(whole.is_ok());
  EXPECT_TRUE(whole->copy_initial_weights(out.weights.data(), *full_layout).is_ok());
  std::vector<std::int64_t> lengths, ids;
  feature_slice(out.batch, {0}, 0, kBatch, &lengths, &ids);
  whole->set_batch(lengths, ids, kBatch);
  out.whole.assign(static_cast<std::size_t>(kBatch * kDim), 0.0f);
  EXPECT_TRUE(whole->forward(out.whole.data()).is_ok());
  return out;
}

TablePlacement four_row_shards() {
  TablePlacement placement;
  ShardedTable table{plan::ShardingType::kRowWise, {}};
  for (int k = 0; k < 4; ++k) table.shards.push_back({0, kRows * k / 4, kRows * (k + 1) / 4, 0, kDim});
  placement.tables.push_back(table);
  return placement;
}

// Bags of at most 2 ids: the fold adds exact zeros and a + b = b + a, so no bit changes.
TEST(DistUnits, RowShardsOfTwoIdBagsEqualTheWholeTableBitForBit) {
  for (const int hots : {1, 2}) {
    const unsigned seed = 11u + static_cast<unsigned>(hots);
    const Pooled pooled = pool_both_ways(one_table_spec(hots), four_row_shards(), seed);
    for (std::size_t i = 0; i < pooled.whole.size(); ++i) {
      ASSERT_EQ(pooled.sharded[i], pooled.whole[i]) << "seed " << seed << ", " << hots << " ids, element " << i;
    }
  }
}

// Longer bags: the partial sums regroup each bag's L terms. Both results are floating-point sums
// of the same L terms, each within gamma(L-1) * sum|w| of the exact sum (Higham, Thm 4.4; gamma(n)
// = n u / (1 - n u), u the fp32 unit roundoff), so they differ by at most 2 gamma(L-1) sum|w|.
TEST(DistUnits, RowShardsOfLongBagsStayWithinTheSummationBound) {
  const int hots = 8;
  const unsigned seed = 29;
  const Pooled pooled = pool_both_ways(one_table_spec(hots), four_row_shards(), seed);
  const double u = unit_roundoff(DType::kF32);
  const double gamma = (hots - 1) * u / (1 - (hots - 1) * u);
  int differing = 0;
  for (std::int64_t b = 0; b < kBatch; ++b) {
    for (int j = 0; j < kDim; ++j) {
      double magnitude = 0;
      for (int p = 0; p < hots; ++p) {
        const auto row = pooled.batch.indices[static_cast<std::size_t>(b * hots + p)];
        magnitude += std::fabs(pooled.weights[static_cast<std::size_t>(row * kDim + j)]);
      }
      const auto i = static_cast<std::size_t>(b * kDim + j);
      EXPECT_LE(std::fabs(static_cast<double>(pooled.sharded[i]) - pooled.whole[i]), 2 * gamma * magnitude)
          << "seed " << seed << ", sample " << b << ", column " << j;
      differing += pooled.sharded[i] != pooled.whole[i] ? 1 : 0;
    }
  }
  // The regrouping is real: with 8 ids over 4 shards some sums round differently.
  EXPECT_GT(differing, 0) << "seed " << seed;
}

// Column shards pool the same ids in the same order, column by column: the same bits.
TEST(DistUnits, ColumnShardsEqualTheWholeTableBitForBit) {
  TablePlacement placement;
  placement.tables.push_back({plan::ShardingType::kColumnWise, {{0, 0, kRows, 0, 4}, {0, 0, kRows, 4, 12},
                                                                {0, 0, kRows, 12, 16}}});
  const Pooled pooled = pool_both_ways(one_table_spec(5), placement, 41);
  for (std::size_t i = 0; i < pooled.whole.size(); ++i) ASSERT_EQ(pooled.sharded[i], pooled.whole[i]) << i;
}

}  // namespace
}  // namespace parity::train::detail
