// Padded row strides on the GPU (TableSpec::row_stride, docs/embedding.md "Row stride"): every
// forward kernel that accepts a padded layout, forced, and the fused backward's kernels, against
// the fp64 reference on the same layout; the warp tiles' bag orders (ForwardOptions::tile_order). make_weights fills the padding with a sentinel (1024):
// a kernel addressing rows by dim instead of the stride reads it into an output or writes it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "backend/tbe_gpu_backward_test_util.hpp"
#include "backend/tbe_gpu_test_util.hpp"
#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "unit/tbe_test_util.hpp"

namespace parity {
namespace {

using embedding::OptimizerKind;
using embedding::PoolingMode;
using embedding::TableSpec;
using embedding::WeightDecayMode;
namespace egpu = embedding::gpu;

constexpr double kPaddingSentinel = 1024.0;

// Padded layouts of each weights dtype: 56- and 120-byte bf16 rows (64 and 128 after padding), a
// packed table in front that leaves a gap before the first padded one, fp32 rows of 112 and 48
// bytes, and a 312-byte fp16 row (320 padded).
std::vector<std::pair<DType, std::vector<TableSpec>>> padded_layouts() {
  std::vector<std::pair<DType, std::vector<TableSpec>>> layouts;
  const auto add = [&](DType dtype, std::vector<TableSpec> tables) {
    layouts.emplace_back(dtype, embedding::with_aligned_row_strides(std::move(tables), dtype));
  };
  add(DType::kBF16, {{300, 28}, {7, 60}});
  add(DType::kBF16, {{5, 4}, {300, 28}, {40, 44}});
  add(DType::kF32, {{300, 28}, {100, 12}});
  add(DType::kF16, {{300, 156}, {9, 28}});
  return layouts;
}

std::vector<egpu::ForwardKernel> every_forced_kernel() {
  std::vector<egpu::ForwardKernel> kernels;
  for (int k = 0; k <= static_cast<int>(egpu::ForwardKernel::kWarpTileOneHotEightPasses); ++k)
    kernels.push_back(static_cast<egpu::ForwardKernel>(k));
  return kernels;
}

TEST(GpuTbeRowStride, EveryForwardKernelOnPaddedRowsMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(621);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::set<int> kernels_run;
  int case_number = 0;
  for (const auto& [dtype, tables] : padded_layouts()) {
    ASSERT_FALSE(testing::make_problem(tables, 0, 0).layout.is_packed());
    for (egpu::ForwardKernel kernel : every_forced_kernel()) {
      for (int pooling_factor : {1, 3, 9, 40}) {
        ++case_number;
        // Whether the kernel takes this layout and bag length at all (refusals are the rules'
        // business, tested beside them).
        // The case's pooling and dtypes as expect_forward_case_matches rotates them (unweighted:
        // the probe's batch has no per-sample weights).
        const auto probe = testing::make_problem(
            tables, 61, 61 * pooling_factor, case_number % 5 < 2 ? DType::kI32 : DType::kI64, dtype,
            case_number % 2 == 0 ? DType::kBF16 : DType::kF32,
            case_number % 3 == 1 ? PoolingMode::kMean : PoolingMode::kSum);
        const Status fits = testing::forced_forward_status(probe, egpu::ForwardOptions{kernel});
        if (fits.code() == StatusCode::kUnsupported) continue;
        ASSERT_TRUE(fits.is_ok()) << fits.to_string();
        kernels_run.insert(static_cast<int>(kernel));
        testing::expect_forward_case_matches(tables, dtype, pooling_factor, case_number, seed,
                                             egpu::ForwardOptions{kernel},
                                             "kernel " + std::to_string(static_cast<int>(kernel)));
      }
    }
  }
  // The kernels of every row class ran on padded rows: the group per bag, the narrow rows, the
  // warp tiles (one-hot, wide one-hot, short bags), lane rows and split bags.
  for (egpu::ForwardKernel kernel :
       {egpu::ForwardKernel::kAuto, egpu::ForwardKernel::kGroupPerBag, egpu::ForwardKernel::kNarrowRows,
        egpu::ForwardKernel::kNarrowRowsDeep, egpu::ForwardKernel::kWarpTileOneHot,
        egpu::ForwardKernel::kWarpTileOneHotWideRows, egpu::ForwardKernel::kWarpTileShortBagsLight,
        egpu::ForwardKernel::kLaneRows, egpu::ForwardKernel::kNarrowRowsSplitBags}) {
    EXPECT_TRUE(kernels_run.count(static_cast<int>(kernel))) << "kernel " << static_cast<int>(kernel) << " never ran";
  }
}

// Every padding element of `got` is still the sentinel; the count is the layout's.
void expect_padding_untouched(const embedding::TbeProblem& problem, const std::vector<double>& weights0,
                              const std::vector<std::uint8_t>& got, const std::string& what) {
  int padding = 0, failures = 0;
  for (std::size_t i = 0; i < weights0.size() && failures < 5; ++i) {
    if (weights0[i] != kPaddingSentinel) continue;
    ++padding;
    const double g = embedding::load_as_double(got, problem.weight_dtype, static_cast<std::int64_t>(i));
    if (g != kPaddingSentinel) {
      ADD_FAILURE() << what << ": padding element " << i << " is " << g;
      ++failures;
    }
  }
  EXPECT_GT(padding, 0) << what;
}

// Two fused steps of every optimiser through the sorted kernels (kAuto, the narrow rows where
// rows allow, long chunks) against the reference, and SGD by atomic adds, on every padded layout.
TEST(GpuTbeRowStride, FusedBackwardOnPaddedRowsMatchesReferenceAndLeavesPadding) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(622);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (const auto& [dtype, tables] : padded_layouts()) {
    embedding::SyntheticBatchOptions batch_options;
    batch_options.batch_size = 97;
    batch_options.pooling_factor = 6;
    batch_options.vary_bag_sizes = true;
    batch_options.empty_bag_fraction = 0.1;
    batch_options.weighted = true;
    batch_options.seed = seed + static_cast<std::uint64_t>(++case_number);
    auto probe = testing::make_problem(tables, 0, 0);
    const auto batch = embedding::make_synthetic_batch(probe.layout, batch_options);
    const auto problem = testing::make_problem(tables, batch_options.batch_size,
                                               static_cast<std::int64_t>(batch.indices.size()), DType::kI64, dtype,
                                               DType::kF32, PoolingMode::kSum, true);
    std::vector<double> weights0;
    const auto weights = embedding::make_weights(problem.layout, dtype, batch_options.seed, &weights0);
    const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), batch_options.seed + 7);
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kRowwiseAdagrad, OptimizerKind::kAdagrad,
                               OptimizerKind::kAdam}) {
      const auto opt = testing::optimizer_for(kind, WeightDecayMode::kNone);
      egpu::BackwardOptions narrow;
      narrow.kernel = egpu::BackwardKernel::kNarrowRows;
      egpu::BackwardOptions long_chunks;
      long_chunks.short_chunks = false;
      for (const auto& [name, options] : {std::pair{"auto", egpu::BackwardOptions{}}, std::pair{"narrow", narrow},
                                          std::pair{"long_chunks", long_chunks}}) {
        if (options.kernel == egpu::BackwardKernel::kNarrowRows && !egpu::narrow_rows_backward_fits(problem).is_ok())
          continue;
        const std::string what = std::string(dtype_name(dtype)) + " D=" + std::to_string(tables.back().dim) + " " +
                                 embedding::optimizer_kind_name(kind) + " " + name;
        SCOPED_TRACE(what);
        const auto trained = testing::train_fused(problem, opt, batch, grad, weights, 2, options);
        testing::expect_trained_weights_match_reference(problem, opt, batch, grad, weights0, trained.weights, 2);
        expect_padding_untouched(problem, weights0, trained.weights, what);
      }
    }
    egpu::BackwardOptions atomic;
    atomic.kernel = egpu::BackwardKernel::kAtomicSgd;
    atomic.deterministic = false;
    const auto sgd = testing::optimizer_for(OptimizerKind::kSgd, WeightDecayMode::kNone);
    const auto trained = testing::train_fused(problem, sgd, batch, grad, weights, 1, atomic);
    expect_padding_untouched(problem, weights0, trained.weights, "atomic sgd " + std::string(dtype_name(dtype)));
  }
}

// Needs no device: kAuto takes sample-major tiles where every feature has one dim (a tile over
// mixed dims would size its group to the widest) and the output columns end inside sectors or
// the batch is one-hot.
TEST(GpuTbeTileOrder, RuleTakesSampleMajorOnOneDim) {
  const auto pays = [](std::vector<TableSpec> tables, std::vector<int> features, std::int64_t indices_per_bag) {
    auto layout = embedding::TbeLayout::create(std::move(tables), std::move(features));
    EXPECT_TRUE(layout.is_ok());
    embedding::TbeProblem problem{*layout};
    problem.batch_size = 8;
    problem.num_indices = indices_per_bag * problem.num_bags();
    problem.output_dtype = DType::kBF16;
    return egpu::sample_major_tiles_pay(problem);
  };
  EXPECT_TRUE(pays({{10, 28}, {20, 28}, {30, 28}}, {}, 4));  // 56-byte output columns: off sectors
  EXPECT_TRUE(pays({{10, 32}}, {0, 0}, 1));                   // whole sectors, one-hot; a shared table
  EXPECT_FALSE(pays({{10, 32}}, {0, 0}, 4));                  // whole sectors, short bags
  EXPECT_FALSE(pays({{10, 28}}, {}, 1));                      // one feature: its samples are adjacent
  EXPECT_FALSE(pays({{10, 16}, {10, 32}}, {}, 1));            // mixed dims
}

// Both tile orders, forced, on features that end inside a sector and on whole sectors, with a
// batch of 61 (tiles across samples and features, a partial last tile): the same outputs against
// the reference (the padded D=28 rows also take the 16-byte pieces).
TEST(GpuTbeTileOrder, FeatureAndSampleMajorTilesMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(623);
  SCOPED_TRACE(testing::seed_trace(seed));
  int case_number = 0;
  for (const auto& tables : {embedding::with_aligned_row_strides({{300, 28}, {200, 28}, {50, 12}}, DType::kBF16),
                             std::vector<TableSpec>{{300, 32}, {200, 64}}}) {
    for (egpu::TileOrder order : {egpu::TileOrder::kFeatureMajor, egpu::TileOrder::kSampleMajor}) {
      for (egpu::ForwardKernel kernel : {egpu::ForwardKernel::kAuto, egpu::ForwardKernel::kWarpTileOneHot,
                                         egpu::ForwardKernel::kWarpTileShortBagsLight,
                                         egpu::ForwardKernel::kWarpTileOneHotWideRows}) {
        for (int pooling_factor : {1, 3}) {
          testing::expect_forward_case_matches(tables, DType::kBF16, pooling_factor, ++case_number, seed,
                                               egpu::ForwardOptions{kernel, order},
                                               "order " + std::to_string(static_cast<int>(order)) + " kernel " +
                                                   std::to_string(static_cast<int>(kernel)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace parity
