// fp64 references of the dense DLRM ops that are not GEMMs (plain loops, no shared code with the
// kernels): dot interaction forward/backward, BCE with logits, DCNv2 element-wise step.
#pragma once

#include <cstdint>
#include <vector>

namespace parity::ref {

// bottom B x D, embeddings B x E*D -> output B x (D + F(F-1)/2), F = E + 1, pairs (i > j)
// row-major: (1,0), (2,0), (2,1), ...
std::vector<double> interaction_dot_forward(std::int64_t batch, int num_embeddings, int dim,
                                            const std::vector<double>& bottom, const std::vector<double>& embeddings);
void interaction_dot_backward(std::int64_t batch, int num_embeddings, int dim, const std::vector<double>& bottom,
                              const std::vector<double>& embeddings, const std::vector<double>& grad_output,
                              std::vector<double>* grad_bottom, std::vector<double>* grad_embeddings);

// Sum over samples of the BCE-with-logits loss; grad_logits[i] = (sigmoid(x_i) - y_i) * scale.
double bce_with_logits(const std::vector<double>& logits, const std::vector<double>& labels, double grad_scale,
                       std::vector<double>* grad_logits);

}  // namespace parity::ref
