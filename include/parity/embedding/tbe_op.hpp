// TBE in the op pattern (core/op.hpp): one Problem (TbeProblem), one Args struct per pass, CPU
// variants over tbe_cpu.hpp and GPU variants over tbe_gpu.hpp behind the same signature. The GPU
// variants keep the device copy of the layout and the backward workspace themselves (cached per
// layout and grown on demand), so a caller only passes the batch and the state.
#pragma once

#include <vector>

#include "parity/core/op.hpp"
#include "parity/embedding/tbe.hpp"

namespace parity::embedding {

struct TbeForwardArgs {
  const void* weights = nullptr;  // weight_dtype, layout.total_weight_elements()
  TbeBatchView batch;             // indices, offsets (index_dtype), per-sample weights or null
  void* output = nullptr;         // output_rows() x output_cols(), output_dtype
};

struct TbeBackwardArgs {
  OptimizerParams optimizer;
  void* weights = nullptr;  // updated in place
  float* state1 = nullptr;  // optimizer_state1_elements
  float* state2 = nullptr;  // optimizer_state2_elements
  TbeBatchView batch;
  const float* grad_output = nullptr;  // fp32, output_rows() x output_cols()
};

using TbeForwardVariant = OpVariant<TbeProblem, TbeForwardArgs>;
using TbeBackwardVariant = OpVariant<TbeProblem, TbeBackwardArgs>;
/// In order of preference: the OpenMP CPU variant, then the GPU slots (forward: narrow rows and
/// fitted groups, whose can_implements are the rules of gpu::select_forward_kernel, then group per
/// bag for every shape).
const std::vector<const TbeForwardVariant*>& tbe_forward_variants();
const std::vector<const TbeBackwardVariant*>& tbe_backward_fused_variants();
/// Pooled lookup; then the backward fused with the optimiser (one update per unique row).
Status tbe_forward(const TbeProblem& problem, const TbeForwardArgs& args, const ExecutionContext& context);
Status tbe_backward_fused(const TbeProblem& problem, const TbeBackwardArgs& args,
                          const ExecutionContext& context);

}  // namespace parity::embedding
