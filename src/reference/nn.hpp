// fp64 references for the dense layers (the dot interaction is in dlrm_dense.hpp,
// shared with the GPU kernels' tests): plain loops, written for clarity, sharing no code with the
// CPU variants (src/nn) or kernels. Row-major throughout: x[b][i] is x[b * in + i].
//
// Legend: B batch, I input width, O output width, F embedded features, D embedding dim,
// W cross width, R cross rank.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/nn/linear.hpp"
#include "parity/nn/optimizer.hpp"

namespace parity::ref {

using Vector = std::vector<double>;

/// y[b][o] = act(sum_i x[b][i] w[o][i] + bias[o]); bias may be empty.
Vector linear_forward(std::int64_t batch, std::int64_t in, std::int64_t out, nn::Activation activation,
                      const Vector& x, const Vector& w, const Vector& bias);

struct LinearGrads {
  Vector input;   // B x I
  Vector weight;  // O x I
  Vector bias;    // O
};
/// dy is the gradient w.r.t. the activated output y (which the forward returned).
LinearGrads linear_backward(std::int64_t batch, std::int64_t in, std::int64_t out, nn::Activation activation,
                            const Vector& x, const Vector& w, const Vector& y, const Vector& dy);

/// DCNv2 low-rank cross layer: out = x0 * (U (V x) + c) + x; V is R x W, U is W x R, c is W.
Vector cross_layer_forward(std::int64_t batch, std::int64_t width, std::int64_t rank,
                           const Vector& x0, const Vector& x, const Vector& v, const Vector& u,
                           const Vector& c);
struct CrossLayerGrads {
  Vector x0;  // this layer's share of d out / d x0
  Vector x;
  Vector v;
  Vector u;
  Vector c;
};
CrossLayerGrads cross_layer_backward(std::int64_t batch, std::int64_t width, std::int64_t rank,
                                     const Vector& x0, const Vector& x, const Vector& v,
                                     const Vector& u, const Vector& c, const Vector& grad_output);

/// mean over b of -(y log s(z) + (1-y) log(1-s(z))), in the stable form max(z, 0) + log1p(exp(-|z|))
/// - y z (finite for saturated logits, unlike dlrm_dense.hpp's); the gradient (s(z) - y) / B goes
/// to *grad_logits when not null.
double bce_with_logits(const Vector& logits, const Vector& labels, Vector* grad_logits);

/// One torch.optim-style update of w (with state s1/s2 as the kind needs) by gradient g.
void dense_optimizer_step(const nn::DenseOptimizerProblem& problem, Vector& w, const Vector& g,
                          Vector& s1, Vector& s2);

}  // namespace parity::ref
