// train_distributed_gpu(): the step loop on R GPU ranks (see parity/train/gpu_dist_trainer.hpp).
// Per step (G global batch, L = G/R rows per rank): every rank reads the global batch; the
// ShardedStep stages its units' ids and the model its rows' dense features and labels;
// the model's step then runs with the exchange in place of its own tables (gpu_dist_step.hpp).
#include "parity/train/gpu_dist_trainer.hpp"

#include <filesystem>

#include "parity/plan/inputs.hpp"
#include "train/dist_checkpoint.hpp"
#include "train/gpu_dist_step.hpp"
#include "train/train_state.hpp"

namespace parity::train {

namespace {

// Every rank learns whether any rank failed, so no rank walks into a collective alone; a rank
// that did not fail returns the worst code, the failed ranks report their own message.
Status agree_on_ranks(comm::Communicator& host, const Status& mine, const char* what) {
  const std::int64_t code = mine.is_ok() ? 0 : static_cast<std::int64_t>(mine.code()) + 1;
  std::int64_t worst = 0;
  PARITY_RETURN_IF_ERROR(host.all_reduce(&code, &worst, 1, DType::kI64, comm::ReduceOp::kMax));
  if (!mine.is_ok() || worst == 0) return mine;
  return Status(static_cast<StatusCode>(worst - 1), std::string(what) + ": failed on another rank (it reports why)");
}

// A batch grown to `rows` by repeating its last sample (evaluation batches split evenly across
// ranks; the repeated rows' logits are dropped).
data::Batch pad_rows(const data::Batch& batch, int num_features, std::int64_t rows) {
  if (rows == batch.batch_size) return batch;
  const std::int64_t have = batch.batch_size, last = have - 1;
  const auto width = static_cast<std::int64_t>(batch.dense.size()) / have;
  data::Batch padded;
  padded.batch_size = rows;
  padded.dense = batch.dense;
  padded.labels = batch.labels;
  for (std::int64_t b = have; b < rows; ++b) {
    padded.dense.insert(padded.dense.end(), batch.dense.begin() + last * width, batch.dense.begin() + have * width);
    padded.labels.push_back(batch.labels[static_cast<std::size_t>(last)]);
  }
  padded.offsets.assign(1, 0);
  for (int f = 0; f < num_features; ++f) {
    for (std::int64_t b = 0; b < rows; ++b) {
      const auto bag = static_cast<std::size_t>(f * have + std::min(b, last));
      padded.indices.insert(padded.indices.end(), batch.indices.begin() + batch.offsets[bag],
                            batch.indices.begin() + batch.offsets[bag + 1]);
      padded.offsets.push_back(static_cast<std::int64_t>(padded.indices.size()));
    }
  }
  return padded;
}

Status check_communicators(const DistTrainOptions& options, comm::Communicator& host, comm::Communicator& collective) {
  PARITY_CHECK_ARG(host.buffer_device() == DeviceKind::kCpu, "host: the ", host.backend_name(),
                   " communicator is not a host communicator (local or mpi)");
  PARITY_CHECK_ARG(host.size() == collective.size() && host.rank() == collective.rank(), "comm: the ",
                   collective.backend_name(), " communicator is rank ", collective.rank(), " of ", collective.size(),
                   ", the host's rank ", host.rank(), " of ", host.size());
  PARITY_CHECK_ARG(collective.buffer_device() == options.train.device, "device: ",
                   device_kind_name(options.train.device), " training needs a communicator of that device's buffers; ",
                   collective.backend_name(), " moves ", device_kind_name(collective.buffer_device()), " buffers");
  PARITY_CHECK_ARG(options.gradient_chunks == 0, "gradient-chunks: ", options.gradient_chunks,
                   " is for the CPU distributed trainer; the GPU one sums one gradient per rank (0)");
  PARITY_CHECK_ARG(options.train.batch_size % collective.size() == 0, "batch: ", options.train.batch_size,
                   " is not divisible by the ", collective.size(), " ranks");
  if (options.train.determinism == Determinism::kBitwise && collective.size() > 1) {
    return unsupported("determinism: bitwise on ", collective.size(), " GPU ranks needs a rank-order gradient sum, "
                       "which NCCL does not offer; use one rank, or the CPU distributed trainer");
  }
  return Status::ok();
}

// The dense part's host copies for checkpoints (the model's buffers live on its device), under
// the single-process blob names.
class DenseHostCopy {
 public:
  explicit DenseHostCopy(detail::DlrmModel& model) : model_(model) {}
  Status download() {
    for (auto& [state, host] : pairs()) {
      host->resize(static_cast<std::size_t>(state->size_bytes()));
      PARITY_RETURN_IF_ERROR(state->copy_to_host(host->data(), state->size_bytes()));
    }
    return Status::ok();
  }
  Status upload() {
    for (auto& [state, host] : pairs()) PARITY_RETURN_IF_ERROR(state->copy_from_host(host->data(), state->size_bytes()));
    return model_.refresh_shadow();  // bf16 runs: the bf16 copy of the restored weights
  }
  // Sized like the model's buffers (call download() or this before a load).
  std::vector<detail::TableBlob> blobs() {
    std::vector<detail::TableBlob> blobs;
    for (auto& [state, host] : pairs()) {
      host->resize(static_cast<std::size_t>(state->size_bytes()));
      blobs.push_back({names_[blobs.size()], host->data(), host->size()});
    }
    return blobs;
  }

 private:
  std::vector<std::pair<Buffer*, std::vector<unsigned char>*>> pairs() {
    std::vector<std::pair<Buffer*, std::vector<unsigned char>*>> found;
    for (std::size_t i = 0; i < names_.size(); ++i) {
      for (const auto& state : model_.state_buffers()) {
        if (state.name == names_[i]) found.emplace_back(state.buffer, &host_[i]);
      }
    }
    return found;
  }

  detail::DlrmModel& model_;
  const std::vector<std::string> names_{"dense.weights", "dense.state1", "dense.state2"};
  std::vector<unsigned char> host_[3];
};

// Rank 0 prepares (or generates) the data first, then the others find it.
Result<detail::PreparedData> prepare_on_ranks(comm::Communicator& host, const TrainOptions& train) {
  std::error_code error;
  std::filesystem::create_directories(train.out_dir, error);
  PARITY_RETURN_IF_ERROR(agree_on_ranks(
      host, error ? io_error("out: cannot create ", train.out_dir, ": ", error.message()) : Status::ok(), "out"));
  Result<detail::PreparedData> prepared = detail::PreparedData{};
  if (host.rank() == 0) prepared = detail::prepare_data(train);
  PARITY_RETURN_IF_ERROR(agree_on_ranks(host, prepared.status(), "data"));
  if (host.rank() != 0) prepared = detail::prepare_data(train);
  PARITY_RETURN_IF_ERROR(agree_on_ranks(host, prepared.status(), "data"));
  return prepared;
}

}  // namespace

// Long for the same reason as train(): the run's setup and its hooks in one place.
Result<TrainSummary> train_distributed_gpu(const DistTrainOptions& original, comm::Communicator& host,
                                           comm::Communicator& collective) {
  DistTrainOptions options = original;
  TrainOptions& train = options.train;
  if (train.learning_rate > 0) {
    train.spec.dense_optimizer.learning_rate = static_cast<float>(train.learning_rate);
    train.spec.embedding.optimizer.learning_rate = static_cast<float>(train.learning_rate);
  }
  PARITY_RETURN_IF_ERROR(train.validate());
  PARITY_RETURN_IF_ERROR(check_communicators(options, host, collective));
  const int rank = collective.rank(), ranks = collective.size(), features = train.spec.num_features();
  // CPU ranks (tests) share the machine's cores: one thread each unless told otherwise.
  const int num_threads = train.num_threads > 0 ? train.num_threads : 1;
  const detail::ThreadCountScope thread_scope(num_threads);
  if (options.placement.table_owner.empty() && options.placement.tables.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.placement, greedy_table_placement(train.spec, ranks));
  }
  PARITY_ASSIGN_OR_RETURN(const detail::PreparedData prepared, prepare_on_ranks(host, train));
  data::ReaderOptions reader_options;
  reader_options.batch_size = train.batch_size;
  data::ReaderOptions eval_reader_options = reader_options;
  eval_reader_options.drop_last = false;
  auto train_reader = data::open_dataset(prepared.dir, "train", reader_options);
  auto eval_reader = data::open_dataset(prepared.dir, "eval", eval_reader_options);
  Status status = !train_reader.is_ok() ? train_reader.status() : eval_reader.status();
  if (status.is_ok()) {
    status = detail::check_schema((*train_reader)->schema(), model::dataset_schema(train.spec), prepared.dir);
  }
  ExecutionContext context;
  context.device = train.device;
  context.deterministic = train.determinism == Determinism::kBitwise;
  const std::int64_t local_rows = train.batch_size / ranks;
  Result<detail::DlrmModel> model = internal_error("model: not created");
  std::unique_ptr<detail::ShardedStep> step;
  if (status.is_ok()) {
    model = detail::DlrmModel::create(detail::dense_only_spec(train.spec), local_rows, context);
    status = model.is_ok() ? model->initialize(train.seed) : model.status();
  }
  if (status.is_ok()) {
    detail::DenseReductionOptions reduction;
    reduction.is_overlapped = options.dense_reduction == DistTrainOptions::DenseReduction::kOverlapped;
    reduction.bucket_bytes = options.bucket_bytes;
    auto created = detail::ShardedStep::create(train.spec, options.placement, local_rows, collective, *model,
                                               train.seed, reduction);
    status = created.status();
    if (created.is_ok()) step = std::move(*created);
  }
  PARITY_RETURN_IF_ERROR(agree_on_ranks(host, status, "setup"));

  TrainSummary summary;
  summary.data_dir = prepared.dir;
  summary.num_threads = num_threads;
  summary.planted_auc = prepared.planted_auc;
  const std::filesystem::path out(train.out_dir);
  summary.checkpoint_path = dist_checkpoint_path(train.out_dir, rank, ranks);
  summary.metrics_log_path = (out / "metrics.jsonl").string();
  summary.svg_path = (out / "training.svg").string();
  summary.summary_path = (out / "summary.json").string();

  // Checkpoints: the CPU distributed trainer's per-rank sets (pieces by rank, the dense part on
  // rank 0), so a set restores on any rank count and placement (re-sharding).
  DenseHostCopy dense_copy(*model);
  detail::DistCheckpointParts parts;
  parts.options = &options;
  parts.saved_pieces = step->layout().saved_pieces;
  parts.shard = &step->shard();
  parts.replicas = &step->replicas();
  detail::TrainState state;
  if (train.resume == ResumeMode::kFromLatestCheckpoint) {
    parts.dense_blobs = dense_copy.blobs();
    Result<bool> loaded = detail::load_dist_checkpoint(parts, host, &state);
    Status restored = loaded.status();
    if (restored.is_ok() && *loaded) restored = step->upload();
    if (restored.is_ok() && *loaded) restored = dense_copy.upload();
    PARITY_RETURN_IF_ERROR(agree_on_ranks(host, restored, "resume"));
    if (*loaded) summary.resumed_from_step = state.step;
  }
  PARITY_RETURN_IF_ERROR((*train_reader)->seek_samples(state.reader_position));

  const bool is_root = rank == 0;
  std::vector<float> gathered_logits;
  detail::StepLoopHooks hooks;
  hooks.train_step = [&](const data::Batch& batch, std::int64_t step_index) -> Result<double> {
    PARITY_RETURN_IF_ERROR(step->stage_global_batch(batch));
    if (ranks == 1) return model->train_step(batch, step_index);  // its rows are the batch: no slice
    const std::int64_t rows = batch.batch_size / ranks;
    return model->train_step(detail::dense_slice(batch, rank * rows, rows), step_index);
  };
  hooks.evaluate = [&](std::int64_t step_index) {
    return detail::evaluate_split(
        **eval_reader, train.eval_max_samples, step_index, [&](const data::Batch& batch) -> Result<const float*> {
          const std::int64_t rows = (batch.batch_size + ranks - 1) / ranks;
          const data::Batch padded = pad_rows(batch, features, rows * ranks);
          PARITY_RETURN_IF_ERROR(step->stage_global_batch(padded));
          PARITY_RETURN_IF_ERROR(ranks == 1 ? model->forward(padded)
                                            : model->forward(detail::dense_slice(padded, rank * rows, rows)));
          gathered_logits.resize(static_cast<std::size_t>(rows * ranks));
          PARITY_RETURN_IF_ERROR(host.all_gather(model->logits(), gathered_logits.data(), rows, DType::kF32));
          return static_cast<const float*>(gathered_logits.data());
        });
  };
  hooks.write_evaluations = [&](const detail::TrainState& done) -> Status {
    Status written = Status::ok();
    if (is_root) written = detail::write_metrics_log(summary.metrics_log_path, done.evaluations);
    if (is_root && written.is_ok()) {
      written = detail::write_training_svg(summary.svg_path,
                                           train.spec.name + " on " + prepared.dir + " (" + std::to_string(ranks) +
                                               " " + std::string(collective.backend_name()) + " ranks)",
                                           done.step_losses, done.evaluations);
    }
    return agree_on_ranks(host, written, "metrics");
  };
  hooks.save_checkpoint = [&](const detail::TrainState& done) {
    Status saved = step->download();
    if (saved.is_ok()) saved = dense_copy.download();
    if (saved.is_ok()) {
      parts.dense_blobs = dense_copy.blobs();
      saved = detail::save_dist_checkpoint(parts, host, done);
    }
    return agree_on_ranks(host, saved, "checkpoint");
  };
  PARITY_RETURN_IF_ERROR(detail::run_step_loop(train, **train_reader, hooks, &state, &summary));
  const Status written = is_root ? detail::write_summary(summary.summary_path, summary, train) : Status::ok();
  PARITY_RETURN_IF_ERROR(agree_on_ranks(host, written, "summary"));
  return summary;
}

}  // namespace parity::train
