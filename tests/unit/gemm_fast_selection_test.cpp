// The fast selection path (per-class prepared candidates, bounds, pruning) is an optimisation
// only: on every device model it returns the exhaustive ranking's top-1 and top-5 lists (the best
// configuration of each of the 5 best macro tiles, and the 5 best configurations), the same
// candidates in the same order with bit-identical predictions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "common/gemm_top_k.hpp"
#include "common/test_support.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/gemm/workflow.hpp"

namespace parity::gemm {
namespace {

// Log-uniform sizes in [1, 32768] as the latency report draws them; `aligned` rounds M and K up
// to 16-byte rows of the 2-byte inputs (the TMA class on Hopper).
std::vector<GemmProblem> random_shapes(std::uint64_t seed, int count, bool aligned) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  std::vector<GemmProblem> shapes;
  for (int i = 0; i < count; ++i) {
    GemmProblem p;
    p.m = static_cast<std::int64_t>(std::exp(log_size(rng)));
    p.n = static_cast<std::int64_t>(std::exp(log_size(rng)));
    p.k = static_cast<std::int64_t>(std::exp(log_size(rng)));
    if (aligned) {
      p.m = (p.m + 7) / 8 * 8;
      p.k = (p.k + 7) / 8 * 8;
    }
    shapes.push_back(p);
  }
  return shapes;
}

// The model at the shipped calibration for a catalogue device.
Result<LoadedModel> shipped_model(const char* hw) {
  ModelSource source;
  source.hw = hw;
  source.data_dir = std::string(PARITY_SOURCE_DIR) + "/data";
  return load_model(source);
}

}  // namespace

// For h200 (Hopper model: TMA and non-TMA classes) and mi300x / mi350x (Origami-class model, its
// hierarchical run pruning), at the shipped calibration: seeded random shapes, aligned and
// misaligned, plus every development-suite shape.
TEST(GemmFastSelection, EqualsTheExhaustiveRankingOnEveryDevice) {
  const std::uint64_t seed = testing::test_seed(20261202);
  SCOPED_TRACE(testing::seed_trace(seed));
  const auto dev = read_shape_suite(default_shape_suite_path());
  ASSERT_TRUE(dev.is_ok()) << dev.status().to_string();
  for (const char* hw : {"h200", "mi300x", "mi350x"}) {
    const auto model = shipped_model(hw);
    ASSERT_TRUE(model.is_ok()) << hw << ": " << model.status().to_string();
    const auto space = modelled_space(ProblemClass{}, model->device);
    Selector fast = make_selector(*model);
    fast.set_candidates(space);
    Selector fast_configs = make_selector(*model, SelectorOptions{.top_k_list = TopKList::kConfigs});
    fast_configs.set_candidates(space);
    Selector exhaustive = make_selector(*model);
    std::vector<GemmProblem> shapes = dev->problems;
    for (const bool aligned : {false, true}) {
      const auto drawn = random_shapes(seed + (aligned ? 1 : 0), 40, aligned);
      shapes.insert(shapes.end(), drawn.begin(), drawn.end());
    }
    int misaligned = 0;
    for (const GemmProblem& p : shapes) {
      const auto ranking = exhaustive.rank(p, space);
      ASSERT_TRUE(ranking.is_ok()) << hw << " " << p.describe();
      for (const std::size_t top_k : {std::size_t{1}, std::size_t{5}}) {
        for (const TopKList list : {TopKList::kDistinctTiles, TopKList::kConfigs}) {
          const auto selection = (list == TopKList::kConfigs ? fast_configs : fast).select(p, top_k);
          ASSERT_TRUE(selection.is_ok()) << hw << " " << p.describe();
          const auto expected = testing::expected_top_k(*ranking, space, top_k, list);
          ASSERT_EQ(selection->top.size(), expected.size()) << hw << " " << p.describe();
          for (std::size_t i = 0; i < expected.size(); ++i) {
            EXPECT_EQ(selection->top[i].index, expected[i].index)
                << hw << " " << p.describe() << " place " << i;
            EXPECT_EQ(selection->top[i].predicted_us, expected[i].predicted_us)
                << hw << " " << p.describe() << " place " << i;
          }
        }
      }
      if (p.alignment_class_bytes() < 16) ++misaligned;
    }
    // Both alignment classes are exercised (random sizes are mostly misaligned).
    EXPECT_GT(misaligned, 30) << hw;
    EXPECT_GT(static_cast<int>(shapes.size()) - misaligned, 100) << hw;
  }
}

// The default top-k list holds the best configuration of each of the k best macro tiles: distinct
// tiles, the near-tie group first and then ascending predictions, each entry its tile's best
// (outside the near-tie group no candidate of its tile predicts lower), and the same top-1 as the
// list of the k best configurations.
TEST(GemmFastSelection, TopKListHoldsTheBestConfigurationOfEachMacroTile) {
  const std::uint64_t seed = testing::test_seed(20261203);
  SCOPED_TRACE(testing::seed_trace(seed));
  for (const char* hw : {"h200", "mi300x"}) {
    const auto model = shipped_model(hw);
    ASSERT_TRUE(model.is_ok()) << hw << ": " << model.status().to_string();
    const auto space = modelled_space(ProblemClass{}, model->device);
    Selector tiles = make_selector(*model);
    tiles.set_candidates(space);
    Selector configs = make_selector(*model, SelectorOptions{.top_k_list = TopKList::kConfigs});
    configs.set_candidates(space);
    Selector exhaustive = make_selector(*model);
    for (const GemmProblem& p : random_shapes(seed, 30, true)) {
      const auto listed = tiles.select(p, 8);
      const auto first = configs.select(p, 8);
      const auto ranking = exhaustive.rank(p, space);
      ASSERT_TRUE(listed.is_ok() && first.is_ok() && ranking.is_ok()) << hw << " " << p.describe();
      ASSERT_EQ(listed->top.size(), 8u) << hw << " " << p.describe();
      EXPECT_EQ(listed->top.front().index, first->top.front().index) << hw << " " << p.describe();
      EXPECT_EQ(listed->predicted_us, first->predicted_us) << hw << " " << p.describe();
      const double tie_limit = listed->top.front().predicted_us * (1.0 + kTieEpsilon);
      for (std::size_t i = 0; i < listed->top.size(); ++i) {
        const Candidate& c = space[listed->top[i].index];
        const double us = listed->top[i].predicted_us;
        for (std::size_t j = 0; j < i; ++j) {
          const Candidate& d = space[listed->top[j].index];
          EXPECT_FALSE(c.tile_m == d.tile_m && c.tile_n == d.tile_n && c.tile_k == d.tile_k)
              << hw << " " << p.describe() << " places " << j << ", " << i;
        }
        if (i > 0 && us > tie_limit) {
          EXPECT_GE(us, listed->top[i - 1].predicted_us) << hw << " " << i;
        }
        for (const RankedCandidate& r : *ranking) {
          const Candidate& d = space[r.index];
          // Within the near-tie group the tie-break chain, not the prediction, picks the tile's entry.
          if (d.tile_m == c.tile_m && d.tile_n == c.tile_n && d.tile_k == c.tile_k && us > tie_limit) {
            EXPECT_GE(r.predicted_us, us) << hw << " " << p.describe() << " place " << i;
          }
        }
      }
    }
  }
}

// Fewer macro tiles than k: the list holds one entry per tile; the configuration list all.
TEST(GemmFastSelection, TopKListIsShortWhenFewerTilesThanK) {
  const auto model = shipped_model("h200");
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  std::vector<Candidate> candidates;
  for (const int tile_n : {64, 128, 256}) {
    for (const int split : {1, 2}) {
      Candidate c;
      c.tile_m = 128;
      c.tile_n = tile_n;
      c.tile_k = 64;
      c.split_k = split;
      candidates.push_back(c);
    }
  }
  GemmProblem p;
  p.m = p.n = p.k = 4096;
  Selector tiles = make_selector(*model);
  Selector configs = make_selector(*model, SelectorOptions{.top_k_list = TopKList::kConfigs});
  const auto listed = tiles.select(p, candidates, 10);
  const auto all = configs.select(p, candidates, 10);
  ASSERT_TRUE(listed.is_ok() && all.is_ok());
  EXPECT_EQ(listed->top.size(), 3u);
  EXPECT_EQ(all->top.size(), 6u);
  EXPECT_EQ(listed->top.front().index, all->top.front().index);
  tiles.set_candidates(candidates);
  const auto cached = tiles.select(p, 10);
  ASSERT_TRUE(cached.is_ok());
  ASSERT_EQ(cached->top.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(cached->top[i].index, listed->top[i].index);
  EXPECT_EQ(SelectorOptions{}.top_k_list, TopKList::kDistinctTiles);
}

}  // namespace parity::gemm
