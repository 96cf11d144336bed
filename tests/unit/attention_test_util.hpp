// Shared helpers of the attention tests: jagged cases with values exactly representable in the
// element dtype (so the fp64 reference and the kernel see the same inputs), and the derived error
// bounds of the fp32-accumulating paths against the fp64 reference.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "parity/attention/attention.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/rng.hpp"
#include "reference/attention_ref.hpp"

namespace parity::attention::testing {

// One jagged problem with its inputs twice: element bits for the op, fp64 for the reference.
struct JaggedCase {
  AttentionProblem problem;
  ref::AttentionRefInputs inputs;
  std::vector<std::uint16_t> q_bits, k_bits, v_bits, grad_out_bits;
  std::vector<double> grad_out;
};

inline std::uint16_t to_bits(DType dtype, double value) {
  return dtype == DType::kBF16 ? float_to_bf16_bits(static_cast<float>(value))
                               : float_to_fp16_bits(static_cast<float>(value));
}
inline double from_bits(DType dtype, std::uint16_t bits) {
  return dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

// Uniform values in [-1, 1) rounded to the dtype; `bits` and `values` hold the same numbers.
inline void fill_uniform(Rng& rng, DType dtype, std::int64_t count, std::vector<std::uint16_t>* bits,
                         std::vector<double>* values) {
  bits->resize(static_cast<std::size_t>(count));
  values->resize(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < bits->size(); ++i) {
    (*bits)[i] = to_bits(dtype, rng.uniform(-1.0, 1.0));
    (*values)[i] = from_bits(dtype, (*bits)[i]);
  }
}

inline std::vector<std::int64_t> offsets_of(const std::vector<std::int64_t>& lengths) {
  std::vector<std::int64_t> offsets(lengths.size() + 1, 0);
  for (std::size_t b = 0; b < lengths.size(); ++b) offsets[b + 1] = offsets[b] + lengths[b];
  return offsets;
}

// `problem` gives kind, heads, dims, masks, max_seq_len, dtype; batch and totals come from the
// lengths. kv_lengths empty = self-attention; num_targets empty = none.
inline JaggedCase make_case(AttentionProblem problem, const std::vector<std::int64_t>& q_lengths,
                            const std::vector<std::int64_t>& kv_lengths, const std::vector<std::int32_t>& num_targets,
                            std::uint64_t seed) {
  JaggedCase c;
  Rng rng(seed);
  problem.batch = static_cast<std::int64_t>(q_lengths.size());
  problem.cross = !kv_lengths.empty();
  c.inputs.q_offsets = offsets_of(q_lengths);
  if (problem.cross) c.inputs.kv_offsets = offsets_of(kv_lengths);
  problem.total_q = c.inputs.q_offsets.back();
  problem.total_kv = problem.cross ? c.inputs.kv_offsets.back() : problem.total_q;
  problem.has_num_targets = !num_targets.empty();
  c.inputs.num_targets = num_targets;
  c.problem = problem;
  const std::int64_t h = problem.heads;
  fill_uniform(rng, problem.dtype, problem.total_q * h * problem.dim_qk, &c.q_bits, &c.inputs.q);
  fill_uniform(rng, problem.dtype, problem.total_kv * h * problem.dim_qk, &c.k_bits, &c.inputs.k);
  fill_uniform(rng, problem.dtype, problem.total_kv * h * problem.dim_v, &c.v_bits, &c.inputs.v);
  fill_uniform(rng, problem.dtype, problem.total_q * h * problem.dim_v, &c.grad_out_bits, &c.grad_out);
  return c;
}

// ---- Error bounds of an fp32-accumulating path against the fp64 reference --------------------
// Inputs are bounded by 1 in magnitude (make_case), so with S = |alpha| * d_qk the bound on any
// score, u = 2^-24 the fp32 unit roundoff and K = d_qk + d_v + n + 16 the longest chain of fp32
// operations behind one output (a d_qk dot product, a d_v dot product, an n-term sum and a few
// elementwise steps), the first-order error analysis gives (each term's error, summed over n):
//   score:   |ds| <= d_qk u S;  a = act(s)/N:  |da| <= (L |ds| + 4 u |act(S)|) / N,
//   L = max|act'|, L2 = max|act''| (silu 1.1 / 0.5, gelu 1.13 / 0.8, sigmoid 0.25 / 0.1).
// HSTU/GDPA forward   E = 2 K u n (L S + act(S)) / N                       (|v| <= 1)
// HSTU/GDPA dv        same as the forward (grad_out in place of v)
// HSTU/GDPA dq, dk    E = 2 K u n |alpha| P (2 L + L2 S) / N,  P = d_v (bound on grad_out . v)
// softmax forward     E = 2 K u (1 + 4 S)   (a convex combination of v; exp and lse errors)
// softmax dv          E = 2 K u n (1 + 4 S)
// softmax dq          E = |alpha| P (4 K u (1 + 4 S) + 2 u_out);  dk: the same times n
// (the u_out term: D_i = grad_out_i . out_i uses the forward's out rounded to the dtype).
// A kernel output is the dtype rounding of its fp32 value, so the check is
//   |got - ref| <= u_out |ref| + (1 + u_out) E.
// The factor 2 covers the second-order terms. A dropped or doubled pair changes an output by
// about |act(S_typical)|/N or p_ij, orders of magnitude above E at the sizes tested.
struct ActivationBounds {
  double lipschitz, second, value_at_s;
};

inline ActivationBounds activation_bounds(const AttentionProblem& p, double s) {
  switch (p.activation) {
    case PointwiseActivation::kSilu: return {1.1, 0.5, s};
    case PointwiseActivation::kGelu: return {1.13, 0.8, s};
    case PointwiseActivation::kRelu: return {1.0, 0.0, s};
    case PointwiseActivation::kSigmoid: return {0.25, 0.1, 1.0};
  }
  return {1.0, 1.0, s};
}

struct ErrorBounds {
  double out = 0, grad_q = 0, grad_k = 0, grad_v = 0;
};

inline ErrorBounds error_bounds(const AttentionProblem& p, std::int64_t max_length) {
  const double u = std::ldexp(1.0, -24);
  const double u_out = unit_roundoff(p.dtype);
  const double n = static_cast<double>(std::max<std::int64_t>(max_length, 1));
  const double alpha = std::abs(static_cast<double>(p.effective_alpha()));
  const double s = alpha * p.dim_qk;
  const double k = p.dim_qk + p.dim_v + n + 16;
  const double pdot = p.dim_v;
  ErrorBounds e;
  if (p.kind == AttentionKind::kSoftmax) {
    e.out = 2 * k * u * (1 + 4 * s);
    e.grad_v = n * e.out;
    e.grad_q = alpha * pdot * (4 * k * u * (1 + 4 * s) + 2 * u_out);
    e.grad_k = n * e.grad_q;
    return e;
  }
  const ActivationBounds a = activation_bounds(p, s);
  const double big_n = static_cast<double>(p.max_seq_len);
  e.out = 2 * k * u * n * (a.lipschitz * s + a.value_at_s) / big_n;
  e.grad_v = e.out;
  e.grad_q = 2 * k * u * n * alpha * pdot * (2 * a.lipschitz + a.second * s) / big_n;
  e.grad_k = e.grad_q;
  return e;
}

// Compares element bits against fp64; reports the first failure and the max abs error.
inline void expect_close(const char* what, DType dtype, const std::vector<std::uint16_t>& got,
                         const std::vector<double>& want, double error_bound) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double u_out = unit_roundoff(dtype);
  double max_error = 0;
  std::size_t failures = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double value = from_bits(dtype, got[i]);
    const double error = std::abs(value - want[i]);
    max_error = std::max(max_error, error);
    const double tolerance = u_out * std::abs(want[i]) + (1 + u_out) * error_bound;
    if (!(error <= tolerance) && failures++ < 3) {
      ADD_FAILURE() << what << "[" << i << "]: got " << value << ", want " << want[i] << " (error " << error
                    << " > tolerance " << tolerance << ")";
    }
  }
  EXPECT_EQ(failures, 0u) << what << ": " << failures << " elements out of tolerance, max abs error " << max_error;
}

inline std::int64_t max_of(const std::vector<std::int64_t>& lengths) {
  return lengths.empty() ? 0 : *std::max_element(lengths.begin(), lengths.end());
}

}  // namespace parity::attention::testing
