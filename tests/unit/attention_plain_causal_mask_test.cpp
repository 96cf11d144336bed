// The closed forms of the plain causal mask (src/backends/gpu/attention/plain_causal_mask.hpp,
// the functions the attention kernels' partial tiles call) against the mask's definition with
// position ids (mask.cuh, docs/attention.md "Masks"), for every (i, j) of every small case:
// lengths 0 to 40 (q and kv equal and not), num_targets 0 to past the length, and rows and
// columns past the lengths.
#include <gtest/gtest.h>

#include <algorithm>

#include "backends/gpu/attention/plain_causal_mask.hpp"

namespace parity::gpu_device::attention {
namespace {

// The definition for a causal self-attention mask without window or contextual prefix.
bool valid_by_ids(const PlainCausalLengths& m, int i, int j) {
  if (i < 0 || j < 0 || i >= m.len_q || j >= m.len_kv) return false;
  const auto id = [&](int position) { return m.has_targets ? std::min(position, m.max_ids) : position; };
  return i == j || id(i) - id(j) > 0;
}

PlainCausalLengths lengths_of(int len_q, int len_kv, bool has_targets, int num_targets) {
  return PlainCausalLengths{len_q, len_kv, has_targets, len_q - num_targets};
}

TEST(AttentionPlainCausalMask, RowFormMatchesTheIdRule) {
  int cases = 0;
  for (int len_q = 0; len_q <= 40; ++len_q)
    for (int len_kv : {len_q, std::max(0, len_q - 3), len_q + 5})
      for (int targets = -1; targets <= len_q + 2; ++targets) {
        const bool has_targets = targets >= 0;
        const PlainCausalLengths m = lengths_of(len_q, len_kv, has_targets, std::max(targets, 0));
        for (int i = -1; i < len_q + 4; ++i) {
          const CausalRowColumns r = causal_row_columns(m, i);
          for (int j = -2; j < len_kv + 4; ++j) {
            const bool closed = (j >= 0 && j < r.below) || (r.self >= 0 && j == r.self);
            ASSERT_EQ(closed, valid_by_ids(m, i, j))
                << "len_q " << len_q << " len_kv " << len_kv << " targets " << targets << " i " << i
                << " j " << j << " below " << r.below << " self " << r.self;
            ++cases;
          }
        }
      }
  EXPECT_GT(cases, 100000);
}

TEST(AttentionPlainCausalMask, ColumnFormMatchesTheIdRule) {
  for (int len_q = 0; len_q <= 40; ++len_q)
    for (int len_kv : {len_q, std::max(0, len_q - 3), len_q + 5})
      for (int targets = -1; targets <= len_q + 2; ++targets) {
        const bool has_targets = targets >= 0;
        const PlainCausalLengths m = lengths_of(len_q, len_kv, has_targets, std::max(targets, 0));
        for (int j = -1; j < len_kv + 4; ++j) {
          const int end = causal_column_seen_end(m, j);
          for (int i = -2; i < len_q + 4; ++i) {
            const bool closed = i >= j && i < end;
            ASSERT_EQ(closed, valid_by_ids(m, i, j))
                << "len_q " << len_q << " len_kv " << len_kv << " targets " << targets << " i " << i
                << " j " << j << " seen by [" << j << ", " << end << ")";
          }
        }
      }
}

// Targets see the history and themselves, not each other; without targets the rule is j <= i.
TEST(AttentionPlainCausalMask, KnownRows) {
  const PlainCausalLengths no_targets = lengths_of(10, 10, false, 0);
  EXPECT_EQ(causal_row_columns(no_targets, 4).below, 4);
  EXPECT_EQ(causal_row_columns(no_targets, 4).self, 4);
  EXPECT_EQ(causal_row_columns(no_targets, 10).below, 0);  // past the rows: nothing
  EXPECT_EQ(causal_row_columns(no_targets, 10).self, -1);
  const PlainCausalLengths three_targets = lengths_of(10, 10, true, 3);  // targets at 7, 8, 9
  EXPECT_EQ(causal_row_columns(three_targets, 9).below, 7);
  EXPECT_EQ(causal_row_columns(three_targets, 9).self, 9);
  EXPECT_EQ(causal_column_seen_end(three_targets, 8), 9);   // a target: only itself
  EXPECT_EQ(causal_column_seen_end(three_targets, 6), 10);  // history: every later row
}

}  // namespace
}  // namespace parity::gpu_device::attention
