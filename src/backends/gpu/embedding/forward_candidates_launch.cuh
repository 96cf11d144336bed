// Host launch of the narrow-row forward candidates (tbe_gpu.hpp ForwardKernel: narrow rows deep and
// light, warp tiles one-hot and short bags), instantiated per weight dtype in
// forward_candidates_{f32,f16,bf16}.cu. Every candidate reads 16-byte pieces: fp32 rows, or 16-bit
// rows that start on 16-byte boundaries (the caller checks).
#pragma once

#include "backends/gpu/embedding/forward_launch.cuh"
#include "backends/gpu/embedding/forward_tile_kernel.cuh"

namespace parity::embedding::gpu {

namespace detail {
using namespace parity::gpu_device;

// kMinBlocksPerSm: one-hot tiles hold 8 x 16 B of rows per lane (<= 85 registers, 3 blocks per SM);
// short-bag tiles 2 passes x 4 rows plus the tail's 4 (<= 128, 2 blocks; 3 spilled under ptxas -v);
// the prefetching one-hot tiles carry the next tile's offsets and indices too (<= 128, 2 blocks:
// 3 spilled 108 bytes).
template <typename Tag, typename IndexT, int kLeadRows, bool kPrefetchNext = false>
Status launch_forward_warp_tile(const ForwardParams<IndexT>& params, int pieces, int sm_count, gpuStream_t stream) {
  constexpr int kPieceVecs = std::is_same_v<Tag, F32Tag> ? 1 : 2;
  constexpr int kPassesInFlight = kLeadRows == 1 ? 8 : 2;
  constexpr int kMinBlocksPerSm = kLeadRows == 1 && !kPrefetchNext ? 3 : 2;
  if (pieces > 8) return unsupported("tbe_forward warp tiles: ", pieces, " 16-byte pieces per row; at most 8 (128 bytes)");
  constexpr std::int64_t kBagsPerBlock = kForwardBlockThreads;  // one bag per lane
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(params.num_bags, kBagsPerBlock),
                                                     static_cast<std::int64_t>(sm_count) * 32);
  tbe_forward_warp_tile_kernel<Tag, IndexT, kPieceVecs, kLeadRows, kPassesInFlight, 4, kMinBlocksPerSm, kPrefetchNext>
      <<<static_cast<unsigned>(blocks), kForwardBlockThreads, 0, stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(tbe_forward_warp_tile_kernel);
  return Status::ok();
}

}  // namespace detail

/// `kernel`: one of the candidates (kNarrowRowsDeep, kNarrowRowsLight, kWarpTileOneHot,
/// kWarpTileOneHotPrefetch, kWarpTileShortBags); rows of 16-byte pieces, the widest at most 128 bytes.
template <typename Tag, typename IndexT>
Status dispatch_forward_candidate_kernels(const gpu_device::ForwardParams<IndexT>& params, int max_dim,
                                          ForwardKernel kernel, int sm_count, gpuStream_t stream) {
  using gpu_device::F32Tag;
  constexpr int kPieceVecs = std::is_same_v<Tag, F32Tag> ? 1 : 2;
  const int pieces = (max_dim / 4 + kPieceVecs - 1) / kPieceVecs;
  int row_lanes_log2 = 0;
  while ((1 << row_lanes_log2) < pieces) ++row_lanes_log2;
  switch (kernel) {
    case ForwardKernel::kNarrowRowsDeep:  // 16 rows in flight (fp32), 12 for 16-bit (16 spilled at 128 registers)
      return detail::launch_forward_narrow<Tag, IndexT, kPieceVecs, kPieceVecs == 1 ? 4 : 3, 4, 2>(params, row_lanes_log2,
                                                                                                sm_count, stream);
    case ForwardKernel::kNarrowRowsLight:
      return detail::launch_forward_narrow<Tag, IndexT, kPieceVecs, 2, 2, 4>(params, row_lanes_log2, sm_count, stream);
    case ForwardKernel::kWarpTileOneHot:
      return detail::launch_forward_warp_tile<Tag, IndexT, 1>(params, pieces, sm_count, stream);
    case ForwardKernel::kWarpTileOneHotPrefetch:
      return detail::launch_forward_warp_tile<Tag, IndexT, 1, true>(params, pieces, sm_count, stream);
    case ForwardKernel::kWarpTileShortBags:
      return detail::launch_forward_warp_tile<Tag, IndexT, 4>(params, pieces, sm_count, stream);
    default: return unsupported("tbe_forward: kernel ", static_cast<int>(kernel), " is not a narrow-row candidate");
  }
}

#ifndef PARITY_TBE_FORWARD_CANDIDATES_INSTANTIATING
extern template Status dispatch_forward_candidate_kernels<gpu_device::F32Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int, ForwardKernel, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::F32Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int, ForwardKernel, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::F16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int, ForwardKernel, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::F16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int, ForwardKernel, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int, ForwardKernel, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int, ForwardKernel, int, gpuStream_t);
#endif

}  // namespace parity::embedding::gpu
