// The lane-rows forward (ForwardKernel::kLaneRows: a lane owns whole rows of up to 128 bytes, 4 bags
// per lane up to 32-byte rows, 2 up to 64, 1 up to 128) forced, against the fp64 reference: fp32
// D 4-32 and 16-bit D 8-64 on 16-byte boundaries (each size class and its edges), mixed dims in one
// launch (D=16 beside D=8 and D=64: lanes of one warp sizing their loads apart), bag lengths 0 (all
// empty), 1 (one-hot), 2 and 7 with empty bags, every pooled mode (sum, mean, weighted sum), both
// index types, two output dtypes (expect_forward_case_matches); a batch over several grid strides
// with a partial last tile; and the refusals with their reasons.
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

const egpu::ForwardOptions kLaneRows{egpu::ForwardKernel::kLaneRows};

TEST(GpuTbeForwardLaneRows, EveryWidthLengthPoolingAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(591);
  SCOPED_TRACE(testing::seed_trace(seed));
  // A 7-row second table: most bags share its few rows (repeats in flight together).
  const std::vector<testing::ForwardLayouts> cases = {
      {DType::kF32,
       {{{300, 4}, {7, 4}}, {{300, 8}, {7, 8}}, {{300, 12}, {7, 12}}, {{300, 16}, {7, 16}}, {{300, 32}, {7, 32}},
        {{300, 16}, {90, 4}, {300, 32}}}},
      {DType::kBF16, {{{300, 8}, {7, 8}}, {{300, 16}, {7, 16}}, {{300, 32}, {7, 32}}, {{300, 64}, {7, 64}}}},
      {DType::kF16,
       {{{300, 16}, {7, 16}}, {{300, 24}, {7, 24}}, {{300, 48}, {7, 48}}, {{300, 16}, {90, 8}, {300, 64}}}},
  };
  testing::expect_forward_layouts_match(cases, seed, kLaneRows, "lane rows");
}

// Test set 3's 00 in small: one-hot D=16 fp16 features, int32, Zipf 0.76, over enough bags that
// every warp's grid-stride loop turns more than once (B=40001: a partial last tile).
TEST(GpuTbeForwardLaneRows, OneHotManyBagsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(592);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{3000, 16}, {1400, 16}, {2000, 16}, {900, 16}};
  SyntheticBatchOptions options;
  options.batch_size = 40001;
  options.pooling_factor = 1;
  options.zipf_alpha = 0.76;
  options.seed = seed;
  auto probe = testing::make_problem(tables, 0, 0);
  const auto batch = embedding::make_synthetic_batch(probe.layout, options);
  const auto problem = testing::make_problem(tables, options.batch_size,
                                             static_cast<std::int64_t>(batch.indices.size()), DType::kI32,
                                             DType::kF16, DType::kF16, PoolingMode::kSum);
  testing::expect_forward_matches(problem, batch, seed, kLaneRows);
}

// Rows past 128 bytes (the narrow-rows rule), 16-bit rows off 16-byte boundaries and pooling none
// refuse, naming what does not fit.
TEST(GpuTbeForwardLaneRows, RefusesWithTheReason) {
  PARITY_REQUIRE_GPU();
  const Status too_wide = testing::forced_forward_status(testing::make_problem({{10, 36}}, 2, 2), kLaneRows);
  EXPECT_EQ(too_wide.code(), StatusCode::kUnsupported);
  EXPECT_NE(too_wide.message().find("144 bytes"), std::string::npos) << too_wide.message();
  const Status off_boundary = testing::forced_forward_status(
      testing::make_problem({{10, 12}}, 2, 2, DType::kI64, DType::kBF16), kLaneRows);
  EXPECT_EQ(off_boundary.code(), StatusCode::kUnsupported);
  EXPECT_NE(off_boundary.message().find("16-byte boundaries"), std::string::npos) << off_boundary.message();
  const Status unpooled = testing::forced_forward_status(
      testing::make_problem({{10, 16}}, 2, 2, DType::kI64, DType::kF32, DType::kF32, PoolingMode::kNone), kLaneRows);
  EXPECT_EQ(unpooled.code(), StatusCode::kUnsupported);
  EXPECT_NE(unpooled.message().find("pooling=none"), std::string::npos) << unpooled.message();
}

}  // namespace
}  // namespace parity
