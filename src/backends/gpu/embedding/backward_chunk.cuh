// Chunk + combine launches of the TBE backward, instantiated per weight dtype in
// backward_chunk_{f32,f16,bf16}.cu so the three compile in parallel.
#pragma once

#include <algorithm>

#include "backends/gpu/embedding/backward_chunk_kernels.cuh"
#include "backends/gpu/embedding/launch_common.cuh"

namespace parity::embedding::gpu {

namespace detail {
using namespace parity::gpu_device;

// The chunk kernel with or without the state prefetch (BackwardOptions::prefetch_element_state;
// only Adagrad and Adam have per-element state to prefetch).
template <typename Tag, typename IndexT, int kVecsPerLane, int kWindow, int kGroupLanes>
void launch_chunk_kernel(const BackwardParams<IndexT>& params, std::int64_t chunk_blocks, gpuStream_t stream) {
  const bool prefetch = params.prefetch_element_state &&
                        (params.update == Update::kAdagrad || params.update == Update::kAdam);
  if (prefetch) {
    tbe_backward_chunk_kernel<Tag, IndexT, kVecsPerLane, kWindow, kGroupLanes, true>
        <<<static_cast<unsigned>(chunk_blocks), kChunkBlockThreads, 0, stream>>>(params);
  } else {
    tbe_backward_chunk_kernel<Tag, IndexT, kVecsPerLane, kWindow, kGroupLanes, false>
        <<<static_cast<unsigned>(chunk_blocks), kChunkBlockThreads, 0, stream>>>(params);
  }
}

// kGroupLanes < kWarpSize: narrow rows, one chunk per group of lanes (the default window only).
template <typename Tag, typename IndexT, int kVecsPerLane, int kGroupLanes = kWarpSize>
Status launch_chunk_and_combine(const BackwardParams<IndexT>& params, std::int64_t grid_cap, gpuStream_t stream) {
  constexpr int kChunksPerBlock = kChunkBlockThreads / kGroupLanes;
  const std::int64_t chunk_blocks = std::min(ceil_div(params.num_chunks, kChunksPerBlock), grid_cap);
  // Rows of two vecs per lane (4*kWarpSize < D <= 8*kWarpSize) take the wider window always: the
  // default one holds a single position in flight there (C5, H200: 3.63 ms with 1, 3.08 with 2).
  if constexpr (kGroupLanes < kWarpSize) {
    launch_chunk_kernel<Tag, IndexT, kVecsPerLane, kChunkWindow<kVecsPerLane, 1>, kGroupLanes>(params, chunk_blocks,
                                                                                              stream);
  } else if (params.batch_row_updates || kVecsPerLane == 2) {
    launch_chunk_kernel<Tag, IndexT, kVecsPerLane, kChunkWindow<kVecsPerLane, 2>, kWarpSize>(params, chunk_blocks, stream);
  } else {
    launch_chunk_kernel<Tag, IndexT, kVecsPerLane, kChunkWindow<kVecsPerLane, 1>, kWarpSize>(params, chunk_blocks, stream);
  }
  PARITY_GPU_CHECK_LAUNCH(tbe_backward_chunk_kernel);
  const int vec_slots = kVecsPerLane * kWarpSize;
  const int strands = std::max(1, kCombineBlockThreads / vec_slots);
  const std::size_t shared_bytes = sizeof(float) * 4 * static_cast<std::size_t>(strands * vec_slots);
  const std::int64_t combine_blocks = std::min(params.num_chunks, grid_cap * (kChunkBlockThreads / kWarpSize));
  tbe_backward_combine_kernel<Tag, IndexT, kVecsPerLane>
      <<<static_cast<unsigned>(combine_blocks), kCombineBlockThreads, shared_bytes, stream>>>(params);
  PARITY_GPU_CHECK_LAUNCH(tbe_backward_combine_kernel);
  return Status::ok();
}

// Narrow rows: the group is the power of two >= the widest row's vecs, at least 4 lanes (a group
// stages its positions' facts kGroupLanes at a time; fewer lanes would serialise that phase).
template <typename Tag, typename IndexT>
Status dispatch_chunk_narrow(const BackwardParams<IndexT>& params, std::int64_t grid_cap, gpuStream_t stream) {
  const int vecs = params.max_dim / 4;
  if (vecs <= 4) return launch_chunk_and_combine<Tag, IndexT, 1, 4>(params, grid_cap, stream);
  if (vecs <= 8) return launch_chunk_and_combine<Tag, IndexT, 1, 8>(params, grid_cap, stream);
  if (vecs <= 16 && 16 < kWarpSize) return launch_chunk_and_combine<Tag, IndexT, 1, 16>(params, grid_cap, stream);
  return unsupported("tbe_backward narrow rows: max_dim=", params.max_dim, " needs ", vecs,
                     " lanes per row; groups hold at most ", kWarpSize / 2);
}

template <typename Tag, typename IndexT>
Status dispatch_chunk_impl(const BackwardParams<IndexT>& params, std::int64_t grid_cap, gpuStream_t stream) {
  const int vecs = params.max_dim / 4;
  if (vecs <= kWarpSize) return launch_chunk_and_combine<Tag, IndexT, 1>(params, grid_cap, stream);
  if (vecs <= 2 * kWarpSize) return launch_chunk_and_combine<Tag, IndexT, 2>(params, grid_cap, stream);
  if (vecs <= 4 * kWarpSize) return launch_chunk_and_combine<Tag, IndexT, 4>(params, grid_cap, stream);
  if (vecs <= 8 * kWarpSize) return launch_chunk_and_combine<Tag, IndexT, 8>(params, grid_cap, stream);
  if constexpr (kWarpSize == 32) {
    if (vecs <= 16 * kWarpSize) return launch_chunk_and_combine<Tag, IndexT, 16>(params, grid_cap, stream);
  }
  return unsupported("tbe_backward: max_dim=", params.max_dim, " too wide");
}

}  // namespace detail

/// is_narrow: one chunk per group of lanes (narrow rows); otherwise one chunk per warp.
template <typename Tag, typename IndexT>
Status dispatch_backward_chunks(const gpu_device::BackwardParams<IndexT>& params, bool is_narrow, std::int64_t grid_cap,
                                gpuStream_t stream) {
  if (is_narrow) return detail::dispatch_chunk_narrow<Tag, IndexT>(params, grid_cap, stream);
  return detail::dispatch_chunk_impl<Tag, IndexT>(params, grid_cap, stream);
}

// Instantiated only in the per-dtype files; every other includer links against those.
#ifndef PARITY_TBE_BACKWARD_CHUNKS_INSTANTIATING
extern template Status dispatch_backward_chunks<gpu_device::F32Tag, std::int32_t>(const gpu_device::BackwardParams<std::int32_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
extern template Status dispatch_backward_chunks<gpu_device::F32Tag, std::int64_t>(const gpu_device::BackwardParams<std::int64_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
extern template Status dispatch_backward_chunks<gpu_device::F16Tag, std::int32_t>(const gpu_device::BackwardParams<std::int32_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
extern template Status dispatch_backward_chunks<gpu_device::F16Tag, std::int64_t>(const gpu_device::BackwardParams<std::int64_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
extern template Status dispatch_backward_chunks<gpu_device::BF16Tag, std::int32_t>(const gpu_device::BackwardParams<std::int32_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
extern template Status dispatch_backward_chunks<gpu_device::BF16Tag, std::int64_t>(const gpu_device::BackwardParams<std::int64_t>&, bool is_narrow, std::int64_t grid_cap, gpuStream_t stream);
#endif

}  // namespace parity::embedding::gpu
