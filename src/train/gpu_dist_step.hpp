// ShardedStep (internal): the StepExchange of a DlrmModel on one rank of a distributed run over a
// collective communicator (NCCL on GPU ranks; a host communicator runs the same code on CPU ranks,
// which is how the CPU tests reach it). The placement is the CPU distributed trainer's
// (dist_placement.hpp: table-wise, row-wise, column-wise, data-parallel, as exchange units); the
// rank's pieces live in EmbeddingShards on the model's device (dist_embedding.hpp), initialised to
// the single-process values, and the rank's model is built from dense_only_spec (its own tables
// one row each, unused). Per step:
//   stage_global_batch: the owned units' ids of the global batch (every rank reads it; the
//     routing is host-side slicing, row shards' ids rebased) and the replicated features' ids;
//   forward_pooled: TBE over the owned units for the global batch, pooled rows to their ranks
//     (all_to_allv + column copies, gpu_dist_exchange.hpp). Table-wise and column-wise units are
//     the pooled row's columns in order, so they land in the model's pooled buffer directly;
//     with row shards (partial sums) or data-parallel tables the units and the replicas' pooled
//     rows are folded into it on the host (fold_units; fp32 activations);
//   loss: logits and labels all-gathered, BCE over the global batch (the single-process loss);
//   backward_pooled: pooled gradients back to the owners (spread to units on the host when
//     folded), fused TBE backward and update; the replicas' gradient columns all-gathered and
//     every replica runs the same backward over the global batch;
//   dense_gradients_ready / reduce_dense_gradients: in-place sum all-reduce of the dense gradient
//     in buckets through the communicator's asynchronous API (start_all_reduce / wait). Overlapped:
//     the top MLP's buckets start as soon as its backward is done (NCCL queues them on its own
//     stream after the model's work so far; MPI progresses them inside the later collectives and
//     progress()), the rest after the backward, and every bucket is waited for before the update
//     (NCCL: the model's stream waits, the host does not block). After the backward: the same
//     buckets, started and waited for in the same order, one at a time: the same bits.
// With one rank and whole tables nothing is exchanged, copied or reduced: the TBE writes the
// model's pooled buffer and reads its gradient, the loss is the model's own, and a sum over one
// rank is the gradient.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "parity/comm/communicator.hpp"
#include "parity/data/dataset.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/buffer.hpp"
#include "parity/train/dist_trainer.hpp"
#include "train/dist_embedding.hpp"
#include "train/dist_placement.hpp"
#include "train/dlrm_model.hpp"
#include "train/gpu_dist_exchange.hpp"

namespace parity::train::detail {

/// The spec a rank's model is built from: every table one row (the step holds the pieces; the
/// dense part's initial values are drawn apart from the tables', so they match the full model's).
model::ModelSpec dense_only_spec(const model::ModelSpec& spec);

/// Global rows [begin, begin + count) of `batch` without ids and offsets (a model with a
/// StepExchange stages only dense features and labels).
data::Batch dense_slice(const data::Batch& batch, std::int64_t begin, std::int64_t count);

/// How the dense gradient is summed across ranks (the CPU distributed trainer's options).
struct DenseReductionOptions {
  bool is_overlapped = true;  // buckets start during the backward; else all after it
  std::int64_t bucket_bytes = std::int64_t{4} << 20;  // most bytes per all-reduce (>= 1 float)
};

class ShardedStep final : public StepExchange {
 public:
  /// `model` was created from dense_only_spec(spec) for `local_rows` rows; the step is set as its
  /// exchange (and unset on destruction). The pieces get the single-process model's initial values
  /// for `seed`. Every rank calls this.
  static Result<std::unique_ptr<ShardedStep>> create(const model::ModelSpec& spec, const TablePlacement& placement,
                                                     std::int64_t local_rows, comm::Communicator& comm,
                                                     DlrmModel& model, std::uint64_t seed,
                                                     DenseReductionOptions reduction = {});
  ~ShardedStep() override;
  ShardedStep(const ShardedStep&) = delete;
  ShardedStep& operator=(const ShardedStep&) = delete;

  /// The owned units' bags of the global batch (R·L rows, L <= local_rows of create(), every
  /// rank L rows) and this rank's replicated bags; the model's stage_inputs then takes its L rows.
  Status stage_global_batch(const data::Batch& global);

  Status forward_pooled(std::int64_t batch_size, void* pooled) override;
  Result<double> loss(std::int64_t batch_size, const void* logits, const float* labels, void* grad_logits) override;
  Status backward_pooled(std::int64_t batch_size, const float* grad_pooled, std::int64_t step) override;
  Status dense_gradients_ready(float* grads, std::int64_t begin, std::int64_t count) override;
  Status reduce_dense_gradients(float* grads, std::int64_t count) override;

  const PooledExchangePlan& plan() const { return plan_; }
  const ShardLayout& layout() const { return layout_; }
  /// The pieces (units) and replicas, for checkpoints: download() before reading their host
  /// pieces, upload() after writing them.
  EmbeddingShard& shard() { return shard_; }
  EmbeddingShard& replicas() { return replicas_; }
  Status download();
  Status upload();

 private:
  ShardedStep(comm::Communicator& comm, DlrmModel& model) : comm_(comm), model_(model) {}
  Status create_shards(std::uint64_t seed);
  Status allocate(std::int64_t local_rows);
  Status check_rows(std::int64_t batch_size) const;
  Status fold_on_host(std::int64_t rows, void* pooled);
  Status replica_backward(std::int64_t rows, std::int64_t step);
  // Starts the all-reduces of [begin, begin + count) in buckets (waiting for each one at once
  // unless overlapped).
  Status start_buckets(float* grads, std::int64_t begin, std::int64_t count);

  comm::Communicator& comm_;
  DlrmModel& model_;
  model::ModelSpec spec_;
  ExecutionContext context_;
  DType act_dtype_ = DType::kF32;
  ShardLayout layout_;
  EmbeddingShard shard_, replicas_;
  std::vector<std::int64_t> unit_widths_;
  std::vector<int> unit_owners_;
  std::int64_t replicated_width_ = 0;
  bool is_folded_ = false;  // row-wise partials or replicated columns: the host folds
  std::int64_t max_local_rows_ = 0;
  std::int64_t local_rows_ = 0;  // of the staged batch
  PooledExchangePlan plan_;  // for the staged batch's rows (units as features)
  // The staged batch: mean pooling's 1/L per local bag (folded only), the replicated features'
  // bags of the global batch (their backward) and of this rank's rows (their forward).
  std::vector<float> mean_scale_;
  std::vector<std::int64_t> replica_lengths_, replica_ids_, replica_local_lengths_, replica_local_ids_;
  // Multi-rank: [G][U_me] pooled units and their gradients, staging blocks, the gathered logits,
  // labels and logit gradients. Folded: [L][U] units and their gradients, the replicas' pooled
  // rows [L][W] and gradients ([L][W] mine, [G][W] gathered), and the host copies of the fold.
  Buffer owned_pooled_, owned_grad_, staging_, staging_grad_, global_logits_, global_labels_, global_grad_;
  Buffer units_, unit_grad_, replica_pooled_, replica_grad_, replica_global_grad_;
  std::vector<float> host_units_, host_replica_, host_pooled_, host_grad_, host_unit_grad_;
  DenseReductionOptions reduction_;
  std::vector<comm::CollectiveHandle> in_flight_;  // started dense buckets, in start order
  std::int64_t ready_begin_ = -1;  // the block dense_gradients_ready announced, this step
};

}  // namespace parity::train::detail
