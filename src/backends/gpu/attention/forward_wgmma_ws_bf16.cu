// Warp-specialized wgmma forward attention kernels for bf16 elements (one TU per type: they
// compile in parallel).
#include "backends/gpu/attention/launch_wgmma_kernels.cuh"

namespace parity::attention::gpu::detail {
template Status launch_forward_wgmma<Elem16::kBF16, WgmmaForward::kWs64>(
    const AttentionProblem&, const AttentionParams&, gpuStream_t);
}  // namespace parity::attention::gpu::detail
