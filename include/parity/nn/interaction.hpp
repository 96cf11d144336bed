// Feature interactions between the bottom MLP's output and the pooled embeddings.
//
// Dot (DLRM): z = [x, e_0, ..., e_{F-1}], F+1 vectors of D per sample; the output is x followed by
// the dots z_i . z_j strictly below the diagonal in row-major order (1,0), (2,0), (2,1), (3,0), ...
// (torch.tril_indices(F+1, F+1, -1)): B x (D + (F+1)F/2). Embeddings come as the TBE's pooled
// output, B x F*D with feature f in columns [f*D, (f+1)*D).
//
// DCNv2 cross layer (MLPerf DLRMv2): x_{l+1} = x_0 * (U (V x_l) + c) + x_l, V: R x W, U: W x R,
// c: W, B x W activations. Two linear ops (low = V x_l, cross = U low + c) and an elementwise pass;
// the forward keeps low and cross for the backward:
//   d cross = g * x_0;  dU, dc, d low from U's linear backward;  dV, dx from V's;
//   grad_input = g + dx;  grad_x0 += g * cross  (x_0 feeds every layer, so its gradient adds up)
#pragma once

#include <cstdint>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"
#include "parity/nn/linear.hpp"

namespace parity::nn {

struct DotInteractionProblem {
  std::int64_t batch_size = 0;
  std::int64_t num_embeddings = 0;  // F
  std::int64_t dim = 0;             // D
  DType dtype = DType::kF32;
  // Elements between rows of output and grad_output; 0 = output_dim(). A wider stride (e.g. 480 for
  // 479) keeps the next GEMM's rows 16-byte aligned; the padding columns are written as zeros.
  // GPU variants only.
  std::int64_t output_stride = 0;
  std::int64_t num_pairs() const { return (num_embeddings + 1) * num_embeddings / 2; }
  std::int64_t output_dim() const { return dim + num_pairs(); }
  Status validate() const;
};

struct DotInteractionForwardArgs {
  const void* bottom = nullptr;      // B x D
  const void* embeddings = nullptr;  // B x F*D
  void* output = nullptr;            // B x (D + pairs)
};

struct DotInteractionBackwardArgs {
  const void* bottom = nullptr;
  const void* embeddings = nullptr;
  const void* grad_output = nullptr;  // B x (D + pairs)
  void* grad_bottom = nullptr;        // B x D, overwritten
  float* grad_embeddings = nullptr;   // B x F*D, fp32 (the TBE backward's input), overwritten
};

using DotInteractionForwardVariant = OpVariant<DotInteractionProblem, DotInteractionForwardArgs>;
using DotInteractionBackwardVariant = OpVariant<DotInteractionProblem, DotInteractionBackwardArgs>;
const std::vector<const DotInteractionForwardVariant*>& dot_interaction_forward_variants();
const std::vector<const DotInteractionBackwardVariant*>& dot_interaction_backward_variants();
Status dot_interaction_forward(const DotInteractionProblem& problem,
                               const DotInteractionForwardArgs& args, const ExecutionContext& context);
Status dot_interaction_backward(const DotInteractionProblem& problem,
                                const DotInteractionBackwardArgs& args,
                                const ExecutionContext& context);

struct CrossLayerProblem {
  std::int64_t batch_size = 0;
  std::int64_t width = 0;  // W
  std::int64_t rank = 0;   // R
  DType dtype = DType::kF32;
  MathMode math = MathMode::kFp32;
  Status validate() const;
  LinearProblem down_projection() const;  // low = V x: I = W, O = R, no bias
  LinearProblem up_projection() const;    // cross = U low + c: I = R, O = W, bias
};

struct CrossLayerForwardArgs {
  const void* x0 = nullptr;        // B x W
  const void* input = nullptr;     // B x W (x_l)
  const void* v_weight = nullptr;  // R x W
  const void* u_weight = nullptr;  // W x R
  const void* u_bias = nullptr;    // W (fp32)
  void* low = nullptr;             // B x R, kept for the backward
  void* cross = nullptr;           // B x W, kept for the backward
  void* output = nullptr;          // B x W (x_{l+1}); must not alias input or x0
};

struct CrossLayerBackwardArgs {
  const void* x0 = nullptr;
  const void* input = nullptr;
  const void* v_weight = nullptr;
  const void* u_weight = nullptr;
  const void* low = nullptr;
  const void* cross = nullptr;
  const void* grad_output = nullptr;  // B x W
  void* grad_x0 = nullptr;            // B x W, accumulated (+=) unless accumulate_grad_x0 is false
  void* grad_input = nullptr;         // B x W, overwritten; must not alias grad_x0
  float* grad_v = nullptr;            // R x W
  float* grad_u = nullptr;            // W x R
  float* grad_u_bias = nullptr;       // W
  void* scratch_cross = nullptr;      // B x W (d cross)
  void* scratch_low = nullptr;        // B x R (d low)
  // false: grad_x0 is overwritten instead (the first layer a backward visits: no zero fill first).
  bool accumulate_grad_x0 = true;
};

using CrossLayerForwardVariant = OpVariant<CrossLayerProblem, CrossLayerForwardArgs>;
using CrossLayerBackwardVariant = OpVariant<CrossLayerProblem, CrossLayerBackwardArgs>;
const std::vector<const CrossLayerForwardVariant*>& cross_layer_forward_variants();
const std::vector<const CrossLayerBackwardVariant*>& cross_layer_backward_variants();
Status cross_layer_forward(const CrossLayerProblem& problem, const CrossLayerForwardArgs& args,
                           const ExecutionContext& context);
Status cross_layer_backward(const CrossLayerProblem& problem, const CrossLayerBackwardArgs& args,
                            const ExecutionContext& context);

}  // namespace parity::nn
