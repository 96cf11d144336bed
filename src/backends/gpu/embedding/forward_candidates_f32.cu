// TBE narrow-row forward candidates for f32 weights (see forward_candidates_launch.cuh).
#define PARITY_TBE_FORWARD_CANDIDATES_INSTANTIATING
#include "backends/gpu/embedding/forward_candidates_launch.cuh"

namespace parity::embedding::gpu {
template Status dispatch_forward_candidate_kernels<gpu_device::F32Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int, ForwardKernel, bool, int, gpuStream_t);
template Status dispatch_forward_candidate_kernels<gpu_device::F32Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int, ForwardKernel, bool, int, gpuStream_t);
}  // namespace parity::embedding::gpu
