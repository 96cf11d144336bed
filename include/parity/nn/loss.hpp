// Binary cross-entropy with logits, mean over the batch (torch.nn.BCEWithLogitsLoss):
//   loss = (1/B) sum_b [max(z_b, 0) + log1p(exp(-|z_b|)) - y_b z_b],  d loss / d z_b = (s(z_b) - y_b) / B
// The loss is summed in fp64 in sample order, so it does not depend on the thread count.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::nn {

struct BceLossProblem {
  std::int64_t batch_size = 0;
  DType dtype = DType::kF32;  // logits and their gradient: fp32 (CPU, GPU) or bf16/fp16 (GPU)
  Status validate() const;
};

struct BceLossArgs {
  const void* logits = nullptr;   // B, problem.dtype
  const float* labels = nullptr;  // B, in [0, 1]
  double* loss = nullptr;         // one value (host memory on every device)
  void* grad_logits = nullptr;    // B, problem.dtype, or null for evaluation
};

using BceLossVariant = OpVariant<BceLossProblem, BceLossArgs>;
const std::vector<const BceLossVariant*>& bce_loss_variants();
Status bce_with_logits(const BceLossProblem& problem, const BceLossArgs& args,
                       const ExecutionContext& context);

}  // namespace parity::nn
