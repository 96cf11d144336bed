// Host launch of the narrow-row forward candidates (tbe_gpu.hpp ForwardKernel: narrow rows deep and
// light, warp tiles one-hot and short bags), instantiated per weight dtype in
// forward_candidates_{f32,f16,bf16}.cu. Every candidate reads 16-byte pieces: fp32 rows, or 16-bit
// rows that start on 16-byte boundaries; the one-hot and light short-bag tiles (what kAuto selects)
// also read 16-bit rows off them, as two 8-byte pieces per lane.
#pragma once

#include "backends/gpu/embedding/forward_launch.cuh"
#include "backends/gpu/embedding/forward_lane_rows_kernel.cuh"
#include "backends/gpu/embedding/forward_tile_kernel.cuh"

namespace parity::embedding::gpu {

namespace detail {
using namespace parity::gpu_device;

// kMinBlocksPerSm: one-hot tiles hold 8 x 16 B of rows per lane (<= 85 registers, 3 blocks per SM);
// short-bag tiles 2 passes x 4 rows plus the tail's 4 (<= 128, 2 blocks; 3 spilled under ptxas -v);
// the prefetching one-hot tiles carry the next tile's offsets and indices too (<= 128, 2 blocks:
// 3 spilled 108 bytes). The round-4 short-bag tiles (docs/embedding.md): prefetching, 2 passes x 4
// rows with the weights shuffled at the add (2 blocks), and light, 1 pass x 4 rows (3 blocks).
// kResidentGrid: the grid is the blocks resident at once (kMinBlocksPerSm per SM), so every warp
// walks many tiles and a prefetching warp pipelines all but its first (with the usual 32 blocks
// per SM, D4's warps took ~4 tiles each: a quarter of them unpipelined).
// kPieceVecs, kLanePieces: 16-byte pieces, one per lane (fp32: 1 vec; 16-bit rows on 16-byte
// boundaries: 2), or 8-byte pieces of 16-bit rows off them, two per lane (1, 2).
// kTailRows: rows per step of a tile holding a longer bag (2 where a lane holds four pieces a row).
template <typename Tag, typename IndexT, int kLeadRows, int kPassesInFlight, int kMinBlocksPerSm,
          bool kPrefetchNext = false, bool kWeightsAtAdd = false, bool kResidentGrid = false,
          int kPieceVecs = std::is_same_v<Tag, F32Tag> ? 1 : 2, int kLanePieces = 1, int kTailRows = 4>
Status launch_forward_warp_tile(const ForwardParams<IndexT>& params, int max_dim, int sm_count, gpuStream_t stream) {
  // A tile's group is its widest row's pieces over kLanePieces rounded up to a power of two, at most a warp.
  const int pieces = (max_dim + 4 * kPieceVecs - 1) / (4 * kPieceVecs);
  if (pieces > kWarpSize * kLanePieces) {
    return unsupported("tbe_forward warp tiles: ", pieces, " pieces of ", 8 * kPieceVecs, " bytes per row; at most ",
                       kWarpSize * kLanePieces);
  }
  constexpr std::int64_t kBagsPerBlock = kForwardBlockThreads;  // one bag per lane
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(params.num_bags, kBagsPerBlock),
                                                     static_cast<std::int64_t>(sm_count) *
                                                         (kResidentGrid ? kMinBlocksPerSm : 32));
  tbe_forward_warp_tile_kernel<Tag, IndexT, kPieceVecs, kLeadRows, kPassesInFlight, kTailRows, kMinBlocksPerSm, kPrefetchNext,
                               kWeightsAtAdd, kLanePieces><<<static_cast<unsigned>(blocks), kForwardBlockThreads, 0, stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(tbe_forward_warp_tile_kernel);
  return Status::ok();
}

// Lane rows: a lane owns whole rows of up to kRowPieces 16-byte pieces, kBagsPerLane bags each, so
// a warp has kBagsPerLane x kWarpSize rows in flight per step; fewer bags per lane for wider rows
// keep the accumulators within 2 blocks per SM (16-bit: 2 x 4 x 4 bags x 2 pieces = 64 floats).
template <typename Tag, typename IndexT, int kPieceVecs, int kRowPieces, int kBagsPerLane>
Status launch_forward_lane_rows_sized(const ForwardParams<IndexT>& params, int sm_count, gpuStream_t stream) {
  constexpr int kMinBlocksPerSm = 2;
  constexpr std::int64_t kBagsPerBlock = std::int64_t{kForwardBlockThreads} * kBagsPerLane;
  const std::int64_t blocks =
      std::min<std::int64_t>(ceil_div(params.num_bags, kBagsPerBlock), static_cast<std::int64_t>(sm_count) * 32);
  tbe_forward_lane_rows_kernel<Tag, IndexT, kPieceVecs, kRowPieces, kBagsPerLane, kMinBlocksPerSm>
      <<<static_cast<unsigned>(blocks), kForwardBlockThreads, 0, stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(tbe_forward_lane_rows_kernel);
  return Status::ok();
}

template <typename Tag, typename IndexT>
Status launch_forward_lane_rows(const ForwardParams<IndexT>& params, int max_dim, int sm_count, gpuStream_t stream) {
  constexpr int kPieceVecs = std::is_same_v<Tag, F32Tag> ? 1 : 2;
  const int pieces = (max_dim + 4 * kPieceVecs - 1) / (4 * kPieceVecs);
  if (pieces <= 2) return launch_forward_lane_rows_sized<Tag, IndexT, kPieceVecs, 2, 4>(params, sm_count, stream);
  if (pieces <= 4) return launch_forward_lane_rows_sized<Tag, IndexT, kPieceVecs, 4, 2>(params, sm_count, stream);
  if (pieces <= 8) return launch_forward_lane_rows_sized<Tag, IndexT, kPieceVecs, 8, 1>(params, sm_count, stream);
  return unsupported("tbe_forward lane rows: ", pieces, " pieces of 16 bytes per row; at most 8");
}

// Whole-warp groups reading each distinct row of a chunk once (kDedupRows in forward_kernel.cuh):
// the power-of-two group layout's vecs (16-bit: 16-byte pairs of vecs, rows on 16-byte boundaries,
// as every candidate) per lane for the widest row, with at least a warp of lanes per bag.
template <typename Tag, typename IndexT>
Status dispatch_forward_dedup(const ForwardParams<IndexT>& params, int max_dim, int sm_count, gpuStream_t stream) {
  constexpr int kW = kWarpSize;
  constexpr bool kPaired = !std::is_same_v<Tag, F32Tag>;
  constexpr int kVecsPerUnit = kPaired ? 2 : 1;
  const int units = (max_dim / 4 + kVecsPerUnit - 1) / kVecsPerUnit;  // per row: vecs, or pairs of vecs
  if (units <= kW) return launch_forward<Tag, IndexT, kW, kVecsPerUnit, kPaired, 128, true>(params, sm_count, stream);
  if (units <= 2 * kW) return launch_forward<Tag, IndexT, kW, 2 * kVecsPerUnit, kPaired, 128, true>(params, sm_count, stream);
  if (units <= 4 * kW) return launch_forward<Tag, IndexT, kW, 4 * kVecsPerUnit, kPaired, 128, true>(params, sm_count, stream);
  if (units <= 8 * kW) return launch_forward<Tag, IndexT, kW, 8 * kVecsPerUnit, kPaired, 128, true>(params, sm_count, stream);
  if constexpr (kW == 32 && !kPaired) {
    if (units <= 16 * kW) return launch_forward<Tag, IndexT, kW, 16, kPaired, 128, true>(params, sm_count, stream);
  }
  return unsupported("tbe_forward dedup: max_dim=", max_dim, " exceeds what whole-warp groups cover");
}

}  // namespace detail

/// `kernel`: one of the narrow-row candidates (kNarrowRowsDeep, kNarrowRowsLight, kWarpTileOneHot,
/// kWarpTileOneHotPrefetch, kWarpTileShortBags, kWarpTileShortBagsPrefetch, kWarpTileShortBagsLight, kLaneRows:
/// rows of 16-byte pieces, the widest at most 128 bytes; the warp tiles a warp of pieces) or kGroupPerBagDedup (any row of 16-byte
/// units: fp32, or 16-bit rows on 16-byte boundaries; pooling sum or mean, checked by the caller).
/// rows_16_byte_aligned false (16-bit rows off 16-byte boundaries): only kWarpTileOneHot,
/// kWarpTileShortBagsLight, kNarrowRowsDeep and kWarpTileOneHotWideRows run (8-byte pieces), the
/// others return kUnsupported.
template <typename Tag, typename IndexT>
Status dispatch_forward_candidate_kernels(const gpu_device::ForwardParams<IndexT>& params, int max_dim,
                                          ForwardKernel kernel, bool rows_16_byte_aligned, int sm_count,
                                          gpuStream_t stream) {
  using gpu_device::F32Tag;
  constexpr int kPieceVecs = std::is_same_v<Tag, F32Tag> ? 1 : 2;
  const int pieces = (max_dim / 4 + kPieceVecs - 1) / kPieceVecs;
  int row_lanes_log2 = 0;
  while ((1 << row_lanes_log2) < pieces) ++row_lanes_log2;
  // Wide one-hot tiles: four pieces per lane, two passes in flight (rows up to 2 KB of 16-byte
  // pieces, 1 KB of 8-byte ones). 8-byte pieces of rows up to 3 x kWarpSize pieces take three per
  // lane and four passes in flight instead (test set 2's 04, 41 pieces: 16-lane groups use 41 of
  // 48 slots where four per lane use 41 of 64 and two per lane 41 of 64, with the same 8 rows per
  // warp in flight as the one-hot tiles, which spill 28 bytes there). ptxas -v (sm_90a): fp32 80
  // registers, 16-bit off boundaries 72 (three or four pieces), no spills, 3 blocks per SM; 16-bit 16-byte pieces
  // (twice the accumulators) spilled 80 bytes at 80 registers, so 2 blocks per SM there.
  if (kernel == ForwardKernel::kWarpTileOneHotWideRows) {
    if constexpr (!std::is_same_v<Tag, F32Tag>) {
      if (!rows_16_byte_aligned && max_dim / 4 <= 3 * gpu_device::kWarpSize) {
        return detail::launch_forward_warp_tile<Tag, IndexT, 1, 4, 3, false, false, false, 1, 3, 2>(params, max_dim,
                                                                                                    sm_count, stream);
      }
      if (!rows_16_byte_aligned) {
        return detail::launch_forward_warp_tile<Tag, IndexT, 1, 2, 3, false, false, false, 1, 4, 2>(params, max_dim,
                                                                                                    sm_count, stream);
      }
    }
    return detail::launch_forward_warp_tile<Tag, IndexT, 1, 2, kPieceVecs == 1 ? 3 : 2, false, false, false, kPieceVecs,
                                            4, 2>(params, max_dim, sm_count, stream);
  }
  // One-hot tiles: a tile runs as many passes as its group has lanes (W, the widest row's pieces
  // rounded up), so where W <= 4 (rows up to 64 bytes) 4 passes in flight hold every pass at once
  // and the smaller register file (64, no spill under ptxas -v sm_90a, against 80 with 8 passes)
  // gives 4 blocks per SM instead of 3: a third more tiles resident, and test set 4's 06 (106496
  // one-hot bags, D=16 bf16: 416 blocks) fits one wave of 528 where 396 left a 20-block second
  // wave of three dependent round trips. kWarpTileOneHotEightPasses keeps 8 passes at 3 blocks.
  // W: the widest row's 16-byte pieces (`pieces`; off 16-byte boundaries two 8-byte pieces a lane: the same).
  const bool one_hot_four_passes = kernel == ForwardKernel::kWarpTileOneHot && pieces <= 4;
  if (!rows_16_byte_aligned) {
    if constexpr (!std::is_same_v<Tag, F32Tag>) {
      if (one_hot_four_passes) {
        return detail::launch_forward_warp_tile<Tag, IndexT, 1, 4, 4, false, false, false, 1, 2>(params, max_dim, sm_count,
                                                                                                 stream);
      }
      if (kernel == ForwardKernel::kWarpTileOneHot || kernel == ForwardKernel::kWarpTileOneHotEightPasses) {
        return detail::launch_forward_warp_tile<Tag, IndexT, 1, 8, 3, false, false, false, 1, 2>(params, max_dim, sm_count,
                                                                                                 stream);
      }
      if (kernel == ForwardKernel::kWarpTileShortBagsLight) {
        return detail::launch_forward_warp_tile<Tag, IndexT, 4, 1, 3, false, true, false, 1, 2>(params, max_dim, sm_count,
                                                                                                stream);
      }
      // 8-byte pieces: 4 bags x 4 rows is 128 bytes in flight per lane, where the narrow-rows
      // default (2 x 4) holds 64 (test set 2's 02: D=60 fp16, 120-byte rows, L ~ U[0, 58]).
      if (kernel == ForwardKernel::kNarrowRowsDeep) {
        int lanes_log2 = 0;
        while ((1 << lanes_log2) < max_dim / 4) ++lanes_log2;
        return detail::launch_forward_narrow<Tag, IndexT, 1, 4, 4, 2>(params, lanes_log2, sm_count, stream);
      }
    }
    return unsupported("tbe_forward candidates: 16-bit rows must start on 16-byte boundaries (only warp_tile_one_hot(_eight_passes), "
                       "warp_tile_short_bags_light and narrow_rows_deep read them off)");
  }
  switch (kernel) {
    case ForwardKernel::kNarrowRowsDeep:  // 16 rows in flight (fp32), 12 for 16-bit (16 spilled at 128 registers)
      return detail::launch_forward_narrow<Tag, IndexT, kPieceVecs, kPieceVecs == 1 ? 4 : 3, 4, 2>(params, row_lanes_log2,
                                                                                                sm_count, stream);
    case ForwardKernel::kNarrowRowsLight:
      return detail::launch_forward_narrow<Tag, IndexT, kPieceVecs, 2, 2, 4>(params, row_lanes_log2, sm_count, stream);
    case ForwardKernel::kWarpTileOneHot:
      if (one_hot_four_passes) return detail::launch_forward_warp_tile<Tag, IndexT, 1, 4, 4>(params, max_dim, sm_count, stream);
      return detail::launch_forward_warp_tile<Tag, IndexT, 1, 8, 3>(params, max_dim, sm_count, stream);
    case ForwardKernel::kWarpTileOneHotEightPasses:
      return detail::launch_forward_warp_tile<Tag, IndexT, 1, 8, 3>(params, max_dim, sm_count, stream);
    case ForwardKernel::kWarpTileOneHotPrefetch:
      return detail::launch_forward_warp_tile<Tag, IndexT, 1, 8, 2, true>(params, max_dim, sm_count, stream);
    case ForwardKernel::kWarpTileShortBags:
      return detail::launch_forward_warp_tile<Tag, IndexT, 4, 2, 2>(params, max_dim, sm_count, stream);
    case ForwardKernel::kWarpTileShortBagsPrefetch:
      return detail::launch_forward_warp_tile<Tag, IndexT, 4, 2, 2, true, true, true>(params, max_dim, sm_count, stream);
    case ForwardKernel::kWarpTileShortBagsLight:
      return detail::launch_forward_warp_tile<Tag, IndexT, 4, 1, 3, false, true>(params, max_dim, sm_count, stream);
    case ForwardKernel::kLaneRows: return detail::launch_forward_lane_rows<Tag, IndexT>(params, max_dim, sm_count, stream);
    case ForwardKernel::kGroupPerBagDedup:
      return detail::dispatch_forward_dedup<Tag, IndexT>(params, max_dim, sm_count, stream);
    default: return unsupported("tbe_forward: kernel ", static_cast<int>(kernel), " is not a forward candidate");
  }
}

#ifndef PARITY_TBE_FORWARD_CANDIDATES_INSTANTIATING
extern template Status dispatch_forward_candidate_kernels<gpu_device::F32Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int, ForwardKernel, bool, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::F32Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int, ForwardKernel, bool, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::F16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int, ForwardKernel, bool, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::F16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int, ForwardKernel, bool, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int, ForwardKernel, bool, int, gpuStream_t);
extern template Status dispatch_forward_candidate_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int, ForwardKernel, bool, int, gpuStream_t);
#endif

}  // namespace parity::embedding::gpu
