// Host entry of the portable LSD radix sort (kernels.cuh): 64-bit keys, sorted stably by the bits
// [begin_bit, end_bit) only. Internal to parity_gpu.
#pragma once

#include <cstdint>

#include "parity/core/status.hpp"

namespace parity::gpu_sort {

/// Digit passes the sort makes over [begin_bit, end_bit): ceil(bits / 9), widths near-equal.
int radix_sort_passes(int begin_bit, int end_bit);

/// Keys per tile (one block each): 1024 for sorts of at most 2^20 keys when small_tiles, else
/// 4096. Either gives the same result (the sort is stable).
int radix_sort_tile_keys(std::int64_t count, bool small_tiles);

/// Scratch for the per-tile digit counts and the digit totals, in bytes (enough for either tile
/// size); with counts_in_scatter a second count buffer (a pass's scatter counts the next pass's
/// digits into it).
std::int64_t radix_sort_scratch_bytes(std::int64_t count, bool counts_in_scatter = false);

/// The first pass's shape, for a caller that counts its digits per tile while writing the keys:
/// keys per tile (one block each), the digit width, the tiles, and where the digit-major counts
/// go (counts[digit * num_tiles + tile], every digit of every tile) inside the scratch.
struct RadixFirstPass {
  int tile_keys = 0;
  int digit_bits = 0;
  std::int64_t num_tiles = 0;
  std::uint32_t* tile_counts = nullptr;
};
RadixFirstPass radix_sort_first_pass(std::int64_t count, int begin_bit, int end_bit, void* scratch,
                                     bool small_tiles);

/// Sorts keys_a[0:count) using keys_b as the ping-pong buffer; returns the buffer that holds the
/// result (keys_a after an even number of passes, keys_b after an odd one). count < 2^32.
/// small_tiles: radix_sort_tile_keys (false keeps 4096-key tiles at every size).
/// first_counts_given: the caller wrote the first pass's tile counts (radix_sort_first_pass), so
/// the sort skips that pass's histogram launch.
/// counts_in_scatter: each pass's scatter counts the next pass's digits (one integer atomic add per
/// key into the second count buffer), so no pass after the first launches a histogram. The same
/// counts, so the same result.
Result<std::uint64_t*> radix_sort_keys(std::uint64_t* keys_a, std::uint64_t* keys_b, std::int64_t count,
                                       int begin_bit, int end_bit, void* scratch, void* stream,
                                       bool small_tiles = true, bool first_counts_given = false,
                                       bool counts_in_scatter = false);

}  // namespace parity::gpu_sort
