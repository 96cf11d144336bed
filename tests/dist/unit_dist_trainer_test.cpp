// The distributed trainer's pieces that need no MPI: the greedy and plan placements, and the
// option errors of train_distributed on the one-rank (local) communicator.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <filesystem>

#include "parity/comm/communicator.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/dist_trainer.hpp"

namespace parity::train {
namespace {

model::ModelSpec preset_or_die(const char* name) {
  auto spec = model::preset(name);
  EXPECT_TRUE(spec.is_ok()) << spec.status().to_string();
  return *spec;
}

TEST(DistPlacement, GreedyIsBalancedWithinOneTable) {
  const auto spec = preset_or_die("dlrm-kaggle");
  auto placement = greedy_table_placement(spec, 4);
  ASSERT_TRUE(placement.is_ok()) << placement.status().to_string();
  ASSERT_EQ(placement->table_owner.size(), spec.embedding.tables.size());
  // SGD tables: bytes are rows x dim x 4 with one dim, so rows stand for bytes.
  std::array<double, 4> rows{};
  double total = 0, largest = 0;
  for (std::size_t t = 0; t < spec.embedding.tables.size(); ++t) {
    const auto table_rows = static_cast<double>(spec.embedding.tables[t].num_rows);
    rows[static_cast<std::size_t>(placement->table_owner[t])] += table_rows;
    total += table_rows;
    largest = std::max(largest, table_rows);
  }
  // Largest first onto the lightest rank: the heaviest rank was the lightest (<= the mean) when
  // it got its last table, so it ends within one table of the mean.
  const auto [lightest, heaviest] = std::minmax_element(rows.begin(), rows.end());
  EXPECT_GT(*lightest, 0);
  EXPECT_LE(*heaviest, total / 4 + largest);
  auto again = greedy_table_placement(spec, 4);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->table_owner, placement->table_owner);
  auto zero = greedy_table_placement(spec, 0);
  ASSERT_FALSE(zero.is_ok());
  EXPECT_NE(zero.status().message().find("ranks: 0"), std::string::npos) << zero.status().to_string();
}

plan::Plan table_wise_plan(const model::ModelSpec& spec, int ranks) {
  plan::Plan plan;
  plan.num_gpus = ranks;
  plan.num_nodes = 1;
  for (std::size_t t = 0; t < spec.embedding.tables.size(); ++t) {
    plan::TablePlacement table;
    table.table = spec.embedding.tables[t].name;
    table.shards.push_back({static_cast<int>(t) % ranks, 0, spec.embedding.tables[t].num_rows, 0,
                            spec.embedding.tables[t].dim});
    plan.tables.push_back(table);
  }
  return plan;
}

TEST(DistPlacement, FromPlanTakesTableWiseOwnersAndNamesWhatItCannotRun) {
  const auto spec = preset_or_die("tiny");
  auto plan = table_wise_plan(spec, 2);
  auto placement = placement_from_plan(plan, spec, 2);
  ASSERT_TRUE(placement.is_ok()) << placement.status().to_string();
  for (std::size_t t = 0; t < spec.embedding.tables.size(); ++t) EXPECT_EQ(placement->table_owner[t], static_cast<int>(t) % 2);

  auto wrong_ranks = placement_from_plan(plan, spec, 4);
  ASSERT_FALSE(wrong_ranks.is_ok());
  EXPECT_NE(wrong_ranks.status().message().find("placed for 2 ranks"), std::string::npos);

  // Row-wise over both ranks is run; column-wise with tiny's row-wise Adagrad is refused naming
  // the table and the reason; shards that do not tile the rows name the shard.
  auto row_wise = plan;
  row_wise.tables[1].type = plan::ShardingType::kRowWise;
  row_wise.tables[1].shards = {{1, 0, 200, 0, 16}, {0, 200, 500, 0, 16}};
  auto accepted = placement_from_plan(row_wise, spec, 2);
  ASSERT_TRUE(accepted.is_ok()) << accepted.status().to_string();
  EXPECT_TRUE(accepted->table_owner.empty());
  ASSERT_EQ(accepted->tables.size(), spec.embedding.tables.size());
  EXPECT_EQ(accepted->tables[1].shards.size(), 2u);

  auto gap = row_wise;
  gap.tables[1].shards[1].row_begin = 250;
  auto gap_refused = placement_from_plan(gap, spec, 2);
  ASSERT_FALSE(gap_refused.is_ok());
  EXPECT_NE(gap_refused.status().message().find("table 'C2' (row_wise): shard 1"), std::string::npos)
      << gap_refused.status().to_string();

  auto column_wise = plan;
  column_wise.tables[2].type = plan::ShardingType::kColumnWise;
  column_wise.tables[2].shards = {{0, 0, 2000, 0, 8}, {1, 0, 2000, 8, 16}};
  auto refused = placement_from_plan(column_wise, spec, 2);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("table 'C3' (column_wise)"), std::string::npos) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("row-wise Adagrad"), std::string::npos);
  auto sgd_spec = spec;
  sgd_spec.embedding.optimizer.kind = embedding::OptimizerKind::kSgd;
  EXPECT_TRUE(placement_from_plan(column_wise, sgd_spec, 2).is_ok());
  column_wise.tables[2].shards = {{0, 0, 2000, 0, 6}, {1, 0, 2000, 6, 16}};
  auto narrow = placement_from_plan(column_wise, sgd_spec, 2);
  ASSERT_FALSE(narrow.is_ok());
  EXPECT_NE(narrow.status().message().find("6 columns are not a multiple of 4"), std::string::npos)
      << narrow.status().to_string();

  auto mean_spec = spec;  // the mean is taken at the sample's rank
  mean_spec.embedding.pooling = embedding::PoolingMode::kMean;
  EXPECT_TRUE(placement_from_plan(row_wise, mean_spec, 2).is_ok());

  auto replicated = plan;
  replicated.tables[3].type = plan::ShardingType::kDataParallel;
  replicated.tables[3].shards = {{0, 0, 100, 0, 16}, {0, 0, 100, 0, 16}};
  auto twice = placement_from_plan(replicated, spec, 2);
  ASSERT_FALSE(twice.is_ok());
  EXPECT_NE(twice.status().message().find("one replica on each of the 2 ranks"), std::string::npos)
      << twice.status().to_string();
  replicated.tables[3].shards[1].rank = 1;
  EXPECT_TRUE(placement_from_plan(replicated, spec, 2).is_ok());

  auto renamed = plan;
  renamed.tables[0].table = "other";
  auto mismatch = placement_from_plan(renamed, spec, 2);
  ASSERT_FALSE(mismatch.is_ok());
  EXPECT_NE(mismatch.status().message().find("'other'"), std::string::npos);
}

TEST(DistTrainer, OptionErrorsNameTheOption) {
  const auto out = std::filesystem::temp_directory_path() / "parity_unit_dist_trainer";
  DistTrainOptions options;
  options.train.spec = preset_or_die("tiny");
  options.train.synthetic_samples = 2000;
  options.train.batch_size = 96;
  options.train.out_dir = out.string();
  options.gradient_chunks = 7;
  auto local = comm::make_local_communicator();
  auto chunks = train_distributed(options, *local);
  ASSERT_FALSE(chunks.is_ok());
  EXPECT_NE(chunks.status().message().find("gradient-chunks: the batch 96 is not divisible by 7"), std::string::npos)
      << chunks.status().to_string();

  options.gradient_chunks = -1;
  auto negative = train_distributed(options, *local);
  ASSERT_FALSE(negative.is_ok());
  EXPECT_NE(negative.status().message().find("gradient-chunks: -1"), std::string::npos);

  options.gradient_chunks = 0;
  options.placement.table_owner = {0, 0, 1};
  auto owners = train_distributed(options, *local);
  ASSERT_FALSE(owners.is_ok());
  EXPECT_NE(owners.status().message().find("placement"), std::string::npos) << owners.status().to_string();

  options.placement.table_owner.assign(options.train.spec.embedding.tables.size(), 0);
  options.placement.table_owner[2] = 1;
  auto outside = train_distributed(options, *local);
  ASSERT_FALSE(outside.is_ok());
  EXPECT_NE(outside.status().message().find("placement: table 2 is on rank 1, outside [0, 1)"), std::string::npos)
      << outside.status().to_string();
  std::filesystem::remove_all(out);
}

TEST(DistTrainer, RefusesWhatItDoesNotRunWithTheReason) {
  const auto out = std::filesystem::temp_directory_path() / "parity_unit_dist_trainer_dcn";
  DistTrainOptions options;
  options.train.spec = preset_or_die("tiny");
  options.train.spec.interaction = model::InteractionKind::kDcnV2;
  options.train.spec.cross_rank = 8;
  options.train.synthetic_samples = 2000;
  options.train.batch_size = 64;
  options.train.out_dir = out.string();
  auto local = comm::make_local_communicator();
  auto refused = train_distributed(options, *local);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported) << refused.status().to_string();
  EXPECT_NE(refused.status().message().find("dot interaction"), std::string::npos);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace parity::train
