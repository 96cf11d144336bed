// Host launches of the wgmma forward kernels (forward_wgmma_kernel.cuh, and the warp-specialized
// forward_wgmma_ws_kernel.cuh: cp.async or TMA loads, 64- or 128-key S tiles) for one element
// type: head-dimension dispatch, tensor maps, shared memory opt-in, grid size. Included by the
// forward_wgmma*_<type>.cu TUs, one per WgmmaForward kernel and element type.
// NVIDIA only (a HIP build, and hipcc's compile check, see none of the kernel).
#pragma once

#include "backends/gpu/attention/launch_entry.cuh"

#if defined(PARITY_GPU_CUDA)
#include <algorithm>
#include <limits>

#include "backends/cuda/common/tensor_map.hpp"
#include "backends/gpu/attention/forward_wgmma_ws_kernel.cuh"
#endif

namespace parity::attention::gpu::detail {

#if defined(PARITY_GPU_CUDA)
// The TMA kernels' tensor maps: q, k, v as 2-D [rows, heads x d] matrices (wgmma.cuh layout
// boxes: 64 columns x kWarpgroupRows rows for Q, x kKeys rows for K and V).
template <Elem16 E, int kDim, int kKeys>
Status forward_tma_maps(const AttentionProblem& problem, const AttentionParams& params,
                        kernels::TmaMaps& maps) {
  const std::int64_t total_kv = problem.cross ? problem.total_kv : problem.total_q;
  if (std::max(problem.total_q, total_kv) + kKeys > std::numeric_limits<int>::max()) {
    return unsupported("attention forward wgmma tma: ", std::max(problem.total_q, total_kv),
                       " rows exceed the int32 coordinates of a tensor map");
  }
  const std::int64_t row_elements = static_cast<std::int64_t>(params.heads) * kDim;
  const auto encode = [&](const void* base, std::int64_t rows, int box_rows, CUtensorMap& map) {
    cuda::Matrix16Box box;
    box.base = base;
    box.rows = std::max<std::int64_t>(rows, 1);
    box.cols = row_elements;
    box.row_stride = row_elements;
    box.box_rows = box_rows;
    box.element = E == Elem16::kBF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                     : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    return cuda::encode_matrix16_swizzled(box, map);
  };
  PARITY_RETURN_IF_ERROR(
      encode(params.q, problem.total_q, kernels::kWarpgroupRows, maps.q).with_context("q"));
  PARITY_RETURN_IF_ERROR(encode(params.k, total_kv, kKeys, maps.k).with_context("k"));
  return encode(params.v, total_kv, kKeys, maps.v).with_context("v");
}

template <Elem16 E, kernels::Mode M, int kDim, WgmmaForward kKernel>
Status launch_forward_wgmma_config(const AttentionProblem& problem, const AttentionParams& params,
                                   gpuStream_t stream) {
  constexpr bool kWarpSpecialized = kKernel != WgmmaForward::kRound2;
  constexpr bool kPersistent = kKernel == WgmmaForward::kTma128Persistent;
  constexpr bool kTma = kKernel == WgmmaForward::kTma64 || kKernel == WgmmaForward::kTma128 ||
                        kPersistent;
  constexpr int kKeys = kKernel == WgmmaForward::kWs128 || kKernel == WgmmaForward::kTma128 ||
                                kPersistent
                            ? 128
                            : kernels::kTileCols;
  constexpr auto kLoad = kTma ? kernels::TileLoad::kTma : kernels::TileLoad::kCpAsync;
  constexpr int kShared = kWarpSpecialized
                              ? kernels::forward_wgmma_ws_shared_bytes<kDim, kKeys, kLoad>()
                              : kernels::forward_wgmma_shared_bytes<kDim>();
  int sm_count = 0;
  if constexpr (kPersistent) {  // one resident block per SM (the shared memory allows one)
    int device = 0;
    PARITY_GPU_TRY(gpuGetDevice(&device));
    PARITY_GPU_TRY(gpuDeviceGetAttribute(&sm_count, gpuDevAttrMultiProcessorCount, device));
  }
  const std::int64_t blocks = kernels::forward_grid_blocks(params.batch * params.heads,
                                                           params.grid_tiles, kPersistent, sm_count);
  // if constexpr: a TU instantiates only the kernel it launches.
  if constexpr (kWarpSpecialized) {
    const auto kernel =
        kernels::attention_forward_wgmma_ws_kernel<E, M, kDim, kKeys, kLoad, kPersistent>;
    kernels::TmaMaps maps{};
    if constexpr (kTma) PARITY_RETURN_IF_ERROR((forward_tma_maps<E, kDim, kKeys>(problem, params, maps)));
    PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                       gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
    kernel<<<static_cast<unsigned>(blocks), kernels::kWsThreads, kShared, stream>>>(params, maps);
  } else {
    const auto kernel = kernels::attention_forward_wgmma_kernel<E, M, kDim>;
    PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                       gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
    kernel<<<static_cast<unsigned>(blocks), kernels::kWgmmaThreads, kShared, stream>>>(params);
  }
  PARITY_GPU_CHECK_LAUNCH(attention_forward_wgmma_kernel);
  return Status::ok();
}

template <Elem16 E, kernels::Mode M, WgmmaForward kKernel>
Status forward_wgmma_mode(const AttentionProblem& problem, const AttentionParams& params,
                          gpuStream_t stream) {
  const int dim = problem.dim_qk;
  if (dim == 64) return launch_forward_wgmma_config<E, M, 64, kKernel>(problem, params, stream);
  if (dim == 128) return launch_forward_wgmma_config<E, M, 128, kKernel>(problem, params, stream);
  return unsupported("attention forward wgmma: head dim ", dim, " has no kernel");
}
#endif

template <Elem16 E, WgmmaForward kKernel>
Status launch_forward_wgmma(const AttentionProblem& problem, const AttentionParams& params,
                            gpuStream_t stream) {
#if defined(PARITY_GPU_CUDA)
  if (problem.dim_qk != problem.dim_v) {
    return unsupported("attention forward wgmma: d_qk=", problem.dim_qk, " != d_v=", problem.dim_v);
  }
  if (problem.kind == AttentionKind::kSoftmax) {
    return forward_wgmma_mode<E, kernels::Mode::kSoftmax, kKernel>(problem, params, stream);
  }
  return forward_wgmma_mode<E, kernels::Mode::kPointwise, kKernel>(problem, params, stream);
#else
  (void)problem;
  (void)params;
  (void)stream;
  return unsupported("attention forward wgmma: NVIDIA Hopper (sm_90a) only");
#endif
}

}  // namespace parity::attention::gpu::detail
