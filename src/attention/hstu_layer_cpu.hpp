// The HSTU layer's CPU variant (internal): fp32 layer norms, SiLU and gating as OpenMP passes, the
// two projections through nn::linear (gemm::Gemm, OpenBLAS), the attention through the attention
// op's CPU variant on bf16 copies of q, k, v. Arguments are checked by the caller.
#pragma once

#include "parity/attention/hstu_layer.hpp"

namespace parity::attention::cpu {

Status hstu_layer_forward(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args,
                          const ExecutionContext& context);
Status hstu_layer_backward(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args,
                           const ExecutionContext& context);

}  // namespace parity::attention::cpu
