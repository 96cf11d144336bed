// Internal: the OpenMP CPU path of jagged attention (fp32 accumulation, bf16/fp16 in and out).
// Host pointers; the inputs are assumed checked (check_attention_inputs).
#pragma once

#include "parity/attention/attention.hpp"

namespace parity::attention::cpu {

// Rows per work item of the OpenMP loops (tests use lengths of this +- 1).
inline constexpr std::int64_t kRowTile = 64;

Status forward(const AttentionProblem& problem, const AttentionForwardArgs& args);
// Softmax reads the forward's out and softmax_lse from args.forward.
Status backward(const AttentionProblem& problem, const AttentionBackwardArgs& args);

}  // namespace parity::attention::cpu
