// fp64 references for the dense layers (see nn.hpp). Plain loops, no OpenMP, no BLAS.
#include "reference/nn.hpp"

#include <algorithm>
#include <cmath>

namespace parity::ref {

Vector linear_forward(std::int64_t batch, std::int64_t in, std::int64_t out, nn::Activation activation,
                      const Vector& x, const Vector& w, const Vector& bias) {
  Vector y(batch * out);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t o = 0; o < out; ++o) {
      double sum = bias.empty() ? 0.0 : bias[o];
      for (std::int64_t i = 0; i < in; ++i) sum += x[b * in + i] * w[o * in + i];
      y[b * out + o] = activation == nn::Activation::kRelu && sum < 0 ? 0.0 : sum;
    }
  }
  return y;
}

LinearGrads linear_backward(std::int64_t batch, std::int64_t in, std::int64_t out, nn::Activation activation,
                            const Vector& x, const Vector& w, const Vector& y, const Vector& dy) {
  // d pre = dy where the ReLU passed (y > 0), else 0.
  Vector dpre(dy);
  if (activation == nn::Activation::kRelu) {
    for (std::size_t k = 0; k < dpre.size(); ++k) dpre[k] = y[k] > 0 ? dy[k] : 0.0;
  }
  LinearGrads grads{Vector(batch * in, 0.0), Vector(out * in, 0.0), Vector(out, 0.0)};
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t o = 0; o < out; ++o) {
      const double g = dpre[b * out + o];
      grads.bias[o] += g;
      for (std::int64_t i = 0; i < in; ++i) {
        grads.weight[o * in + i] += g * x[b * in + i];
        grads.input[b * in + i] += g * w[o * in + i];
      }
    }
  }
  return grads;
}

namespace {

// low = V x (B x R) and cross = U low + c (B x W).
void cross_parts(std::int64_t batch, std::int64_t width, std::int64_t rank, const Vector& x,
                 const Vector& v, const Vector& u, const Vector& c, Vector* low, Vector* cross) {
  low->assign(batch * rank, 0.0);
  cross->assign(batch * width, 0.0);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t r = 0; r < rank; ++r) {
      double sum = 0.0;
      for (std::int64_t i = 0; i < width; ++i) sum += v[r * width + i] * x[b * width + i];
      (*low)[b * rank + r] = sum;
    }
    for (std::int64_t i = 0; i < width; ++i) {
      double sum = c[i];
      for (std::int64_t r = 0; r < rank; ++r) sum += u[i * rank + r] * (*low)[b * rank + r];
      (*cross)[b * width + i] = sum;
    }
  }
}

}  // namespace

Vector cross_layer_forward(std::int64_t batch, std::int64_t width, std::int64_t rank,
                           const Vector& x0, const Vector& x, const Vector& v, const Vector& u,
                           const Vector& c) {
  Vector low, cross;
  cross_parts(batch, width, rank, x, v, u, c, &low, &cross);
  Vector out(batch * width);
  for (std::int64_t k = 0; k < batch * width; ++k) out[k] = x0[k] * cross[k] + x[k];
  return out;
}

CrossLayerGrads cross_layer_backward(std::int64_t batch, std::int64_t width, std::int64_t rank,
                                     const Vector& x0, const Vector& x, const Vector& v,
                                     const Vector& u, const Vector& c, const Vector& grad_output) {
  Vector low, cross;
  cross_parts(batch, width, rank, x, v, u, c, &low, &cross);
  CrossLayerGrads grads{Vector(batch * width), grad_output, Vector(rank * width, 0.0),
                        Vector(width * rank, 0.0), Vector(width, 0.0)};
  Vector dcross(batch * width);
  for (std::int64_t k = 0; k < batch * width; ++k) {
    grads.x0[k] = grad_output[k] * cross[k];
    dcross[k] = grad_output[k] * x0[k];
  }
  Vector dlow(batch * rank, 0.0);
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t i = 0; i < width; ++i) {
      const double g = dcross[b * width + i];
      grads.c[i] += g;
      for (std::int64_t r = 0; r < rank; ++r) {
        grads.u[i * rank + r] += g * low[b * rank + r];
        dlow[b * rank + r] += g * u[i * rank + r];
      }
    }
    for (std::int64_t r = 0; r < rank; ++r) {
      for (std::int64_t i = 0; i < width; ++i) {
        grads.v[r * width + i] += dlow[b * rank + r] * x[b * width + i];
        grads.x[b * width + i] += dlow[b * rank + r] * v[r * width + i];
      }
    }
  }
  return grads;
}

double bce_with_logits(const Vector& logits, const Vector& labels, Vector* grad_logits) {
  const auto batch = static_cast<double>(logits.size());
  double total = 0.0;
  if (grad_logits != nullptr) grad_logits->assign(logits.size(), 0.0);
  for (std::size_t b = 0; b < logits.size(); ++b) {
    const double z = logits[b];
    total += std::max(z, 0.0) + std::log1p(std::exp(-std::fabs(z))) - labels[b] * z;
    if (grad_logits != nullptr) (*grad_logits)[b] = (1.0 / (1.0 + std::exp(-z)) - labels[b]) / batch;
  }
  return total / batch;
}

void dense_optimizer_step(const nn::DenseOptimizerProblem& problem, Vector& w, const Vector& g,
                          Vector& s1, Vector& s2) {
  const double lr = problem.learning_rate;
  for (std::size_t i = 0; i < w.size(); ++i) {
    const double grad = g[i] + problem.weight_decay * w[i];
    switch (problem.kind) {
      case nn::DenseOptimizerKind::kSgd: w[i] -= lr * grad; break;
      case nn::DenseOptimizerKind::kAdagrad:
        s1[i] += grad * grad;
        w[i] -= lr * grad / (std::sqrt(s1[i]) + problem.eps);
        break;
      case nn::DenseOptimizerKind::kAdam: {
        const double t = static_cast<double>(problem.step);
        s1[i] = problem.beta1 * s1[i] + (1 - problem.beta1) * grad;
        s2[i] = problem.beta2 * s2[i] + (1 - problem.beta2) * grad * grad;
        const double m_hat = s1[i] / (1 - std::pow(problem.beta1, t));
        const double v_hat = s2[i] / (1 - std::pow(problem.beta2, t));
        w[i] -= lr * m_hat / (std::sqrt(v_hat) + problem.eps);
        break;
      }
    }
  }
}

}  // namespace parity::ref
