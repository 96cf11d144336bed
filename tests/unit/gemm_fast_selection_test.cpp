// The fast selection path (per-class prepared candidates, bounds, pruning) is an optimisation
// only: on every device model it returns the exhaustive ranking's top-1 and top-5, the same
// candidates in the same order with bit-identical predictions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

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
    ModelSource source;
    source.hw = hw;
    source.data_dir = std::string(PARITY_SOURCE_DIR) + "/data";
    const auto model = load_model(source);
    ASSERT_TRUE(model.is_ok()) << hw << ": " << model.status().to_string();
    const auto space = modelled_space(ProblemClass{}, model->device);
    Selector fast = make_selector(*model);
    fast.set_candidates(space);
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
        const auto selection = fast.select(p, top_k);
        ASSERT_TRUE(selection.is_ok()) << hw << " " << p.describe();
        ASSERT_EQ(selection->top.size(), top_k);
        for (std::size_t i = 0; i < top_k; ++i) {
          EXPECT_EQ(selection->top[i].index, (*ranking)[i].index) << hw << " " << p.describe() << " place " << i;
          EXPECT_EQ(selection->top[i].predicted_us, (*ranking)[i].predicted_us)
              << hw << " " << p.describe() << " place " << i;
        }
      }
      if (p.alignment_class_bytes() < 16) ++misaligned;
    }
    // Both alignment classes are exercised (random sizes are mostly misaligned).
    EXPECT_GT(misaligned, 30) << hw;
    EXPECT_GT(static_cast<int>(shapes.size()) - misaligned, 100) << hw;
  }
}

}  // namespace parity::gemm
