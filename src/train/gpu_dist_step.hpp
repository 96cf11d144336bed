// ShardedStep (internal): the StepExchange of a DlrmModel on one rank of a distributed run over a
// collective communicator (NCCL on GPU ranks; a host communicator runs the same code on CPU ranks,
// which is how the CPU tests reach it). Tables are placed whole on owner ranks; the rank's model
// is built from a "stub" spec (tables owned elsewhere shrunk to one row), so its embedding buffers
// hold exactly the owned tables at the single-process layout's table order, initialised to the
// single-process values. Per step:
//   stage_global_batch: the owned features' ids of the global batch (every rank reads it; the
//     routing is host-side slicing) copied to the device once;
//   forward_pooled: TBE over the owned features for the global batch, pooled rows to their ranks
//     (all_to_allv + column copies, gpu_dist_exchange.hpp);
//   loss: logits and labels all-gathered, BCE over the global batch (the single-process loss);
//   backward_pooled: pooled gradients back to the owners, fused TBE backward and update;
//   dense_gradients_ready / reduce_dense_gradients: in-place sum all-reduce of the dense gradient
//     in buckets through the communicator's asynchronous API (start_all_reduce / wait). Overlapped:
//     the top MLP's buckets start as soon as its backward is done (NCCL queues them on its own
//     stream after the model's work so far; MPI progresses them inside the later collectives and
//     progress()), the rest after the backward, and every bucket is waited for before the update
//     (NCCL: the model's stream waits, the host does not block). After the backward: the same
//     buckets, started and waited for in the same order, one at a time: the same bits.
// With one rank nothing is exchanged, copied or reduced: the TBE writes the model's pooled buffer
// and reads its gradient, the loss is the model's own, and a sum over one rank is the gradient.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "parity/comm/communicator.hpp"
#include "parity/data/dataset.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/buffer.hpp"
#include "train/dlrm_model.hpp"
#include "train/gpu_dist_exchange.hpp"

namespace parity::train::detail {

/// The spec a rank's model is built from: tables owned elsewhere have one row (their initial
/// values are drawn per table, so the owned tables and the dense part match the full model's).
model::ModelSpec stub_spec_for_rank(const model::ModelSpec& spec, const std::vector<int>& table_owner, int rank);

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
  /// `model` was created from stub_spec_for_rank(spec, table_owner, comm.rank()) for `local_rows`
  /// rows; the step is set as its exchange (and unset on destruction). Every rank calls this.
  static Result<std::unique_ptr<ShardedStep>> create(const model::ModelSpec& spec, const std::vector<int>& table_owner,
                                                     std::int64_t local_rows, comm::Communicator& comm,
                                                     DlrmModel& model, DenseReductionOptions reduction = {});
  ~ShardedStep() override;
  ShardedStep(const ShardedStep&) = delete;
  ShardedStep& operator=(const ShardedStep&) = delete;

  /// The owned features' bags of the global batch (R·L rows, L <= local_rows of create(), every
  /// rank L rows) to the device; the model's stage_inputs then takes this rank's L rows.
  Status stage_global_batch(const data::Batch& global);

  Status forward_pooled(std::int64_t batch_size, void* pooled) override;
  Result<double> loss(std::int64_t batch_size, const void* logits, const float* labels, void* grad_logits) override;
  Status backward_pooled(std::int64_t batch_size, const float* grad_pooled, std::int64_t step) override;
  Status dense_gradients_ready(float* grads, std::int64_t begin, std::int64_t count) override;
  Status reduce_dense_gradients(float* grads, std::int64_t count) override;

  const PooledExchangePlan& plan() const { return plan_; }

 private:
  ShardedStep(comm::Communicator& comm, DlrmModel& model) : comm_(comm), model_(model) {}
  embedding::TbeProblem owned_problem() const;
  Status check_rows(std::int64_t batch_size) const;
  // Starts the all-reduces of [begin, begin + count) in buckets (waiting for each one at once
  // unless overlapped).
  Status start_buckets(float* grads, std::int64_t begin, std::int64_t count);

  comm::Communicator& comm_;
  DlrmModel& model_;
  model::ModelSpec spec_;
  ExecutionContext context_;
  DType act_dtype_ = DType::kF32;
  std::vector<int> owned_features_;  // spec feature indices, ascending
  embedding::TbeLayout owned_layout_;  // the stub tables, owned features only
  std::vector<std::int64_t> feature_dims_;
  std::vector<int> feature_owner_;
  std::int64_t max_local_rows_ = 0;
  PooledExchangePlan plan_;  // for the staged batch's rows
  Buffer* weights_ = nullptr;
  Buffer* state1_ = nullptr;
  Buffer* state2_ = nullptr;
  std::int64_t owned_indices_ = 0;  // of the staged global batch
  std::vector<std::int64_t> host_offsets_, host_ids_;
  Buffer ids_, offsets_;
  // Multi-rank only: [G][P_me] pooled rows and their gradients, staging blocks, the gathered
  // logits, labels and logit gradients.
  Buffer owned_pooled_, owned_grad_, staging_, staging_grad_, global_logits_, global_labels_, global_grad_;
  DenseReductionOptions reduction_;
  std::vector<comm::CollectiveHandle> in_flight_;  // started dense buckets, in start order
  std::int64_t ready_begin_ = -1;  // the block dense_gradients_ready announced, this step
};

}  // namespace parity::train::detail
