// Warp-specialized wgmma backward attention kernels (dQ by bulk tensor reduce-adds; SiLU and
// sigmoid through tanh.approx; the next kv tile's K/V prefetched into L2; dQ converted to 16 bits
// by the block that completes each q tile, backward_grad_q_fused.cuh) for bf16 elements (one TU
// per variant and type: they compile in parallel).
#include "backends/gpu/attention/launch_backward_wgmma_ws_kernels.cuh"

namespace parity::attention::gpu::detail {
template Status launch_backward_wgmma_ws_kernels<
    Elem16::kBF16, WgmmaBackward::kWsTmaReduceTanhOverlapKvTilesFusedGradQ>(const AttentionProblem&,
                                                                            AttentionParams,
                                                                            gpuStream_t);
}  // namespace parity::attention::gpu::detail
