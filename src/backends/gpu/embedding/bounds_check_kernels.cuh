// TBE bounds-check kernels: offsets, repair (fix mode), indices; see kernels.cuh.
#pragma once

#include "backends/gpu/embedding/kernels.cuh"

namespace parity::gpu_device {

// ---------------------------------------------------------------------------------------------
// Bounds check
// ---------------------------------------------------------------------------------------------

// 128-thread blocks, 8 per SM (<= 64 registers, half the thread slots; the host caps the grid at
// 1024 blocks): finer slices balance better. Measured side by side on C2 after the memset flush:
// 2 x 512 threads 20.3 us, 4 x 256 19.6, 8 x 128 18.8, 16 x 64 19.1 (int32 indices 17.5 / 17.7 /
// 18.9 for the last three); 256 x 6 per SM (40 registers) spilled.
inline constexpr int kBoundsBlockThreads = 128;
// Offsets in flight per thread: 48 bytes (12 int32 or 6 int64 entries; 64 bytes spilled int32
// entries at the 64-register budget), each entry's predecessor from the previous lane (a shuffle)
// or, for a warp's first lane, from the previous warp's last lane through shared memory: no second
// load per entry, and int32 entries held as 32-bit values, so an offsets block of a one-hot layout
// (as many offsets as indices) takes one DRAM round trip, not two (8 int64-held entries a tile
// with a second load each before; ncu once showed 16 such entries per thread at 115 registers,
// one block per SM and five serial tiles per thread at 39% of DRAM bandwidth).
inline constexpr int bounds_offsets_items_per_thread(std::size_t index_bytes) {
  return static_cast<int>(48 / index_bytes);
}
inline constexpr int kBoundsMaxOffsetsItemsPerThread = bounds_offsets_items_per_thread(4);
inline constexpr std::int64_t bounds_offsets_tile_items(std::size_t index_bytes) {
  return std::int64_t{kBoundsBlockThreads} * bounds_offsets_items_per_thread(index_bytes);
}
// Indices tiles: 16-byte vectors per thread per tile (two tiles held: current and upcoming).
inline constexpr int kBoundsVecsPerThread = 4;
inline constexpr int kBoundsMinBlocksPerSm = 8;
// Indices per tile of the indices pass: kBoundsVecsPerThread 16-byte vectors per thread.
inline constexpr std::int64_t bounds_index_tile_items(std::size_t index_bytes) {
  return std::int64_t{kBoundsBlockThreads} * kBoundsVecsPerThread * static_cast<std::int64_t>(16 / index_bytes);
}
// The host gives an offsets tile (one tile in flight) the weight of this many indices tiles
// (16-byte vectors, two tiles in flight) when it splits the blocks between the roles. Measured
// side by side with tiles of 8 entries and two scalar loads each: weight 1 left the offsets blocks
// finishing last (C2 flush-clean 18.1 us, int32 indices 17.2), 2 and 3 gave 17.3 / 17.2 and
// 17.2 / 16.5; kept for the 48-byte tiles (run 83: C2 0.94x its floor, the one-hot layouts' offsets
// blocks one tile each).
inline constexpr int kBoundsOffsetsTileWeight = 3;
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
__device__ inline BlockSlice block_slice(std::int64_t count, int block, int blocks) {
  const std::int64_t rows = (count + kBoundsBlockThreads - 1) / kBoundsBlockThreads;
  const std::int64_t items_per_block = (rows + blocks - 1) / blocks * kBoundsBlockThreads;
  const std::int64_t begin = static_cast<std::int64_t>(block) * items_per_block;
  return {begin < count ? begin : count, begin + items_per_block < count ? begin + items_per_block : count};
}

// Shared memory of the offsets role: per tile parity, each warp's last lane's entries.
inline constexpr int kBoundsWarpsPerBlock = kBoundsBlockThreads / kWarpSize;
inline constexpr int kBoundsOffsetsWarpLastEntries = 2 * kBoundsWarpsPerBlock * kBoundsMaxOffsetsItemsPerThread;

// Offsets check of the block's slice of the F*B+1 entries; thread 0 writes the block's slot.
template <typename IndexT>
__device__ void check_offsets_slice(const IndexT* __restrict__ offsets, std::int64_t num_bags,
                                    std::int64_t num_indices, BlockSlice slice, BoundsSlot* __restrict__ slots,
                                    std::int64_t* scratch, std::int64_t* warp_last /* kBoundsOffsetsWarpLastEntries */,
                                    int* last_bad) {
  if (threadIdx.x == 0) *last_bad = 0;
  __syncthreads();
  std::int64_t count = 0, position = kNoPosition, value = 0;
  const int lane = lane_id();
  const int warp = warp_id();
  // Tiles of kItems x block positions: every load of a tile is issued before the first check, so
  // a thread keeps that many loads in flight instead of one. Entry i of row r is
  // thread t's (i = tile_start + r x block + t); its predecessor is the previous lane's entry of
  // the row, the previous warp's last lane's (shared memory), or for thread 0 the last thread's
  // entry of the row before (row 0: the entry before the tile, loaded).
  constexpr int kItems = bounds_offsets_items_per_thread(sizeof(IndexT));
  constexpr std::int64_t kTileItems = bounds_offsets_tile_items(sizeof(IndexT));
  int parity = 0;
  for (std::int64_t tile_start = slice.begin; tile_start < slice.end; tile_start += kTileItems, parity ^= 1) {
    IndexT current[kItems];  // 32-bit entries stay 32-bit: half the registers
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      // Read once, evict-first, as the indices (int32 indices: 17.5 -> 17.4 us after a memset flush).
      current[r] = i < slice.end ? load_read_once(offsets + i) : IndexT{0};
    }
    const std::int64_t before_tile =
        threadIdx.x == 0 && tile_start > 0 ? static_cast<std::int64_t>(offsets[tile_start - 1]) : 0;
    std::int64_t* const tile_last = warp_last + parity * kBoundsWarpsPerBlock * kItems;
    if (lane == kWarpSize - 1) {
#pragma unroll
      for (int r = 0; r < kItems; ++r) tile_last[warp * kItems + r] = static_cast<std::int64_t>(current[r]);
    }
    __syncthreads();  // one per tile: the next tile writes the other parity's entries
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      // Every lane shuffles (the loop is warp-uniform) before any lane skips.
      const std::int64_t from_left = static_cast<std::int64_t>(shfl(current[r], lane > 0 ? lane - 1 : 0));
      if (i >= slice.end) continue;
      std::int64_t previous = from_left;
      if (lane == 0) {
        previous = warp > 0   ? tile_last[(warp - 1) * kItems + r]
                   : r > 0    ? tile_last[(kBoundsWarpsPerBlock - 1) * kItems + r - 1]
                              : before_tile;
      }
      const auto o = static_cast<std::int64_t>(current[r]);
      const bool bad = o < 0 || o > num_indices || (i > 0 && o < previous) || (i == num_bags && o != num_indices);
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
  __shared__ std::int64_t warp_last[kBoundsOffsetsWarpLastEntries];
  __shared__ int last_bad;
  check_offsets_slice(offsets, num_bags, num_indices, block_slice(num_bags + 1, blockIdx.x, gridDim.x), slots,
                      scratch, warp_last, &last_bad);
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
// Long on purpose: one kernel body whose phases share registers and shared memory; split into
// device functions it would hide the data flow the tuning depends on.
template <typename IndexT>
__device__ void check_indices_slice(IndexT* __restrict__ indices, const IndexT* __restrict__ offsets,
                                    const std::int64_t* __restrict__ feature_rows, int num_features,
                                    std::int64_t batch_size, std::int64_t num_indices, int fix, bool vector_loads,
                                    BlockSlice slice, BoundsSlot* __restrict__ slots, std::int64_t* boundaries,
                                    std::int64_t* scratch) {
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
  // Makes the feature holding position i current: the largest f with boundary(f) <= i, by binary
  // search (positions before boundary(0) are in no bag: feature 0 with feature_lo > i).
  auto enter_feature_of = [&](std::int64_t i) {
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
  };
  // Indices are read once, evict-first: after a memset-style L2 flush (dirty lines everywhere)
  // plain loads made every line read evict, i.e. write back, a dirty line (~2x the DRAM traffic).
  // A tile: kBoundsVecsPerThread 16-byte vectors per thread (2 int64 or 4 int32 indices each),
  // consecutive threads on consecutive vectors. Double-buffered: the next tile's loads are issued
  // before the current tile is checked, so a thread always has a tile in flight (ncu, C2: the
  // single-buffered loop idled between tiles, 51% of DRAM bandwidth, 62% of cycles with no
  // eligible warp). Slices start on multiples of the block's threads, so vectors stay aligned
  // when `indices` is; the host passes vector_loads = false otherwise.
  constexpr int kPerVec = static_cast<int>(16 / sizeof(IndexT));
  constexpr std::int64_t kTileItems = bounds_index_tile_items(sizeof(IndexT));
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
    // Fast path: the thread's positions of this tile all lie in the current feature and slice, so
    // one unsigned compare per index decides (a negative index wraps to a huge one); only a tile
    // with a bad index or a feature boundary takes the exact walk below. ncu on C2 showed the
    // exact walk at ~55 instructions per index with the schedulers issuing every other cycle.
    const std::int64_t first = tile_start + static_cast<std::int64_t>(threadIdx.x) * kPerVec;
    const std::int64_t last = first + static_cast<std::int64_t>(kBoundsVecsPerThread - 1) * kBoundsBlockThreads * kPerVec +
                              (kPerVec - 1);
    if (first >= feature_lo && last < feature_hi && last < slice.end) {
      const auto row_count = static_cast<std::uint64_t>(rows);
      bool any_bad = false;
#pragma unroll
      for (int v = 0; v < kBoundsVecsPerThread; ++v) {
#pragma unroll
        for (int k = 0; k < kPerVec; ++k) {
          any_bad |= static_cast<std::uint64_t>(static_cast<std::int64_t>(tile[v][k])) >= row_count;
        }
      }
      if (!any_bad) return;
    }
    // The exact walk, rolled over a copy of the tile (local memory, read only here): unrolled, the
    // walk and its binary search appeared once per index and per ping-pong buffer, and a block of
    // one or two tiles spends most of its cycles fetching that code (ncu, set 10's 01: 58% of the
    // issue gaps were instruction fetch). The tile itself stays in registers (constant indices).
    IndexT walk[kBoundsVecsPerThread * kPerVec];
#pragma unroll
    for (int v = 0; v < kBoundsVecsPerThread; ++v) {
#pragma unroll
      for (int k = 0; k < kPerVec; ++k) walk[v * kPerVec + k] = tile[v][k];
    }
#pragma unroll 1
    for (int j = 0; j < kBoundsVecsPerThread * kPerVec; ++j) {
      const int v = j / kPerVec, k = j % kPerVec;
      const std::int64_t i =
          tile_start + (static_cast<std::int64_t>(v) * kBoundsBlockThreads + threadIdx.x) * kPerVec + k;
      if (i >= slice.end) continue;
      if (i < feature_lo || i >= feature_hi) {
        enter_feature_of(i);
        if (i < feature_lo) continue;
      }
      const auto idx = static_cast<std::int64_t>(walk[j]);
      if (idx >= 0 && idx < rows) continue;
      ++count;
      if (i < position) {
        position = i;
        value = idx;
      }
      if (fix) indices[i] = 0;
    }
  };
  if (slice.begin < slice.end) {  // block-uniform
    // Two tiles in flight, ping-pong by hand: copying the upcoming tile into the current one at
    // the end of each step made the thread wait for the upcoming loads before issuing the next.
    // (Also asking the L2 for tiles further ahead with Hopper's bulk prefetch, two tiles or the
    // whole slice, was slower: C2 22.5 / 23.7 us against 20.2, measured side by side.)
    IndexT even[kBoundsVecsPerThread][kPerVec], odd[kBoundsVecsPerThread][kPerVec];
    load_tile(slice.begin, even);
    stage_boundaries();  // its loads overlap the first tile's
    // Start in the feature of the slice's first position, not feature 0: otherwise every block
    // past feature 0 takes the exact walk on its first tile, which on a block of one or two tiles
    // (D6: 2176 int32 indices per block) is most of its work.
    enter_feature_of(slice.begin);
    for (std::int64_t tile_start = slice.begin; tile_start < slice.end; tile_start += 2 * kTileItems) {
      const std::int64_t odd_start = tile_start + kTileItems;
      if (odd_start < slice.end) load_tile(odd_start, odd);
      check_tile(tile_start, even);
      if (odd_start >= slice.end) break;
      if (odd_start + kTileItems < slice.end) load_tile(odd_start + kTileItems, even);
      check_tile(odd_start, odd);
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
  check_indices_slice(indices, offsets, feature_rows, num_features, batch_size, num_indices, fix, vector_loads,
                      block_slice(num_indices, blockIdx.x, gridDim.x), slots, boundaries, scratch);
}

// Error mode (nothing is written, so the offsets need no repair first): both checks in one launch,
// the blocks split by role. The first `offset_blocks` check slices of the offsets, the rest slices
// of the indices, all at once: a block that did both in turn waited one DRAM round trip on its
// offsets before its first index load (C4's 6.8 MB took 11 us). Every block fills its whole slot.
template <typename IndexT>
__global__ void __launch_bounds__(kBoundsBlockThreads, kBoundsMinBlocksPerSm)
    bounds_check_fused_kernel(IndexT* __restrict__ indices, const IndexT* __restrict__ offsets,
                              const std::int64_t* __restrict__ feature_rows, int num_features,
                              std::int64_t batch_size, std::int64_t num_bags, std::int64_t num_indices,
                              int offset_blocks, bool vector_loads, BoundsSlot* __restrict__ slots) {
  extern __shared__ std::int64_t boundaries[];  // bounds_check_shared_bytes(num_features)
  __shared__ std::int64_t scratch[3 * kBoundsBlockThreads / kWarpSize];
  __shared__ std::int64_t warp_last[kBoundsOffsetsWarpLastEntries];
  __shared__ int last_bad;
  const int block = static_cast<int>(blockIdx.x);
  if (block < offset_blocks) {  // block-uniform
    check_offsets_slice(offsets, num_bags, num_indices, block_slice(num_bags + 1, block, offset_blocks), slots,
                        scratch, warp_last, &last_bad);
    if (threadIdx.x == 0) {
      slots[block].bad_indices = 0;
      slots[block].first_bad_index_position = kNoPosition;
      slots[block].first_bad_index_value = 0;
    }
    return;
  }
  const int index_blocks = static_cast<int>(gridDim.x) - offset_blocks;
  check_indices_slice(indices, offsets, feature_rows, num_features, batch_size, num_indices, 0, vector_loads,
                      block_slice(num_indices, block - offset_blocks, index_blocks), slots, boundaries, scratch);
  if (threadIdx.x == 0) {
    slots[block].bad_offsets = 0;
    slots[block].first_bad_offset_position = kNoPosition;
    slots[block].first_bad_offset_value = 0;
    slots[block].last_offset_bad = 0;
  }
}

}  // namespace parity::gpu_device
