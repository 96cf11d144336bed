// The persistent TMA wgmma forward (128-key S tiles, a resident grid walking every q tile,
// (sequence, head) major) for f16 elements (one TU per type and kernel: they compile in parallel).
#include "backends/gpu/attention/launch_wgmma_kernels.cuh"

namespace parity::attention::gpu::detail {
template Status launch_forward_wgmma<Elem16::kF16, WgmmaForward::kTma128Persistent>(
    const AttentionProblem&, const AttentionParams&, gpuStream_t);
}  // namespace parity::attention::gpu::detail
