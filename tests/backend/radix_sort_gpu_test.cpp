// The portable GPU radix sort against std::stable_sort on the sorted bit range: every pass count
// and digit split (1..9-bit digits), tile-edge sizes of both tile sizes (1024 keys for sorts of at
// most 2^20 keys, 4096 otherwise or when small tiles are off), heavy duplicates (one digit per
// tile) and payload order inside equal keys (stability). The vendor's sort (CUB, the TBE backward's
// BackwardOptions::vendor_sort) against the same std::stable_sort on the same cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "backends/cuda/sort/vendor_radix_sort.hpp"
#include "backends/gpu/sort/radix_sort.hpp"
#include "common/test_support.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"

namespace parity {
namespace {

// Keys = (random value in [0, 2^bits) or one of `distinct` values) << begin | position, so a
// stable sort by [begin, begin + bits) keeps positions ascending within equal values.
std::vector<std::uint64_t> make_keys(std::int64_t count, int begin_bit, int bits, std::uint64_t distinct, Rng& rng) {
  std::vector<std::uint64_t> keys(static_cast<std::size_t>(count));
  const std::uint64_t range = std::uint64_t{1} << bits;
  for (std::int64_t i = 0; i < count; ++i) {
    std::uint64_t value = rng.engine()() % range;
    if (distinct > 0) value = (value % distinct) * (range / distinct);
    keys[static_cast<std::size_t>(i)] = (value << begin_bit) | static_cast<std::uint64_t>(i);
  }
  return keys;
}

enum class Sorter { kPortable, kVendor };

void expect_sorted_like_std(const std::vector<std::uint64_t>& keys, int begin_bit, int end_bit,
                            bool small_tiles = true, Sorter sorter = Sorter::kPortable,
                            bool counts_in_scatter = false) {
  const auto count = static_cast<std::int64_t>(keys.size());
  auto a = gpu::upload(keys);
  ASSERT_TRUE(a.is_ok()) << a.status().to_string();
  auto b = gpu::DeviceBuffer::allocate(std::max<std::size_t>(keys.size() * 8, 8));
  const bool vendor = sorter == Sorter::kVendor;
  const auto scratch_bytes = vendor ? gpu_sort::vendor_radix_sort_scratch_bytes(count, begin_bit, end_bit)
                                    : Result<std::int64_t>(gpu_sort::radix_sort_scratch_bytes(count, counts_in_scatter));
  ASSERT_TRUE(scratch_bytes.is_ok()) << scratch_bytes.status().to_string();
  auto scratch = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(std::max<std::int64_t>(*scratch_bytes, 1)));
  ASSERT_TRUE(b.is_ok() && scratch.is_ok());
  auto sorted = vendor ? gpu_sort::vendor_radix_sort_keys(a->as<std::uint64_t>(), b->as<std::uint64_t>(), count,
                                                         begin_bit, end_bit, scratch->data(), *scratch_bytes, nullptr)
                       : gpu_sort::radix_sort_keys(a->as<std::uint64_t>(), b->as<std::uint64_t>(), count, begin_bit,
                                                   end_bit, scratch->data(), nullptr, small_tiles, false,
                                                   counts_in_scatter);
  ASSERT_TRUE(sorted.is_ok()) << sorted.status().to_string();
  const bool in_a = *sorted == a->as<std::uint64_t>();
  auto got = gpu::download<std::uint64_t>(in_a ? *a : *b, keys.size());
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  const std::uint64_t mask = end_bit - begin_bit >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << (end_bit - begin_bit)) - 1;
  auto want = keys;
  std::stable_sort(want.begin(), want.end(), [&](std::uint64_t x, std::uint64_t y) {
    return ((x >> begin_bit) & mask) < ((y >> begin_bit) & mask);
  });
  std::int64_t first_bad = -1;
  for (std::int64_t i = 0; i < count && first_bad < 0; ++i) {
    if ((*got)[static_cast<std::size_t>(i)] != want[static_cast<std::size_t>(i)]) first_bad = i;
  }
  EXPECT_EQ(first_bad, -1) << "count=" << count << " bits [" << begin_bit << ", " << end_bit << ") small_tiles "
                           << small_tiles << " vendor " << vendor << " counts_in_scatter " << counts_in_scatter;
}

TEST(GpuRadixSort, PassCountsSplitTheRangeIntoNearEqualDigitsOfAtMostNineBits) {
  EXPECT_EQ(gpu_sort::radix_sort_passes(23, 23), 0);
  EXPECT_EQ(gpu_sort::radix_sort_passes(0, 1), 1);
  EXPECT_EQ(gpu_sort::radix_sort_passes(0, 9), 1);
  EXPECT_EQ(gpu_sort::radix_sort_passes(0, 10), 2);
  EXPECT_EQ(gpu_sort::radix_sort_passes(23, 48), 3);  // C2: 25 row bits -> 9 + 8 + 8
  EXPECT_EQ(gpu_sort::radix_sort_passes(20, 47), 3);
  EXPECT_EQ(gpu_sort::radix_sort_passes(20, 48), 4);
}

TEST(GpuRadixSort, SmallTilesOnlyUpToTheLimitAndScratchHoldsEither) {
  EXPECT_EQ(gpu_sort::radix_sort_tile_keys(200000, true), 1024);
  EXPECT_EQ(gpu_sort::radix_sort_tile_keys(std::int64_t{1} << 20, true), 1024);
  EXPECT_EQ(gpu_sort::radix_sort_tile_keys((std::int64_t{1} << 20) + 1, true), 4096);
  EXPECT_EQ(gpu_sort::radix_sort_tile_keys(200000, false), 4096);
  // 512 digit counts of 4 bytes per tile, plus the digit totals; with counts in the scatter a
  // second buffer of counts (the next pass's).
  EXPECT_EQ(gpu_sort::radix_sort_scratch_bytes(200000), 4 * 512 * ((200000 + 1023) / 1024 + 1));
  EXPECT_EQ(gpu_sort::radix_sort_scratch_bytes(std::int64_t{3} << 20), 4 * 512 * ((3 << 20) / 4096 + 1));
  EXPECT_EQ(gpu_sort::radix_sort_scratch_bytes(200000, true), 4 * 512 * (2 * ((200000 + 1023) / 1024) + 1));
}

TEST(GpuRadixSort, MatchesStableSortOnEveryDigitSplitAndTileEdge) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(31);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  struct Case {
    std::int64_t count;
    int bits;
  };
  // Sizes around one and several tiles of 1024 and 4096 keys, and both sides of the small-tile
  // limit (2^20 keys); 1..36 bits = 1..4 passes of 1..9 bits. Each with small tiles on and off, and
  // with every pass after the first counted by the one before (alternating two count buffers).
  for (const Case c : {Case{2, 1}, Case{1000, 3}, Case{1023, 5}, Case{1024, 9}, Case{1025, 11}, Case{4095, 9},
                       Case{4096, 10}, Case{4097, 17}, Case{8191, 18}, Case{100003, 25}, Case{70000, 27},
                       Case{300000, 12}, Case{(1 << 20), 21}, Case{(1 << 20) + 1, 19}, Case{200003, 36},
                       Case{9000, 28}}) {
    const int begin_bit = 22;  // positions (< 2^22) below the sorted bits
    for (const bool small_tiles : {true, false}) {
      for (const bool counts_in_scatter : {false, true}) {
        expect_sorted_like_std(make_keys(c.count, begin_bit, c.bits, 0, rng), begin_bit, begin_bit + c.bits,
                               small_tiles, Sorter::kPortable, counts_in_scatter);
      }
    }
  }
}

TEST(GpuRadixSort, StableOnHeavyDuplicatesAndEmptyRange) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(32);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  // One value everywhere (every key in one digit of every pass), then three values.
  for (std::uint64_t distinct : {1ULL, 3ULL}) {
    for (const bool counts_in_scatter : {false, true}) {
      expect_sorted_like_std(make_keys(50000, 20, 25, distinct, rng), 20, 45, true, Sorter::kPortable,
                             counts_in_scatter);
    }
  }
  // An empty bit range leaves the keys in place.
  expect_sorted_like_std(make_keys(5000, 20, 8, 0, rng), 20, 20);
}

TEST(GpuRadixSort, VendorSortMatchesStableSortToo) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(33);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  // 1..40 bits (1..5 passes of CUB's 8-bit digits), one key, heavy duplicates, an empty range.
  const int begin_bit = 22;
  for (const auto& [count, bits] : std::vector<std::pair<std::int64_t, int>>{
           {1, 5}, {2, 1}, {1025, 9}, {4097, 17}, {100003, 25}, {300000, 12}, {(1 << 20) + 1, 27}, {70000, 40}}) {
    expect_sorted_like_std(make_keys(count, begin_bit, bits, 0, rng), begin_bit, begin_bit + bits, true,
                           Sorter::kVendor);
  }
  expect_sorted_like_std(make_keys(50000, 20, 25, 1, rng), 20, 45, true, Sorter::kVendor);
  expect_sorted_like_std(make_keys(5000, 20, 8, 0, rng), 20, 20, true, Sorter::kVendor);
}

TEST(GpuRadixSort, VendorSortRefusesBadRangesAndShortScratch) {
  EXPECT_EQ(gpu_sort::vendor_radix_sort_scratch_bytes(-1, 0, 8).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu_sort::vendor_radix_sort_scratch_bytes(100, 9, 8).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu_sort::vendor_radix_sort_scratch_bytes(100, 0, 65).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu_sort::vendor_radix_sort_scratch_bytes(std::int64_t{1} << 31, 0, 8).status().code(),
            StatusCode::kInvalidArgument);
  // Fewer than two keys need no scratch and no device.
  EXPECT_EQ(*gpu_sort::vendor_radix_sort_scratch_bytes(1, 0, 8), 0);
  PARITY_REQUIRE_GPU();
  auto a = gpu::upload(std::vector<std::uint64_t>(1000, 7));
  auto b = gpu::DeviceBuffer::allocate(8000);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const auto sorted = gpu_sort::vendor_radix_sort_keys(a->as<std::uint64_t>(), b->as<std::uint64_t>(), 1000, 0, 8,
                                                       b->data(), 0, nullptr);
  ASSERT_FALSE(sorted.is_ok());
  EXPECT_NE(sorted.status().message().find("scratch_bytes=0"), std::string::npos) << sorted.status().to_string();
}

}  // namespace
}  // namespace parity
