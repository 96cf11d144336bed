// Jagged attention (issue 15): HSTU pointwise attention, softmax (jagged flash) attention and GDPA
// over variable-length sequences packed row after row. The Problem and Args types are shared by
// the CPU path, the fp64 reference and the GPU kernels; see docs/attention.md for the math and
// the masks, and include/parity/attention/attention_op.hpp for the op (variants, selection).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

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

std::string_view attention_kind_name(AttentionKind kind);            // hstu, softmax, gdpa
Result<AttentionKind> parse_attention_kind(std::string_view text);
std::string_view activation_name(PointwiseActivation activation);  // silu, gelu, relu, sigmoid
Result<PointwiseActivation> parse_activation(std::string_view text);

/// Checks host copies of the offsets and num_targets against a valid problem: offsets start at
/// 0, never decrease and end at total_q / total_kv; kv_offsets null or equal to q_offsets unless
/// cross; num_targets given exactly when has_num_targets, each >= 0 (longer than the sequence is
/// allowed: then every row is a target); for kHstu/kGdpa every length <= max_seq_len (they divide
/// by N, so a longer sequence is a caller error, not a truncation). The message names the
/// parameter, the index and the value.
Status check_attention_inputs(const AttentionProblem& problem, const std::int64_t* q_offsets,
                              const std::int64_t* kv_offsets, const std::int32_t* num_targets);

/// Sequence lengths from offsets [B+1] (host).
std::vector<std::int64_t> lengths_from_offsets(const std::int64_t* offsets, std::int64_t batch);

/// "Useful" FLOPs by the generative-recommenders convention (research memo sec. 2.4), on the real
/// lengths: per sequence, pairs = n^2/2 when causal (self-attention) else n_q * n_kv, with n
/// truncated at max_seq_len for kSoftmax; f1 = 2*H*d_qk*pairs (q.k), f2 = 2*H*d_v*pairs (a.v);
/// forward = f1 + f2, backward = 3 f1 + 2 f2. Masks beyond causality (targets, window, context)
/// are not subtracted, as in the published figures this is compared with. kv_lengths empty =
/// q_lengths (self-attention).
struct AttentionFlops {
  double forward = 0;
  double backward = 0;
};
AttentionFlops useful_flops(const AttentionProblem& problem, const std::vector<std::int64_t>& q_lengths,
                            const std::vector<std::int64_t>& kv_lengths = {});

/// The (i, j) pairs the mask keeps in one sequence (exact, O(n log n); docs/attention.md, "Masks"),
/// after the softmax truncation. For cross-attention every pair of the two lengths.
std::int64_t masked_pairs(const AttentionProblem& problem, std::int64_t q_length, std::int64_t kv_length,
                          std::int64_t num_targets);
/// The FLOPs of the pairs the mask keeps (same f1/f2 split as useful_flops): what a kernel that
/// skipped every masked pair would do. Differs from useful_flops under targets and windows.
/// num_targets empty = none; kv_lengths empty = q_lengths.
AttentionFlops masked_flops(const AttentionProblem& problem, const std::vector<std::int64_t>& q_lengths,
                            const std::vector<std::int64_t>& kv_lengths, const std::vector<std::int32_t>& num_targets);

}  // namespace parity::attention
