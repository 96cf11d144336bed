// The fp64 attention reference itself: its backward against central finite differences, the mask
// on hand-checked patterns, and properties (one key returns its value, softmax weights sum to 1,
// the 1/N scale of HSTU).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "common/test_support.hpp"
#include "unit/attention_test_util.hpp"

namespace parity::attention {
namespace {

using testing::JaggedCase;
using testing::make_case;

AttentionProblem base_problem(AttentionKind kind, int dim_qk, int dim_v, std::int64_t max_seq_len) {
  AttentionProblem p;
  p.kind = kind;
  p.heads = 2;
  p.dim_qk = dim_qk;
  p.dim_v = dim_v;
  p.max_seq_len = max_seq_len;
  p.dtype = DType::kBF16;
  return p;
}

double loss(const AttentionProblem& p, const ref::AttentionRefInputs& in, const std::vector<double>& grad_out) {
  std::vector<double> out, lse;
  EXPECT_TRUE(ref::attention_forward_ref(p, in, &out, &lse).is_ok());
  double sum = 0;
  for (std::size_t i = 0; i < out.size(); ++i) sum += out[i] * grad_out[i];
  return sum;
}

// Central differences in fp64 with h = 2^-20: truncation h^2/6 max|f'''| (f''' <= ~1e2 for
// inputs in [-1, 1], d <= 8, n <= 6: ~2e-11) plus roundoff ~u64 |loss| / h (~1e-9). 1e-7 covers
// both with margin; a wrong gradient term here is >= 1e-3 (alpha/N * O(1) values).
void expect_gradients_match_finite_differences(const JaggedCase& c) {
  std::vector<double> grad_q, grad_k, grad_v;
  ASSERT_TRUE(ref::attention_backward_ref(c.problem, c.inputs, c.grad_out, &grad_q, &grad_k, &grad_v).is_ok());
  const double h = std::ldexp(1.0, -20);
  const double tolerance = 1e-7;
  auto check = [&](std::vector<double> ref::AttentionRefInputs::*tensor, const std::vector<double>& analytic,
                   const char* name) {
    for (std::size_t i = 0; i < analytic.size(); ++i) {
      ref::AttentionRefInputs plus = c.inputs;
      ref::AttentionRefInputs minus = c.inputs;
      (plus.*tensor)[i] += h;
      (minus.*tensor)[i] -= h;
      const double numeric = (loss(c.problem, plus, c.grad_out) - loss(c.problem, minus, c.grad_out)) / (2 * h);
      EXPECT_NEAR(analytic[i], numeric, tolerance) << name << "[" << i << "]";
    }
  };
  check(&ref::AttentionRefInputs::q, grad_q, "grad_q");
  check(&ref::AttentionRefInputs::k, grad_k, "grad_k");
  check(&ref::AttentionRefInputs::v, grad_v, "grad_v");
}

TEST(AttentionReference, HstuBackwardMatchesFiniteDifferencesWithMasks) {
  const std::uint64_t seed = parity::testing::test_seed(15001);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = base_problem(AttentionKind::kHstu, 4, 3, 7);
  p.alpha = 0.7f;
  expect_gradients_match_finite_differences(make_case(p, {5, 0, 3}, {}, {2, 0, 4}, seed));
  p.contextual_len = 2;
  p.max_attn_len = 2;
  p.min_full_attn_len = 1;
  expect_gradients_match_finite_differences(make_case(p, {6, 4}, {}, {1, 1}, seed + 1));
}

TEST(AttentionReference, GdpaBackwardMatchesFiniteDifferencesEveryActivation) {
  const std::uint64_t seed = parity::testing::test_seed(15002);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu, PointwiseActivation::kSigmoid}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = base_problem(AttentionKind::kGdpa, 3, 5, 6);
    p.activation = activation;
    p.causal = false;
    expect_gradients_match_finite_differences(make_case(p, {2, 3}, {4, 1}, {}, seed));
  }
}

TEST(AttentionReference, SoftmaxBackwardMatchesFiniteDifferencesWithTruncation) {
  const std::uint64_t seed = parity::testing::test_seed(15003);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = base_problem(AttentionKind::kSoftmax, 4, 4, 4);  // the length-6 sequence is cut at 4
  expect_gradients_match_finite_differences(make_case(p, {6, 1, 3}, {}, {}, seed));
  p.causal = false;
  expect_gradients_match_finite_differences(make_case(p, {5, 2}, {}, {}, seed + 1));
}

// Mask patterns checked by hand from the definition (docs/attention.md, "Masks").
std::vector<std::string> mask_rows(const AttentionProblem& p, std::int64_t n, std::int64_t targets) {
  std::vector<std::string> rows;
  for (std::int64_t i = 0; i < n; ++i) {
    std::string row;
    for (std::int64_t j = 0; j < n; ++j) row += ref::attention_mask_ref(p, n, n, targets, i, j) ? '1' : '.';
    rows.push_back(row);
  }
  return rows;
}

TEST(AttentionReference, MaskCausalWithTargets) {
  AttentionProblem p = base_problem(AttentionKind::kHstu, 4, 4, 8);
  p.has_num_targets = true;
  // 6 rows, the last 2 are targets: each sees the history and itself, not the other target.
  EXPECT_EQ(mask_rows(p, 6, 2), (std::vector<std::string>{"1.....", "11....", "111...", "1111..", "11111.", "1111.1"}));
  // More targets than rows: every row is a target and sees only itself.
  EXPECT_EQ(mask_rows(p, 3, 5), (std::vector<std::string>{"1..", ".1.", "..1"}));
}

TEST(AttentionReference, MaskContextualPrefixAndWindow) {
  AttentionProblem p = base_problem(AttentionKind::kHstu, 4, 4, 8);
  p.contextual_len = 2;
  // Rows 0-1 are the context: they see every row; every row sees them.
  EXPECT_EQ(mask_rows(p, 5, 0), (std::vector<std::string>{"11111", "11111", "111..", "1111.", "11111"}));
  AttentionProblem w = base_problem(AttentionKind::kHstu, 4, 4, 8);
  w.max_attn_len = 1;
  // Window 1: each row sees itself and the previous row.
  EXPECT_EQ(mask_rows(w, 4, 0), (std::vector<std::string>{"1...", "11..", ".11.", "..11"}));
  w.min_full_attn_len = 1;
  // ... except the last row, which keeps full attention.
  EXPECT_EQ(mask_rows(w, 4, 0), (std::vector<std::string>{"1...", "11..", ".11.", "1111"}));
}

TEST(AttentionReference, OneKeyReturnsItsValueAndSoftmaxWeightsSumToOne) {
  const std::uint64_t seed = parity::testing::test_seed(15004);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = base_problem(AttentionKind::kSoftmax, 8, 8, 16);
  JaggedCase c = make_case(p, {1, 9}, {}, {}, seed);
  std::vector<double> out, lse;
  ASSERT_TRUE(ref::attention_forward_ref(c.problem, c.inputs, &out, &lse).is_ok());
  for (int x = 0; x < 2 * 8; ++x) EXPECT_DOUBLE_EQ(out[static_cast<std::size_t>(x)], c.inputs.v[static_cast<std::size_t>(x)]);
  std::fill(c.inputs.v.begin(), c.inputs.v.end(), 1.0);  // out = sum of the weights
  ASSERT_TRUE(ref::attention_forward_ref(c.problem, c.inputs, &out, &lse).is_ok());
  for (double value : out) EXPECT_NEAR(value, 1.0, 1e-15 * 16);  // 16 roundings of u64 at most
}

TEST(AttentionReference, HstuScalesWithOneOverMaxSeqLen) {
  const std::uint64_t seed = parity::testing::test_seed(15005);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = base_problem(AttentionKind::kHstu, 8, 8, 10);
  JaggedCase c = make_case(p, {4, 7}, {}, {}, seed);
  std::vector<double> out_n, out_4n, lse;
  ASSERT_TRUE(ref::attention_forward_ref(c.problem, c.inputs, &out_n, &lse).is_ok());
  c.problem.max_seq_len = 40;  // N longer than the longest sequence
  ASSERT_TRUE(ref::attention_forward_ref(c.problem, c.inputs, &out_4n, &lse).is_ok());
  for (std::size_t i = 0; i < out_n.size(); ++i) EXPECT_NEAR(out_4n[i] * 4, out_n[i], 1e-15);
}

}  // namespace
}  // namespace parity::attention
