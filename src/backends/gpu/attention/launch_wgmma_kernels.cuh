// Host launches of the wgmma forward kernels (forward_wgmma_kernel.cuh, and the warp-specialized
// forward_wgmma_ws_kernel.cuh with 64- or 128-key S tiles) for one element type: head-dimension
// dispatch, shared memory opt-in, grid size. Included by forward_wgmma_<type>.cu,
// forward_wgmma_ws_<type>.cu and forward_wgmma_ws128_<type>.cu.
// NVIDIA only (a HIP build, and hipcc's compile check, see none of the kernel).
#pragma once

#include "backends/gpu/attention/launch_entry.cuh"

#if defined(PARITY_GPU_CUDA)
#include "backends/gpu/attention/forward_wgmma_ws_kernel.cuh"
#endif

namespace parity::attention::gpu::detail {

// Which wgmma forward a launch instantiates.
enum class WgmmaForward {
  kRound2,  // forward_wgmma_kernel.cuh
  kWs64,    // forward_wgmma_ws_kernel.cuh, 64-key S tiles
  kWs128,   // the same, 128-key S tiles
};

#if defined(PARITY_GPU_CUDA)
template <Elem16 E, kernels::Mode M, int kDim, WgmmaForward kKernel>
Status launch_forward_wgmma_config(const AttentionParams& params, gpuStream_t stream) {
  constexpr bool kWarpSpecialized = kKernel != WgmmaForward::kRound2;
  constexpr int kKeys = kKernel == WgmmaForward::kWs128 ? 128 : kernels::kTileCols;
  constexpr int kShared = kWarpSpecialized ? kernels::forward_wgmma_ws_shared_bytes<kDim, kKeys>()
                                           : kernels::forward_wgmma_shared_bytes<kDim>();
  constexpr int kThreads = kWarpSpecialized ? kernels::kWsThreads : kernels::kWgmmaThreads;
  // if constexpr: a TU instantiates only the kernel it launches.
  void (*kernel)(const AttentionParams) = nullptr;
  if constexpr (kWarpSpecialized) {
    kernel = kernels::attention_forward_wgmma_ws_kernel<E, M, kDim, kKeys>;
  } else {
    kernel = kernels::attention_forward_wgmma_kernel<E, M, kDim>;
  }
  PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                     gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
  const std::int64_t blocks =
      static_cast<std::int64_t>(params.grid_tiles) * params.batch * params.heads;
  kernel<<<static_cast<unsigned>(blocks), kThreads, kShared, stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(attention_forward_wgmma_kernel);
  return Status::ok();
}

template <Elem16 E, kernels::Mode M, WgmmaForward kKernel>
Status forward_wgmma_mode(int dim, const AttentionParams& params, gpuStream_t stream) {
  if (dim == 64) return launch_forward_wgmma_config<E, M, 64, kKernel>(params, stream);
  if (dim == 128) return launch_forward_wgmma_config<E, M, 128, kKernel>(params, stream);
  return unsupported("attention forward wgmma: head dim ", dim, " has no kernel");
}
#endif

template <Elem16 E, WgmmaForward kKernel>
Status launch_forward_wgmma_variant(const AttentionProblem& problem, const AttentionParams& params,
                                    gpuStream_t stream) {
#if defined(PARITY_GPU_CUDA)
  if (problem.dim_qk != problem.dim_v) {
    return unsupported("attention forward wgmma: d_qk=", problem.dim_qk, " != d_v=", problem.dim_v);
  }
  if (problem.kind == AttentionKind::kSoftmax) {
    return forward_wgmma_mode<E, kernels::Mode::kSoftmax, kKernel>(problem.dim_qk, params, stream);
  }
  return forward_wgmma_mode<E, kernels::Mode::kPointwise, kKernel>(problem.dim_qk, params, stream);
#else
  (void)problem;
  (void)params;
  (void)stream;
  return unsupported("attention forward wgmma: NVIDIA Hopper (sm_90a) only");
#endif
}

template <Elem16 E>
Status launch_forward_wgmma_kernels(const AttentionProblem& problem, const AttentionParams& params,
                                    gpuStream_t stream) {
  return launch_forward_wgmma_variant<E, WgmmaForward::kRound2>(problem, params, stream);
}

template <Elem16 E>
Status launch_forward_wgmma_ws_kernels(const AttentionProblem& problem,
                                       const AttentionParams& params, gpuStream_t stream) {
  return launch_forward_wgmma_variant<E, WgmmaForward::kWs64>(problem, params, stream);
}

template <Elem16 E>
Status launch_forward_wgmma_ws128_kernels(const AttentionProblem& problem,
                                          const AttentionParams& params, gpuStream_t stream) {
  return launch_forward_wgmma_variant<E, WgmmaForward::kWs128>(problem, params, stream);
}

}  // namespace parity::attention::gpu::detail
