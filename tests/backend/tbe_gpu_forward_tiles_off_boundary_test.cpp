// The warp tiles kAuto selects (one-hot and light short-bag tiles) on 16-bit rows off 16-byte
// boundaries, read as two 8-byte pieces per lane (docs/embedding.md), against the fp64 reference:
// rows of 8-512 bytes (D=164 bf16 is TBE test set 2's 04, 328 bytes: 41 pieces, the first width
// past one piece per lane), a table offset that puts 16-byte-multiple rows off boundaries, bag
// lengths around the lead and tail depths, every pooled mode, both index types, two output
// dtypes; the deep narrow rows on 8-byte pieces; and the selection rule taking the tiles there.
#include <gtest/gtest.h>

#include <string>
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

// Needs no device: one-hot and short bags of 16-bit rows off 16-byte boundaries take the tiles
// (they used to fall to the group per bag past 128-byte rows: one row in flight per warp).
TEST(GpuTbeForwardTilesOffBoundary, ShortBagRuleTakesRowsOffBoundaries) {
  for (DType weight_dtype : {DType::kF16, DType::kBF16}) {
    for (int dim : {4, 36, 164, 252}) {
      const auto one_hot = testing::make_problem({{100, dim}, {100, dim}}, 8, 16, DType::kI64, weight_dtype);
      EXPECT_TRUE(egpu::short_bags_forward_fits(one_hot).is_ok()) << "D=" << dim;
      // One-hot rows past 128 bytes take the wide one-hot tiles (8-byte pieces up to 1024 bytes).
      const auto one_hot_kernel = dim * 2 > egpu::kNarrowRowMaxBytes ? egpu::ForwardKernel::kWarpTileOneHotWideRows
                                                                      : egpu::ForwardKernel::kWarpTileOneHot;
      EXPECT_EQ(egpu::select_forward_kernel(one_hot), one_hot_kernel) << "D=" << dim;
      const auto short_bags = testing::make_problem({{100, dim}}, 8, 24, DType::kI64, weight_dtype);
      EXPECT_EQ(egpu::select_forward_kernel(short_bags), egpu::ForwardKernel::kWarpTileShortBagsLight) << "D=" << dim;
    }
  }
  // 16-bit one-hot rows off 16-byte boundaries past 1024 bytes: the wide tiles refuse, with the reason.
  const Status wide_off = egpu::wide_one_hot_forward_fits(
      testing::make_problem({{100, 516}, {100, 516}}, 8, 16, DType::kI64, DType::kF16));
  EXPECT_EQ(wide_off.code(), StatusCode::kUnsupported);
  EXPECT_NE(wide_off.message().find("1032 bytes"), std::string::npos) << wide_off.message();
  EXPECT_TRUE(egpu::wide_one_hot_forward_fits(
                  testing::make_problem({{100, 1024}, {100, 512}}, 8, 16, DType::kI64, DType::kF16)).is_ok());
  // Past 512 bytes the tiles still refuse, with the row's bytes.
  const Status wide = egpu::short_bags_forward_fits(testing::make_problem({{100, 260}}, 8, 8, DType::kI64, DType::kBF16));
  EXPECT_EQ(wide.code(), StatusCode::kUnsupported);
  EXPECT_NE(wide.message().find("520 bytes"), std::string::npos) << wide.message();
}

// Each tile kernel forced and kAuto: D 4-252 16-bit off boundaries (4, 12, 36, 100: one piece per
// lane or fewer lanes than a warp; 164, 252: two pieces on most lanes), and D=64 rows put off
// boundaries by a 7-row D=4 table in front (its 28 elements shift every later row by 8 bytes).
// Bag lengths 0 (all empty), 1, 2, 4 (the light tiles' lead depth), 7 (tails) with 10% empty bags;
// a batch of 61 leaves partial tiles.
TEST(GpuTbeForwardTilesOffBoundary, EveryWidthLengthPoolingAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(561);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<std::vector<TableSpec>> layouts = {
      {{300, 4}, {7, 4}},     {{300, 12}, {7, 12}},  {{300, 36}, {7, 36}}, {{300, 100}, {7, 100}},
      {{300, 164}, {7, 164}}, {{300, 252}, {7, 36}}, {{7, 4}, {300, 64}}};
  int case_number = 0;
  for (egpu::ForwardKernel kernel :
       {egpu::ForwardKernel::kWarpTileOneHot, egpu::ForwardKernel::kWarpTileOneHotEightPasses,
        egpu::ForwardKernel::kWarpTileShortBagsLight, egpu::ForwardKernel::kAuto}) {
    for (DType weight_dtype : {DType::kF16, DType::kBF16}) {
      for (const auto& tables : layouts) {
        for (int pooling_factor : {0, 1, 2, 4, 7}) {
          testing::expect_forward_case_matches(tables, weight_dtype, pooling_factor, ++case_number, seed,
                                               egpu::ForwardOptions{kernel},
                                               "kernel " + std::to_string(static_cast<int>(kernel)));
        }
      }
    }
  }
}

// The deep narrow rows on 8-byte pieces (4 bags x 4 rows per group): 16-bit rows of 8-120 bytes
// off 16-byte boundaries (D=60 fp16 beside D=32 is test set 2's 02), a shifted D=64 table, bags
// around the depth (0, 1, 4, 7) and 29 (set 2's 02 mean length) with empty bags, every pooled mode.
TEST(GpuTbeForwardTilesOffBoundary, NarrowRowsDeepOnEightBytePiecesMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(563);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<std::vector<TableSpec>> layouts = {
      {{300, 4}, {7, 4}}, {{300, 12}, {7, 12}}, {{300, 60}, {90, 32}}, {{7, 4}, {300, 64}}};
  int case_number = 0;
  for (DType weight_dtype : {DType::kF16, DType::kBF16}) {
    for (const auto& tables : layouts) {
      for (int pooling_factor : {0, 1, 4, 7, 29}) {
        testing::expect_forward_case_matches(tables, weight_dtype, pooling_factor, ++case_number, seed,
                                             egpu::ForwardOptions{egpu::ForwardKernel::kNarrowRowsDeep},
                                             "narrow_rows_deep");
      }
    }
  }
}

// Test set 2's 04 in small (8 one-hot features of D=164 bf16, weighted, int64) with Zipf 1.1
// duplicates, over enough bags that every warp's grid-stride loop turns more than once.
TEST(GpuTbeForwardTilesOffBoundary, OneHotWeightedManyBagsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(562);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{3000, 164}, {143, 164}, {2800, 164}, {919, 164},
                                         {630, 164},  {4059, 164}, {2718, 164}, {1289, 164}};
  SyntheticBatchOptions options;
  options.batch_size = 40000;
  options.pooling_factor = 1;
  options.zipf_alpha = 1.1;
  options.weighted = true;
  options.seed = seed;
  auto probe = testing::make_problem(tables, 0, 0);
  const auto batch = embedding::make_synthetic_batch(probe.layout, options);
  auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                       DType::kI64, DType::kBF16, DType::kBF16, PoolingMode::kSum, true);
  ASSERT_EQ(egpu::select_forward_kernel(problem), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  expect_forward_matches(problem, batch, seed, egpu::ForwardOptions{});
  expect_forward_matches(problem, batch, seed, egpu::ForwardOptions{egpu::ForwardKernel::kWarpTileOneHot});
}

// The other tile and narrow-row candidates still refuse rows off 16-byte boundaries, with the reason.
TEST(GpuTbeForwardTilesOffBoundary, OtherCandidatesRefuseRowsOffBoundaries) {
  PARITY_REQUIRE_GPU();
  const auto problem = testing::make_problem({{10, 36}}, 2, 1, DType::kI64, DType::kF16);
  for (egpu::ForwardKernel kernel : {egpu::ForwardKernel::kWarpTileOneHotPrefetch, egpu::ForwardKernel::kWarpTileShortBags,
                                     egpu::ForwardKernel::kWarpTileShortBagsPrefetch}) {
    const Status status = testing::forced_forward_status(problem, egpu::ForwardOptions{kernel});
    EXPECT_EQ(status.code(), StatusCode::kUnsupported) << static_cast<int>(kernel);
    EXPECT_NE(status.message().find("16-byte boundaries"), std::string::npos) << status.message();
  }
  for (egpu::ForwardKernel kernel : {egpu::ForwardKernel::kWarpTileOneHot, egpu::ForwardKernel::kWarpTileOneHotEightPasses,
                                     egpu::ForwardKernel::kWarpTileShortBagsLight, egpu::ForwardKernel::kNarrowRowsDeep,
                                     egpu::ForwardKernel::kWarpTileOneHotWideRows}) {
    EXPECT_TRUE(testing::forced_forward_status(problem, egpu::ForwardOptions{kernel}).is_ok()) << static_cast<int>(kernel);
  }
}

}  // namespace
}  // namespace parity
