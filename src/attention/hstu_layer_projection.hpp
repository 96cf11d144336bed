// The HSTU layer's projections as nn::linear problems, for the CPU and GPU variants alike: one row
// per token, a bias, no activation; the variant names the dtype (fp32 on the CPU, bf16 on the GPU).
#pragma once

#include <cstdint>

#include "parity/attention/hstu_layer.hpp"
#include "parity/nn/linear.hpp"

namespace parity::attention::detail {

inline nn::LinearProblem hstu_layer_projection(const HstuLayerProblem& problem, std::int64_t in_features,
                                               std::int64_t out_features, DType dtype) {
  nn::LinearProblem linear;
  linear.batch_size = problem.total_tokens;
  linear.in_features = in_features;
  linear.out_features = out_features;
  linear.activation = nn::Activation::kNone;
  linear.bias = nn::BiasMode::kBias;
  linear.dtype = dtype;
  return linear;
}

}  // namespace parity::attention::detail
