// GPU TBE forward kernels against the fp64 reference: group per bag (every pooling, dtype, index
// type, mixed dims, 16-bit pairs), narrow rows, fitted groups, short and empty bags, and the rules
// that choose among them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "unit/tbe_test_util.hpp"
#include "backend/tbe_gpu_test_util.hpp"

namespace parity {
namespace {

using embedding::PoolingMode;
using embedding::SyntheticBatch;
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
using embedding::TbeProblem;
using testing::upload_batch;
namespace egpu = embedding::gpu;

using testing::expect_forward_matches;
using testing::gpu_forward;

TEST(GpuTbeForward, EveryPoolingDtypeAndIndexTypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(401);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> mixed = {{50, 4}, {300, 12}, {70, 60}, {33, 132}, {9, 2048}, {1000, 128}};
  for (DType index_dtype : {DType::kI32, DType::kI64}) {
    for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean, PoolingMode::kNone}) {
        for (bool weighted : {false, true}) {
          const auto tables = pooling == PoolingMode::kNone ? std::vector<TableSpec>{{200, 60}, {90, 60}} : mixed;
          SyntheticBatchOptions options;
          options.batch_size = 37;
          options.pooling_factor = 6;
          options.vary_bag_sizes = true;
          options.empty_bag_fraction = 0.1;
          options.weighted = weighted;
          options.seed = seed;
          auto probe = testing::make_problem(tables, 0, 0);
          const auto batch = embedding::make_synthetic_batch(probe.layout, options);
          const DType out_dtype = weight_dtype == DType::kF32 ? DType::kF32 : weight_dtype;
          auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                               index_dtype, weight_dtype, out_dtype, pooling, weighted);
          SCOPED_TRACE(std::string(dtype_name(index_dtype)) + " " + std::string(dtype_name(weight_dtype)) + " " +
                       embedding::pooling_mode_name(pooling) + (weighted ? " weighted" : ""));
          expect_forward_matches(problem, batch, seed + 1);
        }
      }
    }
  }
}

// Mean bag length <= 4 with max_dim in (kWarpSize/2*4, kWarpSize*4] takes the short-bag launch
// (quarter-warp groups, four vecs per lane); dims 128, 100 and 68 cover full and partial groups.
TEST(GpuTbeForward, ShortBagsOneHotAndNearOneHotMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(409);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{4000, 128}, {700, 100}, {90, 68}};
  for (DType weight_dtype : {DType::kF32, DType::kF16}) {
    for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean, PoolingMode::kNone}) {
      for (bool vary : {false, true}) {
        SyntheticBatchOptions options;
        options.batch_size = 333;
        options.pooling_factor = vary ? 3 : 1;
        options.vary_bag_sizes = vary;
        options.empty_bag_fraction = vary ? 0.1 : 0.0;
        options.weighted = vary;
        options.seed = seed;
        // Unpooled output rows have one width: equal dims there.
        const auto used = pooling == PoolingMode::kNone ? std::vector<TableSpec>{{4000, 128}, {700, 128}} : tables;
        auto probe = testing::make_problem(used, 0, 0);
        const auto batch = embedding::make_synthetic_batch(probe.layout, options);
        auto problem = testing::make_problem(used, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                             DType::kI32, weight_dtype, DType::kF32, pooling, vary);
        SCOPED_TRACE(std::string(dtype_name(weight_dtype)) + " " + embedding::pooling_mode_name(pooling) +
                     (vary ? " varied weighted" : " one-hot"));
        expect_forward_matches(problem, batch, seed + 1);
      }
    }
  }
}

// 16-bit weights whose rows all start on 16-byte boundaries (dims and table offsets multiples of
// 8) take the paired launch (one 16-byte load per lane per row); every group width is covered:
// max_dim 24 (quarter warp), 64 and 128 (half warp, and quarter warp for short bags), 256 (full
// warp) and 2048 (many pairs per lane), with dims whose last lane holds a partial row.
TEST(GpuTbeForward, SixteenBitRowsOnSixteenByteBoundariesMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(412);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<std::vector<TableSpec>> layouts = {
      {{40, 8}, {300, 24}, {70, 16}},
      {{500, 64}, {90, 8}},
      {{900, 128}, {70, 40}, {30, 120}},
      {{400, 256}, {50, 136}},
      {{9, 2048}, {60, 8}, {33, 1032}}};
  for (const auto& tables : layouts) {
    for (DType weight_dtype : {DType::kF16, DType::kBF16}) {
      for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean}) {
        for (int pooling_factor : {1, 9}) {
          SyntheticBatchOptions options;
          options.batch_size = 53;
          options.pooling_factor = pooling_factor;
          options.vary_bag_sizes = pooling_factor > 1;
          options.empty_bag_fraction = 0.1;
          options.weighted = pooling_factor > 1;
          options.seed = seed;
          auto probe = testing::make_problem(tables, 0, 0);
          const auto batch = embedding::make_synthetic_batch(probe.layout, options);
          auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                               DType::kI64, weight_dtype, DType::kF32, pooling, options.weighted);
          SCOPED_TRACE("max_dim " + std::to_string(problem.layout.max_dim()) + " " +
                       std::string(dtype_name(weight_dtype)) + " " + embedding::pooling_mode_name(pooling) +
                       " L=" + std::to_string(pooling_factor));
          expect_forward_matches(problem, batch, seed + 1);
        }
      }
    }
  }
}

TEST(GpuTbeForward, EmptyBagsAllEmptyBatchAndZeroBatchLaunchCleanly) {
  PARITY_REQUIRE_GPU();
  const std::vector<TableSpec> tables = {{10, 8}, {10, 16}};
  // Every bag empty: N = 0, output all zeros (mean of an empty bag is 0, not NaN).
  SyntheticBatch empty;
  empty.offsets.assign(2 * 5 + 1, 0);
  for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean}) {
    auto problem = testing::make_problem(tables, 5, 0, DType::kI64, DType::kF32, DType::kF32, pooling);
    const auto weights = embedding::make_weights(problem.layout, DType::kF32, 3);
    const auto got = gpu_forward(problem, weights, empty);
    for (std::size_t i = 0; i < got.size() / 4; ++i) {
      ASSERT_EQ(embedding::load_as_double(got, DType::kF32, static_cast<std::int64_t>(i)), 0.0) << "element " << i;
    }
  }
  auto zero_batch = testing::make_problem(tables, 0, 0);
  auto layout = egpu::DeviceTbeLayout::create(zero_batch.layout);
  EXPECT_TRUE(egpu::tbe_forward(zero_batch, *layout, nullptr, {nullptr, nullptr, nullptr}, nullptr).is_ok());
}

TEST(GpuTbeForward, DuplicatesZipfAndLongBagsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(402);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{5000, 128}, {64, 32}, {3, 16}};  // 3 rows: duplicates in bags
  SyntheticBatchOptions options;
  options.batch_size = 300;
  options.pooling_factor = 40;
  options.zipf_alpha = 1.15;
  options.seed = seed;
  auto probe = testing::make_problem(tables, 0, 0);
  auto batch = embedding::make_synthetic_batch(probe.layout, options);
  auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()));
  expect_forward_matches(problem, batch, seed);
}

// ---- narrow rows (forward_narrow_kernel.cuh) ----

// The rule needs no device: row bytes of the widest table, pooling, F*B.
TEST(GpuTbeForwardNarrowRows, RuleAcceptsRowsUpTo128BytesPooledOnly) {
  const auto fits = [](std::vector<TableSpec> tables, DType weight_dtype, PoolingMode pooling) {
    return egpu::narrow_rows_forward_fits(
        testing::make_problem(std::move(tables), 8, 8, DType::kI64, weight_dtype, DType::kF32, pooling));
  };
  EXPECT_TRUE(fits({{10, 32}, {10, 4}}, DType::kF32, PoolingMode::kSum).is_ok());
  EXPECT_TRUE(fits({{10, 64}}, DType::kBF16, PoolingMode::kMean).is_ok());
  const Status wide = fits({{10, 64}, {10, 8}}, DType::kF32, PoolingMode::kSum);
  EXPECT_EQ(wide.code(), StatusCode::kUnsupported);
  EXPECT_NE(wide.message().find("256 bytes"), std::string::npos) << wide.message();
  EXPECT_EQ(fits({{10, 72}}, DType::kF16, PoolingMode::kSum).code(), StatusCode::kUnsupported);
  const Status unpooled = fits({{10, 16}}, DType::kF32, PoolingMode::kNone);
  EXPECT_EQ(unpooled.code(), StatusCode::kUnsupported);
  EXPECT_NE(unpooled.message().find("pooling=none"), std::string::npos) << unpooled.message();
}

// The op's selection: narrow rows where the rule holds, group per bag elsewhere; either by name.
TEST(GpuTbeForwardNarrowRows, OpSelectsByTheRuleAndHonoursAForcedName) {
  const ExecutionContext gpu_context{DeviceKind::kGpu, nullptr, false};
  const auto pick = [&](const TbeProblem& problem, std::string_view forced = {}) {
    auto choice = select_variant(embedding::tbe_forward_variants(), problem, gpu_context, forced);
    return choice.is_ok() ? std::string(choice->variant->name()) : choice.status().to_string();
  };
  const auto narrow = testing::make_problem({{10, 16}}, 8, 80);  // bags of 10: not short
  const auto wide = testing::make_problem({{10, 256}}, 8, 16);  // 1024-byte rows, 2 per bag: past the warp tiles
  EXPECT_EQ(pick(narrow), "tbe_forward_gpu_narrow_rows");
  EXPECT_EQ(pick(testing::make_problem({{10, 16}}, 8, 48)), "tbe_forward_gpu_warp_tile");  // 6 per bag
  EXPECT_EQ(pick(testing::make_problem({{10, 16}}, 8, 49)), "tbe_forward_gpu_narrow_rows");
  EXPECT_EQ(pick(wide), "tbe_forward_gpu");
  // One-hot 1024-byte rows: the wide one-hot tiles, run by the warp-tile variant.
  EXPECT_EQ(pick(testing::make_problem({{10, 256}}, 8, 8)), "tbe_forward_gpu_warp_tile");
  // One-hot 512-byte rows: the warp tiles' widest rows (kWarpTileMaxBytes).
  EXPECT_EQ(pick(testing::make_problem({{10, 128}}, 8, 8)), "tbe_forward_gpu_warp_tile");
  EXPECT_EQ(pick(narrow, "tbe_forward_gpu"), "tbe_forward_gpu");
  EXPECT_NE(pick(wide, "tbe_forward_gpu_narrow_rows").find("bytes"), std::string::npos);
}

// Every narrow width (D = 4..64: 1, 2, 4, 6 -> 8 and 8 lanes per row), bag length L in {0, 1, 2, 7}
// (the one-hot, two-row and four-row depths; L = 0 all bags empty) with 10% empty bags, sum, mean
// and weighted, each weight dtype with fp32 or bf16 output, both index types. Two tables, one of 7
// rows, so bags repeat rows. 16-bit D = 4, 12 take the 8-byte pieces (rows off 16-byte boundaries).
TEST(GpuTbeForwardNarrowRows, EveryWidthLengthPoolingAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(421);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (int dim : {4, 8, 12, 16, 24, 32, 64}) {
    for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      if (dim * static_cast<int>(dtype_size_bytes(weight_dtype)) > egpu::kNarrowRowMaxBytes) continue;
      for (int pooling_factor : {0, 1, 2, 7}) {
        for (int mode = 0; mode < 3; ++mode) {  // sum, mean, weighted sum
          ++case_number;
          const PoolingMode pooling = mode == 1 ? PoolingMode::kMean : PoolingMode::kSum;
          const bool weighted = mode == 2;
          const std::vector<TableSpec> tables = {{300, dim}, {7, dim}};
          SyntheticBatchOptions options;
          options.batch_size = 61;  // not a multiple of any group count: partial warps
          options.pooling_factor = pooling_factor;
          options.empty_bag_fraction = pooling_factor > 0 ? 0.1 : 0.0;
          options.weighted = weighted;
          options.seed = seed + static_cast<std::uint64_t>(case_number);
          auto probe = testing::make_problem(tables, 0, 0);
          const auto batch = embedding::make_synthetic_batch(probe.layout, options);
          const DType out_dtype = case_number % 2 == 0 ? DType::kBF16 : DType::kF32;
          const DType index_dtype = case_number % 3 == 0 ? DType::kI32 : DType::kI64;
          auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                               index_dtype, weight_dtype, out_dtype, pooling, weighted);
          SCOPED_TRACE("D=" + std::to_string(dim) + " " + std::string(dtype_name(weight_dtype)) + " L=" +
                       std::to_string(pooling_factor) + " " + embedding::pooling_mode_name(pooling) +
                       (weighted ? " weighted" : "") + " out " + std::string(dtype_name(out_dtype)));
          expect_forward_matches(problem, batch, options.seed, egpu::ForwardOptions{egpu::ForwardKernel::kNarrowRows});
        }
      }
    }
  }
}

// Mixed dims in one launch (lanes past a narrower table's pieces idle), bag sizes varied in
// [0, 2L] so bags take several passes at each depth, a batch large enough for several grid
// strides, and Zipf-skewed rows (duplicates within and across bags).
TEST(GpuTbeForwardNarrowRows, MixedDimsVariedBagsAndZipfMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(422);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<std::vector<TableSpec>> layouts = {{{500, 4}, {900, 24}, {40, 16}, {2000, 32}},
                                                       {{500, 8}, {900, 64}, {40, 16}}};
  for (const auto& tables : layouts) {
    for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      auto probe = testing::make_problem(tables, 0, 0, DType::kI64, weight_dtype);
      if (!egpu::narrow_rows_forward_fits(probe).is_ok()) continue;
      for (int pooling_factor : {1, 2, 7}) {
        SyntheticBatchOptions options;
        options.batch_size = 20000;
        options.pooling_factor = pooling_factor;
        options.vary_bag_sizes = true;
        options.zipf_alpha = 1.15;
        options.weighted = pooling_factor == 2;
        options.seed = seed + static_cast<std::uint64_t>(pooling_factor);
        const auto batch = embedding::make_synthetic_batch(probe.layout, options);
        auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                             DType::kI32, weight_dtype, DType::kF32,
                                             pooling_factor == 7 ? PoolingMode::kMean : PoolingMode::kSum,
                                             options.weighted);
        SCOPED_TRACE("max_dim " + std::to_string(problem.layout.max_dim()) + " " +
                     std::string(dtype_name(weight_dtype)) + " L~U[0," + std::to_string(2 * pooling_factor) + "]");
        expect_forward_matches(problem, batch, options.seed, egpu::ForwardOptions{egpu::ForwardKernel::kNarrowRows});
      }
    }
  }
}

TEST(GpuTbeForwardNarrowRows, ForcedOnAWideOrUnpooledProblemIsRefusedWithTheReason) {
  PARITY_REQUIRE_GPU();
  const Status status = testing::forced_forward_status(testing::make_problem({{10, 64}}, 2, 1),
                                                       egpu::ForwardOptions{egpu::ForwardKernel::kNarrowRows});
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("256 bytes"), std::string::npos) << status.message();
}

// ---- fitted groups (forward_launch.cuh: G lanes x V 16-byte units = the widest row) ----

// Every fit (G, V) in {4, 8, 16} x {3, 5}, in fp32 (units are vecs) and 16-bit (units are pairs
// of vecs), with a narrower table beside the widest (lanes past its row idle, one lane holding a
// partial unit), every pooling mode, per-sample weights, one-hot, varied and Zipf-skewed long
// bags, both index types and two output dtypes. Forced and through kAuto (which must take the
// same path: the test of the rule is that both agree with the reference).
TEST(GpuTbeForwardFittedGroups, EveryFitPoolingDtypeAndBagShapeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(431);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (int units : {12, 24, 48, 20, 40, 80}) {
    for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      const int element_bytes = static_cast<int>(dtype_size_bytes(weight_dtype));
      const int dim = units * 16 / element_bytes;
      // The narrow table: 16-bit dims stay multiples of 8 (rows on 16-byte boundaries).
      const int narrow_dim = element_bytes == 4 ? dim / 2 - 4 : dim / 2 - 8;
      for (int shape = 0; shape < 4; ++shape) {  // one-hot, L~U[0,18] weighted, mean, unpooled
        ++case_number;
        // Unpooled output needs one dim for every table (the op refuses mixed dims there).
        const int second_dim = shape == 3 ? dim : (narrow_dim > 0 ? narrow_dim : 8);
        const std::vector<TableSpec> tables = {{700, dim}, {40, second_dim}};
        SyntheticBatchOptions options;
        options.batch_size = 77;  // not a multiple of any group count: partial warps
        options.pooling_factor = shape == 0 ? 1 : 9;
        options.vary_bag_sizes = shape != 0;
        options.empty_bag_fraction = shape == 0 ? 0.0 : 0.1;
        options.zipf_alpha = shape == 2 ? 1.15 : 0.0;
        options.weighted = shape == 1;
        options.seed = seed + static_cast<std::uint64_t>(case_number);
        auto probe = testing::make_problem(tables, 0, 0);
        const auto batch = embedding::make_synthetic_batch(probe.layout, options);
        const PoolingMode pooling = shape == 2 ? PoolingMode::kMean : shape == 3 ? PoolingMode::kNone : PoolingMode::kSum;
        const DType out_dtype = case_number % 2 == 0 ? DType::kBF16 : DType::kF32;
        const DType index_dtype = case_number % 3 == 0 ? DType::kI32 : DType::kI64;
        auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                             index_dtype, weight_dtype, out_dtype, pooling, options.weighted);
        SCOPED_TRACE("D=" + std::to_string(dim) + " " + std::string(dtype_name(weight_dtype)) + " shape " +
                     std::to_string(shape) + " " + embedding::pooling_mode_name(pooling) + " out " +
                     std::string(dtype_name(out_dtype)) + " " + std::string(dtype_name(index_dtype)));
        expect_forward_matches(problem, batch, options.seed, egpu::ForwardOptions{egpu::ForwardKernel::kFittedGroups});
        expect_forward_matches(problem, batch, options.seed, egpu::ForwardOptions{egpu::ForwardKernel::kAuto});
      }
    }
  }
}

// A batch large enough for several grid strides (the grid is capped at 32 blocks per SM).
TEST(GpuTbeForwardFittedGroups, ManyBagsThroughSeveralGridStridesMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(432);
  SCOPED_TRACE(testing::seed_trace(seed));
  for (DType weight_dtype : {DType::kF32, DType::kF16}) {
    const int dim = weight_dtype == DType::kF32 ? 96 : 160;  // run 28's D5 and D3 rows
    const std::vector<TableSpec> tables = {{5000, dim}, {300, dim}};
    SyntheticBatchOptions options;
    options.batch_size = 90000;
    options.pooling_factor = 3;
    options.vary_bag_sizes = true;
    options.zipf_alpha = 1.05;
    options.weighted = weight_dtype == DType::kF16;
    options.seed = seed;
    auto probe = testing::make_problem(tables, 0, 0);
    const auto batch = embedding::make_synthetic_batch(probe.layout, options);
    auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                         DType::kI64, weight_dtype, DType::kF32, PoolingMode::kSum, options.weighted);
    SCOPED_TRACE("D=" + std::to_string(dim) + " " + std::string(dtype_name(weight_dtype)));
    expect_forward_matches(problem, batch, seed, egpu::ForwardOptions{egpu::ForwardKernel::kFittedGroups});
  }
}

// Rows of a unit count with no fit (D=64 fp32: 16 units) and 16-bit rows off 16-byte boundaries
// (D=100 fp16: 200 bytes) are refused when forced, with the reason; kAuto still runs them.
TEST(GpuTbeForwardFittedGroups, ForcedOnRowsWithoutAFitIsRefusedWithTheReason) {
  PARITY_REQUIRE_GPU();
  for (const auto& [dim, weight_dtype] : {std::pair{64, DType::kF32}, std::pair{100, DType::kF16}}) {
    const auto problem = testing::make_problem({{10, dim}}, 2, 1, DType::kI64, weight_dtype);
    const Status status =
        testing::forced_forward_status(problem, egpu::ForwardOptions{egpu::ForwardKernel::kFittedGroups});
    EXPECT_EQ(status.code(), StatusCode::kUnsupported) << dim;
    EXPECT_NE(status.message().find("max_dim=" + std::to_string(dim)), std::string::npos) << status.message();
    SyntheticBatch batch;  // the same one-index batch, through kAuto
    batch.indices = {3};
    batch.offsets = {0, 1, 1};
    expect_forward_matches(problem, batch, 5);
  }
}

}  // namespace
}  // namespace parity
