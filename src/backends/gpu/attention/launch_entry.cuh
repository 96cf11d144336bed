// The per-element-type launch functions (defined in launch_kernels.cuh, instantiated once per
// type by forward_<type>.cu / backward_<type>.cu) and the head dimensions that have kernels.
#pragma once

#include "backends/gpu/attention/params.cuh"
#include "parity/attention/attention.hpp"

namespace parity::attention::gpu::detail {

namespace kernels = parity::gpu_device::attention;
using kernels::AttentionParams;
using kernels::Elem16;

template <Elem16 E>
Status launch_forward_kernels(const AttentionProblem& problem, const AttentionParams& params,
                              gpuStream_t stream);
template <Elem16 E>
Status launch_backward_kernels(const AttentionProblem& problem, AttentionParams params,
                               gpuStream_t stream);

// (d_qk, d_v) pairs with kernels. The backward keeps dK and dV of 16 rows per mma group in
// registers: 2 x 64 fp32 per lane at d = 128; d = 256 would spill.
inline bool forward_dims_supported(int dim_qk, int dim_v) {
  return dim_qk == dim_v && (dim_qk == 64 || dim_qk == 128 || dim_qk == 256);
}
inline bool backward_dims_supported(int dim_qk, int dim_v) {
  return dim_qk == dim_v && (dim_qk == 64 || dim_qk == 128);
}

}  // namespace parity::attention::gpu::detail
