// Padded row strides (TableSpec::row_stride, aligned_row_stride): the rule's choices, the layout's
// offsets and errors, and the CPU path against the fp64 reference on padded layouts, with the
// padding never read into an output nor written by an optimiser step.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parity/bench/tbe_bench.hpp"
#include "parity/embedding/tbe_cpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::OptimizerKind;
using embedding::PoolingMode;
using embedding::TableSpec;
using embedding::WeightDecayMode;

TEST(TbeRowStride, RulePadsWhereRowsTouchFewerFetches) {
  // 56-byte rows touch 1.75 64-byte fetches on average packed, 1 at a 64-byte stride.
  EXPECT_EQ(embedding::aligned_row_stride(28, DType::kBF16), 32);
  EXPECT_EQ(embedding::aligned_row_stride(60, DType::kBF16), 64);   // 120 -> 128 bytes
  EXPECT_EQ(embedding::aligned_row_stride(44, DType::kF16), 48);    // 88 -> 96 bytes
  EXPECT_EQ(embedding::aligned_row_stride(28, DType::kF32), 32);    // 112 -> 128 bytes
  EXPECT_EQ(embedding::aligned_row_stride(12, DType::kF32), 16);    // 48 -> 64 bytes
  // Packed already at the fewest fetches: every multiple of 64 bytes, and 136 or 272 bytes.
  for (int dim : {32, 64, 128, 256}) EXPECT_EQ(embedding::aligned_row_stride(dim, DType::kBF16), dim);
  EXPECT_EQ(embedding::aligned_row_stride(68, DType::kBF16), 68);
  EXPECT_EQ(embedding::aligned_row_stride(68, DType::kF32), 68);
  // The only saving would cost more than a third of the row: 40 -> 64 bytes; 16 bytes: no saving.
  EXPECT_EQ(embedding::aligned_row_stride(20, DType::kBF16), 20);
  EXPECT_EQ(embedding::aligned_row_stride(4, DType::kF32), 4);
  const auto tables = embedding::with_aligned_row_strides({{10, 28}, {10, 64}}, DType::kBF16);
  EXPECT_EQ(tables[0].row_stride, 32);
  EXPECT_EQ(tables[1].row_stride, 64);
}

TEST(TbeRowStride, LayoutAlignsPaddedTablesAndNamesBadStrides) {
  auto layout = embedding::TbeLayout::create({{3, 4}, {10, 28, 32}, {5, 8}});
  ASSERT_TRUE(layout.is_ok()) << layout.status().to_string();
  EXPECT_FALSE(layout->is_packed());
  EXPECT_EQ(layout->weights_offset(1), 32);  // 12 elements rounded up to 32: 64-byte rows
  EXPECT_EQ(layout->row_stride(1), 32);
  EXPECT_EQ(layout->row_stride(2), 8);
  EXPECT_EQ(layout->weights_offset(2), 32 + 10 * 32);
  EXPECT_EQ(layout->total_weight_elements(), 32 + 320 + 40);
  EXPECT_EQ(layout->total_output_dim(), 4 + 28 + 8);  // outputs never see the padding
  EXPECT_DOUBLE_EQ(layout->padding_fraction(), 392.0 / 332.0 - 1.0);  // 12 + 280 + 40 packed
  auto packed = embedding::TbeLayout::create({{3, 4}, {10, 28, 28}});
  ASSERT_TRUE(packed.is_ok());
  EXPECT_TRUE(packed->is_packed());
  EXPECT_EQ(packed->weights_offset(1), 12);
  for (const auto& [stride, needle] : {std::pair{24, "tables[0].row_stride=24"}, std::pair{30, "row_stride=30"},
                                       std::pair{4096, "row_stride=4096"}}) {
    auto bad = embedding::TbeLayout::create({{10, 28, stride}});
    ASSERT_FALSE(bad.is_ok()) << stride;
    EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(bad.status().message().find(needle), std::string::npos) << bad.status().message();
  }
}

// Padded tables between packed ones (their padding filled with make_weights' sentinel, 1024):
// the forward in every weights dtype and pooling, against the reference on the same layout.
TEST(TbeRowStride, CpuForwardOnPaddedRowsMatchesReference) {
  const auto seed = testing::test_seed(611);
  SCOPED_TRACE(testing::seed_trace(seed));
  for (DType wt : {DType::kF32, DType::kF16, DType::kBF16}) {
    const auto tables = embedding::with_aligned_row_strides({{30, 4}, {40, 28}, {7, 60}, {5, 132}}, wt);
    auto probe = testing::make_problem(tables, 0, 0);
    ASSERT_FALSE(probe.layout.is_packed()) << dtype_name(wt);
    const auto batch = testing::varied_batch(probe, 19, seed, true);
    for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean}) {
      auto problem = testing::make_problem(tables, 19, static_cast<std::int64_t>(batch.indices.size()), DType::kI64,
                                           wt, DType::kF32, pooling, pooling == PoolingMode::kSum);
      std::vector<double> weights_ref;
      const auto weights = embedding::make_weights(problem.layout, wt, seed, &weights_ref);
      const auto indices = embedding::pack_indices(batch.indices, DType::kI64);
      const auto offsets = embedding::pack_indices(batch.offsets, DType::kI64);
      std::vector<std::uint8_t> out(static_cast<std::size_t>(problem.output_rows() * problem.output_cols()) * 4);
      const float* psw = problem.has_per_sample_weights ? batch.per_sample_weights.data() : nullptr;
      ASSERT_TRUE(embedding::cpu::tbe_forward(problem, weights.data(), {indices.data(), offsets.data(), psw}, out.data())
                      .is_ok());
      auto ref_batch = testing::to_ref_batch(batch);
      if (!problem.has_per_sample_weights) ref_batch.per_sample_weights.clear();
      const auto want = ref::tbe_forward(problem, weights_ref, ref_batch);
      const auto abs_want = testing::abs_forward(problem, weights_ref, ref_batch);
      const auto max_bag = testing::max_bag_length(batch.offsets);
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double got = embedding::load_as_double(out, DType::kF32, static_cast<std::int64_t>(i));
        ASSERT_LE(std::abs(got - want[i]), testing::forward_tolerance(want[i], abs_want[i], max_bag, DType::kF32))
            << "element " << i << " " << dtype_name(wt) << " " << embedding::pooling_mode_name(pooling);
        ASSERT_LT(std::abs(want[i]), 512.0) << "the reference read a padding element";
      }
    }
  }
}

// Three fused steps of every optimiser on a padded fp32 layout: weights against the reference,
// and every padding element still the sentinel (the element-wise states share the addressing).
TEST(TbeRowStride, CpuFusedBackwardOnPaddedRowsLeavesPaddingAlone) {
  const auto seed = testing::test_seed(612);
  SCOPED_TRACE(testing::seed_trace(seed));
  const auto tables = embedding::with_aligned_row_strides({{30, 4}, {40, 28}, {5, 12}, {3, 64}}, DType::kF32);
  auto probe = testing::make_problem(tables, 0, 0);
  for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdagrad, OptimizerKind::kRowwiseAdagrad,
                             OptimizerKind::kAdam}) {
    const auto batch = testing::varied_batch(probe, 17, seed, true);
    auto problem = testing::make_problem(tables, 17, static_cast<std::int64_t>(batch.indices.size()), DType::kI64,
                                         DType::kF32, DType::kF32, PoolingMode::kSum, true);
    const auto opt = testing::optimizer_for(kind, WeightDecayMode::kNone);
    std::vector<double> w0;
    auto weights = embedding::make_weights(problem.layout, DType::kF32, seed, &w0);
    std::vector<float> s1(static_cast<std::size_t>(embedding::optimizer_state1_elements(problem.layout, kind)), 0.f);
    std::vector<float> s2(static_cast<std::size_t>(embedding::optimizer_state2_elements(problem.layout, kind)), 0.f);
    const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed);
    const auto indices = embedding::pack_indices(batch.indices, DType::kI64);
    const auto offsets = embedding::pack_indices(batch.offsets, DType::kI64);
    const double gradient_error = testing::gradient_error_bound(problem, opt, testing::to_ref_batch(batch), grad);
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
    int padding_elements = 0;
    for (std::size_t i = 0; i < w0.size(); ++i) {
      const double got = embedding::load_as_double(weights, DType::kF32, static_cast<std::int64_t>(i));
      if (w0[i] == 1024.0) {
        ++padding_elements;
        ASSERT_EQ(got, 1024.0) << embedding::optimizer_kind_name(kind) << " wrote padding element " << i;
        continue;
      }
      ASSERT_LE(std::abs(got - state.weights[i]),
                testing::update_tolerance(state.weights[i], w0[i], problem.layout.max_dim(), kSteps, DType::kF32,
                                          gradient_error))
          << embedding::optimizer_kind_name(kind) << " weight " << i;
    }
    EXPECT_EQ(padding_elements, 40 * 4 + 5 * 4 + 8);  // D=28 -> 32, D=12 -> 16, the gap before table 1
  }
}

TEST(TbeRowStride, BenchPadsByDefaultAndParsesTheFlagStrictly) {
  bench::TbeBenchOverrides overrides;
  overrides.tables = "2";
  overrides.rows = "1000";
  overrides.dim = "28";
  overrides.batch = "8";
  overrides.weight_dtype = "bf16";
  auto spec = bench::tbe_bench_spec("", overrides, 1);
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  auto problem = bench::tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok()) << problem.status().to_string();
  EXPECT_EQ(problem->layout.row_stride(0), 32);
  overrides.row_stride = "packed";
  spec = bench::tbe_bench_spec("", overrides, 1);
  ASSERT_TRUE(spec.is_ok());
  problem = bench::tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok());
  EXPECT_TRUE(problem->layout.is_packed());
  overrides.row_stride = "aligned ";
  spec = bench::tbe_bench_spec("", overrides, 1);
  ASSERT_FALSE(spec.is_ok());
  EXPECT_NE(spec.status().message().find("--row-stride='aligned '"), std::string::npos) << spec.status().message();
}

}  // namespace
}  // namespace parity
