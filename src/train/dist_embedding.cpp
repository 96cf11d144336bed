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

Result<EmbeddingShard> EmbeddingShard::create(const model::ModelSpec& spec, const std::vector<int>& table_owner,
                                              int rank, const ExecutionContext& context) {
  const auto num_tables = spec.embedding.tables.size();
  PARITY_CHECK_ARG(table_owner.size() == num_tables, "placement: ", table_owner.size(), " owners for ",
                   num_tables, " tables");
  EmbeddingShard shard;
  shard.spec_ = spec;
  shard.context_ = context;
  std::vector<int> local_index(num_tables, -1);
  std::vector<embedding::TableSpec> tables;
  for (std::size_t t = 0; t < num_tables; ++t) {
    if (table_owner[t] != rank) continue;
    local_index[t] = static_cast<int>(shard.tables_.size());
    shard.tables_.push_back(static_cast<int>(t));
    tables.push_back({spec.embedding.tables[t].num_rows, spec.embedding.tables[t].dim});
  }
  std::vector<int> table_of_feature;
  for (const auto& feature : spec.embedding.features) {
    const auto table = static_cast<std::size_t>(feature.table);
    shard.feature_owner_.push_back(table_owner[table]);
    if (local_index[table] >= 0) table_of_feature.push_back(local_index[table]);
  }
  if (!shard.has_tables()) return shard;
  PARITY_ASSIGN_OR_RETURN(shard.layout_, embedding::TbeLayout::create(tables, table_of_feature));
  const auto kind = spec.embedding.optimizer.kind;
  shard.weights_.assign(static_cast<std::size_t>(shard.layout_.total_weight_elements()) *
                            dtype_size_bytes(spec.embedding.weight_dtype), 0);
  shard.state1_.assign(static_cast<std::size_t>(embedding::optimizer_state1_elements(shard.layout_, kind)), 0.0f);
  shard.state2_.assign(static_cast<std::size_t>(embedding::optimizer_state2_elements(shard.layout_, kind)), 0.0f);
  return shard;
}

Status EmbeddingShard::copy_initial_weights(const void* weights, const embedding::TbeLayout& layout) {
  const std::size_t element = dtype_size_bytes(spec_.embedding.weight_dtype);
  for (std::size_t local = 0; local < tables_.size(); ++local) {
    const int table = tables_[local];
    const auto& spec = layout_.tables()[local];
    PARITY_CHECK_ARG(layout.tables()[static_cast<std::size_t>(table)].num_rows == spec.num_rows &&
                         layout.tables()[static_cast<std::size_t>(table)].dim == spec.dim,
                     "initial weights: table ", table, " has another shape in the source layout");
    std::memcpy(weights_.data() + static_cast<std::size_t>(layout_.weights_offset(static_cast<int>(local))) * element,
                static_cast<const unsigned char*>(weights) +
                    static_cast<std::size_t>(layout.weights_offset(table)) * element,
                static_cast<std::size_t>(spec.num_rows * spec.dim) * element);
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
  problem.pooling = spec_.embedding.pooling;
  return problem;
}

Status EmbeddingShard::forward(const comm::RoutedSparseBatch& routed, float* owned_pooled) {
  if (!has_tables()) return Status::ok();
  const std::int64_t batch = routed.global_batch_size;
  const auto bags = static_cast<std::size_t>(layout_.num_features() * batch);
  PARITY_CHECK_ARG(routed.lengths.size() == bags, "routed batch: ", routed.lengths.size(),
                   " bag lengths; the shard's ", layout_.num_features(), " features x ", batch,
                   " samples need ", bags);
  batch_size_ = batch;
  offsets_.assign(bags + 1, 0);
  for (std::size_t bag = 0; bag < bags; ++bag) offsets_[bag + 1] = offsets_[bag] + routed.lengths[bag];
  ids_ = routed.ids;
  embedding::TbeForwardArgs args;
  args.weights = weights_.data();
  args.batch = embedding::TbeBatchView{ids_.data(), offsets_.data(), nullptr};
  args.output = owned_pooled;
  return embedding::tbe_forward(problem(batch), args, context_);
}

Status EmbeddingShard::backward(const float* owned_grad, std::int64_t step) {
  if (!has_tables()) return Status::ok();
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

std::vector<TableBlob> EmbeddingShard::table_blobs() {
  std::vector<TableBlob> blobs;
  const std::size_t element = dtype_size_bytes(spec_.embedding.weight_dtype);
  const auto kind = spec_.embedding.optimizer.kind;
  for (std::size_t local = 0; local < tables_.size(); ++local) {
    const int t = static_cast<int>(local);
    const auto& spec = layout_.tables()[local];
    const std::string prefix = "embedding.table" + std::to_string(tables_[local]) + ".";
    blobs.push_back({prefix + "weights",
                     weights_.data() + static_cast<std::size_t>(layout_.weights_offset(t)) * element,
                     static_cast<std::size_t>(spec.num_rows * spec.dim) * element});
    const auto [begin, count] = state_range(layout_, kind, t);
    if (!state1_.empty()) {
      blobs.push_back({prefix + "state1", state1_.data() + begin, static_cast<std::size_t>(count * kFloat)});
    }
    if (!state2_.empty()) {
      blobs.push_back({prefix + "state2", state2_.data() + begin, static_cast<std::size_t>(count * kFloat)});
    }
  }
  return blobs;
}

}  // namespace parity::train::detail
