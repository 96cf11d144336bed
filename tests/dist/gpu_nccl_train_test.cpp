// The distributed training step on one NCCL rank (local bootstrap) against the single-process GPU
// model: with one rank and whole tables nothing is exchanged (the TBE writes the model's pooled
// buffer) and a one-rank dense sum is no reduction at all, so in deterministic mode (the
// deterministic TBE backward, fixed GEMM configurations) every loss is the same bits. Also
// train_distributed_gpu against train() on the GPU, and the overhead benchmark's first-step check.
// Skips cleanly without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "common/test_support.hpp"
#include "dist/placements.hpp"
#include "parity/comm/nccl.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "parity/train/step_bench.hpp"
#include "parity/train/trainer.hpp"
#include "train/gpu_dist_step.hpp"

namespace parity::train {
namespace {

std::unique_ptr<comm::Communicator> one_nccl_rank(comm::Communicator& bootstrap) {
  comm::CommOptions options;
  options.timeout_ms = 60000.0;
  auto comm = comm::make_nccl_communicator(bootstrap, -1, options);
  EXPECT_TRUE(comm.is_ok()) << comm.status().to_string();
  return comm.is_ok() ? std::move(*comm) : nullptr;
}

// tiny in fp32 and a scaled-down dlrm-kaggle in bf16 (the benchmark's precision).
std::vector<model::ModelSpec> specs() {
  model::ModelSpec kaggle = model::load_spec("dlrm-kaggle").value();
  for (auto& table : kaggle.embedding.tables) table.num_rows = std::min<std::int64_t>(table.num_rows, 5000);
  kaggle.precision = model::DensePrecision::kBf16;
  return {model::load_spec("tiny").value(), kaggle};
}

// `steps` deterministic steps of the single-process GPU model of `spec` and of one NCCL rank's
// sharded step with `placement` (both initialised from `seed`): the same loss bits every step.
void expect_same_losses(comm::Communicator& nccl, const model::ModelSpec& spec, const TablePlacement& placement,
                        std::int64_t batch_size, std::uint64_t seed, int steps) {
  StepBenchOptions bench;
  bench.batch_size = batch_size;
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  context.deterministic = true;
  auto single = detail::DlrmModel::create(spec, bench.batch_size, context);
  auto sharded = detail::DlrmModel::create(detail::dense_only_spec(spec), bench.batch_size, context);
  ASSERT_TRUE(single.is_ok() && sharded.is_ok());
  ASSERT_TRUE(single->initialize(seed).is_ok());
  ASSERT_TRUE(sharded->initialize(seed).is_ok());
  auto step = detail::ShardedStep::create(spec, placement, bench.batch_size, nccl, *sharded, seed);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();
  for (int s = 0; s < steps; ++s) {
    bench.seed = seed + 20 + static_cast<std::uint64_t>(s);
    const data::Batch batch = synthetic_step_batch(spec, bench);
    auto want = single->train_step(batch, s);
    ASSERT_TRUE((*step)->stage_global_batch(batch).is_ok());
    auto got = sharded->train_step(detail::dense_slice(batch, 0, batch.batch_size), s);
    ASSERT_TRUE(want.is_ok()) << want.status().to_string();
    ASSERT_TRUE(got.is_ok()) << got.status().to_string();
    EXPECT_EQ(*got, *want) << "step " << s;
  }
}

TEST(NcclTrainStep, OneRankEqualsTheSingleProcessGpuModelBitForBit) {
  PARITY_REQUIRE_GPU();
  auto bootstrap = comm::make_local_communicator();
  auto nccl = one_nccl_rank(*bootstrap);
  ASSERT_NE(nccl, nullptr);
  for (const auto& spec : specs()) {
    SCOPED_TRACE(spec.name);
    expect_same_losses(*nccl, spec, TablePlacement{std::vector<int>(spec.embedding.tables.size(), 0), {}}, 1024, 11,
                       4);
  }
}

// One NCCL rank holding every placement type (two row shards of a table, four column shards, a
// replica, whole tables): the fold through the host and the device copies of the pieces. In
// deterministic mode the same bits as the single-process GPU model (row shards regroup bags of at
// most 2 ids exactly; column shards and replicas pool the same ids in the same order), as on the
// CPU (GpuDistStep.OneRankWithEveryPlacementTypeEqualsTheSingleProcessModelBitForBit).
TEST(NcclTrainStep, OneRankWithEveryPlacementTypeEqualsTheSingleProcessGpuModel) {
  PARITY_REQUIRE_GPU();
  auto bootstrap = comm::make_local_communicator();
  auto nccl = one_nccl_rank(*bootstrap);
  ASSERT_NE(nccl, nullptr);
  auto spec = model::load_spec("tiny").value();
  spec.embedding.optimizer.kind = embedding::OptimizerKind::kAdagrad;  // column shards need element-wise state
  expect_same_losses(*nccl, spec, comm::testing::mixed_placement(spec, 1, 0), 512, 12, 4);
}

TEST(NcclTrainStep, TrainerOnOneRankEqualsTrainOnTheGpu) {
  PARITY_REQUIRE_GPU();
  const auto root = std::filesystem::temp_directory_path() / "parity_nccl_train_test";
  std::filesystem::remove_all(root);
  DistTrainOptions options;
  options.train.spec = model::load_spec("tiny").value();
  options.train.device = DeviceKind::kGpu;
  options.train.synthetic_samples = 4000;
  options.train.batch_size = 256;
  options.train.max_steps = 10;
  options.train.eval_every_steps = 5;
  options.train.determinism = Determinism::kBitwise;
  options.train.out_dir = (root / "nccl").string();
  TrainOptions single = options.train;
  single.out_dir = (root / "single").string();
  auto want = train(single);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto bootstrap = comm::make_local_communicator();
  auto nccl = one_nccl_rank(*bootstrap);
  ASSERT_NE(nccl, nullptr);
  auto got = train_distributed_gpu(options, *bootstrap, *nccl);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->step_losses, want->step_losses);
  ASSERT_EQ(got->evaluations.size(), want->evaluations.size());
  for (std::size_t e = 0; e < got->evaluations.size(); ++e) EXPECT_EQ(got->evaluations[e].ne, want->evaluations[e].ne);
  std::filesystem::remove_all(root);
}

TEST(NcclTrainStep, OverheadBenchmarkRunsBothPathsOnTheSameBatch) {
  PARITY_REQUIRE_GPU();
  auto bootstrap = comm::make_local_communicator();
  auto nccl = one_nccl_rank(*bootstrap);
  ASSERT_NE(nccl, nullptr);
  StepBenchOptions options;
  options.batch_size = 2048;
  options.warmup_steps = 1;
  options.timed_steps = 4;
  auto report = benchmark_distributed_step(model::load_spec("tiny").value(), options, *nccl, 2);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_EQ(report->single_step_ms.size(), 4u);
  EXPECT_EQ(report->distributed_step_ms.size(), 4u);
  EXPECT_EQ(report->first_loss_difference, 0.0);  // one rank: the same first step
  EXPECT_GT(report->median_distributed_ms, 0.0);
}

}  // namespace
}  // namespace parity::train
