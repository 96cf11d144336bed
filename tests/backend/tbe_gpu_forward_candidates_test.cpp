// The narrow-row forward candidates (tbe_gpu.hpp ForwardKernel: narrow rows deep and light, warp
// tiles one-hot and short bags, each plain and prefetching, and light short-bag tiles) against the fp64 reference, forced one by one: every width up to
// 128 bytes (the warp tiles up to 512), bag lengths around each kernel's lead and tail depths, every pooled mode, both index
// types, two output dtypes, mixed dims, Zipf duplicates, and batches past one grid stride.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "backend/tbe_gpu_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::PoolingMode;
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
using testing::expect_forward_matches;
namespace egpu = embedding::gpu;

struct Candidate {
  egpu::ForwardKernel kernel;
  const char* name;
};
const std::vector<Candidate>& candidates() {
  static const std::vector<Candidate> list = {{egpu::ForwardKernel::kNarrowRowsDeep, "narrow_rows_deep"},
                                              {egpu::ForwardKernel::kNarrowRowsLight, "narrow_rows_light"},
                                              {egpu::ForwardKernel::kWarpTileOneHot, "warp_tile_one_hot"},
                                              {egpu::ForwardKernel::kWarpTileOneHotEightPasses, "warp_tile_one_hot_eight_passes"},
                                              {egpu::ForwardKernel::kWarpTileOneHotPrefetch, "warp_tile_one_hot_prefetch"},
                                              {egpu::ForwardKernel::kWarpTileShortBags, "warp_tile_short_bags"},
                                              {egpu::ForwardKernel::kWarpTileShortBagsPrefetch, "warp_tile_short_bags_prefetch"},
                                              {egpu::ForwardKernel::kWarpTileShortBagsLight, "warp_tile_short_bags_light"}};
  return list;
}

// Rows of 16-byte pieces: fp32 dims 4..32, 16-bit dims 8..64 (multiples of 8). Bag lengths 0 (all
// empty), 1 (one-hot: the tiles' fast path), 2, 4 (the short-bag tiles' lead depth), 7 (tails),
// with 10% empty bags; a batch of 61 leaves partial tiles and groups.
TEST(GpuTbeForwardCandidates, EveryWidthLengthPoolingAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(441);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (const auto& candidate : candidates()) {
    for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      std::vector<int> dims =
          weight_dtype == DType::kF32 ? std::vector<int>{4, 8, 12, 16, 24, 32} : std::vector<int>{8, 16, 24, 32, 64};
      // The warp tiles also take rows of 9-32 pieces (up to kWarpTileMaxBytes): fp32 D 36-128,
      // 16-bit D 72-256 (D=44 fp32 is held-out set 1's one-hot 176-byte row).
      if (std::string(candidate.name).rfind("warp_tile", 0) == 0) {
        const auto wide = weight_dtype == DType::kF32 ? std::vector<int>{36, 44, 100, 128} : std::vector<int>{72, 88, 200, 256};
        dims.insert(dims.end(), wide.begin(), wide.end());
      }
      for (int dim : dims) {
        for (int pooling_factor : {0, 1, 2, 4, 7}) {
          testing::expect_forward_case_matches({{300, dim}, {7, dim}}, weight_dtype, pooling_factor, ++case_number, seed,
                                               egpu::ForwardOptions{candidate.kernel}, candidate.name);
        }
      }
    }
  }
}

// Mixed dims in one launch (pieces past a narrower table's row idle), bag sizes varied in [0, 2L]
// so tiles mix one-hot, short and long bags, and Zipf-skewed rows.
TEST(GpuTbeForwardCandidates, MixedDimsVariedBagsAndZipfMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(442);
  SCOPED_TRACE(testing::seed_trace(seed));
  for (const auto& candidate : candidates()) {
    for (DType weight_dtype : {DType::kF32, DType::kBF16}) {
      const std::vector<TableSpec> tables = weight_dtype == DType::kF32
                                                ? std::vector<TableSpec>{{500, 4}, {900, 24}, {40, 16}, {2000, 32}}
                                                : std::vector<TableSpec>{{500, 8}, {900, 64}, {40, 16}};
      for (int pooling_factor : {1, 2, 5}) {
        SyntheticBatchOptions options;
        options.batch_size = 5000;
        options.pooling_factor = pooling_factor;
        options.vary_bag_sizes = true;
        options.zipf_alpha = 1.15;
        options.weighted = pooling_factor == 2;
        options.seed = seed + static_cast<std::uint64_t>(pooling_factor);
        auto probe = testing::make_problem(tables, 0, 0, DType::kI64, weight_dtype);
        const auto batch = embedding::make_synthetic_batch(probe.layout, options);
        auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                             DType::kI32, weight_dtype, DType::kF32,
                                             pooling_factor == 5 ? PoolingMode::kMean : PoolingMode::kSum,
                                             options.weighted);
        SCOPED_TRACE(std::string(candidate.name) + " " + std::string(dtype_name(weight_dtype)) + " L~U[0," +
                     std::to_string(2 * pooling_factor) + "]");
        expect_forward_matches(problem, batch, options.seed, egpu::ForwardOptions{candidate.kernel});
      }
    }
  }
}

// More bags than one grid holds, so every kernel's grid-stride loop turns: the grid is capped at
// 32 blocks per SM, a block holding 256 bags in the tiles and at most 512 in the narrow rows
// (rows of 2 pieces: 128 groups x 4 bags), i.e. 2.2M bags on 132 SMs; 3 x 2^20 bags are past that
// on up to 192 SMs.
TEST(GpuTbeForwardCandidates, BatchesPastOneGridStrideMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(443);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{1000, 4}, {50, 8}};
  SyntheticBatchOptions options;
  options.batch_size = 3 << 19;  // x 2 features
  options.pooling_factor = 1;
  options.empty_bag_fraction = 0.05;
  options.seed = seed;
  auto probe = testing::make_problem(tables, 0, 0);
  const auto batch = embedding::make_synthetic_batch(probe.layout, options);
  auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()));
  for (const auto& candidate : candidates()) {
    SCOPED_TRACE(candidate.name);
    expect_forward_matches(problem, batch, seed, egpu::ForwardOptions{candidate.kernel});
  }
}

// The one-hot tiles read position b's index beside bag b's offsets and keep it only where bag b
// starts at b and is not empty. Hand-built offsets put both outcomes in one warp: positional bags,
// then an empty bag and a two-index bag that shift every later bag off its position, then a bag
// that starts at its own position again, over a row pattern where a wrong guess reads another row.
TEST(GpuTbeForwardCandidates, OneHotPositionalGuessFallsBackWhereBagsShift) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(444);
  SCOPED_TRACE(testing::seed_trace(seed));
  constexpr int kBatch = 70;  // two warp tiles and a partial third
  embedding::SyntheticBatch batch;
  batch.offsets.push_back(0);
  for (int bag = 0; bag < kBatch; ++bag) {
    const int length = bag == 9 ? 0 : bag == 17 ? 2 : bag == 40 ? 3 : 1;  // 9: empty, 17: two, 40: three
    for (int u = 0; u < length; ++u) {
      const auto position = static_cast<std::int64_t>(batch.indices.size());
      batch.indices.push_back((position * 37 + 11) % 300);
      batch.per_sample_weights.push_back(0.5f + static_cast<float>(position % 7) * 0.25f);
    }
    batch.offsets.push_back(static_cast<std::int64_t>(batch.indices.size()));
  }
  const std::vector<std::tuple<egpu::ForwardKernel, const char*, int>> one_hot_tiles = {
      {egpu::ForwardKernel::kWarpTileOneHot, "warp_tile_one_hot", 16},
      {egpu::ForwardKernel::kWarpTileOneHotEightPasses, "warp_tile_one_hot_eight_passes", 16},
      {egpu::ForwardKernel::kWarpTileOneHotWideRows, "warp_tile_one_hot_wide_rows", 160}};
  for (const auto& [kernel, name, dim] : one_hot_tiles) {
    for (DType weight_dtype : {DType::kF32, DType::kBF16}) {
      for (bool weighted : {false, true}) {
        auto problem = testing::make_problem({{300, dim}}, kBatch, static_cast<std::int64_t>(batch.indices.size()),
                                             DType::kI32, weight_dtype, DType::kF32, PoolingMode::kSum, weighted);
        SCOPED_TRACE(std::string(name) + " " + std::string(dtype_name(weight_dtype)) + (weighted ? " weighted" : ""));
        embedding::SyntheticBatch case_batch = batch;  // the reference applies any weights it is given
        if (!weighted) case_batch.per_sample_weights.clear();
        expect_forward_matches(problem, case_batch, seed, egpu::ForwardOptions{kernel});
      }
    }
  }
}

// Forced where they do not apply: rows over 128 bytes for the narrow rows, over 512 for the warp
// tiles (each rule's reason) and 16-bit rows off 16-byte boundaries (D = 4 fp16: 8-byte rows),
// which the one-hot and light short-bag tiles read as 8-byte pieces (tested in
// tbe_gpu_forward_tiles_off_boundary_test.cpp).
TEST(GpuTbeForwardCandidates, ForcedOnAWideOrMisalignedProblemIsRefusedWithTheReason) {
  PARITY_REQUIRE_GPU();
  for (const auto& candidate : candidates()) {
    const bool is_warp_tile = std::string(candidate.name).rfind("warp_tile", 0) == 0;
    const bool reads_8_byte_pieces = candidate.kernel == egpu::ForwardKernel::kWarpTileOneHot ||
                                     candidate.kernel == egpu::ForwardKernel::kWarpTileOneHotEightPasses ||
                                     candidate.kernel == egpu::ForwardKernel::kWarpTileShortBagsLight ||
                                     candidate.kernel == egpu::ForwardKernel::kNarrowRowsDeep;
    const auto too_wide = is_warp_tile ? std::tuple{256, DType::kF32, "1024 bytes"} : std::tuple{64, DType::kF32, "256 bytes"};
    for (const auto& [dim, weight_dtype, reason] : {too_wide, std::tuple{4, DType::kF16, "16-byte boundaries"}}) {
      if (reads_8_byte_pieces && weight_dtype == DType::kF16) continue;
      const auto problem = testing::make_problem({{10, dim}}, 2, 1, DType::kI64, weight_dtype);
      const Status status = testing::forced_forward_status(problem, egpu::ForwardOptions{candidate.kernel});
      EXPECT_EQ(status.code(), StatusCode::kUnsupported) << candidate.name << " D=" << dim;
      EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();
    }
  }
}

}  // namespace
}  // namespace parity
