// The HSTU layer's CPU variant (hstu_layer_cpu.hpp): fp32 everywhere except the attention's
// inputs and output, which the attention op takes as bf16.
#include "attention/hstu_layer_cpu.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "attention/hstu_layer_projection.hpp"
#include "parity/attention/attention_op.hpp"
#include "parity/core/dtype.hpp"
#include "nn/variant_support.hpp"
#include "parity/nn/linear.hpp"

namespace parity::attention::cpu {
namespace {

using nn::detail::kParallelMinElements;

// The forward's saved activations, laid out in `saved` in this order (hstu_layer_saved_bytes).
struct Saved {
  float* n;      // [T, D]   LayerNorm(x)
  float* p;      // [T, W]   n W_uvqk^T + b (before SiLU)
  float* a;      // [T, Hv]  attention output (bf16-rounded)
  float* mean1;  // [T]
  float* rstd1;  // [T]
  float* mean2;  // [T]
  float* rstd2;  // [T]
};

Saved saved_views(const HstuLayerProblem& problem, void* saved) {
  const std::int64_t t = problem.total_tokens;
  auto* base = static_cast<float*>(saved);
  Saved s{};
  s.n = base;
  s.p = s.n + t * problem.model_dim;
  s.a = s.p + t * problem.uvqk_width();
  s.mean1 = s.a + t * problem.attention_width();
  s.rstd1 = s.mean1 + t;
  s.mean2 = s.rstd1 + t;
  s.rstd2 = s.mean2 + t;
  return s;
}

float silu(float x) { return x / (1.0F + std::exp(-x)); }
float silu_derivative(float x) {
  const float sigmoid = 1.0F / (1.0F + std::exp(-x));
  return sigmoid * (1.0F + x * (1.0F - sigmoid));
}

// Row statistics (two passes: the mean first, then the centred variance) and, when `out` is set,
// the normalised, scaled and shifted rows.
void layer_norm_forward(std::int64_t rows, std::int64_t width, const float* in, const float* gamma,
                        const float* beta, float epsilon, float* out, float* mean, float* rstd) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* row = in + r * width;
    double sum = 0.0;
    for (std::int64_t j = 0; j < width; ++j) sum += row[j];
    const double mu = sum / static_cast<double>(width);
    double squares = 0.0;
    for (std::int64_t j = 0; j < width; ++j) squares += (row[j] - mu) * (row[j] - mu);
    const double inv_std = 1.0 / std::sqrt(squares / static_cast<double>(width) + epsilon);
    mean[r] = static_cast<float>(mu);
    rstd[r] = static_cast<float>(inv_std);
    if (out == nullptr) continue;
    for (std::int64_t j = 0; j < width; ++j) {
      out[r * width + j] = static_cast<float>((row[j] - mu) * inv_std) * gamma[j] + beta[j];
    }
  }
}

// Given d out (the gradient w.r.t. the layer norm's output), writes d in (added to `in_grad`
// when `accumulate`), and gamma's and beta's gradients (reduced over the rows column by column,
// in row order: deterministic).
void layer_norm_backward(std::int64_t rows, std::int64_t width, const float* in, const float* mean,
                         const float* rstd, const float* gamma, const float* out_grad, float* in_grad,
                         bool accumulate, float* gamma_grad, float* beta_grad) {
#pragma omp parallel for schedule(static) if (rows * width >= kParallelMinElements)
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* x = in + r * width;
    const float* dy = out_grad + r * width;
    double mean_dxhat = 0.0, mean_dxhat_xhat = 0.0;
    for (std::int64_t j = 0; j < width; ++j) {
      const double xhat = (x[j] - mean[r]) * static_cast<double>(rstd[r]);
      const double dxhat = static_cast<double>(dy[j]) * gamma[j];
      mean_dxhat += dxhat;
      mean_dxhat_xhat += dxhat * xhat;
    }
    mean_dxhat /= static_cast<double>(width);
    mean_dxhat_xhat /= static_cast<double>(width);
    for (std::int64_t j = 0; j < width; ++j) {
      const double xhat = (x[j] - mean[r]) * static_cast<double>(rstd[r]);
      const double dxhat = static_cast<double>(dy[j]) * gamma[j];
      const auto dx = static_cast<float>(rstd[r] * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
      in_grad[r * width + j] = accumulate ? in_grad[r * width + j] + dx : dx;
    }
  }
#pragma omp parallel for schedule(static) if (rows * width >= kParallelMinElements)
  for (std::int64_t j = 0; j < width; ++j) {
    double dgamma = 0.0, dbeta = 0.0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const double xhat = (in[r * width + j] - mean[r]) * static_cast<double>(rstd[r]);
      dgamma += static_cast<double>(out_grad[r * width + j]) * xhat;
      dbeta += out_grad[r * width + j];
    }
    gamma_grad[j] = static_cast<float>(dgamma);
    beta_grad[j] = static_cast<float>(dbeta);
  }
}

// Column offsets of the four blocks of a p row: u | v | q | k.
struct Blocks {
  std::int64_t width, u, v, q, k;
};
Blocks blocks_of(const HstuLayerProblem& problem) {
  const std::int64_t hv = problem.attention_width();
  const std::int64_t hq = static_cast<std::int64_t>(problem.heads) * problem.dim_qk;
  return {problem.uvqk_width(), 0, hv, 2 * hv, 2 * hv + hq};
}

// q, k, v as contiguous bf16 [T, H, d] from p's blocks.
void split_qkv_bf16(const HstuLayerProblem& problem, const float* p, std::vector<std::uint16_t>& q,
                    std::vector<std::uint16_t>& k, std::vector<std::uint16_t>& v) {
  const Blocks b = blocks_of(problem);
  const std::int64_t t = problem.total_tokens, hv = problem.attention_width();
  const std::int64_t hq = static_cast<std::int64_t>(problem.heads) * problem.dim_qk;
  q.resize(static_cast<std::size_t>(t * hq));
  k.resize(q.size());
  v.resize(static_cast<std::size_t>(t * hv));
#pragma omp parallel for schedule(static) if (t * b.width >= kParallelMinElements)
  for (std::int64_t r = 0; r < t; ++r) {
    const float* row = p + r * b.width;
    for (std::int64_t j = 0; j < hq; ++j) {
      q[r * hq + j] = float_to_bf16_bits(row[b.q + j]);
      k[r * hq + j] = float_to_bf16_bits(row[b.k + j]);
    }
    for (std::int64_t j = 0; j < hv; ++j) v[r * hv + j] = float_to_bf16_bits(row[b.v + j]);
  }
}

// g = SiLU(u) * LayerNorm2(a), from the saved p, a and statistics.
void gate_forward(const HstuLayerProblem& problem, const HstuLayerWeights& w, const Saved& s, float* g) {
  const Blocks b = blocks_of(problem);
  const std::int64_t t = problem.total_tokens, hv = problem.attention_width();
#pragma omp parallel for schedule(static) if (t * hv >= kParallelMinElements)
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t j = 0; j < hv; ++j) {
      const float normed = (s.a[r * hv + j] - s.mean2[r]) * s.rstd2[r] * w.output_norm_weight[j] + w.output_norm_bias[j];
      g[r * hv + j] = silu(s.p[r * b.width + b.u + j]) * normed;
    }
  }
}

nn::LinearProblem projection(const HstuLayerProblem& problem, std::int64_t in, std::int64_t out) {
  return detail::hstu_layer_projection(problem, in, out, DType::kF32);
}

AttentionForwardArgs attention_args(const HstuLayerForwardArgs& args, const std::vector<std::uint16_t>& q,
                                    const std::vector<std::uint16_t>& k, const std::vector<std::uint16_t>& v,
                                    std::vector<std::uint16_t>& out) {
  AttentionForwardArgs a;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.q_offsets = args.seq_offsets;
  a.kv_offsets = args.seq_offsets;
  a.num_targets = args.num_targets;
  a.out = out.data();
  return a;
}

void zero(float* data, std::int64_t count) { std::memset(data, 0, static_cast<std::size_t>(count) * sizeof(float)); }

}  // namespace

Status hstu_layer_forward(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args,
                          const ExecutionContext& context) {
  const std::int64_t t = problem.total_tokens, d = problem.model_dim, hv = problem.attention_width();
  if (t == 0) return Status::ok();
  const Saved s = saved_views(problem, args.saved);
  const HstuLayerWeights& w = args.weights;
  const auto* x = static_cast<const float*>(args.x);
  layer_norm_forward(t, d, x, w.norm_weight, w.norm_bias, problem.layer_norm_epsilon, s.n, s.mean1, s.rstd1);
  PARITY_RETURN_IF_ERROR(nn::linear_forward(projection(problem, d, problem.uvqk_width()),
                                            {s.n, w.uvqk_weight, w.uvqk_bias, s.p, nullptr}, context));
  std::vector<std::uint16_t> q, k, v, a_bf16(static_cast<std::size_t>(t * hv));
  split_qkv_bf16(problem, s.p, q, k, v);
  PARITY_RETURN_IF_ERROR(attention_forward(problem.attention(), attention_args(args, q, k, v, a_bf16), context));
  for (std::int64_t e = 0; e < t * hv; ++e) s.a[e] = bf16_bits_to_float(a_bf16[static_cast<std::size_t>(e)]);
  layer_norm_forward(t, hv, s.a, nullptr, nullptr, problem.layer_norm_epsilon, nullptr, s.mean2, s.rstd2);
  std::vector<float> g(static_cast<std::size_t>(t * hv));
  gate_forward(problem, w, s, g.data());
  auto* y = static_cast<float*>(args.y);
  PARITY_RETURN_IF_ERROR(nn::linear_forward(projection(problem, hv, d),
                                            {g.data(), w.output_weight, w.output_bias, y, nullptr}, context));
#pragma omp parallel for schedule(static) if (t * d >= kParallelMinElements)
  for (std::int64_t e = 0; e < t * d; ++e) y[e] += x[e];
  return Status::ok();
}

namespace {

// d g -> d u (pre-SiLU, written into dp's u block), d a (through LayerNorm2), and LayerNorm2's
// parameter gradients.
void gate_backward(const HstuLayerProblem& problem, const HstuLayerWeights& w, const Saved& s,
                   const float* dg, float* dp, float* da, const HstuLayerGradients& grads) {
  const Blocks b = blocks_of(problem);
  const std::int64_t t = problem.total_tokens, hv = problem.attention_width();
  std::vector<float> d_normed(static_cast<std::size_t>(t * hv));
#pragma omp parallel for schedule(static) if (t * hv >= kParallelMinElements)
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t j = 0; j < hv; ++j) {
      const float u_pre = s.p[r * b.width + b.u + j];
      const float normed = (s.a[r * hv + j] - s.mean2[r]) * s.rstd2[r] * w.output_norm_weight[j] + w.output_norm_bias[j];
      const float grad = dg[r * hv + j];
      dp[r * b.width + b.u + j] = grad * normed * silu_derivative(u_pre);
      d_normed[static_cast<std::size_t>(r * hv + j)] = grad * silu(u_pre);
    }
  }
  layer_norm_backward(t, hv, s.a, s.mean2, s.rstd2, w.output_norm_weight, d_normed.data(), da, false,
                      grads.output_norm_weight, grads.output_norm_bias);
}

}  // namespace

Status hstu_layer_backward(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args,
                           const ExecutionContext& context) {
  const std::int64_t t = problem.total_tokens, d = problem.model_dim, hv = problem.attention_width();
  const HstuLayerGradients& grads = args.grads;
  const std::int64_t width = problem.uvqk_width();
  if (t == 0) {  // no rows: every gradient is zero
    for (auto [pointer, count] : {std::pair{grads.norm_weight, std::int64_t{d}}, {grads.norm_bias, d},
                                  {grads.uvqk_weight, width * d}, {grads.uvqk_bias, width},
                                  {grads.output_norm_weight, hv}, {grads.output_norm_bias, hv},
                                  {grads.output_weight, d * hv}, {grads.output_bias, std::int64_t{d}}}) {
      zero(pointer, count);
    }
    return Status::ok();
  }
  const HstuLayerForwardArgs& fwd = args.forward;
  const HstuLayerWeights& w = fwd.weights;
  const Saved s = saved_views(problem, fwd.saved);
  const auto* dy = static_cast<const float*>(args.grad_y);
  std::vector<float> g(static_cast<std::size_t>(t * hv)), dg(g.size());
  gate_forward(problem, w, s, g.data());
  PARITY_RETURN_IF_ERROR(nn::linear_backward(
      projection(problem, hv, d),
      {g.data(), w.output_weight, nullptr, dy, dg.data(), grads.output_weight, grads.output_bias, nullptr, nullptr, false},
      context));
  std::vector<float> dp(static_cast<std::size_t>(t * width)), da(g.size());
  gate_backward(problem, w, s, dg.data(), dp.data(), da.data(), grads);
  // The attention's backward on bf16 copies (its kernels take 16-bit tensors).
  std::vector<std::uint16_t> q, k, v, a_bf16(g.size()), da_bf16(g.size());
  split_qkv_bf16(problem, s.p, q, k, v);
  for (std::size_t e = 0; e < da.size(); ++e) {
    a_bf16[e] = float_to_bf16_bits(s.a[e]);
    da_bf16[e] = float_to_bf16_bits(da[e]);
  }
  std::vector<std::uint16_t> dq(q.size()), dk(k.size()), dv(v.size());
  AttentionBackwardArgs attention_grads;
  attention_grads.forward = attention_args(fwd, q, k, v, a_bf16);
  attention_grads.grad_out = da_bf16.data();
  attention_grads.grad_q = dq.data();
  attention_grads.grad_k = dk.data();
  attention_grads.grad_v = dv.data();
  PARITY_RETURN_IF_ERROR(attention_backward(problem.attention(), attention_grads, nullptr, context));
  const Blocks b = blocks_of(problem);
  const std::int64_t hq = static_cast<std::int64_t>(problem.heads) * problem.dim_qk;
#pragma omp parallel for schedule(static) if (t * width >= kParallelMinElements)
  for (std::int64_t r = 0; r < t; ++r) {
    float* row = dp.data() + r * width;
    for (std::int64_t j = 0; j < hv; ++j) row[b.v + j] = bf16_bits_to_float(dv[static_cast<std::size_t>(r * hv + j)]);
    for (std::int64_t j = 0; j < hq; ++j) {
      row[b.q + j] = bf16_bits_to_float(dq[static_cast<std::size_t>(r * hq + j)]);
      row[b.k + j] = bf16_bits_to_float(dk[static_cast<std::size_t>(r * hq + j)]);
    }
  }
  std::vector<float> dn(static_cast<std::size_t>(t * d));
  PARITY_RETURN_IF_ERROR(nn::linear_backward(
      projection(problem, d, width),
      {s.n, w.uvqk_weight, nullptr, dp.data(), dn.data(), grads.uvqk_weight, grads.uvqk_bias, nullptr, nullptr, false},
      context));
  auto* dx = static_cast<float*>(args.grad_x);
  std::memcpy(dx, dy, static_cast<std::size_t>(t * d) * sizeof(float));  // the residual
  layer_norm_backward(t, d, static_cast<const float*>(fwd.x), s.mean1, s.rstd1, w.norm_weight, dn.data(), dx, true,
                      grads.norm_weight, grads.norm_bias);
  return Status::ok();
}

}  // namespace parity::attention::cpu
