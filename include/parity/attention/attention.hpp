// Jagged attention (issue 15): HSTU pointwise attention, softmax (jagged flash) attention and GDPA
// over variable-length sequences packed row after row. The Problem and Args types are shared by
// the CPU path, the fp64 reference and the GPU kernels; see docs/attention.md for the math and
// the masks, and include/parity/attention/attention_op.hpp for the op (variants, selection).
#pragma once

#include <cstdint>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"

namespace parity::attention {

enum class AttentionKind : std::uint8_t { kHstu, kSoftmax, kGdpa };  // kSoftmax = jagged flash attention
enum class PointwiseActivation : std::uint8_t { kSilu, kGelu, kRelu, kSigmoid };  // HSTU uses kSilu; GDPA any

struct AttentionProblem {
  AttentionKind kind = AttentionKind::kHstu;
  PointwiseActivation activation = PointwiseActivation::kSilu;  // ignored for kSoftmax
  std::int64_t batch = 0;    // B sequences
  int heads = 0;             // H
  int dim_qk = 0;            // d of q and k: 64, 128, 256
  int dim_v = 0;             // d of v and out (may differ from dim_qk)
  std::int64_t total_q = 0;  // sum of q lengths (rows of q / out)
  std::int64_t total_kv = 0; // sum of k/v lengths (== total_q for self-attention)
  bool cross = false;        // false: kv_offsets == q_offsets (self-attention)
  std::int64_t max_seq_len = 0;  // N: HSTU/GDPA divide by N; softmax truncates each sequence at N
  bool causal = true;
  bool has_num_targets = false;  // HSTU: the last num_targets[b] rows are targets; they do not see each other
  int contextual_len = 0;        // HSTU: a prefix every row sees and that sees every row (sec. 2.2)
  int max_attn_len = 0;          // local window; 0 = none
  int min_full_attn_len = 0;     // with a window: the last rows that keep full attention
  float alpha = 0;               // score scale; 0 = 1/sqrt(dim_qk)
  DType dtype = DType::kBF16;    // kBF16 or kF16 in/out, fp32 accumulation
  bool deterministic = false;    // backward without atomics
  Status validate() const;       // names the parameter and the value

  float effective_alpha() const;  // alpha, or 1/sqrt(dim_qk) when alpha == 0
};

struct AttentionForwardArgs {     // row-major [rows, heads, dim] element tensors
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const std::int64_t* q_offsets = nullptr;   // [B+1], device or host memory matching the path
  const std::int64_t* kv_offsets = nullptr;  // [B+1]; == q_offsets unless cross
  const std::int32_t* num_targets = nullptr; // [B] or null
  void* out = nullptr;                       // [total_q, heads, dim_v]
  float* softmax_lse = nullptr;              // [total_q, heads] for kSoftmax (kept for the backward), else null
};

struct AttentionBackwardArgs {
  AttentionForwardArgs forward;  // the forward's inputs (out and softmax_lse as inputs)
  const void* grad_out = nullptr;  // [total_q, heads, dim_v]
  void* grad_q = nullptr;
  void* grad_k = nullptr;
  void* grad_v = nullptr;
};

}  // namespace parity::attention
