// The sorted backward with the keys written by sort tile and the sort's first digit counted on the
// way (BackwardOptions::sort_histogram_in_linearize, the default) against the keys written by bag
// with the sort's own first histogram: the same weights and optimiser state bit for bit, and both
// against the fp64 reference. Cases: both sort tiles (1024 and 4096 keys), bag and position keys
// (per-sample weights), one-hot, long bags, and tiles reached by far more bags than the shared
// marking takes (mostly empty bags: each position's bag is then searched in the offsets).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/tbe_gpu_backward_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::OptimizerKind;
namespace egpu = embedding::gpu;

struct Case {
  testing::SortedBackwardCase batch;
  bool small_sort_tiles;
};

TEST(GpuTbeBackwardLinearizeTiles, SameStepsAsKeysByBagAndTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(733);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<Case> cases = {
      {{"L=4 varied, 1024-key tiles", {{5000, 32}, {3000, 64}}, 3000, 4, true, 0.0, false}, true},
      {{"L=4 varied, 4096-key tiles", {{5000, 32}, {3000, 64}}, 3000, 4, true, 0.0, false}, false},
      {{"weighted (position keys)", {{4000, 16}, {700, 128}}, 2500, 3, true, 0.1, true}, true},
      {{"one-hot", {{9000, 8}, {800, 48}, {60, 16}}, 5000, 1, false, 0.0, false}, true},
      {{"long bags", {{20000, 16}}, 64, 300, true, 0.0, false}, false},
      {{"mostly empty bags (searched)", {{3000, 16}, {2000, 32}}, 200000, 20, true, 0.999, false}, true},
      {{"mostly empty bags, 4096-key tiles", {{3000, 16}}, 300000, 10, false, 0.995, true}, false}};
  int case_number = 0;
  for (const auto& c : cases) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kRowwiseAdagrad}) {
      ++case_number;
      SCOPED_TRACE(c.batch.name + " " + embedding::optimizer_kind_name(kind));
      egpu::BackwardOptions by_tile;
      by_tile.small_sort_tiles = c.small_sort_tiles;
      egpu::BackwardOptions by_bag = by_tile;
      by_bag.sort_histogram_in_linearize = false;
      testing::expect_same_steps_as(c.batch, kind, case_number % 2 == 0 ? DType::kI32 : DType::kI64,
                                    seed + static_cast<std::uint64_t>(case_number), by_tile, by_bag,
                                    "the keys written by bag");
    }
  }
}

TEST(GpuTbeBackwardLinearizeTiles, OnByDefault) { EXPECT_TRUE(egpu::BackwardOptions{}.sort_histogram_in_linearize); }

}  // namespace
}  // namespace parity
