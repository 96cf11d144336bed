// wgmma backward attention kernels for f16 elements (one TU per type: they compile in parallel).
#include "backends/gpu/attention/launch_backward_wgmma_kernels.cuh"

namespace parity::attention::gpu::detail {
template Status launch_backward_wgmma_kernels<Elem16::kF16>(const AttentionProblem&, AttentionParams, bool,
                                                            gpuStream_t);
}  // namespace parity::attention::gpu::detail
