// Which q tiles a forward block computes: the grid orders of the jagged attention forwards as
// plain functions, compiled for the host as well as the device, so the CPU unit tests
// (tests/unit/attention_forward_schedule_test.cpp) check that every q tile of every
// (sequence, head) is covered exactly once, heaviest first, with the code the kernels run.
// No CUDA or HIP types: the host compiler sees plain C++.
#pragma once

#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PARITY_ATTENTION_HOST_DEVICE __host__ __device__
#else
#define PARITY_ATTENTION_HOST_DEVICE
#endif

namespace parity::gpu_device::attention {

// Slot `slot` of a (sequence, head) with `slots` tile slots: the q tiles
// first_q_tile_of_slot(slot, slots), + slots, + 2 slots, ... below the sequence's tile count.
// Slot 0 takes the last (under a causal mask the heaviest) tile, so in either grid order the
// blocks that start first get the most work and the grid's tail is the lightest tiles.
PARITY_ATTENTION_HOST_DEVICE constexpr int first_q_tile_of_slot(int slot, int slots) {
  return slots - 1 - slot;
}

// q tiles of `rows` q rows, `tile_rows` each.
PARITY_ATTENTION_HOST_DEVICE constexpr int q_tile_count(int rows, int tile_rows) {
  return (rows + tile_rows - 1) / tile_rows;
}

// One block's (or one persistent item's) share of the grid.
struct ForwardSlot {
  std::int64_t sequence_head = 0;  // b * heads + h
  int slot = 0;                    // 0 .. slots - 1
};

// Grid order of the per-slot forwards (AttentionParams::q_tiles_fastest):
// false (slot major): block b is slot b / sequence_heads of (sequence, head) b % sequence_heads,
//   so the blocks resident together each stream a different (sequence, head)'s K and V;
// true (tile major): block b is slot b % slots of (sequence, head) b / slots, so the slots of
//   one (sequence, head) are adjacent and the resident blocks share a few pairs' K and V in L2.
// The persistent walk's items use the tile-major order.
PARITY_ATTENTION_HOST_DEVICE constexpr ForwardSlot forward_grid_slot(std::int64_t block,
                                                                     std::int64_t sequence_heads,
                                                                     int slots,
                                                                     bool q_tiles_fastest) {
  // 32-bit division: the blocks (and the persistent walk's items) number at most INT_MAX
  // (gpu::can_implement refuses more), and the persistent producer walks in 24 registers.
  const auto index = static_cast<std::uint32_t>(block);
  const auto pairs = static_cast<std::uint32_t>(sequence_heads);
  const auto slot_count = static_cast<std::uint32_t>(slots);
  ForwardSlot s;
  if (q_tiles_fastest) {
    s.sequence_head = index / slot_count;
    s.slot = static_cast<int>(index % slot_count);
  } else {
    s.sequence_head = index % pairs;
    s.slot = static_cast<int>(index / pairs);
  }
  return s;
}

// Blocks of a per-slot grid (one per (sequence, head, slot)) or of the persistent walk (at most
// one resident block per SM, never more than there are items).
PARITY_ATTENTION_HOST_DEVICE constexpr std::int64_t forward_grid_blocks(std::int64_t sequence_heads,
                                                                        int slots, bool persistent,
                                                                        int sm_count) {
  const std::int64_t items = sequence_heads * slots;
  const std::int64_t resident = sm_count > 1 ? sm_count : 1;
  return persistent && resident < items ? resident : items;
}

// Tile slots of the pair walk (the tile-major grid with fewer slots than q tiles: each block
// walks every slots-th q tile of its (sequence, head), and the blocks of one pair are adjacent).
// The blocks resident together (one per SM) cover about sm_count / slots pairs; slots is the
// fewest that keeps those pairs' K and V (kv_bytes_per_pair each) within half of L2, so that
// every q tile after a pair's first reads them from L2, not HBM, while each block still walks
// several tiles (one prologue per walk, the next Q loaded under the epilogue). At least enough
// slots for 2 blocks per SM, at most all_slots (one block per q tile).
PARITY_ATTENTION_HOST_DEVICE constexpr int pair_walk_slots(std::int64_t sequence_heads,
                                                           int all_slots, int sm_count,
                                                           std::int64_t l2_bytes,
                                                           std::int64_t kv_bytes_per_pair) {
  const std::int64_t sms = sm_count > 1 ? sm_count : 1;
  const std::int64_t pairs = sequence_heads > 1 ? sequence_heads : 1;
  const std::int64_t per_pair = kv_bytes_per_pair > 1 ? kv_bytes_per_pair : 1;
  const std::int64_t l2_pairs = l2_bytes / 2 / per_pair;  // resident pairs that fit
  std::int64_t slots = l2_pairs >= 1 ? (sms + l2_pairs - 1) / l2_pairs : all_slots;
  const std::int64_t fill_slots = (2 * sms + pairs - 1) / pairs;
  if (slots < fill_slots) slots = fill_slots;
  if (slots > all_slots) slots = all_slots;
  return slots < 1 ? 1 : static_cast<int>(slots);
}

// Where a block's walk over q tiles stands: its (sequence, head), the q tile and the pair's q tile
// count (tile >= tiles: the walk is over); the persistent walk also keeps its item (an index into
// the tile-major list of every (sequence, head, slot)).
struct QTileWalk {
  std::int64_t item = 0;
  std::int64_t sequence_head = -1;
  int tile = 0;
  int tiles = 0;
  PARITY_ATTENTION_HOST_DEVICE constexpr bool valid() const { return tile < tiles; }
};

// Moves `walk` to the first item at or after `item`, stepping by `stride` (the grid size), whose
// slot has a q tile; past the list, walk.item = items and walk.tile = walk.tiles (over).
// pair_tiles(sequence_head) returns that pair's q tile count; it is called once per new pair
// (on the device it also loads that pair's sequence, which the caller keeps).
template <typename PairTiles>
PARITY_ATTENTION_HOST_DEVICE inline void seek_persistent_item(QTileWalk& walk, std::int64_t item,
                                                              std::int64_t stride,
                                                              std::int64_t sequence_heads,
                                                              int slots, PairTiles&& pair_tiles) {
  const std::int64_t items = sequence_heads * slots;
  for (; item < items; item += stride) {
    const ForwardSlot s = forward_grid_slot(item, sequence_heads, slots, true);
    if (s.sequence_head != walk.sequence_head) {
      walk.sequence_head = s.sequence_head;
      walk.tiles = pair_tiles(s.sequence_head);
    }
    walk.tile = first_q_tile_of_slot(s.slot, slots);
    if (walk.valid()) {
      walk.item = item;
      return;
    }
  }
  walk.item = items;
  walk.tile = walk.tiles;
}

// The first q tile of a block: a per-slot grid's block `block` (its pair's tile count from
// pair_tiles), or the persistent walk's first item `block`.
template <bool kPersistent, typename PairTiles>
PARITY_ATTENTION_HOST_DEVICE inline QTileWalk first_q_tile_walk(std::int64_t block,
                                                                std::int64_t sequence_heads,
                                                                int slots, bool q_tiles_fastest,
                                                                std::int64_t stride,
                                                                PairTiles&& pair_tiles) {
  QTileWalk walk;
  if constexpr (kPersistent) {
    seek_persistent_item(walk, block, stride, sequence_heads, slots, pair_tiles);
  } else {
    const ForwardSlot s = forward_grid_slot(block, sequence_heads, slots, q_tiles_fastest);
    walk.item = block;
    walk.sequence_head = s.sequence_head;
    walk.tiles = pair_tiles(s.sequence_head);
    walk.tile = first_q_tile_of_slot(s.slot, slots);
  }
  return walk;
}

// The block's next q tile: its slot's next (a sequence longer than N has more tiles than slots),
// then (persistent) the next item with a tile.
template <bool kPersistent, typename PairTiles>
PARITY_ATTENTION_HOST_DEVICE inline void next_q_tile_walk(QTileWalk& walk,
                                                          std::int64_t sequence_heads, int slots,
                                                          std::int64_t stride,
                                                          PairTiles&& pair_tiles) {
  walk.tile += slots;
  if constexpr (kPersistent) {
    if (!walk.valid())
      seek_persistent_item(walk, walk.item + stride, stride, sequence_heads, slots, pair_tiles);
  }
}

}  // namespace parity::gpu_device::attention
