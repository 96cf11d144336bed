// TBE backward: linearise by sort tile, counting the radix sort's first digit on the way. Block t
// writes the keys of positions [t*T, (t+1)*T) (T = the sort's tile) and that tile's digit counts
// (gpu_sort::radix_sort_keys with first_counts_given), so the sort skips its first histogram
// launch, a read of every key (C2: 17 us of a 2.8 ms step). Keys are the same as
// tbe_linearize_kernel's for monotone offsets; other offsets give some bag in range (no access
// outside the arrays), as that kernel does.
#pragma once

#include "backends/gpu/embedding/backward_kernels.cuh"
#include "backends/gpu/sort/radix_constants.hpp"

namespace parity::gpu_device {

static_assert(kLinearizeBlockThreads == kRadixBlockThreads, "one linearise block per sort tile");

// Largest b in [lo, lo + n) with offsets[b] <= x, or lo when none: a search of kWarpSize probes
// per round (five dependent loads for 2M bags instead of 21). Every lane of the warp calls it and
// gets the result. Offsets that are not monotone still give a b in range.
template <typename IndexT>
__device__ inline std::int64_t last_bag_starting_at_or_before(const IndexT* offsets, std::int64_t lo,
                                                              std::int64_t n, std::int64_t x) {
  while (n > 1) {
    const std::int64_t step = (n + kWarpSize - 1) / kWarpSize;
    const std::int64_t probe = lo + static_cast<std::int64_t>(lane_id()) * step;
    const bool at_or_before = probe < lo + n && static_cast<std::int64_t>(offsets[probe]) <= x;
    const int below_or_at = popcount(ballot(at_or_before));  // a prefix of the lanes when monotone
    const std::int64_t next = below_or_at > 0 ? lo + (below_or_at - 1) * step : lo;
    n = min(step, lo + n - next);
    lo = next;
  }
  return lo;
}

// The bag in [first_bag, last_bag] holding `pos` by binary search of the offsets, or -1 where none
// does (a bag holds pos only if its range contains it).
template <typename IndexT>
__device__ inline std::int64_t searched_bag_of(const IndexT* offsets, std::int64_t first_bag, std::int64_t last_bag,
                                               std::int64_t pos) {
  std::int64_t lo = first_bag, hi = last_bag + 1;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    if (static_cast<std::int64_t>(offsets[mid]) <= pos) lo = mid; else hi = mid;
  }
  const bool inside = static_cast<std::int64_t>(offsets[lo]) <= pos && pos < static_cast<std::int64_t>(offsets[lo + 1]);
  return inside ? lo : -1;
}

// Bags that reach one tile, beyond which a block searches each position's bag in the offsets
// instead of marking every bag's positions in shared memory (many empty bags in one tile).
inline constexpr int kLinearizeTileMaxMarkedBags = 2 * kRadixTileItems;

// Long on purpose: one body whose phases (find the tile's bags, mark, write keys and count) share
// shared memory. kItemsPerThread x kLinearizeBlockThreads = the sort's tile.
template <typename IndexT, int kItemsPerThread, int kGroupLanes>
__global__ void __launch_bounds__(kLinearizeBlockThreads)
    tbe_linearize_tiles_kernel(BackwardParams<IndexT> p, std::uint64_t* __restrict__ keys, int digit_bits,
                               std::int64_t num_tiles, std::uint32_t* __restrict__ tile_counts) {
  constexpr int kTileItems = kLinearizeBlockThreads * kItemsPerThread;
  __shared__ std::int32_t slot_bag[kTileItems];  // bag - first bag at each position, -1 outside every bag
  __shared__ std::uint32_t counts[kRadixMaxDigits];
  __shared__ std::int64_t tile_bags[2];  // the first and the last bag that may reach the tile
  const std::int64_t tile_start = static_cast<std::int64_t>(blockIdx.x) * kTileItems;
  const std::int64_t tile_end = min(tile_start + kTileItems, p.num_indices);
  // The tile's indices first: their loads are in flight while the bags are found.
  IndexT tile_indices[kItemsPerThread];
#pragma unroll
  for (int r = 0; r < kItemsPerThread; ++r) {
    const std::int64_t pos = tile_start + static_cast<std::int64_t>(r) * kLinearizeBlockThreads + threadIdx.x;
    tile_indices[r] = pos < tile_end ? p.indices[pos] : IndexT{0};
  }
  for (int i = static_cast<int>(threadIdx.x); i < kTileItems; i += kLinearizeBlockThreads) slot_bag[i] = -1;
  for (int d = static_cast<int>(threadIdx.x); d < kRadixMaxDigits; d += kLinearizeBlockThreads) counts[d] = 0;
  if (warp_id() < 2) {
    const std::int64_t x = warp_id() == 0 ? tile_start : tile_end - 1;
    const std::int64_t bag = last_bag_starting_at_or_before(p.offsets, 0, p.num_bags, x);
    if (lane_id() == 0) tile_bags[warp_id()] = bag;
  }
  __syncthreads();
  const std::int64_t first_bag = tile_bags[0];
  const std::int64_t last_bag = p.num_bags > 0 ? max(tile_bags[1], first_bag) : first_bag - 1;  // none
  const bool marked = last_bag - first_bag < kLinearizeTileMaxMarkedBags;
  if (marked) {
    const int group = static_cast<int>(threadIdx.x) / kGroupLanes;
    const int group_lane = static_cast<int>(threadIdx.x) % kGroupLanes;
    for (std::int64_t bag = first_bag + group; bag <= last_bag; bag += kLinearizeBlockThreads / kGroupLanes) {
      const std::int64_t start = max(static_cast<std::int64_t>(p.offsets[bag]), tile_start);
      const std::int64_t end = min(static_cast<std::int64_t>(p.offsets[bag + 1]), tile_end);
      for (std::int64_t pos = start + group_lane; pos < end; pos += kGroupLanes)
        slot_bag[pos - tile_start] = static_cast<std::int32_t>(bag - first_bag);
    }
  }
  __syncthreads();
  const auto batch_size = static_cast<std::uint32_t>(p.batch_size);
  const std::uint64_t digit_mask = (std::uint64_t{1} << digit_bits) - 1;
#pragma unroll
  for (int r = 0; r < kItemsPerThread; ++r) {
    const std::int64_t pos = tile_start + static_cast<std::int64_t>(r) * kLinearizeBlockThreads + threadIdx.x;
    if (pos >= tile_end) break;
    std::int64_t bag = -1;
    if (marked) {
      const std::int32_t rel = slot_bag[pos - tile_start];
      bag = rel < 0 ? -1 : first_bag + rel;
    } else {
      bag = searched_bag_of(p.offsets, first_bag, last_bag, pos);
    }
    std::uint64_t key;
    if (bag < 0) {
      key = outside_bag_key(p, pos);
    } else {
      const auto f = static_cast<int>(static_cast<std::uint32_t>(bag) / batch_size);
      const std::uint64_t row = static_cast<std::uint64_t>(p.layout.feature_row_base[f]) +
                                static_cast<std::uint64_t>(static_cast<std::int64_t>(tile_indices[r]));
      key = linearized_key(p, row, bag, pos);
    }
    keys[pos] = key;
    atomicAdd(&counts[(key >> p.low_bits) & digit_mask], 1u);  // shared memory only
  }
  __syncthreads();
  for (int d = static_cast<int>(threadIdx.x); d < (1 << digit_bits); d += kLinearizeBlockThreads)
    tile_counts[static_cast<std::int64_t>(d) * num_tiles + blockIdx.x] = counts[d];
}

}  // namespace parity::gpu_device
