// The order in which a block of the warp-specialized wgmma forward (forward_wgmma_ws_kernel.cuh)
// walks its q tiles: the producer and both consumers iterate the same QTile sequence, so their
// ring positions (one per kv tile) and Q loads agree.
#pragma once

#include "backends/gpu/attention/forward_wgmma_kernel.cuh"

namespace parity::gpu_device::attention {

// One q tile of one (sequence, head): what the producer and both consumers walk, in one order.
struct QTile {
  BlockSequence seq;
  std::int64_t sequence_head = -1;
  std::int64_t item = 0;  // persistent walk: the item (below)
  int tile = 0;           // q rows [tile * kWgmmaRows, (tile + 1) * kWgmmaRows)
  int q_tile_count = 0;   // of seq; tile >= q_tile_count: the walk is over
  __device__ bool valid() const { return tile < q_tile_count; }
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
template <bool kPersistent>
__device__ inline void seek_q_tile(const AttentionParams& p, QTile& t, std::int64_t item) {
  const std::int64_t items = p.batch * p.heads * p.grid_tiles;
  for (; item < items; item += gridDim.x) {
    const std::int64_t sequence_head = item / p.grid_tiles;
    if (sequence_head != t.sequence_head) {
      t.seq = block_sequence(p, sequence_head);
      t.sequence_head = sequence_head;
      t.q_tile_count = (t.seq.raw_len_q + kWgmmaRows - 1) / kWgmmaRows;
    }
    t.tile = p.grid_tiles - 1 - static_cast<int>(item % p.grid_tiles);
    if (t.tile < t.q_tile_count) {
      t.item = item;
      return;
    }
  }
  t.item = items;
  t.tile = t.q_tile_count;  // over
}
template <bool kPersistent, int kDim>
__device__ inline QTile first_q_tile(const AttentionParams& p,
                                     const ForwardBlock<kDim, kDim>& block) {
  QTile t;
  if constexpr (kPersistent) {
    seek_q_tile<kPersistent>(p, t, blockIdx.x);
  } else {
    t.seq = block.seq;
    t.q_tile_count = (t.seq.raw_len_q + kWgmmaRows - 1) / kWgmmaRows;
    t.tile = p.grid_tiles - 1 - block.slot;
  }
  return t;
}
// Moves t to the block's next q tile (t.valid() false past the last).
template <bool kPersistent>
__device__ inline void next_q_tile(const AttentionParams& p, QTile& t) {
  t.tile += p.grid_tiles;  // a sequence longer than N: its slot's later tiles
  if constexpr (kPersistent) {
    if (!t.valid()) seek_q_tile<kPersistent>(p, t, t.item + gridDim.x);
  }
}

}  // namespace parity::gpu_device::attention
