// train_distributed(): the step loop on R ranks (see parity/train/dist_trainer.hpp).
// Per step (G global batch, L = G/R rows per rank, C gradient chunks):
//   1. every rank reads the global batch and keeps its rows [r·L, (r+1)·L);
//   2. route_sparse_batch sends its exchange units' ids (dist_placement.hpp: a feature's part on
//      one shard) to the shards' owners, who pool the global batch;
//   3. return_pooled_outputs brings each rank its rows' units, folded into the pooled row (column
//      shards side by side, row shards' partial sums added in shard order); data-parallel tables
//      are pooled locally from the rank's replica;
//   4. the dense replica runs forward; the logits are all-gathered, so every rank computes the
//      BCE loss and d loss / d logit over the global batch exactly as a single rank would;
//   5. the dense backward runs per gradient chunk; send_pooled_gradients returns the units'
//      gradients to the shards' owners (every row shard gets its feature's whole gradient), whose
//      fused TBE backward updates their rows; the data-parallel columns of the pooled gradient are
//      all-gathered and every replica runs the same fused backward over the global batch;
//   6. the dense gradient is summed over the global batch (chunks in order, or the
//      communicator's bucketed all-reduce, each bucket started as soon as the backward has
//      produced it and waited for before the update) and every replica applies the same update.
#include "parity/train/dist_trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <optional>

#include "parity/comm/embedding_exchange.hpp"
#include "parity/comm/gradient_buckets.hpp"
#include "parity/data/dataset.hpp"
#include "parity/nn/loss.hpp"
#include "train/dist_checkpoint.hpp"
#include "train/dist_placement.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train {

namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}

// Every rank learns whether any rank failed; a rank that did not fail returns an error with the
// first failed rank's code naming the ranks that did (they report their own message), so no rank
// walks into a collective alone.
Status agree(comm::Communicator& comm, const Status& mine, const char* what) {
  const std::int64_t code = mine.is_ok() ? -1 : static_cast<std::int64_t>(mine.code());
  std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()), -1);
  PARITY_RETURN_IF_ERROR(comm.all_gather(&code, all.data(), 1, DType::kI64));
  if (!mine.is_ok()) return mine;
  std::string ranks;
  std::int64_t first_code = -1;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] < 0) continue;
    if (first_code < 0) first_code = all[r];
    ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  if (ranks.empty()) return Status::ok();
  return Status(static_cast<StatusCode>(first_code), std::string(what) + ": failed on rank(s) " + ranks);
}

// First of rank r's items when `items` are split in rank order as evenly as possible.
std::int64_t slice_begin(std::int64_t rows, int rank, int ranks) {
  return rows / ranks * rank + std::min<std::int64_t>(rank, rows % ranks);
}

class DistRun {
 public:
  DistRun(const DistTrainOptions& options, comm::Communicator& comm) : options_(options), comm_(comm) {}

  Status create(const TablePlacement& placement) {
    const auto& spec = options_.train.spec;
    const std::int64_t global = options_.train.batch_size;
    const int ranks = comm_.size();
    chunks_ = options_.gradient_chunks > 0 ? options_.gradient_chunks : ranks;
    PARITY_CHECK_ARG(global % ranks == 0, "batch: ", global, " is not divisible by the ", ranks, " ranks");
    PARITY_CHECK_ARG(chunks_ % ranks == 0, "gradient-chunks: ", chunks_, " is not a multiple of the ", ranks,
                     " ranks");
    PARITY_CHECK_ARG(global % chunks_ == 0, "gradient-chunks: the batch ", global, " is not divisible by ",
                     chunks_, " chunks");
    PARITY_ASSIGN_OR_RETURN(layout_, detail::make_shard_layout(placement, spec, ranks));
    ExecutionContext context;
    context.device = DeviceKind::kCpu;
    context.deterministic = options_.train.determinism == Determinism::kBitwise;
    local_rows_ = global / ranks;
    chunk_rows_ = global / chunks_;
    PARITY_ASSIGN_OR_RETURN(dense_, detail::DenseReplica::create(spec, max_slice_rows(global), context));
    std::vector<int> piece_of_unit;
    std::vector<detail::TablePiece> pieces = layout_.pieces_of(comm_.rank(), &piece_of_unit);
    // Units pool sums; a mean is taken at the sample's rank, where the bag's length is known.
    PARITY_ASSIGN_OR_RETURN(shard_, detail::EmbeddingShard::create(spec, std::move(pieces), piece_of_unit, context,
                                                                   embedding::PoolingMode::kSum));
    // The replicas: every data-parallel table whole, read by its features in spec order.
    std::vector<int> replica_of_feature;
    std::vector<detail::TablePiece> replicated = layout_.replica_pieces(spec, comm_.rank(), &replica_of_feature);
    replicated_width_ = layout_.replicated_width(spec);
    PARITY_ASSIGN_OR_RETURN(replicas_, detail::EmbeddingShard::create(spec, std::move(replicated), replica_of_feature,
                                                                      context, spec.embedding.pooling));
    unit_layout_.table_owner = layout_.unit_owners();
    unit_layout_.table_dims = layout_.unit_widths();
    table_owner_ = placement.table_owner;
    return initialize();
  }

  // The single-rank model's initial values (the same counter streams: dist_embedding.hpp).
  Status initialize() {
    std::vector<float> dense_weights;
    PARITY_RETURN_IF_ERROR(detail::initialize_pieces(options_.train.spec, options_.train.seed, ExecutionContext{},
                                                     {&shard_, &replicas_}, &dense_weights));
    PARITY_CHECK_ARG(static_cast<std::int64_t>(dense_weights.size()) == dense_.parameter_count(),
                     "dense weights: the model has ", dense_weights.size(), " parameters, the replica ",
                     dense_.parameter_count());
    std::copy(dense_weights.begin(), dense_weights.end(), dense_.parameters().begin());
    return Status::ok();
  }

  // The most rows a rank gets of a batch of `rows` (training: L; evaluation: whole chunks).
  std::int64_t max_slice_rows(std::int64_t rows) const {
    const std::int64_t pieces = (rows + chunk_rows_ - 1) / chunk_rows_;
    return std::max<std::int64_t>((pieces + comm_.size() - 1) / comm_.size() * chunk_rows_, 1);
  }

  detail::DistCheckpointParts checkpoint_parts() {
    return {&options_, table_owner_, options_.gradient_chunks, &dense_, &shard_, layout_.saved_pieces, &replicas_, {}};
  }

  // Steps 2-3 for rows [begin, begin + count) of `batch`: local_pooled_ [count][P].
  Status pool_embeddings(const data::Batch& batch, std::int64_t begin, std::int64_t count) {
    const auto& spec = options_.train.spec;
    local_pooled_.assign(static_cast<std::size_t>(std::max<std::int64_t>(count, 1) * spec.pooled_embedding_dim()), 0.0f);
    if (!layout_.units.empty()) {  // the same on every rank: all or none take part
      PARITY_ASSIGN_OR_RETURN(routed_, comm::route_sparse_batch(comm_, detail::unit_slice(batch, layout_, begin, count),
                                                                unit_layout_.table_owner));
      owned_pooled_.assign(static_cast<std::size_t>(routed_.global_batch_size * shard_.owned_width()), 0.0f);
      PARITY_RETURN_IF_ERROR(shard_.forward(routed_, owned_pooled_.data()));
      unit_pooled_.assign(static_cast<std::size_t>(std::max<std::int64_t>(count, 1) * layout_.units_width()), 0.0f);
      PARITY_RETURN_IF_ERROR(
          comm::return_pooled_outputs(comm_, routed_, unit_layout_, owned_pooled_.data(), unit_pooled_.data()));
      mean_scale_ = detail::mean_scales(batch, spec, begin, count);
      detail::fold_units(layout_, spec, count, unit_pooled_.data(), mean_scale_.empty() ? nullptr : mean_scale_.data(),
                         local_pooled_.data());
    }
    if (!layout_.replicated_features.empty() && count > 0) {
      std::vector<std::int64_t> lengths, ids;
      detail::feature_slice(batch, layout_.replicated_features, begin, count, &lengths, &ids);
      replicas_.set_batch(std::move(lengths), std::move(ids), count);
      replica_pooled_.assign(static_cast<std::size_t>(count * replicated_width_), 0.0f);
      PARITY_RETURN_IF_ERROR(replicas_.forward(replica_pooled_.data()));
      detail::copy_feature_columns(spec, layout_.replicated_features, count, detail::ColumnCopy::kPackedToPooled,
                                   replica_pooled_.data(), local_pooled_.data());
    }
    return Status::ok();
  }

  // Steps 2-4 for rows [begin, begin + count) of `batch`, the dense part in chunks of chunk_rows;
  // logits_ then holds the batch's logits (every rank's rows, in rank order).
  Status forward(const data::Batch& batch, std::int64_t begin, std::int64_t count, std::int64_t chunk_rows) {
    const auto& spec = options_.train.spec;
    PARITY_RETURN_IF_ERROR(pool_embeddings(batch, begin, count));
    const std::int64_t dense_width = spec.num_dense_features;
    local_dense_.assign(batch.dense.begin() + begin * dense_width, batch.dense.begin() + (begin + count) * dense_width);
    // Every rank contributes the same count (the widest slice), padded; the batch's logits are
    // then picked out in rank order.
    const std::int64_t widest = max_slice_rows(batch.batch_size);
    std::vector<float> mine(static_cast<std::size_t>(widest), 0.0f);
    if (count > 0) {
      PARITY_RETURN_IF_ERROR(dense_.forward(local_dense_.data(), local_pooled_.data(), count, chunk_rows));
      std::copy_n(dense_.logits(), count, mine.begin());
    }
    std::vector<float> gathered(static_cast<std::size_t>(widest * comm_.size()));
    PARITY_RETURN_IF_ERROR(comm_.all_gather(mine.data(), gathered.data(), widest, DType::kF32));
    logits_.resize(static_cast<std::size_t>(batch.batch_size));
    std::vector<std::int64_t> counts(static_cast<std::size_t>(comm_.size()));
    PARITY_RETURN_IF_ERROR(comm_.all_gather(&count, counts.data(), 1, DType::kI64));
    for (std::int64_t r = 0, first = 0; r < comm_.size(); first += counts[static_cast<std::size_t>(r)], ++r) {
      std::copy_n(gathered.begin() + r * widest, counts[static_cast<std::size_t>(r)], logits_.begin() + first);
    }
    return Status::ok();
  }

  Result<double> train_step(const data::Batch& batch, std::int64_t step) {
    const std::int64_t global = batch.batch_size, begin = local_rows_ * comm_.rank();
    const std::int64_t chunk_rows = global / chunks_, local_chunks = chunks_ / comm_.size();
    PARITY_RETURN_IF_ERROR(forward(batch, begin, local_rows_, chunk_rows));
    double loss = 0;
    grad_logits_.resize(static_cast<std::size_t>(global));
    PARITY_RETURN_IF_ERROR(nn::bce_with_logits({global, DType::kF32},
                                               {logits_.data(), batch.labels.data(), &loss, grad_logits_.data()},
                                               ExecutionContext{}));
    // Dense backward per gradient chunk of this rank (chunk c: global rows [c·S, (c+1)·S)).
    const auto params = static_cast<std::size_t>(dense_.parameter_count());
    chunk_grads_.resize(params * static_cast<std::size_t>(local_chunks));
    grad_pooled_.assign(static_cast<std::size_t>(local_rows_ * options_.train.spec.pooled_embedding_dim()), 0.0f);
    const bool overlapped = options_.gradient_chunks == 0 &&
                            options_.dense_reduction == DistTrainOptions::DenseReduction::kOverlapped;
    if (options_.gradient_chunks == 0) PARITY_RETURN_IF_ERROR(prepare_buckets());
    next_bucket_ = 0;
    step_comm_ms_ = 0;
    const detail::DenseReplica::ReadyCallback on_ready = [&](std::int64_t first_final) -> Status {
      return start_ready_buckets(first_final);
    };
    const auto backward_start = Clock::now();
    for (std::int64_t j = 0; j < local_chunks; ++j) {
      PARITY_RETURN_IF_ERROR(dense_.backward_rows(grad_logits_.data() + begin + j * chunk_rows, j * chunk_rows,
                                                  chunk_rows, chunk_grads_.data() + j * static_cast<std::int64_t>(params),
                                                  grad_pooled_.data(), overlapped ? on_ready : detail::DenseReplica::ReadyCallback{}));
    }
    const int started_during_backward = next_bucket_;
    if (overlapped) PARITY_RETURN_IF_ERROR(start_ready_buckets(0));  // the bottom layers' buckets
    const double backward_ms = elapsed_ms(backward_start) - step_comm_ms_;
    PARITY_RETURN_IF_ERROR(embedding_backward(batch, step));
    PARITY_RETURN_IF_ERROR(reduce_dense_gradients(params, local_chunks));
    PARITY_RETURN_IF_ERROR(dense_.apply_update(grads_.data(), step));
    if (options_.gradient_chunks == 0 && ++timed_calls_ > 1) {  // the first step allocates
      ++timings_.steps;
      timings_.backward_ms += backward_ms;
      timings_.exposed_comm_ms += step_comm_ms_;
      timings_.wait_ms += step_wait_ms_;
      timings_.started_during_backward += started_during_backward;
      timings_.in_flight_ms += std::chrono::duration<double, std::milli>(last_wait_end_ - first_start_).count();
    }
    return loss;
  }

  // Per-step means of the dense reduction's timings so far.
  DenseReductionTimings timings() const {
    DenseReductionTimings mean = timings_;
    mean.buckets = buckets_.has_value() ? buckets_->num_buckets() : 0;
    if (mean.steps == 0) return mean;
    const auto steps = static_cast<double>(mean.steps);
    mean.backward_ms /= steps;
    mean.exposed_comm_ms /= steps;
    mean.wait_ms /= steps;
    mean.started_during_backward /= steps;
    mean.in_flight_ms /= steps;
    return mean;
  }

  // Step 5's embedding half: units' gradients to the shards' owners; the replicas' columns
  // gathered over the global batch, then the same fused backward on every replica.
  Status embedding_backward(const data::Batch& batch, std::int64_t step) {
    const auto& spec = options_.train.spec;
    if (!layout_.units.empty()) {
      unit_grad_.assign(static_cast<std::size_t>(local_rows_ * layout_.units_width()), 0.0f);
      detail::spread_to_units(layout_, spec, local_rows_, grad_pooled_.data(),
                              mean_scale_.empty() ? nullptr : mean_scale_.data(), unit_grad_.data());
      owned_grad_.assign(owned_pooled_.size(), 0.0f);
      PARITY_RETURN_IF_ERROR(
          comm::send_pooled_gradients(comm_, routed_, unit_layout_, unit_grad_.data(), owned_grad_.data()));
      PARITY_RETURN_IF_ERROR(shard_.backward(owned_grad_.data(), step));
    }
    if (layout_.replicated_features.empty()) return Status::ok();
    std::vector<float> mine(static_cast<std::size_t>(local_rows_ * replicated_width_));
    detail::copy_feature_columns(spec, layout_.replicated_features, local_rows_, detail::ColumnCopy::kPooledToPacked,
                                 grad_pooled_.data(), mine.data());
    replica_grad_.resize(static_cast<std::size_t>(batch.batch_size * replicated_width_));
    PARITY_RETURN_IF_ERROR(comm_.all_gather(mine.data(), replica_grad_.data(), local_rows_ * replicated_width_,
                                            DType::kF32));
    std::vector<std::int64_t> lengths, ids;
    detail::feature_slice(batch, layout_.replicated_features, 0, batch.batch_size, &lengths, &ids);
    replicas_.set_batch(std::move(lengths), std::move(ids), batch.batch_size);
    return replicas_.backward(replica_grad_.data(), step);
  }

  // Buckets over the dense layers in the order the backward finishes them (top MLP's last layer
  // first), each layer's block [its first parameter, the next block) one tensor.
  Status prepare_buckets() {
    if (buckets_.has_value()) {
      for (std::size_t i = 0; i < tensor_first_.size(); ++i) bucket_pointers_[i] = chunk_grads_.data() + tensor_first_[i];
      return Status::ok();
    }
    const std::vector<std::int64_t> firsts = dense_.layer_offsets_in_backward_order();
    std::vector<std::int64_t> elements;
    std::int64_t end = dense_.parameter_count();
    for (const std::int64_t first : firsts) {
      elements.push_back(end - first);
      tensor_first_.push_back(first);
      end = first;
    }
    PARITY_ASSIGN_OR_RETURN(buckets_,
                            comm::GradientBuckets::create(elements, DType::kF32, options_.bucket_bytes));
    for (const std::int64_t first : tensor_first_) bucket_pointers_.push_back(chunk_grads_.data() + first);
    return Status::ok();
  }

  // Starts, in order, the all-reduces of the buckets whose tensors all start at or after
  // first_final, then lets MPI progress the ones in flight (Open MPI has no progress thread: a
  // non-blocking collective advances only inside MPI calls, so the backward polls between layers).
  Status start_ready_buckets(std::int64_t first_final) {
    const auto start = Clock::now();
    while (next_bucket_ < buckets_->num_buckets() &&
           tensor_first_[static_cast<std::size_t>(buckets_->end_tensor(next_bucket_) - 1)] >= first_final) {
      if (next_bucket_ == 0) first_start_ = Clock::now();
      PARITY_RETURN_IF_ERROR(buckets_->start_bucket(comm_, next_bucket_, bucket_pointers_, comm::ReduceOp::kSum));
      ++next_bucket_;
    }
    PARITY_RETURN_IF_ERROR(comm_.progress());
    step_comm_ms_ += elapsed_ms(start);
    return Status::ok();
  }

  // The gradient over the global batch. With gradient chunks: every chunk's gradient gathered and
  // folded in chunk order (the same additions for every rank count dividing the chunk count).
  // Without: this rank's gradient, summed by the communicator in buckets: waited for (overlapped:
  // started during the backward) or reduced one after another now (after the backward).
  Status reduce_dense_gradients(std::size_t params, std::int64_t local_chunks) {
    const auto count = static_cast<std::int64_t>(params);
    if (options_.gradient_chunks == 0) {
      const auto start = Clock::now();
      if (next_bucket_ == 0) first_start_ = start;
      for (int bucket = 0; bucket < buckets_->num_buckets(); ++bucket) {
        PARITY_RETURN_IF_ERROR(buckets_->is_in_flight(bucket)
                                   ? buckets_->finish_bucket(comm_, bucket, bucket_pointers_)
                                   : buckets_->reduce_bucket(comm_, bucket, bucket_pointers_, comm::ReduceOp::kSum));
      }
      last_wait_end_ = Clock::now();
      // From the same clock read as last_wait_end_: blocking, the wait and the in-flight span are
      // one interval (a second read would make the wait the longer of two by the read's cost).
      step_wait_ms_ = std::chrono::duration<double, std::milli>(last_wait_end_ - start).count();
      step_comm_ms_ += step_wait_ms_;
      grads_ = chunk_grads_;
      return Status::ok();
    }
    gathered_.resize(params * static_cast<std::size_t>(chunks_));
    PARITY_RETURN_IF_ERROR(comm_.all_gather(chunk_grads_.data(), gathered_.data(), count * local_chunks, DType::kF32));
    grads_.assign(gathered_.begin(), gathered_.begin() + count);
    for (int c = 1; c < chunks_; ++c) {
      const float* chunk = gathered_.data() + c * count;
      for (std::int64_t i = 0; i < count; ++i) grads_[static_cast<std::size_t>(i)] += chunk[i];
    }
    return Status::ok();
  }

  // NE, AUC and log loss over the eval split; each batch is split in rank order and its logits
  // gathered, so the metrics are the single-rank ones on every rank.
  Result<EvalRecord> evaluate(data::BatchReader& reader, std::int64_t max_samples, std::int64_t step) {
    return detail::evaluate_split(reader, max_samples, step, [&](const data::Batch& batch) -> Result<const float*> {
      // Whole chunks of the training chunk size, split in rank order, so every rank count runs
      // the same row chunks (a short batch ends in a short chunk).
      const std::int64_t pieces = (batch.batch_size + chunk_rows_ - 1) / chunk_rows_;
      const std::int64_t begin =
          std::min(batch.batch_size, slice_begin(pieces, comm_.rank(), comm_.size()) * chunk_rows_);
      const std::int64_t end =
          std::min(batch.batch_size, slice_begin(pieces, comm_.rank() + 1, comm_.size()) * chunk_rows_);
      PARITY_RETURN_IF_ERROR(forward(batch, begin, end - begin, chunk_rows_));
      return static_cast<const float*>(logits_.data());
    });
  }

 private:
  const DistTrainOptions& options_;
  comm::Communicator& comm_;
  int chunks_ = 1;
  std::int64_t local_rows_ = 0;
  std::int64_t chunk_rows_ = 1;  // rows of a gradient chunk: the dense ops run on these
  std::vector<int> table_owner_;
  detail::ShardLayout layout_;
  comm::PooledLayout unit_layout_;  // exchange units: owners and widths
  std::int64_t replicated_width_ = 0;
  detail::DenseReplica dense_;
  detail::EmbeddingShard shard_, replicas_;
  comm::RoutedSparseBatch routed_;
  std::vector<float> mean_scale_;  // [rows][F] of the last forward (mean pooling)
  std::vector<float> owned_pooled_, unit_pooled_, replica_pooled_, local_pooled_, local_dense_, logits_;
  std::vector<float> grad_logits_, grad_pooled_, unit_grad_, owned_grad_, replica_grad_;
  std::vector<float> chunk_grads_, gathered_, grads_;
  std::optional<comm::GradientBuckets> buckets_;
  std::vector<std::int64_t> tensor_first_;  // first parameter of each bucket tensor
  std::vector<void*> bucket_pointers_;      // each bucket tensor in chunk_grads_
  int next_bucket_ = 0;                     // the next bucket to start in this step
  // Timings of this step (ms in bucket calls, first start, last wait) and the totals.
  double step_comm_ms_ = 0, step_wait_ms_ = 0;
  Clock::time_point first_start_, last_wait_end_;
  std::int64_t timed_calls_ = 0;
  DenseReductionTimings timings_;
};

}  // namespace

namespace {

// The output directory and the data: rank 0 generates synthetic data, the others then find it.
Result<detail::PreparedData> prepare_data_on_all_ranks(comm::Communicator& comm, const TrainOptions& train) {
  std::error_code error;
  std::filesystem::create_directories(train.out_dir, error);
  const Status status = error ? io_error("out: cannot create ", train.out_dir, ": ", error.message()) : Status::ok();
  Result<detail::PreparedData> prepared = detail::PreparedData{};
  if (comm.rank() == 0 && status.is_ok()) prepared = detail::prepare_data(train);
  PARITY_RETURN_IF_ERROR(agree(comm, comm.rank() == 0 ? prepared.status() : status, "data"));
  if (comm.rank() != 0) prepared = detail::prepare_data(train);
  PARITY_RETURN_IF_ERROR(agree(comm, prepared.status(), "data"));
  return prepared;
}

}  // namespace

std::string dist_checkpoint_path(const std::string& out_dir, int rank, int num_ranks) {
  return (std::filesystem::path(out_dir) /
          ("checkpoint.rank" + std::to_string(rank) + "-of-" + std::to_string(num_ranks) + ".ckpt"))
      .string();
}

Result<TrainSummary> train_distributed(const DistTrainOptions& original, comm::Communicator& comm,
                                       DenseReductionTimings* timings) {
  DistTrainOptions options = original;
  TrainOptions& train = options.train;
  if (train.learning_rate > 0) {
    train.spec.dense_optimizer.learning_rate = static_cast<float>(train.learning_rate);
    train.spec.embedding.optimizer.learning_rate = static_cast<float>(train.learning_rate);
  }
  PARITY_RETURN_IF_ERROR(train.validate());
  PARITY_CHECK_ARG(comm.buffer_device() == DeviceKind::kCpu, "comm: the distributed trainer needs a host "
                   "communicator (local or mpi), not ", comm.backend_name());
  PARITY_CHECK_ARG(options.gradient_chunks >= 0, "gradient-chunks: ", options.gradient_chunks, " is negative");
  PARITY_CHECK_ARG(options.bucket_bytes >= 1, "bucket-bytes: ", options.bucket_bytes, " must be >= 1");
  // Deterministic runs fold the ranks' gradients in rank order (one chunk per rank) rather than in
  // the communicator's own order.
  if (options.gradient_chunks == 0 && train.determinism == Determinism::kBitwise) {
    options.gradient_chunks = comm.size();
  }
  const bool is_root = comm.rank() == 0;
  // Ranks share the machine's cores: one thread each unless told otherwise.
  const detail::ThreadCountScope thread_scope(train.num_threads > 0 ? train.num_threads : 1);
  if (options.placement.table_owner.empty() && options.placement.tables.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.placement, greedy_table_placement(train.spec, comm.size()));
  }
  PARITY_ASSIGN_OR_RETURN(const detail::PreparedData prepared_data, prepare_data_on_all_ranks(comm, train));
  const detail::PreparedData* prepared = &prepared_data;

  data::ReaderOptions reader_options;
  reader_options.batch_size = train.batch_size;
  data::ReaderOptions eval_reader_options = reader_options;
  eval_reader_options.drop_last = false;
  auto train_reader = data::open_dataset(prepared->dir, "train", reader_options);
  auto eval_reader = data::open_dataset(prepared->dir, "eval", eval_reader_options);
  Status status = !train_reader.is_ok() ? train_reader.status() : eval_reader.status();
  if (status.is_ok()) {
    status = detail::check_schema((*train_reader)->schema(), model::dataset_schema(train.spec), prepared->dir);
  }
  DistRun run(options, comm);
  if (status.is_ok()) status = run.create(options.placement);
  PARITY_RETURN_IF_ERROR(agree(comm, status, "setup"));

  TrainSummary summary;
  summary.data_dir = prepared->dir;
  summary.num_threads = train.num_threads > 0 ? train.num_threads : 1;
  summary.planted_auc = prepared->planted_auc;
  const std::filesystem::path out(train.out_dir);
  summary.checkpoint_path = dist_checkpoint_path(train.out_dir, comm.rank(), comm.size());
  summary.metrics_log_path = (out / "metrics.jsonl").string();
  summary.svg_path = (out / "training.svg").string();
  summary.summary_path = (out / "summary.json").string();

  detail::TrainState state;
  const detail::DistCheckpointParts parts = run.checkpoint_parts();
  if (train.resume == ResumeMode::kFromLatestCheckpoint) {
    auto loaded = detail::load_dist_checkpoint(parts, comm, &state);
    PARITY_RETURN_IF_ERROR(agree(comm, loaded.status(), "resume"));
    if (*loaded) summary.resumed_from_step = state.step;
  }
  PARITY_RETURN_IF_ERROR((*train_reader)->seek_samples(state.reader_position));

  // Every hook is collective or agreed on: an error on one rank stops every rank at the same point.
  detail::StepLoopHooks hooks;
  hooks.train_step = [&](const data::Batch& batch, std::int64_t step) { return run.train_step(batch, step); };
  hooks.evaluate = [&](std::int64_t step) { return run.evaluate(**eval_reader, train.eval_max_samples, step); };
  hooks.write_evaluations = [&](const detail::TrainState& done) -> Status {
    Status written = Status::ok();
    if (is_root) written = detail::write_metrics_log(summary.metrics_log_path, done.evaluations);
    if (is_root && written.is_ok()) {
      written = detail::write_training_svg(
          summary.svg_path, train.spec.name + " on " + prepared->dir + " (" + std::to_string(comm.size()) + " ranks)",
          done.step_losses, done.evaluations);
    }
    return agree(comm, written, "metrics");
  };
  hooks.save_checkpoint = [&](const detail::TrainState& done) {
    return agree(comm, detail::save_dist_checkpoint(parts, comm, done), "checkpoint");
  };
  PARITY_RETURN_IF_ERROR(detail::run_step_loop(train, **train_reader, hooks, &state, &summary));
  if (timings != nullptr) *timings = run.timings();
  Status written = is_root ? detail::write_summary(summary.summary_path, summary, train) : Status::ok();
  PARITY_RETURN_IF_ERROR(agree(comm, written, "summary"));
  return summary;
}

}  // namespace parity::train
