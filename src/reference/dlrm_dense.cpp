#include "reference/dlrm_dense.hpp"

#include <cmath>

namespace parity::ref {
namespace {

// z_v of sample b: v = 0 is the bottom output, v >= 1 embedding v - 1.
double z_at(std::int64_t b, int v, int d, int num_embeddings, int dim, const std::vector<double>& bottom,
            const std::vector<double>& embeddings) {
  if (v == 0) return bottom[static_cast<std::size_t>(b * dim + d)];
  return embeddings[static_cast<std::size_t>((b * num_embeddings + (v - 1)) * dim + d)];
}

}  // namespace

std::vector<double> interaction_dot_forward(std::int64_t batch, int num_embeddings, int dim,
                                            const std::vector<double>& bottom, const std::vector<double>& embeddings) {
  const int vectors = num_embeddings + 1;
  const std::int64_t width = dim + static_cast<std::int64_t>(vectors) * (vectors - 1) / 2;
  std::vector<double> out(static_cast<std::size_t>(batch * width));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (int d = 0; d < dim; ++d) out[static_cast<std::size_t>(b * width + d)] = bottom[static_cast<std::size_t>(b * dim + d)];
    std::int64_t p = 0;
    for (int i = 1; i < vectors; ++i) {
      for (int j = 0; j < i; ++j, ++p) {
        double dot = 0.0;
        for (int d = 0; d < dim; ++d) {
          dot += z_at(b, i, d, num_embeddings, dim, bottom, embeddings) * z_at(b, j, d, num_embeddings, dim, bottom, embeddings);
        }
        out[static_cast<std::size_t>(b * width + dim + p)] = dot;
      }
    }
  }
  return out;
}

void interaction_dot_backward(std::int64_t batch, int num_embeddings, int dim, const std::vector<double>& bottom,
                              const std::vector<double>& embeddings, const std::vector<double>& grad_output,
                              std::vector<double>* grad_bottom, std::vector<double>* grad_embeddings) {
  const int vectors = num_embeddings + 1;
  const std::int64_t width = dim + static_cast<std::int64_t>(vectors) * (vectors - 1) / 2;
  grad_bottom->assign(static_cast<std::size_t>(batch * dim), 0.0);
  grad_embeddings->assign(static_cast<std::size_t>(batch * num_embeddings * dim), 0.0);
  auto grad_z = [&](std::int64_t b, int v, int d) -> double& {
    if (v == 0) return (*grad_bottom)[static_cast<std::size_t>(b * dim + d)];
    return (*grad_embeddings)[static_cast<std::size_t>((b * num_embeddings + (v - 1)) * dim + d)];
  };
  for (std::int64_t b = 0; b < batch; ++b) {
    for (int d = 0; d < dim; ++d) grad_z(b, 0, d) += grad_output[static_cast<std::size_t>(b * width + d)];
    std::int64_t p = 0;
    for (int i = 1; i < vectors; ++i) {
      for (int j = 0; j < i; ++j, ++p) {
        const double g = grad_output[static_cast<std::size_t>(b * width + dim + p)];
        for (int d = 0; d < dim; ++d) {
          grad_z(b, i, d) += g * z_at(b, j, d, num_embeddings, dim, bottom, embeddings);
          grad_z(b, j, d) += g * z_at(b, i, d, num_embeddings, dim, bottom, embeddings);
        }
      }
    }
  }
}

double bce_with_logits(const std::vector<double>& logits, const std::vector<double>& labels, double grad_scale,
                       std::vector<double>* grad_logits) {
  double loss = 0.0;
  grad_logits->assign(logits.size(), 0.0);
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const double x = logits[i];
    const double y = labels[i];
    const double p = 1.0 / (1.0 + std::exp(-x));
    loss += -(y * std::log(p) + (1.0 - y) * std::log1p(-p));
    (*grad_logits)[i] = (p - y) * grad_scale;
  }
  return loss;
}

}  // namespace parity::ref
