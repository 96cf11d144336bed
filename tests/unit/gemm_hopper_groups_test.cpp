// The Hopper model's grouped pruned search (HopperModel::index_groups, predict_top_tiles_us with
// groups): what the selector reads of it is exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "common/test_support.hpp"
#include "gemm/model_hopper.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/model.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

DeviceParams h200() {
  auto spec = hw::find_hardware("h200");
  return *device_params_from_spec(*spec);
}

// Each group's members share a macro tile and split, and together they are the whole list.
TEST(HopperGroups, GroupsPartitionTheListByTileAndSplit) {
  const GemmModel model(h200(), default_scalars(h200()));
  std::vector<PreparedCandidate> prepared;
  for (const Candidate& c : hopper_modelled_space(ProblemClass{})) {
    prepared.push_back(model.prepare(ProblemClass{}, c));
  }
  const HopperGroupIndex groups = HopperModel::index_groups(prepared.data(), prepared.size());
  ASSERT_EQ(groups.floor_terms.size(), 64u);  // 16 tiles x 4 splits, 4 cluster shapes each
  std::vector<int> seen(prepared.size(), 0);
  for (std::size_t g = 0; g + 1 < groups.member_begin.size(); ++g) {
    for (std::uint32_t m = groups.member_begin[g]; m < groups.member_begin[g + 1]; ++m) {
      const PreparedCandidate& c = prepared[groups.members[m]];
      ++seen[groups.members[m]];
      EXPECT_EQ(macro_tile_key(c), macro_tile_key(groups.floor_terms[g]));
      EXPECT_EQ(c.split_k, groups.floor_terms[g].split_k);
      EXPECT_LE(groups.floor_terms[g].hopper.compute_us_per_iter, c.hopper.compute_us_per_iter);
    }
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

// With groups, the listed candidates hold their exact predictions and include every candidate
// the selector's lists can take: per configuration everything at or below the cutoff; per tile
// each tile's best at or below the cutoff and the near-tie group. The cutoff is the exhaustive
// one.
TEST(HopperGroups, GroupedSearchListsEveryCandidateTheSelectionNeeds) {
  ModelScalars s = default_scalars(h200());
  s.tail_boost = 0.3;
  s.single_cta_efficiency = 0.9;
  s.cluster4_efficiency = 0.85;
  const GemmModel model(h200(), s);
  const auto& hopper = dynamic_cast<const HopperModel&>(model.impl());
  std::vector<PreparedCandidate> prepared;
  std::vector<std::uint32_t> tile_of;
  std::map<std::uint64_t, std::uint32_t> tile_ids;
  for (const Candidate& c : hopper_modelled_space(ProblemClass{})) {
    prepared.push_back(model.prepare(ProblemClass{}, c));
    const auto [at, is_new] = tile_ids.try_emplace(macro_tile_key(prepared.back()),
                                                   static_cast<std::uint32_t>(tile_ids.size()));
    tile_of.push_back(at->second);
  }
  const HopperGroupIndex groups = HopperModel::index_groups(prepared.data(), prepared.size());
  const std::uint64_t seed = testing::test_seed(29);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  std::vector<double> exact(prepared.size()), pruned(prepared.size());
  std::vector<std::uint32_t> listed;
  constexpr std::size_t kKeep = 5;
  for (int trial = 0; trial < 600; ++trial) {
    GemmProblem p;
    p.m = static_cast<std::int64_t>(std::exp(log_size(rng))) / 8 * 8 + 8;
    p.n = static_cast<std::int64_t>(std::exp(log_size(rng)));
    p.k = static_cast<std::int64_t>(std::exp(log_size(rng))) / 8 * 8 + 8;
    model.predict_all_us(p, prepared.data(), prepared.size(), exact.data());
    for (const bool per_tile : {false, true}) {
      double cutoff = 0.0;
      hopper.predict_top_tiles_us(p, prepared.data(), per_tile ? tile_of.data() : nullptr,
                                  prepared.size(), kKeep, 0.01, pruned.data(), &cutoff, &listed,
                                  &groups);
      std::vector<double> tile_best(tile_ids.size(), INFINITY);
      for (std::size_t i = 0; i < exact.size(); ++i) {
        tile_best[tile_of[i]] = std::min(tile_best[tile_of[i]], exact[i]);
      }
      std::vector<double> sorted = per_tile ? tile_best : exact;
      std::sort(sorted.begin(), sorted.end());
      const double tied = sorted[0] * 1.01;
      ASSERT_EQ(cutoff, std::max(sorted[kKeep - 1], tied)) << p.describe();
      std::vector<bool> is_listed(prepared.size(), false);
      for (const std::uint32_t i : listed) {
        ASSERT_EQ(pruned[i], exact[i]) << p.describe() << " candidate " << i;
        is_listed[i] = true;
      }
      for (std::size_t i = 0; i < exact.size(); ++i) {
        const bool needed = exact[i] <= cutoff &&
                            (!per_tile || exact[i] == tile_best[tile_of[i]] || exact[i] <= tied);
        EXPECT_TRUE(!needed || is_listed[i]) << p.describe() << " candidate " << i;
      }
    }
  }
}

}  // namespace
}  // namespace parity::gemm
