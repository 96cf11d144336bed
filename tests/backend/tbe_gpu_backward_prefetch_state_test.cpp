// The sorted backward with BackwardOptions::prefetch_element_state (a finished run's Adagrad / Adam
// state loaded with its weight row) against the same backward without it (bitwise: weights and
// state) and against the fp64 reference, over two steps so the second reads a non-zero state.
// Every chunk-kernel shape: narrow rows (groups of 4-16 lanes), 1, 2, 4 and 8 vecs per lane, both
// windows (batch_row_updates), one-hot and bags with empty ones, Zipf hot rows whose runs cross
// chunks (the combine kernel), mean pooling and per-sample weights, mean bag lengths 1, <= 2, <= 4
// and longer (the linearize kernel's 1, 2, 4 and 8 lanes per bag); SGD and row-wise Adagrad,
// which ignore the option, as well.
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
using embedding::PoolingMode;
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
namespace egpu = embedding::gpu;

void expect_prefetch_matches(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch,
                             OptimizerKind kind, bool batch_row_updates, std::uint64_t seed) {
  constexpr int kSteps = 2;
  embedding::OptimizerParams opt;
  opt.kind = kind;
  opt.learning_rate = 0.05f;
  std::vector<double> weights0;
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed, &weights0);
  const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed + 7);
  egpu::BackwardOptions plain;
  plain.batch_row_updates = batch_row_updates;
  plain.prefetch_element_state = false;
  egpu::BackwardOptions prefetch = plain;
  prefetch.prefetch_element_state = true;
  const auto got = testing::train_fused(problem, opt, batch, grad, weights, kSteps, prefetch);
  const auto want = testing::train_fused(problem, opt, batch, grad, weights, kSteps, plain);
  EXPECT_EQ(got.weights, want.weights) << "weights differ from the backward without the prefetch";
  EXPECT_EQ(got.state1, want.state1) << "state1 differs from the backward without the prefetch";
  EXPECT_EQ(got.state2, want.state2) << "state2 differs from the backward without the prefetch";
  testing::expect_trained_weights_match_reference(problem, opt, batch, grad, weights0, got.weights, kSteps);
}

TEST(GpuTbeBackwardPrefetchState, EveryChunkShapeMatchesThePlainBackwardBitwiseAndTheReference) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(613);
  SCOPED_TRACE(testing::seed_trace(seed));
  struct Case {
    DType weight_dtype;
    std::vector<TableSpec> tables;
    int pooling_factor;
    bool vary_bag_sizes;
    double zipf_alpha;
    PoolingMode pooling;
    bool weighted;
  };
  const std::vector<Case> cases = {
      {DType::kF16, {{3000, 16}, {500, 8}}, 1, false, 0.8, PoolingMode::kSum, false},          // narrow, one-hot
      {DType::kBF16, {{2000, 60}, {400, 32}}, 6, true, 0.1, PoolingMode::kMean, false},       // narrow, bags
      {DType::kF32, {{900, 24}, {300, 40}}, 2, true, 0.5, PoolingMode::kSum, true},           // L<=2: 2 lanes a bag
      {DType::kF32, {{4000, 64}, {50, 128}}, 1, false, 1.2, PoolingMode::kMean, false},       // 1 vec, hot rows
      {DType::kBF16, {{2000, 172}, {900, 76}}, 5, true, 0.06, PoolingMode::kSum, true},       // 2 vecs, weighted
      {DType::kF16, {{3000, 356}, {40, 356}}, 1, false, 0.77, PoolingMode::kSum, false},      // 4 vecs (set 3's 06)
      {DType::kF32, {{700, 600}, {30, 16}}, 3, false, 1.1, PoolingMode::kSum, true}};         // 8 vecs, crossing runs
  int case_number = 0;
  for (const auto& c : cases) {
    for (OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kAdagrad, OptimizerKind::kSgd,
                               OptimizerKind::kRowwiseAdagrad}) {
      for (bool batch_row_updates : {false, true}) {
        ++case_number;
        SyntheticBatchOptions options;
        options.batch_size = 1500;
        options.pooling_factor = c.pooling_factor;
        options.vary_bag_sizes = c.vary_bag_sizes;
        options.empty_bag_fraction = c.vary_bag_sizes ? 0.1 : 0.0;
        options.zipf_alpha = c.zipf_alpha;
        options.weighted = c.weighted;
        options.seed = seed + static_cast<std::uint64_t>(case_number);
        auto probe = testing::make_problem(c.tables, 0, 0);
        const auto batch = embedding::make_synthetic_batch(probe.layout, options);
        auto problem = testing::make_problem(c.tables, options.batch_size,
                                             static_cast<std::int64_t>(batch.indices.size()),
                                             case_number % 2 == 0 ? DType::kI32 : DType::kI64, c.weight_dtype,
                                             DType::kF32, c.pooling, c.weighted);
        SCOPED_TRACE(std::string(dtype_name(c.weight_dtype)) + " D=" + std::to_string(c.tables.front().dim) +
                     " L=" + std::to_string(c.pooling_factor) + " " + embedding::optimizer_kind_name(kind) +
                     (batch_row_updates ? " batched" : " row-at-a-time"));
        expect_prefetch_matches(problem, batch, kind, batch_row_updates, options.seed);
      }
    }
  }
}

TEST(GpuTbeBackwardPrefetchState, OnByDefaultAndWorkspaceUnchanged) {
  EXPECT_TRUE(egpu::BackwardOptions{}.prefetch_element_state);
  egpu::BackwardOptions late_loads;
  late_loads.prefetch_element_state = false;
  const auto problem = testing::make_problem({{1000, 356}}, 4096, 4096);
  EXPECT_EQ(*egpu::tbe_backward_workspace_bytes(problem), *egpu::tbe_backward_workspace_bytes(problem, late_loads));
}

}  // namespace
}  // namespace parity
