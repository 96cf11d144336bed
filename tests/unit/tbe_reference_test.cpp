// Properties of the fp64 TBE reference itself, on tiny inputs with exact answers.
#include <gtest/gtest.h>

#include <vector>

#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::OptimizerKind;
using embedding::PoolingMode;

TEST(TbeReference, OneIndexBagCopiesTheRow) {
  auto problem = testing::make_problem({{3, 4}, {2, 8}}, 1, 2);
  std::vector<double> weights(static_cast<std::size_t>(problem.layout.total_weight_elements()));
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<double>(i) + 0.5;
  const ref::TbeRefBatch batch{{2, 1}, {0, 1, 2}, {}};
  const auto out = ref::tbe_forward(problem, weights, batch);
  ASSERT_EQ(out.size(), 12u);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(out[j], weights[2 * 4 + j]);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(out[4 + j], weights[12 + 1 * 8 + j]);
}

TEST(TbeReference, SumPoolingIsLinearInTheWeights) {
  const auto seed = testing::test_seed(501);
  SCOPED_TRACE(testing::seed_trace(seed));
  auto problem = testing::make_problem({{20, 8}, {9, 12}}, 6, 0);
  embedding::SyntheticBatchOptions options;
  options.batch_size = 6;
  options.pooling_factor = 4;
  options.seed = seed;
  const auto batch = testing::to_ref_batch(embedding::make_synthetic_batch(problem.layout, options));
  problem.num_indices = static_cast<std::int64_t>(batch.indices.size());
  Rng rng(seed);
  std::vector<double> a(static_cast<std::size_t>(problem.layout.total_weight_elements())), b(a.size()), sum(a.size());
  // Small integers: every sum below is exact in fp64, so linearity holds bit for bit.
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = static_cast<double>(rng.uniform_int(-8, 8));
    b[i] = static_cast<double>(rng.uniform_int(-8, 8));
    sum[i] = 3 * a[i] + b[i];
  }
  const auto fa = ref::tbe_forward(problem, a, batch), fb = ref::tbe_forward(problem, b, batch);
  const auto fs = ref::tbe_forward(problem, sum, batch);
  for (std::size_t i = 0; i < fs.size(); ++i) EXPECT_EQ(fs[i], 3 * fa[i] + fb[i]) << i;
}

TEST(TbeReference, MeanOfAnEmptyBagIsZero) {
  auto problem = testing::make_problem({{3, 4}}, 2, 2, DType::kI64, DType::kF32, DType::kF32, PoolingMode::kMean);
  std::vector<double> weights(12, 1.0);
  const ref::TbeRefBatch batch{{0, 1}, {0, 0, 2}, {}};
  const auto out = ref::tbe_forward(problem, weights, batch);
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(out[j], 0.0);
    EXPECT_EQ(out[4 + j], 1.0);
  }
}

TEST(TbeReference, RepeatedRowsGetOneOptimizerUpdatePerStep) {
  // Row 1 appears three times: Adagrad must see the summed gradient once (m = (3g)^2), not three
  // updates with m growing g^2 at a time.
  auto problem = testing::make_problem({{2, 4}}, 1, 3);
  const ref::TbeRefBatch batch{{1, 1, 1}, {0, 3}, {}};
  ref::TbeRefTrainingState state{std::vector<double>(8, 1.0), std::vector<double>(8, 0.0), {}};
  embedding::OptimizerParams opt;
  opt.kind = OptimizerKind::kAdagrad;
  opt.learning_rate = 1.0f;
  opt.eps = 0.0f;
  ref::tbe_backward_fused(problem, opt, state, batch, std::vector<double>(4, 0.5));
  for (int j = 0; j < 4; ++j) {
    EXPECT_EQ(state.state1[4 + j], 2.25);  // (3 * 0.5)^2
    EXPECT_EQ(state.weights[4 + j], 0.0);  // 1 - 1.5 / 1.5
    EXPECT_EQ(state.weights[j], 1.0);      // row 0 untouched
    EXPECT_EQ(state.state1[j], 0.0);
  }
}

TEST(TbeReference, BoundsCheckFixRepairsAsSpecified) {
  auto problem = testing::make_problem({{5, 4}, {3, 4}}, 2, 6);
  std::vector<std::int64_t> indices{0, 7, 1, -1, 2, 3};
  std::vector<std::int64_t> offsets{0, 2, 1, 4, 9};  // non-monotone at 2, last != N
  const auto report = ref::tbe_bounds_check(problem, embedding::BoundsCheckMode::kFix, indices, offsets);
  EXPECT_EQ(report.bad_offsets, 2);
  EXPECT_TRUE(report.last_offset_fixed);
  EXPECT_EQ(offsets, (std::vector<std::int64_t>{0, 2, 2, 4, 6}));
  // Repaired bags: feature 0 (rows 5) covers [0, 2): 7 is bad; feature 1 (rows 3) covers [2, 6):
  // -1 and 3 are bad.
  EXPECT_EQ(report.bad_indices, 3);
  EXPECT_EQ(indices, (std::vector<std::int64_t>{0, 0, 1, 0, 2, 0}));
  EXPECT_EQ(report.first_bad_position, 1);
  EXPECT_EQ(report.first_bad_value, 7);
}

}  // namespace
}  // namespace parity
