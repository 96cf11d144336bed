// The sorted backward with the keys sorted by the vendor's radix sort (BackwardOptions::vendor_sort,
// CUB on NVIDIA) against the portable sort: both sort stably by the same bits, so the same weights
// and optimiser state bit for bit, and both against the fp64 reference (the cases of
// expect_same_steps_as_default_sort).
#include <gtest/gtest.h>

#include "backend/tbe_gpu_backward_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"

namespace parity {
namespace {

namespace egpu = embedding::gpu;

TEST(GpuTbeBackwardVendorSort, SameStepsAsThePortableSortAndTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(947);
  SCOPED_TRACE(testing::seed_trace(seed));
  egpu::BackwardOptions vendor;
  vendor.vendor_sort = true;
  testing::expect_same_steps_as_default_sort(seed, vendor, "the portable sort's");
}

TEST(GpuTbeBackwardVendorSort, OffByDefault) { EXPECT_FALSE(egpu::BackwardOptions{}.vendor_sort); }

}  // namespace
}  // namespace parity
