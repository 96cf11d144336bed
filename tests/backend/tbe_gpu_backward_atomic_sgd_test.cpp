// The atomic SGD backward (BackwardKernel::kAtomicSgd, backward_atomic_kernel.cuh) against the
// fp64 reference: every group width (D 4-2048 fp32; 4-512 fp16 / bf16), sum / mean / weighted,
// both index types, one-hot, fixed and varied bags with empties, Zipf 1.2 (hot rows taken
// hundreds of times), mixed dims; rows the batch does not touch stay bit-identical; the rule's
// refusals with reasons; and kAuto taking it only with deterministic=false, SGD and fp32 weights.
//
// Tolerance, derived, u the weights dtype's unit roundoff: a row taken n times gets n adds, each
// rounding once to within u x |partial sum| <= u (|w0| + lr sum|terms|); each added term
// lr x scale x psw x g is formed with at most 3 fp32 roundings and, for 16-bit rows, rounded once
// to the row's dtype (u lr |term|; the CAS fallback's fp32 sum before its 16-bit rounding adds
// u32 per add). So |got - ref| <= (n + 3) u (|w0| + lr G) with G the row element's sum of |terms|
// (bounded here by the largest such sum over the batch), plus the fp64 reference's own negligible
// error and one rounding of the stored result (u |w|).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backend/tbe_gpu_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "reference/tbe.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::OptimizerKind;
using embedding::PoolingMode;
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
namespace egpu = embedding::gpu;

egpu::BackwardOptions atomic_options() {
  egpu::BackwardOptions options;
  options.kernel = egpu::BackwardKernel::kAtomicSgd;
  options.deterministic = false;
  return options;
}

// One SGD step by the atomic kernel against the reference's, element by element.
// No workspace is passed: the sorted paths would refuse, so a pass also shows the atomic path ran.
void expect_atomic_sgd_matches(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch,
                               std::uint64_t seed, const egpu::BackwardOptions& options = atomic_options()) {
  embedding::OptimizerParams sgd;
  sgd.kind = OptimizerKind::kSgd;
  sgd.learning_rate = 0.05f;
  std::vector<double> weights0;
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed, &weights0);
  const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed + 7);
  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  auto d_weights = gpu::upload(weights);
  auto d_grad = gpu::upload(grad);
  auto inputs = testing::upload_batch(problem, batch);
  const Status status = egpu::tbe_backward_fused(problem, *layout, sgd, {d_weights->data(), nullptr, nullptr},
                                                 inputs.view(), d_grad->as<float>(), nullptr, 0, options);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  const auto got = *gpu::download<std::uint8_t>(*d_weights, weights.size());

  ref::TbeRefTrainingState state{weights0, {}, {}};
  const auto ref_batch = testing::to_ref_batch(batch);
  ref::tbe_backward_fused(problem, sgd, state, ref_batch, std::vector<double>(grad.begin(), grad.end()));
  // n: the most occurrences of one row; lr G: gradient_error_bound's g_max x lr (its (n + 2) u
  // factor divided out).
  std::map<std::int64_t, std::int64_t> occurrences;
  for (int f = 0; f < problem.layout.num_features(); ++f) {
    const auto begin = ref_batch.offsets[f * problem.batch_size], end = ref_batch.offsets[(f + 1) * problem.batch_size];
    for (auto p = begin; p < end; ++p) {
      ++occurrences[problem.layout.row_base(problem.layout.table_of_feature()[f]) + ref_batch.indices[p]];
    }
  }
  std::int64_t max_occurrences = 0;
  for (const auto& [row, n] : occurrences) max_occurrences = std::max(max_occurrences, n);
  const double u32 = unit_roundoff(DType::kF32);
  const double u = unit_roundoff(problem.weight_dtype);
  const double lr_g = testing::gradient_error_bound(problem, sgd, ref_batch, grad) /
                      (static_cast<double>(max_occurrences + 2) * u32);
  int failures = 0;
  for (std::size_t i = 0; i < state.weights.size() && failures < 5; ++i) {
    const double g = embedding::load_as_double(got, problem.weight_dtype, static_cast<std::int64_t>(i));
    if (state.weights[i] == weights0[i]) {
      if (g != weights0[i]) {  // untouched rows stay bit-identical
        ADD_FAILURE() << "untouched weight " << i << " changed: " << g << " vs " << weights0[i];
        ++failures;
      }
      continue;
    }
    const double tol = static_cast<double>(max_occurrences + 3) * u * (std::abs(weights0[i]) + lr_g) +
                       u * std::abs(state.weights[i]) + 1e-30;
    if (!(std::abs(g - state.weights[i]) <= tol)) {
      ADD_FAILURE() << "weight[" << i << "]=" << g << " want " << state.weights[i] << " tol " << tol;
      ++failures;
    }
  }
}

// Draws the batch, builds the problem (int32 indices for case numbers 0-1 mod 4, else int64) and
// checks one atomic step against the reference.
void expect_case_matches(const std::vector<TableSpec>& tables, const SyntheticBatchOptions& options, int case_number,
                         DType weight_dtype, PoolingMode pooling) {
  auto probe = testing::make_problem(tables, 0, 0);
  const auto batch = embedding::make_synthetic_batch(probe.layout, options);
  const DType index_dtype = case_number % 4 < 2 ? DType::kI32 : DType::kI64;
  auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                       index_dtype, weight_dtype, DType::kF32, pooling, options.weighted);
  SCOPED_TRACE(std::string(dtype_name(weight_dtype)) + " D=" + std::to_string(tables.front().dim) + " L=" +
               std::to_string(options.pooling_factor) + (options.vary_bag_sizes ? " varied " : " ") +
               embedding::pooling_mode_name(pooling) + (options.weighted ? " weighted" : "") + " zipf " +
               std::to_string(options.zipf_alpha));
  expect_atomic_sgd_matches(problem, batch, options.seed);
}

TEST(GpuTbeBackwardAtomicSgd, EveryWidthPoolingAndBagShapeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(571);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (int dim : {4, 8, 12, 64, 100, 160, 2048}) {
    for (int bag_shape = 0; bag_shape < 3; ++bag_shape) {  // one-hot, fixed 4, U[0, 14] with empties
      ++case_number;
      const int mode = case_number % 3;  // sum, mean, weighted sum
      const PoolingMode pooling = mode == 1 ? PoolingMode::kMean : PoolingMode::kSum;
      const bool weighted = mode == 2;
      const std::vector<TableSpec> tables = {{500, dim}, {9, dim}};
      SyntheticBatchOptions options;
      options.batch_size = 300;
      options.pooling_factor = bag_shape == 0 ? 1 : bag_shape == 1 ? 4 : 7;
      options.vary_bag_sizes = bag_shape == 2;
      options.empty_bag_fraction = bag_shape == 2 ? 0.1 : 0.0;
      options.zipf_alpha = case_number % 2 == 0 ? 1.2 : 0.0;
      options.weighted = weighted;
      options.seed = seed + static_cast<std::uint64_t>(case_number);
      expect_case_matches(tables, options, case_number, DType::kF32, pooling);
    }
  }
}

// Mixed dims (groups sized to the widest, lanes past a narrower row idle), many bags (the grid
// stride turns), hot rows.
TEST(GpuTbeBackwardAtomicSgd, MixedDimsManyBagsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(572);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{2000, 16}, {300, 160}, {50, 4}, {7000, 64}};
  SyntheticBatchOptions options;
  options.batch_size = 20000;
  options.pooling_factor = 3;
  options.vary_bag_sizes = true;
  options.zipf_alpha = 1.1;
  options.seed = seed;
  const auto c = testing::make_synthetic_case(tables, options, DType::kI64);
  expect_atomic_sgd_matches(c.problem, c.batch, seed);
}

// fp16 and bf16 rows (packed 8-byte adds): every group width up to 512, sum / mean / weighted,
// both index types, one-hot and varied bags with empties. Rows mostly cold (n small, so the
// (n + 3) u bound stays tight) with one Zipf 1.1 case for hot rows.
TEST(GpuTbeBackwardAtomicSgd, SixteenBitRowsMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(574);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (const DType weight_dtype : {DType::kF16, DType::kBF16}) {
    for (int dim : {4, 12, 64, 160, 460, 512}) {
      ++case_number;
      const int mode = case_number % 3;  // sum, mean, weighted sum
      const PoolingMode pooling = mode == 1 ? PoolingMode::kMean : PoolingMode::kSum;
      const bool weighted = mode == 2;
      const std::vector<TableSpec> tables = {{4000, dim}, {1500, 16}};
      SyntheticBatchOptions options;
      options.batch_size = 256;
      options.pooling_factor = case_number % 2 == 0 ? 1 : 6;
      options.vary_bag_sizes = case_number % 2 == 1;
      options.empty_bag_fraction = case_number % 2 == 1 ? 0.1 : 0.0;
      options.zipf_alpha = case_number % 4 == 3 ? 1.1 : 0.0;
      options.weighted = weighted;
      options.seed = seed + static_cast<std::uint64_t>(case_number);
      expect_case_matches(tables, options, case_number, weight_dtype, pooling);
    }
  }
}

egpu::BackwardOptions auto_options(bool deterministic) {
  egpu::BackwardOptions options;
  options.kernel = egpu::BackwardKernel::kAuto;
  options.deterministic = deterministic;
  return options;
}

// kAuto with deterministic=false runs the atomic kernel for SGD on fp32 (against fp64, with no
// workspace); with deterministic=true, for another optimiser or on 16-bit weights it stays on the
// sorted path, which refuses the missing workspace.
TEST(GpuTbeBackwardAtomicSgd, AutoTakesItOnlyWhenNotDeterministic) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(573);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{3000, 64}, {40, 160}};
  SyntheticBatchOptions options;
  options.batch_size = 4096;
  options.pooling_factor = 4;
  options.zipf_alpha = 1.1;
  options.seed = seed;
  const auto [problem, batch] = testing::make_synthetic_case(tables, options, DType::kI32);
  expect_atomic_sgd_matches(problem, batch, seed, auto_options(false));

  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed);
  auto d_weights = gpu::upload(weights);
  auto d_state1 = gpu::upload(std::vector<float>(weights.size() / 4, 0.0f));
  auto d_state2 = gpu::upload(std::vector<float>(weights.size() / 4, 0.0f));
  auto d_grad = gpu::upload(testing::random_grad(problem.output_rows() * problem.output_cols(), seed + 7));
  auto inputs = testing::upload_batch(problem, batch);
  embedding::OptimizerParams sgd;
  embedding::OptimizerParams adam;
  adam.kind = OptimizerKind::kAdam;
  const egpu::TrainingState state{d_weights->data(), d_state1->as<float>(), d_state2->as<float>()};
  const Status deterministic = egpu::tbe_backward_fused(problem, *layout, sgd, state, inputs.view(),
                                                        d_grad->as<float>(), nullptr, 0, auto_options(true));
  const Status not_sgd = egpu::tbe_backward_fused(problem, *layout, adam, state, inputs.view(), d_grad->as<float>(),
                                                  nullptr, 0, auto_options(false));
  auto bf16_problem = problem;
  bf16_problem.weight_dtype = DType::kBF16;
  const auto bf16_weights = embedding::make_weights(bf16_problem.layout, DType::kBF16, seed);
  auto d_bf16_weights = gpu::upload(bf16_weights);
  const Status bf16 = egpu::tbe_backward_fused(bf16_problem, *layout, sgd, {d_bf16_weights->data(), nullptr, nullptr},
                                               inputs.view(), d_grad->as<float>(), nullptr, 0, auto_options(false));
  for (const Status& s : {deterministic, not_sgd, bf16}) {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
    EXPECT_NE(s.message().find("workspace_bytes"), std::string::npos) << s.message();
  }
}

// Needs no device: each condition of the rule refuses with its reason; the sorted paths' default
// (deterministic) refuses too, so kAuto with default options never reaches it.
TEST(GpuTbeBackwardAtomicSgd, RuleRefusesWithTheReason) {
  embedding::OptimizerParams sgd;
  const auto problem = testing::make_problem({{10, 16}}, 4, 4);
  EXPECT_TRUE(egpu::atomic_sgd_backward_fits(problem, sgd, atomic_options()).is_ok());
  const Status deterministic = egpu::atomic_sgd_backward_fits(problem, sgd, egpu::BackwardOptions{});
  EXPECT_NE(deterministic.message().find("deterministic=true"), std::string::npos) << deterministic.message();
  embedding::OptimizerParams adam;
  adam.kind = OptimizerKind::kAdam;
  const Status not_sgd = egpu::atomic_sgd_backward_fits(problem, adam, atomic_options());
  EXPECT_NE(not_sgd.message().find("optimizer=adam"), std::string::npos) << not_sgd.message();
  EXPECT_TRUE(egpu::atomic_sgd_backward_fits(testing::make_problem({{10, 16}}, 4, 4, DType::kI64, DType::kBF16), sgd,
                                             atomic_options())
                  .is_ok());
  const Status unpooled = egpu::atomic_sgd_backward_fits(
      testing::make_problem({{10, 16}}, 4, 4, DType::kI64, DType::kF32, DType::kF32, PoolingMode::kNone), sgd,
      atomic_options());
  EXPECT_NE(unpooled.message().find("pooling=none"), std::string::npos) << unpooled.message();
  for (const Status& s : {deterministic, not_sgd, unpooled}) EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace parity
