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

/// Scratch for the per-tile digit counts, in bytes (enough for either tile size).
std::int64_t radix_sort_scratch_bytes(std::int64_t count);

/// Sorts keys_a[0:count) using keys_b as the ping-pong buffer; returns the buffer that holds the
/// result (keys_a after an even number of passes, keys_b after an odd one). count < 2^32.
/// small_tiles: radix_sort_tile_keys (false keeps 4096-key tiles at every size).
Result<std::uint64_t*> radix_sort_keys(std::uint64_t* keys_a, std::uint64_t* keys_b, std::int64_t count,
                                       int begin_bit, int end_bit, void* scratch, void* stream,
                                       bool small_tiles = true);

}  // namespace parity::gpu_sort
