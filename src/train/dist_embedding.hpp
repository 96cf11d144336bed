// EmbeddingShard (internal): the embedding tables one rank owns under a table-wise placement,
// looked up for the global batch that route_sparse_batch delivered (the features reading its
// tables, ascending), and updated by the fused TBE backward. Host memory (CPU ranks).
//
// Legend: G global batch, F_o owned features, P_o their pooled width (sum of their dims).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/comm/embedding_exchange.hpp"
#include "parity/core/op.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/checkpoint_file.hpp"

namespace parity::train::detail {

/// One table's piece of the training state, for checkpoints: `name` is
/// "embedding.table<t>.weights|state1|state2" with t the spec's table index.
struct TableBlob {
  std::string name;
  void* data = nullptr;
  std::size_t size_bytes = 0;
};

class EmbeddingShard {
 public:
  /// The tables of `spec` with table_owner[t] == rank (the layout keeps the spec's order).
  static Result<EmbeddingShard> create(const model::ModelSpec& spec, const std::vector<int>& table_owner,
                                       int rank, const ExecutionContext& context);

  /// Exchange units of the all-to-alls are features: feature f goes to its table's owner.
  const std::vector<int>& feature_owner() const { return feature_owner_; }
  /// Copies the owned tables out of a full model's packed weights (`layout` is that model's).
  Status copy_initial_weights(const void* weights, const embedding::TbeLayout& layout);

  /// Pooled rows of the owned features for the routed global batch: [G][P_o], fp32.
  Status forward(const comm::RoutedSparseBatch& routed, float* owned_pooled);
  /// The fused TBE backward and table update for the batch of the last forward().
  Status backward(const float* owned_grad, std::int64_t step);

  std::int64_t owned_width() const { return has_tables() ? layout_.total_output_dim() : 0; }
  bool has_tables() const { return !tables_.empty(); }
  /// The owned tables' weights and optimiser state, one blob per table and buffer.
  std::vector<TableBlob> table_blobs();

 private:
  embedding::TbeProblem problem(std::int64_t batch_size) const;

  model::ModelSpec spec_;
  ExecutionContext context_;
  std::vector<int> tables_;   // spec table indices owned here, ascending
  std::vector<int> feature_owner_;
  embedding::TbeLayout layout_;  // the owned tables only
  std::vector<unsigned char> weights_;
  std::vector<float> state1_, state2_;
  // The routed batch of the last forward, feature-major CSR over the global batch.
  std::vector<std::int64_t> offsets_;
  std::vector<std::int64_t> ids_;
  std::int64_t batch_size_ = 0;
};

}  // namespace parity::train::detail
