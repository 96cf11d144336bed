// TBE forward round 5 (docs/embedding.md): the group-per-bag kernel's per-width-class launches on
// mixed-dim layouts against the fp64 reference and bit for bit against the one-launch kernel (same
// per-element summation order), and the selection rule's new branches (the warp tiles on rows of
// 129-512 bytes; their kernels against fp64: tbe_gpu_forward_candidates_test.cpp).
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

// Mixed-dim layouts of the kind the held-out sets draw: fp16 D 64/212/232/512 (212 is off 16-byte
// boundaries: its run reads 8-byte vecs, the others 16-byte pairs), fp32 48/64/512, bf16
// 32-180 with two features sharing a table (classes recur, so runs are not one per class), and a
// fitted width (D=96 fp32) beside a power-of-two one. One-hot, fixed 3 and varied U[0, 24] bags
// with Zipf 0.9, sum / mean / weighted, both index types. The runs (kGroupPerBag on a layout of
// several width classes) match the fp64 reference and the one-launch kernel bit for bit: each
// element is summed in position order in fp32 whatever the lane mapping.
TEST(GpuTbeForwardWidths, WidthRunsMatchReferenceAndOneLaunchBitForBit) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(552);
  SCOPED_TRACE(testing::seed_trace(seed));
  struct Layout {
    DType weight_dtype;
    std::vector<TableSpec> tables;
    std::vector<int> table_of_feature;
  };
  const std::vector<Layout> layouts = {
      {DType::kF16, {{570, 64}, {300, 212}, {90, 232}, {1000, 512}}, {}},
      {DType::kF32, {{60, 48}, {3000, 64}, {700, 512}}, {}},
      {DType::kBF16, {{610, 32}, {50, 64}, {570, 76}, {300, 128}, {200, 180}}, {0, 3, 1, 4, 2, 0, 3}},
      {DType::kF32, {{610, 96}, {50, 16}, {570, 256}}, {0, 1, 2, 0}}};
  int case_number = 0;
  for (const auto& layout : layouts) {
    for (int bag_shape = 0; bag_shape < 3; ++bag_shape) {
      ++case_number;
      const int mode = case_number % 3;
      const PoolingMode pooling = mode == 1 ? PoolingMode::kMean : PoolingMode::kSum;
      const bool weighted = mode == 2;
      auto layout_value = embedding::TbeLayout::create(layout.tables, layout.table_of_feature);
      ASSERT_TRUE(layout_value.is_ok()) << layout_value.status().to_string();
      SyntheticBatchOptions options;
      options.batch_size = 1000;
      options.pooling_factor = bag_shape == 0 ? 1 : bag_shape == 1 ? 3 : 12;
      options.vary_bag_sizes = bag_shape == 2;
      options.empty_bag_fraction = bag_shape == 2 ? 0.05 : 0.0;
      options.zipf_alpha = 0.9;
      options.weighted = weighted;
      options.seed = seed + static_cast<std::uint64_t>(case_number);
      const auto batch = embedding::make_synthetic_batch(*layout_value, options);
      embedding::TbeProblem problem{*layout_value};
      problem.batch_size = options.batch_size;
      problem.num_indices = static_cast<std::int64_t>(batch.indices.size());
      problem.index_dtype = case_number % 2 == 0 ? DType::kI32 : DType::kI64;
      problem.weight_dtype = layout.weight_dtype;
      problem.output_dtype = DType::kF32;
      problem.pooling = pooling;
      problem.has_per_sample_weights = weighted;
      SCOPED_TRACE(std::string(dtype_name(layout.weight_dtype)) + " layout " + std::to_string(case_number) +
                   " bags " + std::to_string(bag_shape) + " " + embedding::pooling_mode_name(pooling) +
                   (weighted ? " weighted" : ""));
      std::vector<double> weights_ref;
      const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, options.seed, &weights_ref);
      const auto runs = testing::gpu_forward(problem, weights, batch, egpu::ForwardOptions{egpu::ForwardKernel::kGroupPerBag});
      testing::expect_matches_reference(problem, batch, weights_ref, runs);
      const auto one_launch =
          testing::gpu_forward(problem, weights, batch, egpu::ForwardOptions{egpu::ForwardKernel::kGroupPerBagOneLaunch});
      EXPECT_TRUE(runs == one_launch) << "the width runs differ from the one-launch kernel";
      const auto automatic = testing::gpu_forward(problem, weights, batch);
      testing::expect_matches_reference(problem, batch, weights_ref, automatic);
    }
  }
}

// Needs no device. The short-bags rule now reaches 512-byte rows: one-hot D=44 fp32 (176 bytes,
// held-out set 1's worst forward) and D=128 fp32 go to the warp tiles; 513+ bytes do not, with the
// reason; bags averaging more than kShortBagMeanIndices stay off them.
TEST(GpuTbeForwardWidths, ShortBagRuleCoversRowsUpTo512Bytes) {
  const auto one_hot_44 = testing::make_problem({{100, 44}, {100, 44}}, 8, 16);
  EXPECT_TRUE(egpu::short_bags_forward_fits(one_hot_44).is_ok());
  // One-hot past 128 bytes: the wide one-hot tiles (wide_one_hot_forward_fits); 128 bytes and less
  // stay on the one-hot tiles.
  EXPECT_EQ(egpu::select_forward_kernel(one_hot_44), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  const auto one_hot_32 = testing::make_problem({{100, 32}, {100, 16}}, 8, 16);
  EXPECT_EQ(egpu::select_forward_kernel(one_hot_32), egpu::ForwardKernel::kWarpTileOneHot);
  // Short bags of at most 4 on average (3 here) take the light short-bag tiles (one pass).
  const auto short_128 = testing::make_problem({{100, 128}}, 8, 24);
  EXPECT_EQ(egpu::select_forward_kernel(short_128), egpu::ForwardKernel::kWarpTileShortBagsLight);
  // Past 4 (5 here), fp32 takes the wide tiles (fp32_short_bags_forward_fits), 16-bit stays on the
  // light tiles; exactly 4 per bag and one-hot stay off the rule, with the reason.
  const std::int64_t past_four = (egpu::kFp32ShortBagsMinMeanIndices + 1) * 8;
  const auto five_128 = testing::make_problem({{100, 128}}, 8, past_four);
  EXPECT_TRUE(egpu::fp32_short_bags_forward_fits(five_128).is_ok());
  EXPECT_EQ(egpu::select_forward_kernel(five_128), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  const auto five_narrow = testing::make_problem({{100, 16}, {100, 32}}, 8, 2 * past_four);  // 16 bags
  EXPECT_EQ(egpu::select_forward_kernel(five_narrow), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  const auto five_bf16 = testing::make_problem({{100, 128}}, 8, past_four, DType::kI64, DType::kBF16);
  const Status not_fp32 = egpu::fp32_short_bags_forward_fits(five_bf16);
  EXPECT_NE(not_fp32.message().find("not fp32"), std::string::npos) << not_fp32.message();
  EXPECT_EQ(egpu::select_forward_kernel(five_bf16), egpu::ForwardKernel::kWarpTileShortBagsLight);
  const Status one_dim = egpu::mixed_16_bit_short_bags_forward_fits(five_bf16);
  EXPECT_NE(one_dim.message().find("every feature has dim 128"), std::string::npos) << one_dim.message();
  // Mixed 16-bit widths past 128 bytes take the wide tiles past 4 per bag
  // (mixed_16_bit_short_bags_forward_fits); narrow mixes and bags of 4 stay on the light tiles.
  const auto mixed_fp16 = testing::make_problem({{100, 16}, {100, 64}, {100, 240}}, 8, 3 * past_four, DType::kI32,
                                                DType::kF16);
  EXPECT_TRUE(egpu::mixed_16_bit_short_bags_forward_fits(mixed_fp16).is_ok());
  EXPECT_EQ(egpu::select_forward_kernel(mixed_fp16), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  const auto mixed_narrow_fp16 =
      testing::make_problem({{100, 16}, {100, 64}}, 8, 2 * past_four, DType::kI32, DType::kF16);
  const Status narrow = egpu::mixed_16_bit_short_bags_forward_fits(mixed_narrow_fp16);
  EXPECT_NE(narrow.message().find("is narrow"), std::string::npos) << narrow.message();
  EXPECT_EQ(egpu::select_forward_kernel(mixed_narrow_fp16), egpu::ForwardKernel::kWarpTileShortBagsLight);
  const auto mixed_fp16_four = testing::make_problem({{100, 16}, {100, 64}, {100, 240}}, 8,
                                                     3 * egpu::kFp32ShortBagsMinMeanIndices * 8, DType::kI32, DType::kF16);
  EXPECT_NE(egpu::mixed_16_bit_short_bags_forward_fits(mixed_fp16_four).message().find("at most 4 per bag"),
            std::string::npos);
  EXPECT_EQ(egpu::select_forward_kernel(mixed_fp16_four), egpu::ForwardKernel::kWarpTileShortBagsLight);
  EXPECT_NE(egpu::mixed_16_bit_short_bags_forward_fits(five_128).message().find("fp32"), std::string::npos);
  const auto four_128 = testing::make_problem({{100, 128}}, 8, egpu::kFp32ShortBagsMinMeanIndices * 8);
  const Status at_four = egpu::fp32_short_bags_forward_fits(four_128);
  EXPECT_NE(at_four.message().find("at most 4 per bag"), std::string::npos) << at_four.message();
  EXPECT_EQ(egpu::select_forward_kernel(four_128), egpu::ForwardKernel::kWarpTileShortBagsLight);
  EXPECT_EQ(egpu::fp32_short_bags_forward_fits(one_hot_32).code(), StatusCode::kUnsupported);
  const Status unpooled = egpu::fp32_short_bags_forward_fits(testing::make_problem(
      {{100, 128}}, 8, past_four, DType::kI64, DType::kF32, DType::kF32, embedding::PoolingMode::kNone));
  EXPECT_EQ(unpooled.code(), StatusCode::kUnsupported);
  const auto long_128 = testing::make_problem({{100, 128}}, 8, 80);
  EXPECT_EQ(egpu::select_forward_kernel(long_128), egpu::ForwardKernel::kGroupPerBag);
  const auto wide = testing::make_problem({{100, 132}}, 8, 8);
  const Status refused = egpu::warp_tile_forward_fits(wide);
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.message().find("528 bytes"), std::string::npos) << refused.message();
  EXPECT_EQ(egpu::select_forward_kernel(wide), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  const auto wide_short_bags = testing::make_problem({{100, 132}}, 8, 16);
  EXPECT_NE(egpu::select_forward_kernel(wide_short_bags), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  EXPECT_NE(egpu::select_forward_kernel(wide_short_bags), egpu::ForwardKernel::kWarpTileOneHot);
  // 16-bit rows off 16-byte boundaries (D=36 fp16: 72 bytes) take the tiles too, as 8-byte pieces
  // (tbe_gpu_forward_tiles_off_boundary_test.cpp).
  const auto misaligned = testing::make_problem({{100, 36}}, 8, 8, DType::kI64, DType::kF16);
  EXPECT_TRUE(egpu::short_bags_forward_fits(misaligned).is_ok());
}

// Needs no device. Mixed dims past 128 bytes, enough bags and short ones: the wide one-hot tiles
// ahead of every other rule; each condition's edge, with the reason where it is refused.
TEST(GpuTbeForwardWidths, MixedWidthShortBagsTakeTheWideTiles) {
  const std::int64_t bags_per_feature = egpu::kMixedWideShortBagsMinBags / 2;  // 2 features: exactly the minimum
  const std::int64_t max_indices = egpu::kMixedWideShortBagsMeanIndices * 2 * bags_per_feature;
  const auto mixed = testing::make_problem({{100, 16}, {100, 256}}, bags_per_feature, max_indices);
  EXPECT_TRUE(egpu::mixed_wide_short_bags_forward_fits(mixed).is_ok());
  EXPECT_EQ(egpu::select_forward_kernel(mixed), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  // 5 per bag and rows of at most 512 bytes: 16-bit tables would otherwise take the light short-bag tiles.
  const auto mixed_short = testing::make_problem({{100, 16}, {100, 40}}, bags_per_feature, 5 * 2 * bags_per_feature);
  EXPECT_EQ(egpu::select_forward_kernel(mixed_short), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  auto expect_refused = [](const embedding::TbeProblem& problem, const std::string& reason) {
    const Status status = egpu::mixed_wide_short_bags_forward_fits(problem);
    EXPECT_EQ(status.code(), StatusCode::kUnsupported);
    EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();
    EXPECT_NE(egpu::select_forward_kernel(problem), egpu::ForwardKernel::kWarpTileOneHotWideRows) << reason;
  };
  expect_refused(testing::make_problem({{100, 16}, {100, 256}}, bags_per_feature, max_indices + 1), "above 16");
  expect_refused(testing::make_problem({{100, 16}, {100, 256}}, bags_per_feature - 1, 8 * bags_per_feature),
                 "needs >= 65536");
  expect_refused(testing::make_problem({{100, 256}, {200, 256}}, bags_per_feature, max_indices), "every feature");
  expect_refused(testing::make_problem({{100, 16}, {100, 32}}, bags_per_feature, max_indices), "narrow");
  expect_refused(testing::make_problem({{100, 16}, {100, 1024}}, bags_per_feature, max_indices), "2048");
}

// kAuto on mixed 16-bit widths in bags of 6 (mixed_16_bit_short_bags_forward_fits: the wide tiles),
// fp16 and bf16, weighted sum and mean, fp32 and 16-bit output, against the fp64 reference.
TEST(GpuTbeForwardWidths, Mixed16BitShortBagsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(931);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (const DType weights_dtype : {DType::kF16, DType::kBF16}) {
    for (const PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean}) {
      ++case_number;
      auto layout = embedding::TbeLayout::create({{700, 16}, {3000, 64}, {500, 240}});
      ASSERT_TRUE(layout.is_ok()) << layout.status().to_string();
      SyntheticBatchOptions options;
      options.batch_size = 900;
      options.pooling_factor = 6;
      options.zipf_alpha = 0.8;
      options.weighted = pooling == PoolingMode::kSum;
      options.seed = seed + static_cast<std::uint64_t>(case_number);
      const auto batch = embedding::make_synthetic_batch(*layout, options);
      embedding::TbeProblem problem{*layout};
      problem.batch_size = options.batch_size;
      problem.num_indices = static_cast<std::int64_t>(batch.indices.size());
      problem.index_dtype = DType::kI32;
      problem.weight_dtype = weights_dtype;
      problem.output_dtype = case_number % 2 == 0 ? weights_dtype : DType::kF32;
      problem.pooling = pooling;
      problem.has_per_sample_weights = options.weighted;
      SCOPED_TRACE(std::string(dtype_name(weights_dtype)) + " " + embedding::pooling_mode_name(pooling) + " out " +
                   std::string(dtype_name(problem.output_dtype)));
      ASSERT_EQ(egpu::select_forward_kernel(problem), egpu::ForwardKernel::kWarpTileOneHotWideRows);
      std::vector<double> weights_ref;
      const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, options.seed, &weights_ref);
      testing::expect_matches_reference(problem, batch, weights_ref, testing::gpu_forward(problem, weights, batch));
    }
  }
}

// Needs no device. One-hot 16-bit rows of 129-512 bytes read as 16-byte pieces with a 16-bit output
// take the one-hot tiles ahead of the wide ones; an fp32 output, rows off 16-byte boundaries, mixed
// dims, bags past one-hot and rows past 512 bytes stay off the rule, with the reason.
TEST(GpuTbeForwardWidths, OneHot16BitRowsTakeTheOneHotTiles) {
  auto one_hot = [](std::vector<TableSpec> tables, DType weights, DType output, std::int64_t per_bag = 1) {
    const auto batch = static_cast<std::int64_t>(64);
    return testing::make_problem(tables, batch, per_bag * batch * static_cast<std::int64_t>(tables.size()), DType::kI64,
                                 weights, output);
  };
  for (DType dtype : {DType::kF16, DType::kBF16}) {
    for (int dim : {72, 128, 192, 256}) {
      const auto problem = one_hot({{100, dim}, {100, dim}}, dtype, dtype);
      EXPECT_TRUE(egpu::one_hot_16_bit_tiles_forward_fits(problem).is_ok()) << "D=" << dim;
      EXPECT_EQ(egpu::select_forward_kernel(problem), egpu::ForwardKernel::kWarpTileOneHot) << "D=" << dim;
    }
  }
  auto expect_refused = [](const embedding::TbeProblem& problem, const std::string& reason) {
    const Status status = egpu::one_hot_16_bit_tiles_forward_fits(problem);
    EXPECT_EQ(status.code(), StatusCode::kUnsupported) << reason;
    EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();
  };
  const auto fp32_output = one_hot({{100, 128}, {100, 128}}, DType::kF16, DType::kF32);
  expect_refused(fp32_output, "output fp32");
  EXPECT_EQ(egpu::select_forward_kernel(fp32_output), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  const auto off_boundary = one_hot({{100, 164}, {100, 164}}, DType::kBF16, DType::kBF16);
  expect_refused(off_boundary, "off 16-byte boundaries");
  EXPECT_EQ(egpu::select_forward_kernel(off_boundary), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  expect_refused(one_hot({{100, 128}, {100, 256}}, DType::kF16, DType::kF16), "dims 128 and 256");
  expect_refused(one_hot({{100, 128}}, DType::kF16, DType::kF16, 2), "above one per bag");
  expect_refused(one_hot({{100, 264}}, DType::kF16, DType::kF16), "row 528 bytes");
  expect_refused(one_hot({{100, 64}}, DType::kF16, DType::kF16), "row 128 bytes");
}

// Needs no device. Many bags of known, bounded length over rows past 128 bytes that the fitted
// groups do not take: the wide tiles where the group per bag would run; each edge, with the reason.
TEST(GpuTbeForwardWidths, ManyBoundedBagsTakeTheWideTiles) {
  const std::int64_t batch = egpu::kManyBagsMinBags / 4;  // 4 features: exactly the minimum
  auto problem_of = [&](int dim, std::int64_t batch_size, std::int64_t hint, DType weight_dtype = DType::kF32) {
    const std::int64_t mean_bag_rows = hint >= 1 && hint < 20 ? 8 : 20;  // the mean within the bound
    auto problem = testing::make_problem({{100, dim}, {100, dim}, {100, dim}, {100, dim}}, batch_size,
                                         mean_bag_rows * 4 * batch_size, DType::kI32, weight_dtype);
    problem.max_bag_length_hint = hint;
    return problem;
  };
  const auto many = problem_of(128, batch, egpu::kManyBagsMaxBagLength);  // 512-byte rows, bags of 20
  EXPECT_EQ(egpu::select_forward_kernel(problem_of(128, batch, 0)), egpu::ForwardKernel::kGroupPerBag);
  EXPECT_TRUE(egpu::many_bags_forward_fits(many).is_ok());
  EXPECT_EQ(egpu::select_forward_kernel(many), egpu::ForwardKernel::kWarpTileOneHotWideRows);
  // 16-bit rows off 16-byte boundaries (D=68 fp16: 136 bytes) within half the reach.
  EXPECT_EQ(egpu::select_forward_kernel(problem_of(68, batch, 32, DType::kF16)),
            egpu::ForwardKernel::kWarpTileOneHotWideRows);
  auto expect_refused = [](const embedding::TbeProblem& problem, const std::string& reason) {
    const Status status = egpu::many_bags_forward_fits(problem);
    EXPECT_EQ(status.code(), StatusCode::kUnsupported) << reason;
    EXPECT_NE(status.message().find(reason), std::string::npos) << status.message();
    EXPECT_NE(egpu::select_forward_kernel(problem), egpu::ForwardKernel::kWarpTileOneHotWideRows) << reason;
  };
  expect_refused(problem_of(128, batch, 0), "max_bag_length_hint=0");
  expect_refused(problem_of(128, batch, egpu::kManyBagsMaxBagLength + 1), "max_bag_length_hint=41");
  expect_refused(problem_of(128, batch - 1, 20), "needs >= 131072");
  // Bags of at most 16 rows from 65536 bags; one row more needs the 131072.
  const std::int64_t short_batch = egpu::kManyShortBagsMinBags / 4;
  EXPECT_EQ(egpu::select_forward_kernel(problem_of(128, short_batch, egpu::kManyShortBagsMaxBagLength)),
            egpu::ForwardKernel::kWarpTileOneHotWideRows);
  expect_refused(problem_of(128, short_batch - 1, egpu::kManyShortBagsMaxBagLength), "needs >= 65536");
  expect_refused(problem_of(128, short_batch, egpu::kManyShortBagsMaxBagLength + 1), "needs >= 131072");
  expect_refused(problem_of(96, batch, 20), "fitted groups");  // 384 bytes: 3 x 8 units
  expect_refused(problem_of(32, batch, 20), "narrow");
  expect_refused(problem_of(1024, batch, 20), "2048");
  // A negative hint is bad input for the problem itself.
  const Status bad = problem_of(128, batch, -1).validate();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("max_bag_length_hint=-1"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace parity
