// The HSTU layer (include/parity/attention/hstu_layer.hpp): the fp64 reference's backward against
// central finite differences of its forward; the CPU op (fp32, the attention on bf16 copies of q,
// k, v) against the reference on seeded cases with derived bounds; bad input naming the parameter.
// Longer than ~600 lines: the three groups share the case builders and the derived bounds below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "parity/attention/hstu_layer.hpp"
#include "parity/core/rng.hpp"
#include "reference/attention_ref.hpp"
#include "reference/hstu_layer_ref.hpp"

namespace parity::attention {
namespace {

using Vector = std::vector<double>;
using In = ref::HstuLayerRefInputs;
using Grads = ref::HstuLayerRefGradients;

// Every tensor with a gradient, in one order: 0 = x, then HstuLayerWeights' order.
struct TensorField {
  const char* name;
  Vector In::*input;
  Vector Grads::*grad;
};
const TensorField kTensors[] = {
    {"x", &In::x, &Grads::x},
    {"norm_weight", &In::norm_weight, &Grads::norm_weight},
    {"norm_bias", &In::norm_bias, &Grads::norm_bias},
    {"uvqk_weight", &In::uvqk_weight, &Grads::uvqk_weight},
    {"uvqk_bias", &In::uvqk_bias, &Grads::uvqk_bias},
    {"output_norm_weight", &In::output_norm_weight, &Grads::output_norm_weight},
    {"output_norm_bias", &In::output_norm_bias, &Grads::output_norm_bias},
    {"output_weight", &In::output_weight, &Grads::output_weight},
    {"output_bias", &In::output_bias, &Grads::output_bias},
};
constexpr std::size_t kNumTensors = sizeof(kTensors) / sizeof(kTensors[0]);

struct Shape {
  int model_dim, heads, dim_qk, dim_v;
};

struct LayerCase {
  HstuLayerProblem problem;
  In inputs;  // every value exactly representable in fp32, so the op and the reference see the same
  Vector grad_y;
};

// Uniform in center +- scale, rounded to fp32.
Vector uniform(Rng& rng, std::int64_t count, double center, double scale) {
  Vector values(static_cast<std::size_t>(count));
  for (double& value : values) value = static_cast<float>(center + scale * rng.uniform(-1.0, 1.0));
  return values;
}

// `options` gives the masks, alpha and max_seq_len (0 = the longest length); sizes come from
// `shape` and `lengths`; num_targets empty = none. Weights scaled so that p and y are O(1).
LayerCase make_layer_case(HstuLayerProblem options, Shape shape, const std::vector<std::int64_t>& lengths,
                          const std::vector<std::int32_t>& num_targets, std::uint64_t seed) {
  LayerCase c;
  HstuLayerProblem& p = c.problem;
  p = options;
  p.model_dim = shape.model_dim;
  p.heads = shape.heads;
  p.dim_qk = shape.dim_qk;
  p.dim_v = shape.dim_v;
  p.batch = static_cast<std::int64_t>(lengths.size());
  p.has_num_targets = !num_targets.empty();
  c.inputs.seq_offsets.assign(1, 0);
  for (std::int64_t length : lengths) c.inputs.seq_offsets.push_back(c.inputs.seq_offsets.back() + length);
  p.total_tokens = c.inputs.seq_offsets.back();
  if (p.max_seq_len == 0) p.max_seq_len = std::max<std::int64_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  c.inputs.num_targets = num_targets;
  Rng rng(seed);
  const std::int64_t t = p.total_tokens, d = p.model_dim, w = p.uvqk_width(), hv = p.attention_width();
  c.inputs.x = uniform(rng, t * d, 0.25, 1.0);
  c.inputs.norm_weight = uniform(rng, d, 1.0, 0.5);
  c.inputs.norm_bias = uniform(rng, d, 0.0, 0.25);
  c.inputs.uvqk_weight = uniform(rng, w * d, 0.0, 1.5 / std::sqrt(static_cast<double>(d)));
  c.inputs.uvqk_bias = uniform(rng, w, 0.0, 0.25);
  c.inputs.output_norm_weight = uniform(rng, hv, 1.0, 0.5);
  c.inputs.output_norm_bias = uniform(rng, hv, 0.0, 0.25);
  c.inputs.output_weight = uniform(rng, d * hv, 0.0, 1.5 / std::sqrt(static_cast<double>(hv)));
  c.inputs.output_bias = uniform(rng, d, 0.0, 0.25);
  c.grad_y = uniform(rng, t * d, 0.0, 1.0);
  return c;
}

HstuLayerProblem options(int contextual_len = 0, int max_attn_len = 0, int min_full_attn_len = 0) {
  HstuLayerProblem p;
  p.contextual_len = contextual_len;
  p.max_attn_len = max_attn_len;
  p.min_full_attn_len = min_full_attn_len;
  return p;
}

// ---- the reference against central finite differences --------------------------------------

struct LossValue {
  double loss = 0, magnitude = 0;  // sum(y * grad_y) and sum |y * grad_y|
};

LossValue loss(const LayerCase& c, const In& inputs) {
  Vector y;
  const Status status = ref::hstu_layer_forward_ref(c.problem, inputs, &y);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  LossValue value;
  for (std::size_t i = 0; i < y.size(); ++i) {
    value.loss += y[i] * c.grad_y[i];
    value.magnitude += std::abs(y[i] * c.grad_y[i]);
  }
  return value;
}

// Central differences in fp64: D(h) = (L(x + h) - L(x - h)) / 2h, h = 2^-16 (~1.5e-5).
// Truncation: D(h) - f' = h^2/6 f''' + O(h^4). Rather than bound f''' a priori (the layer norms'
// rstd^3 and the SiLU weights make it vary by orders of magnitude between coordinates), it is
// measured per coordinate: D(2h) - D(h) = 3 h^2/6 f''' + O(h^4), three times D(h)'s truncation.
// Rounding: every term of the loss comes out of at most K = 4 (D + W + max_len d_qk + H d_v) fp64
// operations, so a loss is off by at most K u64 sum|y grad_y| (u64 = 2^-53), D(h) by R = that / h
// and D(2h) by R / 2. Hence |analytic - D(h)| <= |D(2h) - D(h)| + 2 R, ~1e-7 here, where a missing
// or wrong term of the chain rule is >= 1e-3.
void expect_backward_matches_finite_differences(const LayerCase& c, std::uint64_t seed) {
  Grads grads;
  const Status status = ref::hstu_layer_backward_ref(c.problem, c.inputs, c.grad_y, &grads);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  const HstuLayerProblem& p = c.problem;
  const double h = std::ldexp(1.0, -16);
  const double operations = 4.0 * static_cast<double>(p.model_dim + p.uvqk_width() + p.max_seq_len * p.dim_qk +
                                                      p.attention_width());
  const double rounding = operations * std::ldexp(1.0, -53) * loss(c, c.inputs).magnitude / h;
  Rng rng(seed);
  for (const TensorField& field : kTensors) {
    const Vector& analytic = grads.*field.grad;
    ASSERT_EQ(analytic.size(), (c.inputs.*field.input).size()) << field.name;
    // Every coordinate of the small tensors, 40 drawn at random of the larger ones.
    std::vector<std::size_t> coordinates;
    for (std::size_t i = 0; i < analytic.size(); ++i) coordinates.push_back(i);
    if (coordinates.size() > 48) {
      for (std::size_t& i : coordinates) i = static_cast<std::size_t>(rng.uniform_int(0, std::ssize(analytic) - 1));
      coordinates.resize(40);
    }
    for (std::size_t i : coordinates) {
      auto difference_quotient = [&](double step) {
        In plus = c.inputs, minus = c.inputs;
        (plus.*field.input)[i] += step;
        (minus.*field.input)[i] -= step;
        return (loss(c, plus).loss - loss(c, minus).loss) / (2 * step);
      };
      const double numeric = difference_quotient(h);
      const double tolerance = std::abs(difference_quotient(2 * h) - numeric) + 2 * rounding;
      EXPECT_NEAR(analytic[i], numeric, tolerance) << field.name << "[" << i << "]";
    }
  }
}

TEST(HstuLayerRef, BackwardMatchesFiniteDifferencesCausal) {
  const std::uint64_t seed = parity::testing::test_seed(16101);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  expect_backward_matches_finite_differences(make_layer_case(options(), {8, 2, 4, 4}, {3, 5}, {}, seed), seed);
}

TEST(HstuLayerRef, BackwardMatchesFiniteDifferencesTargetsAndContext) {
  const std::uint64_t seed = parity::testing::test_seed(16102);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  HstuLayerProblem o = options(/*contextual_len=*/2);
  o.max_seq_len = 8;  // above every length: the attention's 1/N differs from 1/max_len
  expect_backward_matches_finite_differences(make_layer_case(o, {8, 2, 4, 2}, {3, 5, 4}, {1, 2, 0}, seed), seed);
}

TEST(HstuLayerRef, BackwardMatchesFiniteDifferencesWindowNonCausal) {
  const std::uint64_t seed = parity::testing::test_seed(16103);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  HstuLayerProblem o = options(0, /*max_attn_len=*/2, /*min_full_attn_len=*/1);
  o.causal = false;
  o.alpha = 0.3F;
  expect_backward_matches_finite_differences(make_layer_case(o, {6, 1, 2, 6}, {6, 0, 4}, {}, seed), seed);
}

TEST(HstuLayerRef, ZeroOutputWeightLeavesTheResidualAndBias) {
  LayerCase c = make_layer_case(options(), {8, 2, 4, 4}, {3, 5}, {}, 16104);
  std::fill(c.inputs.output_weight.begin(), c.inputs.output_weight.end(), 0.0);
  Vector y;
  ASSERT_TRUE(ref::hstu_layer_forward_ref(c.problem, c.inputs, &y).is_ok());
  const auto d = static_cast<std::size_t>(c.problem.model_dim);
  for (std::size_t e = 0; e < y.size(); ++e) EXPECT_EQ(y[e], c.inputs.x[e] + c.inputs.output_bias[e % d]) << e;
}

// ---- the CPU op against the reference --------------------------------------------------------

constexpr std::size_t kGuard = 16;  // NaN floats after every output, checked untouched

// `count` floats followed by a NaN guard band; never empty, so data() is never null.
struct Guarded {
  std::vector<float> data;
  std::size_t count = 0;
  explicit Guarded(std::size_t n = 0) : data(n + kGuard, std::numeric_limits<float>::quiet_NaN()), count(n) {}
  float* get() { return data.data(); }
  Vector values() const { return Vector(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(count)); }
  bool guard_intact() const {
    const auto guard = data.begin() + static_cast<std::ptrdiff_t>(count);
    return std::all_of(guard, data.end(), [](float v) { return std::isnan(v); });
  }
};

std::vector<float> to_float(const Vector& values) {  // at least one element, for the guard band
  std::vector<float> out(std::max<std::size_t>(values.size(), 1), 0.0F);
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
  return out;
}

// The op's fp32 copies of a case's inputs, its outputs, and the forward's arguments pointing at them.
struct OpRun {
  std::vector<std::vector<float>> inputs;  // kTensors order
  std::vector<float> grad_y;
  Guarded y, saved;
  std::vector<Guarded> grads;  // kTensors order (grads[0] = d x)
  HstuLayerForwardArgs forward;

  explicit OpRun(const LayerCase& c) {
    for (const TensorField& field : kTensors) {
      inputs.push_back(to_float(c.inputs.*field.input));
      grads.emplace_back((c.inputs.*field.input).size());
    }
    grad_y = to_float(c.grad_y);
    y = Guarded(c.inputs.x.size());
    saved = Guarded(static_cast<std::size_t>(hstu_layer_saved_bytes(c.problem)) / sizeof(float));
    forward.x = inputs[0].data();
    forward.seq_offsets = c.inputs.seq_offsets.data();
    forward.num_targets = c.problem.has_num_targets ? c.inputs.num_targets.data() : nullptr;
    forward.weights = {inputs[1].data(), inputs[2].data(), inputs[3].data(), inputs[4].data(),
                       inputs[5].data(), inputs[6].data(), inputs[7].data(), inputs[8].data()};
    forward.y = y.get();
    forward.saved = saved.get();
  }
  OpRun(const OpRun&) = delete;
  OpRun& operator=(const OpRun&) = delete;

  HstuLayerBackwardArgs backward() {
    HstuLayerBackwardArgs b;
    b.forward = forward;
    b.grad_y = grad_y.data();
    b.grad_x = grads[0].get();
    b.grads = {grads[1].get(), grads[2].get(), grads[3].get(), grads[4].get(),
               grads[5].get(), grads[6].get(), grads[7].get(), grads[8].get()};
    return b;
  }
};

double silu(double x) { return x / (1.0 + std::exp(-x)); }

// Whether LN2 is scale-free on a row: var(a) >= 99 eps (rstd sqrt(eps) <= 0.1), so that LN2(a)
// depends on the direction of a only, to 1%. Otherwise eps dominates and LN2 passes a's scale on,
// which bf16 can leave undetermined: a row with one key has a = SiLU(s) v / N, and a score
// s = alpha q.k near 0 carries an absolute error ~u alpha sum|q k|, far above |s|.
bool is_scale_free(double rstd, double epsilon) { return rstd * std::sqrt(epsilon) <= 0.1; }

// Forward bound, elementwise. The op computes in fp32 (u32 = 2^-24) except that q, k, v and the
// attention output a are rounded to bf16 (u = 2^-8). What reaches y is the error of
// a_hat = (a - mean) rstd, L_j, times |SiLU(u_j) gamma_j| and summed against |W_out|:
//   |y - y_ref| <= sum_j |W_out[i, j] SiLU(u_j) gamma_j| L_j + K u32 (|x| + |b| + sum_j |g_j W_out[i, j]|)
// K = D + H d_v + 16 covers the fp32 steps (LN1, both projections, SiLU, LN2, the gate, the
// residual). LN2's Jacobian maps an error e of a to rstd (e_j - mean e - a_hat_j mean(a_hat e)).
// * Scale-free rows: only the errors relative to the row's spread count. Those of q, k and v are
//   independent across the n keys a sums over and grow like the sum itself (sqrt n), as in
//   probabilistic rounding analysis (Higham and Mary 2019); the worst case, every error aligned,
//   exceeds the spread once n ~ 100. Per rounding, relative to the spread: v and a u each, q and k
//   u times the score's relative sensitivity |s SiLU'(s) / SiLU(s)| (<= 1.3 wherever s >= -1.3,
//   that is wherever SiLU(s) is not small): ~5 u; the
//   Jacobian at most (2 + |a_hat_j|) times that: L_j = 10 u (1 + |a_hat_j|). No factor for the
//   tail: the sum over j takes the H d_v errors aligned, sqrt(H d_v) >= 8 times their typical sum.
// * Other rows: the worst case to first order. |d s| <= 2 u S, S = alpha sum|q k|; SiLU' <= 1.1
//   and S <= 2 SiLU(S) give |d a_j| <= E_j = u (|a_j| + 5.4 A_j), A the attention of |q|, |k|, |v|
//   (v's rounding u A_j, the scores' 4.4 u A_j, a's own u |a_j|); then
//   L_j = 2 rstd (E_j + mean E + |a_hat_j| mean(|a_hat| E)) (2 for the second order), capped at
//   2 sqrt(H d_v) >= |a_hat_j| + |a_hat'_j|. Such a row's output is barely determined in bf16.
// A swapped block, a mask not passed or a wrong norm moves y by O(sum_j |g_j W_out[i, j]|), on
// scale-free rows ~1 / (10 u) = 25 times |g_j| / (|SiLU(u_j) gamma_j| (1 + |a_hat_j|)), an order
// of magnitude above the bound.
Vector ln2_error_bounds(const LayerCase& c, const ref::HstuLayerRefActivations& act) {
  const HstuLayerProblem& p = c.problem;
  const std::int64_t t = p.total_tokens, w = p.uvqk_width(), hv = p.attention_width();
  const std::int64_t hq = static_cast<std::int64_t>(p.heads) * p.dim_qk;
  const double u = std::ldexp(1.0, -8);
  ref::AttentionRefInputs magnitudes;  // |q|, |k|, |v| from p's blocks u | v | q | k
  magnitudes.q_offsets = c.inputs.seq_offsets;
  magnitudes.num_targets = c.inputs.num_targets;
  auto p_at = [&](std::int64_t r, std::int64_t column) {
    return std::abs(act.p[static_cast<std::size_t>(r * w + column)]);
  };
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t j = 0; j < hq; ++j) magnitudes.q.push_back(p_at(r, 2 * hv + j));
    for (std::int64_t j = 0; j < hq; ++j) magnitudes.k.push_back(p_at(r, 2 * hv + hq + j));
    for (std::int64_t j = 0; j < hv; ++j) magnitudes.v.push_back(p_at(r, hv + j));
  }
  Vector a_abs, lse;
  EXPECT_TRUE(ref::attention_forward_ref(p.attention(), magnitudes, &a_abs, &lse).is_ok());
  Vector bounds(act.a.size());
  for (std::int64_t r = 0; r < t; ++r) {
    const double rstd = act.a_rstd[static_cast<std::size_t>(r)];
    auto at = [&](std::int64_t j) { return static_cast<std::size_t>(r * hv + j); };
    auto error = [&](std::int64_t j) { return u * (std::abs(act.a[at(j)]) + 5.4 * a_abs[at(j)]); };
    double mean_e = 0, mean_ae = 0;
    for (std::int64_t j = 0; j < hv; ++j) {
      mean_e += error(j) / static_cast<double>(hv);
      mean_ae += std::abs(act.a_hat[at(j)]) * error(j) / static_cast<double>(hv);
    }
    for (std::int64_t j = 0; j < hv; ++j) {
      const double a_hat = std::abs(act.a_hat[at(j)]);
      bounds[at(j)] = is_scale_free(rstd, p.layer_norm_epsilon)
                          ? 10 * u * (1 + a_hat)
                          : std::min(2 * rstd * (error(j) + mean_e + a_hat * mean_ae),
                                     2 * std::sqrt(static_cast<double>(hv)));
    }
  }
  return bounds;
}

void expect_forward_close(const LayerCase& c, const Guarded& y) {
  const HstuLayerProblem& p = c.problem;
  Vector y_ref;
  ref::HstuLayerRefActivations act;
  ASSERT_TRUE(ref::hstu_layer_forward_ref(p, c.inputs, &y_ref).is_ok());
  ASSERT_TRUE(ref::hstu_layer_activations_ref(p, c.inputs, &act).is_ok());
  const Vector ln2_error = ln2_error_bounds(c, act);
  const std::int64_t t = p.total_tokens, d = p.model_dim, w = p.uvqk_width(), hv = p.attention_width();
  const double u32 = std::ldexp(1.0, -24), k_fp32 = static_cast<double>(d + hv + 16);
  const Vector got = y.values();
  std::size_t failures = 0;
  double max_ratio = 0;
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t i = 0; i < d; ++i) {
      const auto e = static_cast<std::size_t>(r * d + i);
      double bf16_terms = 0;
      double fp32_terms = std::abs(c.inputs.x[e]) + std::abs(c.inputs.output_bias[static_cast<std::size_t>(i)]);
      for (std::int64_t j = 0; j < hv; ++j) {
        const double weight = std::abs(c.inputs.output_weight[static_cast<std::size_t>(i * hv + j)]);
        const auto rj = static_cast<std::size_t>(r * hv + j);
        const double gate = std::abs(silu(act.p[static_cast<std::size_t>(r * w + j)]));  // the u block comes first
        const double gain = std::abs(c.inputs.output_norm_weight[static_cast<std::size_t>(j)]);
        bf16_terms += weight * gate * gain * ln2_error[rj];
        fp32_terms += weight * std::abs(act.g[rj]);
      }
      const double bound = bf16_terms + k_fp32 * u32 * fp32_terms;
      const double error = std::abs(got[e] - y_ref[e]);
      max_ratio = std::max(max_ratio, error / bound);
      if (!(error <= bound) && failures++ < 3) {
        ADD_FAILURE() << "y[" << r << ", " << i << "]: got " << got[e] << ", want " << y_ref[e] << " (error " << error
                      << " > bound " << bound << ")";
      }
    }
  }
  EXPECT_EQ(failures, 0U) << "y: " << failures << " elements out of bounds; max error / bound " << max_ratio;
  EXPECT_TRUE(y.guard_intact()) << "y: written past T * D";
}

// The case with grad_y zeroed on the rows whose LN2 is not scale-free (see expect_gradients_close).
LayerCase on_scale_free_rows(const LayerCase& c, std::int64_t* zeroed_rows) {
  ref::HstuLayerRefActivations act;
  EXPECT_TRUE(ref::hstu_layer_activations_ref(c.problem, c.inputs, &act).is_ok());
  LayerCase masked = c;
  const std::int64_t d = c.problem.model_dim;
  *zeroed_rows = 0;
  for (std::int64_t r = 0; r < c.problem.total_tokens; ++r) {
    if (is_scale_free(act.a_rstd[static_cast<std::size_t>(r)], c.problem.layer_norm_epsilon)) continue;
    ++*zeroed_rows;
    std::fill_n(masked.grad_y.begin() + static_cast<std::ptrdiff_t>(r * d), d, 0.0);
  }
  return masked;
}

// Gradients, norm-wise per tensor: ||got - ref||_2 <= c u ||ref||_2, with grad_y zeroed on the
// rows whose LN2 is not scale-free: there rstd multiplies a's poorly determined scale in the
// backward too, and such a row dominates every gradient upstream of it (their forward is checked
// above). Rounding a tensor z to bf16 changes it by at most u ||z||. The backward sees eight
// roundings: the forward's q, k, v and a (it re-rounds the same p and reads the saved a), then
// d a, d q, d k and d v. Each reaches a gradient through maps of relative gain ~1 on the signal,
// the forward's four through LN2, whose input errors count relative to a's spread,
// (1 + |a_hat|) <~ 2 norm-wise: 4 * 2 + 4 = 12, c = 12. A dropped chain-rule term moves a
// gradient by O(its norm), ~20 times the bound (c u ~ 0.047).
void expect_gradients_close(const LayerCase& c, const OpRun& run) {
  Grads want;
  const Status status = ref::hstu_layer_backward_ref(c.problem, c.inputs, c.grad_y, &want);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  const double bound = 12 * std::ldexp(1.0, -8);
  for (std::size_t f = 0; f < kNumTensors; ++f) {
    const Vector got = run.grads[f].values();
    const Vector& expected = want.*kTensors[f].grad;
    ASSERT_EQ(got.size(), expected.size()) << kTensors[f].name;
    double error2 = 0, norm2 = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      error2 += (got[i] - expected[i]) * (got[i] - expected[i]);
      norm2 += expected[i] * expected[i];
    }
    EXPECT_LE(std::sqrt(error2), bound * std::sqrt(norm2))
        << "grad " << kTensors[f].name << ": relative error " << std::sqrt(error2 / norm2) << " > " << bound;
    EXPECT_TRUE(run.grads[f].guard_intact()) << "grad " << kTensors[f].name << ": written past its size";
  }
}

void expect_op_matches_reference(const LayerCase& c) {
  OpRun run(c);
  const ExecutionContext cpu;
  Status status = hstu_layer_forward(c.problem, run.forward, cpu);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_TRUE(run.saved.guard_intact()) << "saved: written past hstu_layer_saved_bytes";
  expect_forward_close(c, run.y);
  std::int64_t zeroed_rows = 0;
  const LayerCase masked = on_scale_free_rows(c, &zeroed_rows);
  SCOPED_TRACE("grad_y zeroed on " + std::to_string(zeroed_rows) + " of " + std::to_string(c.problem.total_tokens) +
               " rows (LN2 not scale-free)");
  run.grad_y = to_float(masked.grad_y);
  status = hstu_layer_backward(c.problem, run.backward(), cpu);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  expect_gradients_close(masked, run);
}

// 127 and 129: two of the attention CPU path's 64-row tiles, one row short and one over.
TEST(HstuLayerCpu, LengthsZeroOne127And129) {
  const std::uint64_t seed = parity::testing::test_seed(16201);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  expect_op_matches_reference(make_layer_case(options(), {16, 1, 64, 64}, {0, 1, 127, 129}, {}, seed));
}

TEST(HstuLayerCpu, TargetsAndContextualPrefix) {
  const std::uint64_t seed = parity::testing::test_seed(16202);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  HstuLayerProblem o = options(/*contextual_len=*/10);
  o.max_seq_len = 160;
  // Targets 0, 1, some, all of a sequence, and more than its length.
  expect_op_matches_reference(make_layer_case(o, {16, 1, 64, 64}, {129, 0, 40, 1, 12}, {7, 0, 40, 1, 50}, seed));
}

TEST(HstuLayerCpu, WindowWithFullAttentionTail) {
  const std::uint64_t seed = parity::testing::test_seed(16203);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  HstuLayerProblem o = options(0, /*max_attn_len=*/16, /*min_full_attn_len=*/4);
  expect_op_matches_reference(make_layer_case(o, {16, 2, 64, 64}, {70, 33}, {3, 2}, seed));
}

TEST(HstuLayerCpu, DimQkDiffersFromDimV) {
  const std::uint64_t seed = parity::testing::test_seed(16204);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  HstuLayerProblem o = options();
  o.causal = false;
  o.alpha = 0.1F;
  o.max_seq_len = 40;
  expect_op_matches_reference(make_layer_case(o, {24, 2, 64, 128}, {5, 31, 17}, {}, seed));
  expect_op_matches_reference(make_layer_case(options(), {24, 1, 128, 64}, {20, 9}, {2, 1}, seed + 1));
}

// Short sequences: there one key pair is a large share of every output, so a mask the op applied
// differently from the reference stands far above the bound.
TEST(HstuLayerCpu, ShortSequencesWithEveryMask) {
  const std::uint64_t seed = parity::testing::test_seed(16205);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  expect_op_matches_reference(make_layer_case(options(2), {16, 2, 64, 64}, {3, 5, 9, 2}, {1, 2, 3, 0}, seed));
  expect_op_matches_reference(make_layer_case(options(0, 2, 1), {16, 1, 64, 64}, {6, 9}, {1, 2}, seed + 1));
}

TEST(HstuLayerCpu, NoTokensGivesZeroGradients) {
  const LayerCase c = make_layer_case(options(), {16, 1, 64, 64}, {0, 0}, {}, 16206);
  OpRun run(c);
  const ExecutionContext cpu;
  ASSERT_TRUE(hstu_layer_forward(c.problem, run.forward, cpu).is_ok());
  ASSERT_TRUE(hstu_layer_backward(c.problem, run.backward(), cpu).is_ok());
  for (std::size_t f = 0; f < kNumTensors; ++f) {
    for (double value : run.grads[f].values()) EXPECT_EQ(value, 0.0) << kTensors[f].name;
    EXPECT_TRUE(run.grads[f].guard_intact()) << kTensors[f].name;
  }
  EXPECT_TRUE(run.y.guard_intact());
  // Without rows the activation tensors may be null.
  HstuLayerForwardArgs empty = run.forward;
  empty.x = nullptr;
  empty.y = nullptr;
  empty.saved = nullptr;
  EXPECT_TRUE(hstu_layer_forward(c.problem, empty, cpu).is_ok());
}

// ---- bad input: a clear error naming the parameter --------------------------------------------

// Whether `message` names `parameter` as a whole word (not inside a longer identifier).
bool names(const std::string& message, const std::string& parameter) {
  auto is_identifier = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) != 0 || ch == '_'; };
  for (std::size_t at = message.find(parameter); at != std::string::npos; at = message.find(parameter, at + 1)) {
    const std::size_t end = at + parameter.size();
    if ((at == 0 || !is_identifier(message[at - 1])) && (end == message.size() || !is_identifier(message[end]))) {
      return true;
    }
  }
  return false;
}

void expect_error(const Status& status, StatusCode code, const std::string& parameter) {
  EXPECT_EQ(status.code(), code) << status.to_string();
  EXPECT_TRUE(names(status.message(), parameter)) << "'" << parameter << "' not named in: " << status.to_string();
}

LayerCase small_case() { return make_layer_case(options(), {16, 1, 8, 8}, {3, 5, 2}, {1, 0, 2}, 16301); }

TEST(HstuLayerInput, OpRejectsBadOffsets) {
  const LayerCase c = small_case();
  OpRun run(c);
  const ExecutionContext cpu;
  HstuLayerForwardArgs args = run.forward;
  const std::int64_t decreasing[] = {0, 8, 3, 10};
  args.seq_offsets = decreasing;
  Status status = hstu_layer_forward(c.problem, args, cpu);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("seq_offsets[2]"), std::string::npos) << status.to_string();
  HstuLayerProblem bad = c.problem;
  bad.total_tokens = 9;  // seq_offsets[3] = 10
  status = hstu_layer_forward(bad, run.forward, cpu);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("seq_offsets[3]=10 differs from total_tokens=9"), std::string::npos)
      << status.to_string();
  args = run.forward;
  args.seq_offsets = nullptr;
  expect_error(hstu_layer_forward(c.problem, args, cpu), StatusCode::kInvalidArgument, "seq_offsets");
  bad = c.problem;
  bad.max_seq_len = 4;  // sequence 1 has 5 rows
  expect_error(hstu_layer_forward(bad, run.forward, cpu), StatusCode::kInvalidArgument, "max_seq_len");
}

TEST(HstuLayerInput, OpRejectsBadTargets) {
  const LayerCase c = small_case();
  OpRun run(c);
  const ExecutionContext cpu;
  HstuLayerForwardArgs args = run.forward;
  const std::int32_t negative[] = {1, -1, 0};
  args.num_targets = negative;
  expect_error(hstu_layer_forward(c.problem, args, cpu), StatusCode::kInvalidArgument, "num_targets");
  args.num_targets = nullptr;  // while has_num_targets
  expect_error(hstu_layer_forward(c.problem, args, cpu), StatusCode::kInvalidArgument, "num_targets");
}

TEST(HstuLayerInput, OpRejectsBadSizes) {
  const LayerCase c = small_case();
  OpRun run(c);
  const ExecutionContext cpu;
  HstuLayerProblem bad = c.problem;
  bad.dim_qk = 512;  // above the attention's 256
  expect_error(hstu_layer_forward(bad, run.forward, cpu), StatusCode::kInvalidArgument, "dim_qk");
  bad = c.problem;
  bad.dim_v = 0;
  expect_error(hstu_layer_forward(bad, run.forward, cpu), StatusCode::kInvalidArgument, "dim_v");
  bad = c.problem;
  bad.model_dim = 0;
  expect_error(hstu_layer_forward(bad, run.forward, cpu), StatusCode::kInvalidArgument, "model_dim");
  bad = c.problem;
  bad.heads = 0;
  expect_error(hstu_layer_backward(bad, run.backward(), cpu), StatusCode::kInvalidArgument, "heads");
  bad = c.problem;
  bad.layer_norm_epsilon = 0;
  expect_error(hstu_layer_forward(bad, run.forward, cpu), StatusCode::kInvalidArgument, "layer_norm_epsilon");
}

TEST(HstuLayerInput, OpRejectsNullPointersAndAliasing) {
  const LayerCase c = small_case();
  OpRun run(c);
  const ExecutionContext cpu;
  for (const char* which : {"x", "y", "saved", "uvqk_weight"}) {
    HstuLayerForwardArgs args = run.forward;
    if (std::string(which) == "x") args.x = nullptr;
    if (std::string(which) == "y") args.y = nullptr;
    if (std::string(which) == "saved") args.saved = nullptr;
    if (std::string(which) == "uvqk_weight") args.weights.uvqk_weight = nullptr;
    expect_error(hstu_layer_forward(c.problem, args, cpu), StatusCode::kInvalidArgument, which);
  }
  HstuLayerForwardArgs aliased = run.forward;
  aliased.y = const_cast<void*>(aliased.x);
  expect_error(hstu_layer_forward(c.problem, aliased, cpu), StatusCode::kInvalidArgument, "y");
  for (const char* which : {"grad_y", "grad_x", "saved", "output_norm_bias"}) {
    HstuLayerBackwardArgs args = run.backward();
    if (std::string(which) == "grad_y") args.grad_y = nullptr;
    if (std::string(which) == "grad_x") args.grad_x = nullptr;
    if (std::string(which) == "saved") args.forward.saved = nullptr;
    if (std::string(which) == "output_norm_bias") args.grads.output_norm_bias = nullptr;
    expect_error(hstu_layer_backward(c.problem, args, cpu), StatusCode::kInvalidArgument, which);
  }
}

TEST(HstuLayerInput, OpRefusesWhatTheCpuVariantCannotRun) {
  const LayerCase c = small_case();
  OpRun run(c);
  ExecutionContext gpu;
  gpu.device = DeviceKind::kGpu;
  EXPECT_EQ(hstu_layer_forward(c.problem, run.forward, gpu).code(), StatusCode::kUnsupported);
  HstuLayerProblem bf16 = c.problem;
  bf16.dtype = DType::kBF16;
  EXPECT_EQ(hstu_layer_backward(bf16, run.backward(), ExecutionContext{}).code(), StatusCode::kUnsupported);
}

TEST(HstuLayerInput, ReferenceRejectsBadInput) {
  const LayerCase c = small_case();
  Vector y;
  auto forward = [&](const HstuLayerProblem& problem, const In& inputs) {
    return ref::hstu_layer_forward_ref(problem, inputs, &y);
  };
  In bad = c.inputs;
  bad.seq_offsets = {0, 8, 3, 10};
  const Status status = forward(c.problem, bad);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("seq_offsets[2]"), std::string::npos) << status.to_string();
  HstuLayerProblem problem = c.problem;
  problem.total_tokens = 9;
  expect_error(forward(problem, c.inputs), StatusCode::kInvalidArgument, "total_tokens");
  problem = c.problem;
  problem.model_dim = 0;
  expect_error(forward(problem, c.inputs), StatusCode::kInvalidArgument, "model_dim");
  problem = c.problem;
  problem.dim_qk = 512;
  expect_error(forward(problem, c.inputs), StatusCode::kInvalidArgument, "dim_qk");
  bad = c.inputs;
  bad.x.pop_back();
  expect_error(forward(c.problem, bad), StatusCode::kInvalidArgument, "x");
  bad = c.inputs;
  bad.uvqk_weight.push_back(0);
  expect_error(forward(c.problem, bad), StatusCode::kInvalidArgument, "uvqk_weight");
  bad = c.inputs;
  bad.num_targets = {1, 2};
  expect_error(forward(c.problem, bad), StatusCode::kInvalidArgument, "num_targets");
  Grads grads;
  expect_error(ref::hstu_layer_backward_ref(c.problem, c.inputs, Vector(3), &grads), StatusCode::kInvalidArgument,
               "grad_y");
}

}  // namespace
}  // namespace parity::attention
