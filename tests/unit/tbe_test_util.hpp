// Shared helpers for the TBE tests (CPU and GPU): problems, reference inputs, derived tolerances.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/rng.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/embedding/tbe_synthetic.hpp"
#include "reference/tbe.hpp"

namespace parity::testing {

inline embedding::TbeProblem make_problem(std::vector<embedding::TableSpec> tables, std::int64_t batch_size,
                                          std::int64_t num_indices, DType index_dtype = DType::kI64,
                                          DType weight_dtype = DType::kF32, DType output_dtype = DType::kF32,
                                          embedding::PoolingMode pooling = embedding::PoolingMode::kSum,
                                          bool weighted = false) {
  auto layout = embedding::TbeLayout::create(std::move(tables));
  EXPECT_TRUE(layout.is_ok()) << layout.status().to_string();
  embedding::TbeProblem problem{*layout};
  problem.batch_size = batch_size;
  problem.num_indices = num_indices;
  problem.index_dtype = index_dtype;
  problem.weight_dtype = weight_dtype;
  problem.output_dtype = output_dtype;
  problem.pooling = pooling;
  problem.has_per_sample_weights = weighted;
  return problem;
}

// A synthetic batch over `tables` and the fp32-weight, sum-pooled problem that reads it.
struct SyntheticCase {
  embedding::TbeProblem problem;
  embedding::SyntheticBatch batch;
};
// Bags of 5 on average, lengths varied, 10% empty; per-sample weights when `weighted`.
inline embedding::SyntheticBatch varied_batch(const embedding::TbeProblem& probe, std::int64_t batch_size,
                                             std::uint64_t seed, bool weighted) {
  embedding::SyntheticBatchOptions options;
  options.batch_size = batch_size;
  options.pooling_factor = 5;
  options.vary_bag_sizes = true;
  options.empty_bag_fraction = 0.1;
  options.weighted = weighted;
  options.seed = seed;
  return embedding::make_synthetic_batch(probe.layout, options);
}

inline SyntheticCase make_synthetic_case(const std::vector<embedding::TableSpec>& tables,
                                         const embedding::SyntheticBatchOptions& options, DType index_dtype) {
  auto batch = embedding::make_synthetic_batch(make_problem(tables, 0, 0).layout, options);
  auto problem = make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()), index_dtype);
  return {std::move(problem), std::move(batch)};
}

inline ref::TbeRefBatch to_ref_batch(const embedding::SyntheticBatch& batch) {
  ref::TbeRefBatch ref_batch{batch.indices, batch.offsets, {}};
  for (float w : batch.per_sample_weights) ref_batch.per_sample_weights.push_back(w);
  return ref_batch;
}

// Forward tolerance per element, derived: the kernel sums L products in fp32 (error <= L*u32*sum|terms|
// by the standard recursive-summation bound, plus one rounding of the product, 1/L scaling), then
// rounds once to the output dtype (u_out*|ref|). `abs_ref` is the reference forward on |w|, |psw|.
inline double forward_tolerance(double ref, double abs_ref, std::int64_t max_bag, DType output_dtype) {
  const double u32 = unit_roundoff(DType::kF32);
  // fp16 outputs below 2^-14 are subnormal: absolute spacing 2^-24, so half of it is added.
  const double subnormal_half_spacing = output_dtype == DType::kF16 ? std::ldexp(1.0, -25) : 0.0;
  return static_cast<double>(max_bag + 3) * u32 * abs_ref + unit_roundoff(output_dtype) * std::abs(ref) +
         subnormal_half_spacing + 1e-30;
}

inline std::int64_t max_bag_length(const std::vector<std::int64_t>& offsets) {
  std::int64_t m = 0;
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) m = std::max(m, offsets[i + 1] - offsets[i]);
  return m;
}

// Reference forward on absolute values: the sum of |terms| that bounds rounding error.
inline std::vector<double> abs_forward(const embedding::TbeProblem& problem, const std::vector<double>& weights,
                                       const ref::TbeRefBatch& batch) {
  std::vector<double> abs_weights(weights.size());
  std::transform(weights.begin(), weights.end(), abs_weights.begin(), [](double v) { return std::abs(v); });
  ref::TbeRefBatch abs_batch = batch;
  for (double& w : abs_batch.per_sample_weights) w = std::abs(w);
  auto p = problem;
  if (p.pooling == embedding::PoolingMode::kMean) p.pooling = embedding::PoolingMode::kSum;  // 1/L only shrinks
  return ref::tbe_forward(p, abs_weights, abs_batch);
}

inline std::vector<float> random_grad(std::int64_t count, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> g(static_cast<std::size_t>(count));
  for (auto& v : g) v = static_cast<float>(rng.normal());
  return g;
}

inline embedding::OptimizerParams optimizer_for(embedding::OptimizerKind kind,
                                                embedding::WeightDecayMode mode = embedding::WeightDecayMode::kNone) {
  embedding::OptimizerParams opt;
  opt.kind = kind;
  opt.learning_rate = 0.05f;
  opt.eps = 1e-3f;
  if (kind == embedding::OptimizerKind::kRowwiseAdagrad && mode != embedding::WeightDecayMode::kNone) {
    opt.weight_decay = 0.01f;
    opt.weight_decay_mode = mode;
  }
  if (kind == embedding::OptimizerKind::kAdam) opt.weight_decay = 0.001f;
  return opt;
}

// Optimiser-update tolerance after `steps` steps, derived: each fp32 step rounds w, the state and
// the update a bounded number of times (c = 16 ulps of |w|), and row-wise Adagrad's state sums D
// squares (relative error D*u on M, halved by the sqrt, carried into the step |dw|); errors add
// over steps. Stored 16-bit weights add one rounding u_w*|w| per step.
// `gradient_error` is the per-step error carried in from summing a row's gradient in fp32 (see
// gradient_error_bound), which cancellation can make larger than the step itself.
inline double update_tolerance(double w_ref, double w_initial, int max_dim, int steps, DType weight_dtype,
                               double gradient_error = 0.0) {
  const double u32 = unit_roundoff(DType::kF32);
  const double step_size = std::abs(w_ref - w_initial);
  return steps * (gradient_error + 16.0 * u32 * std::abs(w_ref) + (max_dim + 16.0) * u32 * step_size +
                  (weight_dtype == DType::kF32 ? 0.0 : 2.0 * unit_roundoff(weight_dtype) * (std::abs(w_ref) + step_size))) +
         1e-30;
}

// Error of one step's update that comes from the fp32 gradient sum, derived: a row's gradient is a
// sum of n occurrences, error <= (n + 2) u32 * sum|terms| (G = the largest such abs sum); SGD moves
// w by lr*g, so lr times that; Adagrad/Adam divide by sqrt(state) + eps >= eps, so at most 1/eps
// times more (row-wise Adagrad likewise through its multiplier lr/(sqrt(M) + eps)).
inline double gradient_error_bound(const embedding::TbeProblem& problem, const embedding::OptimizerParams& opt,
                                   const ref::TbeRefBatch& batch, const std::vector<float>& grad) {
  std::vector<double> abs_grad(grad.size());
  for (std::size_t i = 0; i < grad.size(); ++i) abs_grad[i] = std::abs(static_cast<double>(grad[i]));
  auto abs_batch = batch;
  for (double& w : abs_batch.per_sample_weights) w = std::abs(w);
  const auto sums = ref::tbe_row_gradients(problem, abs_batch, abs_grad);
  double g_max = 0.0;
  for (const auto& [row, g] : sums) {
    for (double v : g) g_max = std::max(g_max, v);
  }
  std::map<std::int64_t, std::int64_t> occurrences;
  for (int f = 0; f < problem.layout.num_features(); ++f) {
    const auto begin = batch.offsets[f * problem.batch_size], end = batch.offsets[(f + 1) * problem.batch_size];
    for (auto p = begin; p < end; ++p) ++occurrences[problem.layout.row_base(problem.layout.table_of_feature()[f]) + batch.indices[p]];
  }
  std::int64_t max_occ = 0;
  for (const auto& [row, n] : occurrences) max_occ = std::max(max_occ, n);
  const double normaliser = opt.kind == embedding::OptimizerKind::kSgd ? 1.0 : 1.0 / opt.eps;
  return static_cast<double>(max_occ + 2) * unit_roundoff(DType::kF32) * g_max * opt.learning_rate * normaliser;
}

}  // namespace parity::testing
