// Internal: the GPU slots of the attention op (src/core/gpu_slot.hpp). parity_gpu installs
// variants that call parity::attention::gpu::{can_implement, forward, backward,
// backward_workspace_bytes} (src/backends/gpu/attention/attention_launch.hpp) from
// src/backends/cuda/attention/ at start-up; until then they refuse with the reason.
#pragma once

#include "core/gpu_slot.hpp"
#include "parity/attention/attention_op.hpp"

namespace parity::attention::detail {

parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_slot();
// The 128-row forward kernel (gpu::ForwardKernel::kRows128), selectable by name.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_rows128_slot();
// The Hopper wgmma forward kernel (gpu::ForwardKernel::kWgmma), selectable by name; listed last,
// so never the default.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_slot();
// The warp-specialized wgmma forward (gpu::ForwardKernel::kWgmmaWs), selectable by name; listed
// after the kernels that take every problem it takes, so never the default.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_ws_slot();
// The warp-specialized wgmma forward with 128-key S tiles (gpu::ForwardKernel::kWgmmaWs128), and
// with TMA loads (kWgmmaTma: 128-key tiles, kWgmmaTma64: 64), selectable by name; listed last.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_ws128_slot();
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_slot();
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma64_slot();
// kWgmmaTma's kernel with blocks walking the q tiles of a (sequence, head)
// (gpu::ForwardKernel::kWgmmaTmaSeq); listed first: the default where it runs.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_seq_slot();
// kWgmmaTma's kernel with the q tiles of a (sequence, head) adjacent in the grid
// (gpu::ForwardKernel::kWgmmaTmaTileMajor), and on a resident grid walking them in that order
// (kWgmmaTmaPersistent); listed last, by name (A/B).
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_tile_major_slot();
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_persistent_slot();
// kWgmmaTma's kernel with a few adjacent blocks per (sequence, head), each walking every k-th q
// tile (gpu::ForwardKernel::kWgmmaTmaPairWalk); listed first: the default where it runs.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_pair_walk_slot();
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_slot();
// The Hopper wgmma backward (gpu::BackwardKernel::kWgmma): listed first among the GPU backwards,
// so the default where it runs (sm_90a, d_qk = d_v in {64, 128}).
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_slot();
// The same kernel with its mbarrier-ring schedule (gpu::BackwardKernel::kWgmmaRing), selectable
// by name; listed after the kernels that take every problem it takes, so never the default.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ring_slot();
// The warp-specialized wgmma backward (gpu::BackwardKernel::kWgmmaWs: TMA producer warpgroup) and
// the same with dQ by bulk tensor reduce-adds (kWgmmaWsTmaReduce), selectable by name; listed
// last until measured.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_slot();
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_slot();
// The TMA-reduce backward on the pair walk's grid (gpu::BackwardKernel::kWgmmaWsTmaReducePairWalk),
// listed first: the default backward where it runs.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_slot();
// The pair walk with SiLU / sigmoid through tanh.approx (kWgmmaWsTmaReducePairWalkTanh); by name,
// listed last until measured.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh_slot();
// The tanh pair walk with the next kv tile's K/V prefetched into L2, no dQ completion wait
// between kv tiles and dK / dV stored through shared memory (kWgmmaWsTmaReducePairWalkOverlapTanh);
// by name, listed last until measured.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_slot();
// That one converting dQ to 16 bits in the kernel, per q tile by the block that completes it
// (kWgmmaWsTmaReducePairWalkOverlapTanhFusedGradQ); by name, listed last until measured.
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq_slot();

}  // namespace parity::attention::detail
