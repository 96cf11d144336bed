// The sorted backward with the portable sort's next-pass digits counted in each scatter
// (BackwardOptions::sort_counts_in_scatter) against the default (a histogram launch per pass): the
// same counts, so the same sorted keys, weights and optimiser state bit for bit, and both against
// the fp64 reference (the cases of expect_same_steps_as_default_sort; its many-rows case makes
// three digit passes, two of them counted by a scatter).
#include <gtest/gtest.h>

#include "backend/tbe_gpu_backward_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"

namespace parity {
namespace {

namespace egpu = embedding::gpu;

TEST(GpuTbeBackwardSortCounts, SameStepsAsAHistogramPerPassAndTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(953);
  SCOPED_TRACE(testing::seed_trace(seed));
  egpu::BackwardOptions counts_in_scatter;
  counts_in_scatter.sort_counts_in_scatter = true;
  testing::expect_same_steps_as_default_sort(seed, counts_in_scatter, "a histogram per pass's");
}

TEST(GpuTbeBackwardSortCounts, OffByDefault) { EXPECT_FALSE(egpu::BackwardOptions{}.sort_counts_in_scatter); }

}  // namespace
}  // namespace parity
