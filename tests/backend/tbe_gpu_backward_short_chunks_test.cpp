// The sorted backward with BackwardOptions::short_chunks against the fp64 reference for SGD,
// row-wise Adagrad and Adam, with both small-batch rules: small_batch_short_chunks (by name;
// here N is small, so 32 positions) and off, the default (chunks of max(32, D/4, min(max(128, D), N/8192))
// positions: 32-122), both far shorter than the long length. One-hot rows of D=164 bf16 (test set
// 2's 04) and D 16-488 fp32 (its 05), hot rows whose runs cross many chunks (the combine kernel),
// and bitwise equality across grid sizes (the chunk length depends on the problem only).
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
using embedding::SyntheticBatchOptions;
using embedding::TableSpec;
namespace egpu = embedding::gpu;

// One fused step with short chunks on a grid of `max_grid_blocks` (0 = automatic); the weights after.
std::vector<std::uint8_t> short_chunk_step(const embedding::TbeProblem& problem, const embedding::OptimizerParams& opt,
                                           const embedding::SyntheticBatch& batch, const std::vector<float>& grad,
                                           const std::vector<std::uint8_t>& weights, int max_grid_blocks,
                                           bool small_batch_short_chunks) {
  egpu::BackwardOptions options;
  options.short_chunks = true;
  options.small_batch_short_chunks = small_batch_short_chunks;
  options.max_grid_blocks = max_grid_blocks;
  // Sized with the options: the default sizing is too small whenever short chunks are shorter.
  return testing::train_fused(problem, opt, batch, grad, weights, 1, options).weights;
}

void expect_short_chunks_match(const embedding::TbeProblem& problem, const embedding::SyntheticBatch& batch, OptimizerKind kind,
                               std::uint64_t seed) {
  embedding::OptimizerParams opt;
  opt.kind = kind;
  opt.learning_rate = 0.05f;
  std::vector<double> weights0;
  const auto weights = embedding::make_weights(problem.layout, problem.weight_dtype, seed, &weights0);
  const auto grad = testing::random_grad(problem.output_rows() * problem.output_cols(), seed + 7);
  for (const bool small_batch : {true, false}) {
    SCOPED_TRACE(small_batch ? "small_batch_short_chunks" : "per-index partials");
    const auto got = short_chunk_step(problem, opt, batch, grad, weights, 0, small_batch);
    EXPECT_EQ(got, short_chunk_step(problem, opt, batch, grad, weights, 7, small_batch)) << "differs across grid sizes";
    testing::expect_trained_weights_match_reference(problem, opt, batch, grad, weights0, got, 1);
  }
}

TEST(GpuTbeBackwardShortChunks, OneHotWideRowsAndHotRowsMatchReferenceBitwiseAcrossGrids) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(581);
  SCOPED_TRACE(testing::seed_trace(seed));
  struct Case {
    DType weight_dtype;
    std::vector<TableSpec> tables;
    int pooling_factor;
    double zipf_alpha;
    bool weighted;
  };
  const std::vector<Case> cases = {
      {DType::kBF16, {{4000, 164}, {300, 164}, {2000, 164}}, 1, 0.0, true},    // set 2's 04 in small
      {DType::kF32, {{5000, 32}, {900, 16}, {800, 488}, {700, 256}}, 1, 0.05, false},  // its 05
      {DType::kF32, {{50, 64}, {3000, 160}}, 4, 1.3, false},  // hot rows: runs over many chunks
      {DType::kF16, {{7, 8}, {600, 100}}, 3, 1.1, true}};     // a 7-row table: every run crosses
  int case_number = 0;
  for (const auto& c : cases) {
    for (OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kRowwiseAdagrad, OptimizerKind::kAdam}) {
      ++case_number;
      SyntheticBatchOptions options;
      options.batch_size = 3000;
      options.pooling_factor = c.pooling_factor;
      options.zipf_alpha = c.zipf_alpha;
      options.weighted = c.weighted;
      options.seed = seed + static_cast<std::uint64_t>(case_number);
      auto probe = testing::make_problem(c.tables, 0, 0);
      const auto batch = embedding::make_synthetic_batch(probe.layout, options);
      auto problem = testing::make_problem(c.tables, options.batch_size, static_cast<std::int64_t>(batch.indices.size()),
                                           case_number % 2 == 0 ? DType::kI32 : DType::kI64, c.weight_dtype,
                                           DType::kF32, embedding::PoolingMode::kSum, c.weighted);
      SCOPED_TRACE(std::string(dtype_name(c.weight_dtype)) + " D=" + std::to_string(c.tables.back().dim) + " L=" +
                   std::to_string(c.pooling_factor) + " " + embedding::optimizer_kind_name(kind));
      expect_short_chunks_match(problem, batch, kind, options.seed);
    }
  }
}

// Needs no device: short chunks (the default) need more workspace than long ones on a small batch
// of wide rows, the small-batch rule (by name) more than the per-index one (the default), and all
// the same on a batch large enough that N/8192 reaches the long length.
TEST(GpuTbeBackwardShortChunks, WorkspaceFollowsTheOption) {
  EXPECT_TRUE(egpu::BackwardOptions{}.short_chunks);
  EXPECT_FALSE(egpu::BackwardOptions{}.small_batch_short_chunks);
  egpu::BackwardOptions long_chunks;
  long_chunks.short_chunks = false;
  egpu::BackwardOptions small_batch;
  small_batch.small_batch_short_chunks = true;
  const auto small = testing::make_problem({{1000, 488}}, 4096, 4096);
  EXPECT_GT(*egpu::tbe_backward_workspace_bytes(small, small_batch), *egpu::tbe_backward_workspace_bytes(small));
  EXPECT_GT(*egpu::tbe_backward_workspace_bytes(small), *egpu::tbe_backward_workspace_bytes(small, long_chunks));
  const auto large = testing::make_problem({{1000, 64}}, 1 << 21, 1 << 21);
  EXPECT_EQ(*egpu::tbe_backward_workspace_bytes(large), *egpu::tbe_backward_workspace_bytes(large, long_chunks));
  EXPECT_EQ(*egpu::tbe_backward_workspace_bytes(large), *egpu::tbe_backward_workspace_bytes(large, small_batch));
}

}  // namespace
}  // namespace parity
