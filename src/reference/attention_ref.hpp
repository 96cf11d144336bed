// fp64 reference of jagged attention (HSTU, softmax, GDPA): plain loops over (b, h, i, j), the
// mask written out from its definition (docs/attention.md), no code shared with the fast paths.
// Tensors are row-major [rows, heads, dim] in fp64; offsets and num_targets as in the op's Args.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/attention/attention.hpp"

namespace parity::ref {

struct AttentionRefInputs {
  std::vector<double> q, k, v;              // [total_q, H, d_qk], [total_kv, H, d_qk], [total_kv, H, d_v]
  std::vector<std::int64_t> q_offsets;      // [B+1]
  std::vector<std::int64_t> kv_offsets;     // [B+1]; empty = q_offsets (self-attention)
  std::vector<std::int32_t> num_targets;    // [B] when problem.has_num_targets, else empty
};

/// Whether query row i may see key row j of sequence b (positions inside the sequence).
bool attention_mask_ref(const attention::AttentionProblem& problem, std::int64_t q_length, std::int64_t kv_length,
                        std::int64_t num_targets, std::int64_t i, std::int64_t j);

/// out [total_q, H, d_v]; lse [total_q, H] (natural log; -inf for rows without keys) for kSoftmax,
/// else left empty. Checks the inputs first (check_attention_inputs and the vector sizes).
Status attention_forward_ref(const attention::AttentionProblem& problem, const AttentionRefInputs& inputs,
                             std::vector<double>* out, std::vector<double>* lse);

/// One query row i of sequence b, every head: out_row [H * d_v], lse_row [H] (-inf unless kSoftmax
/// and the row has keys). No input check: for sampled checks of large problems after
/// check_attention_inputs (the forward above calls it once, then this per row).
Status attention_forward_ref_row(const attention::AttentionProblem& problem, const AttentionRefInputs& inputs,
                                 std::int64_t b, std::int64_t i, std::vector<double>* out_row,
                                 std::vector<double>* lse_row);

/// Gradients of sum(out * grad_out) with respect to q, k and v, everything recomputed in fp64.
Status attention_backward_ref(const attention::AttentionProblem& problem, const AttentionRefInputs& inputs,
                              const std::vector<double>& grad_out, std::vector<double>* grad_q,
                              std::vector<double>* grad_k, std::vector<double>* grad_v);

}  // namespace parity::ref
