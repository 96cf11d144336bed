// The order in which a block of the warp-specialized wgmma forward (forward_wgmma_ws_kernel.cuh)
// walks its q tiles: the producer and both consumers iterate the same QTile sequence, so their
// ring positions (one per kv tile) and Q loads agree.
#pragma once

#include "backends/gpu/attention/forward_wgmma_kernel.cuh"

namespace parity::gpu_device::attention {

// One q tile of one (sequence, head): what the producer and both consumers walk, in one order
// (the walk is forward_schedule.hpp's, unit-tested on the CPU; seq is the walk's pair).
struct QTile : QTileWalk {
  BlockSequence seq;
};

// The order of a block's q tiles.
// kPersistent = false: its own (sequence, head) (ForwardBlock: the grid has a block per
//   (sequence, head, tile slot)), tile slot s taking q tiles grid_tiles - 1 - s, striding by
//   grid_tiles.
// kPersistent = true: the grid is resident (a block per SM) and block b takes items b,
//   b + gridDim.x, ... of the list of every (sequence, head, tile slot), (sequence, head) major:
//   item i is slot i % grid_tiles of (sequence, head) i / grid_tiles, so the blocks resident
//   together work on a few (sequence, head) pairs, whose K and V stay in L2 (one block per
//   (sequence, head) at once re-reads them from HBM per q tile once 132 of them outgrow L2), and
//   each block gets a mix of heavy (late) and light causal tiles, heaviest first.
// A new pair's sequence is loaded once, by the walk's pair_tiles callback.
template <bool kPersistent, int kDim>
__device__ inline QTile first_q_tile(const AttentionParams& p,
                                     const ForwardBlock<kDim, kDim>& block) {
  QTile t;
  const auto pair_tiles = [&](std::int64_t sequence_head) {
    if constexpr (kPersistent) {
      t.seq = block_sequence(p, sequence_head);
    } else {
      t.seq = block.seq;  // ForwardBlock looked it up (the same forward_grid_slot)
    }
    return q_tile_count(t.seq.raw_len_q, kWgmmaRows);
  };
  static_cast<QTileWalk&>(t) = first_q_tile_walk<kPersistent>(
      static_cast<std::int64_t>(blockIdx.x), p.batch * p.heads, p.grid_tiles, p.q_tiles_fastest,
      static_cast<std::int64_t>(gridDim.x), pair_tiles);
  return t;
}
// Moves t to the block's next q tile (t.valid() false past the last).
template <bool kPersistent>
__device__ inline void next_q_tile(const AttentionParams& p, QTile& t) {
  next_q_tile_walk<kPersistent>(t, p.batch * p.heads, p.grid_tiles,
                                static_cast<std::int64_t>(gridDim.x),
                                [&](std::int64_t sequence_head) {
                                  t.seq = block_sequence(p, sequence_head);
                                  return q_tile_count(t.seq.raw_len_q, kWgmmaRows);
                                });
}

}  // namespace parity::gpu_device::attention
