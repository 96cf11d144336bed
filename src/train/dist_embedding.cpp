// EmbeddingShard: the owned tables of a table-wise placement (see dist_embedding.hpp).
#include "train/dist_embedding.hpp"

#include <cstring>

#include "parity/core/dtype.hpp"
#include "parity/embedding/tbe_op.hpp"

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
  problem.num_indices = static_cast<std::int64_t>(ids_.size());
  problem.index_dtype = DType::kI64;
  problem.weight_dtype = spec_.embedding.weight_dtype;
  problem.output_dtype = DType::kF32;
  problem.pooling = pooling_;
  return problem;
}

void EmbeddingShard::set_batch(std::vector<std::int64_t> lengths, std::vector<std::int64_t> ids,
                               std::int64_t batch_size) {
  batch_size_ = batch_size;
  offsets_.assign(lengths.size() + 1, 0);
  for (std::size_t bag = 0; bag < lengths.size(); ++bag) offsets_[bag + 1] = offsets_[bag] + lengths[bag];
  ids_ = std::move(ids);
}

Status EmbeddingShard::forward(float* pooled) {
  if (!has_tables() || batch_size_ == 0) return Status::ok();
  const auto bags = static_cast<std::size_t>(layout_.num_features() * batch_size_);
  PARITY_CHECK_ARG(offsets_.size() == bags + 1, "embedding batch: ", offsets_.size() - 1, " bag lengths; the shard's ",
                   layout_.num_features(), " features x ", batch_size_, " samples need ", bags);
  embedding::TbeForwardArgs args;
  args.weights = weights_.data();
  args.batch = embedding::TbeBatchView{ids_.data(), offsets_.data(), nullptr};
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
  embedding::TbeBackwardArgs args;
  args.optimizer = optimizer;
  args.weights = weights_.data();
  args.state1 = state1_.data();
  args.state2 = state2_.data();
  args.batch = embedding::TbeBatchView{ids_.data(), offsets_.data(), nullptr};
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

}  // namespace parity::train::detail
