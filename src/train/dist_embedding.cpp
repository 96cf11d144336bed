// EmbeddingShard: the owned tables of a table-wise placement (see dist_embedding.hpp).
#include "train/dist_embedding.hpp"

#include <cstring>

#include "parity/core/dtype.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train::detail {

namespace {
constexpr std::int64_t kFloat = 4;

// Element range of table t inside a state buffer of `kind` (see optimizer_state1_elements):
// row-wise Adagrad keeps one value per row, Adagrad and Adam are shaped like the weights.
std::pair<std::int64_t, std::int64_t> state_range(const embedding::TbeLayout& layout,
                                                  embedding::OptimizerKind kind, int table) {
  const auto& spec = layout.tables()[static_cast<std::size_t>(table)];
  if (kind == embedding::OptimizerKind::kRowwiseAdagrad) return {layout.row_base(table), spec.num_rows};
  return {layout.weights_offset(table), spec.num_rows * spec.dim};
}
}  // namespace

std::string piece_blob_prefix(const TablePiece& piece, const model::ModelSpec& spec) {
  const auto& table = spec.embedding.tables[static_cast<std::size_t>(piece.table)];
  std::string prefix = "embedding.table" + std::to_string(piece.table) + ".";
  if (piece.rows() == table.num_rows && piece.cols() == table.dim) return prefix;
  return prefix + "rows" + std::to_string(piece.row_begin) + "-" + std::to_string(piece.row_end) + ".cols" +
         std::to_string(piece.col_begin) + "-" + std::to_string(piece.col_end) + ".";
}

Result<EmbeddingShard> EmbeddingShard::create(const model::ModelSpec& spec, std::vector<TablePiece> pieces,
                                              const std::vector<int>& piece_of_feature,
                                              const ExecutionContext& context, embedding::PoolingMode pooling) {
  EmbeddingShard shard;
  shard.spec_ = spec;
  shard.context_ = context;
  shard.pooling_ = pooling;
  shard.pieces_ = std::move(pieces);
  if (!shard.has_tables()) return shard;
  std::vector<embedding::TableSpec> tables;
  for (const auto& piece : shard.pieces_) tables.push_back({piece.rows(), piece.cols()});
  PARITY_ASSIGN_OR_RETURN(shard.layout_, embedding::TbeLayout::create(tables, piece_of_feature));
  const auto kind = spec.embedding.optimizer.kind;
  shard.weights_.assign(static_cast<std::size_t>(shard.layout_.total_weight_elements()) *
                            dtype_size_bytes(spec.embedding.weight_dtype), 0);
  shard.state1_.assign(static_cast<std::size_t>(embedding::optimizer_state1_elements(shard.layout_, kind)), 0.0f);
  shard.state2_.assign(static_cast<std::size_t>(embedding::optimizer_state2_elements(shard.layout_, kind)), 0.0f);
  return shard;
}

Result<EmbeddingShard> EmbeddingShard::create(const model::ModelSpec& spec, const std::vector<int>& table_owner,
                                              int rank, const ExecutionContext& context) {
  const auto num_tables = spec.embedding.tables.size();
  PARITY_CHECK_ARG(table_owner.size() == num_tables, "placement: ", table_owner.size(), " owners for ",
                   num_tables, " tables");
  std::vector<int> local_index(num_tables, -1);
  std::vector<TablePiece> pieces;
  for (std::size_t t = 0; t < num_tables; ++t) {
    if (table_owner[t] != rank) continue;
    local_index[t] = static_cast<int>(pieces.size());
    const auto& table = spec.embedding.tables[t];
    pieces.push_back({static_cast<int>(t), rank, 0, table.num_rows, 0, table.dim});
  }
  std::vector<int> piece_of_feature;
  for (const auto& feature : spec.embedding.features) {
    const auto table = static_cast<std::size_t>(feature.table);
    if (local_index[table] >= 0) piece_of_feature.push_back(local_index[table]);
  }
  return create(spec, std::move(pieces), piece_of_feature, context, spec.embedding.pooling);
}

Status EmbeddingShard::copy_initial_weights(const void* weights, const embedding::TbeLayout& layout) {
  const std::size_t element = dtype_size_bytes(spec_.embedding.weight_dtype);
  for (std::size_t local = 0; local < pieces_.size(); ++local) {
    const TablePiece& piece = pieces_[local];
    const auto& source = layout.tables()[static_cast<std::size_t>(piece.table)];
    PARITY_CHECK_ARG(source.num_rows >= piece.row_end && source.dim >= piece.col_end, "initial weights: table ",
                     piece.table, " is ", source.num_rows, " x ", source.dim, " in the source layout; the piece needs ",
                     piece.row_end, " x ", piece.col_end);
    const auto* from = static_cast<const unsigned char*>(weights) +
                       static_cast<std::size_t>(layout.weights_offset(piece.table)) * element;
    unsigned char* to = weights_.data() + static_cast<std::size_t>(layout_.weights_offset(static_cast<int>(local))) * element;
    for (std::int64_t r = 0; r < piece.rows(); ++r) {
      std::memcpy(to + static_cast<std::size_t>(r * piece.cols()) * element,
                  from + static_cast<std::size_t>((piece.row_begin + r) * source.dim + piece.col_begin) * element,
                  static_cast<std::size_t>(piece.cols()) * element);
    }
  }
  return Status::ok();
}

embedding::TbeProblem EmbeddingShard::problem(std::int64_t batch_size) const {
  embedding::TbeProblem problem;
  problem.layout = layout_;
  problem.batch_size = batch_size;
  problem.num_indices = num_ids_;
  problem.index_dtype = DType::kI64;
  problem.weight_dtype = spec_.embedding.weight_dtype;
  problem.output_dtype = output_dtype_;
  problem.pooling = pooling_;
  problem.max_bag_length_hint = spec_.max_ids_per_sample();  // kernel selection only
  return problem;
}

void EmbeddingShard::set_batch(std::vector<std::int64_t> lengths, std::vector<std::int64_t> ids,
                               std::int64_t batch_size) {
  batch_size_ = batch_size;
  offsets_.assign(lengths.size() + 1, 0);
  for (std::size_t bag = 0; bag < lengths.size(); ++bag) offsets_[bag + 1] = offsets_[bag] + lengths[bag];
  ids_ = std::move(ids);
  num_ids_ = static_cast<std::int64_t>(ids_.size());
  num_offsets_ = static_cast<std::int64_t>(offsets_.size());
  is_batch_staged_ = false;
}

Status EmbeddingShard::set_batch_csr(const std::vector<std::int64_t>& offsets, const std::vector<std::int64_t>& ids,
                                     std::int64_t batch_size) {
  batch_size_ = batch_size;
  num_ids_ = static_cast<std::int64_t>(ids.size());
  num_offsets_ = static_cast<std::int64_t>(offsets.size());
  if (!is_on_device()) {
    offsets_ = offsets;
    ids_ = ids;
    return Status::ok();
  }
  offsets_.clear();
  ids_.clear();
  PARITY_RETURN_IF_ERROR(upload_batch(offsets.data(), ids.data()));
  is_batch_staged_ = true;
  return Status::ok();
}

// num_ids_ ids and num_offsets_ offsets to the device buffers (grown as needed).
Status EmbeddingShard::upload_batch(const std::int64_t* offsets, const std::int64_t* ids) {
  const std::int64_t ids_bytes = num_ids_ * 8, offsets_bytes = num_offsets_ * 8;
  if (device_ids_.size_bytes() < ids_bytes) {
    PARITY_ASSIGN_OR_RETURN(device_ids_, Buffer::allocate(context_.device, ids_bytes, "embedding shard ids"));
  }
  if (device_offsets_.size_bytes() < offsets_bytes) {
    PARITY_ASSIGN_OR_RETURN(device_offsets_, Buffer::allocate(context_.device, offsets_bytes, "embedding shard offsets"));
  }
  if (ids_bytes > 0) PARITY_RETURN_IF_ERROR(device_ids_.copy_from_host(ids, ids_bytes));
  return device_offsets_.copy_from_host(offsets, offsets_bytes);
}

Status EmbeddingShard::upload() {
  if (!is_on_device() || !has_tables()) return Status::ok();
  const auto upload_one = [&](const void* host, std::int64_t bytes, Buffer* device, const char* what) -> Status {
    if (device->size_bytes() != bytes) {
      PARITY_ASSIGN_OR_RETURN(*device, Buffer::allocate(context_.device, bytes, what));
    }
    return bytes == 0 ? Status::ok() : device->copy_from_host(host, bytes);
  };
  PARITY_RETURN_IF_ERROR(upload_one(weights_.data(), static_cast<std::int64_t>(weights_.size()), &device_weights_,
                                    "embedding shard weights"));
  PARITY_RETURN_IF_ERROR(upload_one(state1_.data(), static_cast<std::int64_t>(state1_.size()) * kFloat,
                                    &device_state1_, "embedding shard state1"));
  return upload_one(state2_.data(), static_cast<std::int64_t>(state2_.size()) * kFloat, &device_state2_,
                    "embedding shard state2");
}

Status EmbeddingShard::download() {
  if (!is_on_device() || !has_tables()) return Status::ok();
  PARITY_RETURN_IF_ERROR(device_weights_.copy_to_host(weights_.data(), device_weights_.size_bytes()));
  if (!state1_.empty()) PARITY_RETURN_IF_ERROR(device_state1_.copy_to_host(state1_.data(), device_state1_.size_bytes()));
  if (!state2_.empty()) PARITY_RETURN_IF_ERROR(device_state2_.copy_to_host(state2_.data(), device_state2_.size_bytes()));
  return Status::ok();
}

Status EmbeddingShard::stage_batch() {
  if (!is_on_device() || is_batch_staged_) return Status::ok();
  PARITY_RETURN_IF_ERROR(upload_batch(offsets_.data(), ids_.data()));
  is_batch_staged_ = true;
  return Status::ok();
}

embedding::TbeBatchView EmbeddingShard::batch_view() const {
  if (is_on_device()) return {device_ids_.data(), device_offsets_.data(), nullptr};
  return {ids_.data(), offsets_.data(), nullptr};
}

void* EmbeddingShard::tbe_weights() const {
  return is_on_device() ? device_weights_.data() : const_cast<unsigned char*>(weights_.data());
}

float* EmbeddingShard::tbe_state(const std::vector<float>& host, const Buffer& device) const {
  if (host.empty()) return nullptr;
  return is_on_device() ? device.as<float>() : const_cast<float*>(host.data());
}

Status EmbeddingShard::forward(void* pooled) {
  if (!has_tables() || batch_size_ == 0) return Status::ok();
  const auto bags = static_cast<std::size_t>(layout_.num_features() * batch_size_);
  PARITY_CHECK_ARG(num_offsets_ == static_cast<std::int64_t>(bags) + 1, "embedding batch: ", num_offsets_ - 1,
                   " bag lengths; the shard's ",
                   layout_.num_features(), " features x ", batch_size_, " samples need ", bags);
  PARITY_RETURN_IF_ERROR(stage_batch());
  embedding::TbeForwardArgs args;
  args.weights = tbe_weights();
  args.batch = batch_view();
  args.output = pooled;
  return embedding::tbe_forward(problem(batch_size_), args, context_);
}

Status EmbeddingShard::forward(const comm::RoutedSparseBatch& routed, float* owned_pooled) {
  if (!has_tables()) return Status::ok();
  set_batch(routed.lengths, routed.ids, routed.global_batch_size);
  return forward(owned_pooled);
}

Status EmbeddingShard::backward(const float* owned_grad, std::int64_t step) {
  if (!has_tables() || batch_size_ == 0) return Status::ok();
  // The same optimiser parameters as the single-rank model's TBE backward at this step.
  embedding::OptimizerParams optimizer = spec_.embedding.optimizer;
  optimizer.learning_rate =
      static_cast<float>(spec_.lr_schedule.learning_rate(spec_.embedding.optimizer.learning_rate, step));
  optimizer.step = step + 1;
  PARITY_RETURN_IF_ERROR(stage_batch());
  embedding::TbeBackwardArgs args;
  args.optimizer = optimizer;
  args.weights = tbe_weights();
  args.state1 = tbe_state(state1_, device_state1_);
  args.state2 = tbe_state(state2_, device_state2_);
  args.batch = batch_view();
  args.grad_output = owned_grad;
  return embedding::tbe_backward_fused(problem(batch_size_), args, context_);
}

EmbeddingShard::PieceBuffers EmbeddingShard::buffers(int piece) {
  const std::size_t element = dtype_size_bytes(spec_.embedding.weight_dtype);
  const auto kind = spec_.embedding.optimizer.kind;
  PieceBuffers buffers;
  buffers.weights = weights_.data() + static_cast<std::size_t>(layout_.weights_offset(piece)) * element;
  const std::int64_t begin = state_range(layout_, kind, piece).first;
  buffers.state_width = kind == embedding::OptimizerKind::kRowwiseAdagrad ? 1 : pieces_[static_cast<std::size_t>(piece)].cols();
  if (!state1_.empty()) buffers.state1 = state1_.data() + begin;
  if (!state2_.empty()) buffers.state2 = state2_.data() + begin;
  return buffers;
}

std::vector<TableBlob> EmbeddingShard::table_blobs() {
  std::vector<TableBlob> blobs;
  const std::size_t element = dtype_size_bytes(spec_.embedding.weight_dtype);
  for (std::size_t local = 0; local < pieces_.size(); ++local) {
    const TablePiece& piece = pieces_[local];
    const PieceBuffers b = buffers(static_cast<int>(local));
    const std::string prefix = piece_blob_prefix(piece, spec_);
    const auto state_bytes = static_cast<std::size_t>(piece.rows() * b.state_width * kFloat);
    blobs.push_back({prefix + "weights", b.weights, static_cast<std::size_t>(piece.rows() * piece.cols()) * element});
    if (b.state1 != nullptr) blobs.push_back({prefix + "state1", b.state1, state_bytes});
    if (b.state2 != nullptr) blobs.push_back({prefix + "state2", b.state2, state_bytes});
  }
  return blobs;
}

Status initialize_pieces(const model::ModelSpec& spec, std::uint64_t seed, const ExecutionContext& context,
                         const std::vector<EmbeddingShard*>& shards, std::vector<float>* dense_weights) {
  model::ModelSpec init_spec = spec;
  std::vector<bool> needed(init_spec.embedding.tables.size(), false);
  for (const EmbeddingShard* shard : shards) {
    for (const auto& piece : shard->pieces()) needed[static_cast<std::size_t>(piece.table)] = true;
  }
  for (std::size_t t = 0; t < needed.size(); ++t) {
    if (!needed[t]) init_spec.embedding.tables[t].num_rows = 1;
  }
  PARITY_ASSIGN_OR_RETURN(DlrmModel init, DlrmModel::create(init_spec, 1, context));
  PARITY_RETURN_IF_ERROR(init.initialize(seed));
  PARITY_ASSIGN_OR_RETURN(const auto layout, init_spec.tbe_layout());
  std::vector<unsigned char> host;
  for (const auto& state : init.state_buffers()) {
    const bool is_tables = state.name == "embedding.weights";
    if (!is_tables && (state.name != "dense.weights" || dense_weights == nullptr)) continue;
    host.resize(static_cast<std::size_t>(state.buffer->size_bytes()));
    PARITY_RETURN_IF_ERROR(state.buffer->copy_to_host(host.data(), state.buffer->size_bytes()));
    if (!is_tables) {
      dense_weights->resize(host.size() / sizeof(float));
      std::memcpy(dense_weights->data(), host.data(), host.size());
      continue;
    }
    for (EmbeddingShard* shard : shards) PARITY_RETURN_IF_ERROR(shard->copy_initial_weights(host.data(), layout));
  }
  return Status::ok();
}

}  // namespace parity::train::detail
