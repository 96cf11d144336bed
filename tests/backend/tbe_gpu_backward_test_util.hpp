// Shared by the GPU TBE backward tests: fused training steps on the device under given options,
// and the weights after them against the fp64 reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/tbe_gpu_test_util.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "reference/tbe.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity::testing {

struct TrainedTbe {
  std::vector<std::uint8_t> weights;
  std::vector<float> state1, state2;
};

// `steps` fused steps (step 1, 2, ...) from `weights` and zero optimiser state under `options`,
// the workspace sized for them; the weights and state downloaded after.
inline TrainedTbe train_fused(const embedding::TbeProblem& problem, const embedding::OptimizerParams& opt,
                              const embedding::SyntheticBatch& batch, const std::vector<float>& grad,
                              const std::vector<std::uint8_t>& weights, int steps,
                              const embedding::gpu::BackwardOptions& options) {
  namespace egpu = embedding::gpu;
  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  auto d_weights = gpu::upload(weights);
  const auto s1 = embedding::optimizer_state1_elements(problem.layout, opt.kind);
  const auto s2 = embedding::optimizer_state2_elements(problem.layout, opt.kind);
  auto d_state1 = gpu::upload(std::vector<float>(static_cast<std::size_t>(std::max<std::int64_t>(s1, 1)), 0.0f));
  auto d_state2 = gpu::upload(std::vector<float>(static_cast<std::size_t>(std::max<std::int64_t>(s2, 1)), 0.0f));
  auto inputs = upload_batch(problem, batch);
  auto d_grad = gpu::upload(grad);
  const auto ws_bytes = egpu::tbe_backward_workspace_bytes(problem, options);
  EXPECT_TRUE(ws_bytes.is_ok()) << ws_bytes.status().to_string();
  auto ws = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(std::max<std::int64_t>(*ws_bytes, 1)));
  for (int step = 1; step <= steps; ++step) {
    auto o = opt;
    o.step = step;
    const Status status = egpu::tbe_backward_fused(
        problem, *layout, o, {d_weights->data(), s1 ? d_state1->as<float>() : nullptr, s2 ? d_state2->as<float>() : nullptr},
        inputs.view(), d_grad->as<float>(), ws->data(), *ws_bytes, options);
    EXPECT_TRUE(status.is_ok()) << status.to_string();
  }
  TrainedTbe out;
  out.weights = *gpu::download<std::uint8_t>(*d_weights, weights.size());
  out.state1 = *gpu::download<float>(*d_state1, static_cast<std::size_t>(s1));
  out.state2 = *gpu::download<float>(*d_state2, static_cast<std::size_t>(s2));
  return out;
}

// `got` (the weights after `steps` fused steps from weights0) against the fp64 reference's steps,
// within the derived update tolerance; 5 failures shown.
inline void expect_trained_weights_match_reference(const embedding::TbeProblem& problem,
                                                   const embedding::OptimizerParams& opt,
                                                   const embedding::SyntheticBatch& batch, const std::vector<float>& grad,
                                                   const std::vector<double>& weights0,
                                                   const std::vector<std::uint8_t>& got, int steps) {
  ref::TbeRefTrainingState state{weights0, {}, {}};
  state.state1.assign(static_cast<std::size_t>(embedding::optimizer_state1_elements(problem.layout, opt.kind)), 0.0);
  state.state2.assign(static_cast<std::size_t>(embedding::optimizer_state2_elements(problem.layout, opt.kind)), 0.0);
  const auto ref_batch = to_ref_batch(batch);
  for (int step = 1; step <= steps; ++step) {
    auto o = opt;
    o.step = step;
    ref::tbe_backward_fused(problem, o, state, ref_batch, std::vector<double>(grad.begin(), grad.end()));
  }
  const double gradient_error = gradient_error_bound(problem, opt, ref_batch, grad);
  int failures = 0;
  for (std::size_t i = 0; i < state.weights.size() && failures < 5; ++i) {
    const double g = embedding::load_as_double(got, problem.weight_dtype, static_cast<std::int64_t>(i));
    const double tol = update_tolerance(state.weights[i], weights0[i], problem.layout.max_dim(), steps,
                                        problem.weight_dtype, gradient_error);
    if (!(std::abs(g - state.weights[i]) <= tol)) {
      ADD_FAILURE() << embedding::optimizer_kind_name(opt.kind) << " weight[" << i << "]=" << g << " want "
                    << state.weights[i] << " tol " << tol;
      ++failures;
    }
  }
}

// A sum-pooled fp32 batch for comparing two ways of running the sorted backward.
struct SortedBackwardCase {
  std::string name;
  std::vector<embedding::TableSpec> tables;
  std::int64_t batch_size = 0;
  int pooling_factor = 1;
  bool vary_bag_sizes = false;
  double empty_bag_fraction = 0.0;
  bool weighted = false;
};

// The case's batch (Zipf 1.1: repeated rows, so runs of equal keys), then two fused steps from the
// same weights under `tried` and under `baseline`: the same weights and optimiser state bit for bit,
// and the tried run's weights against the fp64 reference.
inline void expect_same_steps_as(const SortedBackwardCase& c, embedding::OptimizerKind kind, DType index_dtype,
                                 std::uint64_t seed, const embedding::gpu::BackwardOptions& tried,
                                 const embedding::gpu::BackwardOptions& baseline, const std::string& baseline_name) {
  embedding::SyntheticBatchOptions options;
  options.batch_size = c.batch_size;
  options.pooling_factor = c.pooling_factor;
  options.vary_bag_sizes = c.vary_bag_sizes;
  options.empty_bag_fraction = c.empty_bag_fraction;
  options.zipf_alpha = 1.1;
  options.weighted = c.weighted;
  options.seed = seed;
  const auto probe = make_problem(c.tables, 0, 0);
  const auto batch = embedding::make_synthetic_batch(probe.layout, options);
  const auto problem = make_problem(c.tables, c.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                    index_dtype, DType::kF32, DType::kF32, embedding::PoolingMode::kSum, c.weighted);
  embedding::OptimizerParams opt;
  opt.kind = kind;
  opt.learning_rate = 0.05f;
  std::vector<double> weights0;
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed, &weights0);
  const auto grad = random_grad(problem.output_rows() * problem.output_cols(), seed + 3);
  const auto got = train_fused(problem, opt, batch, grad, weights, 2, tried);
  const auto want = train_fused(problem, opt, batch, grad, weights, 2, baseline);
  EXPECT_EQ(got.weights, want.weights) << "weights differ from " << baseline_name;
  EXPECT_EQ(got.state1, want.state1) << "optimiser state differs from " << baseline_name;
  EXPECT_EQ(got.state2, want.state2) << "second optimiser state differs from " << baseline_name;
  expect_trained_weights_match_reference(problem, opt, batch, grad, weights0, got.weights, 2);
}

// For a sort option that must not change a bit: bag and position keys (per-sample weights),
// one-hot, long bags, many rows (21 row bits: three digit passes), a single index, each with every
// optimiser that reads the sorted runs, `tried` against the default options and the reference.
inline void expect_same_steps_as_default_sort(std::uint64_t seed, const embedding::gpu::BackwardOptions& tried,
                                              const std::string& default_name) {
  const std::vector<SortedBackwardCase> cases = {
      {"L=4 varied", {{5000, 32}, {3000, 64}}, 3000, 4, true, 0.0, false},
      {"weighted (position keys)", {{4000, 16}, {700, 128}}, 2500, 3, true, 0.1, true},
      {"one-hot", {{9000, 8}, {800, 48}, {60, 16}}, 5000, 1, false, 0.0, false},
      {"long bags", {{20000, 16}}, 64, 300, true, 0.0, false},
      {"many rows (21 row bits: three digit passes)", {{1500000, 4}, {3000, 8}}, 4000, 2, true, 0.0, false},
      {"one index", {{100, 16}}, 1, 1, false, 0.0, false}};
  using embedding::OptimizerKind;
  int case_number = 0;
  for (const auto& c : cases) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kRowwiseAdagrad, OptimizerKind::kAdam}) {
      ++case_number;
      SCOPED_TRACE(c.name + " " + embedding::optimizer_kind_name(kind));
      expect_same_steps_as(c, kind, case_number % 2 == 0 ? DType::kI32 : DType::kI64,
                           seed + static_cast<std::uint64_t>(case_number), tried, embedding::gpu::BackwardOptions{},
                           default_name);
    }
  }
}

}  // namespace parity::testing
