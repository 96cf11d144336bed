// Dense optimisers on flat fp32 buffers (the MLP and cross-net parameters live in one buffer, so
// one step updates them all). Same update rules as torch.optim (SGD, Adagrad, Adam), L2 weight
// decay added to the gradient. The embedding tables use the fused TBE optimisers instead.
//
//   SGD:     w -= lr * g
//   Adagrad: s += g^2;  w -= lr * g / (sqrt(s) + eps)
//   Adam:    m = b1 m + (1-b1) g;  v = b2 v + (1-b2) g^2;
//            w -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)      (t = step, from 1)
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::nn {

enum class DenseOptimizerKind : std::uint8_t { kSgd, kAdagrad, kAdam };

/// fp32 state elements per parameter: 0 (SGD), 1 (Adagrad: s), 2 (Adam: m then v, two buffers).
int dense_optimizer_state_buffers(DenseOptimizerKind kind);

struct DenseOptimizerProblem {
  std::int64_t num_elements = 0;
  DenseOptimizerKind kind = DenseOptimizerKind::kSgd;
  float learning_rate = 0.01f;
  float eps = 1e-8f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float weight_decay = 0.0f;
  std::int64_t step = 1;  // Adam bias correction (>= 1)
  Status validate() const;
};

/// Host pointers for kCpu, device pointers for kGpu; state1/state2 as the kind needs (else null).
struct DenseOptimizerArgs {
  float* weights = nullptr;
  const float* grads = nullptr;
  float* state1 = nullptr;
  float* state2 = nullptr;
  // GPU: when set, receives the updated weights in shadow_dtype (the bf16 copy bf16 GEMMs read).
  void* shadow = nullptr;
  DType shadow_dtype = DType::kBF16;
};

using DenseOptimizerVariant = OpVariant<DenseOptimizerProblem, DenseOptimizerArgs>;
/// In order of preference: the CPU (OpenMP) variant, then the GPU one (not implemented yet).
const std::vector<const DenseOptimizerVariant*>& dense_optimizer_variants();
Status dense_optimizer_step(const DenseOptimizerProblem& problem, const DenseOptimizerArgs& args,
                            const ExecutionContext& context);

}  // namespace parity::nn
