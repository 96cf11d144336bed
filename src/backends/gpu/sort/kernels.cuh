// Portable LSD radix sort of 64-bit keys over a chosen bit range (no CUB/rocPRIM: Debian's HIP
// has neither). Only as many 8-bit digit passes as the bit range needs. Stable, so callers pack a
// payload (e.g. an input position) into the low bits and sort only the high ones.
//
// One pass = histogram (tile-local counts in shared memory) -> exclusive scan over (digit, tile)
// in digit-major order (one block per digit, then the digit starts) -> stable scatter. Scatter ranks equal digits inside a warp
// with ballots (one per digit bit), then across the block's warps in order, so element order
// within a digit is the input order. No global atomics. Works for 32- and 64-lane warps.
#pragma once

#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device {

inline constexpr int kRadixDigits = 256;
inline constexpr int kRadixBlockThreads = 256;
inline constexpr int kRadixItemsPerThread = 16;
inline constexpr int kRadixTileItems = kRadixBlockThreads * kRadixItemsPerThread;

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

// Per-digit exclusive scan over tiles: tile_counts is digit-major (row d = digit d's count in each
// tile), so one block per digit scans its contiguous row with coalesced loads (a warp scan by
// shuffles, then warp totals in order) and leaves the digit's total in digit_totals[d]. The
// digit bases are added by the scatter (radix_digit_prefix_kernel), so the result equals one
// exclusive scan over the whole digit-major array; every block of the grid takes part.
inline constexpr int kRadixDigitScanThreads = 256;

__global__ void __launch_bounds__(kRadixDigitScanThreads)
    radix_digit_scan_kernel(std::uint32_t* __restrict__ tile_counts, std::int64_t num_tiles,
                            std::uint32_t* __restrict__ digit_totals) {
  constexpr int kWarps = kRadixDigitScanThreads / kWarpSize;
  __shared__ std::uint32_t warp_totals[kWarps];
  std::uint32_t* row = tile_counts + static_cast<std::int64_t>(blockIdx.x) * num_tiles;
  const int lane = lane_id();
  const int warp = warp_id();
  std::uint32_t carry = 0;  // the same in every thread: sum of the rounds before this one
  for (std::int64_t round_start = 0; round_start < num_tiles; round_start += kRadixDigitScanThreads) {
    const std::int64_t i = round_start + threadIdx.x;
    const std::uint32_t own = i < num_tiles ? row[i] : 0u;
    std::uint32_t inclusive = own;
    for (int delta = 1; delta < kWarpSize; delta *= 2) {
      const std::uint32_t below = shfl(inclusive, lane >= delta ? lane - delta : lane);
      if (lane >= delta) inclusive += below;
    }
    if (lane == kWarpSize - 1) warp_totals[warp] = inclusive;
    __syncthreads();
    std::uint32_t warps_before = 0, round_total = 0;
    for (int w = 0; w < kWarps; ++w) {
      const std::uint32_t t = warp_totals[w];
      warps_before += w < warp ? t : 0u;
      round_total += t;
    }
    if (i < num_tiles) row[i] = carry + warps_before + inclusive - own;
    carry += round_total;
    __syncthreads();  // warp_totals is rewritten by the next round
  }
  if (threadIdx.x == 0) digit_totals[blockIdx.x] = carry;
}

// Exclusive scan of the kRadixDigits digit totals in place (one block): the start of each digit.
__global__ void __launch_bounds__(kRadixDigits) radix_digit_prefix_kernel(std::uint32_t* __restrict__ digit_totals) {
  __shared__ std::uint32_t sums[kRadixDigits];
  const int d = static_cast<int>(threadIdx.x);
  const std::uint32_t own = digit_totals[d];
  sums[d] = own;
  __syncthreads();
  for (int stride = 1; stride < kRadixDigits; stride *= 2) {
    const std::uint32_t add = d >= stride ? sums[d - stride] : 0u;
    __syncthreads();
    sums[d] += add;
    __syncthreads();
  }
  digit_totals[d] = sums[d] - own;
}

__global__ void __launch_bounds__(kRadixBlockThreads)
    radix_scatter_kernel(const std::uint64_t* __restrict__ keys_in, std::uint64_t* __restrict__ keys_out,
                         std::int64_t count, int shift, int digit_bits, std::int64_t num_tiles,
                         const std::uint32_t* __restrict__ tile_offsets,
                         const std::uint32_t* __restrict__ digit_starts) {
  constexpr int kWarps = kRadixBlockThreads / kWarpSize;
  __shared__ std::uint32_t digit_base[kRadixDigits];
  __shared__ std::uint32_t warp_counts[kWarps][kRadixDigits];
  const std::int64_t tile = blockIdx.x;
  for (int d = threadIdx.x; d < kRadixDigits; d += kRadixBlockThreads) {
    digit_base[d] = digit_starts[d] + tile_offsets[static_cast<std::int64_t>(d) * num_tiles + tile];
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
