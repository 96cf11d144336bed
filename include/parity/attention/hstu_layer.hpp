// The HSTU layer (generative recommenders' sequential transduction unit) over jagged sequences
// packed row after row, x [T, D] with seq_offsets [B+1] (docs/attention.md, "The HSTU layer"):
//
//   n      = LayerNorm(x; norm_weight, norm_bias)                     [T, D]
//   p      = n W_uvqk^T + b_uvqk                                      [T, 2 H d_v + 2 H d_qk]
//   u, v, q, k = the column blocks of p in that order (each row-major [T, H, d]); u = SiLU(u)
//   a      = HSTU attention(q, k, v) with the problem's masks         [T, H d_v]
//   g      = u * LayerNorm(a; output_norm_weight, output_norm_bias)   [T, H d_v]
//   y      = x + g W_out^T + b_out                                    [T, D]
//
// Weights in torch's nn.Linear layout (out x in), always fp32 (the master weights); the backward
// returns d x and every parameter's fp32 gradient. The forward keeps what the backward needs in
// `saved` (hstu_layer_saved_bytes): n, p, a, the two layer norms' mean and 1/std per row; no
// O(N^2) buffer anywhere. Two variants:
//   CPU, dtype fp32: projections through gemm::Gemm (OpenBLAS); q, k, v rounded to bf16 for the
//     attention op, whose kernels take 16-bit inputs, and a back to fp32.
//   GPU, dtype bf16 (x, y, grad_y, grad_x, saved activations): the projections as cuBLASLt GEMMs
//     on bf16 copies of the weights with their bias (and residual) epilogues, p kept as four
//     contiguous blocks so the attention kernels read q, k, v in place, the norms and the gate as
//     one-warp-per-row kernels, the parameter gradients reduced in a fixed order (repeatable).
#pragma once

#include <cstdint>
#include <vector>

#include "parity/attention/attention.hpp"
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::attention {

struct HstuLayerProblem {
  std::int64_t batch = 0;         // B sequences
  std::int64_t total_tokens = 0;  // T = seq_offsets[B]
  int model_dim = 0;              // D
  int heads = 0;                  // H
  int dim_qk = 0;                 // attention dim of q and k per head (1..256; the GPU kernels' 64, 128, 256)
  int dim_v = 0;                  // hidden dim of u and v per head (1..256)
  std::int64_t max_seq_len = 0;   // N: the attention divides by N; every length <= N
  bool causal = true;
  bool has_num_targets = false;
  int contextual_len = 0;
  int max_attn_len = 0;
  int min_full_attn_len = 0;
  float alpha = 0;                    // score scale; 0 = 1/sqrt(dim_qk)
  float layer_norm_epsilon = 1e-6F;   // both layer norms
  DType dtype = DType::kF32;          // activations: fp32 (the CPU variant) or bf16 (the GPU one)
  Status validate() const;            // names the parameter and the value

  std::int64_t uvqk_width() const { return 2LL * heads * (dim_v + dim_qk); }
  std::int64_t attention_width() const { return static_cast<std::int64_t>(heads) * dim_v; }
  AttentionProblem attention() const;  // the attention the layer runs (kHstu, SiLU, 16-bit)
};

struct HstuLayerWeights {  // fp32 (host memory for the CPU, device memory for the GPU), sizes in the comments
  const float* norm_weight = nullptr;         // [D]
  const float* norm_bias = nullptr;           // [D]
  const float* uvqk_weight = nullptr;         // [2 H (d_v + d_qk), D]
  const float* uvqk_bias = nullptr;           // [2 H (d_v + d_qk)]
  const float* output_norm_weight = nullptr;  // [H d_v]
  const float* output_norm_bias = nullptr;    // [H d_v]
  const float* output_weight = nullptr;       // [D, H d_v]
  const float* output_bias = nullptr;         // [D]
};

struct HstuLayerGradients {  // fp32, overwritten, same shapes and memory as HstuLayerWeights
  float* norm_weight = nullptr;
  float* norm_bias = nullptr;
  float* uvqk_weight = nullptr;
  float* uvqk_bias = nullptr;
  float* output_norm_weight = nullptr;
  float* output_norm_bias = nullptr;
  float* output_weight = nullptr;
  float* output_bias = nullptr;
};

struct HstuLayerForwardArgs {
  const void* x = nullptr;                    // [T, D] of dtype; tensors may be null when T = 0
  const std::int64_t* seq_offsets = nullptr;  // [B+1] (host memory for the CPU, device for the GPU)
  const std::int32_t* num_targets = nullptr;  // [B] when has_num_targets, else null (likewise)
  // GPU: host copies of seq_offsets and num_targets, checked like the CPU variant's when given
  // (the GPU variant never reads device memory back to check it). Ignored on the CPU.
  const std::int64_t* host_seq_offsets = nullptr;
  const std::int32_t* host_num_targets = nullptr;
  HstuLayerWeights weights;
  void* y = nullptr;      // [T, D]; may not alias x
  void* saved = nullptr;  // hstu_layer_saved_bytes(problem): written here, read by the backward
  // Device memory of hstu_layer_workspace_bytes(problem, context) bytes for the GPU variant (the
  // forward and the backward use the same amount); unused on the CPU.
  void* workspace = nullptr;
  std::int64_t workspace_bytes = 0;
};

struct HstuLayerBackwardArgs {
  HstuLayerForwardArgs forward;  // the forward's inputs and its `saved` (y is not read)
  const void* grad_y = nullptr;  // [T, D]
  void* grad_x = nullptr;        // [T, D]
  HstuLayerGradients grads;
};

/// Bytes of the forward's saved activations: n, p, a in the problem's dtype (fp32 or bf16, each
/// 16-bit section 256-byte aligned) and the two layer norms' fp32 statistics.
std::int64_t hstu_layer_saved_bytes(const HstuLayerProblem& problem);

/// Device workspace the variant chosen for `context` needs, forward or backward (the larger); 0
/// on the CPU. Errors as the dispatch would give them (no variant applies).
Result<std::int64_t> hstu_layer_workspace_bytes(const HstuLayerProblem& problem, const ExecutionContext& context);

using HstuLayerForwardVariant = OpVariant<HstuLayerProblem, HstuLayerForwardArgs>;
using HstuLayerBackwardVariant = OpVariant<HstuLayerProblem, HstuLayerBackwardArgs>;
const std::vector<const HstuLayerForwardVariant*>& hstu_layer_forward_variants();
const std::vector<const HstuLayerBackwardVariant*>& hstu_layer_backward_variants();

/// Validate, check the host offsets and num_targets (check_attention_inputs), pick a variant and
/// run it (GPU: in args.workspace; asynchronous on context.stream).
Status hstu_layer_forward(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args,
                          const ExecutionContext& context);
Status hstu_layer_backward(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args,
                           const ExecutionContext& context);

/// Forward multiply-adds as FLOPs on the real lengths: the two projections (2 T D W each) plus the
/// attention's useful FLOPs (useful_flops); backward twice the projections plus the attention's.
struct HstuLayerFlops {
  double forward = 0;
  double backward = 0;
};
HstuLayerFlops hstu_layer_flops(const HstuLayerProblem& problem, const std::vector<std::int64_t>& lengths);

}  // namespace parity::attention
