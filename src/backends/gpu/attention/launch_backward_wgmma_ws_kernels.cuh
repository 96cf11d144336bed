// Host launch of the warp-specialized wgmma backward (backward_wgmma_ws_kernel.cuh) for one
// element type and dQ store: tensor maps, the activation / mode / head-dimension dispatch, shared
// memory opt-in, grid; the row-terms and dQ-conversion kernels around it are the mma.sync
// backward's (launch_backward_steps). Included by backward_wgmma_ws*_<type>.cu. NVIDIA only (a
// HIP build, and hipcc's compile check, see none of the kernel).
#pragma once

#include "backends/gpu/attention/launch_backward_ws_entry.cuh"
#include "backends/gpu/attention/launch_kernels.cuh"

#if defined(PARITY_GPU_CUDA)
#include "backends/cuda/common/tensor_map_f32.hpp"
#include "backends/gpu/attention/backward_wgmma_ws_kernel.cuh"
#include "backends/gpu/attention/launch_wgmma_kernels.cuh"
#endif

namespace parity::attention::gpu::detail {

#if defined(PARITY_GPU_CUDA)
// Q, K, V as the 128-key TMA forward maps them (Q boxes of 64 rows, K and V of 128), dO boxes of
// 64 rows, and the fp32 dQ workspace in 64-row x 32-column boxes.
template <Elem16 E, int kDim>
Status backward_tma_maps(const AttentionProblem& problem, const AttentionParams& params,
                         kernels::BackwardTmaMaps& maps) {
  PARITY_RETURN_IF_ERROR(
      (forward_tma_maps<E, kDim, kernels::kBwdWgmmaRows>(problem, params, maps.qkv)));
  cuda::Matrix16Box box;
  box.rows = std::max<std::int64_t>(problem.total_q, 1);
  box.cols = static_cast<std::int64_t>(params.heads) * kDim;
  box.row_stride = box.cols;
  box.box_rows = kernels::kTileCols;
  box.element =
      E == Elem16::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  box.base = params.grad_out;
  PARITY_RETURN_IF_ERROR(cuda::encode_matrix16_swizzled(box, maps.grad_out).with_context("grad_out"));
  box.base = params.grad_q_accum;
  return cuda::encode_matrix32_swizzled(box, maps.grad_q_accum).with_context("grad_q workspace");
}

template <Elem16 E, kernels::Mode M, kernels::Activation A, int kDim, kernels::GradQStore S,
          bool kTanhSigmoid, bool kOverlapKvTiles, bool kFusedGradQ>
Status launch_backward_wgmma_ws_config(const AttentionProblem& problem,
                                       const AttentionParams& params, gpuStream_t stream) {
  constexpr int kShared = kernels::backward_wgmma_ws_shared_bytes<kDim, S, kFusedGradQ>();
  const auto kernel = kernels::attention_backward_wgmma_ws_kernel<E, M, A, kDim, S, kTanhSigmoid,
                                                                  kOverlapKvTiles, kFusedGradQ>;
  kernels::BackwardTmaMaps maps{};
  PARITY_RETURN_IF_ERROR((backward_tma_maps<E, kDim>(problem, params, maps)));
  if constexpr (kFusedGradQ) {
    // One arrival counter per (sequence, head), zero before the blocks count (backward_grad_q_fused.cuh).
    PARITY_GPU_TRY(gpuMemsetAsync(params.grad_q_counters, 0,
                                  static_cast<std::size_t>(params.batch) * params.heads * sizeof(int),
                                  stream));
  }
  PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                     gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
  kernel<<<static_cast<unsigned>(grid_blocks(params)), kernels::kBwdWsThreads, kShared, stream>>>(
      params, maps);
  PARITY_GPU_CHECK_LAUNCH(attention_backward_wgmma_ws_kernel);
  return Status::ok();
}

template <Elem16 E, kernels::Mode M, kernels::Activation A, kernels::GradQStore S,
          bool kTanhSigmoid, bool kOverlapKvTiles, bool kFusedGradQ>
Status backward_wgmma_ws_dim(const AttentionProblem& problem, const AttentionParams& params,
                             gpuStream_t stream) {
  if (problem.dim_qk == 64)
    return launch_backward_wgmma_ws_config<E, M, A, 64, S, kTanhSigmoid, kOverlapKvTiles,
                                           kFusedGradQ>(problem, params, stream);
  return launch_backward_wgmma_ws_config<E, M, A, 128, S, kTanhSigmoid, kOverlapKvTiles,
                                         kFusedGradQ>(problem, params, stream);
}

// One kernel per activation (the softmax kernel ignores it and kTanhSigmoid; it takes
// kOverlapKvTiles and kFusedGradQ).
template <Elem16 E, kernels::GradQStore S, bool kTanhSigmoid, bool kOverlapKvTiles,
          bool kFusedGradQ>
Status backward_wgmma_ws_kernel(const AttentionProblem& problem, const AttentionParams& params,
                                gpuStream_t stream) {
  using kernels::Activation;
  using kernels::Mode;
  if (problem.kind == AttentionKind::kSoftmax)
    return backward_wgmma_ws_dim<E, Mode::kSoftmax, Activation::kSilu, S, false, kOverlapKvTiles,
                                 kFusedGradQ>(problem, params, stream);
  switch (params.activation) {
    case Activation::kSilu:
      return backward_wgmma_ws_dim<E, Mode::kPointwise, Activation::kSilu, S, kTanhSigmoid,
                                   kOverlapKvTiles, kFusedGradQ>(problem, params, stream);
    case Activation::kGelu:
      return backward_wgmma_ws_dim<E, Mode::kPointwise, Activation::kGelu, S, kTanhSigmoid,
                                   kOverlapKvTiles, kFusedGradQ>(problem, params, stream);
    case Activation::kRelu:
      return backward_wgmma_ws_dim<E, Mode::kPointwise, Activation::kRelu, S, kTanhSigmoid,
                                   kOverlapKvTiles, kFusedGradQ>(problem, params, stream);
    case Activation::kSigmoid:
      return backward_wgmma_ws_dim<E, Mode::kPointwise, Activation::kSigmoid, S, kTanhSigmoid,
                                   kOverlapKvTiles, kFusedGradQ>(problem, params, stream);
  }
  return unsupported("attention backward wgmma ws: unknown activation");
}
#endif

template <Elem16 E, WgmmaBackward kKernel>
Status launch_backward_wgmma_ws_kernels(const AttentionProblem& problem, AttentionParams params,
                                        gpuStream_t stream) {
#if defined(PARITY_GPU_CUDA)
  if (!backward_wgmma_dims_supported(problem.dim_qk, problem.dim_v)) {
    return unsupported("attention backward wgmma ws: head dims ", problem.dim_qk, "/",
                       problem.dim_v, " have no kernel");
  }
  constexpr bool kFusedGradQ = kKernel == WgmmaBackward::kWsTmaReduceTanhOverlapKvTilesFusedGradQ;
  constexpr bool kOverlapKvTiles =
      kKernel == WgmmaBackward::kWsTmaReduceTanhOverlapKvTiles || kFusedGradQ;
  constexpr bool kTanhSigmoid = kKernel == WgmmaBackward::kWsTmaReduceTanh || kOverlapKvTiles;
  constexpr auto kStore = kKernel == WgmmaBackward::kWsTmaReduce || kTanhSigmoid
                              ? kernels::GradQStore::kTmaReduce
                              : kernels::GradQStore::kAtomic;
  const auto main_kernel = [&]() {
    return backward_wgmma_ws_kernel<E, kStore, kTanhSigmoid, kOverlapKvTiles, kFusedGradQ>(
        problem, params, stream);
  };
  // The fused kernel writes grad_q itself: no conversion pass after it.
  return launch_backward_steps<E>(problem, params, stream, main_kernel, !kFusedGradQ);
#else
  (void)problem;
  (void)params;
  (void)stream;
  return unsupported("attention backward wgmma ws: NVIDIA Hopper (sm_90a) only");
#endif
}

}  // namespace parity::attention::gpu::detail
