// Dense layers: each CPU variant against its fp64 reference (forward and backward), and each
// reference's backward against central finite differences of its own forward.
//
// Tolerances (derived, not tuned): an fp32 sum of K products has |error| <= gamma_K * sum |a b|
// with gamma_K = K u / (1 - K u) ~ K u (Higham, Accuracy and Stability, 3.1), u = 2^-24. Each test
// builds that magnitude sum by running the fp64 reference on |inputs| and allows (K + c) u times
// it, c counting the extra roundings (bias add, ReLU mask, elementwise products) named per test.
// Finite differences: central, h = 1e-6 in fp64; truncation O(h^2 |f'''|) ~ 1e-12 and rounding
// ~ 1e-16 |f| / h ~ 1e-10 for O(1) values, so 1e-7 relative to the gradient scale is safe.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/rng.hpp"
#include "parity/nn/interaction.hpp"
#include "parity/nn/linear.hpp"
#include "parity/nn/loss.hpp"
#include "parity/nn/optimizer.hpp"
#include "reference/dlrm_dense.hpp"
#include "reference/nn.hpp"

namespace parity::nn {
namespace {

using ref::Vector;
constexpr double kUnitRoundoff = 0x1p-24;
const ExecutionContext kCpu{};

std::vector<float> random_floats(Rng& rng, std::int64_t count, double scale = 1.0) {
  std::vector<float> values(count);
  for (auto& value : values) value = static_cast<float>(rng.normal(0.0, scale));
  return values;
}
Vector to_double(const std::vector<float>& values) { return Vector(values.begin(), values.end()); }
Vector absolute(Vector values) {
  for (auto& value : values) value = std::fabs(value);
  return values;
}

// |got - want| <= factor * u * magnitude, element by element; reports the worst.
void expect_within(const std::vector<float>& got, const Vector& want, const Vector& magnitude,
                   double factor, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t k = 0; k < got.size(); ++k) {
    const double bound = factor * kUnitRoundoff * magnitude[k] + 1e-30;
    ASSERT_LE(std::fabs(got[k] - want[k]), bound)
        << what << "[" << k << "]: got " << got[k] << ", want " << want[k] << ", bound " << bound;
  }
}

// Central differences of the scalar loss sum(r * f(x)) with respect to every element of x.
Vector finite_difference(Vector x, const std::function<double(const Vector&)>& loss) {
  constexpr double kStep = 1e-6;
  Vector grad(x.size());
  for (std::size_t k = 0; k < x.size(); ++k) {
    const double saved = x[k];
    x[k] = saved + kStep;
    const double plus = loss(x);
    x[k] = saved - kStep;
    const double minus = loss(x);
    x[k] = saved;
    grad[k] = (plus - minus) / (2 * kStep);
  }
  return grad;
}

double weighted_sum(const Vector& values, const Vector& weights) {
  double sum = 0;
  for (std::size_t k = 0; k < values.size(); ++k) sum += values[k] * weights[k];
  return sum;
}

void expect_close_fd(const Vector& analytic, const Vector& numeric, const std::string& what) {
  double scale = 1.0;
  for (double value : numeric) scale = std::max(scale, std::fabs(value));
  for (std::size_t k = 0; k < analytic.size(); ++k) {
    ASSERT_NEAR(analytic[k], numeric[k], 1e-7 * scale) << what << "[" << k << "]";
  }
}

// The dot-interaction reference is shared with the GPU kernels' tests (src/reference/dlrm_dense.hpp);
// these adapt it to this file's shapes.
Vector dot_forward(std::int64_t batch, std::int64_t features, std::int64_t dim, const Vector& bottom,
                   const Vector& embeddings) {
  return ref::interaction_dot_forward(batch, static_cast<int>(features), static_cast<int>(dim), bottom, embeddings);
}
struct DotGrads {
  Vector bottom, embeddings;
};
DotGrads dot_backward(std::int64_t batch, std::int64_t features, std::int64_t dim, const Vector& bottom,
                      const Vector& embeddings, const Vector& grad_output) {
  DotGrads grads;
  ref::interaction_dot_backward(batch, static_cast<int>(features), static_cast<int>(dim), bottom, embeddings,
                                grad_output, &grads.bottom, &grads.embeddings);
  return grads;
}
TEST(NnLinear, CpuMatchesReferenceForwardAndBackward) {
  const std::uint64_t seed = testing::test_seed(14);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  struct Shape { std::int64_t batch, in, out; Activation activation; BiasMode bias; };
  for (const Shape& shape : {Shape{1, 1, 1, Activation::kNone, BiasMode::kBias},
                             Shape{7, 13, 5, Activation::kRelu, BiasMode::kBias},
                             Shape{33, 17, 111, Activation::kRelu, BiasMode::kBias},
                             Shape{16, 64, 3, Activation::kNone, BiasMode::kNone}}) {
    LinearProblem problem{shape.batch, shape.in, shape.out, shape.activation, shape.bias};
    auto x = random_floats(rng, shape.batch * shape.in);
    auto w = random_floats(rng, shape.out * shape.in, 0.3);
    auto bias = random_floats(rng, shape.out);
    std::vector<float> y(shape.batch * shape.out, NAN);
    ASSERT_TRUE(linear_forward(problem, {x.data(), w.data(), bias.data(), y.data()}, kCpu).is_ok());
    const Vector ref_bias = shape.bias == BiasMode::kBias ? to_double(bias) : Vector{};
    const Vector want = ref::linear_forward(shape.batch, shape.in, shape.out, shape.activation,
                                            to_double(x), to_double(w), ref_bias);
    const Vector magnitude = ref::linear_forward(shape.batch, shape.in, shape.out, Activation::kNone,
                                                 absolute(to_double(x)), absolute(to_double(w)),
                                                 absolute(ref_bias));
    // K = in products, +1 for the bias add (ReLU is exact).
    expect_within(y, want, magnitude, static_cast<double>(shape.in + 1), "forward");

    auto dy = random_floats(rng, shape.batch * shape.out);
    std::vector<float> dx(shape.batch * shape.in, NAN), dw(shape.out * shape.in, NAN);
    std::vector<float> db(shape.out, NAN), dpre(shape.batch * shape.out);
    LinearBackwardArgs args;
    args.input = x.data();
    args.weight = w.data();
    args.output = y.data();
    args.grad_output = dy.data();
    args.grad_input = dx.data();
    args.grad_weight = dw.data();
    args.grad_bias = shape.bias == BiasMode::kBias ? db.data() : nullptr;
    args.grad_preactivation = dpre.data();
    ASSERT_TRUE(linear_backward(problem, args, kCpu).is_ok());
    // The mask comes from fp32 y; the reference uses the same y so both mask the same entries.
    const auto grads = ref::linear_backward(shape.batch, shape.in, shape.out, shape.activation,
                                            to_double(x), to_double(w), to_double(y), to_double(dy));
    const auto bounds = ref::linear_backward(shape.batch, shape.in, shape.out, Activation::kNone,
                                             absolute(to_double(x)), absolute(to_double(w)),
                                             to_double(y), absolute(to_double(dy)));
    expect_within(dx, grads.input, bounds.input, static_cast<double>(shape.out + 1), "grad_input");
    expect_within(dw, grads.weight, bounds.weight, static_cast<double>(shape.batch + 1), "grad_weight");
    if (shape.bias == BiasMode::kBias) {
      expect_within(db, grads.bias, bounds.bias, static_cast<double>(shape.batch + 1), "grad_bias");
    }
  }
}

TEST(NnLinear, ReferenceBackwardMatchesFiniteDifferences) {
  Rng rng(testing::test_seed(15));
  const std::int64_t batch = 3, in = 4, out = 5;
  const Vector x = to_double(random_floats(rng, batch * in));
  const Vector w = to_double(random_floats(rng, out * in));
  const Vector bias = to_double(random_floats(rng, out));
  const Vector r = to_double(random_floats(rng, batch * out));
  for (Activation activation : {Activation::kNone, Activation::kRelu}) {
    const Vector y = ref::linear_forward(batch, in, out, activation, x, w, bias);
    // Keep away from the ReLU kink so differences see one side only.
    const Vector pre = ref::linear_forward(batch, in, out, Activation::kNone, x, w, bias);
    for (double value : pre) ASSERT_GT(std::fabs(value), 1e-3);
    const auto grads = ref::linear_backward(batch, in, out, activation, x, w, y, r);
    expect_close_fd(grads.input, finite_difference(x, [&](const Vector& v) {
      return weighted_sum(ref::linear_forward(batch, in, out, activation, v, w, bias), r);
    }), "input");
    expect_close_fd(grads.weight, finite_difference(w, [&](const Vector& v) {
      return weighted_sum(ref::linear_forward(batch, in, out, activation, x, v, bias), r);
    }), "weight");
    expect_close_fd(grads.bias, finite_difference(bias, [&](const Vector& v) {
      return weighted_sum(ref::linear_forward(batch, in, out, activation, x, w, v), r);
    }), "bias");
  }
}

TEST(NnLinear, BadProblemsNameTheField) {
  LinearProblem problem{0, 4, 4};
  Status status = problem.validate();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("batch_size=0"), std::string::npos);
  problem = {8, 4, 4, Activation::kNone, BiasMode::kBias, DType::kF16};
  EXPECT_NE(problem.validate().message().find("dtype=fp16"), std::string::npos);
  // bf16 is a valid problem that no CPU variant runs: unsupported, with every variant's reason.
  problem.dtype = DType::kBF16;
  std::vector<float> buffer(64);
  status = linear_forward(problem, {buffer.data(), buffer.data(), buffer.data(), buffer.data()}, kCpu);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("fp32 only"), std::string::npos) << status.message();
  problem.dtype = DType::kF32;
  const ExecutionContext gpu{DeviceKind::kGpu};
  status = linear_forward(problem, {buffer.data(), buffer.data(), buffer.data(), buffer.data()}, gpu);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("no GPU backend"), std::string::npos) << status.message();
}

TEST(NnDotInteraction, CpuMatchesReferenceForwardAndBackward) {
  const std::uint64_t seed = testing::test_seed(16);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  for (auto [batch, features, dim] : {std::array<std::int64_t, 3>{1, 1, 1},
                                      std::array<std::int64_t, 3>{5, 3, 7},
                                      std::array<std::int64_t, 3>{9, 26, 16}}) {
    DotInteractionProblem problem{batch, features, dim};
    auto bottom = random_floats(rng, batch * dim);
    auto embeddings = random_floats(rng, batch * features * dim);
    std::vector<float> out(batch * problem.output_dim(), NAN);
    ASSERT_TRUE(dot_interaction_forward(problem, {bottom.data(), embeddings.data(), out.data()}, kCpu).is_ok());
    const Vector want = dot_forward(batch, features, dim, to_double(bottom), to_double(embeddings));
    const Vector magnitude = dot_forward(batch, features, dim, absolute(to_double(bottom)),
                                                          absolute(to_double(embeddings)));
    expect_within(out, want, magnitude, static_cast<double>(dim), "forward");  // D products

    auto grad_out = random_floats(rng, batch * problem.output_dim());
    std::vector<float> grad_bottom(batch * dim, NAN), grad_embeddings(batch * features * dim, NAN);
    ASSERT_TRUE(dot_interaction_backward(problem, {bottom.data(), embeddings.data(), grad_out.data(),
                                                   grad_bottom.data(), grad_embeddings.data()}, kCpu).is_ok());
    const auto grads = dot_backward(batch, features, dim, to_double(bottom),
                                                     to_double(embeddings), to_double(grad_out));
    const auto bounds = dot_backward(batch, features, dim, absolute(to_double(bottom)),
                                                      absolute(to_double(embeddings)),
                                                      absolute(to_double(grad_out)));
    // Each gradient element sums F+1 terms (F pair terms and the pass-through).
    expect_within(grad_bottom, grads.bottom, bounds.bottom, static_cast<double>(features + 1), "grad_bottom");
    expect_within(grad_embeddings, grads.embeddings, bounds.embeddings, static_cast<double>(features + 1),
                  "grad_embeddings");
  }
}

TEST(NnDotInteraction, ReferenceBackwardMatchesFiniteDifferences) {
  Rng rng(testing::test_seed(17));
  const std::int64_t batch = 2, features = 3, dim = 4;
  const Vector bottom = to_double(random_floats(rng, batch * dim));
  const Vector embeddings = to_double(random_floats(rng, batch * features * dim));
  const Vector r = to_double(random_floats(rng, batch * (dim + 6)));
  const auto grads = dot_backward(batch, features, dim, bottom, embeddings, r);
  expect_close_fd(grads.bottom, finite_difference(bottom, [&](const Vector& v) {
    return weighted_sum(dot_forward(batch, features, dim, v, embeddings), r);
  }), "bottom");
  expect_close_fd(grads.embeddings, finite_difference(embeddings, [&](const Vector& v) {
    return weighted_sum(dot_forward(batch, features, dim, bottom, v), r);
  }), "embeddings");
}

TEST(NnCrossLayer, CpuMatchesReferenceForwardAndBackward) {
  const std::uint64_t seed = testing::test_seed(18);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  const std::int64_t batch = 6, width = 20, rank = 7;
  CrossLayerProblem problem{batch, width, rank};
  auto x0 = random_floats(rng, batch * width), x = random_floats(rng, batch * width);
  auto v = random_floats(rng, rank * width, 0.3), u = random_floats(rng, width * rank, 0.3);
  auto c = random_floats(rng, width);
  std::vector<float> low(batch * rank), cross(batch * width), out(batch * width, NAN);
  ASSERT_TRUE(cross_layer_forward(problem, {x0.data(), x.data(), v.data(), u.data(), c.data(),
                                            low.data(), cross.data(), out.data()}, kCpu).is_ok());
  const Vector want = ref::cross_layer_forward(batch, width, rank, to_double(x0), to_double(x),
                                               to_double(v), to_double(u), to_double(c));
  const Vector magnitude = ref::cross_layer_forward(batch, width, rank, absolute(to_double(x0)),
                                                    absolute(to_double(x)), absolute(to_double(v)),
                                                    absolute(to_double(u)), absolute(to_double(c)));
  // low sums W products, cross R more (+1 bias) on top of low's error, then x0 * cross + x (+2).
  expect_within(out, want, magnitude, static_cast<double>(width + rank + 3), "forward");

  auto g = random_floats(rng, batch * width);
  std::vector<float> grad_x0(batch * width, 0.0f), grad_x(batch * width, NAN);
  std::vector<float> grad_v(rank * width), grad_u(width * rank), grad_c(width);
  std::vector<float> scratch_cross(batch * width), scratch_low(batch * rank);
  CrossLayerBackwardArgs args{x0.data(), x.data(), v.data(), u.data(), low.data(), cross.data(),
                              g.data(), grad_x0.data(), grad_x.data(), grad_v.data(), grad_u.data(),
                              grad_c.data(), scratch_cross.data(), scratch_low.data()};
  ASSERT_TRUE(cross_layer_backward(problem, args, kCpu).is_ok());
  const auto grads = ref::cross_layer_backward(batch, width, rank, to_double(x0), to_double(x), to_double(v),
                                               to_double(u), to_double(c), to_double(g));
  const auto bounds = ref::cross_layer_backward(batch, width, rank, absolute(to_double(x0)),
                                                absolute(to_double(x)), absolute(to_double(v)),
                                                absolute(to_double(u)), absolute(to_double(c)),
                                                absolute(to_double(g)));
  // The longest chain: cross (W + R + 1, from the forward), d low (W), then B (dV) or R (dx) sums.
  const double chain = static_cast<double>(2 * width + rank + batch + 4);
  expect_within(grad_x0, grads.x0, bounds.x0, chain, "grad_x0");
  expect_within(grad_x, grads.x, bounds.x, chain, "grad_input");
  expect_within(grad_v, grads.v, bounds.v, chain, "grad_v");
  expect_within(grad_u, grads.u, bounds.u, chain, "grad_u");
  expect_within(grad_c, grads.c, bounds.c, chain, "grad_bias");
}

TEST(NnCrossLayer, ReferenceBackwardMatchesFiniteDifferences) {
  Rng rng(testing::test_seed(19));
  const std::int64_t batch = 2, width = 5, rank = 2;
  const Vector x0 = to_double(random_floats(rng, batch * width)), x = to_double(random_floats(rng, batch * width));
  const Vector v = to_double(random_floats(rng, rank * width)), u = to_double(random_floats(rng, width * rank));
  const Vector c = to_double(random_floats(rng, width)), r = to_double(random_floats(rng, batch * width));
  const auto grads = ref::cross_layer_backward(batch, width, rank, x0, x, v, u, c, r);
  const auto forward = [&](const Vector& a, const Vector& b, const Vector& vv, const Vector& uu,
                           const Vector& cc) {
    return weighted_sum(ref::cross_layer_forward(batch, width, rank, a, b, vv, uu, cc), r);
  };
  expect_close_fd(grads.x0, finite_difference(x0, [&](const Vector& p) { return forward(p, x, v, u, c); }), "x0");
  expect_close_fd(grads.x, finite_difference(x, [&](const Vector& p) { return forward(x0, p, v, u, c); }), "x");
  expect_close_fd(grads.v, finite_difference(v, [&](const Vector& p) { return forward(x0, x, p, u, c); }), "v");
  expect_close_fd(grads.u, finite_difference(u, [&](const Vector& p) { return forward(x0, x, v, p, c); }), "u");
  expect_close_fd(grads.c, finite_difference(c, [&](const Vector& p) { return forward(x0, x, v, u, p); }), "c");
}

TEST(NnBceLoss, CpuMatchesReferenceAndFiniteDifferences) {
  Rng rng(testing::test_seed(20));
  const std::int64_t batch = 37;
  auto logits = random_floats(rng, batch, 3.0);
  logits[0] = 80.0f;  // saturated both ways: the stable form must not overflow
  logits[1] = -80.0f;
  std::vector<float> labels(batch);
  for (auto& label : labels) label = rng.uniform() < 0.3 ? 1.0f : 0.0f;
  double loss = 0;
  std::vector<float> grad(batch, NAN);
  ASSERT_TRUE(bce_with_logits({batch}, {logits.data(), labels.data(), &loss, grad.data()}, kCpu).is_ok());
  Vector want_grad;
  const double want = ref::bce_with_logits(to_double(logits), to_double(labels), &want_grad);
  ASSERT_TRUE(std::isfinite(loss));
  EXPECT_NEAR(loss, want, 1e-12 * want);  // both sum per-sample fp64 terms
  // fp32 sigmoid: exp, add and divide each round once (3u), the subtraction and the 1/B scale
  // once each: 5u relative to (s + y) / B.
  Vector magnitude(batch);
  for (std::int64_t b = 0; b < batch; ++b) magnitude[b] = (1.0 + labels[b]) / static_cast<double>(batch);
  expect_within(grad, want_grad, magnitude, 5.0, "grad_logits");
  const Vector fd = finite_difference(to_double(logits), [&](const Vector& z) {
    return ref::bce_with_logits(z, to_double(labels), nullptr);
  });
  expect_close_fd(want_grad, fd, "reference grad");
  Status bad = BceLossProblem{0}.validate();
  EXPECT_NE(bad.message().find("batch_size=0"), std::string::npos);
}

TEST(NnDenseOptimizer, CpuMatchesReferenceForEveryKind) {
  Rng rng(testing::test_seed(21));
  const std::int64_t n = 101;
  for (DenseOptimizerKind kind : {DenseOptimizerKind::kSgd, DenseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam}) {
    DenseOptimizerProblem problem{n, kind, 0.05f, 1e-8f, 0.9f, 0.999f, 0.01f, 1};
    auto w = random_floats(rng, n);
    std::vector<float> s1(n, 0.0f), s2(n, 0.0f);
    Vector ref_w = to_double(w), ref_s1(n, 0.0), ref_s2(n, 0.0);
    for (int step = 1; step <= 3; ++step) {
      problem.step = step;
      auto g = random_floats(rng, n);
      const Vector before = ref_w;
      ASSERT_TRUE(dense_optimizer_step(problem, {w.data(), g.data(), s1.data(), s2.data()}, kCpu).is_ok());
      ref::dense_optimizer_step(problem, ref_w, to_double(g), ref_s1, ref_s2);
      // Each step: the update is a chain of <= 12 fp32 roundings (Adam's longest) relative to its
      // size, the subtraction rounds once relative to |w|; errors of earlier steps carry over,
      // so the bound grows with the step count.
      Vector magnitude(n);
      for (std::int64_t i = 0; i < n; ++i) magnitude[i] = std::fabs(ref_w[i]) + std::fabs(ref_w[i] - before[i]);
      expect_within(w, ref_w, magnitude, 13.0 * step, std::string(kind == DenseOptimizerKind::kSgd ? "sgd" : "adaptive"));
      ref_w = to_double(w);  // continue from the fp32 weights so steps do not compound
    }
  }
  DenseOptimizerProblem bad{4, DenseOptimizerKind::kAdam};
  bad.step = 0;
  EXPECT_NE(bad.validate().message().find("step=0"), std::string::npos);
}

}  // namespace
}  // namespace parity::nn
