// The distributed trainer on the MPI world (4 ranks in CI; 3 too) against single-rank runs made
// on rank 0 in the same test:
//  - with one gradient chunk, the trainer on one rank (local communicator) gives the plain
//    single-rank trainer's losses bit for bit: its replica runs the same ops;
//  - with C gradient chunks (C a multiple of the rank count), every rank count dividing C sums the
//    same chunk gradients in the same order, so the world run's losses and NE/AUC equal the
//    one-rank run's with C chunks bit for bit (no tolerance is needed: the order is fixed);
//  - a checkpoint set written by the world resumes on one rank with the uninterrupted losses;
//  - the same with a plan mixing all four placement types (mixed_placement): the world's losses
//    still equal the one-rank table-wise run's bit for bit. Column shards sum the same ids per
//    column; data-parallel replicas run the single-rank backward on the gathered batch; a row
//    shard's partial sums regroup a bag's sum, which changes no bit for bags of at most 2 ids
//    (x + 0 = x, and a + b = b + a), so the row-wise tables here are those with 1 or 2 ids per
//    sample (tiny's 3-id table is column-wise). Its checkpoint set resumes on one rank with
//    another mixed placement (pieces re-cut on load);
//  - without gradient chunks, reducing the dense buckets between backward layers (overlapped)
//    gives the same bits as reducing them after the backward (the same all-reduces).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "dist/dist_world.hpp"
#include "dist/placements.hpp"
#include "parity/data/dataset.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/dist_trainer.hpp"
#include "parity/train/trainer.hpp"

namespace parity::comm::testing {
namespace {

namespace fs = std::filesystem;
using train::DistTrainOptions;
using train::TrainSummary;

std::string shared_temp_dir() { return comm::testing::shared_temp_dir("parity_dist_train"); }

struct RunSetup {
  model::ModelSpec spec;
  std::string dir;
  std::int64_t batch = 96;  // divisible by 12 chunks of 8 rows
  int chunks = 12;          // a multiple of 1, 2, 3 and 4 ranks
  std::int64_t steps = 6;
  train::TablePlacement world_placement;   // empty: greedy table-wise
  train::TablePlacement resume_placement;  // the one-rank resume's (empty: greedy)
};

DistTrainOptions options_for(const RunSetup& setup, const std::string& out, std::int64_t steps, int chunks) {
  DistTrainOptions options;
  auto& train = options.train;
  train.spec = setup.spec;
  train.data_dir = setup.dir + "/data";
  train.out_dir = out;
  train.batch_size = setup.batch;
  train.max_steps = steps;
  train.eval_max_samples = 0;  // the whole split: its short last batch leaves some ranks no rows
  train.determinism = train::Determinism::kBitwise;
  train.seed = 7;
  train.num_threads = 1;
  options.gradient_chunks = chunks;
  return options;
}

// Rank 0 writes the dataset; every rank waits for it.
void generate(const RunSetup& setup) {
  if (world().rank() == 0) {
    data::SyntheticOptions synthetic;
    synthetic.train_samples = setup.batch * 12;
    synthetic.eval_samples = setup.batch * 4 + 17;  // a short last eval batch
    synthetic.seed = 3;
    synthetic.num_threads = 1;
    const auto report = data::generate_synthetic(model::dataset_schema(setup.spec), synthetic, setup.dir + "/data");
    EXPECT_TRUE(report.is_ok()) << report.status().to_string();
  }
  ASSERT_TRUE(world().barrier().is_ok());
}

Result<TrainSummary> run_on_one_rank(const DistTrainOptions& options) {
  auto local = make_local_communicator();
  return train::train_distributed(options, *local);
}

void expect_same_bits(const std::vector<double>& got, const std::vector<double>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(std::memcmp(&got[i], &want[i], sizeof(double)), 0)
        << what << ": step " << i + 1 << " loss " << got[i] << " vs " << want[i];
  }
}

void check_equivalence(RunSetup setup) {
  setup.dir = shared_temp_dir();
  ASSERT_FALSE(setup.dir.empty());
  generate(setup);
  TrainSummary plain, one_rank_chunked;
  if (world().rank() == 0) {
    auto plain_run = train::train(options_for(setup, setup.dir + "/plain", setup.steps, 1).train);
    ASSERT_TRUE(plain_run.is_ok()) << plain_run.status().to_string();
    plain = *plain_run;
    auto one_chunk = run_on_one_rank(options_for(setup, setup.dir + "/one", setup.steps, 1));
    ASSERT_TRUE(one_chunk.is_ok()) << one_chunk.status().to_string();
    // The replica and the shard are the single-rank model, op for op.
    expect_same_bits(one_chunk->step_losses, plain.step_losses, "1 rank, 1 chunk vs the plain trainer");
    auto chunked = run_on_one_rank(options_for(setup, setup.dir + "/one_chunked", setup.steps, setup.chunks));
    ASSERT_TRUE(chunked.is_ok()) << chunked.status().to_string();
    one_rank_chunked = *chunked;
  }
  auto world_options = options_for(setup, setup.dir + "/world", setup.steps, setup.chunks);
  world_options.placement = setup.world_placement;
  auto world_run = train::train_distributed(world_options, world());
  ASSERT_TRUE(world_run.is_ok()) << world_run.status().to_string();
  if (world().rank() == 0) {
    expect_same_bits(world_run->step_losses, one_rank_chunked.step_losses, "world vs 1 rank, same chunks");
    ASSERT_FALSE(world_run->evaluations.empty());
    EXPECT_EQ(world_run->evaluations.back().ne, one_rank_chunked.evaluations.back().ne);
    EXPECT_EQ(world_run->evaluations.back().auc, one_rank_chunked.evaluations.back().auc);
    EXPECT_EQ(world_run->evaluations.back().samples, one_rank_chunked.evaluations.back().samples);
    // Re-sharding: the world's checkpoint set resumes on one rank with the uninterrupted losses.
    auto longer = run_on_one_rank(options_for(setup, setup.dir + "/one_chunked", setup.steps + 3, setup.chunks));
    ASSERT_TRUE(longer.is_ok()) << longer.status().to_string();
    auto resumed_options = options_for(setup, setup.dir + "/world", setup.steps + 3, setup.chunks);
    resumed_options.train.resume = train::ResumeMode::kFromLatestCheckpoint;
    resumed_options.placement = setup.resume_placement;
    auto resumed = run_on_one_rank(resumed_options);
    ASSERT_TRUE(resumed.is_ok()) << resumed.status().to_string();
    EXPECT_EQ(resumed->resumed_from_step, setup.steps);
    expect_same_bits(resumed->step_losses, longer->step_losses, "resumed on 1 rank vs uninterrupted");
  }
  ASSERT_TRUE(world().barrier().is_ok());
  if (world().rank() == 0) fs::remove_all(setup.dir);
}

class TrainDist : public DistTest {};

// dlrm-kaggle's dense part (2.7M parameters) with its 26 tables capped at 1000 rows.
RunSetup scaled_down_kaggle() {
  RunSetup setup;
  auto spec = model::preset("dlrm-kaggle");
  EXPECT_TRUE(spec.is_ok());
  model::cap_table_rows(*spec, 1000);
  setup.spec = *spec;
  setup.batch = 64;
  setup.chunks = 4;
  setup.steps = 3;
  return setup;
}

TEST_F(TrainDist, TinyOnAllRanksEqualsOneRankBitForBit) {
  RunSetup setup;
  auto spec = model::preset("tiny");
  ASSERT_TRUE(spec.is_ok());
  setup.spec = *spec;
  check_equivalence(setup);
}

TEST_F(TrainDist, ScaledDownKaggleOnAllRanksEqualsOneRankBitForBit) {
  if (4 % world().size() != 0) GTEST_SKIP() << "4 gradient chunks need a rank count dividing 4";
  RunSetup setup = scaled_down_kaggle();
  check_equivalence(setup);
}

// tiny's tables with element-wise Adagrad (column shards cannot keep row-wise Adagrad's per-row
// mean over all columns; the placement refuses it).
TEST_F(TrainDist, TinyWithEveryPlacementTypeEqualsOneRankBitForBit) {
  RunSetup setup;
  auto spec = model::preset("tiny");
  ASSERT_TRUE(spec.is_ok());
  spec->embedding.optimizer.kind = embedding::OptimizerKind::kAdagrad;
  setup.spec = *spec;
  setup.world_placement = mixed_placement(setup.spec, world().size(), world().size() - 1);
  setup.resume_placement = mixed_placement(setup.spec, 1, 0);
  check_equivalence(setup);
}

// The same with mean pooling: shards pool sums; the sample's rank scales each bag by 1 / L (and
// the gradient likewise), the single-rank TBE's own expressions.
TEST_F(TrainDist, TinyMeanPoolingWithEveryPlacementTypeEqualsOneRankBitForBit) {
  RunSetup setup;
  auto spec = model::preset("tiny");
  ASSERT_TRUE(spec.is_ok());
  spec->embedding.optimizer.kind = embedding::OptimizerKind::kAdagrad;
  spec->embedding.pooling = embedding::PoolingMode::kMean;
  setup.spec = *spec;
  setup.steps = 4;
  setup.world_placement = mixed_placement(setup.spec, world().size(), 0);
  setup.resume_placement = mixed_placement(setup.spec, 1, 0);
  check_equivalence(setup);
}

// tiny as it is (row-wise Adagrad): row-wise, data-parallel and table-wise tables.
TEST_F(TrainDist, TinyRowwiseAdagradRowShardsEqualOneRankBitForBit) {
  RunSetup setup;
  auto spec = model::preset("tiny");
  ASSERT_TRUE(spec.is_ok());
  setup.spec = *spec;
  setup.steps = 4;
  setup.world_placement = mixed_placement(setup.spec, world().size(), 1);
  for (std::size_t t = 1; t < setup.world_placement.tables.size(); t += 4) {  // no column shards
    const auto& table = setup.spec.embedding.tables[t];
    setup.world_placement.tables[t] = row_wise(table.num_rows, table.dim, {0, 1}, 2);
  }
  setup.world_placement.tables[5] = {plan::ShardingType::kTableWise, {{0, 0, 3000, 0, 16}}};  // 3 ids per sample
  check_equivalence(setup);
}

TEST_F(TrainDist, ScaledDownKaggleWithEveryPlacementTypeEqualsOneRankBitForBit) {
  if (4 % world().size() != 0) GTEST_SKIP() << "4 gradient chunks need a rank count dividing 4";
  RunSetup setup = scaled_down_kaggle();
  setup.world_placement = mixed_placement(setup.spec, world().size(), 0);
  setup.resume_placement = mixed_placement(setup.spec, 1, 0);
  check_equivalence(setup);
}

// Without gradient chunks (the fast mode), overlapping the bucket all-reduces with the backward
// changes no bit: the buckets and their all-reduces are the same, only started earlier (and
// completed later). With 4 MiB buckets (3) and 512 KiB buckets (many in flight at once).
TEST_F(TrainDist, OverlappedDenseReductionEqualsReductionAfterBackward) {
  RunSetup setup = scaled_down_kaggle();  // 2.7M dense parameters: 3 buckets of 4 MiB
  setup.batch = 48;
  setup.dir = shared_temp_dir();
  ASSERT_FALSE(setup.dir.empty());
  generate(setup);
  for (const std::int64_t bucket_bytes : {std::int64_t{4} << 20, std::int64_t{512} << 10}) {
    std::vector<std::vector<double>> losses;
    std::vector<train::DenseReductionTimings> timings;
    for (const auto mode : {DistTrainOptions::DenseReduction::kOverlapped, DistTrainOptions::DenseReduction::kAfterBackward}) {
      auto options = options_for(setup, setup.dir + "/mode" + std::to_string(losses.size()), 3, 0);
      SCOPED_TRACE("seed " + std::to_string(options.train.seed) + ", bucket_bytes " + std::to_string(bucket_bytes));
      options.train.determinism = train::Determinism::kDefault;
      options.dense_reduction = mode;
      options.bucket_bytes = bucket_bytes;
      options.placement = mixed_placement(setup.spec, world().size(), 0);
      train::DenseReductionTimings timing;
      auto run = train::train_distributed(options, world(), &timing);
      ASSERT_TRUE(run.is_ok()) << run.status().to_string();
      losses.push_back(run->step_losses);
      timings.push_back(timing);
    }
    expect_same_bits(losses[0], losses[1], "overlapped vs after the backward");
    for (const auto& timing : timings) {  // 3 steps, the first not timed
      EXPECT_EQ(timing.steps, 2);
      EXPECT_EQ(timing.buckets, bucket_bytes == (std::int64_t{4} << 20) ? 3 : timings[0].buckets);
      EXPECT_GT(timing.backward_ms, 0.0);
      EXPECT_GE(timing.in_flight_ms, timing.exposed_comm_ms - 1e-3);  // blocking: the same span
    }
    if (bucket_bytes < (std::int64_t{4} << 20)) {
      EXPECT_GT(timings[0].buckets, 3);
    }
    // Overlapped: buckets start at the backward's layer boundaries, while the layers below are
    // still to run (only the last can wait for the backward's end).
    EXPECT_GE(timings[0].started_during_backward, timings[0].buckets - 1)
        << timings[0].started_during_backward << " of " << timings[0].buckets;
    EXPECT_GE(timings[0].started_during_backward, 1);
    EXPECT_EQ(timings[1].started_during_backward, 0);
  }
  ASSERT_TRUE(world().barrier().is_ok());
  if (world().rank() == 0) fs::remove_all(setup.dir);
}

}  // namespace
}  // namespace parity::comm::testing
