// TBE bounds-check kernels: offsets, repair (fix mode), indices; see kernels.cuh.
#pragma once

#include "backends/gpu/embedding/kernels.cuh"

namespace parity::gpu_device {

// ---------------------------------------------------------------------------------------------
// Bounds check
// ---------------------------------------------------------------------------------------------

inline constexpr int kBoundsBlockThreads = 512;
// 8 positions in flight per thread and at least 2 blocks per SM (<= 64 registers): ncu showed
// 16 int64 positions per thread at 115 registers, one 512-thread block per SM (16 warps), and the
// kernel walking five serial tiles per thread at 39% of DRAM bandwidth (C2 25.6 -> 23.5 us).
inline constexpr int kBoundsItemsPerThread = 8;
// Indices tiles: 16-byte vectors per thread per tile (two tiles held: current and upcoming).
inline constexpr int kBoundsVecsPerThread = 4;
inline constexpr int kBoundsMinBlocksPerSm = 2;
inline constexpr std::int64_t kBoundsTileItems = std::int64_t{kBoundsBlockThreads} * kBoundsItemsPerThread;
inline constexpr int kBoundsMaxSharedBoundaries = 2048;
// Feature boundaries (F + 1) and row counts (F) are staged in dynamic shared memory sized to the
// problem, none past kBoundsMaxSharedBoundaries features (<= 32 KiB): a fixed array made every
// block reserve it, and a row count read from global memory after the feature's binary search
// was one more dependent memory round trip per block.
inline std::size_t bounds_check_shared_bytes(int num_features) {
  return num_features <= kBoundsMaxSharedBoundaries
             ? sizeof(std::int64_t) * (2 * static_cast<std::size_t>(num_features) + 1)
             : 0;
}
// Per-block slot: counts and the lowest bad position with its value, for indices and offsets.
struct BoundsSlot {
  std::int64_t bad_indices;
  std::int64_t first_bad_index_position;  // INT64_MAX when none
  std::int64_t first_bad_index_value;
  std::int64_t bad_offsets;
  std::int64_t first_bad_offset_position;
  std::int64_t first_bad_offset_value;
  std::int64_t last_offset_bad;
  std::int64_t reserved;
};

inline constexpr std::int64_t kNoPosition = 0x7fffffffffffffffLL;

// Warp reduction of (count, lowest position, its value); every lane gets the result.
__device__ inline void warp_reduce_first_bad(std::int64_t& count, std::int64_t& position, std::int64_t& value) {
  count = warp_reduce_sum(count);
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const std::int64_t other_position = shfl_xor(position, offset);
    const std::int64_t other_value = shfl_xor(value, offset);
    if (other_position < position) {
      position = other_position;
      value = other_value;
    }
  }
}

// Block reduction of (count, lowest position, its value); thread 0 gets the result. The warps'
// partials are combined by warp 0's shuffles (a serial loop of thread 0 over them sat on every
// block's critical path twice per fused check).
__device__ inline void block_reduce_first_bad(std::int64_t& count, std::int64_t& position, std::int64_t& value,
                                              std::int64_t* scratch /* 3 * warps */) {
  warp_reduce_first_bad(count, position, value);
  const int warps = static_cast<int>(blockDim.x) / kWarpSize;
  if (lane_id() == 0) {
    scratch[warp_id()] = count;
    scratch[warps + warp_id()] = position;
    scratch[2 * warps + warp_id()] = value;
  }
  __syncthreads();
  if (warp_id() == 0) {
    const int lane = lane_id();
    count = lane < warps ? scratch[lane] : 0;
    position = lane < warps ? scratch[warps + lane] : kNoPosition;
    value = lane < warps ? scratch[2 * warps + lane] : 0;
    warp_reduce_first_bad(count, position, value);
  }
  __syncthreads();
}

// The block's contiguous share of [0, count): equal shares (rounded up to a whole row of the
// block's threads), so with one launch of resident blocks every block has the same work and there
// is no tail wave; the host sizes the grid to the resident block count.
struct BlockSlice {
  std::int64_t begin, end;
};
__device__ inline BlockSlice block_slice(std::int64_t count) {
  const std::int64_t rows = (count + kBoundsBlockThreads - 1) / kBoundsBlockThreads;
  const std::int64_t items_per_block = (rows + gridDim.x - 1) / gridDim.x * kBoundsBlockThreads;
  const std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * items_per_block;
  return {begin < count ? begin : count, begin + items_per_block < count ? begin + items_per_block : count};
}

// Offsets check of the block's slice of the F*B+1 entries; thread 0 writes the block's slot.
template <typename IndexT>
__device__ void check_offsets_slice(const IndexT* __restrict__ offsets, std::int64_t num_bags,
                                    std::int64_t num_indices, BoundsSlot* __restrict__ slots,
                                    std::int64_t* scratch, int* last_bad) {
  if (threadIdx.x == 0) *last_bad = 0;
  __syncthreads();
  std::int64_t count = 0, position = kNoPosition, value = 0;
  // Tiles of kBoundsItemsPerThread x block positions: every load of a tile is issued before the
  // first check, so a thread keeps that many loads in flight instead of one.
  const std::int64_t entries = num_bags + 1;
  const BlockSlice slice = block_slice(entries);
  for (std::int64_t tile_start = slice.begin; tile_start < slice.end; tile_start += kBoundsTileItems) {
    std::int64_t current[kBoundsItemsPerThread], previous[kBoundsItemsPerThread];
#pragma unroll
    for (int r = 0; r < kBoundsItemsPerThread; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      current[r] = i < slice.end ? static_cast<std::int64_t>(offsets[i]) : 0;
      previous[r] = i > 0 && i < slice.end ? static_cast<std::int64_t>(offsets[i - 1]) : 0;
    }
#pragma unroll
    for (int r = 0; r < kBoundsItemsPerThread; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      if (i >= slice.end) continue;
      const std::int64_t o = current[r];
      const bool bad = o < 0 || o > num_indices || (i > 0 && o < previous[r]) || (i == num_bags && o != num_indices);
      if (i == num_bags && o != num_indices) *last_bad = 1;  // one thread sees the last entry
      if (bad) {
        ++count;
        if (i < position) {
          position = i;
          value = o;
        }
      }
    }
  }
  block_reduce_first_bad(count, position, value, scratch);  // also orders last_bad's write
  if (threadIdx.x == 0) {
    slots[blockIdx.x].bad_offsets = count;
    slots[blockIdx.x].first_bad_offset_position = position;
    slots[blockIdx.x].first_bad_offset_value = value;
    slots[blockIdx.x].last_offset_bad = *last_bad;
  }
}

template <typename IndexT>
__global__ void __launch_bounds__(kBoundsBlockThreads, kBoundsMinBlocksPerSm)
    bounds_check_offsets_kernel(const IndexT* __restrict__ offsets, std::int64_t num_bags, std::int64_t num_indices,
                                BoundsSlot* __restrict__ slots) {
  __shared__ std::int64_t scratch[3 * kBoundsBlockThreads / kWarpSize];
  __shared__ int last_bad;
  check_offsets_slice(offsets, num_bags, num_indices, slots, scratch, &last_bad);
}

// Fix mode only, one block: offsets := running max of clamp(offsets, 0, N), last := N. Returns at
// once when no block saw a bad offset (the common case costs one tiny launch).
inline constexpr int kRepairBlockThreads = 1024;

template <typename IndexT>
__global__ void __launch_bounds__(kRepairBlockThreads)
    repair_offsets_kernel(IndexT* __restrict__ offsets, std::int64_t num_bags, std::int64_t num_indices,
                          const BoundsSlot* __restrict__ slots, int num_slots) {
  __shared__ std::int64_t chunk_max[kRepairBlockThreads];
  __shared__ int any_bad;
  if (threadIdx.x == 0) any_bad = 0;
  __syncthreads();
  for (int s = threadIdx.x; s < num_slots; s += kRepairBlockThreads) {
    if (slots[s].bad_offsets > 0) any_bad = 1;  // benign same-value race in shared memory
  }
  __syncthreads();
  if (!any_bad) return;
  const std::int64_t per_thread = (num_bags + kRepairBlockThreads - 1) / kRepairBlockThreads;
  const std::int64_t begin = per_thread * threadIdx.x;
  const std::int64_t end = begin + per_thread < num_bags ? begin + per_thread : num_bags;
  auto clamp_offset = [&](std::int64_t o) { return o < 0 ? 0 : (o > num_indices ? num_indices : o); };
  std::int64_t local = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t c = clamp_offset(static_cast<std::int64_t>(offsets[i]));
    local = c > local ? c : local;
  }
  chunk_max[threadIdx.x] = local;
  __syncthreads();
  for (int stride = 1; stride < kRepairBlockThreads; stride *= 2) {
    const std::int64_t other = threadIdx.x >= static_cast<unsigned>(stride) ? chunk_max[threadIdx.x - stride] : 0;
    __syncthreads();
    if (other > chunk_max[threadIdx.x]) chunk_max[threadIdx.x] = other;
    __syncthreads();
  }
  std::int64_t running = threadIdx.x > 0 ? chunk_max[threadIdx.x - 1] : 0;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t c = clamp_offset(static_cast<std::int64_t>(offsets[i]));
    running = c > running ? c : running;
    offsets[i] = static_cast<IndexT>(running);
  }
  if (threadIdx.x == 0) offsets[num_bags] = static_cast<IndexT>(num_indices);
}

// Indices check of the block's slice; thread 0 writes the block's slot.
template <typename IndexT>
__device__ void check_indices_slice(IndexT* __restrict__ indices, const IndexT* __restrict__ offsets,
                                    const std::int64_t* __restrict__ feature_rows, int num_features,
                                    std::int64_t batch_size, std::int64_t num_indices, int fix, bool vector_loads,
                                    BoundsSlot* __restrict__ slots, std::int64_t* boundaries, std::int64_t* scratch) {
  const bool staged = num_features <= kBoundsMaxSharedBoundaries;
  std::int64_t* staged_rows = boundaries + num_features + 1;  // F row counts after the F + 1 boundaries
  auto clamp_offset = [&](std::int64_t o) { return o < 0 ? 0 : (o > num_indices ? num_indices : o); };
  // Feature start boundaries (a monotone view of the offsets) staged in shared memory. Called by
  // the whole block after its first tile's loads are issued, so the two latencies overlap.
  auto stage_boundaries = [&]() {
    if (!staged) return;
    for (int f = threadIdx.x; f < num_features; f += kBoundsBlockThreads) {
      boundaries[f] = clamp_offset(static_cast<std::int64_t>(offsets[static_cast<std::int64_t>(f) * batch_size]));
      staged_rows[f] = feature_rows[f];
    }
    __syncthreads();
    if (warp_id() == 0) {  // running max by a warp scan, kWarpSize features per step
      const int lane = lane_id();
      std::int64_t carry = 0;  // clamped boundaries are >= 0
      for (int base = 0; base < num_features; base += kWarpSize) {
        const int f = base + lane;
        std::int64_t v = f < num_features ? boundaries[f] : 0;
        for (int delta = 1; delta < kWarpSize; delta *= 2) {
          const std::int64_t below = shfl(v, lane >= delta ? lane - delta : lane);
          if (lane >= delta && below > v) v = below;
        }
        v = v > carry ? v : carry;
        if (f < num_features) boundaries[f] = v;
        carry = shfl(v, kWarpSize - 1);
      }
      if (lane == 0) boundaries[num_features] = num_indices;
    }
    __syncthreads();
  };
  auto rows_of = [&](int f) -> std::int64_t { return staged ? staged_rows[f] : feature_rows[f]; };
  auto boundary = [&](int f) -> std::int64_t {
    if (staged) return boundaries[f];
    return f == num_features ? num_indices
                             : clamp_offset(static_cast<std::int64_t>(offsets[static_cast<std::int64_t>(f) * batch_size]));
  };
  std::int64_t count = 0, position = kNoPosition, value = 0;
  int feature = 0;
  std::int64_t feature_lo = 0, feature_hi = 0, rows = 0;
  const BlockSlice slice = block_slice(num_indices);
  // Indices are read once, evict-first: after a memset-style L2 flush (dirty lines everywhere)
  // plain loads made every line read evict, i.e. write back, a dirty line (~2x the DRAM traffic).
  // A tile: kBoundsVecsPerThread 16-byte vectors per thread (2 int64 or 4 int32 indices each),
  // consecutive threads on consecutive vectors. Double-buffered: the next tile's loads are issued
  // before the current tile is checked, so a thread always has a tile in flight (ncu, C2: the
  // single-buffered loop idled between tiles, 51% of DRAM bandwidth, 62% of cycles with no
  // eligible warp). Slices start on multiples of the block's threads, so vectors stay aligned
  // when `indices` is; the host passes vector_loads = false otherwise.
  constexpr int kPerVec = static_cast<int>(16 / sizeof(IndexT));
  constexpr std::int64_t kTileItems = std::int64_t{kBoundsBlockThreads} * kBoundsVecsPerThread * kPerVec;
  auto load_tile = [&](std::int64_t tile_start, IndexT (&tile)[kBoundsVecsPerThread][kPerVec]) {
#pragma unroll
    for (int v = 0; v < kBoundsVecsPerThread; ++v) {
      const std::int64_t e = tile_start + (static_cast<std::int64_t>(v) * kBoundsBlockThreads + threadIdx.x) * kPerVec;
      if (vector_loads && e + kPerVec <= slice.end) {
        if constexpr (kPerVec == 2) {
          const longlong2 pair = load_read_once(reinterpret_cast<const longlong2*>(indices + e));
          tile[v][0] = static_cast<IndexT>(pair.x);
          tile[v][1] = static_cast<IndexT>(pair.y);
        } else {
          const int4 quad = load_read_once(reinterpret_cast<const int4*>(indices + e));
          tile[v][0] = static_cast<IndexT>(quad.x);
          tile[v][1] = static_cast<IndexT>(quad.y);
          tile[v][2] = static_cast<IndexT>(quad.z);
          tile[v][3] = static_cast<IndexT>(quad.w);
        }
      } else {
#pragma unroll
        for (int k = 0; k < kPerVec; ++k) tile[v][k] = e + k < slice.end ? indices[e + k] : IndexT{0};
      }
    }
  };
  auto check_tile = [&](std::int64_t tile_start, const IndexT (&tile)[kBoundsVecsPerThread][kPerVec]) {
#pragma unroll
    for (int v = 0; v < kBoundsVecsPerThread; ++v) {
#pragma unroll
      for (int k = 0; k < kPerVec; ++k) {
        const std::int64_t i =
            tile_start + (static_cast<std::int64_t>(v) * kBoundsBlockThreads + threadIdx.x) * kPerVec + k;
        if (i >= slice.end) continue;
        if (i < feature_lo || i >= feature_hi) {
          // Largest f with boundary(f) <= i, by binary search; positions before boundary(0) are in no bag.
          int lo = 0, hi = num_features;
          while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (boundary(mid + 1) <= i) {
              lo = mid + 1;
            } else {
              hi = mid;
            }
          }
          feature = lo;
          feature_lo = boundary(feature);
          feature_hi = boundary(feature + 1);
          rows = rows_of(feature < num_features ? feature : num_features - 1);
          if (i < feature_lo) continue;
        }
        const auto idx = static_cast<std::int64_t>(tile[v][k]);
        if (idx >= 0 && idx < rows) continue;
        ++count;
        if (i < position) {
          position = i;
          value = idx;
        }
        if (fix) indices[i] = 0;
      }
    }
  };
  if (slice.begin < slice.end) {  // block-uniform
    IndexT current[kBoundsVecsPerThread][kPerVec], upcoming[kBoundsVecsPerThread][kPerVec];
    load_tile(slice.begin, current);
    stage_boundaries();  // its loads overlap the first tile's
    feature_lo = boundary(0);
    feature_hi = boundary(1 < num_features ? 1 : num_features);
    rows = rows_of(0);
    for (std::int64_t tile_start = slice.begin; tile_start < slice.end; tile_start += kTileItems) {
      const bool more = tile_start + kTileItems < slice.end;
      if (more) load_tile(tile_start + kTileItems, upcoming);
      check_tile(tile_start, current);
      if (more) {
#pragma unroll
        for (int v = 0; v < kBoundsVecsPerThread; ++v) {
#pragma unroll
          for (int k = 0; k < kPerVec; ++k) current[v][k] = upcoming[v][k];
        }
      }
    }
  }
  block_reduce_first_bad(count, position, value, scratch);
  if (threadIdx.x == 0) {
    slots[blockIdx.x].bad_indices = count;
    slots[blockIdx.x].first_bad_index_position = position;
    slots[blockIdx.x].first_bad_index_value = value;
  }
}

template <typename IndexT>
__global__ void __launch_bounds__(kBoundsBlockThreads, kBoundsMinBlocksPerSm)
    bounds_check_indices_kernel(IndexT* __restrict__ indices, const IndexT* __restrict__ offsets,
                                const std::int64_t* __restrict__ feature_rows, int num_features,
                                std::int64_t batch_size, std::int64_t num_indices, int fix, bool vector_loads,
                                BoundsSlot* __restrict__ slots) {
  extern __shared__ std::int64_t boundaries[];  // bounds_check_shared_bytes(num_features)
  __shared__ std::int64_t scratch[3 * kBoundsBlockThreads / kWarpSize];
  check_indices_slice(indices, offsets, feature_rows, num_features, batch_size, num_indices, fix, vector_loads, slots,
                      boundaries, scratch);
}

// Error mode (nothing is written, so the offsets need no repair first): both checks in one launch,
// saving a launch and its tail; each block checks its slice of the offsets, then of the indices.
template <typename IndexT>
__global__ void __launch_bounds__(kBoundsBlockThreads, kBoundsMinBlocksPerSm)
    bounds_check_fused_kernel(IndexT* __restrict__ indices, const IndexT* __restrict__ offsets,
                              const std::int64_t* __restrict__ feature_rows, int num_features,
                              std::int64_t batch_size, std::int64_t num_bags, std::int64_t num_indices,
                              bool vector_loads, BoundsSlot* __restrict__ slots) {
  extern __shared__ std::int64_t boundaries[];  // bounds_check_shared_bytes(num_features)
  __shared__ std::int64_t scratch[3 * kBoundsBlockThreads / kWarpSize];
  __shared__ int last_bad;
  check_offsets_slice(offsets, num_bags, num_indices, slots, scratch, &last_bad);
  check_indices_slice(indices, offsets, feature_rows, num_features, batch_size, num_indices, 0, vector_loads, slots,
                      boundaries, scratch);
}

}  // namespace parity::gpu_device
