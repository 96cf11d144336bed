// The wide one-hot tiles (ForwardKernel::kWarpTileOneHotWideRows: four pieces per lane, two passes
// in flight, rows up to kWarpTileWideMaxBytes) forced, against the fp64 reference: fp32 D 4-512
// (one lane per bag up to a whole warp of four 16-byte pieces), 16-bit D 8-1024 on 16-byte
// boundaries and D 4-508 off them (8-byte pieces: three per lane up to D=384, as D=164, test set
// 2's 04; four past it, as D=508), mixed widths in one launch (test set 2's 05
// shape: D 32/16/488/256 fp32), bag lengths 0 (all empty), 1, 2, 7 and U[0, 40] (tiles walking their
// bags from position 0, two rows a step) with empty bags, every pooled mode, both index types, two
// output dtypes; a batch over several grid strides; and the refusals with their reasons.
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
namespace egpu = embedding::gpu;

const egpu::ForwardOptions kWideTiles{egpu::ForwardKernel::kWarpTileOneHotWideRows};

TEST(GpuTbeForwardWideTiles, EveryWidthLengthPoolingAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(581);
  SCOPED_TRACE(testing::seed_trace(seed));
  // A 7-row second table: most bags of a tile share its few rows (repeats inside one launch).
  const std::vector<testing::ForwardLayouts> cases = {
      {DType::kF32,
       {{{300, 4}, {7, 4}}, {{300, 36}, {7, 36}}, {{300, 128}, {7, 128}}, {{300, 164}, {7, 164}},
        {{300, 488}, {7, 488}}, {{300, 512}, {7, 16}}, {{300, 32}, {90, 16}, {300, 488}, {50, 256}}}},
      {DType::kBF16, {{{300, 8}, {7, 8}}, {{300, 328}, {7, 328}}, {{300, 1024}, {7, 64}}, {{300, 164}, {7, 164}}}},
      {DType::kF16, {{{300, 4}, {7, 4}}, {{300, 164}, {7, 164}}, {{300, 508}, {7, 36}}, {{7, 4}, {300, 64}}}},
  };
  testing::expect_forward_layouts_match(cases, seed, kWideTiles, "wide one-hot tiles");
}

// Test set 2's 05 in small: four one-hot features of D 32/16/488/256 fp32, int64, over enough bags
// that every warp's grid-stride loop turns more than once; forced, and through kAuto (which takes
// the wide tiles here: wide_one_hot_forward_fits).
TEST(GpuTbeForwardWideTiles, MixedWidthsManyBagsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(582);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{3000, 32}, {1400, 16}, {2000, 488}, {900, 256}};
  SyntheticBatchOptions options;
  options.batch_size = 40000;
  options.pooling_factor = 1;
  options.zipf_alpha = 1.1;
  options.seed = seed;
  const auto c = testing::make_synthetic_case(tables, options, DType::kI64);
  testing::expect_forward_matches(c.problem, c.batch, seed, kWideTiles);
  ASSERT_EQ(egpu::select_forward_kernel(c.problem), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  testing::expect_forward_matches(c.problem, c.batch, seed, egpu::ForwardOptions{});
}

// The many-bags rule's shape: 131072 bags of lengths U[0, 40] (tiles walking long tails two rows a
// step) over fp16 rows of 136 bytes (off 16-byte boundaries) and 400, through kAuto with the length
// bound given (many_bags_forward_fits) and forced.
TEST(GpuTbeForwardWideTiles, ManyLongBagsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(583);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{5000, 68}, {700, 68}, {3000, 200}, {40, 200}};
  SyntheticBatchOptions options;
  options.batch_size = egpu::kManyBagsMinBags / 4;
  options.pooling_factor = 20;
  options.vary_bag_sizes = true;  // U[0, 40]
  options.zipf_alpha = 0.9;
  options.seed = seed;
  auto c = testing::make_synthetic_case(tables, options, DType::kI32);
  c.problem.weight_dtype = DType::kF16;
  c.problem.max_bag_length_hint = 2 * options.pooling_factor;
  ASSERT_EQ(egpu::select_forward_kernel(c.problem), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  testing::expect_forward_matches(c.problem, c.batch, seed, egpu::ForwardOptions{});
  testing::expect_forward_matches(c.problem, c.batch, seed, kWideTiles);
}

// Rows past four pieces per lane (2 KB; 1 KB for 16-bit rows off 16-byte boundaries) and pooling
// none refuse, naming what does not fit.
TEST(GpuTbeForwardWideTiles, RefusesWithTheReason) {
  PARITY_REQUIRE_GPU();
  const Status too_wide = testing::forced_forward_status(testing::make_problem({{10, 516}}, 2, 2), kWideTiles);
  EXPECT_EQ(too_wide.code(), StatusCode::kUnsupported);
  EXPECT_NE(too_wide.message().find("2064 bytes"), std::string::npos) << too_wide.message();
  const Status off_boundary = testing::forced_forward_status(
      testing::make_problem({{10, 516}}, 2, 2, DType::kI64, DType::kBF16), kWideTiles);
  EXPECT_EQ(off_boundary.code(), StatusCode::kUnsupported);
  EXPECT_NE(off_boundary.message().find("129 pieces of 8 bytes"), std::string::npos) << off_boundary.message();
  const Status unpooled = testing::forced_forward_status(
      testing::make_problem({{10, 16}}, 2, 2, DType::kI64, DType::kF32, DType::kF32, PoolingMode::kNone), kWideTiles);
  EXPECT_EQ(unpooled.code(), StatusCode::kUnsupported);
  EXPECT_NE(unpooled.message().find("pooling=none"), std::string::npos) << unpooled.message();
}

}  // namespace
}  // namespace parity
