// The sorted backward with the keys sorted by the vendor's radix sort (BackwardOptions::vendor_sort,
// CUB on NVIDIA) against the portable sort: both sort stably by the same bits, so the same weights
// and optimiser state bit for bit, and both against the fp64 reference. Cases: bag and position
// keys (per-sample weights), one-hot, long bags, many rows (more digit passes), a single index,
// with every optimiser that reads the sorted runs.
#include <gtest/gtest.h>

#include <vector>

#include "backend/tbe_gpu_backward_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::OptimizerKind;
namespace egpu = embedding::gpu;

TEST(GpuTbeBackwardVendorSort, SameStepsAsThePortableSortAndTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(947);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<testing::SortedBackwardCase> cases = {
      {"L=4 varied", {{5000, 32}, {3000, 64}}, 3000, 4, true, 0.0, false},
      {"weighted (position keys)", {{4000, 16}, {700, 128}}, 2500, 3, true, 0.1, true},
      {"one-hot", {{9000, 8}, {800, 48}, {60, 16}}, 5000, 1, false, 0.0, false},
      {"long bags", {{20000, 16}}, 64, 300, true, 0.0, false},
      {"many rows (21 row bits: three digit passes)", {{1500000, 4}, {3000, 8}}, 4000, 2, true, 0.0, false},
      {"one index", {{100, 16}}, 1, 1, false, 0.0, false}};
  egpu::BackwardOptions vendor;
  vendor.vendor_sort = true;
  int case_number = 0;
  for (const auto& c : cases) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kRowwiseAdagrad, OptimizerKind::kAdam}) {
      ++case_number;
      SCOPED_TRACE(c.name + " " + embedding::optimizer_kind_name(kind));
      testing::expect_same_steps_as(c, kind, case_number % 2 == 0 ? DType::kI32 : DType::kI64,
                                    seed + static_cast<std::uint64_t>(case_number), vendor, egpu::BackwardOptions{},
                                    "the portable sort's");
    }
  }
}

TEST(GpuTbeBackwardVendorSort, OffByDefault) { EXPECT_FALSE(egpu::BackwardOptions{}.vendor_sort); }

}  // namespace
}  // namespace parity
