// Linear layer y = act(x W^T + b), row-major: x is B x I, W is O x I (torch's nn.Linear layout),
// y is B x O. The forward runs one gemm::Gemm (TN, M=O N=B K=I) with the bias/ReLU epilogue and
// keeps y (and, when args.aux is given, the ReLU bit mask) for the backward, which runs
//   d pre = dy * (y > 0)   (ReLU only; skipped when the layer above already applied it)
//   dW    = d pre^T x      (NT, M=I N=O K=B, bias gradient reduced in the epilogue)
//   dx    = d pre W        (NN, M=I N=B K=O; skipped when grad_input is null: the first layer)
// Fused dReLU: when x is itself a ReLU output whose mask the producing layer's forward wrote,
// passing that mask as input_relu_mask makes the dx GEMM's epilogue (kDRelu) apply the producer's
// dReLU, so grad_input is d loss / d (producer's pre-activation) and the producer's backward runs
// with grad_output_is_preactivation: no separate ReLU-backward pass over B x I.
// Activations and their gradients are `dtype` (fp32 on the CPU); parameter gradients are fp32.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::nn {

enum class Activation : std::uint8_t { kNone, kRelu };
enum class BiasMode : std::uint8_t { kNone, kBias };
// fp32 GEMM operands: kTf32 lets GPU variants use TF32 tensor cores (CPU variants compute fp32).
enum class MathMode : std::uint8_t { kFp32, kTf32 };

struct LinearProblem {
  std::int64_t batch_size = 0;
  std::int64_t in_features = 0;
  std::int64_t out_features = 0;
  Activation activation = Activation::kNone;
  BiasMode bias = BiasMode::kBias;
  DType dtype = DType::kF32;  // fp32 or bf16 activations/weights (bf16: fp32 accumulation)
  MathMode math = MathMode::kFp32;
  Status validate() const;  // names the field and the value
};

struct LinearForwardArgs {
  const void* input = nullptr;   // B x I
  const void* weight = nullptr;  // O x I
  const void* bias = nullptr;    // O (fp32), when problem.bias == kBias
  void* output = nullptr;        // B x O
  // Optional: the ReLU bit mask (pre-activation > 0) for a later fused backward; ReLU with bias
  // only. gemm::GemmRunProblem::aux_bytes of the forward GEMM (B x round_up(O, 128) bits).
  void* aux = nullptr;
};

struct LinearBackwardArgs {
  const void* input = nullptr;        // B x I, as in the forward
  const void* weight = nullptr;       // O x I
  const void* output = nullptr;       // B x O, the forward's activated output (ReLU mask)
  const void* grad_output = nullptr;  // B x O, d loss / d y
  void* grad_input = nullptr;         // B x I, or null (not needed for the first layer)
  float* grad_weight = nullptr;       // O x I, overwritten
  float* grad_bias = nullptr;         // O, overwritten (kBias only)
  // Scratch for d pre (B x O, dtype) when the activation is ReLU; may alias grad_output.
  void* grad_preactivation = nullptr;
  // Fused dReLU (see the header comment): the mask the producer of `input` wrote as its forward
  // aux (B x round_up(I, 128) bits), or null.
  const void* input_relu_mask = nullptr;
  // True when grad_output already is d loss / d pre-activation (this layer's dReLU was fused into
  // the layer above's dx GEMM); then output and grad_preactivation are not read.
  bool grad_output_is_preactivation = false;
};

using LinearForwardVariant = OpVariant<LinearProblem, LinearForwardArgs>;
using LinearBackwardVariant = OpVariant<LinearProblem, LinearBackwardArgs>;
/// In order of preference: the gemm::Gemm variant (CPU: OpenBLAS), then the GPU slot.
const std::vector<const LinearForwardVariant*>& linear_forward_variants();
const std::vector<const LinearBackwardVariant*>& linear_backward_variants();
Status linear_forward(const LinearProblem& problem, const LinearForwardArgs& args,
                      const ExecutionContext& context);
Status linear_backward(const LinearProblem& problem, const LinearBackwardArgs& args,
                       const ExecutionContext& context);

}  // namespace parity::nn
