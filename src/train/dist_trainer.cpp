// train_distributed(): the step loop on R ranks (see parity/train/dist_trainer.hpp).
// Per step (G global batch, L = G/R rows per rank, C gradient chunks):
//   1. every rank reads the global batch and keeps its rows [r·L, (r+1)·L);
//   2. route_sparse_batch sends its ids to the tables' owners, who pool the global batch;
//   3. return_pooled_outputs brings each rank its rows' pooled embeddings;
//   4. the dense replica runs forward; the logits are all-gathered, so every rank computes the
//      BCE loss and d loss / d logit over the global batch exactly as a single rank would;
//   5. the dense backward runs per gradient chunk; send_pooled_gradients returns the embedding
//      gradients to the owners, whose fused TBE backward updates the tables;
//   6. the dense gradient is summed over the global batch (chunks in order, or the
//      communicator's bucketed all-reduce) and every replica applies the same update.
#include "parity/train/dist_trainer.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <optional>

#include "parity/comm/embedding_exchange.hpp"
#include "parity/comm/gradient_buckets.hpp"
#include "parity/data/dataset.hpp"
#include "parity/nn/loss.hpp"
#include "train/dist_checkpoint.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train {

namespace {

constexpr std::int64_t kBucketBytes = 4 << 20;

// Every rank learns whether any rank failed; a rank that did not fail returns an error naming the
// ranks that did (they report their own message), so no rank walks into a collective alone.
Status agree(comm::Communicator& comm, const Status& mine, const char* what) {
  const std::int64_t failed = mine.is_ok() ? 0 : 1;
  std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()), 0);
  PARITY_RETURN_IF_ERROR(comm.all_gather(&failed, all.data(), 1, DType::kI64));
  if (!mine.is_ok()) return mine;
  std::string ranks;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r] != 0) ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
  }
  if (ranks.empty()) return Status::ok();
  return Status(StatusCode::kInternal, std::string(what) + ": failed on rank(s) " + ranks);
}

// Rows [begin, begin + count) of a global batch as the table-major CSR the exchange sends
// (exchange units are the model's features).
comm::SparseBatch sparse_slice(const data::Batch& batch, int num_features, std::int64_t begin, std::int64_t count) {
  comm::SparseBatch local;
  local.num_tables = num_features;
  local.batch_size = count;
  local.lengths.resize(static_cast<std::size_t>(num_features * count));
  for (int f = 0; f < num_features; ++f) {
    for (std::int64_t b = 0; b < count; ++b) {
      const auto bag = static_cast<std::size_t>(f * batch.batch_size + begin + b);
      local.lengths[static_cast<std::size_t>(f * count + b)] = batch.offsets[bag + 1] - batch.offsets[bag];
      local.ids.insert(local.ids.end(), batch.indices.begin() + batch.offsets[bag],
                       batch.indices.begin() + batch.offsets[bag + 1]);
    }
  }
  return local;
}

// First of rank r's items when `items` are split in rank order as evenly as possible.
std::int64_t slice_begin(std::int64_t rows, int rank, int ranks) {
  return rows / ranks * rank + std::min<std::int64_t>(rank, rows % ranks);
}

class DistRun {
 public:
  DistRun(const DistTrainOptions& options, comm::Communicator& comm) : options_(options), comm_(comm) {}

  Status create(const std::vector<int>& table_owner) {
    const auto& spec = options_.train.spec;
    const std::int64_t global = options_.train.batch_size;
    const int ranks = comm_.size();
    chunks_ = options_.gradient_chunks > 0 ? options_.gradient_chunks : ranks;
    PARITY_CHECK_ARG(global % ranks == 0, "batch: ", global, " is not divisible by the ", ranks, " ranks");
    PARITY_CHECK_ARG(chunks_ % ranks == 0, "gradient-chunks: ", chunks_, " is not a multiple of the ", ranks,
                     " ranks");
    PARITY_CHECK_ARG(global % chunks_ == 0, "gradient-chunks: the batch ", global, " is not divisible by ",
                     chunks_, " chunks");
    for (std::size_t t = 0; t < table_owner.size(); ++t) {
      PARITY_CHECK_ARG(table_owner[t] >= 0 && table_owner[t] < ranks, "placement: table ", t, " is on rank ",
                       table_owner[t], ", outside [0, ", ranks, ")");
    }
    ExecutionContext context;
    context.device = DeviceKind::kCpu;
    context.deterministic = options_.train.determinism == Determinism::kBitwise;
    local_rows_ = global / ranks;
    chunk_rows_ = global / chunks_;
    PARITY_ASSIGN_OR_RETURN(dense_, detail::DenseReplica::create(spec, max_slice_rows(global), context));
    PARITY_ASSIGN_OR_RETURN(shard_, detail::EmbeddingShard::create(spec, table_owner, comm_.rank(), context));
    table_owner_ = table_owner;
    pooled_layout_.table_owner = shard_.feature_owner();
    for (int f = 0; f < spec.num_features(); ++f) {
      pooled_layout_.table_dims.push_back(spec.embedding.tables[static_cast<std::size_t>(spec.embedding.features[f].table)].dim);
    }
    return initialize();
  }

  // The single-rank model's initial values: a model of this spec whose tables owned elsewhere have
  // one row draws the dense weights and this rank's tables from the same counter streams.
  Status initialize() {
    model::ModelSpec init_spec = options_.train.spec;
    for (std::size_t t = 0; t < init_spec.embedding.tables.size(); ++t) {
      if (table_owner_[t] != comm_.rank()) init_spec.embedding.tables[t].num_rows = 1;
    }
    PARITY_ASSIGN_OR_RETURN(detail::DlrmModel init, detail::DlrmModel::create(init_spec, 1, ExecutionContext{}));
    PARITY_RETURN_IF_ERROR(init.initialize(options_.train.seed));
    PARITY_ASSIGN_OR_RETURN(const auto layout, init_spec.tbe_layout());
    for (const auto& piece : init.state_buffers()) {
      if (piece.name == "embedding.weights") {
        PARITY_RETURN_IF_ERROR(shard_.copy_initial_weights(piece.buffer->data(), layout));
      } else if (piece.name == "dense.weights") {
        PARITY_CHECK_ARG(piece.buffer->size_bytes() == dense_.parameter_count() * 4, "dense weights: the model has ",
                         piece.buffer->size_bytes() / 4, " parameters, the replica ", dense_.parameter_count());
        std::copy_n(piece.buffer->as<float>(), dense_.parameter_count(), dense_.parameters().data());
      }
    }
    return Status::ok();
  }

  // The most rows a rank gets of a batch of `rows` (training: L; evaluation: whole chunks).
  std::int64_t max_slice_rows(std::int64_t rows) const {
    const std::int64_t pieces = (rows + chunk_rows_ - 1) / chunk_rows_;
    return std::max<std::int64_t>((pieces + comm_.size() - 1) / comm_.size() * chunk_rows_, 1);
  }

  detail::DistCheckpointParts checkpoint_parts() {
    return {&options_, table_owner_, options_.gradient_chunks, &dense_, &shard_};
  }

  // Steps 2-4 for rows [begin, begin + count) of `batch`, the dense part in chunks of chunk_rows;
  // logits_ then holds the batch's logits (every rank's rows, in rank order).
  Status forward(const data::Batch& batch, std::int64_t begin, std::int64_t count, std::int64_t chunk_rows) {
    const auto& spec = options_.train.spec;
    PARITY_ASSIGN_OR_RETURN(routed_, comm::route_sparse_batch(comm_, sparse_slice(batch, spec.num_features(), begin,
                                                                                  count),
                                                              pooled_layout_.table_owner));
    owned_pooled_.assign(static_cast<std::size_t>(routed_.global_batch_size * shard_.owned_width()), 0.0f);
    PARITY_RETURN_IF_ERROR(shard_.forward(routed_, owned_pooled_.data()));
    const std::int64_t width = spec.pooled_embedding_dim();
    local_pooled_.assign(static_cast<std::size_t>(std::max<std::int64_t>(count, 1) * width), 0.0f);
    PARITY_RETURN_IF_ERROR(
        comm::return_pooled_outputs(comm_, routed_, pooled_layout_, owned_pooled_.data(), local_pooled_.data()));
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
    for (std::int64_t j = 0; j < local_chunks; ++j) {
      PARITY_RETURN_IF_ERROR(dense_.backward_rows(grad_logits_.data() + begin + j * chunk_rows, j * chunk_rows,
                                                  chunk_rows, chunk_grads_.data() + j * static_cast<std::int64_t>(params),
                                                  grad_pooled_.data()));
    }
    owned_grad_.assign(owned_pooled_.size(), 0.0f);
    PARITY_RETURN_IF_ERROR(
        comm::send_pooled_gradients(comm_, routed_, pooled_layout_, grad_pooled_.data(), owned_grad_.data()));
    PARITY_RETURN_IF_ERROR(shard_.backward(owned_grad_.data(), step));
    PARITY_RETURN_IF_ERROR(reduce_dense_gradients(params, local_chunks));
    PARITY_RETURN_IF_ERROR(dense_.apply_update(grads_.data(), step));
    return loss;
  }

  // The gradient over the global batch. With gradient chunks: every chunk's gradient gathered and
  // folded in chunk order (the same additions for every rank count dividing the chunk count).
  // Without: this rank's gradient, summed by the communicator in buckets.
  Status reduce_dense_gradients(std::size_t params, std::int64_t local_chunks) {
    const auto count = static_cast<std::int64_t>(params);
    if (options_.gradient_chunks == 0) {
      grads_ = chunk_grads_;
      if (!buckets_.has_value()) {
        std::vector<std::int64_t> pieces;
        for (std::int64_t at = 0; at < count; at += kBucketBytes / 4) pieces.push_back(std::min(kBucketBytes / 4, count - at));
        PARITY_ASSIGN_OR_RETURN(buckets_, comm::GradientBuckets::create(pieces, DType::kF32, kBucketBytes));
        piece_count_ = static_cast<std::int64_t>(pieces.size());
      }
      std::vector<void*> pointers;
      for (std::int64_t p = 0; p < piece_count_; ++p) pointers.push_back(grads_.data() + p * (kBucketBytes / 4));
      return buckets_->reduce_all(comm_, pointers, comm::ReduceOp::kSum);
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
  comm::PooledLayout pooled_layout_;
  detail::DenseReplica dense_;
  detail::EmbeddingShard shard_;
  comm::RoutedSparseBatch routed_;
  std::vector<float> owned_pooled_, local_pooled_, local_dense_, logits_, grad_logits_, grad_pooled_, owned_grad_;
  std::vector<float> chunk_grads_, gathered_, grads_;
  std::optional<comm::GradientBuckets> buckets_;
  std::int64_t piece_count_ = 0;
};

}  // namespace

Result<TablePlacement> greedy_table_placement(const model::ModelSpec& spec, int num_ranks) {
  PARITY_CHECK_ARG(num_ranks >= 1, "ranks: ", num_ranks, " is out of range [1, ...]");
  PARITY_RETURN_IF_ERROR(spec.validate());
  const auto kind = spec.embedding.optimizer.kind;
  const auto num_tables = spec.embedding.tables.size();
  std::vector<double> table_bytes(num_tables);
  for (std::size_t t = 0; t < num_tables; ++t) {
    const auto& table = spec.embedding.tables[t];
    const double elements = static_cast<double>(table.num_rows) * table.dim;
    double state = 0;  // fp32 optimiser state per table (see embedding::optimizer_state1_elements)
    if (kind == embedding::OptimizerKind::kRowwiseAdagrad) state = static_cast<double>(table.num_rows);
    if (kind == embedding::OptimizerKind::kAdagrad) state = elements;
    if (kind == embedding::OptimizerKind::kAdam) state = 2 * elements;
    table_bytes[t] = elements * static_cast<double>(dtype_size_bytes(spec.embedding.weight_dtype)) + 4 * state;
  }
  std::vector<std::size_t> order(num_tables);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return table_bytes[a] > table_bytes[b]; });
  std::vector<double> rank_bytes(static_cast<std::size_t>(num_ranks), 0.0);
  TablePlacement placement;
  placement.table_owner.assign(num_tables, 0);
  for (const std::size_t t : order) {
    const auto lightest = std::min_element(rank_bytes.begin(), rank_bytes.end()) - rank_bytes.begin();
    placement.table_owner[t] = static_cast<int>(lightest);
    rank_bytes[static_cast<std::size_t>(lightest)] += table_bytes[t];
  }
  return placement;
}

Result<TablePlacement> placement_from_plan(const plan::Plan& plan, const model::ModelSpec& spec, int num_ranks) {
  const int plan_ranks = plan.num_gpus * std::max(plan.num_nodes, 1);
  PARITY_CHECK_ARG(plan_ranks == num_ranks, "plan: placed for ", plan_ranks, " ranks (", plan.num_gpus,
                   " GPUs x ", std::max(plan.num_nodes, 1), " nodes); this run has ", num_ranks);
  PARITY_CHECK_ARG(plan.tables.size() == spec.embedding.tables.size(), "plan: places ", plan.tables.size(),
                   " tables; the model '", spec.name, "' has ", spec.embedding.tables.size());
  TablePlacement placement;
  for (std::size_t t = 0; t < plan.tables.size(); ++t) {
    const auto& table = plan.tables[t];
    PARITY_CHECK_ARG(table.table == spec.embedding.tables[t].name, "plan: table ", t, " is '", table.table,
                     "'; the model's is '", spec.embedding.tables[t].name, "'");
    if (table.type != plan::ShardingType::kTableWise || table.shards.size() != 1) {
      return unsupported("plan: table '", table.table, "' is ", plan::sharding_type_name(table.type),
                         " with ", table.shards.size(), " shard(s); the CPU distributed trainer places whole "
                         "tables (table_wise) only");
    }
    const int rank = table.shards.front().rank;
    PARITY_CHECK_ARG(rank >= 0 && rank < num_ranks, "plan: table '", table.table, "' is on rank ", rank,
                     ", outside [0, ", num_ranks, ")");
    placement.table_owner.push_back(rank);
  }
  return placement;
}

std::string dist_checkpoint_path(const std::string& out_dir, int rank, int num_ranks) {
  return (std::filesystem::path(out_dir) /
          ("checkpoint.rank" + std::to_string(rank) + "-of-" + std::to_string(num_ranks) + ".ckpt"))
      .string();
}

Result<TrainSummary> train_distributed(const DistTrainOptions& original, comm::Communicator& comm) {
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
  // Deterministic runs fold the ranks' gradients in rank order (one chunk per rank) rather than in
  // the communicator's own order.
  if (options.gradient_chunks == 0 && train.determinism == Determinism::kBitwise) {
    options.gradient_chunks = comm.size();
  }
  const bool is_root = comm.rank() == 0;
  // Ranks share the machine's cores: one thread each unless told otherwise.
  const detail::ThreadCountScope thread_scope(train.num_threads > 0 ? train.num_threads : 1);
  if (options.placement.table_owner.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.placement, greedy_table_placement(train.spec, comm.size()));
  }
  std::error_code error;
  std::filesystem::create_directories(train.out_dir, error);
  Status status = error ? io_error("out: cannot create ", train.out_dir, ": ", error.message()) : Status::ok();
  // Rank 0 generates synthetic data; the others then find it in place.
  Result<detail::PreparedData> prepared = detail::PreparedData{};
  if (is_root && status.is_ok()) prepared = detail::prepare_data(train);
  PARITY_RETURN_IF_ERROR(agree(comm, is_root ? prepared.status() : status, "data"));
  if (!is_root) prepared = detail::prepare_data(train);
  PARITY_RETURN_IF_ERROR(agree(comm, prepared.status(), "data"));

  data::ReaderOptions reader_options;
  reader_options.batch_size = train.batch_size;
  data::ReaderOptions eval_reader_options = reader_options;
  eval_reader_options.drop_last = false;
  auto train_reader = data::open_dataset(prepared->dir, "train", reader_options);
  auto eval_reader = data::open_dataset(prepared->dir, "eval", eval_reader_options);
  status = !train_reader.is_ok() ? train_reader.status() : eval_reader.status();
  if (status.is_ok()) {
    status = detail::check_schema((*train_reader)->schema(), model::dataset_schema(train.spec), prepared->dir);
  }
  DistRun run(options, comm);
  if (status.is_ok()) status = run.create(options.placement.table_owner);
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
  Status written = is_root ? detail::write_summary(summary.summary_path, summary, train) : Status::ok();
  PARITY_RETURN_IF_ERROR(agree(comm, written, "summary"));
  return summary;
}

}  // namespace parity::train
