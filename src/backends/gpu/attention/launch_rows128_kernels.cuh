// Host launches of the 128-row forward kernel (forward_rows128_kernel.cuh) for one element type:
// head-dimension dispatch, shared memory opt-in, grid size. Included by forward_rows128_<type>.cu.
// NVIDIA only: the kernel's per-group branches need 32-lane warps; a HIP build refuses (the
// 64-row kernel is the portable one).
#pragma once

#include "backends/gpu/attention/launch_entry.cuh"

#if defined(PARITY_GPU_CUDA)
#include "backends/gpu/attention/forward_rows128_kernel.cuh"
#endif

namespace parity::attention::gpu::detail {

#if defined(PARITY_GPU_CUDA)
template <Elem16 E, kernels::Mode M, int kDimQk, int kDimV>
Status launch_forward_rows128_config(const AttentionParams& params, gpuStream_t stream) {
  constexpr int kShared = kernels::forward_rows128_shared_bytes<kDimQk, kDimV>();
  const auto kernel = kernels::attention_forward_rows128_kernel<E, M, kDimQk, kDimV>;
  PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                     gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
  const std::int64_t blocks =
      static_cast<std::int64_t>(params.grid_tiles) * params.batch * params.heads;
  kernel<<<static_cast<unsigned>(blocks), kernels::kRows128Threads, kShared, stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(attention_forward_rows128_kernel);
  return Status::ok();
}

template <Elem16 E, kernels::Mode M>
Status forward_rows128_mode(int dim_qk, int dim_v, const AttentionParams& params,
                            gpuStream_t stream) {
  if (dim_qk == 64 && dim_v == 64)
    return launch_forward_rows128_config<E, M, 64, 64>(params, stream);
  if (dim_qk == 128 && dim_v == 128)
    return launch_forward_rows128_config<E, M, 128, 128>(params, stream);
  if (dim_qk == 64 && dim_v == 128)
    return launch_forward_rows128_config<E, M, 64, 128>(params, stream);
  if (dim_qk == 128 && dim_v == 64)
    return launch_forward_rows128_config<E, M, 128, 64>(params, stream);
  return unsupported("attention forward rows128: head dims ", dim_qk, "/", dim_v,
                     " have no kernel");
}
#endif

template <Elem16 E>
Status launch_forward_rows128_kernels(const AttentionProblem& problem,
                                      const AttentionParams& params, gpuStream_t stream) {
#if defined(PARITY_GPU_CUDA)
  if (problem.kind == AttentionKind::kSoftmax)
    return forward_rows128_mode<E, kernels::Mode::kSoftmax>(problem.dim_qk, problem.dim_v, params,
                                                            stream);
  return forward_rows128_mode<E, kernels::Mode::kPointwise>(problem.dim_qk, problem.dim_v, params,
                                                            stream);
#else
  (void)problem;
  (void)params;
  (void)stream;
  return unsupported("attention forward rows128: NVIDIA only (needs 32-lane warps)");
#endif
}

}  // namespace parity::attention::gpu::detail
