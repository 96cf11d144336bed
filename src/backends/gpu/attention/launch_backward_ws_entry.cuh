// The warp-specialized wgmma backward's launch entry (launch_backward_wgmma_ws_kernels.cuh),
// apart from launch_entry.cuh so that the other kernels' translation units do not depend on it.
#pragma once

#include "backends/gpu/attention/launch_entry.cuh"

namespace parity::attention::gpu::detail {

// The warp-specialized wgmma backward (backward_wgmma_ws_kernel.cuh; one TU per kernel and element
// type, backward_wgmma_ws*_<type>.cu): same limits, dQ by atomics or bulk tensor reduce-adds.
enum class WgmmaBackward {
  kWs,               // TMA producer warpgroup, dQ by vector atomics
  kWsTmaReduce,      // the same, dQ through shared memory by bulk tensor reduce-adds
  kWsTmaReduceTanh,  // kWsTmaReduce with SiLU / sigmoid from one tanh.approx (not two MUFU ops)
  kWsTmaReduceTanhOverlapKvTiles,  // kWsTmaReduceTanh with the next kv tile's K/V prefetched into
                                   // L2 and no dQ completion wait between kv tiles
  kWsTmaReduceTanhOverlapKvTilesFusedGradQ,  // that one with each (sequence, head)'s last block
                                             // converting its dQ rows to 16 bits
                                             // (backward_grad_q_fused.cuh), no separate pass
};
template <Elem16 E, WgmmaBackward kKernel>
Status launch_backward_wgmma_ws_kernels(const AttentionProblem& problem, AttentionParams params,
                                        gpuStream_t stream);

}  // namespace parity::attention::gpu::detail
