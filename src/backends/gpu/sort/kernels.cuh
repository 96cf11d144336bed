// Portable LSD radix sort of 64-bit keys over a chosen bit range (no CUB/rocPRIM: Debian's HIP
// has neither). The bit range is split into as few passes of at most kRadixMaxDigitBits bits as
// it needs, with widths as even as possible (C2's 25 row bits: 9 + 8 + 8, three passes instead of
// 8 + 8 + 8 + 1). Stable, so callers pack a payload (e.g. an input position) into the low bits and
// sort only the high ones.
//
// One pass = histogram (tile-local counts in shared memory) -> exclusive scan over (digit, tile)
// in digit-major order (one block per digit, leaving each digit's total) -> stable scatter, which
// first scans the <= 512 digit totals itself for the digit starts (each block re-reads 2 KB from
// the L2 instead of a third launch per pass waiting on a one-block kernel). The
// scatter gives each warp a contiguous segment of its tile and ranks equal digits with ballots
// (one per digit bit) against per-warp counters in shared memory, so no block barrier is needed
// per key; it then sorts the tile by digit in shared memory and writes it out in tile order, so
// consecutive threads write consecutive addresses of one digit (coalesced) instead of scattering
// 8-byte keys. Optionally (counts_in_scatter) the scatter also counts the next pass's digits per
// output tile (an integer atomic add per key into the other of two count buffers, which the scan
// zeroed beforehand), so only the first pass launches a histogram: two launches fewer per
// three-pass sort, and the same counts whatever the order of the adds. Works for 32- and 64-lane
// warps.
//
// Tiles of 4096 keys, or 1024 for sorts of at most kRadixSmallTileMaxKeys (radix_sort_tile_keys):
// a 200k-key sort makes 49 tiles of 4096, one block each, so under half of an H200's 132 SMs
// work and each walks 16 dependent ranking rounds per warp; tiles of 1024 give 4x the blocks and
// a quarter of the rounds. The sort is stable, so the result is the same for either tile.
#pragma once

#include "backends/gpu/common/portability.cuh"
#include "backends/gpu/sort/radix_constants.hpp"

namespace parity::gpu_device {


// Exclusive scan of one value per thread over a block of kThreads (a warp scan by shuffles, then
// the warp totals in order); returns the thread's exclusive prefix and leaves the block total in
// *total. `warp_totals` holds kThreads / kWarpSize values. Contains barriers: every thread calls.
template <int kThreads>
__device__ inline std::uint32_t block_exclusive_scan(std::uint32_t own, std::uint32_t* warp_totals,
                                                     std::uint32_t* total) {
  constexpr int kWarps = kThreads / kWarpSize;
  const int lane = lane_id();
  const int warp = warp_id();
  std::uint32_t inclusive = own;
  for (int delta = 1; delta < kWarpSize; delta *= 2) {
    const std::uint32_t below = shfl(inclusive, lane >= delta ? lane - delta : lane);
    if (lane >= delta) inclusive += below;
  }
  if (lane == kWarpSize - 1) warp_totals[warp] = inclusive;
  __syncthreads();
  std::uint32_t warps_before = 0, block_total = 0;
  for (int w = 0; w < kWarps; ++w) {
    const std::uint32_t t = warp_totals[w];
    warps_before += w < warp ? t : 0u;
    block_total += t;
  }
  __syncthreads();  // warp_totals may be rewritten by the caller's next scan
  *total = block_total;
  return warps_before + inclusive - own;
}

template <int kItemsPerThread>
__global__ void __launch_bounds__(kRadixBlockThreads)
    radix_histogram_kernel(const std::uint64_t* __restrict__ keys, std::int64_t count, int shift,
                           int digit_bits, std::int64_t num_tiles, std::uint32_t* __restrict__ tile_counts) {
  __shared__ std::uint32_t counts[kRadixMaxDigits];
  const int num_digits = 1 << digit_bits;
  for (int d = threadIdx.x; d < num_digits; d += kRadixBlockThreads) counts[d] = 0;
  __syncthreads();
  const std::uint64_t mask = (std::uint64_t{1} << digit_bits) - 1;
  const std::int64_t tile = blockIdx.x;
  const std::int64_t tile_start = tile * (kRadixBlockThreads * kItemsPerThread);
  // Every key of the thread is loaded before the first count: 16 loads in flight per thread
  // instead of 4 (C2, ncu: 22 -> 17 us per pass for 42 MB).
  std::uint32_t digits[kItemsPerThread];
#pragma unroll
  for (int r = 0; r < kItemsPerThread; ++r) {
    const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kRadixBlockThreads + threadIdx.x;
    digits[r] = i < count ? static_cast<std::uint32_t>((keys[i] >> shift) & mask) : kRadixMaxDigits;
  }
#pragma unroll
  for (int r = 0; r < kItemsPerThread; ++r) {
    if (digits[r] < kRadixMaxDigits) atomicAdd(&counts[digits[r]], 1u);  // shared memory only
  }
  __syncthreads();
  for (int d = threadIdx.x; d < num_digits; d += kRadixBlockThreads) {
    tile_counts[static_cast<std::int64_t>(d) * num_tiles + tile] = counts[d];
  }
}

// Per-digit exclusive scan over tiles: tile_counts is digit-major (row d = digit d's count in each
// tile), so one block per digit scans its contiguous row with coalesced loads and leaves the
// digit's total in digit_totals[d]. The scatter adds the digit bases (the exclusive scan of the
// totals), so the result equals one exclusive scan over the whole digit-major array; every block
// of the grid takes part.
inline constexpr int kRadixDigitScanThreads = 256;

// next_counts (nullable): the next pass's count buffer, zeroed here for the scatter's adds (the
// pass that counted into it last is done: kernels of one stream run in order).
__global__ void __launch_bounds__(kRadixDigitScanThreads)
    radix_digit_scan_kernel(std::uint32_t* __restrict__ tile_counts, std::int64_t num_tiles,
                            std::uint32_t* __restrict__ digit_totals, std::uint32_t* __restrict__ next_counts) {
  __shared__ std::uint32_t warp_totals[kRadixDigitScanThreads / kWarpSize];
  if (next_counts != nullptr) {
    const std::int64_t words = static_cast<std::int64_t>(kRadixMaxDigits) * num_tiles;
    const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kRadixDigitScanThreads;
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kRadixDigitScanThreads + threadIdx.x; i < words;
         i += stride) {
      next_counts[i] = 0;
    }
  }
  std::uint32_t* row = tile_counts + static_cast<std::int64_t>(blockIdx.x) * num_tiles;
  std::uint32_t carry = 0;  // the same in every thread: sum of the rounds before this one
  for (std::int64_t round_start = 0; round_start < num_tiles; round_start += kRadixDigitScanThreads) {
    const std::int64_t i = round_start + threadIdx.x;
    std::uint32_t round_total = 0;
    const std::uint32_t before =
        block_exclusive_scan<kRadixDigitScanThreads>(i < num_tiles ? row[i] : 0u, warp_totals, &round_total);
    if (i < num_tiles) row[i] = carry + before;
    carry += round_total;
  }
  if (threadIdx.x == 0) digit_totals[blockIdx.x] = carry;
}

// Long on purpose: one kernel body (rank within the block, then scatter) whose phases share
// registers and shared memory.
template <int kItemsPerThread>
__global__ void __launch_bounds__(kRadixBlockThreads)
    radix_scatter_kernel(const std::uint64_t* __restrict__ keys_in, std::uint64_t* __restrict__ keys_out,
                         std::int64_t count, int shift, int digit_bits, std::int64_t num_tiles,
                         const std::uint32_t* __restrict__ tile_offsets,
                         const std::uint32_t* __restrict__ digit_totals, std::uint32_t* __restrict__ next_counts,
                         int next_digit_bits) {
  constexpr int kTileItems = kRadixBlockThreads * kItemsPerThread;
  constexpr int kWarps = kRadixBlockThreads / kWarpSize;
  constexpr int kWarpItems = kTileItems / kWarps;  // a warp's contiguous segment of the tile
  constexpr int kRounds = kWarpItems / kWarpSize;
  static_assert(kWarpItems % kWarpSize == 0, "whole rounds per warp");
  constexpr int kDigitsPerThread = kRadixMaxDigits / kRadixBlockThreads;
  static_assert(kRadixMaxDigits % kRadixBlockThreads == 0, "each thread scans whole digits");
  static_assert(kWarpItems < 65536, "per-warp counts are 16-bit");
  __shared__ std::uint64_t tile_keys[kTileItems];
  __shared__ std::uint16_t warp_counts[kWarps][kRadixMaxDigits];  // counts, then each warp's start in the digit
  __shared__ std::uint32_t local_start[kRadixMaxDigits];          // digit's start inside the sorted tile
  __shared__ std::uint32_t out_start[kRadixMaxDigits];            // digit's first output index for this tile
  __shared__ std::uint32_t warp_totals[kWarps];
  const std::int64_t tile = blockIdx.x;
  const int num_digits = 1 << digit_bits;
  for (int k = threadIdx.x; k < kWarps * kRadixMaxDigits; k += kRadixBlockThreads) {
    warp_counts[k / kRadixMaxDigits][k % kRadixMaxDigits] = 0;
  }
  __syncthreads();
  const std::uint64_t mask = (std::uint64_t{1} << digit_bits) - 1;
  const std::int64_t tile_start = tile * kTileItems;
  const int warp = warp_id();
  const int lane = lane_id();
  const std::int64_t segment = tile_start + static_cast<std::int64_t>(warp) * kWarpItems;
  std::uint64_t keys[kRounds];
  std::uint32_t ranks[kRounds];  // rank among the warp's keys of the same digit, in input order
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const std::int64_t i = segment + r * kWarpSize + lane;
    keys[r] = i < count ? keys_in[i] : 0;
  }
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const bool valid = segment + r * kWarpSize + lane < count;
    const auto digit = static_cast<std::uint32_t>((keys[r] >> shift) & mask);
    // Lanes holding the same digit: intersect one ballot per digit bit.
    LaneMask peers = ballot(valid);
    for (int b = 0; b < digit_bits; ++b) {
      const bool bit = (digit >> b) & 1u;
      const LaneMask set = ballot(valid && bit);
      peers &= bit ? set : ~set;
    }
    // The lowest lane of each digit group reads and bumps the warp's counter for that digit and
    // hands the old value to its peers.
    const LaneMask below = peers & lanes_below_mask();
    const int leader = valid ? popcount((peers & (~peers + 1)) - 1) : lane;
    std::uint32_t before = 0;
    if (valid && below == 0) {
      before = warp_counts[warp][digit];
      warp_counts[warp][digit] = static_cast<std::uint16_t>(before + static_cast<std::uint32_t>(popcount(peers)));
    }
    before = shfl(before, leader);
    ranks[r] = before + static_cast<std::uint32_t>(popcount(below));
    sync_lanes_of_warp();  // the counters written this round are visible to the next round's leaders
  }
  __syncthreads();
  // Per digit: warp counts -> each warp's start inside the digit (warp order = input order); the
  // digit totals -> the digit's start inside the tile (a block scan) and in the output.
  std::uint32_t digit_total[kDigitsPerThread];
  std::uint32_t thread_total = 0;
#pragma unroll
  for (int q = 0; q < kDigitsPerThread; ++q) {
    const int d = static_cast<int>(threadIdx.x) * kDigitsPerThread + q;
    std::uint32_t running = 0;
    for (int w = 0; w < kWarps; ++w) {
      const std::uint32_t c = warp_counts[w][d];
      warp_counts[w][d] = static_cast<std::uint16_t>(running);
      running += c;
    }
    digit_total[q] = running;
    thread_total += running;
  }
  std::uint32_t tile_total = 0;
  std::uint32_t start = block_exclusive_scan<kRadixBlockThreads>(thread_total, warp_totals, &tile_total);
  // The digit starts in the output: the exclusive scan of all tiles' digit totals (same digits per
  // thread, so the thread's first digit start is the scan of its totals' sums).
  std::uint32_t digit_sum[kDigitsPerThread];
  std::uint32_t thread_digit_sum = 0;
#pragma unroll
  for (int q = 0; q < kDigitsPerThread; ++q) {
    const int d = static_cast<int>(threadIdx.x) * kDigitsPerThread + q;
    digit_sum[q] = d < num_digits ? digit_totals[d] : 0u;
    thread_digit_sum += digit_sum[q];
  }
  std::uint32_t all_keys = 0;
  std::uint32_t digit_start = block_exclusive_scan<kRadixBlockThreads>(thread_digit_sum, warp_totals, &all_keys);
#pragma unroll
  for (int q = 0; q < kDigitsPerThread; ++q) {
    const int d = static_cast<int>(threadIdx.x) * kDigitsPerThread + q;
    local_start[d] = start;
    out_start[d] = d < num_digits ? digit_start + tile_offsets[static_cast<std::int64_t>(d) * num_tiles + tile] : 0u;
    start += digit_total[q];
    digit_start += digit_sum[q];
  }
  __syncthreads();
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    if (segment + r * kWarpSize + lane < count) {
      const auto digit = static_cast<std::uint32_t>((keys[r] >> shift) & mask);
      tile_keys[local_start[digit] + warp_counts[warp][digit] + ranks[r]] = keys[r];
    }
  }
  __syncthreads();
  const int next_shift = shift + digit_bits;
  const std::uint64_t next_mask = (std::uint64_t{1} << next_digit_bits) - 1;
  for (int j = threadIdx.x; j < static_cast<int>(tile_total); j += kRadixBlockThreads) {
    const std::uint64_t key = tile_keys[j];
    const auto digit = static_cast<std::uint32_t>((key >> shift) & mask);
    const std::uint32_t at = out_start[digit] + (static_cast<std::uint32_t>(j) - local_start[digit]);
    keys_out[at] = key;
    if (next_counts != nullptr) {
      // The next pass's tiles are this output's, of the same size.
      const auto next_digit = static_cast<std::int64_t>((key >> next_shift) & next_mask);
      atomicAdd(&next_counts[next_digit * num_tiles + at / kTileItems], 1u);
    }
  }
}

}  // namespace parity::gpu_device
