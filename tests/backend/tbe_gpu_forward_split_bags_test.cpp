// The split-bags forward (ForwardKernel::kNarrowRowsSplitBags: a team of groups shares one bag's
// positions, the parts' sums combined by shuffles) against the fp64 reference: forced on fp32 D 4-32
// and 16-bit D 8-64 (on and off 16-byte boundaries), mixed dims in one launch (D=16 beside D=4 and
// D=32), bag lengths 0, 1, 2 and 7 (shorter than one part's pass) and 45 and 150 (longer than
// parts x rows per pass: several passes per part), every pooled mode, both index types, two output
// dtypes; mean pooling with per-sample weights; kAuto and the op on a few-bag long-bag batch (test
// set 4's 00 in small, where the rule splits); the rule's parts on the development shapes; the
// refusals with their reasons.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/tbe_gpu_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::PoolingMode;
using embedding::TableSpec;
namespace egpu = embedding::gpu;

const egpu::ForwardOptions kSplitBags{egpu::ForwardKernel::kNarrowRowsSplitBags};

// D=12 bf16 and D=20 fp16 rows (24 and 40 bytes) are off 16-byte boundaries: 8-byte pieces.
const std::vector<testing::ForwardLayouts> kLayouts = {
    {DType::kF32, {{{300, 4}, {7, 4}}, {{300, 16}, {7, 16}}, {{300, 32}, {7, 32}}, {{300, 16}, {90, 4}, {300, 32}}}},
    {DType::kBF16, {{{300, 8}, {7, 8}}, {{300, 16}, {7, 16}}, {{300, 64}, {7, 64}}, {{300, 12}, {7, 12}}}},
    {DType::kF16, {{{300, 16}, {7, 16}}, {{300, 20}, {7, 20}}, {{300, 16}, {90, 8}, {300, 64}}}},
};

TEST(GpuTbeForwardSplitBags, ShortBagsEveryWidthPoolingAndDtypeMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(611);
  SCOPED_TRACE(testing::seed_trace(seed));
  testing::expect_forward_layouts_match(kLayouts, seed, kSplitBags, "split bags");
}

// Bags longer than one pass of every part (45, 150 rows; 8 rows per pass, up to 8 parts).
TEST(GpuTbeForwardSplitBags, LongBagsEveryWidthPoolingAndDtypeMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(612);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (const auto& c : kLayouts) {
    for (const auto& tables : c.layouts) {
      for (int pooling_factor : {45, 150}) {
        testing::expect_forward_case_matches(tables, c.weight_dtype, pooling_factor, ++case_number, seed, kSplitBags,
                                             "split bags");
      }
    }
  }
}

// Test set 4's 00 in small: D=16 fp32, int32, Zipf 0.56, 45 rows per bag, per-sample weights; few
// bags, so the rule splits and kAuto takes the split kernel. Mean pooling with weights, forced,
// kAuto and through the op.
TEST(GpuTbeForwardSplitBags, FewLongBagsWithWeightsAndMeanMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(613);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{5000, 16}, {700, 16}, {3000, 16}};
  embedding::SyntheticBatchOptions options;
  options.batch_size = 300;
  options.pooling_factor = 45;
  options.zipf_alpha = 0.56;
  options.weighted = true;
  options.seed = seed;
  const auto batch = embedding::make_synthetic_batch(testing::make_problem(tables, 0, 0).layout, options);
  const auto num_indices = static_cast<std::int64_t>(batch.indices.size());
  for (const PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean}) {
    SCOPED_TRACE(embedding::pooling_mode_name(pooling));
    const auto problem = testing::make_problem(tables, options.batch_size, num_indices, DType::kI32, DType::kF32,
                                               DType::kF32, pooling, true);
    EXPECT_GT(egpu::narrow_rows_split_parts(problem, 132), 1);
    testing::expect_forward_matches(problem, batch, seed, kSplitBags);
    testing::expect_forward_matches(problem, batch, seed);  // kAuto
    testing::expect_op_forward_matches(problem, batch, seed, ExecutionContext{DeviceKind::kGpu, nullptr, false});
  }
}

// The rule on the development shapes (H200: 132 SMs): test set 4's 00 (6144 bags of 45, D=16 fp32)
// splits 8 ways (a warp per bag), 08 (57344 bags of 76, D=16 fp16) 4 ways; C7-sized batches (2M
// bags) of long bags in two (kSplitLongBagMinMeanRows = 24 rows on average: 2M of 45 split, 2M
// of 23 and 114688 of 8 do not); bags of at most one pass (L=8) not at all, nor rows past 128 bytes.
TEST(GpuTbeForwardSplitBags, RuleSplitsFewOrLongBags) {
  const auto set4_00 = testing::make_problem({{65000, 16}, {900000, 16}, {7203000, 16}}, 2048, 3 * 2048 * 45,
                                             DType::kI32, DType::kF32, DType::kF32, PoolingMode::kSum, true);
  EXPECT_EQ(egpu::narrow_rows_split_parts(set4_00, 132), 8);
  const std::vector<TableSpec> seven_fp16(7, TableSpec{100000, 16});
  const auto set4_08 = testing::make_problem(seven_fp16, 8192, 7 * 8192 * 76, DType::kI32, DType::kF16);
  EXPECT_EQ(egpu::narrow_rows_split_parts(set4_08, 132), 4);
  const std::vector<TableSpec> many(32, TableSpec{100000, 16});
  EXPECT_EQ(egpu::narrow_rows_split_parts(testing::make_problem(many, 65536, 32LL * 65536 * 45), 132), 2);
  EXPECT_EQ(egpu::narrow_rows_split_parts(testing::make_problem(many, 65536, 32LL * 65536 * 23), 132), 1);
  const std::vector<TableSpec> seven_bf16_d52(7, TableSpec{100000, 52});  // spent set 14's 02, shorter bags
  EXPECT_EQ(egpu::narrow_rows_split_parts(
                testing::make_problem(seven_bf16_d52, 16384, 7 * 16384 * 8, DType::kI32, DType::kBF16), 132),
            1);
  EXPECT_EQ(egpu::narrow_rows_split_parts(
                testing::make_problem(seven_bf16_d52, 16384, 7 * 16384 * 55, DType::kI32, DType::kBF16), 132),
            2);
  EXPECT_EQ(egpu::narrow_rows_split_parts(testing::make_problem({{1000, 16}}, 2048, 2048 * 8), 132), 1);
  EXPECT_EQ(egpu::narrow_rows_split_parts(testing::make_problem({{1000, 64}}, 2048, 2048 * 45), 132), 1);
}

// Rows past 128 bytes and pooling none refuse, naming what does not fit.
TEST(GpuTbeForwardSplitBags, RefusesWithTheReason) {
  PARITY_REQUIRE_GPU();
  testing::expect_forced_refusal(testing::make_problem({{10, 36}}, 2, 2), kSplitBags, "144 bytes");
  testing::expect_forced_refusal(
      testing::make_problem({{10, 16}}, 2, 2, DType::kI64, DType::kF32, DType::kF32, PoolingMode::kNone), kSplitBags,
      "pooling=none");
}

}  // namespace
}  // namespace parity
