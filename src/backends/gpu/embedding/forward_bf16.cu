// TBE forward kernels for bf16 weights (see forward_launch.cuh).
#define PARITY_TBE_FORWARD_INSTANTIATING
#include "backends/gpu/embedding/forward_launch.cuh"

namespace parity::embedding::gpu {
template Status dispatch_forward_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
template Status dispatch_forward_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
template Status dispatch_forward_narrow_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
template Status dispatch_forward_narrow_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
template Status dispatch_forward_fitted_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
template Status dispatch_forward_fitted_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
template Status dispatch_forward_split_bags_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
template Status dispatch_forward_split_bags_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
}  // namespace parity::embedding::gpu
