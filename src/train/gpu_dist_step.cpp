// ShardedStep: the distributed step's embedding exchange, loss and dense reduction (see
// gpu_dist_step.hpp).
#include "train/gpu_dist_step.hpp"

#include <algorithm>
#include <vector>

#include "parity/embedding/tbe_op.hpp"
#include "parity/nn/loss.hpp"

namespace parity::train::detail {

namespace {

Buffer* find_state(DlrmModel& model, const char* name) {
  for (const auto& piece : model.state_buffers()) {
    if (piece.name == name) return piece.buffer;
  }
  return nullptr;
}

}  // namespace

model::ModelSpec stub_spec_for_rank(const model::ModelSpec& spec, const std::vector<int>& table_owner, int rank) {
  model::ModelSpec stub = spec;
  for (std::size_t t = 0; t < stub.embedding.tables.size() && t < table_owner.size(); ++t) {
    if (table_owner[t] != rank) stub.embedding.tables[t].num_rows = 1;
  }
  return stub;
}

data::Batch dense_slice(const data::Batch& batch, std::int64_t begin, std::int64_t count) {
  data::Batch local;
  local.batch_size = count;
  const auto width = static_cast<std::int64_t>(batch.dense.size()) / std::max<std::int64_t>(batch.batch_size, 1);
  local.dense.assign(batch.dense.begin() + begin * width, batch.dense.begin() + (begin + count) * width);
  local.labels.assign(batch.labels.begin() + begin, batch.labels.begin() + begin + count);
  return local;
}

Result<std::unique_ptr<ShardedStep>> ShardedStep::create(const model::ModelSpec& spec,
                                                         const std::vector<int>& table_owner,
                                                         std::int64_t local_rows, comm::Communicator& comm,
                                                         DlrmModel& model, DenseReductionOptions reduction) {
  PARITY_CHECK_ARG(table_owner.size() == spec.embedding.tables.size(), "placement: ", table_owner.size(),
                   " owners for ", spec.embedding.tables.size(), " tables");
  PARITY_CHECK_ARG(local_rows >= 1, "batch: ", local_rows, " rows per rank; expected >= 1");
  PARITY_CHECK_ARG(reduction.bucket_bytes >= 1, "bucket_bytes: ", reduction.bucket_bytes, " must be >= 1");
  const DeviceKind device = model.context().device;
  PARITY_CHECK_ARG(comm.buffer_device() == device, "comm: the ", comm.backend_name(), " communicator moves ",
                   device_kind_name(comm.buffer_device()), " buffers; the model runs on ", device_kind_name(device));
  std::unique_ptr<ShardedStep> step(new ShardedStep(comm, model));
  step->spec_ = spec;
  step->reduction_ = reduction;
  step->context_ = model.context();
  step->act_dtype_ = model.activation_dtype();
  const int rank = comm.rank(), ranks = comm.size();
  std::vector<std::int64_t> dims;
  std::vector<int> feature_owner;
  std::vector<int> owned_tables_of_features;
  for (int f = 0; f < spec.num_features(); ++f) {
    const int table = spec.embedding.features[static_cast<std::size_t>(f)].table;
    dims.push_back(spec.embedding.tables[static_cast<std::size_t>(table)].dim);
    feature_owner.push_back(table_owner[static_cast<std::size_t>(table)]);
    if (feature_owner.back() == rank) {
      step->owned_features_.push_back(f);
      owned_tables_of_features.push_back(table);
    }
  }
  PARITY_ASSIGN_OR_RETURN(step->plan_, make_pooled_exchange_plan(
                                           dims, feature_owner, std::vector<std::int64_t>(ranks, local_rows), rank));
  step->feature_dims_ = std::move(dims);
  step->feature_owner_ = std::move(feature_owner);
  step->max_local_rows_ = local_rows;
  // The stub spec's tables (the model's buffers), only the owned features: the weights offsets
  // and row bases are the model's own.
  const model::ModelSpec stub = stub_spec_for_rank(spec, table_owner, rank);
  PARITY_ASSIGN_OR_RETURN(const embedding::TbeLayout stub_layout, stub.tbe_layout());
  if (!step->owned_features_.empty()) {
    PARITY_ASSIGN_OR_RETURN(step->owned_layout_,
                            embedding::TbeLayout::create(stub_layout.tables(), owned_tables_of_features));
  }
  step->weights_ = find_state(model, "embedding.weights");
  step->state1_ = find_state(model, "embedding.state1");
  step->state2_ = find_state(model, "embedding.state2");
  PARITY_CHECK_ARG(step->weights_ != nullptr && step->weights_->size_bytes() ==
                       stub_layout.total_weight_elements() * static_cast<std::int64_t>(dtype_size_bytes(spec.embedding.weight_dtype)),
                   "model: its embedding buffers are not the stub spec's (create it from stub_spec_for_rank)");
  const std::int64_t global_rows = local_rows * ranks;
  std::int64_t owned_ids_per_sample = 0;
  for (const int f : step->owned_features_) owned_ids_per_sample += spec.embedding.features[static_cast<std::size_t>(f)].ids_per_sample;
  const auto owned_features = static_cast<std::int64_t>(step->owned_features_.size());
  PARITY_ASSIGN_OR_RETURN(step->ids_, Buffer::allocate(device, global_rows * owned_ids_per_sample * 8, "owned ids"));
  PARITY_ASSIGN_OR_RETURN(step->offsets_, Buffer::allocate(device, (global_rows * owned_features + 1) * 8, "owned offsets"));
  if (!step->plan_.is_identity()) {
    const auto act = static_cast<std::int64_t>(dtype_size_bytes(step->act_dtype_));
    const std::int64_t owned = global_rows * step->plan_.owned_width(), staging = step->plan_.staging_elements();
    PARITY_ASSIGN_OR_RETURN(step->owned_pooled_, Buffer::allocate(device, owned * act, "owned pooled"));
    PARITY_ASSIGN_OR_RETURN(step->owned_grad_, Buffer::allocate(device, owned * 4, "owned pooled gradients"));
    PARITY_ASSIGN_OR_RETURN(step->staging_, Buffer::allocate(device, staging * act, "pooled staging"));
    PARITY_ASSIGN_OR_RETURN(step->staging_grad_, Buffer::allocate(device, staging * 4, "pooled gradient staging"));
    PARITY_ASSIGN_OR_RETURN(step->global_logits_, Buffer::allocate(device, global_rows * act, "global logits"));
    PARITY_ASSIGN_OR_RETURN(step->global_labels_, Buffer::allocate(device, global_rows * 4, "global labels"));
    PARITY_ASSIGN_OR_RETURN(step->global_grad_, Buffer::allocate(device, global_rows * act, "global logit gradients"));
  }
  model.set_step_exchange(step.get());
  return step;
}

ShardedStep::~ShardedStep() {
  model_.set_step_exchange(nullptr);
  // A step abandoned mid-way (an error) leaves buckets started: complete them, so the
  // communicator does not hold this model's gradient buffer (a destructor cannot report).
  for (const auto& handle : in_flight_) (void)comm_.wait(handle);
}

Status ShardedStep::stage_global_batch(const data::Batch& global) {
  const std::int64_t rows = global.batch_size, features = spec_.num_features();
  const int ranks = plan_.num_ranks;
  PARITY_CHECK_ARG(rows >= ranks && rows % ranks == 0 && rows / ranks <= max_local_rows_, "batch: ", rows,
                   " rows; expected a multiple of the ", ranks, " ranks up to ", max_local_rows_ * ranks);
  if (rows / ranks != plan_.local_rows()) {
    PARITY_ASSIGN_OR_RETURN(plan_, make_pooled_exchange_plan(feature_dims_, feature_owner_,
                                                             std::vector<std::int64_t>(ranks, rows / ranks), plan_.rank));
  }
  PARITY_CHECK_ARG(static_cast<std::int64_t>(global.offsets.size()) == rows * features + 1, "batch: offsets has ",
                   global.offsets.size(), " entries; expected ", rows * features + 1);
  if (static_cast<std::int64_t>(owned_features_.size()) == features) {  // every table here: the batch's CSR
    owned_indices_ = static_cast<std::int64_t>(global.indices.size());
    PARITY_CHECK_ARG(owned_indices_ * 8 <= ids_.size_bytes(), "batch: ", owned_indices_, " ids exceed the ",
                     ids_.size_bytes() / 8, " the step holds (more ids per sample than the spec says)");
    PARITY_RETURN_IF_ERROR(ids_.copy_from_host(global.indices.data(), owned_indices_ * 8));
    return offsets_.copy_from_host(global.offsets.data(), static_cast<std::int64_t>(global.offsets.size()) * 8);
  }
  // Feature-major CSR of the owned features (the batch's own order, other features left out).
  host_offsets_.assign(1, 0);
  host_ids_.clear();
  for (const int f : owned_features_) {
    for (std::int64_t b = 0; b < rows; ++b) {
      const auto bag = static_cast<std::size_t>(f * rows + b);
      host_ids_.insert(host_ids_.end(), global.indices.begin() + global.offsets[bag],
                       global.indices.begin() + global.offsets[bag + 1]);
      host_offsets_.push_back(static_cast<std::int64_t>(host_ids_.size()));
    }
  }
  owned_indices_ = static_cast<std::int64_t>(host_ids_.size());
  PARITY_CHECK_ARG(owned_indices_ * 8 <= ids_.size_bytes(), "batch: ", owned_indices_, " ids for this rank's tables "
                   "exceed the ", ids_.size_bytes() / 8, " the step holds (more ids per sample than the spec says)");
  PARITY_RETURN_IF_ERROR(ids_.copy_from_host(host_ids_.data(), owned_indices_ * 8));
  return offsets_.copy_from_host(host_offsets_.data(), static_cast<std::int64_t>(host_offsets_.size()) * 8);
}

embedding::TbeProblem ShardedStep::owned_problem() const {
  embedding::TbeProblem problem;
  problem.layout = owned_layout_;
  problem.batch_size = plan_.global_rows();
  problem.num_indices = owned_indices_;
  problem.index_dtype = DType::kI64;
  problem.weight_dtype = spec_.embedding.weight_dtype;
  problem.output_dtype = act_dtype_;
  problem.pooling = spec_.embedding.pooling;
  return problem;
}

Status ShardedStep::check_rows(std::int64_t batch_size) const {
  PARITY_CHECK_ARG(batch_size == plan_.local_rows(), "batch: ", batch_size, " rows on rank ", plan_.rank,
                   "; the step was staged for ", plan_.local_rows());
  return Status::ok();
}

Status ShardedStep::forward_pooled(std::int64_t batch_size, void* pooled) {
  PARITY_RETURN_IF_ERROR(check_rows(batch_size));
  void* owned = plan_.is_identity() ? pooled : owned_pooled_.data();
  if (!owned_features_.empty()) {
    embedding::TbeForwardArgs args;
    args.weights = weights_->data();
    args.batch = embedding::TbeBatchView{ids_.data(), offsets_.data(), nullptr};
    args.output = owned;
    PARITY_RETURN_IF_ERROR(embedding::tbe_forward(owned_problem(), args, context_));
  }
  if (plan_.is_identity()) return Status::ok();
  return run_pooled_exchange(comm_, plan_, ExchangeDirection::kOwnedToLocal, act_dtype_, context_.device, owned,
                             staging_.data(), pooled, context_.stream);
}

Result<double> ShardedStep::loss(std::int64_t batch_size, const void* logits, const float* labels, void* grad_logits) {
  PARITY_RETURN_IF_ERROR(check_rows(batch_size));
  double loss = 0;
  if (plan_.is_identity()) {
    PARITY_RETURN_IF_ERROR(nn::bce_with_logits({batch_size, act_dtype_}, {logits, labels, &loss, grad_logits}, context_));
    return loss;
  }
  // Every rank computes the global batch's loss and d loss / d logit (divided by G, as one rank
  // would), then keeps its rows' gradients: the dense gradients are then summed across ranks.
  const std::int64_t global = plan_.global_rows();
  const auto act = static_cast<std::int64_t>(dtype_size_bytes(act_dtype_));
  PARITY_RETURN_IF_ERROR(comm_.all_gather(logits, global_logits_.data(), batch_size, act_dtype_, context_.stream));
  PARITY_RETURN_IF_ERROR(comm_.all_gather(labels, global_labels_.data(), batch_size, DType::kF32, context_.stream));
  PARITY_RETURN_IF_ERROR(nn::bce_with_logits(
      {global, act_dtype_}, {global_logits_.data(), global_labels_.as<float>(), &loss, global_grad_.data()}, context_));
  const std::int64_t begin = plan_.row_begin[static_cast<std::size_t>(plan_.rank)];
  PARITY_RETURN_IF_ERROR(copy_rows_2d(context_.device, grad_logits, batch_size * act,
                                      global_grad_.as<char>() + begin * act, batch_size * act, batch_size * act, 1,
                                      context_.stream));
  return loss;
}

Status ShardedStep::backward_pooled(std::int64_t batch_size, const float* grad_pooled, std::int64_t step) {
  PARITY_RETURN_IF_ERROR(check_rows(batch_size));
  const float* owned_grad = grad_pooled;
  if (!plan_.is_identity()) {
    PARITY_RETURN_IF_ERROR(run_pooled_exchange(comm_, plan_, ExchangeDirection::kLocalToOwned, DType::kF32,
                                               context_.device, owned_grad_.data(), staging_grad_.data(),
                                               const_cast<float*>(grad_pooled), context_.stream));
    owned_grad = owned_grad_.as<float>();
  }
  if (owned_features_.empty()) return Status::ok();
  embedding::OptimizerParams optimizer = spec_.embedding.optimizer;
  optimizer.learning_rate = static_cast<float>(spec_.lr_schedule.learning_rate(spec_.embedding.optimizer.learning_rate, step));
  optimizer.step = step + 1;
  embedding::TbeBackwardArgs args;
  args.optimizer = optimizer;
  args.weights = weights_->data();
  args.state1 = state1_ != nullptr ? state1_->as<float>() : nullptr;
  args.state2 = state2_ != nullptr ? state2_->as<float>() : nullptr;
  args.batch = embedding::TbeBatchView{ids_.data(), offsets_.data(), nullptr};
  args.grad_output = owned_grad;
  return embedding::tbe_backward_fused(owned_problem(), args, context_);
}

Status ShardedStep::start_buckets(float* grads, std::int64_t begin, std::int64_t count) {
  const std::int64_t bucket_floats = std::max<std::int64_t>(1, reduction_.bucket_bytes / 4);
  for (std::int64_t at = begin; at < begin + count; at += bucket_floats) {
    const std::int64_t bucket = std::min(bucket_floats, begin + count - at);
    PARITY_ASSIGN_OR_RETURN(const comm::CollectiveHandle handle,
                            comm_.start_all_reduce(grads + at, grads + at, bucket, DType::kF32,
                                                   comm::ReduceOp::kSum, context_.stream));
    if (reduction_.is_overlapped) {
      in_flight_.push_back(handle);
    } else {
      PARITY_RETURN_IF_ERROR(comm_.wait(handle));
    }
  }
  return Status::ok();
}

Status ShardedStep::dense_gradients_ready(float* grads, std::int64_t begin, std::int64_t count) {
  if (comm_.size() == 1) return Status::ok();  // the sum over one rank is the gradient
  ready_begin_ = begin;
  if (!reduction_.is_overlapped) return Status::ok();  // started after the backward, same order
  PARITY_RETURN_IF_ERROR(start_buckets(grads, begin, count));
  return comm_.progress();  // MPI: get the first bucket moving before the next compute
}

Status ShardedStep::reduce_dense_gradients(float* grads, std::int64_t count) {
  if (comm_.size() == 1) return Status::ok();
  // Buckets in one order whatever the schedule: the announced block first, then the rest.
  const std::int64_t rest = ready_begin_ >= 0 ? ready_begin_ : count;
  if (!reduction_.is_overlapped && ready_begin_ >= 0) {
    PARITY_RETURN_IF_ERROR(start_buckets(grads, ready_begin_, count - ready_begin_));
  }
  ready_begin_ = -1;
  PARITY_RETURN_IF_ERROR(start_buckets(grads, 0, rest));
  // NCCL: the model's stream waits for each bucket (the update is queued after it).
  Status status = Status::ok();
  for (const auto& handle : in_flight_) {
    const Status waited = comm_.wait(handle);
    if (status.is_ok()) status = waited;
  }
  in_flight_.clear();
  return status;
}

}  // namespace parity::train::detail
