// Host launch of the wgmma backward (backward_wgmma_kernel.cuh) for one element type: the
// softmax row terms, the main kernel (head-dimension dispatch, shared memory opt-in, grid), then
// the dQ conversion, as the mma.sync backward (launch_kernels.cuh, whose row-terms and dQ steps it
// shares). Included by backward_wgmma_<type>.cu. NVIDIA only (a HIP build, and hipcc's compile
// check, see none of the kernel).
#pragma once

#include "backends/gpu/attention/launch_kernels.cuh"

#if defined(PARITY_GPU_CUDA)
#include "backends/gpu/attention/backward_wgmma_kernel.cuh"
#endif

namespace parity::attention::gpu::detail {

#if defined(PARITY_GPU_CUDA)
template <Elem16 E, kernels::Mode M, int kDim, bool kRing>
Status launch_backward_wgmma_config(const AttentionParams& params, gpuStream_t stream) {
  constexpr int kShared = kernels::backward_wgmma_shared_bytes<kDim, kRing>();
  // if constexpr: the ring schedule has no deterministic mode to instantiate.
  void (*kernel)(const AttentionParams) = nullptr;
  if constexpr (kRing) {
    kernel = kernels::attention_backward_wgmma_kernel<E, M, kDim, true, false>;
  } else {
    kernel = params.deterministic ? kernels::attention_backward_wgmma_kernel<E, M, kDim, false, true>
                                  : kernels::attention_backward_wgmma_kernel<E, M, kDim, false, false>;
  }
  PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                     gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
  kernel<<<static_cast<unsigned>(grid_blocks(params)), kernels::kBwdWgmmaThreads, kShared,
           stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(attention_backward_wgmma_kernel);
  return Status::ok();
}

template <Elem16 E, kernels::Mode M>
Status backward_wgmma_mode(int dim, bool ring, const AttentionParams& params, gpuStream_t stream) {
  if (dim == 64 && ring) return launch_backward_wgmma_config<E, M, 64, true>(params, stream);
  if (dim == 128 && ring) return launch_backward_wgmma_config<E, M, 128, true>(params, stream);
  if (dim == 64) return launch_backward_wgmma_config<E, M, 64, false>(params, stream);
  if (dim == 128) return launch_backward_wgmma_config<E, M, 128, false>(params, stream);
  return unsupported("attention backward wgmma: head dim ", dim, " has no kernel");
}
#endif

template <Elem16 E>
Status launch_backward_wgmma_kernels(const AttentionProblem& problem, AttentionParams params,
                                     bool ring, gpuStream_t stream) {
#if defined(PARITY_GPU_CUDA)
  if (!backward_wgmma_dims_supported(problem.dim_qk, problem.dim_v)) {
    return unsupported("attention backward wgmma: head dims ", problem.dim_qk, "/", problem.dim_v,
                       " have no kernel");
  }
  const auto main_kernel = [&]() {
    return problem.kind == AttentionKind::kSoftmax
               ? backward_wgmma_mode<E, Mode::kSoftmax>(problem.dim_qk, ring, params, stream)
               : backward_wgmma_mode<E, Mode::kPointwise>(problem.dim_qk, ring, params, stream);
  };
  return launch_backward_steps<E>(problem, params, stream, main_kernel);
#else
  (void)problem;
  (void)params;
  (void)ring;
  (void)stream;
  return unsupported("attention backward wgmma: NVIDIA Hopper (sm_90a) only");
#endif
}

}  // namespace parity::attention::gpu::detail
