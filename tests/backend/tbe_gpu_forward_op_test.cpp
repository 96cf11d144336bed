// The TBE op's GPU forward (what `parity train` and the trainers call: embedding::tbe_forward with
// a GPU context) against the fp64 reference on the shapes the trainers use, and its variant
// selection against the one rule, gpu::select_forward_kernel (which kAuto follows too).
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
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
using embedding::TbeProblem;
namespace egpu = embedding::gpu;

const ExecutionContext kGpuContext{DeviceKind::kGpu, nullptr, false};

std::string op_choice(const TbeProblem& problem, std::string_view forced = {}) {
  auto choice = select_variant(embedding::tbe_forward_variants(), problem, kGpuContext, forced);
  return choice.is_ok() ? std::string(choice->variant->name()) : choice.status().to_string();
}

std::string variant_of(egpu::ForwardKernel kernel) {
  switch (kernel) {
    case egpu::ForwardKernel::kWarpTileOneHot:
    case egpu::ForwardKernel::kWarpTileOneHotWideRows:
    case egpu::ForwardKernel::kWarpTileShortBagsLight: return "tbe_forward_gpu_warp_tile";
    case egpu::ForwardKernel::kNarrowRows: return "tbe_forward_gpu_narrow_rows";
    case egpu::ForwardKernel::kFittedGroups: return "tbe_forward_gpu_fitted_groups";
    default: return "tbe_forward_gpu";
  }
}

// Needs no device: selection only looks at the problem. One-hot rows of 129-2048 bytes (wide
// one-hot tiles), rows of 16-128 bytes (narrow), 192-1280
// bytes of 3 or 5 x 4, 8, 16 units (fitted), others (group per bag), in every weight dtype, mixed
// dims (the widest decides), 16-bit tables off 16-byte boundaries, and pooling none.
TEST(GpuTbeForwardOp, SelectsWhatTheRuleSelectsOnEveryRowSize) {
  int fitted = 0, narrow = 0, group = 0, warp_tile = 0, wide_tile = 0, short_tile = 0;
  for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (int dim : {4, 12, 16, 32, 48, 64, 96, 100, 120, 128, 160, 192, 240, 256, 320, 384, 480, 640, 1024, 2048}) {
      for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean, PoolingMode::kNone}) {
        for (int second_dim : {dim, 4, 12}) {
          if (pooling == PoolingMode::kNone && second_dim != dim) continue;  // unpooled needs one dim
          // 16 bags: 8 indices (one-hot or fewer), 40 (short bags: 2.5 per bag) and 200 (12.5).
          for (std::int64_t num_indices : {8, 40, 200}) {
            const auto problem = testing::make_problem({{10, dim}, {10, second_dim}}, 8, num_indices, DType::kI64,
                                                       weight_dtype, DType::kF32, pooling);
            const auto rule = egpu::select_forward_kernel(problem);
            fitted += rule == egpu::ForwardKernel::kFittedGroups;
            narrow += rule == egpu::ForwardKernel::kNarrowRows;
            group += rule == egpu::ForwardKernel::kGroupPerBag;
            warp_tile += rule == egpu::ForwardKernel::kWarpTileOneHot;
            wide_tile += rule == egpu::ForwardKernel::kWarpTileOneHotWideRows;
            short_tile += rule == egpu::ForwardKernel::kWarpTileShortBagsLight;
            EXPECT_EQ(op_choice(problem), variant_of(rule))
                << "D=" << dim << "," << second_dim << " " << dtype_name(weight_dtype) << " "
                << embedding::pooling_mode_name(pooling) << " indices=" << num_indices;
          }
        }
      }
    }
  }
  // Mixed widths past 128 bytes in a batch past kMixedWideShortBagsMinBags bags, 5 indices per
  // bag: the mixed-width short-bags rule, through the warp-tile variant.
  for (DType weight_dtype : {DType::kF32, DType::kBF16}) {
    const std::int64_t batch = egpu::kMixedWideShortBagsMinBags / 2;
    const auto problem = testing::make_problem({{10, 16}, {10, 256}}, batch, 5 * 2 * batch, DType::kI64, weight_dtype);
    EXPECT_EQ(egpu::select_forward_kernel(problem), egpu::ForwardKernel::kWarpTileOneHotWideRows);
    EXPECT_EQ(op_choice(problem), "tbe_forward_gpu_warp_tile") << dtype_name(weight_dtype);
  }
  // Each rule's branch was taken (the test can tell a rule that never fires).
  EXPECT_GT(fitted, 0);
  EXPECT_GT(narrow, 0);
  EXPECT_GT(group, 0);
  EXPECT_GT(warp_tile, 0);
  EXPECT_GT(wide_tile, 0);
  EXPECT_GT(short_tile, 0);
  // The fitted rule's edges: D=96 fp32 (24 units = 8 x 3), D=160 fp16 (20 = 4 x 5) fit; D=128
  // fp32 (32 units) and D=100 fp16 (200 bytes, off 16-byte boundaries) do not, with the reason.
  EXPECT_TRUE(egpu::fitted_groups_forward_fits(testing::make_problem({{10, 96}}, 8, 8)).is_ok());
  EXPECT_TRUE(egpu::fitted_groups_forward_fits(
                  testing::make_problem({{10, 160}}, 8, 8, DType::kI64, DType::kF16)).is_ok());
  const Status no_fit = egpu::fitted_groups_forward_fits(testing::make_problem({{10, 128}}, 8, 8));
  EXPECT_EQ(no_fit.code(), StatusCode::kUnsupported);
  EXPECT_NE(no_fit.message().find("max_dim=128"), std::string::npos) << no_fit.message();
  EXPECT_EQ(egpu::fitted_groups_forward_fits(testing::make_problem({{10, 100}}, 8, 8, DType::kI64, DType::kF16)).code(),
            StatusCode::kUnsupported);
  // A forced name still wins where it can run.
  EXPECT_EQ(op_choice(testing::make_problem({{10, 96}}, 8, 8), "tbe_forward_gpu"), "tbe_forward_gpu");
  EXPECT_NE(op_choice(testing::make_problem({{10, 128}}, 8, 8), "tbe_forward_gpu_fitted_groups").find("max_dim=128"),
            std::string::npos);
}

// Through the op, as the trainers call it (int64 indices, no per-sample weights): narrow (D=16,
// the tiny preset), fitted (D=96 fp32, D=160 16-bit), power-of-two groups (D=128: dlrm-kaggle and
// dlrm-v2), each with a narrower second table; sum and mean; fp32 and bf16 output (the activation
// dtype); one-hot (dlrm-kaggle), fixed multi-hot (tiny, dlrm-v2) and varied bags with empties.
TEST(GpuTbeForwardOp, TrainerShapesMatchReferenceThroughTheSelectedVariant) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(451);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const bool is_16_bit = weight_dtype != DType::kF32;
    for (int dim : {16, is_16_bit ? 160 : 96, 128}) {
      for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean}) {
        for (int bag_shape = 0; bag_shape < 3; ++bag_shape) {  // one-hot, fixed 3, U[0, 12] with empties
          ++case_number;
          const std::vector<TableSpec> tables = {{3000, dim}, {70, dim / 2 - (dim / 2) % 8}};
          SyntheticBatchOptions options;
          options.batch_size = 500;
          options.pooling_factor = bag_shape == 0 ? 1 : bag_shape == 1 ? 3 : 6;
          options.vary_bag_sizes = bag_shape == 2;
          options.empty_bag_fraction = bag_shape == 2 ? 0.1 : 0.0;
          options.seed = seed + static_cast<std::uint64_t>(case_number);
          auto probe = testing::make_problem(tables, 0, 0);
          const auto batch = embedding::make_synthetic_batch(probe.layout, options);
          const DType out_dtype = case_number % 2 == 0 ? DType::kBF16 : DType::kF32;
          auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                               DType::kI64, weight_dtype, out_dtype, pooling);
          const std::string chosen = op_choice(problem);
          SCOPED_TRACE(chosen + " D=" + std::to_string(dim) + " " + std::string(dtype_name(weight_dtype)) + " " +
                       embedding::pooling_mode_name(pooling) + " bags " + std::to_string(bag_shape) + " out " +
                       std::string(dtype_name(out_dtype)));
          EXPECT_EQ(chosen, variant_of(egpu::select_forward_kernel(problem)));
          testing::expect_op_forward_matches(problem, batch, options.seed, kGpuContext);
        }
      }
    }
  }
}

}  // namespace
}  // namespace parity
