// The embedding all-to-alls of model-parallel training, independent of how a plan was chosen:
// a table is owned by one rank (`table_owner[t]`), every rank holds a slice of the batch.
//  1. route_sparse_batch: each rank's CSR indices go to the tables' owners (counts exchange, then
//     all_to_allv of lengths and of ids); an owner receives its tables for the global batch, the
//     ranks' samples concatenated in rank order.
//  2. return_pooled_outputs: each owner's pooled rows go back to the ranks holding the samples.
//  3. send_pooled_gradients: the backward of 2.
// Host buffers (local and MPI communicators); the device path comes with the NCCL trainer.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/comm/communicator.hpp"

namespace parity::comm {

/// One rank's batch, table-major CSR: lengths[t * batch_size + b] ids for sample b of table t;
/// ids concatenated in (table, sample) order.
struct SparseBatch {
  int num_tables = 0;
  std::int64_t batch_size = 0;
  std::vector<std::int64_t> lengths;
  std::vector<std::int64_t> ids;
  Status validate() const;
};

/// What a rank receives: the tables it owns (ascending), for the global batch.
struct RoutedSparseBatch {
  std::vector<int> tables;
  std::vector<std::int64_t> rank_batch_sizes;  // samples of each rank, in rank order
  std::int64_t global_batch_size = 0;
  std::vector<std::int64_t> lengths;  // [tables.size()][global_batch_size]
  std::vector<std::int64_t> ids;      // (owned table, global sample) order
};

/// Collective: every rank passes its own batch (batch sizes may differ) and the same owners.
Result<RoutedSparseBatch> route_sparse_batch(Communicator& comm, const SparseBatch& local,
                                             const std::vector<int>& table_owner);

/// Pooled embedding layouts (row-major, `dtype` elements):
///   owned:  [global_batch_size][owned width], this rank's tables in RoutedSparseBatch::tables
///           order, table t `table_dims[t]` wide;
///   local:  [local batch][sum of table_dims], table t's columns at the sum of the dims before it.
struct PooledLayout {
  std::vector<int> table_owner;
  std::vector<std::int64_t> table_dims;
  DType dtype = DType::kF32;
};

/// Owners' pooled rows to the ranks holding the samples (the forward output all-to-all).
Status return_pooled_outputs(Communicator& comm, const RoutedSparseBatch& routed,
                             const PooledLayout& layout, const void* owned_pooled,
                             void* local_pooled);
/// Gradients of the local pooled outputs back to the owners (its backward).
Status send_pooled_gradients(Communicator& comm, const RoutedSparseBatch& routed,
                             const PooledLayout& layout, const void* local_gradients,
                             void* owned_gradients);

}  // namespace parity::comm
