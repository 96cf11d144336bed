// GPU TBE kernels against the fp64 reference (the forward is in tbe_gpu_forward_test.cpp): fused
// backward (every optimiser, 1 and several steps), plain backward, hot rows through the
// multi-chunk path, determinism, guard bands and a > 2^31-element table (the bounds check: tbe_bounds_gpu_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <vector>

#include "common/test_support.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "unit/tbe_test_util.hpp"
#include "backend/tbe_gpu_backward_test_util.hpp"
#include "backend/tbe_gpu_test_util.hpp"

namespace parity {
namespace {

using embedding::OptimizerKind;
using embedding::PoolingMode;
using embedding::SyntheticBatch;
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
using embedding::TbeProblem;
using embedding::WeightDecayMode;
namespace egpu = embedding::gpu;
using testing::upload_batch;

struct GpuTraining {
  std::vector<double> weights0;
  std::vector<std::uint8_t> weights;
  std::vector<float> state1, state2;
};

// Runs `steps` fused steps on the GPU; returns weights and state downloaded.
GpuTraining gpu_train(const TbeProblem& problem, const embedding::OptimizerParams& opt, const SyntheticBatch& batch,
                      const std::vector<float>& grad, int steps, std::uint64_t seed, int max_grid_blocks = 0,
                      bool batch_row_updates = true, egpu::BackwardKernel kernel = egpu::BackwardKernel::kAuto) {
  GpuTraining result;
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed, &result.weights0);
  egpu::BackwardOptions options;
  options.max_grid_blocks = max_grid_blocks;
  options.kernel = kernel;
  options.batch_row_updates = batch_row_updates;
  auto trained = testing::train_fused(problem, opt, batch, grad, weights, steps, options);
  result.weights = std::move(trained.weights);
  result.state1 = std::move(trained.state1);
  result.state2 = std::move(trained.state2);
  return result;
}

void expect_training_matches(const TbeProblem& problem, const embedding::OptimizerParams& opt,
                             const SyntheticBatch& batch, int steps, std::uint64_t seed,
                             egpu::BackwardKernel kernel = egpu::BackwardKernel::kAuto) {
  const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed + 7);
  const auto got = gpu_train(problem, opt, batch, grad, steps, seed, 0, true, kernel);
  ref::TbeRefTrainingState state{got.weights0, {}, {}};
  state.state1.assign(static_cast<std::size_t>(embedding::optimizer_state1_elements(problem.layout, opt.kind)), 0.0);
  state.state2.assign(static_cast<std::size_t>(embedding::optimizer_state2_elements(problem.layout, opt.kind)), 0.0);
  const std::vector<double> grad_ref(grad.begin(), grad.end());
  for (int step = 1; step <= steps; ++step) {
    auto o = opt;
    o.step = step;
    ref::tbe_backward_fused(problem, o, state, testing::to_ref_batch(batch), grad_ref);
  }
  const double gradient_error = testing::gradient_error_bound(problem, opt, testing::to_ref_batch(batch), grad);
  int failures = 0;
  for (std::size_t i = 0; i < state.weights.size() && failures < 5; ++i) {
    const double g = embedding::load_as_double(got.weights, problem.weight_dtype, static_cast<std::int64_t>(i));
    if (state.weights[i] == got.weights0[i]) {
      // Guard: rows the batch does not touch stay bit-identical.
      if (g != got.weights0[i]) {
        ADD_FAILURE() << "untouched weight " << i << " changed: " << g << " vs " << got.weights0[i];
        ++failures;
      }
      continue;
    }
    const double tol = testing::update_tolerance(state.weights[i], got.weights0[i], problem.layout.max_dim(), steps,
                                                 problem.weight_dtype, gradient_error);
    if (!(std::abs(g - state.weights[i]) <= tol)) {
      ADD_FAILURE() << embedding::optimizer_kind_name(opt.kind) << " weight[" << i << "]=" << g << " want "
                    << state.weights[i] << " tol " << tol;
      ++failures;
    }
  }
  // State: its own roundings (D + 16 ulps: row-wise Adagrad sums D squares) plus the gradient-sum
  // error dg = (n+2) u G carried in linearly (Adam m) or as 2|g| dg <= 2 G dg (squares).
  const double normaliser = opt.kind == OptimizerKind::kSgd ? 1.0 : 1.0 / opt.eps;
  const double dg = gradient_error / (opt.learning_rate * normaliser);
  const double g_max = dg / (static_cast<double>(problem.num_indices + 2) * unit_roundoff(DType::kF32)) + 1.0;  // loose G >= dg/((n+2)u)
  for (std::size_t i = 0; i < state.state1.size() && failures < 5; ++i) {
    const double tol = steps * ((problem.layout.max_dim() + 16.0) * unit_roundoff(DType::kF32) * std::abs(state.state1[i]) +
                                2.0 * g_max * dg) + 1e-30;
    if (!(std::abs(got.state1[i] - state.state1[i]) <= tol)) {
      ADD_FAILURE() << "state1[" << i << "]=" << got.state1[i] << " want " << state.state1[i];
      ++failures;
    }
  }
}

SyntheticBatch training_batch(const TbeProblem& probe, std::int64_t batch_size, int pooling_factor, std::uint64_t seed,
                              bool weighted = false, std::int64_t hot_rows = 0) {
  SyntheticBatchOptions options;
  options.batch_size = batch_size;
  options.pooling_factor = pooling_factor;
  options.vary_bag_sizes = true;
  options.empty_bag_fraction = 0.05;
  options.hot_rows = hot_rows;
  options.weighted = weighted;
  options.seed = seed;
  return embedding::make_synthetic_batch(probe.layout, options);
}

TEST(GpuTbeBackward, EveryOptimizerAfterOneAndSeveralStepsMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(403);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{40, 4}, {500, 12}, {20, 60}, {30, 132}, {6, 2048}, {300, 128}};
  auto probe = testing::make_problem(tables, 0, 0);
  struct Case {
    OptimizerKind kind;
    WeightDecayMode mode;
    float max_norm;
  };
  for (const Case c : {Case{OptimizerKind::kSgd, WeightDecayMode::kNone, 0}, Case{OptimizerKind::kAdagrad, WeightDecayMode::kNone, 0},
                       Case{OptimizerKind::kRowwiseAdagrad, WeightDecayMode::kNone, 0},
                       Case{OptimizerKind::kRowwiseAdagrad, WeightDecayMode::kL2, 0},
                       Case{OptimizerKind::kRowwiseAdagrad, WeightDecayMode::kDecoupled, 0.5f},
                       Case{OptimizerKind::kAdam, WeightDecayMode::kNone, 0}}) {
    for (PoolingMode pooling : {PoolingMode::kSum, PoolingMode::kMean}) {
      for (int steps : {1, 3}) {
        const bool weighted = steps == 3;
        const auto batch = training_batch(probe, 23, 5, seed + steps, weighted);
        auto problem = testing::make_problem(tables, 23, static_cast<std::int64_t>(batch.indices.size()),
                                             steps == 1 ? DType::kI32 : DType::kI64, DType::kF32, DType::kF32, pooling,
                                             weighted);
        auto opt = testing::optimizer_for(c.kind, c.mode);
        opt.max_norm = c.max_norm;
        SCOPED_TRACE(std::string(embedding::optimizer_kind_name(c.kind)) + " wd_mode=" +
                     std::to_string(static_cast<int>(c.mode)) + " " + embedding::pooling_mode_name(pooling) +
                     " steps=" + std::to_string(steps));
        expect_training_matches(problem, opt, batch, steps, seed);
      }
    }
  }
}

TEST(GpuTbeBackward, LowPrecisionWeightsAndUnpooledMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(404);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{300, 64}, {100, 64}};
  auto probe = testing::make_problem(tables, 0, 0);
  const auto batch = training_batch(probe, 31, 4, seed);
  for (DType wt : {DType::kF16, DType::kBF16}) {
    auto problem = testing::make_problem(tables, 31, static_cast<std::int64_t>(batch.indices.size()), DType::kI64, wt);
    expect_training_matches(problem, testing::optimizer_for(OptimizerKind::kRowwiseAdagrad), batch, 2, seed);
  }
  auto unpooled = testing::make_problem(tables, 31, static_cast<std::int64_t>(batch.indices.size()), DType::kI64,
                                        DType::kF32, DType::kF32, PoolingMode::kNone);
  expect_training_matches(unpooled, testing::optimizer_for(OptimizerKind::kSgd), batch, 1, seed);
}

TEST(GpuTbeBackward, HotRowsThroughTheMultiChunkPathMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(405);
  SCOPED_TRACE(testing::seed_trace(seed));
  // One row takes every index (N = 20000 >> the 256-position chunk): the run spans ~80 chunks.
  const std::vector<TableSpec> tables = {{1000, 128}};
  auto probe = testing::make_problem(tables, 0, 0);
  for (std::int64_t hot_rows : {1, 3}) {
    const auto batch = training_batch(probe, 1000, 20, seed, false, hot_rows);
    auto problem = testing::make_problem(tables, 1000, static_cast<std::int64_t>(batch.indices.size()));
    expect_training_matches(problem, testing::optimizer_for(OptimizerKind::kRowwiseAdagrad), batch, 2, seed);
  }
  // Zipf skew over mixed dims, several steps.
  const std::vector<TableSpec> mixed = {{20000, 128}, {5000, 12}, {3000, 260}};
  auto probe2 = testing::make_problem(mixed, 0, 0);
  SyntheticBatchOptions options;
  options.batch_size = 512;
  options.pooling_factor = 20;
  options.zipf_alpha = 1.15;
  options.seed = seed;
  const auto zipf = embedding::make_synthetic_batch(probe2.layout, options);
  auto problem = testing::make_problem(mixed, 512, static_cast<std::int64_t>(zipf.indices.size()));
  expect_training_matches(problem, testing::optimizer_for(OptimizerKind::kAdam), zipf, 2, seed);
}

// Both chunk kernels: the warp per chunk on rows of 128 and 64 fp32, and the narrow-rows kernel
// (groups of 8 lanes) on rows of 32 and 8; row-wise Adagrad and Adam (per-element state).
TEST(GpuTbeBackward, BitwiseIdenticalAcrossRunsAndGridSizes) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(406);
  SCOPED_TRACE(testing::seed_trace(seed));
  struct Setup {
    std::vector<TableSpec> tables;
    egpu::BackwardKernel kernel;
  };
  for (const Setup& setup : {Setup{{{2000, 128}, {50, 64}}, egpu::BackwardKernel::kWarpPerChunk},
                             Setup{{{2000, 32}, {50, 8}}, egpu::BackwardKernel::kNarrowRows}}) {
    SCOPED_TRACE("max_dim " + std::to_string(setup.tables[0].dim));
    auto probe = testing::make_problem(setup.tables, 0, 0);
    const auto batch = training_batch(probe, 2000, 10, seed, true, 2);  // hot rows: crossing runs
    auto problem = testing::make_problem(setup.tables, 2000, static_cast<std::int64_t>(batch.indices.size()),
                                         DType::kI64, DType::kF32, DType::kF32, PoolingMode::kMean, true);
    const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed);
    for (auto kind : {OptimizerKind::kRowwiseAdagrad, OptimizerKind::kAdam}) {
      SCOPED_TRACE(embedding::optimizer_kind_name(kind));
      const auto opt = testing::optimizer_for(kind);
      const auto first = gpu_train(problem, opt, batch, grad, 2, seed, 0, true, setup.kernel);
      for (int grid : {0, 1, 7}) {
        const auto again = gpu_train(problem, opt, batch, grad, 2, seed, grid, true, setup.kernel);
        EXPECT_EQ(0, std::memcmp(first.weights.data(), again.weights.data(), first.weights.size())) << "grid " << grid;
        EXPECT_EQ(first.state1, again.state1) << "grid " << grid;
        EXPECT_EQ(first.state2, again.state2) << "grid " << grid;
      }
    }
    if (setup.kernel != egpu::BackwardKernel::kWarpPerChunk) continue;
    // Both chunk windows (BackwardOptions::batch_row_updates) do the same arithmetic per row.
    for (auto kind : {OptimizerKind::kRowwiseAdagrad, OptimizerKind::kSgd, OptimizerKind::kAdam}) {
      const auto o = testing::optimizer_for(kind);
      const auto batched = gpu_train(problem, o, batch, grad, 2, seed, 0, true, setup.kernel);
      const auto one_at_a_time = gpu_train(problem, o, batch, grad, 2, seed, 0, false, setup.kernel);
      SCOPED_TRACE(embedding::optimizer_kind_name(kind));
      EXPECT_EQ(0, std::memcmp(batched.weights.data(), one_at_a_time.weights.data(), batched.weights.size()));
      EXPECT_EQ(batched.state1, one_at_a_time.state1);
      EXPECT_EQ(batched.state2, one_at_a_time.state2);
    }
  }
}

// ---- backward, narrow rows (one chunk per group of lanes) ----

TEST(GpuTbeBackwardNarrowRows, RuleAndOpSelection) {
  const auto narrow = testing::make_problem({{10, 32}, {10, 4}}, 8, 8);
  const auto wide = testing::make_problem({{10, 64}}, 8, 8);
  EXPECT_TRUE(egpu::narrow_rows_backward_fits(narrow).is_ok());
  const Status refused = egpu::narrow_rows_backward_fits(wide);
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.message().find("256 bytes"), std::string::npos) << refused.message();
  EXPECT_TRUE(egpu::narrow_rows_backward_fits(
                  testing::make_problem({{10, 64}}, 8, 8, DType::kI64, DType::kBF16, DType::kF32, PoolingMode::kNone))
                  .is_ok());
  const ExecutionContext gpu_context{DeviceKind::kGpu, nullptr, false};
  const auto pick = [&](const TbeProblem& problem) {
    auto choice = select_variant(embedding::tbe_backward_fused_variants(), problem, gpu_context);
    return choice.is_ok() ? std::string(choice->variant->name()) : choice.status().to_string();
  };
  EXPECT_EQ(pick(narrow), "tbe_backward_fused_gpu_narrow_rows");
  EXPECT_EQ(pick(wide), "tbe_backward_fused_gpu");
}

// Every narrow width (D = 4..64 -> groups of 4, 8 and 16 lanes), L in {0, 1, 2, 7} (sizes varied
// in [0, 2L], 5% empty bags), every optimiser (row-wise Adagrad with L2 decay, and decoupled decay
// with max_norm), sum / mean / weighted, every weight dtype, two steps. A 7-row table repeats
// rows within and across bags, so runs cross the 128-position chunks (combine kernel).
TEST(GpuTbeBackwardNarrowRows, EveryWidthLengthOptimizerAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(431);
  SCOPED_TRACE(testing::seed_trace(seed));
  struct Case {
    OptimizerKind kind;
    WeightDecayMode mode;
    float max_norm;
  };
  const Case cases[] = {{OptimizerKind::kSgd, WeightDecayMode::kNone, 0},
                        {OptimizerKind::kRowwiseAdagrad, WeightDecayMode::kL2, 0},
                        {OptimizerKind::kRowwiseAdagrad, WeightDecayMode::kDecoupled, 0.5f},
                        {OptimizerKind::kAdagrad, WeightDecayMode::kNone, 0},
                        {OptimizerKind::kAdam, WeightDecayMode::kNone, 0}};
  int case_number = 0;
  for (int dim : {4, 8, 12, 16, 24, 32, 64}) {
    for (DType weight_dtype : {DType::kF32, DType::kF16, DType::kBF16}) {
      if (dim * static_cast<int>(dtype_size_bytes(weight_dtype)) > egpu::kNarrowRowMaxBytes) continue;
      for (int pooling_factor : {0, 1, 2, 7}) {
        for (const Case& c : cases) {
          ++case_number;
          const std::vector<TableSpec> tables = {{300, dim}, {7, dim}};
          auto probe = testing::make_problem(tables, 0, 0);
          const bool weighted = case_number % 3 == 0;
          const PoolingMode pooling = case_number % 3 == 1 ? PoolingMode::kMean : PoolingMode::kSum;
          const auto batch = training_batch(probe, 61, pooling_factor, seed + static_cast<std::uint64_t>(case_number),
                                            weighted);
          auto problem = testing::make_problem(tables, 61, static_cast<std::int64_t>(batch.indices.size()),
                                               case_number % 2 == 0 ? DType::kI32 : DType::kI64, weight_dtype,
                                               DType::kF32, pooling, weighted);
          auto opt = testing::optimizer_for(c.kind, c.mode);
          opt.max_norm = c.max_norm;
          SCOPED_TRACE("D=" + std::to_string(dim) + " " + std::string(dtype_name(weight_dtype)) + " L=" +
                       std::to_string(pooling_factor) + " " + embedding::optimizer_kind_name(c.kind) + " wd_mode=" +
                       std::to_string(static_cast<int>(c.mode)) + " " + embedding::pooling_mode_name(pooling) +
                       (weighted ? " weighted" : ""));
          expect_training_matches(problem, opt, batch, 2, seed + static_cast<std::uint64_t>(case_number),
                                  egpu::BackwardKernel::kNarrowRows);
        }
      }
    }
  }
}

// Mixed narrow dims, Zipf-skewed rows and hot rows (runs spanning many chunks), unpooled output,
// and a batch large enough that warps take several rounds of chunks (groups past the last chunk).
TEST(GpuTbeBackwardNarrowRows, MixedDimsZipfHotRowsAndUnpooledMatchReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(432);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> mixed = {{20000, 32}, {5000, 4}, {3000, 24}};
  auto probe = testing::make_problem(mixed, 0, 0);
  SyntheticBatchOptions options;
  options.batch_size = 3000;
  options.pooling_factor = 4;
  options.vary_bag_sizes = true;
  options.zipf_alpha = 1.15;
  options.seed = seed;
  const auto zipf = embedding::make_synthetic_batch(probe.layout, options);
  auto problem = testing::make_problem(mixed, options.batch_size, static_cast<std::int64_t>(zipf.indices.size()));
  for (auto kind : {OptimizerKind::kRowwiseAdagrad, OptimizerKind::kAdam, OptimizerKind::kAdagrad}) {
    SCOPED_TRACE(embedding::optimizer_kind_name(kind));
    expect_training_matches(problem, testing::optimizer_for(kind), zipf, 2, seed, egpu::BackwardKernel::kNarrowRows);
  }
  const std::vector<TableSpec> one = {{1000, 16}};
  auto probe_one = testing::make_problem(one, 0, 0);
  for (std::int64_t hot_rows : {1, 3}) {
    const auto batch = training_batch(probe_one, 1000, 20, seed, false, hot_rows);
    auto hot = testing::make_problem(one, 1000, static_cast<std::int64_t>(batch.indices.size()));
    expect_training_matches(hot, testing::optimizer_for(OptimizerKind::kRowwiseAdagrad), batch, 2, seed,
                            egpu::BackwardKernel::kNarrowRows);
  }
  const std::vector<TableSpec> equal = {{300, 16}, {100, 16}};
  auto probe_equal = testing::make_problem(equal, 0, 0);
  const auto batch = training_batch(probe_equal, 31, 4, seed);
  auto unpooled = testing::make_problem(equal, 31, static_cast<std::int64_t>(batch.indices.size()), DType::kI64,
                                        DType::kBF16, DType::kF32, PoolingMode::kNone);
  expect_training_matches(unpooled, testing::optimizer_for(OptimizerKind::kSgd), batch, 1, seed,
                          egpu::BackwardKernel::kNarrowRows);
}

TEST(GpuTbeBackward, PlainBackwardGivesPerUniqueRowGradients) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(407);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::vector<TableSpec> tables = {{100, 12}, {7, 132}, {4000, 64}};
  auto probe = testing::make_problem(tables, 0, 0);
  const auto batch = training_batch(probe, 400, 8, seed, true, 0);
  auto problem = testing::make_problem(tables, 400, static_cast<std::int64_t>(batch.indices.size()), DType::kI32,
                                       DType::kF32, DType::kF32, PoolingMode::kSum, true);
  const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed);
  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  auto inputs = upload_batch(problem, batch);
  auto d_grad = gpu::upload(grad);
  const auto n = problem.num_indices;
  const int max_dim = problem.layout.max_dim();
  auto rows = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(n) * 8);
  auto grads = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(n * max_dim) * 4);
  auto ws_bytes = egpu::tbe_backward_workspace_bytes(problem);
  // Workspace stays within 32 bytes per index, plus each chunk's two fp32 boundary rows and 32
  // bytes of offsets (short chunks, the default: at most one chunk per 32 positions), plus fixed
  // alignment slack.
  const std::int64_t max_chunks = (n + 31) / 32;
  EXPECT_LE(*ws_bytes, 32 * n + max_chunks * (2 * 4 * max_dim + 32) + 4096);
  auto ws = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(*ws_bytes));
  ASSERT_TRUE(egpu::tbe_backward_dense(problem, *layout, inputs.view(), d_grad->as<float>(), rows->as<std::int64_t>(),
                                       grads->as<float>(), ws->data(), *ws_bytes)
                  .is_ok());
  const auto host_rows = *gpu::download<std::int64_t>(*rows, static_cast<std::size_t>(n));
  const auto host_grads = *gpu::download<float>(*grads, static_cast<std::size_t>(n * max_dim));
  const auto want = ref::tbe_row_gradients(problem, testing::to_ref_batch(batch), std::vector<double>(grad.begin(), grad.end()));
  std::size_t seen = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (host_rows[i] < 0) continue;
    ++seen;
    auto it = want.find(host_rows[i]);
    ASSERT_NE(it, want.end()) << "row " << host_rows[i] << " not in the batch";
    for (std::size_t j = 0; j < it->second.size(); ++j) {
      // fp32 sum of at most N terms of |g| <= ~5 (normal grads, weights <= 1.5): N*u*sum bound.
      const double tol = 1e-5 * (1.0 + std::abs(it->second[j])) * std::sqrt(static_cast<double>(n));
      ASSERT_NEAR(host_grads[i * max_dim + j], it->second[j], tol) << "row " << host_rows[i] << " col " << j;
    }
  }
  EXPECT_EQ(seen, want.size());
}

TEST(GpuTbe, TableBeyondTwoToThe31ElementsTouchedAtItsLastRow) {
  PARITY_REQUIRE_GPU();
  // 16777217 rows x 128 fp32 = 2^31 + 128 elements (8.6 GB): the last row sits past int32 offsets.
  const std::int64_t rows = (std::int64_t{1} << 24) + 1;
  const int dim = 128;
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_TRUE(gpu::memory_info(&free_bytes, &total_bytes).is_ok());
  if (free_bytes < static_cast<std::size_t>(rows * dim * 4) + (1ull << 30)) GTEST_SKIP() << "needs ~9 GB free";
  const std::vector<TableSpec> tables = {{4, dim}, {rows, dim}};
  SyntheticBatch batch;
  batch.indices = {3, rows - 1, rows - 1};
  batch.offsets = {0, 1, 3};  // B = 1: bag (0,0) = {3}, bag (1,0) = {E-1, E-1}
  auto problem = testing::make_problem(tables, 1, 3);
  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  auto weights = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(problem.layout.total_weight_elements()) * 4);
  ASSERT_TRUE(weights.is_ok());
  ASSERT_TRUE(weights->fill_bytes(0).is_ok());
  std::vector<float> last_row(dim);
  for (int j = 0; j < dim; ++j) last_row[j] = static_cast<float>(j) * 0.25f;
  const std::int64_t last_offset = problem.layout.weights_offset(1) + (rows - 1) * dim;
  ASSERT_GT(last_offset, std::int64_t{1} << 31);
  ASSERT_TRUE(weights->copy_from_host(last_row.data(), dim * 4, static_cast<std::size_t>(last_offset) * 4).is_ok());
  auto inputs = upload_batch(problem, batch);
  auto out = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(problem.output_cols()) * 4);
  ASSERT_TRUE(egpu::tbe_forward(problem, *layout, weights->data(), inputs.view(), out->data()).is_ok());
  const auto host_out = *gpu::download<float>(*out, static_cast<std::size_t>(problem.output_cols()));
  for (int j = 0; j < dim; ++j) ASSERT_EQ(host_out[dim + j], 2.0f * last_row[j]) << j;  // exact: small multiples of 1/4
  // SGD with grad 1: the last row moves by -2*lr, exactly representable.
  std::vector<float> grad(static_cast<std::size_t>(problem.output_cols()), 1.0f);
  auto d_grad = gpu::upload(grad);
  auto ws_bytes = egpu::tbe_backward_workspace_bytes(problem);
  auto ws = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(*ws_bytes));
  embedding::OptimizerParams sgd;
  sgd.learning_rate = 0.5f;
  ASSERT_TRUE(egpu::tbe_backward_fused(problem, *layout, sgd, {weights->data(), nullptr, nullptr}, inputs.view(),
                                       d_grad->as<float>(), ws->data(), *ws_bytes)
                  .is_ok());
  std::vector<float> updated(dim);
  ASSERT_TRUE(weights->copy_to_host(updated.data(), dim * 4, static_cast<std::size_t>(last_offset) * 4).is_ok());
  for (int j = 0; j < dim; ++j) ASSERT_EQ(updated[j], last_row[j] - 1.0f) << j;
}

TEST(GpuTbe, InvalidArgumentsAreRejectedWithMessages) {
  PARITY_REQUIRE_GPU();
  auto problem = testing::make_problem({{10, 8}}, 2, 4);
  auto layout = egpu::DeviceTbeLayout::create(problem.layout);
  auto other = testing::make_problem({{10, 8}, {5, 8}}, 2, 4);
  Status s = egpu::tbe_forward(other, *layout, nullptr, {}, nullptr);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("device layout has 1 features"), std::string::npos) << s.message();
  s = egpu::tbe_forward(problem, *layout, nullptr, {}, nullptr);
  EXPECT_NE(s.message().find("offsets is null"), std::string::npos) << s.message();
  auto ws = egpu::tbe_backward_workspace_bytes(problem);
  s = egpu::tbe_backward_fused(problem, *layout, {}, {nullptr, nullptr, nullptr}, {}, nullptr, nullptr, 0);
  EXPECT_NE(s.message().find("weights is null"), std::string::npos) << s.message();
  int dummy = 0;
  s = egpu::tbe_backward_fused(problem, *layout, {}, {&dummy, nullptr, nullptr}, {&dummy, &dummy, nullptr},
                               reinterpret_cast<const float*>(&dummy), &dummy, *ws - 1);
  EXPECT_NE(s.message().find("workspace_bytes="), std::string::npos) << s.message();
}

}  // namespace
}  // namespace parity
