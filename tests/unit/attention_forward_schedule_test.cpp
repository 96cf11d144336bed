// The grid orders of the GPU attention forwards (src/backends/gpu/attention/forward_schedule.hpp,
// the functions the kernels call) on the CPU: with seeded random jagged lengths (0, 1, 127, 128,
// 129, 257, N longer than every sequence, sequences longer than N), every q tile of every
// (sequence, head) is computed by exactly one block, in each grid order (slot major, tile major,
// the persistent walk on several grid sizes); heaviest tiles first; empty slots empty for every
// caller alike; the tile-major grid keeps few (sequence, head) pairs resident at once.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backends/gpu/attention/forward_schedule.hpp"
#include "common/test_support.hpp"

namespace parity::gpu_device::attention {
namespace {

constexpr int kRows = 128;  // q rows per tile of the wgmma forwards (kWgmmaRows)

enum class Order { kSlotMajor, kTileMajor, kPersistent };

std::string order_name(Order order) {
  switch (order) {
    case Order::kSlotMajor:
      return "slot major";
    case Order::kTileMajor:
      return "tile major";
    case Order::kPersistent:
      return "persistent";
  }
  return "?";
}

struct Schedule {
  std::vector<std::int64_t> lengths;  // q rows per sequence
  int heads = 1;
  int slots = 1;
  std::int64_t pairs() const { return static_cast<std::int64_t>(lengths.size()) * heads; }
  int tiles_of(std::int64_t sequence_head) const {
    return q_tile_count(static_cast<int>(lengths[sequence_head / heads]), kRows);
  }
};

// One block's walk: the (sequence, head, tile) it computes, in order, through the kernels' calls
// (first_q_tile_walk, next_q_tile_walk); pair_calls counts the callback's calls (a new pair each).
struct BlockWalk {
  std::vector<std::pair<std::int64_t, int>> tiles;
  int pair_calls = 0;
};

template <bool kPersistent>
BlockWalk walk_block(const Schedule& s, std::int64_t block, bool q_tiles_fastest,
                     std::int64_t grid) {
  BlockWalk out;
  std::int64_t last_pair = -1;
  const auto pair_tiles = [&](std::int64_t sequence_head) {
    ++out.pair_calls;
    EXPECT_GT(sequence_head, last_pair) << "a pair looked up twice or out of order";
    last_pair = sequence_head;
    return s.tiles_of(sequence_head);
  };
  QTileWalk walk =
      first_q_tile_walk<kPersistent>(block, s.pairs(), s.slots, q_tiles_fastest, grid, pair_tiles);
  while (walk.valid()) {
    EXPECT_EQ(walk.tiles, s.tiles_of(walk.sequence_head));
    EXPECT_GE(walk.tile, 0);
    out.tiles.emplace_back(walk.sequence_head, walk.tile);
    next_q_tile_walk<kPersistent>(walk, s.pairs(), s.slots, grid, pair_tiles);
    if (out.tiles.size() > 1u << 20) break;  // a walk that does not end fails below, not hangs
  }
  return out;
}

BlockWalk walk_of(Order order, const Schedule& s, std::int64_t block, std::int64_t grid) {
  if (order == Order::kPersistent) return walk_block<true>(s, block, true, grid);
  return walk_block<false>(s, block, order == Order::kTileMajor, grid);
}

// Every q tile of every pair exactly once; each block's tiles heaviest (last) first within a
// pair; a block whose slot is past its sequence's tiles computes nothing.
void expect_covers_every_tile_once(const Schedule& s, Order order, int sm_count) {
  SCOPED_TRACE(order_name(order) + ", slots " + std::to_string(s.slots) + ", heads " +
               std::to_string(s.heads) + ", SMs " + std::to_string(sm_count));
  const std::int64_t grid =
      forward_grid_blocks(s.pairs(), s.slots, order == Order::kPersistent, sm_count);
  ASSERT_GE(grid, 1);
  ASSERT_LE(grid, s.pairs() * s.slots);
  std::vector<std::vector<int>> seen(static_cast<std::size_t>(s.pairs()));
  for (std::int64_t pair = 0; pair < s.pairs(); ++pair)
    seen[pair].assign(static_cast<std::size_t>(s.tiles_of(pair)), 0);
  for (std::int64_t block = 0; block < grid; ++block) {
    const BlockWalk w = walk_of(order, s, block, grid);
    // The producer and both consumers walk with the same calls: the same tiles, empty alike.
    const BlockWalk again = walk_of(order, s, block, grid);
    ASSERT_EQ(w.tiles, again.tiles) << "block " << block;
    for (std::size_t i = 0; i < w.tiles.size(); ++i) {
      const auto [pair, tile] = w.tiles[i];
      ASSERT_LT(tile, static_cast<int>(seen[pair].size())) << "block " << block;
      ++seen[pair][tile];
      if (order != Order::kPersistent && i > 0) {
        // A per-slot block stays on its pair and strides up by the slot count (a sequence longer
        // than N); a persistent block may also take the next item of the same pair.
        EXPECT_EQ(pair, w.tiles[i - 1].first) << "block " << block;
        EXPECT_EQ(tile, w.tiles[i - 1].second + s.slots) << "block " << block;
      }
    }
    if (order != Order::kPersistent) {
      const ForwardSlot slot =
          forward_grid_slot(block, s.pairs(), s.slots, order == Order::kTileMajor);
      const bool empty = first_q_tile_of_slot(slot.slot, s.slots) >= s.tiles_of(slot.sequence_head);
      EXPECT_EQ(empty, w.tiles.empty()) << "block " << block;
      EXPECT_EQ(w.pair_calls, 1) << "block " << block;
    }
  }
  for (std::int64_t pair = 0; pair < s.pairs(); ++pair) {
    for (std::size_t tile = 0; tile < seen[pair].size(); ++tile)
      ASSERT_EQ(seen[pair][tile], 1) << "pair " << pair << " tile " << tile;
  }
}

// In grid order, a pair's non-empty slots start at its last (heaviest) tile and go down.
void expect_heaviest_first(const Schedule& s, Order order) {
  SCOPED_TRACE(order_name(order) + ", slots " + std::to_string(s.slots));
  const std::int64_t grid = s.pairs() * s.slots;
  std::vector<int> previous_first(static_cast<std::size_t>(s.pairs()), -1);
  for (std::int64_t block = 0; block < grid; ++block) {
    const BlockWalk w = walk_of(order, s, block, grid);
    if (w.tiles.empty()) continue;
    const auto [pair, tile] = w.tiles.front();
    const int tiles = s.tiles_of(pair);
    const int expected =
        previous_first[pair] < 0 ? std::min(tiles, s.slots) - 1 : previous_first[pair] - 1;
    EXPECT_EQ(tile, expected) << "block " << block << " pair " << pair;
    previous_first[pair] = tile;
  }
}

std::vector<std::int64_t> random_lengths(std::mt19937_64& rng, int batch, std::int64_t n) {
  // The edge lengths first, then uniform [0, n].
  std::vector<std::int64_t> lengths = {0, 1, 127, 128, 129, 257};
  std::uniform_int_distribution<std::int64_t> uniform(0, n);
  while (static_cast<int>(lengths.size()) < batch) lengths.push_back(uniform(rng));
  lengths.resize(static_cast<std::size_t>(batch));
  std::shuffle(lengths.begin(), lengths.end(), rng);
  return lengths;
}

TEST(AttentionForwardSchedule, GridSlotIsOneToOneInBothOrders) {
  for (const std::int64_t pairs : {1, 3, 280, 2048}) {
    for (const int slots : {1, 2, 3, 32}) {
      for (const bool tile_major : {false, true}) {
        std::set<std::pair<std::int64_t, int>> seen;
        for (std::int64_t block = 0; block < pairs * slots; ++block) {
          const ForwardSlot s = forward_grid_slot(block, pairs, slots, tile_major);
          ASSERT_GE(s.sequence_head, 0);
          ASSERT_LT(s.sequence_head, pairs);
          ASSERT_GE(s.slot, 0);
          ASSERT_LT(s.slot, slots);
          ASSERT_TRUE(seen.emplace(s.sequence_head, s.slot).second) << "block " << block;
          // Tile major: the slots of one pair adjacent, heaviest (slot 0) first.
          if (tile_major) {
            ASSERT_EQ(block, s.sequence_head * slots + s.slot);
          }
        }
      }
    }
  }
  EXPECT_EQ(first_q_tile_of_slot(0, 32), 31);
  EXPECT_EQ(first_q_tile_of_slot(31, 32), 0);
  EXPECT_EQ(q_tile_count(0, kRows), 0);
  EXPECT_EQ(q_tile_count(1, kRows), 1);
  EXPECT_EQ(q_tile_count(128, kRows), 1);
  EXPECT_EQ(q_tile_count(129, kRows), 2);
}

TEST(AttentionForwardSchedule, EveryQTileOnceOnRandomJaggedLengths) {
  const std::uint64_t seed = parity::testing::test_seed(15301);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 6; ++trial) {
    Schedule s;
    const std::int64_t n = std::uniform_int_distribution<std::int64_t>(129, 1100)(rng);
    s.heads = trial % 2 == 0 ? 1 : 4;
    s.lengths = random_lengths(rng, 7 + trial * 5, n);
    // Slots for N (the per-q-tile grids), fewer (the walking kernel's slots, and sequences longer
    // than the slots cover: softmax truncation at N), and N longer than every sequence.
    for (const int slots : {q_tile_count(static_cast<int>(n), kRows), 1, 2, 40}) {
      s.slots = slots;
      for (const Order order : {Order::kSlotMajor, Order::kTileMajor}) {
        expect_covers_every_tile_once(s, order, 132);
        expect_heaviest_first(s, order);
      }
      for (const int sm_count : {1, 7, 132, 1 << 20})
        expect_covers_every_tile_once(s, Order::kPersistent, sm_count);
    }
  }
}

TEST(AttentionForwardSchedule, AllSequencesEmptyOrShorterThanN) {
  Schedule s;
  s.heads = 2;
  s.lengths = {0, 0, 0};
  s.slots = 32;  // N = 4096
  for (const Order order : {Order::kSlotMajor, Order::kTileMajor, Order::kPersistent})
    expect_covers_every_tile_once(s, order, 132);
  s.lengths = {1, 0, 127, 129};
  for (const Order order : {Order::kSlotMajor, Order::kTileMajor, Order::kPersistent})
    expect_covers_every_tile_once(s, order, 5);
}

// The point of the tile-major order: any window of `resident` consecutive blocks (those running
// together) touches at most resident / slots + 2 pairs, so their K and V fit in L2 (132 SMs,
// 32 slots at N = 4096: 6 pairs), where the slot-major grid touches `resident` different pairs.
TEST(AttentionForwardSchedule, TileMajorKeepsFewPairsResident) {
  const std::int64_t pairs = 2048;
  const int slots = 32;
  const std::int64_t resident = 132;
  for (std::int64_t start = 0; start + resident <= pairs * slots; start += 97) {
    std::set<std::int64_t> tile_major_pairs, slot_major_pairs;
    for (std::int64_t block = start; block < start + resident; ++block) {
      tile_major_pairs.insert(forward_grid_slot(block, pairs, slots, true).sequence_head);
      slot_major_pairs.insert(forward_grid_slot(block, pairs, slots, false).sequence_head);
    }
    ASSERT_LE(static_cast<std::int64_t>(tile_major_pairs.size()), resident / slots + 2);
    ASSERT_EQ(static_cast<std::int64_t>(slot_major_pairs.size()), resident);
  }
}

TEST(AttentionForwardSchedule, PersistentGridIsResidentButNeverLargerThanTheItems) {
  EXPECT_EQ(forward_grid_blocks(2048, 32, true, 132), 132);
  EXPECT_EQ(forward_grid_blocks(2, 3, true, 132), 6);
  EXPECT_EQ(forward_grid_blocks(2, 3, true, 0), 1);
  EXPECT_EQ(forward_grid_blocks(2048, 32, false, 132), 65536);
}

// HSTU B=512, H=4, d=128 on 132 SMs with a 50 MB L2 (the H200 reports more: 9 slots at
// N = 4096 in run 58): K and V of one pair are 2 MB at
// N = 4096, so 12 pairs fit half of L2 and 11 slots (12 resident pairs of 132 blocks) are needed;
// 1 MB at N = 2048: 6 slots. Few pairs: enough slots for 2 blocks per SM; never more than the
// q tiles; no L2 at all: one block per q tile.
TEST(AttentionForwardSchedule, PairWalkSlotsKeepTheResidentPairsInHalfOfL2) {
  constexpr std::int64_t kL2 = 50LL << 20;
  EXPECT_EQ(pair_walk_slots(2048, 32, 132, kL2, 4096LL * 256 * 2), 11);
  EXPECT_EQ(pair_walk_slots(2048, 16, 132, kL2, 2048LL * 256 * 2), 6);
  EXPECT_EQ(pair_walk_slots(8, 32, 132, kL2, 4096LL * 256 * 2), 32);  // 8 x 32 < 264: all
  EXPECT_EQ(pair_walk_slots(100, 32, 132, kL2, 1024), 3);             // fill: 2 x 132 / 100
  EXPECT_EQ(pair_walk_slots(2048, 3, 132, kL2, 4096LL * 256 * 2), 3);
  EXPECT_EQ(pair_walk_slots(2048, 32, 132, 0, 4096LL * 256 * 2), 32);
  EXPECT_EQ(pair_walk_slots(0, 1, 0, 0, 0), 1);
  for (const std::int64_t pairs : {1, 7, 280, 2048}) {
    for (const int all_slots : {1, 2, 16, 32}) {
      const int slots = pair_walk_slots(pairs, all_slots, 132, kL2, 4096LL * 256 * 2);
      EXPECT_GE(slots, 1);
      EXPECT_LE(slots, all_slots);
    }
  }
}

}  // namespace
}  // namespace parity::gpu_device::attention
