// The HSTU layer's GPU variant (bf16 activations, fp32 master weights and gradients) against the
// fp64 reference (src/reference/hstu_layer_ref.*) on seeded cases with derived norm-wise bounds;
// repeatable gradients; no rows; bad input naming the parameter. Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/attention_gpu_common.hpp"
#include "common/test_support.hpp"
#include "parity/attention/hstu_layer.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "reference/hstu_layer_ref.hpp"

namespace parity::attention {
namespace {

using gpu_testing::upload;
using Vector = std::vector<double>;

struct Case {
  HstuLayerProblem problem;
  ref::HstuLayerRefInputs inputs;  // x and grad_y bf16-representable, the weights fp32
  Vector grad_y;
};

double round_bf16(double value) { return bf16_bits_to_float(float_to_bf16_bits(static_cast<float>(value))); }

Vector draw(Rng& rng, std::int64_t count, double center, double scale, bool bf16) {
  Vector values(static_cast<std::size_t>(count));
  for (double& v : values) {
    const double drawn = center + scale * rng.uniform(-1.0, 1.0);
    v = bf16 ? round_bf16(drawn) : static_cast<float>(drawn);
  }
  return values;
}

Case make_case(HstuLayerProblem p, const std::vector<std::int64_t>& lengths, const std::vector<std::int32_t>& targets,
               std::uint64_t seed) {
  Case c;
  p.dtype = DType::kBF16;
  p.batch = static_cast<std::int64_t>(lengths.size());
  p.has_num_targets = !targets.empty();
  c.inputs.seq_offsets.assign(1, 0);
  for (std::int64_t length : lengths) c.inputs.seq_offsets.push_back(c.inputs.seq_offsets.back() + length);
  p.total_tokens = c.inputs.seq_offsets.back();
  if (p.max_seq_len == 0) p.max_seq_len = std::max<std::int64_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  c.inputs.num_targets = targets;
  c.problem = p;
  Rng rng(seed);
  const std::int64_t t = p.total_tokens, d = p.model_dim, w = p.uvqk_width(), hv = p.attention_width();
  c.inputs.x = draw(rng, t * d, 0.25, 1.0, true);
  c.inputs.norm_weight = draw(rng, d, 1.0, 0.5, false);
  c.inputs.norm_bias = draw(rng, d, 0.0, 0.25, false);
  c.inputs.uvqk_weight = draw(rng, w * d, 0.0, 1.5 / std::sqrt(static_cast<double>(d)), false);
  c.inputs.uvqk_bias = draw(rng, w, 0.0, 0.25, false);
  c.inputs.output_norm_weight = draw(rng, hv, 1.0, 0.5, false);
  c.inputs.output_norm_bias = draw(rng, hv, 0.0, 0.25, false);
  c.inputs.output_weight = draw(rng, d * hv, 0.0, 1.5 / std::sqrt(static_cast<double>(hv)), false);
  c.inputs.output_bias = draw(rng, d, 0.0, 0.25, false);
  c.grad_y = draw(rng, t * d, 0.0, 1.0, true);
  return c;
}

HstuLayerProblem shape(int model_dim, int heads, int dim_qk, int dim_v) {
  HstuLayerProblem p;
  p.model_dim = model_dim;
  p.heads = heads;
  p.dim_qk = dim_qk;
  p.dim_v = dim_v;
  return p;
}

std::vector<std::uint16_t> to_bf16(const Vector& values) {
  std::vector<std::uint16_t> out(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) out[i] = float_to_bf16_bits(static_cast<float>(values[i]));
  return out;
}
std::vector<float> to_f32(const Vector& values) { return {values.begin(), values.end()}; }

Vector download_bf16(const gpu::DeviceBuffer& buffer, std::size_t count) {
  auto bits = gpu::download<std::uint16_t>(buffer, count);
  EXPECT_TRUE(bits.is_ok());
  Vector out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = bf16_bits_to_float((*bits)[i]);
  return out;
}
Vector download_f32(const gpu::DeviceBuffer& buffer, std::size_t count) {
  auto values = gpu::download<float>(buffer, count);
  EXPECT_TRUE(values.is_ok());
  return {values->begin(), values->end()};
}

// Device copies of a case and the layer's outputs. Parameters in HstuLayerWeights' order.
struct DeviceRun {
  std::vector<gpu::DeviceBuffer> params, grads;
  gpu::DeviceBuffer x, grad_y, offsets, targets, y, grad_x, saved, workspace;
  HstuLayerForwardArgs forward;

  explicit DeviceRun(const Case& c) {
    const ref::HstuLayerRefInputs& in = c.inputs;
    for (const Vector* param : {&in.norm_weight, &in.norm_bias, &in.uvqk_weight, &in.uvqk_bias,
                                &in.output_norm_weight, &in.output_norm_bias, &in.output_weight, &in.output_bias}) {
      params.push_back(upload(to_f32(*param)));
      grads.push_back(upload(std::vector<float>(param->size(), 0.0F)));
      EXPECT_TRUE(grads.back().fill_bytes(0xff).is_ok());  // NaN: every gradient must be written
    }
    x = upload(to_bf16(in.x));
    grad_y = upload(to_bf16(c.grad_y));
    offsets = upload(in.seq_offsets);
    targets = upload(in.num_targets);
    y = upload(std::vector<std::uint16_t>(in.x.size()));
    grad_x = upload(std::vector<std::uint16_t>(in.x.size()));
    saved = upload(std::vector<unsigned char>(static_cast<std::size_t>(hstu_layer_saved_bytes(c.problem))));
    ExecutionContext gpu_context;
    gpu_context.device = DeviceKind::kGpu;
    const auto workspace_bytes = hstu_layer_workspace_bytes(c.problem, gpu_context);
    EXPECT_TRUE(workspace_bytes.is_ok()) << workspace_bytes.status().to_string();
    workspace = upload(std::vector<unsigned char>(static_cast<std::size_t>(workspace_bytes.is_ok() ? *workspace_bytes : 0)));
    forward.x = x.data();
    forward.seq_offsets = offsets.as<std::int64_t>();
    forward.num_targets = c.problem.has_num_targets ? targets.as<std::int32_t>() : nullptr;
    forward.host_seq_offsets = in.seq_offsets.data();
    forward.host_num_targets = c.problem.has_num_targets ? in.num_targets.data() : nullptr;
    forward.weights = {params[0].as<float>(), params[1].as<float>(), params[2].as<float>(), params[3].as<float>(),
                       params[4].as<float>(), params[5].as<float>(), params[6].as<float>(), params[7].as<float>()};
    forward.y = y.data();
    forward.saved = saved.data();
    forward.workspace = workspace.data();
    forward.workspace_bytes = workspace_bytes.is_ok() ? *workspace_bytes : 0;
  }

  HstuLayerBackwardArgs backward() {
    HstuLayerBackwardArgs b;
    b.forward = forward;
    b.grad_y = grad_y.data();
    b.grad_x = grad_x.data();
    b.grads = {grads[0].as<float>(), grads[1].as<float>(), grads[2].as<float>(), grads[3].as<float>(),
               grads[4].as<float>(), grads[5].as<float>(), grads[6].as<float>(), grads[7].as<float>()};
    return b;
  }
};

ExecutionContext gpu_context(bool deterministic = false) {
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  context.deterministic = deterministic;
  return context;
}

// Rows whose output layer norm is scale-free: var(a) >= 99 eps (as in tests/unit/hstu_layer_test.cpp:
// elsewhere eps dominates and LN2 passes on a's scale, which bf16 q and k leave undetermined).
std::vector<bool> scale_free_rows(const Case& c) {
  ref::HstuLayerRefActivations act;
  EXPECT_TRUE(ref::hstu_layer_activations_ref(c.problem, c.inputs, &act).is_ok());
  std::vector<bool> rows(static_cast<std::size_t>(c.problem.total_tokens));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    rows[r] = act.a_rstd[r] * std::sqrt(static_cast<double>(c.problem.layer_norm_epsilon)) <= 0.1;
  }
  return rows;
}

double norm2(const Vector& values) {
  double sum = 0;
  for (double v : values) sum += v * v;
  return std::sqrt(sum);
}

// Norm-wise bounds, u = 2^-8 (bf16). Every bf16 rounding z -> z(1 + d), |d| <= u, moves what it
// feeds by at most u times that signal; maps of gain ~1 on the signal pass it on (as in the CPU
// test's argument), the output norm at most (1 + |a_hat|) <= 2 times (errors count relative to a's
// spread on scale-free rows), q and k's through the scores with SiLU's sensitivity <= 1.3.
// Forward, y - x = g W_out^T + b_out: before the output norm W_uvqk, n, q, k, v, the attention's
// P and a (7 roundings, 1.3 on two: 7.6) times 2 = 15.2; SiLU(u)'s W_uvqk, n, u times 1.1 = 3.3;
// then g and W_out: 2. c = 21 (20.5), plus y's own rounding u |y|:
//   ||y - y_ref|| <= 21 u ||y_ref - x|| + u ||y_ref||   over the scale-free rows.
// Gradients: the forward's four that reach them (W_uvqk, n, p, a) times 2 = 8; the backward's
// W_out, g, d g, d u / d a, the attention's P and dS, d q / d k / d v, W_uvqk in d n, d x's output:
// 9, 1.3 on three = 9.9; c = 18, grad_y zeroed on the other rows. A dropped chain-rule term moves
// a result by O(its norm): 1 / (21 u) = 12 times these bounds and more.
constexpr double kForwardConstant = 21;
constexpr double kGradientConstant = 18;

void expect_matches_reference(const Case& c) {
  SCOPED_TRACE("T=" + std::to_string(c.problem.total_tokens));
  const double u = std::ldexp(1.0, -8);
  const std::vector<bool> scale_free = scale_free_rows(c);
  std::int64_t zeroed = 0;
  Case masked = c;  // grad_y zeroed on the rows that are not scale-free
  const auto d = static_cast<std::size_t>(c.problem.model_dim);
  for (std::size_t r = 0; r < scale_free.size(); ++r) {
    if (scale_free[r]) continue;
    ++zeroed;
    std::fill_n(masked.grad_y.begin() + static_cast<std::ptrdiff_t>(r * d), d, 0.0);
  }
  SCOPED_TRACE(std::to_string(zeroed) + " rows not scale-free");
  DeviceRun run(masked);
  ASSERT_TRUE(hstu_layer_forward(c.problem, run.forward, gpu_context()).is_ok());
  HstuLayerBackwardArgs backward = run.backward();
  const Status status = hstu_layer_backward(c.problem, backward, gpu_context());
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  ASSERT_TRUE(gpu::synchronize().is_ok());

  Vector y_ref;
  ASSERT_TRUE(ref::hstu_layer_forward_ref(c.problem, c.inputs, &y_ref).is_ok());
  const Vector y = download_bf16(run.y, y_ref.size());
  Vector error, residual, whole;
  for (std::size_t e = 0; e < y.size(); ++e) {
    if (!scale_free[e / d]) continue;
    error.push_back(y[e] - y_ref[e]);
    residual.push_back(y_ref[e] - c.inputs.x[e]);
    whole.push_back(y_ref[e]);
  }
  EXPECT_LE(norm2(error), kForwardConstant * u * norm2(residual) + u * norm2(whole))
      << "y: relative error " << norm2(error) / norm2(residual);

  ref::HstuLayerRefGradients want;
  ASSERT_TRUE(ref::hstu_layer_backward_ref(c.problem, c.inputs, masked.grad_y, &want).is_ok());
  const std::pair<const char*, Vector> got[] = {
      {"x", download_bf16(run.grad_x, want.x.size())},
      {"norm_weight", download_f32(run.grads[0], want.norm_weight.size())},
      {"norm_bias", download_f32(run.grads[1], want.norm_bias.size())},
      {"uvqk_weight", download_f32(run.grads[2], want.uvqk_weight.size())},
      {"uvqk_bias", download_f32(run.grads[3], want.uvqk_bias.size())},
      {"output_norm_weight", download_f32(run.grads[4], want.output_norm_weight.size())},
      {"output_norm_bias", download_f32(run.grads[5], want.output_norm_bias.size())},
      {"output_weight", download_f32(run.grads[6], want.output_weight.size())},
      {"output_bias", download_f32(run.grads[7], want.output_bias.size())}};
  const Vector* expected[] = {&want.x, &want.norm_weight, &want.norm_bias, &want.uvqk_weight, &want.uvqk_bias,
                              &want.output_norm_weight, &want.output_norm_bias, &want.output_weight,
                              &want.output_bias};
  for (std::size_t f = 0; f < 9; ++f) {
    Vector difference(expected[f]->size());
    for (std::size_t i = 0; i < difference.size(); ++i) difference[i] = got[f].second[i] - (*expected[f])[i];
    EXPECT_LE(norm2(difference), kGradientConstant * u * norm2(*expected[f]))
        << "grad " << got[f].first << ": relative error " << norm2(difference) / norm2(*expected[f]);
  }
}

TEST(HstuLayerGpu, MatchesReferenceCausalWithTargets) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(16201);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  // Lengths 0, 1, the kernels' tile +- 1, targets none / some / longer than the sequence.
  expect_matches_reference(make_case(shape(64, 2, 64, 64), {0, 1, 63, 65, 127, 129}, {0, 1, 5, 70, 3, 0}, seed));
}

TEST(HstuLayerGpu, MatchesReferenceContextWindowAndScale) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(16202);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  HstuLayerProblem p = shape(128, 2, 64, 64);
  p.contextual_len = 10;
  p.max_attn_len = 32;
  p.min_full_attn_len = 8;
  p.max_seq_len = 300;  // above every length: the attention's 1/N
  expect_matches_reference(make_case(p, {100, 7, 130}, {}, seed));
}

TEST(HstuLayerGpu, MatchesReferenceWideHeadsAndUnequalDims) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(16203);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  expect_matches_reference(make_case(shape(128, 1, 128, 128), {90, 129}, {2, 4}, seed));
  expect_matches_reference(make_case(shape(64, 2, 128, 64), {70, 33}, {}, seed + 1));
}

TEST(HstuLayerGpu, GradientsRepeatBitForBit) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(16204);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  const Case c = make_case(shape(64, 2, 64, 64), {200, 129, 64}, {3, 1, 2}, seed);
  std::vector<Vector> first;
  for (int round = 0; round < 2; ++round) {
    DeviceRun run(c);
    ASSERT_TRUE(hstu_layer_forward(c.problem, run.forward, gpu_context(true)).is_ok());
    HstuLayerBackwardArgs backward = run.backward();
    ASSERT_TRUE(hstu_layer_backward(c.problem, backward, gpu_context(true)).is_ok());
    std::vector<Vector> results = {download_bf16(run.grad_x, c.inputs.x.size())};
    for (std::size_t f = 0; f < run.grads.size(); ++f) {
      results.push_back(download_f32(run.grads[f], run.grads[f].size_bytes() / sizeof(float)));
    }
    if (round == 0) {
      first = results;
      continue;
    }
    for (std::size_t f = 0; f < results.size(); ++f) EXPECT_EQ(results[f], first[f]) << "result " << f;
  }
}

TEST(HstuLayerGpu, NoRowsZeroesEveryGradient) {
  PARITY_REQUIRE_GPU();
  const Case c = make_case(shape(64, 2, 64, 64), {0, 0}, {}, 16205);
  DeviceRun run(c);
  ASSERT_TRUE(hstu_layer_forward(c.problem, run.forward, gpu_context()).is_ok());
  HstuLayerBackwardArgs backward = run.backward();
  ASSERT_TRUE(hstu_layer_backward(c.problem, backward, gpu_context()).is_ok());
  for (std::size_t f = 0; f < run.grads.size(); ++f) {
    const Vector grad = download_f32(run.grads[f], run.grads[f].size_bytes() / sizeof(float));
    EXPECT_TRUE(std::all_of(grad.begin(), grad.end(), [](double v) { return v == 0.0; })) << "grad " << f;
  }
}

TEST(HstuLayerGpu, BadInputNamesTheParameter) {
  PARITY_REQUIRE_GPU();
  const Case c = make_case(shape(64, 2, 64, 64), {5, 9}, {}, 16206);
  DeviceRun run(c);
  HstuLayerForwardArgs no_workspace = run.forward;
  no_workspace.workspace = nullptr;
  gpu_testing::expect_error(hstu_layer_forward(c.problem, no_workspace, gpu_context()), StatusCode::kInvalidArgument,
                            "workspace");
  std::vector<std::int64_t> bad_offsets = {0, 9, 5};
  HstuLayerForwardArgs bad = run.forward;
  bad.host_seq_offsets = bad_offsets.data();
  gpu_testing::expect_error(hstu_layer_forward(c.problem, bad, gpu_context()), StatusCode::kInvalidArgument,
                            "seq_offsets[2]=5");
  HstuLayerProblem fp32 = c.problem;
  fp32.dtype = DType::kF32;
  gpu_testing::expect_error(hstu_layer_forward(fp32, run.forward, gpu_context()), StatusCode::kUnsupported, "dtype");
  HstuLayerProblem narrow = c.problem;
  narrow.model_dim = 60;
  gpu_testing::expect_error(hstu_layer_forward(narrow, run.forward, gpu_context()), StatusCode::kUnsupported,
                            "model_dim=60");
}

}  // namespace
}  // namespace parity::attention
