// fp64 HSTU layer reference (src/reference/hstu_layer_ref.hpp). Deliberately naive: every layer
// is a loop over rows and columns written from its formula. The backward runs the same forward
// pass, keeps its intermediates and applies the chain rule to them step by step.
#include "reference/hstu_layer_ref.hpp"

#include <cmath>
#include <cstddef>
#include <utility>

#include "reference/attention_ref.hpp"

namespace parity::ref {
namespace {

using attention::HstuLayerProblem;
using Vector = std::vector<double>;

std::size_t at(std::int64_t row, std::int64_t width, std::int64_t column) {
  return static_cast<std::size_t>(row * width + column);
}

Status check_size(const char* name, std::size_t got, const char* expected_text, std::int64_t expected) {
  if (got != static_cast<std::size_t>(expected)) {
    return invalid_argument("hstu_layer_ref: ", name, ": ", got, " elements, expected ", expected_text, " = ",
                            expected);
  }
  return Status::ok();
}

Status check_offsets(const HstuLayerProblem& problem, const std::vector<std::int64_t>& offsets) {
  PARITY_RETURN_IF_ERROR(check_size("seq_offsets", offsets.size(), "batch + 1", problem.batch + 1));
  if (offsets[0] != 0) return invalid_argument("hstu_layer_ref: seq_offsets[0]: ", offsets[0], " (must be 0)");
  for (std::size_t b = 1; b < offsets.size(); ++b) {
    if (offsets[b] < offsets[b - 1]) {
      return invalid_argument("hstu_layer_ref: seq_offsets[", b, "]: ", offsets[b], " is below seq_offsets[", b - 1,
                              "] = ", offsets[b - 1], " (offsets must not decrease)");
    }
  }
  if (offsets.back() != problem.total_tokens) {
    return invalid_argument("hstu_layer_ref: seq_offsets[", problem.batch, "]: ", offsets.back(),
                            " differs from total_tokens = ", problem.total_tokens);
  }
  return Status::ok();
}

Status check_inputs(const HstuLayerProblem& problem, const HstuLayerRefInputs& in) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_RETURN_IF_ERROR(check_offsets(problem, in.seq_offsets));
  const std::int64_t targets = problem.has_num_targets ? problem.batch : 0;
  PARITY_RETURN_IF_ERROR(check_size("num_targets", in.num_targets.size(), "batch (or 0 without targets)", targets));
  PARITY_RETURN_IF_ERROR(attention::check_attention_inputs(problem.attention(), in.seq_offsets.data(), nullptr,
                                                           problem.has_num_targets ? in.num_targets.data() : nullptr));
  const std::int64_t t = problem.total_tokens, d = problem.model_dim;
  const std::int64_t w = problem.uvqk_width(), hv = problem.attention_width();
  PARITY_RETURN_IF_ERROR(check_size("x", in.x.size(), "total_tokens * model_dim", t * d));
  PARITY_RETURN_IF_ERROR(check_size("norm_weight", in.norm_weight.size(), "model_dim", d));
  PARITY_RETURN_IF_ERROR(check_size("norm_bias", in.norm_bias.size(), "model_dim", d));
  PARITY_RETURN_IF_ERROR(check_size("uvqk_weight", in.uvqk_weight.size(), "2 H (d_v + d_qk) * model_dim", w * d));
  PARITY_RETURN_IF_ERROR(check_size("uvqk_bias", in.uvqk_bias.size(), "2 H (d_v + d_qk)", w));
  PARITY_RETURN_IF_ERROR(check_size("output_norm_weight", in.output_norm_weight.size(), "H d_v", hv));
  PARITY_RETURN_IF_ERROR(check_size("output_norm_bias", in.output_norm_bias.size(), "H d_v", hv));
  PARITY_RETURN_IF_ERROR(check_size("output_weight", in.output_weight.size(), "model_dim * H d_v", d * hv));
  return check_size("output_bias", in.output_bias.size(), "model_dim", d);
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One layer norm over `rows` rows of `width`: xhat = (in - mean) * rstd, rstd = 1/sqrt(var + eps)
// with the biased variance; out = xhat * gain + shift.
struct LayerNorm {
  Vector xhat;  // [rows, width]
  Vector rstd;  // [rows]
};

void layer_norm_forward(const Vector& in, std::int64_t rows, std::int64_t width, double epsilon, const Vector& gain,
                        const Vector& shift, LayerNorm* norm, Vector* out) {
  norm->xhat.assign(in.size(), 0.0);
  norm->rstd.assign(static_cast<std::size_t>(rows), 0.0);
  out->assign(in.size(), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean = 0;
    for (std::int64_t c = 0; c < width; ++c) mean += in[at(r, width, c)];
    mean /= static_cast<double>(width);
    double variance = 0;
    for (std::int64_t c = 0; c < width; ++c) variance += (in[at(r, width, c)] - mean) * (in[at(r, width, c)] - mean);
    variance /= static_cast<double>(width);
    const double rstd = 1.0 / std::sqrt(variance + epsilon);
    norm->rstd[static_cast<std::size_t>(r)] = rstd;
    for (std::int64_t c = 0; c < width; ++c) {
      const double xhat = (in[at(r, width, c)] - mean) * rstd;
      norm->xhat[at(r, width, c)] = xhat;
      (*out)[at(r, width, c)] = xhat * gain[static_cast<std::size_t>(c)] + shift[static_cast<std::size_t>(c)];
    }
  }
}

// d in (added to *d_in), d gain and d shift (overwritten) from d out.
void layer_norm_backward(const LayerNorm& norm, std::int64_t rows, std::int64_t width, const Vector& gain,
                         const Vector& d_out, Vector* d_in, Vector* d_gain, Vector* d_shift) {
  d_gain->assign(static_cast<std::size_t>(width), 0.0);
  d_shift->assign(static_cast<std::size_t>(width), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean_dxhat = 0, mean_dxhat_xhat = 0;
    for (std::int64_t c = 0; c < width; ++c) {
      const double dxhat = d_out[at(r, width, c)] * gain[static_cast<std::size_t>(c)];
      mean_dxhat += dxhat;
      mean_dxhat_xhat += dxhat * norm.xhat[at(r, width, c)];
      (*d_gain)[static_cast<std::size_t>(c)] += d_out[at(r, width, c)] * norm.xhat[at(r, width, c)];
      (*d_shift)[static_cast<std::size_t>(c)] += d_out[at(r, width, c)];
    }
    mean_dxhat /= static_cast<double>(width);
    mean_dxhat_xhat /= static_cast<double>(width);
    for (std::int64_t c = 0; c < width; ++c) {
      const double dxhat = d_out[at(r, width, c)] * gain[static_cast<std::size_t>(c)];
      (*d_in)[at(r, width, c)] +=
          norm.rstd[static_cast<std::size_t>(r)] * (dxhat - mean_dxhat - norm.xhat[at(r, width, c)] * mean_dxhat_xhat);
    }
  }
}

// out [rows, out_width] = in [rows, in_width] W^T + bias, W [out_width, in_width].
void linear_forward(const Vector& in, std::int64_t rows, std::int64_t in_width, const Vector& weight,
                    const Vector& bias, std::int64_t out_width, Vector* out) {
  out->assign(static_cast<std::size_t>(rows * out_width), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t o = 0; o < out_width; ++o) {
      double sum = bias[static_cast<std::size_t>(o)];
      for (std::int64_t i = 0; i < in_width; ++i) sum += in[at(r, in_width, i)] * weight[at(o, in_width, i)];
      (*out)[at(r, out_width, o)] = sum;
    }
  }
}

// d in = d out W (overwritten), d W = d out^T in, d bias = column sums of d out.
void linear_backward(const Vector& in, std::int64_t rows, std::int64_t in_width, const Vector& weight,
                     std::int64_t out_width, const Vector& d_out, Vector* d_in, Vector* d_weight, Vector* d_bias) {
  d_in->assign(in.size(), 0.0);
  d_weight->assign(weight.size(), 0.0);
  d_bias->assign(static_cast<std::size_t>(out_width), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t o = 0; o < out_width; ++o) {
      const double grad = d_out[at(r, out_width, o)];
      (*d_bias)[static_cast<std::size_t>(o)] += grad;
      for (std::int64_t i = 0; i < in_width; ++i) {
        (*d_in)[at(r, in_width, i)] += grad * weight[at(o, in_width, i)];
        (*d_weight)[at(o, in_width, i)] += grad * in[at(r, in_width, i)];
      }
    }
  }
}

// Column starts of the blocks of a p row: u | v | q | k.
struct Blocks {
  std::int64_t width, hv, hq, u, v, q, k;
};

Blocks blocks_of(const HstuLayerProblem& problem) {
  const std::int64_t hv = problem.attention_width();
  const std::int64_t hq = static_cast<std::int64_t>(problem.heads) * problem.dim_qk;
  return {problem.uvqk_width(), hv, hq, 0, hv, 2 * hv, 2 * hv + hq};
}

// Every intermediate of the forward that the backward reads.
struct Activations {
  LayerNorm norm1, norm2;
  Vector n, p, a, m, g;     // m = LN2(a)
  AttentionRefInputs qkv;   // q, k, v copied out of p's blocks, with the offsets and targets
};

Status forward_pass(const HstuLayerProblem& problem, const HstuLayerRefInputs& in, Activations* act) {
  const std::int64_t t = problem.total_tokens, d = problem.model_dim;
  const Blocks b = blocks_of(problem);
  const double epsilon = problem.layer_norm_epsilon;
  layer_norm_forward(in.x, t, d, epsilon, in.norm_weight, in.norm_bias, &act->norm1, &act->n);
  linear_forward(act->n, t, d, in.uvqk_weight, in.uvqk_bias, b.width, &act->p);
  act->qkv.q.assign(static_cast<std::size_t>(t * b.hq), 0.0);
  act->qkv.k.assign(static_cast<std::size_t>(t * b.hq), 0.0);
  act->qkv.v.assign(static_cast<std::size_t>(t * b.hv), 0.0);
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t c = 0; c < b.hq; ++c) {
      act->qkv.q[at(r, b.hq, c)] = act->p[at(r, b.width, b.q + c)];
      act->qkv.k[at(r, b.hq, c)] = act->p[at(r, b.width, b.k + c)];
    }
    for (std::int64_t c = 0; c < b.hv; ++c) act->qkv.v[at(r, b.hv, c)] = act->p[at(r, b.width, b.v + c)];
  }
  act->qkv.q_offsets = in.seq_offsets;
  act->qkv.kv_offsets.clear();
  act->qkv.num_targets = problem.has_num_targets ? in.num_targets : std::vector<std::int32_t>{};
  Vector lse;
  PARITY_RETURN_IF_ERROR(attention_forward_ref(problem.attention(), act->qkv, &act->a, &lse));
  layer_norm_forward(act->a, t, b.hv, epsilon, in.output_norm_weight, in.output_norm_bias, &act->norm2, &act->m);
  act->g.assign(act->m.size(), 0.0);
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t c = 0; c < b.hv; ++c) {
      const double u = act->p[at(r, b.width, b.u + c)];
      act->g[at(r, b.hv, c)] = u * sigmoid(u) * act->m[at(r, b.hv, c)];
    }
  }
  return Status::ok();
}

// d g -> d p's u block (through SiLU) and d m = d g * SiLU(u).
void gate_backward(const Blocks& b, std::int64_t rows, const Activations& act, const Vector& d_g, Vector* d_p,
                   Vector* d_m) {
  d_m->assign(d_g.size(), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < b.hv; ++c) {
      const double u = act.p[at(r, b.width, b.u + c)];
      const double s = sigmoid(u);
      const double grad = d_g[at(r, b.hv, c)];
      (*d_p)[at(r, b.width, b.u + c)] = grad * act.m[at(r, b.hv, c)] * s * (1.0 + u * (1.0 - s));
      (*d_m)[at(r, b.hv, c)] = grad * u * s;
    }
  }
}

}  // namespace

Status hstu_layer_forward_ref(const HstuLayerProblem& problem, const HstuLayerRefInputs& inputs, Vector* y) {
  PARITY_RETURN_IF_ERROR(check_inputs(problem, inputs));
  Activations act;
  PARITY_RETURN_IF_ERROR(forward_pass(problem, inputs, &act));
  const std::int64_t t = problem.total_tokens, d = problem.model_dim;
  linear_forward(act.g, t, problem.attention_width(), inputs.output_weight, inputs.output_bias, d, y);
  for (std::size_t e = 0; e < y->size(); ++e) (*y)[e] += inputs.x[e];
  return Status::ok();
}

Status hstu_layer_activations_ref(const HstuLayerProblem& problem, const HstuLayerRefInputs& inputs,
                                  HstuLayerRefActivations* activations) {
  PARITY_RETURN_IF_ERROR(check_inputs(problem, inputs));
  Activations act;
  PARITY_RETURN_IF_ERROR(forward_pass(problem, inputs, &act));
  activations->n = std::move(act.n);
  activations->p = std::move(act.p);
  activations->a = std::move(act.a);
  activations->a_hat = std::move(act.norm2.xhat);
  activations->a_rstd = std::move(act.norm2.rstd);
  activations->g = std::move(act.g);
  return Status::ok();
}

Status hstu_layer_backward_ref(const HstuLayerProblem& problem, const HstuLayerRefInputs& inputs, const Vector& grad_y,
                               HstuLayerRefGradients* grads) {
  PARITY_RETURN_IF_ERROR(check_inputs(problem, inputs));
  const std::int64_t t = problem.total_tokens, d = problem.model_dim;
  PARITY_RETURN_IF_ERROR(check_size("grad_y", grad_y.size(), "total_tokens * model_dim", t * d));
  Activations act;
  PARITY_RETURN_IF_ERROR(forward_pass(problem, inputs, &act));
  const Blocks b = blocks_of(problem);
  // y = x + g W_out^T + b_out
  Vector d_g;
  linear_backward(act.g, t, b.hv, inputs.output_weight, d, grad_y, &d_g, &grads->output_weight, &grads->output_bias);
  // g = SiLU(u) * m, m = LN2(a)
  Vector d_p(static_cast<std::size_t>(t * b.width), 0.0), d_m;
  gate_backward(b, t, act, d_g, &d_p, &d_m);
  Vector d_a(act.a.size(), 0.0);
  layer_norm_backward(act.norm2, t, b.hv, inputs.output_norm_weight, d_m, &d_a, &grads->output_norm_weight,
                      &grads->output_norm_bias);
  // a = attention(q, k, v): its gradients go to p's q, k and v blocks.
  Vector d_q, d_k, d_v;
  PARITY_RETURN_IF_ERROR(attention_backward_ref(problem.attention(), act.qkv, d_a, &d_q, &d_k, &d_v));
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t c = 0; c < b.hq; ++c) {
      d_p[at(r, b.width, b.q + c)] = d_q[at(r, b.hq, c)];
      d_p[at(r, b.width, b.k + c)] = d_k[at(r, b.hq, c)];
    }
    for (std::int64_t c = 0; c < b.hv; ++c) d_p[at(r, b.width, b.v + c)] = d_v[at(r, b.hv, c)];
  }
  // p = n W_uvqk^T + b_uvqk, n = LN1(x), and the residual: d x = grad_y + LN1's backward.
  Vector d_n;
  linear_backward(act.n, t, d, inputs.uvqk_weight, b.width, d_p, &d_n, &grads->uvqk_weight, &grads->uvqk_bias);
  grads->x = grad_y;
  layer_norm_backward(act.norm1, t, d, inputs.norm_weight, d_n, &grads->x, &grads->norm_weight, &grads->norm_bias);
  return Status::ok();
}

}  // namespace parity::ref
