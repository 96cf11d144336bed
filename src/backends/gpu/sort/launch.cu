// Host launch of the portable LSD radix sort (see kernels.cuh).
#include "backends/gpu/sort/kernels.cuh"
#include "backends/gpu/sort/radix_sort.hpp"

namespace parity::gpu_sort {

using namespace parity::gpu_device;

int radix_sort_passes(int begin_bit, int end_bit) {
  return (end_bit - begin_bit + kRadixMaxDigitBits - 1) / kRadixMaxDigitBits;
}

int radix_sort_tile_keys(std::int64_t count, bool small_tiles) {
  return small_tiles && count <= kRadixSmallTileMaxKeys ? kRadixSmallTileItems : kRadixTileItems;
}

std::int64_t radix_sort_scratch_bytes(std::int64_t count, bool counts_in_scatter) {
  const std::int64_t tile_keys = radix_sort_tile_keys(count, true);  // the smaller tile: more tiles
  const std::int64_t tiles = (count + tile_keys - 1) / tile_keys;
  // digit x tile counts, the digit totals, then (counts_in_scatter) the second digit x tile counts
  const std::int64_t buffers = counts_in_scatter ? 2 : 1;
  return static_cast<std::int64_t>(sizeof(std::uint32_t)) * kRadixMaxDigits * (buffers * (tiles > 0 ? tiles : 1) + 1);
}

namespace {

// Width of pass `pass` of `passes` with `remaining` bits left: near-equal, the first ones wider.
int pass_digit_bits(int remaining, int passes, int pass) {
  return (remaining + (passes - pass) - 1) / (passes - pass);
}

}  // namespace

RadixFirstPass radix_sort_first_pass(std::int64_t count, int begin_bit, int end_bit, void* scratch,
                                     bool small_tiles) {
  RadixFirstPass first;
  first.tile_keys = radix_sort_tile_keys(count, small_tiles);
  first.num_tiles = (count + first.tile_keys - 1) / first.tile_keys;
  const int passes = radix_sort_passes(begin_bit, end_bit);
  first.digit_bits = passes > 0 ? pass_digit_bits(end_bit - begin_bit, passes, 0) : 0;
  first.tile_counts = static_cast<std::uint32_t*>(scratch);
  return first;
}

namespace {

// One pass's count buffers: next_counts is null on the last pass and without counts_in_scatter.
struct PassCounts {
  std::uint32_t* tile_counts = nullptr;
  std::uint32_t* next_counts = nullptr;
  std::uint32_t* digit_totals = nullptr;
  int next_digit_bits = 0;
};

template <int kItemsPerThread>
Status launch_pass(const std::uint64_t* in, std::uint64_t* out, std::int64_t count, int shift, int digit_bits,
                   std::int64_t num_tiles, const PassCounts& c, bool counts_given, gpuStream_t s) {
  if (!counts_given) {
    radix_histogram_kernel<kItemsPerThread><<<static_cast<unsigned>(num_tiles), kRadixBlockThreads, 0, s>>>(
        in, count, shift, digit_bits, num_tiles, c.tile_counts);
    PARITY_GPU_CHECK_LAUNCH(radix_histogram_kernel);
  }
  radix_digit_scan_kernel<<<1u << digit_bits, kRadixDigitScanThreads, 0, s>>>(c.tile_counts, num_tiles,
                                                                              c.digit_totals, c.next_counts);
  PARITY_GPU_CHECK_LAUNCH(radix_digit_scan_kernel);
  radix_scatter_kernel<kItemsPerThread><<<static_cast<unsigned>(num_tiles), kRadixBlockThreads, 0, s>>>(
      in, out, count, shift, digit_bits, num_tiles, c.tile_counts, c.digit_totals, c.next_counts, c.next_digit_bits);
  PARITY_GPU_CHECK_LAUNCH(radix_scatter_kernel);
  return Status::ok();
}

}  // namespace

Result<std::uint64_t*> radix_sort_keys(std::uint64_t* keys_a, std::uint64_t* keys_b, std::int64_t count,
                                       int begin_bit, int end_bit, void* scratch, void* stream, bool small_tiles,
                                       bool first_counts_given, bool counts_in_scatter) {
  PARITY_CHECK_ARG(count >= 0 && count < (std::int64_t{1} << 32), "radix_sort: count=", count,
                   "; expected [0, 2^32)");
  PARITY_CHECK_ARG(begin_bit >= 0 && begin_bit <= end_bit && end_bit <= 64, "radix_sort: bits [", begin_bit,
                   ", ", end_bit, ") are not a range inside [0, 64)");
  auto s = static_cast<gpuStream_t>(stream);
  // The same tile shape a caller counting the first pass's digits was given.
  const RadixFirstPass first = radix_sort_first_pass(count, begin_bit, end_bit, scratch, small_tiles);
  const int tile_keys = first.tile_keys;
  const std::int64_t num_tiles = first.num_tiles;
  // Scratch: counts, digit totals, second counts (radix_sort_scratch_bytes). Pass p counts into
  // buffer p % 2 (the first is where radix_sort_first_pass points a caller).
  const std::int64_t buffer_words = kRadixMaxDigits * (num_tiles > 0 ? num_tiles : 1);
  std::uint32_t* digit_totals = first.tile_counts + buffer_words;
  std::uint32_t* count_buffers[2] = {first.tile_counts, digit_totals + kRadixMaxDigits};
  std::uint64_t* in = keys_a;
  std::uint64_t* out = keys_b;
  if (count <= 1) return in;
  // Passes of near-equal width (the first ones one bit wider where the range does not split evenly).
  const int passes = radix_sort_passes(begin_bit, end_bit);
  int shift = begin_bit;
  for (int pass = 0; pass < passes; ++pass) {
    const int remaining = end_bit - shift;
    const int digit_bits = pass_digit_bits(remaining, passes, pass);
    // counts_in_scatter: passes after the first take their counts from the previous pass's
    // scatter, alternating the two buffers; otherwise every pass counts into the first.
    const bool counts_given = (counts_in_scatter && pass > 0) || (first_counts_given && pass == 0);
    const bool counts_next = counts_in_scatter && pass + 1 < passes;
    const PassCounts counts{count_buffers[counts_in_scatter ? pass % 2 : 0],
                            counts_next ? count_buffers[(pass + 1) % 2] : nullptr, digit_totals,
                            counts_next ? pass_digit_bits(remaining - digit_bits, passes, pass + 1) : 0};
    if (tile_keys == kRadixSmallTileItems) {
      PARITY_RETURN_IF_ERROR(launch_pass<kRadixSmallItemsPerThread>(in, out, count, shift, digit_bits, num_tiles,
                                                                    counts, counts_given, s));
    } else {
      PARITY_RETURN_IF_ERROR(launch_pass<kRadixItemsPerThread>(in, out, count, shift, digit_bits, num_tiles,
                                                               counts, counts_given, s));
    }
    std::uint64_t* t = in;
    in = out;
    out = t;
    shift += digit_bits;
  }
  return in;
}

}  // namespace parity::gpu_sort
