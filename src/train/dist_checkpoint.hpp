// Per-rank checkpoints of the distributed trainer (internal). Rank r of R writes
// OUT/checkpoint.rank<r>-of-<R>.ckpt (the single-rank file format: atomic, CRC-checked) with the
// run's "meta" (plus num_ranks, rank, gradient_chunks and "pieces": every table piece of the set
// as [table, rank, row_begin, row_end, col_begin, col_end]), the step losses, its pieces
// ("embedding.table<t>[.rows<a>-<b>.cols<c>-<d>].weights|state1|state2"; data-parallel tables on
// rank 0 only, their replicas being equal) and, on rank 0, the dense part ("dense.*", the
// single-rank blob names). Loading picks the complete set with the latest step (this rank count
// on a tie), reads rank 0's file for the dense part and, for each piece this rank holds now, the
// overlapping rows and columns of the saved pieces: a set written on R ranks with any placement
// restores on any rank count and placement. Sets from before pieces (a "table_owner" list of
// whole tables) load too.
#pragma once

#include <string>
#include <vector>

#include "parity/comm/communicator.hpp"
#include "parity/train/dist_trainer.hpp"
#include "train/dist_dense.hpp"
#include "train/dist_embedding.hpp"
#include "train/train_state.hpp"

namespace parity::train::detail {

/// What one rank saves or restores.
struct DistCheckpointParts {
  const DistTrainOptions* options = nullptr;
  std::vector<int> table_owner;
  int gradient_chunks = 0;
  DenseReplica* dense = nullptr;
  EmbeddingShard* shard = nullptr;
  /// Every piece of the placement (ShardLayout::saved_pieces); empty: whole tables by table_owner.
  std::vector<TablePiece> saved_pieces;
  EmbeddingShard* replicas = nullptr;  // the data-parallel tables (optional)
  /// Without `dense`: the dense part's host buffers under the single-rank names ("dense.weights",
  /// "dense.state1", "dense.state2"), read on save and written on load (the GPU trainer's copies).
  std::vector<TableBlob> dense_blobs;
};

/// This rank's file (not collective: the caller agrees on the outcome across ranks).
Status save_dist_checkpoint(const DistCheckpointParts& parts, const comm::Communicator& comm,
                            const TrainState& state);
/// Restores from the latest complete set in the output directory; returns false when there is
/// none (not collective; every rank sees the same files).
Result<bool> load_dist_checkpoint(const DistCheckpointParts& parts, const comm::Communicator& comm,
                                  TrainState* state);

}  // namespace parity::train::detail
