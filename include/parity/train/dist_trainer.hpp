// train_distributed(): the trainer on R ranks of a host communicator (MPI under mpirun, or the
// local one for R = 1). Every rank reads the same global batch and trains on its slice (rank r
// holds samples [r·B/R, (r+1)·B/R)); embedding tables are placed table-wise (whole on one rank),
// row-wise (contiguous row ranges on several ranks), column-wise (column ranges) or data-parallel
// (a replica on every rank), from a plan or a greedy table-wise placement by bytes. Sharded tables
// are reached through the input and pooled-output all-to-alls; the dense part is replicated and
// its gradients are summed across ranks before every rank applies the same update. Checkpoints are per rank and can be restored
// on another rank count (re-sharding). See docs/training.md, "Distributed".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/comm/communicator.hpp"
#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"
#include "parity/plan/plan.hpp"
#include "parity/train/trainer.hpp"

namespace parity::train {

/// One table's placement: its type and its shards (plan::Shard: rank, row and column range).
/// table_wise: one shard, the whole table; row_wise: shards tiling the rows in order, all columns;
/// column_wise: shards tiling the columns in order, all rows; data_parallel: one whole shard on
/// every rank.
struct ShardedTable {
  plan::ShardingType type = plan::ShardingType::kTableWise;
  std::vector<plan::Shard> shards;
};

/// Where the tables live. `tables` (one entry per table of the spec) when not empty; else
/// table_owner[t]: the rank holding table t whole (every feature reading it goes there).
struct TablePlacement {
  std::vector<int> table_owner;
  std::vector<ShardedTable> tables;
};

/// Greedy table-wise placement: tables by descending bytes (weights + optimiser state), each to
/// the rank with the fewest bytes so far (lowest rank on ties). Deterministic.
Result<TablePlacement> greedy_table_placement(const model::ModelSpec& spec, int num_ranks);
/// The plan's placement, all four types (its shard ranges); the plan's rank count must be
/// num_ranks. What the trainer cannot run is refused naming the table and the reason (column-wise
/// with row-wise Adagrad, shards that do not tile the table).
Result<TablePlacement> placement_from_plan(const plan::Plan& plan, const model::ModelSpec& spec,
                                           int num_ranks);

struct DistTrainOptions {
  /// The single-rank options: batch_size is the global batch (split evenly across ranks).
  /// Output files (metrics, SVG, summary) are written by rank 0; checkpoints by every rank.
  TrainOptions train;
  /// Empty (no owners, no tables): greedy_table_placement. Else its tables or owners.
  TablePlacement placement;
  /// The dense weight gradient is computed per chunk of the global batch (chunk c holds samples
  /// [c·B/C, (c+1)·B/C)) and the chunks are summed in chunk order on every rank, so the update
  /// is the same bits for every rank count dividing C. 0: one chunk per rank (plain data
  /// parallelism, then summed by the communicator: fast, not rank-count independent).
  int gradient_chunks = 0;
  /// Without gradient chunks: kOverlapped all-reduces each dense gradient bucket as soon as the
  /// backward has produced it (between layers: top layers' bucket first, while the layers below
  /// are still to run); kAfterBackward reduces every bucket after the whole backward.
  enum class DenseReduction : std::uint8_t { kOverlapped, kAfterBackward };
  DenseReduction dense_reduction = DenseReduction::kOverlapped;
};

/// Collective: every rank of `comm` calls it with the same options. Returns on every rank the
/// same summary (losses and evaluations are computed from gathered logits, identical on all
/// ranks). The checkpoint files are OUT/checkpoint.rank<r>-of-<R>.ckpt; resume reads every
/// rank's file of the latest complete set, whatever its rank count, and re-places the tables.
Result<TrainSummary> train_distributed(const DistTrainOptions& options, comm::Communicator& comm);

/// The checkpoint file of rank `rank` of `num_ranks` in `out_dir`.
std::string dist_checkpoint_path(const std::string& out_dir, int rank, int num_ranks);

}  // namespace parity::train
