// TBE backward chunk/combine kernels for f16 weights (see backward_chunk.cuh).
#define PARITY_TBE_BACKWARD_CHUNKS_INSTANTIATING
#include "backends/gpu/embedding/backward_chunk.cuh"

namespace parity::embedding::gpu {
template Status dispatch_backward_chunks<gpu_device::F16Tag, std::int32_t>(const gpu_device::BackwardParams<std::int32_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
template Status dispatch_backward_chunks<gpu_device::F16Tag, std::int64_t>(const gpu_device::BackwardParams<std::int64_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
}  // namespace parity::embedding::gpu
