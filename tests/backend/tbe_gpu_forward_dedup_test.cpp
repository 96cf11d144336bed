// The deduplicating group-per-bag forward (tbe_gpu.hpp ForwardKernel::kGroupPerBagDedup: each
// distinct row of a chunk of kWarpSize positions read once, scaled by its repeats' summed weight)
// against the fp64 reference: rows of 1 to 128 vecs in every weight dtype, bags shorter and longer
// than a chunk, heavy repeats (a few hot rows, Zipf 1.3), sum / mean / weighted, both index types,
// two output dtypes; the refusal of pooling none.
//
// Tolerance: the shared forward bound (L + 3) u32 sum|terms| still holds. A row repeated k times
// is added once as fl(w1 + ... + wk) * r: relative error <= k u32 on that term (k - 1 additions and
// the product); the m distinct terms are then summed with error <= (m - 1) u32 sum|terms|; and
// k + m - 1 <= L for every row of the bag (its k positions plus one per other distinct row).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "backend/tbe_gpu_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::PoolingMode;
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
using testing::expect_forward_matches;
namespace egpu = embedding::gpu;

const egpu::ForwardOptions kDedup{egpu::ForwardKernel::kGroupPerBagDedup};

// Every row width class of the dispatch (1, 2, 4, 8, 16 vecs or 16-byte pairs per lane), bag
// lengths 0, 1, 7, 32 (one full chunk) and 45 (a second, partial chunk) with empty bags among them,
// rows drawn from 3 hot rows per table (most positions repeat) or Zipf 1.3 over 500 rows.
TEST(GpuTbeForwardDedup, EveryWidthLengthPoolingAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(451);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
    const std::vector<int> dims = weight_dtype == DType::kF32 ? std::vector<int>{4, 12, 132, 256, 508, 1024, 2048}
                                                              : std::vector<int>{8, 64, 264, 512, 1024};
    for (int dim : dims) {
      for (int pooling_factor : {0, 1, 7, 32, 45}) {
        ++case_number;
        const int mode = case_number % 3;  // sum, mean, weighted sum
        const PoolingMode pooling = mode == 1 ? PoolingMode::kMean : PoolingMode::kSum;
        const std::vector<TableSpec> tables = {{500, dim}, {7, dim}};
        SyntheticBatchOptions options;
        options.batch_size = 37;
        options.pooling_factor = pooling_factor;
        options.empty_bag_fraction = pooling_factor > 0 ? 0.1 : 0.0;
        options.weighted = mode == 2;
        if (case_number % 2 == 0) {
          options.hot_rows = 3;
        } else {
          options.zipf_alpha = 1.3;
        }
        options.seed = seed + static_cast<std::uint64_t>(case_number);
        auto probe = testing::make_problem(tables, 0, 0);
        const auto batch = embedding::make_synthetic_batch(probe.layout, options);
        const DType out_dtype = case_number % 4 == 0 ? DType::kBF16 : DType::kF32;
        const DType index_dtype = case_number % 5 < 2 ? DType::kI32 : DType::kI64;
        auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                             index_dtype, weight_dtype, out_dtype, pooling, options.weighted);
        SCOPED_TRACE("D=" + std::to_string(dim) + " " + std::string(dtype_name(weight_dtype)) + " L=" +
                     std::to_string(pooling_factor) + " " + embedding::pooling_mode_name(pooling) +
                     (options.weighted ? " weighted" : "") + (options.hot_rows > 0 ? " hot rows" : " zipf") +
                     " out " + std::string(dtype_name(out_dtype)) + " " + std::string(dtype_name(index_dtype)));
        expect_forward_matches(problem, batch, options.seed, kDedup);
      }
    }
  }
}

// Mixed dims in one launch, bag sizes varied in [0, 2L] (tiles of short and long bags), a batch of
// several grid strides' worth of warps, a single-row table (every position of a bag repeats).
TEST(GpuTbeForwardDedup, MixedDimsVariedBagsAndSingleRowTableMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(452);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{2000, 256}, {1, 64}, {300, 100}, {50, 4}};
  for (int pooling_factor : {3, 30}) {
    SyntheticBatchOptions options;
    options.batch_size = 3000;
    options.pooling_factor = pooling_factor;
    options.vary_bag_sizes = true;
    options.zipf_alpha = 1.15;
    options.weighted = pooling_factor == 30;
    options.seed = seed + static_cast<std::uint64_t>(pooling_factor);
    auto probe = testing::make_problem(tables, 0, 0);
    const auto batch = embedding::make_synthetic_batch(probe.layout, options);
    auto problem = testing::make_problem(tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                         DType::kI32, DType::kF32, DType::kF32,
                                         pooling_factor == 3 ? PoolingMode::kMean : PoolingMode::kSum,
                                         options.weighted);
    SCOPED_TRACE("L~U[0," + std::to_string(2 * pooling_factor) + "]");
    expect_forward_matches(problem, batch, options.seed, kDedup);
  }
}

TEST(GpuTbeForwardDedup, PoolingNoneIsRefusedWithTheReason) {
  PARITY_REQUIRE_GPU();
  const auto problem = testing::make_problem({{10, 64}}, 2, 4, DType::kI64, DType::kF32, DType::kF32,
                                             PoolingMode::kNone);
  const Status status = testing::forced_forward_status(problem, kDedup);
  EXPECT_EQ(status.code(), StatusCode::kUnsupported);
  EXPECT_NE(status.message().find("pooling=none"), std::string::npos) << status.message();
}

}  // namespace
}  // namespace parity
