// Forward launches (group per bag, and narrow rows), instantiated per weight dtype in
// forward_{f32,f16,bf16}.cu (parallel builds).
#pragma once

#include <algorithm>

#include "backends/gpu/embedding/forward_kernel.cuh"
#include "backends/gpu/embedding/forward_narrow_kernel.cuh"
#include "backends/gpu/embedding/forward_split_bags_kernel.cuh"
#include "backends/gpu/embedding/launch_common.cuh"

namespace parity::embedding::gpu {

namespace detail {
using namespace parity::gpu_device;

template <typename Tag, typename IndexT, int kGroupLanes, int kVecsPerLane, bool kPaired = false,
          int kBytesInFlightPerLane = 128, bool kDedupRows = false>
Status launch_forward(const ForwardParams<IndexT>& params, int sm_count, gpuStream_t stream) {
  constexpr int kGroupsPerBlock = kForwardBlockThreads / kGroupLanes;
  // Grid-stride beyond a few waves: keeps gridDim * blockDim far below 2^32 (HIP's limit).
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(params.num_bags - params.bag_begin, kGroupsPerBlock),
                                                     static_cast<std::int64_t>(sm_count) * 32);
  tbe_forward_group_per_bag_kernel<Tag, IndexT, kGroupLanes, kVecsPerLane, kPaired, kBytesInFlightPerLane, kDedupRows>
      <<<static_cast<unsigned>(blocks), kForwardBlockThreads, 0, stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(tbe_forward_group_per_bag_kernel);
  return Status::ok();
}

inline constexpr std::int64_t kShortBagMaxMeanLength = 4;

// 16-bit rows read as 16-byte pairs of vecs (see the kernel): the same group choice as below,
// made on pairs, with twice the vecs per lane.
template <typename Tag, typename IndexT>
Status dispatch_forward_paired(const ForwardParams<IndexT>& params, int max_dim, int sm_count, gpuStream_t stream) {
  const int pairs = (max_dim / 4 + 1) / 2;
  if (pairs <= kWarpSize / 4) return launch_forward<Tag, IndexT, kWarpSize / 4, 2, true>(params, sm_count, stream);
  if (pairs <= kWarpSize / 2) {
    if (params.num_indices <= kShortBagMaxMeanLength * (params.num_bags - params.bag_begin)) {
      return launch_forward<Tag, IndexT, kWarpSize / 4, 4, true>(params, sm_count, stream);
    }
    return launch_forward<Tag, IndexT, kWarpSize / 2, 2, true>(params, sm_count, stream);
  }
  if (pairs <= kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 2, true>(params, sm_count, stream);
  if (pairs <= 2 * kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 4, true>(params, sm_count, stream);
  if (pairs <= 4 * kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 8, true>(params, sm_count, stream);
  if constexpr (kWarpSize == 32) {
    if (pairs <= 8 * kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 16, true>(params, sm_count, stream);
  }
  return unsupported("tbe_forward: max_dim=", max_dim, " exceeds ", 16 * kWarpSize * 4);
}

template <typename Tag, typename IndexT>
Status dispatch_forward(const ForwardParams<IndexT>& params, int max_dim, bool rows_16_byte_aligned, int sm_count,
                        gpuStream_t stream) {
  if constexpr (!std::is_same_v<Tag, F32Tag>) {
    if (rows_16_byte_aligned) return dispatch_forward_paired<Tag, IndexT>(params, max_dim, sm_count, stream);
  }
  const int vecs = max_dim / 4;
  if (vecs <= kWarpSize / 4) return launch_forward<Tag, IndexT, kWarpSize / 4, 1>(params, sm_count, stream);
  if (vecs <= kWarpSize / 2) return launch_forward<Tag, IndexT, kWarpSize / 2, 1>(params, sm_count, stream);
  if (vecs <= kWarpSize) {
    // Short bags (mean length <= 4, e.g. one-hot): a full-warp group would have one row in flight
    // per warp; quarter-warp groups hold four bags per warp, each lane four vecs (16-B loads and
    // stores, 128 B contiguous per group). Same per-bag summation order, so same results.
    if (params.num_indices <= kShortBagMaxMeanLength * (params.num_bags - params.bag_begin)) {
      return launch_forward<Tag, IndexT, kWarpSize / 4, 4>(params, sm_count, stream);
    }
    return launch_forward<Tag, IndexT, kWarpSize, 1>(params, sm_count, stream);
  }
  if (vecs <= 2 * kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 2>(params, sm_count, stream);
  if (vecs <= 4 * kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 4>(params, sm_count, stream);
  if (vecs <= 8 * kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 8>(params, sm_count, stream);
  if constexpr (kWarpSize == 32) {
    if (vecs <= 16 * kWarpSize) return launch_forward<Tag, IndexT, kWarpSize, 16>(params, sm_count, stream);
  }
  return unsupported("tbe_forward: max_dim=", max_dim, " exceeds ", 16 * kWarpSize * 4);
}

// Fitted groups: the group-per-bag kernel with G lanes of V 16-byte units each (kVecsPerLane V
// fp32 vecs, or 2V 16-bit vecs read in pairs), G * V = the widest row's units exactly, so no lane
// idles (the power-of-two groups leave 1/4 to 3/8 of the lanes idle on such rows). Bytes in flight
// per lane: 256 in fp32 (128 registers, two 256-thread blocks per SM as the power-of-two groups);
// 128 in 16-bit, where 256 took 156-194 registers (ptxas -v, sm_90a), one block per SM.
template <typename Tag, typename IndexT, int kUnitsPerLane>
Status launch_forward_fitted_units(const ForwardParams<IndexT>& params, int group_lanes, int sm_count,
                                   gpuStream_t stream) {
  constexpr bool kPaired = !std::is_same_v<Tag, F32Tag>;
  constexpr int kVecs = kPaired ? 2 * kUnitsPerLane : kUnitsPerLane;
  constexpr int kBytes = kPaired ? 128 : 256;
  switch (group_lanes) {
    case 4: return launch_forward<Tag, IndexT, 4, kVecs, kPaired, kBytes>(params, sm_count, stream);
    case 8: return launch_forward<Tag, IndexT, 8, kVecs, kPaired, kBytes>(params, sm_count, stream);
    case 16: return launch_forward<Tag, IndexT, 16, kVecs, kPaired, kBytes>(params, sm_count, stream);
    default: return unsupported("tbe_forward fitted groups: group_lanes=", group_lanes, " is not 4, 8 or 16");
  }
}

// Narrow rows: the piece width (16 B, or 8 B for 16-bit rows off 16-byte boundaries), the group
// width (lanes per bag: the widest table's pieces rounded up to a power of two) and the depth
// (bags per group x rows per bag) from the mean bag length L = N / (F*B): one-hot bags take 6 bags
// of one row each (4 for 16-byte 16-bit pieces, whose accumulators are twice as wide), L <= 2 four
// bags of two rows (one pass per bag), longer bags two bags of four rows. The most that fits the
// kernel's 128 registers without spilling (ptxas -v, sm_90a: 8 one-hot bags spilled).
template <typename Tag, typename IndexT, int kPieceVecs, int kBagsPerGroup, int kRowsPerBag, int kMinBlocksPerSm = 2>
Status launch_forward_narrow(const ForwardParams<IndexT>& params, int row_lanes_log2, int sm_count,
                             gpuStream_t stream) {
  const std::int64_t bags_per_block =
      static_cast<std::int64_t>(kForwardBlockThreads >> row_lanes_log2) * kBagsPerGroup;
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(params.num_bags, bags_per_block),
                                                     static_cast<std::int64_t>(sm_count) * 32);
  tbe_forward_narrow_rows_kernel<Tag, IndexT, kPieceVecs, kBagsPerGroup, kRowsPerBag, kMinBlocksPerSm>
      <<<static_cast<unsigned>(blocks), kForwardBlockThreads, 0, stream>>>(params, row_lanes_log2);
  PARITY_GPU_CHECK_LAUNCH(tbe_forward_narrow_rows_kernel);
  return Status::ok();
}

template <typename Tag, typename IndexT, int kPieceVecs>
Status dispatch_forward_narrow_depth(const ForwardParams<IndexT>& params, int max_dim, int sm_count,
                                     gpuStream_t stream) {
  const int pieces = (max_dim / 4 + kPieceVecs - 1) / kPieceVecs;
  int row_lanes_log2 = 0;
  while ((1 << row_lanes_log2) < pieces) ++row_lanes_log2;
  if ((1 << row_lanes_log2) > kWarpSize) {
    return unsupported("tbe_forward narrow rows: max_dim=", max_dim, " needs ", pieces, " lanes per row; a warp has ",
                       kWarpSize);
  }
  if (params.num_indices <= params.num_bags) {
    return launch_forward_narrow<Tag, IndexT, kPieceVecs, kPieceVecs == 1 ? 6 : 4, 1>(params, row_lanes_log2,
                                                                                     sm_count, stream);
  }
  if (params.num_indices <= 2 * params.num_bags) {
    return launch_forward_narrow<Tag, IndexT, kPieceVecs, 4, 2>(params, row_lanes_log2, sm_count, stream);
  }
  return launch_forward_narrow<Tag, IndexT, kPieceVecs, 2, 4>(params, row_lanes_log2, sm_count, stream);
}


// Split bags (forward_split_bags_kernel.cuh): kSplitRowsPerPass rows in flight per lane in blocks
// of kSplitBlockThreads, kSplitBlocksPerSm per SM (the kernel's launch bound: <= 64 registers); a
// team of `parts` groups per bag (split_bag_parts). A block holds its SM slot until its longest
// bag is done, so varied bag lengths (U[0, 2L]) idle the slots of its finished warps: small blocks
// free them sooner.
inline constexpr int kSplitRowsPerPass = 8;
inline constexpr int kSplitBlockThreads = 64;
inline constexpr int kSplitBlocksPerSm = 16;

// log2 of a narrow-rows group's lanes: the widest row's pieces of piece_vecs vecs, rounded up to a
// power of two.
inline int narrow_row_lanes_log2(int max_dim, int piece_vecs) {
  const int pieces = (max_dim / 4 + piece_vecs - 1) / piece_vecs;
  int lanes_log2 = 0;
  while ((1 << lanes_log2) < pieces) ++lanes_log2;
  return lanes_log2;
}

// The split-bags rule (docs/embedding.md, "Split bags"): parts per bag, doubled from 1 while
//   - a team still fits in a warp (parts < groups per warp),
//   - the bags' groups fill fewer than two waves of the resident group slots
//     (bags x parts < 2 x SMs x kSplitBlocksPerSm x warps per block x groups per warp: two waves,
//     so no slot idles and the last wave's tail is at most half), and
//   - each part still gets more than a pass of rows (parts x kSplitRowsPerPass < mean bag length).
// Long bags (mean >= kSplitLongBagMinMeanRows) split in two even past two waves: the teams keep
// 8 rows of one bag in flight per lane at 32 warps per SM, the narrow kernel 2 bags x 4 rows at 16
// (run 93: 1.22-1.84x on spent layouts of 28-55 rows, 1.1-11.6 times two waves of bags).
// 1: no split pays (enough bags of short rows to fill the GPU, or bags too short to share).
inline constexpr std::int64_t kSplitLongBagMinMeanRows = 24;
inline int split_bag_parts(std::int64_t bags, std::int64_t num_indices, int row_lanes_log2, int sm_count) {
  if (bags <= 0) return 1;
  const std::int64_t groups_per_warp = kWarpSize >> row_lanes_log2;
  const std::int64_t resident_groups = static_cast<std::int64_t>(sm_count) * kSplitBlocksPerSm *
                                       (kSplitBlockThreads / kWarpSize) * groups_per_warp;
  int parts = 1;
  while (parts < groups_per_warp && bags * parts < 2 * resident_groups &&
         static_cast<std::int64_t>(parts) * kSplitRowsPerPass * bags < num_indices) {
    parts *= 2;
  }
  if (parts == 1 && groups_per_warp >= 2 && num_indices >= kSplitLongBagMinMeanRows * bags) parts = 2;
  return parts;
}

template <typename Tag, typename IndexT, int kPieceVecs>
Status launch_forward_split_bags(const ForwardParams<IndexT>& params, int max_dim, int sm_count, gpuStream_t stream) {
  const int row_lanes_log2 = narrow_row_lanes_log2(max_dim, kPieceVecs);
  if ((1 << row_lanes_log2) > kWarpSize / 2) {
    return unsupported("tbe_forward split bags: max_dim=", max_dim, " needs ", 1 << row_lanes_log2,
                       " lanes per row; two parts need at most half a warp");
  }
  // Forced (kAuto takes this kernel only where the rule gives >= 2 parts): at least two parts.
  const int parts = std::max(2, split_bag_parts(params.num_bags - params.bag_begin, params.num_indices,
                                                row_lanes_log2, sm_count));
  int parts_log2 = 0;
  while ((1 << parts_log2) < parts) ++parts_log2;
  const std::int64_t teams_per_block = kSplitBlockThreads >> (row_lanes_log2 + parts_log2);
  const std::int64_t blocks = std::min<std::int64_t>(ceil_div(params.num_bags - params.bag_begin, teams_per_block),
                                                     static_cast<std::int64_t>(sm_count) * 32 * (kForwardBlockThreads / kSplitBlockThreads));
  tbe_forward_narrow_split_bags_kernel<Tag, IndexT, kPieceVecs, kSplitRowsPerPass, kSplitBlockThreads, kSplitBlocksPerSm>
      <<<static_cast<unsigned>(blocks), kSplitBlockThreads, 0, stream>>>(params, row_lanes_log2, parts_log2);
  PARITY_GPU_CHECK_LAUNCH(tbe_forward_narrow_split_bags_kernel);
  return Status::ok();
}

}  // namespace detail

/// Narrow-rows forward (forward_narrow_kernel.cuh): pooling sum or mean, F*B < 2^32, the widest
/// row <= kWarpSize pieces (checked by the caller's can_implement rule). rows_16_byte_pieces:
/// every table's offset and row stride are 16-byte multiples (stores are masked per vector).
template <typename Tag, typename IndexT>
Status dispatch_forward_narrow_kernels(const gpu_device::ForwardParams<IndexT>& params, int max_dim,
                                       bool rows_16_byte_pieces, int sm_count, gpuStream_t stream) {
  if constexpr (!std::is_same_v<Tag, gpu_device::F32Tag>) {
    if (rows_16_byte_pieces) return detail::dispatch_forward_narrow_depth<Tag, IndexT, 2>(params, max_dim, sm_count, stream);
  }
  return detail::dispatch_forward_narrow_depth<Tag, IndexT, 1>(params, max_dim, sm_count, stream);
}

/// Split-bags forward (forward_split_bags_kernel.cuh): the narrow-rows rule's shapes; bags
/// [bag_begin, num_bags), a team of split_bag_parts(...) (at least 2) groups per bag.
template <typename Tag, typename IndexT>
Status dispatch_forward_split_bags_kernels(const gpu_device::ForwardParams<IndexT>& params, int max_dim,
                                           bool rows_16_byte_pieces, int sm_count, gpuStream_t stream) {
  if constexpr (!std::is_same_v<Tag, gpu_device::F32Tag>) {
    if (rows_16_byte_pieces) return detail::launch_forward_split_bags<Tag, IndexT, 2>(params, max_dim, sm_count, stream);
  }
  return detail::launch_forward_split_bags<Tag, IndexT, 1>(params, max_dim, sm_count, stream);
}

/// The fitted split of the widest row (forward_fitted): G lanes x V units of 16 bytes, or
/// {0, 0} where none applies (rows of other unit counts, 16-bit rows off 16-byte boundaries).
struct FittedGroups {
  int group_lanes = 0;
  int units_per_lane = 0;
};
inline FittedGroups fitted_groups_for(int max_dim, std::int64_t element_bytes, bool rows_16_byte_aligned) {
  if (element_bytes != 4 && !rows_16_byte_aligned) return {};
  const std::int64_t row_bytes = max_dim * element_bytes;
  if (row_bytes % 16 != 0) return {};
  const auto units = static_cast<int>(row_bytes / 16);
  for (const int units_per_lane : {3, 5}) {
    if (units % units_per_lane != 0) continue;
    const int group_lanes = units / units_per_lane;
    if (group_lanes == 4 || group_lanes == 8 || group_lanes == 16) return {group_lanes, units_per_lane};
  }
  return {};
}

/// Fitted groups (see launch_forward_fitted_units); `fitted` from fitted_groups_for, non-empty.
template <typename Tag, typename IndexT>
Status dispatch_forward_fitted_kernels(const gpu_device::ForwardParams<IndexT>& params, FittedGroups fitted,
                                       int sm_count, gpuStream_t stream) {
  if (fitted.units_per_lane == 3) {
    return detail::launch_forward_fitted_units<Tag, IndexT, 3>(params, fitted.group_lanes, sm_count, stream);
  }
  if (fitted.units_per_lane == 5) {
    return detail::launch_forward_fitted_units<Tag, IndexT, 5>(params, fitted.group_lanes, sm_count, stream);
  }
  return unsupported("tbe_forward fitted groups: units_per_lane=", fitted.units_per_lane, " is not 3 or 5");
}

/// rows_16_byte_aligned: every row of every table starts on a 16-byte boundary (weights pointer
/// 16-byte aligned, dims and table offsets multiples of 8 elements for 16-bit weights).
template <typename Tag, typename IndexT>
Status dispatch_forward_kernels(const gpu_device::ForwardParams<IndexT>& params, int max_dim,
                                bool rows_16_byte_aligned, int sm_count, gpuStream_t stream) {
  return detail::dispatch_forward<Tag, IndexT>(params, max_dim, rows_16_byte_aligned, sm_count, stream);
}

// Instantiated only in the per-dtype files; every other includer links against those.
#ifndef PARITY_TBE_FORWARD_INSTANTIATING
extern template Status dispatch_forward_kernels<gpu_device::F32Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_kernels<gpu_device::F32Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_kernels<gpu_device::F16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_kernels<gpu_device::F16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_aligned, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_narrow_kernels<gpu_device::F32Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_narrow_kernels<gpu_device::F32Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_narrow_kernels<gpu_device::F16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_narrow_kernels<gpu_device::F16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_narrow_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_narrow_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_fitted_kernels<gpu_device::F32Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_fitted_kernels<gpu_device::F32Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_fitted_kernels<gpu_device::F16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_fitted_kernels<gpu_device::F16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_fitted_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_fitted_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, FittedGroups fitted, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_split_bags_kernels<gpu_device::F32Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_split_bags_kernels<gpu_device::F32Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_split_bags_kernels<gpu_device::F16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_split_bags_kernels<gpu_device::F16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_split_bags_kernels<gpu_device::BF16Tag, std::int32_t>(const gpu_device::ForwardParams<std::int32_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
extern template Status dispatch_forward_split_bags_kernels<gpu_device::BF16Tag, std::int64_t>(const gpu_device::ForwardParams<std::int64_t>&, int max_dim, bool rows_16_byte_pieces, int sm_count, gpuStream_t stream);
#endif

}  // namespace parity::embedding::gpu
