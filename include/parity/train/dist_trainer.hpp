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
  /// Without gradient chunks: kOverlapped starts each dense gradient bucket's all-reduce
  /// (Communicator::start_all_reduce) as soon as the backward has produced it (top layers' bucket
  /// first), polls MPI's progress between layers, and waits for all of them after the embedding
  /// backward, before the optimiser step; kAfterBackward reduces every bucket, blocking, after
  /// the backward. The same collectives in the same order: the same bits.
  enum class DenseReduction : std::uint8_t { kOverlapped, kAfterBackward };
  DenseReduction dense_reduction = DenseReduction::kOverlapped;
  /// Most bytes of dense gradient per bucket (a layer larger than this is a bucket of its own).
  /// Small enough that the top layers' bucket starts early, large enough that the per-call
  /// latency stays small against the transfer: 4 MiB (torch DDP uses 25 MiB for GPUs).
  std::int64_t bucket_bytes = 4 << 20;
};

/// Where the dense gradient reduction's time goes on this rank, per step (means over the steps
/// after the first, which includes allocations), without gradient chunks.
struct DenseReductionTimings {
  std::int64_t steps = 0;  // steps measured
  int buckets = 0;
  /// Buckets started from inside the dense backward (at its layer boundaries, the last after its
  /// final layer), per step; blocking: 0.
  double started_during_backward = 0;
  /// The dense backward's compute: its wall time minus the bucket calls made inside it.
  double backward_ms = 0;
  /// Wall time spent inside bucket communication calls (flatten + start, progress polls, wait +
  /// copy back): the communication the step waits for, not hidden behind compute.
  double exposed_comm_ms = 0;
  /// The part of exposed_comm_ms spent in the waits before the update (the rest: starts, polls).
  double wait_ms = 0;
  /// From the first bucket's start to the return of the last wait (blocking: = exposed).
  double in_flight_ms = 0;
};

/// Collective: every rank of `comm` calls it with the same options. Returns on every rank the
/// same summary (losses and evaluations are computed from gathered logits, identical on all
/// ranks). The checkpoint files are OUT/checkpoint.rank<r>-of-<R>.ckpt; resume reads every
/// rank's file of the latest complete set, whatever its rank count, and re-places the tables.
/// `timings` (optional) receives this rank's dense reduction timings.
Result<TrainSummary> train_distributed(const DistTrainOptions& options, comm::Communicator& comm,
                                       DenseReductionTimings* timings = nullptr);

/// The checkpoint file of rank `rank` of `num_ranks` in `out_dir`.
std::string dist_checkpoint_path(const std::string& out_dir, int rank, int num_ranks);

}  // namespace parity::train
