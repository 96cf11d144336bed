// fp64 reference of the HSTU layer (include/parity/attention/hstu_layer.hpp): plain loops over
// rows and columns for the two layer norms, the two projections, SiLU and the gate; the attention
// through attention_forward_ref / attention_backward_ref. No code shared with the fast path.
//
//   n = LN1(x)                 = (x - mean) * rstd * norm_weight + norm_bias      rstd = 1/sqrt(var + eps)
//   p = n W_uvqk^T + b_uvqk    columns u | v | q | k (widths H d_v, H d_v, H d_qk, H d_qk)
//   a = HSTU attention(q, k, v) with problem.attention()
//   g = SiLU(u) * LN2(a)       LN2 over the H d_v columns, gain output_norm_weight, shift output_norm_bias
//   y = x + g W_out^T + b_out
//
// The backward differentiates sum(y * grad_y) by hand: the two projections, SiLU, the two layer
// norms (d in = rstd (d xhat - mean(d xhat) - xhat mean(d xhat xhat)), d xhat = d out * gain) and
// the attention (attention_backward_ref). Tensors are row-major fp64.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/attention/hstu_layer.hpp"

namespace parity::ref {

struct HstuLayerRefInputs {
  std::vector<double> x;                   // [T, D]
  std::vector<std::int64_t> seq_offsets;   // [B+1]
  std::vector<std::int32_t> num_targets;   // [B] when problem.has_num_targets, else empty
  std::vector<double> norm_weight;         // [D]
  std::vector<double> norm_bias;           // [D]
  std::vector<double> uvqk_weight;         // [2 H (d_v + d_qk), D]
  std::vector<double> uvqk_bias;           // [2 H (d_v + d_qk)]
  std::vector<double> output_norm_weight;  // [H d_v]
  std::vector<double> output_norm_bias;    // [H d_v]
  std::vector<double> output_weight;       // [D, H d_v]
  std::vector<double> output_bias;         // [D]
};

struct HstuLayerRefGradients {  // same shapes as the inputs of the same name
  std::vector<double> x, norm_weight, norm_bias, uvqk_weight, uvqk_bias, output_norm_weight, output_norm_bias,
      output_weight, output_bias;
};

/// The forward's intermediates, for tests that derive error bounds from them.
struct HstuLayerRefActivations {
  std::vector<double> n;       // [T, D]      LN1(x)
  std::vector<double> p;       // [T, W]      n W_uvqk^T + b_uvqk (u before SiLU)
  std::vector<double> a;       // [T, H d_v]  attention output
  std::vector<double> a_hat;   // [T, H d_v]  (a - mean) * rstd, LN2 before its gain and shift
  std::vector<double> a_rstd;  // [T]         LN2's 1/sqrt(var + eps)
  std::vector<double> g;       // [T, H d_v]  SiLU(u) * LN2(a)
};

/// y [T, D]. Checks the problem, the offsets, num_targets (check_attention_inputs) and every
/// vector's size first; the message names the parameter and its value.
Status hstu_layer_forward_ref(const attention::HstuLayerProblem& problem, const HstuLayerRefInputs& inputs,
                              std::vector<double>* y);

/// The intermediates of the same forward (the same checks).
Status hstu_layer_activations_ref(const attention::HstuLayerProblem& problem, const HstuLayerRefInputs& inputs,
                                  HstuLayerRefActivations* activations);

/// Gradients of sum(y * grad_y) with respect to x and every parameter, everything recomputed in fp64.
Status hstu_layer_backward_ref(const attention::HstuLayerProblem& problem, const HstuLayerRefInputs& inputs,
                               const std::vector<double>& grad_y, HstuLayerRefGradients* grads);

}  // namespace parity::ref
