// The GPU distributed trainer's step (ShardedStep) on the MPI world's CPU ranks (the same code as
// on NCCL, with host buffers): where the tables live must not change a single bit. Every placement
// runs the same dense arithmetic (each rank its L rows, the same rank-order gradient sum, the same
// global BCE), so the losses of "all tables on rank 0", "table t on rank t mod R" and the reverse
// are equal only if the pooled rows reach the right ranks and columns and their gradients the
// right owners (the exchange plan, the all_to_allv layouts, TBE over owned feature subsets).
// The trainer end to end (evaluation gathers, checkpoints) is held to the same rule, and the
// step's losses stay within the derived rounding bound of the single-process model's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "dist/dist_world.hpp"
#include "dist/placements.hpp"
#include "parity/comm/mpi.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "parity/train/step_bench.hpp"
#include "train/gpu_dist_step.hpp"

namespace parity::comm::testing {
namespace {

class ShardedStepDist : public DistTest {};

std::vector<train::TablePlacement> placements(const model::ModelSpec& spec, int ranks) {
  const std::size_t tables = spec.embedding.tables.size();
  std::vector<int> on_zero(tables, 0), round_robin(tables), reverse(tables);
  for (std::size_t t = 0; t < tables; ++t) {
    round_robin[t] = static_cast<int>(t) % ranks;
    reverse[t] = ranks - 1 - static_cast<int>(t) % ranks;
  }
  return {{on_zero, {}}, {round_robin, {}}, {reverse, {}}};
}

// Losses of `steps` steps of the sharded step on `comm` (every rank returns the global loss).
std::vector<double> sharded_losses(Communicator& comm, const model::ModelSpec& spec, const train::TablePlacement& placement,
                                   std::int64_t global_rows, int steps,
                                   train::detail::DenseReductionOptions reduction = {}) {
  const std::int64_t local_rows = global_rows / comm.size();
  ExecutionContext context;
  context.deterministic = true;
  auto model = train::detail::DlrmModel::create(train::detail::dense_only_spec(spec),
                                                local_rows, context);
  EXPECT_TRUE(model.is_ok()) << model.status().to_string();
  if (!model.is_ok() || !model->initialize(4).is_ok()) return {};
  auto step = train::detail::ShardedStep::create(spec, placement, local_rows, comm, *model, 4,
                                                 reduction);
  EXPECT_TRUE(step.is_ok()) << step.status().to_string();
  if (!step.is_ok()) return {};
  std::vector<double> losses;
  train::StepBenchOptions bench;
  bench.device = DeviceKind::kCpu;
  bench.batch_size = global_rows;
  for (int s = 0; s < steps; ++s) {
    bench.seed = 30 + static_cast<std::uint64_t>(s);
    const data::Batch batch = train::synthetic_step_batch(spec, bench);
    const Status staged = (*step)->stage_global_batch(batch);
    EXPECT_TRUE(staged.is_ok()) << staged.to_string();
    auto loss = model->train_step(
        train::detail::dense_slice(batch, comm.rank() * local_rows, local_rows), s);
    EXPECT_TRUE(loss.is_ok()) << loss.status().to_string();
    losses.push_back(loss.is_ok() ? *loss : -1.0);
    EXPECT_EQ(comm.pending_collectives(), 0) << "step " << s << " left dense buckets in flight";
  }
  return losses;
}

// Not bitwise: a rank's GEMMs run on L rows (OpenBLAS blocks by shape) and the dense gradient is
// summed over ranks, so reductions round in other orders. Each of tiny's 5 layers reduces at most
// K = 64 terms per output and each backward reduction at most G rows: another order moves a
// result by at most gamma(n) = n*u / (1 - n*u) relative to the sum of magnitudes (Higham, Thm 4.4;
// u = 2^-24). With SGD (no Adagrad normalisation to amplify tiny gradients) a step's perturbation
// carries into the next one linearly, so step s may differ by (s + 1) times the per-step bound
// 5 * gamma(G), relative to the loss. Routing a gradient to the wrong rows or columns changes the
// losses by orders of magnitude more.
void expect_within_reordering_bound(const std::vector<double>& got, const std::vector<double>& single, double rows) {
  const double u = std::ldexp(1.0, -24);
  const double gamma = rows * u / (1 - rows * u);
  ASSERT_EQ(single.size(), got.size());
  for (std::size_t s = 0; s < got.size(); ++s) {
    const double bound = static_cast<double>(s + 1) * 5 * gamma * std::abs(single[s]);
    EXPECT_LE(std::abs(got[s] - single[s]), bound) << "step " << s << ": " << got[s] << " vs " << single[s];
  }
}

model::ModelSpec tiny_with_sgd() {
  auto spec = model::load_spec("tiny").value();
  spec.dense_optimizer.kind = model::DenseOptimizerKind::kSgd;
  spec.embedding.optimizer.kind = embedding::OptimizerKind::kSgd;
  return spec;
}

TEST_F(ShardedStepDist, PlacementDoesNotChangeTheLossesBitForBit) {
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;  // the same dense gradient sum every run
  auto comm = make_mpi_communicator(options);
  ASSERT_TRUE(comm.is_ok()) << comm.status().to_string();
  const auto spec = tiny_with_sgd();
  const auto all = placements(spec, (*comm)->size());
  const auto want = sharded_losses(**comm, spec, all[0], 48 * (*comm)->size(), 4);
  ASSERT_EQ(want.size(), 4u);
  for (std::size_t p = 1; p < all.size(); ++p) {
    EXPECT_EQ(sharded_losses(**comm, spec, all[p], 48 * (*comm)->size(), 4), want) << "placement " << p;
  }
  // Against the single-process model (this rank runs it alone on the whole batch).
  auto local = make_local_communicator();
  const auto single = sharded_losses(*local, spec, {std::vector<int>(spec.embedding.tables.size(), 0), {}},
                                     48 * (*comm)->size(), 4);
  expect_within_reordering_bound(want, single, 48.0 * (*comm)->size());
}

// Row-wise (uneven, a rank holding two shards of a table), column-wise, data-parallel and
// table-wise tables together (mixed_placement, two rank orders) give the losses of all tables on
// rank 0 bit for bit, for the argument above plus: column shards pool the same ids per column,
// replicas run the single-process backward on the gathered global batch, and tiny's row-wise
// tables have at most 2 ids per bag (a regrouped sum of <= 2 terms is the same bits). With mean
// pooling too (row shards pool sums, the sample's rank scales them as the TBE does). Hence also
// the single-process losses within the bound above.
TEST_F(ShardedStepDist, EveryPlacementTypeGivesTheTableWiseLossesBitForBit) {
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto comm = make_mpi_communicator(options);
  ASSERT_TRUE(comm.is_ok()) << comm.status().to_string();
  const int ranks = (*comm)->size();
  auto local = make_local_communicator();
  for (const auto pooling : {embedding::PoolingMode::kSum, embedding::PoolingMode::kMean}) {
    auto spec = tiny_with_sgd();
    spec.embedding.pooling = pooling;
    SCOPED_TRACE(pooling == embedding::PoolingMode::kSum ? "sum pooling" : "mean pooling");
    const auto want = sharded_losses(**comm, spec, placements(spec, ranks)[0], 16 * ranks, 3);
    ASSERT_EQ(want.size(), 3u);
    // Two rank orders with sum pooling; mean pooling changes only the fold's scaling (one order).
    const std::vector<int> firsts = pooling == embedding::PoolingMode::kSum ? std::vector<int>{0, ranks - 1}
                                                                            : std::vector<int>{ranks - 1};
    for (const int first : firsts) {
      const train::TablePlacement mixed = mixed_placement(spec, ranks, first);
      EXPECT_EQ(sharded_losses(**comm, spec, mixed, 16 * ranks, 3), want) << "mixed placement from rank " << first;
    }
    const auto single = sharded_losses(*local, spec, placements(spec, 1)[0], 16 * ranks, 3);
    expect_within_reordering_bound(want, single, 16.0 * ranks);
  }
}

TEST_F(ShardedStepDist, OverlappedDenseReductionEqualsReductionAfterBackward) {
  auto comm = make_mpi_communicator();
  ASSERT_TRUE(comm.is_ok()) << comm.status().to_string();
  const auto spec = model::load_spec("tiny").value();
  const auto owners = placements(spec, (*comm)->size())[1];
  for (const std::int64_t bucket_bytes : {std::int64_t{1} << 10, std::int64_t{4} << 20}) {
    train::detail::DenseReductionOptions overlapped, after_backward;
    overlapped.bucket_bytes = after_backward.bucket_bytes = bucket_bytes;
    after_backward.is_overlapped = false;
    const auto want = sharded_losses(**comm, spec, owners, 16 * (*comm)->size(), 3, after_backward);
    ASSERT_EQ(want.size(), 3u);
    EXPECT_EQ(sharded_losses(**comm, spec, owners, 16 * (*comm)->size(), 3, overlapped), want)
        << "bucket_bytes " << bucket_bytes;
  }
}

TEST_F(ShardedStepDist, TrainerOnAllRanksIsPlacementIndependent) {
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto comm = make_mpi_communicator(options);
  ASSERT_TRUE(comm.is_ok()) << comm.status().to_string();
  const auto spec = model::load_spec("tiny").value();
  const int ranks = (*comm)->size();
  const std::string root = shared_temp_dir("parity_dist_sharded_trainer");
  ASSERT_FALSE(root.empty()) << "mkdtemp failed on rank 0";
  std::vector<train::TrainSummary> summaries;
  for (const auto& owners : placements(spec, ranks)) {
    train::DistTrainOptions run;
    run.train.spec = spec;
    run.train.synthetic_samples = 3000;
    run.train.batch_size = 24 * ranks;
    run.train.max_steps = 6;
    run.train.eval_every_steps = 3;
    run.train.num_threads = 1;
    run.train.out_dir = root + "/p" + std::to_string(summaries.size());
    run.placement = owners;
    auto summary = train::train_distributed_gpu(run, **comm, **comm);
    ASSERT_TRUE(summary.is_ok()) << summary.status().to_string();
    ASSERT_EQ(summary->step_losses.size(), 6u);
    summaries.push_back(*summary);
  }
  for (std::size_t p = 1; p < summaries.size(); ++p) {
    EXPECT_EQ(summaries[p].step_losses, summaries[0].step_losses) << "placement " << p;
    ASSERT_EQ(summaries[p].evaluations.size(), summaries[0].evaluations.size());
    for (std::size_t e = 0; e < summaries[p].evaluations.size(); ++e) {
      EXPECT_EQ(summaries[p].evaluations[e].auc, summaries[0].evaluations[e].auc) << "placement " << p;
    }
  }
  ASSERT_TRUE((*comm)->barrier().is_ok());
  if ((*comm)->rank() == 0) std::filesystem::remove_all(root);
}


// The trainer's checkpoints re-shard (the CPU trainer's piece sets). A set written by R ranks with
// one mixed placement resumes (a) on the same R ranks with another mixed placement: placement
// changes no bit (above), so the losses equal the uninterrupted run's bit for bit; (b) on R / 2
// ranks (the world's first ones, a communicator of their own) with a third placement: the restored
// history is the same bits, and each later step is within twice the reordering bound of the
// uninterrupted run's (both runs are within the bound of one process from the same restored
// state; the triangle inequality). A piece restored from the wrong rows or columns, or a lost
// optimiser state, moves the losses by far more.
TEST_F(ShardedStepDist, TrainerCheckpointReshardsToHalfTheRanks) {
  CommOptions options;
  options.reduction_order = ReductionOrder::kRankOrder;
  auto comm = make_mpi_communicator(options);
  ASSERT_TRUE(comm.is_ok()) << comm.status().to_string();
  const int ranks = (*comm)->size(), fewer = std::max(1, ranks / 2);
  auto spec = tiny_with_sgd();
  spec.embedding.optimizer.kind = embedding::OptimizerKind::kAdagrad;  // state re-cut with the pieces
  const std::string root = shared_temp_dir("parity_dist_sharded_reshard");
  ASSERT_FALSE(root.empty()) << "mkdtemp failed on rank 0";
  const auto run_options = [&](const std::string& out, std::int64_t steps, const train::TablePlacement& placement) {
    train::DistTrainOptions run;
    run.train.spec = spec;
    run.train.synthetic_samples = 3000;
    run.train.batch_size = 24 * ranks;
    run.train.max_steps = steps;
    run.train.num_threads = 1;
    run.train.out_dir = out;
    run.placement = placement;
    return run;
  };
  auto whole = train::train_distributed_gpu(run_options(root + "/whole", 6, mixed_placement(spec, ranks, 0)), **comm,
                                            **comm);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  auto first = train::train_distributed_gpu(run_options(root + "/first", 3, mixed_placement(spec, ranks, 0)), **comm,
                                            **comm);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  if ((*comm)->rank() == 0) {  // the set, alone, into the resumed runs' directories
    for (const char* dir : {"/same", "/fewer"}) {
      std::filesystem::create_directories(root + dir);
      for (int r = 0; r < ranks; ++r) {
        const std::string name = std::filesystem::path(train::dist_checkpoint_path(root, r, ranks)).filename();
        std::filesystem::copy_file(root + "/first/" + name, root + dir + "/" + name);
      }
    }
  }
  ASSERT_TRUE((*comm)->barrier().is_ok());
  auto same_options = run_options(root + "/same", 6, mixed_placement(spec, ranks, ranks - 1));
  same_options.train.resume = train::ResumeMode::kFromLatestCheckpoint;
  auto same = train::train_distributed_gpu(same_options, **comm, **comm);
  ASSERT_TRUE(same.is_ok()) << same.status().to_string();
  EXPECT_EQ(same->resumed_from_step, 3);
  EXPECT_EQ(same->step_losses, whole->step_losses);

  auto half = make_mpi_communicator_of_first_ranks(fewer, options);
  ASSERT_TRUE(half.is_ok()) << half.status().to_string();
  if (*half != nullptr) {
    auto fewer_options = run_options(root + "/fewer", 6, mixed_placement(spec, fewer, 0));
    fewer_options.train.resume = train::ResumeMode::kFromLatestCheckpoint;
    auto resumed = train::train_distributed_gpu(fewer_options, **half, **half);
    ASSERT_TRUE(resumed.is_ok()) << resumed.status().to_string();
    EXPECT_EQ(resumed->resumed_from_step, 3);
    ASSERT_EQ(resumed->step_losses.size(), 6u);
    const std::vector<double> history(resumed->step_losses.begin(), resumed->step_losses.begin() + 3);
    EXPECT_EQ(history, std::vector<double>(whole->step_losses.begin(), whole->step_losses.begin() + 3));
    const double u = std::ldexp(1.0, -24), rows = 24.0 * ranks;
    const double gamma = rows * u / (1 - rows * u);
    for (std::size_t s = 3; s < 6; ++s) {
      const double bound = 2 * static_cast<double>(s - 2) * 5 * gamma * std::abs(whole->step_losses[s]);
      EXPECT_LE(std::abs(resumed->step_losses[s] - whole->step_losses[s]), bound)
          << "step " << s << ": " << resumed->step_losses[s] << " vs " << whole->step_losses[s];
    }
  }
  ASSERT_TRUE((*comm)->barrier().is_ok());
  if ((*comm)->rank() == 0) std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace parity::comm::testing
