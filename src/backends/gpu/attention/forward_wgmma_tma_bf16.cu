// Warp-specialized wgmma forward attention kernels with TMA loads and 128-key S tiles for bf16
// elements (one TU per type and tile width: they compile in parallel).
#include "backends/gpu/attention/launch_wgmma_kernels.cuh"

namespace parity::attention::gpu::detail {
template Status launch_forward_wgmma<Elem16::kBF16, WgmmaForward::kTma128>(const AttentionProblem&,
                                                                           const AttentionParams&,
                                                                           gpuStream_t);
}  // namespace parity::attention::gpu::detail
