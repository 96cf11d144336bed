// ShardedStep: the distributed step's embedding exchange, loss and dense reduction (see
// gpu_dist_step.hpp).
#include "train/gpu_dist_step.hpp"

#include <algorithm>
#include <vector>

#include "core/device_hooks.hpp"
#include "parity/nn/loss.hpp"

namespace parity::train::detail {

namespace {

using parity::detail::CopyKind;

// Bytes between a host vector and a buffer of `device` (kHostToDevice or kDeviceToHost), in the
// stream's order: the host side of the fold.
Status copy_with_host(DeviceKind device, void* to, const void* from, std::int64_t bytes, CopyKind kind, void* stream) {
  if (bytes == 0) return Status::ok();
  if (device == DeviceKind::kCpu) {
    std::copy_n(static_cast<const char*>(from), bytes, static_cast<char*>(to));
    return Status::ok();
  }
  PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("pooled fold"));
  return hooks->copy(to, from, bytes, kind, stream);
}

}  // namespace

model::ModelSpec dense_only_spec(const model::ModelSpec& spec) {
  model::ModelSpec stub = spec;
  for (auto& table : stub.embedding.tables) table.num_rows = 1;
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

Result<std::unique_ptr<ShardedStep>> ShardedStep::create(const model::ModelSpec& spec, const TablePlacement& placement,
                                                         std::int64_t local_rows, comm::Communicator& comm,
                                                         DlrmModel& model, std::uint64_t seed,
                                                         DenseReductionOptions reduction) {
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
  PARITY_ASSIGN_OR_RETURN(step->layout_, make_shard_layout(placement, spec, comm.size()));
  const ShardLayout& layout = step->layout_;
  step->unit_widths_ = layout.unit_widths();
  step->unit_owners_ = layout.unit_owners();
  step->replicated_width_ = layout.replicated_width(spec);
  step->is_folded_ = !layout.replicated_features.empty() ||
                     std::any_of(layout.units.begin(), layout.units.end(), [](const auto& unit) { return unit.is_partial; });
  if (step->is_folded_ && step->act_dtype_ != DType::kF32) {
    return unsupported("placement: row-wise and data-parallel tables are folded into the pooled rows in fp32 on ",
                       "the host; this model's activations are ", dtype_name(step->act_dtype_),
                       " (place them table_wise or column_wise, or train in fp32)");
  }
  PARITY_RETURN_IF_ERROR(step->create_shards(seed));
  PARITY_RETURN_IF_ERROR(step->allocate(local_rows));
  model.set_step_exchange(step.get());
  return step;
}

// The pieces of this rank (units) and the replicas, with the single-process initial values.
Status ShardedStep::create_shards(std::uint64_t seed) {
  const int rank = comm_.rank();
  std::vector<int> piece_of_unit;
  std::vector<TablePiece> pieces = layout_.pieces_of(rank, &piece_of_unit);
  // Folded: row shards see part of a bag, so units pool sums and the fold takes the mean.
  const auto pooling = is_folded_ ? embedding::PoolingMode::kSum : spec_.embedding.pooling;
  PARITY_ASSIGN_OR_RETURN(shard_, EmbeddingShard::create(spec_, std::move(pieces), piece_of_unit, context_, pooling));
  shard_.set_output_dtype(act_dtype_);
  std::vector<int> replica_of_feature;
  std::vector<TablePiece> replicated = layout_.replica_pieces(spec_, rank, &replica_of_feature);
  PARITY_ASSIGN_OR_RETURN(replicas_, EmbeddingShard::create(spec_, std::move(replicated), replica_of_feature, context_,
                                                            spec_.embedding.pooling));
  PARITY_RETURN_IF_ERROR(initialize_pieces(spec_, seed, context_, {&shard_, &replicas_}, nullptr));
  return upload();
}

Status ShardedStep::allocate(std::int64_t local_rows) {
  const DeviceKind device = context_.device;
  const int ranks = comm_.size();
  max_local_rows_ = local_rows;
  local_rows_ = local_rows;
  if (!layout_.units.empty()) {
    PARITY_ASSIGN_OR_RETURN(plan_, make_pooled_exchange_plan(unit_widths_, unit_owners_,
                                                             std::vector<std::int64_t>(ranks, local_rows), comm_.rank()));
  }
  const std::int64_t global_rows = local_rows * ranks;
  const auto act = static_cast<std::int64_t>(dtype_size_bytes(act_dtype_));
  if (ranks > 1) {
    if (!layout_.units.empty()) {
      const std::int64_t owned = global_rows * plan_.owned_width(), staging = plan_.staging_elements();
      PARITY_ASSIGN_OR_RETURN(owned_pooled_, Buffer::allocate(device, owned * act, "owned pooled"));
      PARITY_ASSIGN_OR_RETURN(owned_grad_, Buffer::allocate(device, owned * 4, "owned pooled gradients"));
      PARITY_ASSIGN_OR_RETURN(staging_, Buffer::allocate(device, staging * act, "pooled staging"));
      PARITY_ASSIGN_OR_RETURN(staging_grad_, Buffer::allocate(device, staging * 4, "pooled gradient staging"));
    }
    PARITY_ASSIGN_OR_RETURN(global_logits_, Buffer::allocate(device, global_rows * act, "global logits"));
    PARITY_ASSIGN_OR_RETURN(global_labels_, Buffer::allocate(device, global_rows * 4, "global labels"));
    PARITY_ASSIGN_OR_RETURN(global_grad_, Buffer::allocate(device, global_rows * act, "global logit gradients"));
  }
  if (is_folded_) {
    const std::int64_t units = local_rows * layout_.units_width(), replicated = local_rows * replicated_width_;
    PARITY_ASSIGN_OR_RETURN(units_, Buffer::allocate(device, units * 4, "pooled units"));
    PARITY_ASSIGN_OR_RETURN(unit_grad_, Buffer::allocate(device, units * 4, "pooled unit gradients"));
    PARITY_ASSIGN_OR_RETURN(replica_pooled_, Buffer::allocate(device, replicated * 4, "replica pooled"));
    PARITY_ASSIGN_OR_RETURN(replica_grad_, Buffer::allocate(device, replicated * 4, "replica gradients"));
    PARITY_ASSIGN_OR_RETURN(replica_global_grad_,
                            Buffer::allocate(device, replicated * ranks * 4, "replica global gradients"));
  }
  return Status::ok();
}

ShardedStep::~ShardedStep() {
  model_.set_step_exchange(nullptr);
  // A step abandoned mid-way (an error) leaves buckets started: complete them, so the
  // communicator does not hold this model's gradient buffer (a destructor cannot report).
  for (const auto& handle : in_flight_) (void)comm_.wait(handle);
}

Status ShardedStep::download() {
  PARITY_RETURN_IF_ERROR(shard_.download());
  return replicas_.download();
}

Status ShardedStep::upload() {
  PARITY_RETURN_IF_ERROR(shard_.upload());
  return replicas_.upload();
}

Status ShardedStep::stage_global_batch(const data::Batch& global) {
  const std::int64_t rows = global.batch_size, features = spec_.num_features();
  const int ranks = comm_.size(), rank = comm_.rank();
  PARITY_CHECK_ARG(rows >= ranks && rows % ranks == 0 && rows / ranks <= max_local_rows_, "batch: ", rows,
                   " rows; expected a multiple of the ", ranks, " ranks up to ", max_local_rows_ * ranks);
  PARITY_CHECK_ARG(static_cast<std::int64_t>(global.offsets.size()) == rows * features + 1, "batch: offsets has ",
                   global.offsets.size(), " entries; expected ", rows * features + 1);
  const std::int64_t local = rows / ranks;
  if (local != local_rows_ && !layout_.units.empty()) {
    PARITY_ASSIGN_OR_RETURN(plan_, make_pooled_exchange_plan(unit_widths_, unit_owners_,
                                                             std::vector<std::int64_t>(ranks, local), rank));
  }
  local_rows_ = local;
  const bool is_whole_batch = static_cast<std::int64_t>(layout_.units.size()) == features && !is_folded_ &&
                              std::all_of(unit_owners_.begin(), unit_owners_.end(), [&](int o) { return o == rank; });
  if (is_whole_batch) {  // every table here, whole: the batch's own CSR (no host copy on a GPU)
    PARITY_RETURN_IF_ERROR(shard_.set_batch_csr(global.offsets, global.indices, rows));
  } else if (!layout_.units.empty()) {
    // This rank's units' bags of the global batch, unit-major (row shards' ids rebased).
    const comm::SparseBatch units = unit_slice(global, layout_, 0, rows);
    std::vector<std::int64_t> lengths, ids;
    for (std::size_t u = 0, at = 0; u < layout_.units.size(); ++u) {
      for (std::int64_t b = 0; b < rows; ++b) {
        const std::int64_t length = units.lengths[u * static_cast<std::size_t>(rows) + static_cast<std::size_t>(b)];
        if (unit_owners_[u] == rank) {
          lengths.push_back(length);
          ids.insert(ids.end(), units.ids.begin() + static_cast<std::ptrdiff_t>(at),
                     units.ids.begin() + static_cast<std::ptrdiff_t>(at) + length);
        }
        at += static_cast<std::size_t>(length);
      }
    }
    shard_.set_batch(std::move(lengths), std::move(ids), rows);
  }
  if (is_folded_) mean_scale_ = mean_scales(global, spec_, rank * local, local);
  if (!layout_.replicated_features.empty()) {
    feature_slice(global, layout_.replicated_features, 0, rows, &replica_lengths_, &replica_ids_);
    feature_slice(global, layout_.replicated_features, rank * local, local, &replica_local_lengths_,
                  &replica_local_ids_);
  }
  return Status::ok();
}

Status ShardedStep::check_rows(std::int64_t batch_size) const {
  PARITY_CHECK_ARG(batch_size == local_rows_, "batch: ", batch_size, " rows on rank ", comm_.rank(),
                   "; the step was staged for ", local_rows_);
  return Status::ok();
}

Status ShardedStep::forward_pooled(std::int64_t batch_size, void* pooled) {
  PARITY_RETURN_IF_ERROR(check_rows(batch_size));
  if (!layout_.units.empty()) {
    void* local = is_folded_ ? units_.data() : pooled;
    void* owned = plan_.is_identity() ? local : owned_pooled_.data();
    PARITY_RETURN_IF_ERROR(shard_.forward(owned));
    if (!plan_.is_identity()) {
      PARITY_RETURN_IF_ERROR(run_pooled_exchange(comm_, plan_, ExchangeDirection::kOwnedToLocal, act_dtype_,
                                                 context_.device, owned, staging_.data(), local, context_.stream));
    }
  }
  if (!is_folded_) return Status::ok();
  if (!layout_.replicated_features.empty()) {
    replicas_.set_batch(replica_local_lengths_, replica_local_ids_, batch_size);
    PARITY_RETURN_IF_ERROR(replicas_.forward(replica_pooled_.data()));
  }
  return fold_on_host(batch_size, pooled);
}

// units [L][U] and the replicas' [L][W] -> pooled [L][P] (fp32) through the host.
Status ShardedStep::fold_on_host(std::int64_t rows, void* pooled) {
  const DeviceKind device = context_.device;
  const std::int64_t units = rows * layout_.units_width(), replicated = rows * replicated_width_;
  host_units_.resize(static_cast<std::size_t>(units));
  host_replica_.resize(static_cast<std::size_t>(replicated));
  host_pooled_.assign(static_cast<std::size_t>(rows * spec_.pooled_embedding_dim()), 0.0f);
  PARITY_RETURN_IF_ERROR(copy_with_host(device, host_units_.data(), units_.data(), units * 4,
                                        CopyKind::kDeviceToHost, context_.stream));
  PARITY_RETURN_IF_ERROR(copy_with_host(device, host_replica_.data(), replica_pooled_.data(),
                                        replicated * 4, CopyKind::kDeviceToHost, context_.stream));
  fold_units(layout_, spec_, rows, host_units_.data(), mean_scale_.empty() ? nullptr : mean_scale_.data(),
             host_pooled_.data());
  copy_feature_columns(spec_, layout_.replicated_features, rows, ColumnCopy::kPackedToPooled, host_replica_.data(),
                       host_pooled_.data());
  return copy_with_host(device, pooled, host_pooled_.data(),
                        static_cast<std::int64_t>(host_pooled_.size()) * 4, CopyKind::kHostToDevice,
                        context_.stream);
}

Result<double> ShardedStep::loss(std::int64_t batch_size, const void* logits, const float* labels, void* grad_logits) {
  PARITY_RETURN_IF_ERROR(check_rows(batch_size));
  double loss = 0;
  if (comm_.size() == 1) {
    PARITY_RETURN_IF_ERROR(nn::bce_with_logits({batch_size, act_dtype_}, {logits, labels, &loss, grad_logits}, context_));
    return loss;
  }
  // Every rank computes the global batch's loss and d loss / d logit (divided by G, as one rank
  // would), then keeps its rows' gradients: the dense gradients are then summed across ranks.
  const std::int64_t global = batch_size * comm_.size();
  const auto act = static_cast<std::int64_t>(dtype_size_bytes(act_dtype_));
  PARITY_RETURN_IF_ERROR(comm_.all_gather(logits, global_logits_.data(), batch_size, act_dtype_, context_.stream));
  PARITY_RETURN_IF_ERROR(comm_.all_gather(labels, global_labels_.data(), batch_size, DType::kF32, context_.stream));
  PARITY_RETURN_IF_ERROR(nn::bce_with_logits(
      {global, act_dtype_}, {global_logits_.data(), global_labels_.as<float>(), &loss, global_grad_.data()}, context_));
  const std::int64_t begin = comm_.rank() * batch_size;
  PARITY_RETURN_IF_ERROR(copy_rows_2d(context_.device, grad_logits, batch_size * act,
                                      global_grad_.as<char>() + begin * act, batch_size * act, batch_size * act, 1,
                                      context_.stream));
  return loss;
}

Status ShardedStep::backward_pooled(std::int64_t batch_size, const float* grad_pooled, std::int64_t step) {
  PARITY_RETURN_IF_ERROR(check_rows(batch_size));
  const DeviceKind device = context_.device;
  const float* local_grad = grad_pooled;
  if (is_folded_) {  // the fold's transpose through the host
    host_grad_.resize(static_cast<std::size_t>(batch_size * spec_.pooled_embedding_dim()));
    PARITY_RETURN_IF_ERROR(copy_with_host(device, host_grad_.data(), grad_pooled,
                                          static_cast<std::int64_t>(host_grad_.size()) * 4,
                                          CopyKind::kDeviceToHost, context_.stream));
    host_unit_grad_.assign(static_cast<std::size_t>(batch_size * layout_.units_width()), 0.0f);
    spread_to_units(layout_, spec_, batch_size, host_grad_.data(), mean_scale_.empty() ? nullptr : mean_scale_.data(),
                    host_unit_grad_.data());
    PARITY_RETURN_IF_ERROR(copy_with_host(device, unit_grad_.data(), host_unit_grad_.data(),
                                          static_cast<std::int64_t>(host_unit_grad_.size()) * 4,
                                          CopyKind::kHostToDevice, context_.stream));
    local_grad = unit_grad_.as<float>();
  }
  if (!layout_.units.empty()) {
    const float* owned_grad = local_grad;
    if (!plan_.is_identity()) {
      PARITY_RETURN_IF_ERROR(run_pooled_exchange(comm_, plan_, ExchangeDirection::kLocalToOwned, DType::kF32, device,
                                                 owned_grad_.data(), staging_grad_.data(),
                                                 const_cast<float*>(local_grad), context_.stream));
      owned_grad = owned_grad_.as<float>();
    }
    PARITY_RETURN_IF_ERROR(shard_.backward(owned_grad, step));
  }
  if (layout_.replicated_features.empty()) return Status::ok();
  return replica_backward(batch_size, step);
}

// The replicas' columns of every rank's pooled gradient gathered; every replica runs the same
// fused backward over the global batch (the single-process update).
Status ShardedStep::replica_backward(std::int64_t rows, std::int64_t step) {
  const std::int64_t mine = rows * replicated_width_;
  host_replica_.resize(static_cast<std::size_t>(mine));
  copy_feature_columns(spec_, layout_.replicated_features, rows, ColumnCopy::kPooledToPacked, host_grad_.data(),
                       host_replica_.data());
  PARITY_RETURN_IF_ERROR(copy_with_host(context_.device, replica_grad_.data(), host_replica_.data(),
                                        mine * 4, CopyKind::kHostToDevice, context_.stream));
  PARITY_RETURN_IF_ERROR(comm_.all_gather(replica_grad_.data(), replica_global_grad_.data(), mine, DType::kF32,
                                          context_.stream));
  replicas_.set_batch(replica_lengths_, replica_ids_, rows * comm_.size());
  return replicas_.backward(replica_global_grad_.as<float>(), step);
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
