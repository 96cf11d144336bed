// Jagged attention in the op pattern (core/op.hpp): one Problem (AttentionProblem), one Args
// struct per pass, a CPU variant (OpenMP over (b, h, row tiles), fp32 accumulation) and a GPU
// slot per pass that parity_gpu fills with the kernels of src/backends/gpu/attention/. CPU and
// GPU variants share the signature; ExecutionContext::device picks, select_variant says why the
// others were skipped. See docs/attention.md.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/attention/attention.hpp"
#include "parity/core/op.hpp"

namespace parity::attention {

using AttentionForwardVariant = OpVariant<AttentionProblem, AttentionForwardArgs>;
using AttentionBackwardVariant = OpVariant<AttentionProblem, AttentionBackwardArgs>;

/// In order of preference: the OpenMP CPU variant, then the GPU slots (forward: the Hopper wgmma
/// kernel `attention_forward_gpu_wgmma` where it runs (sm_90a, d_qk = d_v in {64, 128}), the
/// 128-row mma.sync kernel `attention_forward_gpu_rows128`, then the 64-row one
/// `attention_forward_gpu`; any one by name with `parity bench attention --forward-variants`).
const std::vector<const AttentionForwardVariant*>& attention_forward_variants();
const std::vector<const AttentionBackwardVariant*>& attention_backward_variants();

/// The CPU variants check the host offsets (check_attention_inputs) before touching any tensor.
/// On the GPU the offsets live on the device: the caller checks its host copy once.
Status attention_forward(const AttentionProblem& problem, const AttentionForwardArgs& args,
                         const ExecutionContext& context);
/// Workspace the chosen backward variant needs (bytes; 0 on the CPU).
Result<std::int64_t> attention_backward_workspace_bytes(const AttentionProblem& problem,
                                                        const ExecutionContext& context);
/// `workspace` has attention_backward_workspace_bytes(problem, context) bytes (device memory on
/// the GPU). For kSoftmax, args.forward.out and args.forward.softmax_lse are the forward's.
Status attention_backward(const AttentionProblem& problem, const AttentionBackwardArgs& args, void* workspace,
                          const ExecutionContext& context);

}  // namespace parity::attention
