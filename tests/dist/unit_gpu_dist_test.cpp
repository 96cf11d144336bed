// The GPU distributed step's pieces that run on the CPU:
//  - the pooled exchange plan, executed for R simulated ranks in one process (the all_to_allv
//    moves blocks exactly as the layouts say) against the values each row must end with, both
//    directions, uneven rows, a rank owning nothing, merged column runs;
//  - the sharded step on the one-rank (local) communicator and a CPU model against the
//    single-process model: the same ops on the same buffers, so the losses are equal bit for bit;
//  - train_distributed_gpu on the local communicator (device cpu) against train(): the same step
//    losses and evaluation bit for bit; its option errors.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "dist/placements.hpp"
#include "parity/comm/communicator.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "parity/train/step_bench.hpp"
#include "parity/train/trainer.hpp"
#include "train/gpu_dist_exchange.hpp"
#include "train/gpu_dist_step.hpp"

namespace parity::train::detail {
namespace {

// A value naming (global row, feature, column): small integers, exact in fp32.
float tag(std::int64_t row, int feature, std::int64_t column) {
  return static_cast<float>(row * 1000 + feature * 10 + column);
}

// Moves every sender's blocks into every receiver's buffer as all_to_allv would.
void simulate_all_to_allv(const std::vector<PooledExchangePlan>& plans, bool forward,
                          const std::vector<std::vector<float>>& send, std::vector<std::vector<float>>* recv) {
  for (std::size_t s = 0; s < plans.size(); ++s) {
    const auto& out = forward ? plans[s].forward : plans[s].backward;
    for (std::size_t r = 0; r < plans.size(); ++r) {
      const auto& in = forward ? plans[r].forward : plans[r].backward;
      ASSERT_EQ(out.send_counts[r], in.recv_counts[s]) << "sender " << s << " receiver " << r;
      std::copy_n(send[s].begin() + out.send_displs[r], out.send_counts[r], (*recv)[r].begin() + in.recv_displs[s]);
    }
  }
}

TEST(GpuDistExchange, SimulatedRanksReceiveTheirRowsAndOwnersTheirGradients) {
  const std::vector<std::int64_t> dims = {3, 5, 2, 4, 1, 6};
  const std::vector<int> owner = {1, 0, 1, 1, 0, 2};  // rank 3 owns nothing; features 2, 3 adjacent
  const std::vector<std::int64_t> rows = {2, 0, 3, 1};
  const int ranks = 4;
  std::vector<PooledExchangePlan> plans;
  for (int r = 0; r < ranks; ++r) {
    auto plan = make_pooled_exchange_plan(dims, owner, rows, r);
    ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
    plans.push_back(*plan);
  }
  EXPECT_EQ(plans[0].owner_runs[1].size(), 2u);  // feature 0, then features 2 and 3 merged
  EXPECT_EQ(plans[0].owner_runs[1][1].width, 6);
  EXPECT_EQ(plans[0].local_width, 21);
  EXPECT_EQ(plans[0].global_rows(), 6);
  EXPECT_FALSE(plans[0].is_identity());
  // Column of feature f within its owner's block, and within a local row.
  std::vector<std::int64_t> owned_column(dims.size()), local_column(dims.size());
  std::vector<std::int64_t> width(ranks, 0);
  for (std::size_t f = 0, at = 0; f < dims.size(); at += dims[f], ++f) {
    owned_column[f] = width[static_cast<std::size_t>(owner[f])];
    width[static_cast<std::size_t>(owner[f])] += dims[f];
    local_column[f] = static_cast<std::int64_t>(at);
  }
  // Forward: owners' pooled rows -> ranks' local rows.
  std::vector<std::vector<float>> owned(ranks), staging(ranks), local(ranks);
  for (int r = 0; r < ranks; ++r) {
    const auto& plan = plans[static_cast<std::size_t>(r)];
    owned[r].assign(static_cast<std::size_t>(plan.global_rows() * plan.owned_width()), -1.0f);
    for (std::int64_t g = 0; g < plan.global_rows(); ++g) {
      for (std::size_t f = 0; f < dims.size(); ++f) {
        if (owner[f] != r) continue;
        for (std::int64_t c = 0; c < dims[f]; ++c) {
          owned[r][static_cast<std::size_t>(g * plan.owned_width() + owned_column[f] + c)] = tag(g, static_cast<int>(f), c);
        }
      }
    }
    staging[r].assign(static_cast<std::size_t>(plan.staging_elements()), -2.0f);
    local[r].assign(static_cast<std::size_t>(plan.local_rows() * plan.local_width), -3.0f);
  }
  simulate_all_to_allv(plans, true, owned, &staging);
  for (int r = 0; r < ranks; ++r) {
    const auto& plan = plans[static_cast<std::size_t>(r)];
    ASSERT_TRUE(copy_staging_columns(plan, ExchangeDirection::kOwnedToLocal, DType::kF32, DeviceKind::kCpu,
                                     staging[r].data(), local[r].data(), nullptr).is_ok());
    for (std::int64_t b = 0; b < plan.local_rows(); ++b) {
      for (std::size_t f = 0; f < dims.size(); ++f) {
        for (std::int64_t c = 0; c < dims[f]; ++c) {
          ASSERT_EQ(local[r][static_cast<std::size_t>(b * plan.local_width + local_column[f] + c)],
                    tag(plan.row_begin[static_cast<std::size_t>(r)] + b, static_cast<int>(f), c))
              << "rank " << r << " row " << b << " feature " << f << " column " << c;
        }
      }
    }
  }
  // Backward: the local rows (now the gradients) back to the owners, which must get owned again.
  std::vector<std::vector<float>> returned(ranks);
  for (int r = 0; r < ranks; ++r) {
    std::fill(staging[r].begin(), staging[r].end(), -2.0f);
    ASSERT_TRUE(copy_staging_columns(plans[static_cast<std::size_t>(r)], ExchangeDirection::kLocalToOwned, DType::kF32,
                                     DeviceKind::kCpu, staging[r].data(), local[r].data(), nullptr).is_ok());
    returned[r].assign(owned[r].size(), -4.0f);
  }
  simulate_all_to_allv(plans, false, staging, &returned);
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(returned[r], owned[r]) << "rank " << r;
}

TEST(GpuDistExchange, OneRankIsTheIdentityAndBadOwnersAreNamed) {
  auto plan = make_pooled_exchange_plan({4, 4, 8}, {0, 0, 0}, {5}, 0);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  EXPECT_TRUE(plan->is_identity());
  ASSERT_EQ(plan->owner_runs[0].size(), 1u);
  EXPECT_EQ(plan->owner_runs[0][0].width, 16);
  auto local = comm::make_local_communicator();
  std::vector<float> buffer(80);
  EXPECT_FALSE(run_pooled_exchange(*local, *plan, ExchangeDirection::kOwnedToLocal, DType::kF32, DeviceKind::kCpu,
                                   buffer.data(), buffer.data(), buffer.data(), nullptr).is_ok());
  auto bad = make_pooled_exchange_plan({4, 4}, {0, 2}, {1, 1}, 0);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("feature_owner[1]: 2 is out of range [0, 2)"), std::string::npos)
      << bad.status().to_string();
  auto rank = make_pooled_exchange_plan({4}, {0}, {1}, 3);
  ASSERT_FALSE(rank.is_ok());
  EXPECT_NE(rank.status().message().find("rank: 3"), std::string::npos);
}

model::ModelSpec tiny_spec() {
  auto spec = model::preset("tiny");
  EXPECT_TRUE(spec.is_ok());
  return *spec;
}

// One rank holding every placement type (two row shards of a table, four column shards, a
// replica, whole tables: the fold path through the host) is the single-process step bit for bit:
// row shards regroup bags of at most 2 ids (x + 0 = x, a + b = b + a), column shards pool the same
// ids per column, the replica runs the single-process backward; sum and mean pooling.
TEST(GpuDistStep, OneRankWithEveryPlacementTypeEqualsTheSingleProcessModelBitForBit) {
  for (const auto pooling : {embedding::PoolingMode::kSum, embedding::PoolingMode::kMean}) {
    auto spec = tiny_spec();
    spec.embedding.optimizer.kind = embedding::OptimizerKind::kAdagrad;  // column shards need element-wise state
    spec.embedding.pooling = pooling;
    StepBenchOptions bench;
    bench.device = DeviceKind::kCpu;
    bench.batch_size = 32;
    auto single = DlrmModel::create(spec, bench.batch_size, ExecutionContext{});
    auto sharded = DlrmModel::create(dense_only_spec(spec), bench.batch_size, ExecutionContext{});
    ASSERT_TRUE(single.is_ok() && sharded.is_ok());
    ASSERT_TRUE(single->initialize(6).is_ok());
    ASSERT_TRUE(sharded->initialize(6).is_ok());
    auto local = comm::make_local_communicator();
    auto step = ShardedStep::create(spec, comm::testing::mixed_placement(spec, 1, 0), bench.batch_size, *local,
                                    *sharded, 6);
    ASSERT_TRUE(step.is_ok()) << step.status().to_string();
    ASSERT_FALSE((*step)->layout().replicated_features.empty());
    for (int s = 0; s < 3; ++s) {
      bench.seed = 40 + static_cast<std::uint64_t>(s);
      const data::Batch batch = synthetic_step_batch(spec, bench);
      auto want = single->train_step(batch, s);
      ASSERT_TRUE((*step)->stage_global_batch(batch).is_ok());
      auto got = sharded->train_step(dense_slice(batch, 0, batch.batch_size), s);
      ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
      EXPECT_EQ(*got, *want) << "step " << s << (pooling == embedding::PoolingMode::kMean ? ", mean" : ", sum");
    }
  }
}

TEST(GpuDistStep, OneRankOnTheCpuEqualsTheSingleProcessModelBitForBit) {
  const auto spec = tiny_spec();
  StepBenchOptions bench;
  bench.device = DeviceKind::kCpu;
  bench.batch_size = 64;
  bench.seed = 3;
  ExecutionContext context;
  auto single = DlrmModel::create(spec, bench.batch_size, context);
  auto sharded = DlrmModel::create(dense_only_spec(spec),
                                   bench.batch_size, context);
  ASSERT_TRUE(single.is_ok() && sharded.is_ok());
  ASSERT_TRUE(single->initialize(5).is_ok());
  ASSERT_TRUE(sharded->initialize(5).is_ok());
  auto local = comm::make_local_communicator();
  auto step = ShardedStep::create(spec, TablePlacement{std::vector<int>(spec.embedding.tables.size(), 0), {}},
                                  bench.batch_size, *local, *sharded, 5);
  ASSERT_TRUE(step.is_ok()) << step.status().to_string();
  EXPECT_TRUE((*step)->plan().is_identity());
  for (int s = 0; s < 4; ++s) {
    bench.seed = 10 + static_cast<std::uint64_t>(s);
    const data::Batch batch = synthetic_step_batch(spec, bench);
    auto want = single->train_step(batch, s);
    ASSERT_TRUE((*step)->stage_global_batch(batch).is_ok());
    auto got = sharded->train_step(dense_slice(batch, 0, batch.batch_size), s);
    ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
    EXPECT_EQ(*got, *want) << "step " << s;
  }
  auto wrong_rows = (*step)->stage_global_batch(synthetic_step_batch(spec, [] {
    StepBenchOptions more;
    more.device = DeviceKind::kCpu;
    more.batch_size = 65;
    return more;
  }()));
  ASSERT_FALSE(wrong_rows.is_ok());
  EXPECT_NE(wrong_rows.message().find("batch: 65 rows"), std::string::npos) << wrong_rows.to_string();
}

DistTrainOptions tiny_run(const std::filesystem::path& out) {
  DistTrainOptions options;
  options.train.spec = tiny_spec();
  options.train.synthetic_samples = 3000;
  options.train.batch_size = 128;
  options.train.max_steps = 8;
  options.train.eval_every_steps = 4;
  options.train.out_dir = out.string();
  options.train.num_threads = 1;
  options.train.seed = 9;
  return options;
}

TEST(GpuDistTrainer, OneRankOnTheCpuEqualsTrainBitForBit) {
  const auto root = std::filesystem::temp_directory_path() / "parity_unit_gpu_dist_trainer";
  std::filesystem::remove_all(root);
  const DistTrainOptions options = tiny_run(root / "sharded");
  TrainOptions single_options = tiny_run(root / "single").train;
  single_options.data_dir = "";
  auto want = train(single_options);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  auto host = comm::make_local_communicator();
  auto collective = comm::make_local_communicator();
  auto got = train_distributed_gpu(options, *host, *collective);
  ASSERT_TRUE(got.is_ok()) << got.status().to_string();
  EXPECT_EQ(got->step_losses, want->step_losses);
  ASSERT_EQ(got->evaluations.size(), want->evaluations.size());
  for (std::size_t e = 0; e < got->evaluations.size(); ++e) {
    EXPECT_EQ(got->evaluations[e].ne, want->evaluations[e].ne) << "evaluation " << e;
    EXPECT_EQ(got->evaluations[e].auc, want->evaluations[e].auc) << "evaluation " << e;
  }
  EXPECT_TRUE(std::filesystem::exists(got->checkpoint_path)) << got->checkpoint_path;
  // Resuming from the finished run's checkpoint set continues from its last step.
  DistTrainOptions resumed = options;
  resumed.train.resume = ResumeMode::kFromLatestCheckpoint;
  resumed.train.max_steps = 10;
  auto more = train_distributed_gpu(resumed, *host, *collective);
  ASSERT_TRUE(more.is_ok()) << more.status().to_string();
  EXPECT_EQ(more->resumed_from_step, 8);
  std::filesystem::remove_all(root);
}

TEST(GpuDistTrainer, OptionErrorsNameTheOption) {
  const auto root = std::filesystem::temp_directory_path() / "parity_unit_gpu_dist_errors";
  DistTrainOptions options = tiny_run(root);
  auto host = comm::make_local_communicator();
  auto collective = comm::make_local_communicator();
  options.gradient_chunks = 2;
  auto chunks = train_distributed_gpu(options, *host, *collective);
  ASSERT_FALSE(chunks.is_ok());
  EXPECT_NE(chunks.status().message().find("gradient-chunks: 2"), std::string::npos) << chunks.status().to_string();
  options.gradient_chunks = 0;
  options.placement.table_owner.assign(options.train.spec.embedding.tables.size(), 0);
  options.placement.table_owner[3] = 1;
  auto outside = train_distributed_gpu(options, *host, *collective);
  ASSERT_FALSE(outside.is_ok());
  EXPECT_NE(outside.status().message().find("placement: table 3 is on rank 1, outside [0, 1)"), std::string::npos)
      << outside.status().to_string();
  options.placement.table_owner.clear();
  // What the sharded step cannot run is refused naming the table, never replaced by the greedy
  // placement: column-wise with tiny's row-wise Adagrad (no column shard sees a row's mean g^2).
  ASSERT_EQ(options.train.spec.embedding.optimizer.kind, embedding::OptimizerKind::kRowwiseAdagrad);
  options.placement.tables.resize(options.train.spec.embedding.tables.size());
  for (std::size_t t = 0; t < options.placement.tables.size(); ++t) {
    options.placement.tables[t].shards = {plan::Shard{0, 0, options.train.spec.embedding.tables[t].num_rows, 0,
                                                      options.train.spec.embedding.tables[t].dim}};
  }
  options.placement.tables[2].type = plan::ShardingType::kColumnWise;
  auto column_wise = train_distributed_gpu(options, *host, *collective);
  ASSERT_FALSE(column_wise.is_ok());
  const std::string table_name = options.train.spec.embedding.tables[2].name;
  EXPECT_NE(column_wise.status().message().find("table '" + table_name + "' (column_wise): column_wise with row-wise "
                                                "Adagrad"),
            std::string::npos)
      << column_wise.status().to_string();
  EXPECT_EQ(column_wise.status().code(), StatusCode::kUnsupported);
  options.placement.tables[2].type = plan::ShardingType::kTableWise;  // all table-wise: accepted as owners
  options.placement.tables.clear();
  options.train.device = DeviceKind::kGpu;  // a CPU build has no GPU backend; a GPU one, no device comm here
  auto device = train_distributed_gpu(options, *host, *collective);
  ASSERT_FALSE(device.is_ok());
  EXPECT_NE(device.status().message().find("device"), std::string::npos) << device.status().to_string();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace parity::train::detail
