// The OpenMP CPU path against the fp64 reference, and the API's validation messages.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "parity/embedding/tbe_cpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::BoundsCheckMode;
using embedding::OptimizerKind;
using embedding::PoolingMode;
using embedding::TableSpec;
using embedding::WeightDecayMode;

TEST(TbeCpu, ForwardMatchesReferenceForEveryPoolingAndDtype) {
  const auto seed = testing::test_seed(601);
  SCOPED_TRACE(testing::seed_trace(seed));
  for (DType wt : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean, PoolingMode::kNone}) {
      for (bool weighted : {false, true}) {
        const std::vector<TableSpec> tables = pooling == PoolingMode::kNone
                                                  ? std::vector<TableSpec>{{30, 12}, {40, 12}}
                                                  : std::vector<TableSpec>{{30, 4}, {40, 12}, {5, 132}, {3, 2048}};
        auto probe = testing::make_problem(tables, 0, 0);
        const auto batch = testing::varied_batch(probe, 19, seed, weighted);
        const DType index_dtype = weighted ? DType::kI32 : DType::kI64;
        auto problem = testing::make_problem(tables, 19, static_cast<std::int64_t>(batch.indices.size()), index_dtype,
                                             wt, wt, pooling, weighted);
        std::vector<double> weights_ref;
        const auto weights = embedding::make_weights(problem.layout, wt, seed, &weights_ref);
        const auto indices = embedding::pack_indices(batch.indices, index_dtype);
        const auto offsets = embedding::pack_indices(batch.offsets, index_dtype);
        std::vector<std::uint8_t> out(static_cast<std::size_t>(problem.output_rows() * problem.output_cols()) *
                                      dtype_size_bytes(wt));
        ASSERT_TRUE(embedding::cpu::tbe_forward(problem, weights.data(),
                                                {indices.data(), offsets.data(), batch.per_sample_weights.data()},
                                                out.data())
                        .is_ok());
        const auto ref_batch = testing::to_ref_batch(batch);
        const auto want = ref::tbe_forward(problem, weights_ref, ref_batch);
        const auto abs_want = testing::abs_forward(problem, weights_ref, ref_batch);
        const auto max_bag = testing::max_bag_length(batch.offsets);
        for (std::size_t i = 0; i < want.size(); ++i) {
          const double got = embedding::load_as_double(out, wt, static_cast<std::int64_t>(i));
          ASSERT_LE(std::abs(got - want[i]), testing::forward_tolerance(want[i], abs_want[i], max_bag, wt))
              << "element " << i << " dtype " << dtype_name(wt) << " pooling " << embedding::pooling_mode_name(pooling);
        }
      }
    }
  }
}

TEST(TbeCpu, FusedBackwardMatchesReferenceForEveryOptimizer) {
  const auto seed = testing::test_seed(602);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{30, 4}, {40, 12}, {5, 132}, {3, 64}};
  auto probe = testing::make_problem(tables, 0, 0);
  for (auto [kind, mode] : {std::pair{OptimizerKind::kSgd, WeightDecayMode::kNone},
                            std::pair{OptimizerKind::kAdagrad, WeightDecayMode::kNone},
                            std::pair{OptimizerKind::kRowwiseAdagrad, WeightDecayMode::kL2},
                            std::pair{OptimizerKind::kRowwiseAdagrad, WeightDecayMode::kDecoupled},
                            std::pair{OptimizerKind::kAdam, WeightDecayMode::kNone}}) {
    const auto batch = testing::varied_batch(probe, 17, seed, true);
    auto problem = testing::make_problem(tables, 17, static_cast<std::int64_t>(batch.indices.size()), DType::kI64,
                                         DType::kF32, DType::kF32, PoolingMode::kMean, true);
    const auto opt = testing::optimizer_for(kind, mode);
    std::vector<double> w0;
    auto weights = embedding::make_weights(problem.layout, DType::kF32, seed, &w0);
    std::vector<float> s1(static_cast<std::size_t>(embedding::optimizer_state1_elements(problem.layout, kind)), 0.f);
    std::vector<float> s2(static_cast<std::size_t>(embedding::optimizer_state2_elements(problem.layout, kind)), 0.f);
    const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed);
    const auto indices = embedding::pack_indices(batch.indices, DType::kI64);
    const auto offsets = embedding::pack_indices(batch.offsets, DType::kI64);
    const double gradient_error =
        testing::gradient_error_bound(problem, opt, testing::to_ref_batch(batch), grad);
    ref::TbeRefTrainingState state{w0, std::vector<double>(s1.size(), 0.0), std::vector<double>(s2.size(), 0.0)};
    constexpr int kSteps = 3;
    for (int step = 1; step <= kSteps; ++step) {
      auto o = opt;
      o.step = step;
      ASSERT_TRUE(embedding::cpu::tbe_backward_fused(problem, o, weights.data(), s1.data(), s2.data(),
                                                     {indices.data(), offsets.data(), batch.per_sample_weights.data()},
                                                     grad.data())
                      .is_ok());
      ref::tbe_backward_fused(problem, o, state, testing::to_ref_batch(batch), std::vector<double>(grad.begin(), grad.end()));
    }
    for (std::size_t i = 0; i < w0.size(); ++i) {
      const double got = embedding::load_as_double(weights, DType::kF32, static_cast<std::int64_t>(i));
      ASSERT_LE(std::abs(got - state.weights[i]),
                testing::update_tolerance(state.weights[i], w0[i], problem.layout.max_dim(), kSteps, DType::kF32,
                                          gradient_error))
          << embedding::optimizer_kind_name(kind) << " weight " << i;
    }
  }
}

TEST(TbeCpu, BoundsCheckMatchesReference) {
  auto problem = testing::make_problem({{5, 4}, {3, 4}}, 2, 6, DType::kI32);
  for (BoundsCheckMode mode : {BoundsCheckMode::kError, BoundsCheckMode::kFix}) {
    std::vector<std::int64_t> indices{0, 7, 1, -1, 2, 3}, offsets{0, 2, 1, 4, 9};
    auto ref_i = indices, ref_o = offsets;
    const auto want = ref::tbe_bounds_check(problem, mode, ref_i, ref_o);
    auto packed_i = embedding::pack_indices(indices, DType::kI32);
    auto packed_o = embedding::pack_indices(offsets, DType::kI32);
    auto got = embedding::cpu::tbe_bounds_check(problem, mode, packed_i.data(), packed_o.data());
    ASSERT_TRUE(got.is_ok());
    EXPECT_EQ(got->bad_indices, want.bad_indices);
    EXPECT_EQ(got->bad_offsets, want.bad_offsets);
    EXPECT_EQ(got->first_bad_position, want.first_bad_position);
    EXPECT_EQ(got->first_bad_value, want.first_bad_value);
    EXPECT_EQ(got->first_bad_bag, want.first_bad_bag);
    EXPECT_EQ(packed_i, embedding::pack_indices(ref_i, DType::kI32));
    EXPECT_EQ(packed_o, embedding::pack_indices(ref_o, DType::kI32));
    const Status status = embedding::bounds_check_status(*got, mode);
    EXPECT_EQ(status.is_ok(), mode == BoundsCheckMode::kFix);
    if (mode == BoundsCheckMode::kError) {
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(status.message().find("table 0 (feature 0), bag 0, position 1, value 7, expected [0, 5)"),
                std::string::npos)
          << status.message();
    }
  }
}

TEST(TbeApi, LayoutRejectsBadTablesWithMessages) {
  auto expect_error = [](std::vector<TableSpec> tables, std::vector<int> features, const std::string& needle) {
    auto layout = embedding::TbeLayout::create(std::move(tables), std::move(features));
    ASSERT_FALSE(layout.is_ok());
    EXPECT_EQ(layout.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(layout.status().message().find(needle), std::string::npos) << layout.status().message();
  };
  expect_error({}, {}, "tables is empty");
  expect_error({{10, 6}}, {}, "tables[0].dim=6; expected a multiple of 4");
  expect_error({{10, 4096}}, {}, "tables[0].dim=4096");
  expect_error({{0, 4}}, {}, "tables[0].num_rows=0");
  expect_error({{10, 4}}, {1}, "table_of_feature[0]=1");
}

TEST(TbeApi, LayoutDerivesOffsetsAndSharedTables) {
  auto layout = embedding::TbeLayout::create({{10, 4}, {3, 8}}, {1, 0, 1});
  ASSERT_TRUE(layout.is_ok());
  EXPECT_EQ(layout->weights_offset(1), 40);
  EXPECT_EQ(layout->total_weight_elements(), 64);
  EXPECT_EQ(layout->row_base(1), 10);
  EXPECT_EQ(layout->total_output_dim(), 20);
  EXPECT_EQ(layout->output_column_offset(2), 12);
  EXPECT_EQ(layout->max_dim(), 8);
  EXPECT_EQ(layout->row_bits(), 4);
}

TEST(TbeApi, ProblemAndOptimizerValidationNamesTheParameter) {
  auto problem = testing::make_problem({{10, 4}, {10, 8}}, 2, 3);
  struct Case {
    std::function<void(embedding::TbeProblem&)> mutate;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {[](auto& p) { p.batch_size = -1; }, "batch_size=-1"},
      {[](auto& p) { p.num_indices = -2; }, "num_indices=-2"},
      {[](auto& p) { p.index_dtype = DType::kF32; }, "index_dtype=fp32"},
      {[](auto& p) { p.weight_dtype = DType::kI32; }, "weight_dtype=int32"},
      {[](auto& p) { p.output_dtype = DType::kF64; }, "output_dtype=fp64"},
      {[](auto& p) { p.pooling = PoolingMode::kNone; }, "pooling=none needs one dim"},
      {[](auto& p) {
         p.index_dtype = DType::kI32;
         p.num_indices = 1LL << 32;
       },
       "does not fit int32"},
  };
  for (const auto& c : cases) {
    auto p = problem;
    c.mutate(p);
    const Status status = p.validate();
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find(c.needle), std::string::npos) << status.message();
  }
  embedding::OptimizerParams opt;
  opt.eps = 0;
  EXPECT_NE(opt.validate().message().find("eps=0"), std::string::npos);
  opt = {};
  opt.weight_decay_mode = WeightDecayMode::kL2;
  EXPECT_NE(opt.validate().message().find("only defined for rowwise_adagrad"), std::string::npos);
  opt = {};
  opt.kind = OptimizerKind::kAdam;
  opt.beta1 = 1.0f;
  EXPECT_NE(opt.validate().message().find("beta1=1"), std::string::npos);
  opt.beta1 = 0.9f;
  opt.step = 0;
  EXPECT_NE(opt.validate().message().find("step=0"), std::string::npos);
  opt = {};
  opt.learning_rate = -1;
  EXPECT_NE(opt.validate().message().find("learning_rate=-1"), std::string::npos);
  EXPECT_FALSE(embedding::parse_pooling_mode("max").is_ok());
  EXPECT_FALSE(embedding::parse_optimizer_kind("lamb").is_ok());
  EXPECT_EQ(*embedding::parse_bounds_check_mode("fix"), BoundsCheckMode::kFix);
}

TEST(TbeApi, ByteModelCountsRowsOutputAndIndices) {
  auto problem = testing::make_problem({{100, 128}}, 10, 200);
  const auto model = embedding::tbe_byte_model(problem, OptimizerKind::kRowwiseAdagrad, {200}, {150});
  // rows 200*128*4 + output 10*128*4 + indices 200*8 + offsets 11*8
  EXPECT_DOUBLE_EQ(model.forward_bytes, 200.0 * 512 + 10 * 512 + 1600 + 88);
  EXPECT_DOUBLE_EQ(model.forward_unique_rows_bytes, 150.0 * 512 + 10 * 512 + 1600 + 88);
  // idx 200*8 + grads 200*512 + 2*150*(512 + 4)
  EXPECT_DOUBLE_EQ(model.backward_bytes, 1600 + 200.0 * 512 + 2 * 150 * 516);
  EXPECT_DOUBLE_EQ(model.bounds_check_bytes, 1600 + 88);
}

// The GPU backward's chunk length (shared with the memory plan and the cost model): the short
// length keeps ~8192 chunks, never below 32 positions; its partials (8 max_dim bytes per chunk)
// stay within 32 B per index on large batches and within 32 MiB on small ones (set 4's 09:
// 196608 one-hot indices, D <= 512: 32 positions, 25 MiB of partials, where the per-index bound
// gave 128); kShortPerIndexPartials keeps 32 B per index at every size.
TEST(TbeApi, BackwardChunkLengthBoundsThePartials) {
  using embedding::BackwardChunkLength;
  using embedding::tbe_backward_chunk_positions;
  EXPECT_EQ(tbe_backward_chunk_positions(196608, 512, BackwardChunkLength::kLong), 512);
  EXPECT_EQ(tbe_backward_chunk_positions(196608, 512, BackwardChunkLength::kShortPerIndexPartials), 128);
  EXPECT_EQ(tbe_backward_chunk_positions(196608, 512, BackwardChunkLength::kShort), 32);
  EXPECT_EQ(tbe_backward_chunk_positions(0, 512, BackwardChunkLength::kShort), 32);
  EXPECT_EQ(tbe_backward_chunk_positions(0, 512, BackwardChunkLength::kShortPerIndexPartials), 128);
  // 600k indices of D=2048: 32 MiB of partials needs ceil(600000 x 16384 / 2^25) = 293 positions.
  EXPECT_EQ(tbe_backward_chunk_positions(600000, 2048, BackwardChunkLength::kShort), 293);
  // From 2^20 indices on the per-index bound is the larger budget: both short lengths agree.
  for (const std::int64_t n : {std::int64_t{1} << 20, std::int64_t{5} << 20}) {
    for (const int dim : {16, 128, 512, 2048}) {
      EXPECT_EQ(tbe_backward_chunk_positions(n, dim, BackwardChunkLength::kShort),
                tbe_backward_chunk_positions(n, dim, BackwardChunkLength::kShortPerIndexPartials))
          << n << " " << dim;
    }
  }
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{196608}, std::int64_t{900000}, std::int64_t{3} << 20}) {
    for (const int dim : {4, 16, 164, 512, 2048}) {
      const std::int64_t c = tbe_backward_chunk_positions(n, dim, BackwardChunkLength::kShort);
      const std::int64_t partial_bytes = (n + c - 1) / c * 8 * dim;
      EXPECT_GE(c, 32);
      EXPECT_LE(c, std::max<std::int64_t>(128, dim));
      EXPECT_LE(partial_bytes, std::max<std::int64_t>(32 * n, std::int64_t{32} << 20) + 8 * dim) << n << " " << dim;
    }
  }
}

}  // namespace
}  // namespace parity
