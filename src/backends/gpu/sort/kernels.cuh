// Portable LSD radix sort of 64-bit keys over a chosen bit range (no CUB/rocPRIM: Debian's HIP
// has neither). Only as many 8-bit digit passes as the bit range needs. Stable, so callers pack a
// payload (e.g. an input position) into the low bits and sort only the high ones.
//
// One pass = histogram (tile-local counts in shared memory) -> one-block exclusive scan over
// (digit, tile) in digit-major order -> stable scatter. Scatter ranks equal digits inside a warp
// with ballots (one per digit bit), then across the block's warps in order, so element order
// within a digit is the input order. No global atomics. Works for 32- and 64-lane warps.
#pragma once

#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device {

inline constexpr int kRadixDigits = 256;
inline constexpr int kRadixBlockThreads = 256;
inline constexpr int kRadixItemsPerThread = 16;
inline constexpr int kRadixTileItems = kRadixBlockThreads * kRadixItemsPerThread;
inline constexpr int kRadixScanThreads = 1024;

__global__ void __launch_bounds__(kRadixBlockThreads)
    radix_histogram_kernel(const std::uint64_t* __restrict__ keys, std::int64_t count, int shift,
                           int digit_bits, std::int64_t num_tiles, std::uint32_t* __restrict__ tile_counts) {
  __shared__ std::uint32_t counts[kRadixDigits];
  for (int d = threadIdx.x; d < kRadixDigits; d += kRadixBlockThreads) counts[d] = 0;
  __syncthreads();
  const std::uint64_t mask = (std::uint64_t{1} << digit_bits) - 1;
  const std::int64_t tile = blockIdx.x;
  const std::int64_t tile_start = tile * kRadixTileItems;
#pragma unroll 4
  for (int r = 0; r < kRadixItemsPerThread; ++r) {
    const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kRadixBlockThreads + threadIdx.x;
    if (i < count) atomicAdd(&counts[(keys[i] >> shift) & mask], 1u);  // shared memory only
  }
  __syncthreads();
  for (int d = threadIdx.x; d < kRadixDigits; d += kRadixBlockThreads) {
    tile_counts[static_cast<std::int64_t>(d) * num_tiles + tile] = counts[d];
  }
}

// Exclusive scan of `count` uint32 values in place by one block: each thread scans a contiguous
// segment, the segment totals are scanned in shared memory (Hillis-Steele).
__global__ void __launch_bounds__(kRadixScanThreads)
    radix_exclusive_scan_kernel(std::uint32_t* __restrict__ values, std::int64_t count) {
  __shared__ std::uint32_t totals[kRadixScanThreads];
  const std::int64_t per_thread = (count + kRadixScanThreads - 1) / kRadixScanThreads;
  const std::int64_t begin = per_thread * threadIdx.x;
  const std::int64_t end = begin + per_thread < count ? begin + per_thread : count;
  std::uint32_t sum = 0;
  for (std::int64_t i = begin; i < end; ++i) sum += values[i];
  totals[threadIdx.x] = sum;
  __syncthreads();
  for (int stride = 1; stride < kRadixScanThreads; stride *= 2) {
    const std::uint32_t add = threadIdx.x >= static_cast<unsigned>(stride) ? totals[threadIdx.x - stride] : 0u;
    __syncthreads();
    totals[threadIdx.x] += add;
    __syncthreads();
  }
  std::uint32_t running = totals[threadIdx.x] - sum;  // exclusive
  for (std::int64_t i = begin; i < end; ++i) {
    const std::uint32_t v = values[i];
    values[i] = running;
    running += v;
  }
}

__global__ void __launch_bounds__(kRadixBlockThreads)
    radix_scatter_kernel(const std::uint64_t* __restrict__ keys_in, std::uint64_t* __restrict__ keys_out,
                         std::int64_t count, int shift, int digit_bits, std::int64_t num_tiles,
                         const std::uint32_t* __restrict__ tile_offsets) {
  constexpr int kWarps = kRadixBlockThreads / kWarpSize;
  __shared__ std::uint32_t digit_base[kRadixDigits];
  __shared__ std::uint32_t warp_counts[kWarps][kRadixDigits];
  const std::int64_t tile = blockIdx.x;
  for (int d = threadIdx.x; d < kRadixDigits; d += kRadixBlockThreads) {
    digit_base[d] = tile_offsets[static_cast<std::int64_t>(d) * num_tiles + tile];
  }
  for (int k = threadIdx.x; k < kWarps * kRadixDigits; k += kRadixBlockThreads) {
    warp_counts[k / kRadixDigits][k % kRadixDigits] = 0;
  }
  __syncthreads();
  const std::uint64_t mask = (std::uint64_t{1} << digit_bits) - 1;
  const std::int64_t tile_start = tile * kRadixTileItems;
  const int warp = warp_id();
  for (int r = 0; r < kRadixItemsPerThread; ++r) {
    const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kRadixBlockThreads + threadIdx.x;
    const bool valid = i < count;
    const std::uint64_t key = valid ? keys_in[i] : 0;
    const auto digit = static_cast<std::uint32_t>((key >> shift) & mask);
    // Lanes holding the same digit: intersect one ballot per digit bit.
    LaneMask peers = ballot(valid);
    for (int b = 0; b < digit_bits; ++b) {
      const bool bit = (digit >> b) & 1u;
      const LaneMask set = ballot(valid && bit);
      peers &= bit ? set : ~set;
    }
    const int rank = popcount(peers & lanes_below_mask());
    if (valid && rank == 0) warp_counts[warp][digit] = static_cast<std::uint32_t>(popcount(peers));
    __syncthreads();
    // Per digit: turn warp counts into each warp's start, in warp order (stable).
    for (int d = threadIdx.x; d < kRadixDigits; d += kRadixBlockThreads) {
      std::uint32_t running = digit_base[d];
      for (int w = 0; w < kWarps; ++w) {
        const std::uint32_t c = warp_counts[w][d];
        warp_counts[w][d] = running;
        running += c;
      }
      digit_base[d] = running;
    }
    __syncthreads();
    if (valid) keys_out[warp_counts[warp][digit] + static_cast<std::uint32_t>(rank)] = key;
    __syncthreads();
    for (int k = threadIdx.x; k < kWarps * kRadixDigits; k += kRadixBlockThreads) {
      warp_counts[k / kRadixDigits][k % kRadixDigits] = 0;
    }
    __syncthreads();
  }
}

}  // namespace parity::gpu_device
