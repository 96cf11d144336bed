// EmbeddingShard (internal): the table pieces one rank holds (whole tables, row or column shards,
// or data-parallel replicas), looked up for a feature-major CSR batch (the routed global batch of
// its exchange units, or its own samples of replicated features) and updated by the fused TBE
// backward. Each piece is a TBE table of its rows x columns. The pieces live in host memory (for
// initialisation and checkpoints); on a GPU context the TBE runs on device copies, made by
// upload() and read back by download(), and each batch's ids are copied to the device.
//
// Legend: G rows of the batch, F_o features (units) read here, P_o their pooled width.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/comm/embedding_exchange.hpp"
#include "parity/core/op.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/buffer.hpp"
#include "parity/train/checkpoint_file.hpp"
#include "train/dist_placement.hpp"

namespace parity::train::detail {

/// One table's piece of the training state, for checkpoints: `name` is
/// "embedding.table<t>.weights|state1|state2" with t the spec's table index.
struct TableBlob {
  std::string name;
  void* data = nullptr;
  std::size_t size_bytes = 0;
};

/// "embedding.table<t>." for a whole table, "embedding.table<t>.rows<a>-<b>.cols<c>-<d>." for a
/// piece: the checkpoint blob prefix of a piece.
std::string piece_blob_prefix(const TablePiece& piece, const model::ModelSpec& spec);

class EmbeddingShard {
 public:
  /// `pieces` become the TBE tables in their order; feature i of a batch reads
  /// pieces[piece_of_feature[i]] (ids relative to the piece's first row). `pooling`: the TBE's
  /// (sum for units whose mean is taken at the sample's rank, see fold_units).
  static Result<EmbeddingShard> create(const model::ModelSpec& spec, std::vector<TablePiece> pieces,
                                       const std::vector<int>& piece_of_feature, const ExecutionContext& context,
                                       embedding::PoolingMode pooling);
  /// Table-wise: the tables with table_owner[t] == rank, read by their features in spec order.
  static Result<EmbeddingShard> create(const model::ModelSpec& spec, const std::vector<int>& table_owner,
                                       int rank, const ExecutionContext& context);

  /// Copies the pieces out of a full model's packed weights (`layout` is that model's).
  Status copy_initial_weights(const void* weights, const embedding::TbeLayout& layout);
  /// GPU context: the host pieces to the device (after initialisation or a restore) and back
  /// (before a checkpoint). No-ops on the CPU, where the TBE runs on the host pieces.
  Status upload();
  Status download();
  /// The pooled rows' dtype (fp32 unless set; bf16 runs pool into bf16 activations).
  void set_output_dtype(DType dtype) { output_dtype_ = dtype; }

  /// The batch of the next forward/backward: lengths [F_o][batch_size], ids in that order.
  void set_batch(std::vector<std::int64_t> lengths, std::vector<std::int64_t> ids, std::int64_t batch_size);
  /// The same batch given as its CSR (offsets: F_o·batch_size + 1 entries): on a GPU copied to
  /// the device at once, without a host copy; on the CPU kept as a copy.
  Status set_batch_csr(const std::vector<std::int64_t>& offsets, const std::vector<std::int64_t>& ids,
                       std::int64_t batch_size);
  /// Pooled rows of the batch: [G][P_o] of the output dtype, on the context's device.
  Status forward(void* pooled);
  /// set_batch(routed) and forward.
  Status forward(const comm::RoutedSparseBatch& routed, float* owned_pooled);
  /// The fused TBE backward and table update for the current batch.
  Status backward(const float* owned_grad, std::int64_t step);

  std::int64_t owned_width() const { return has_tables() ? layout_.total_output_dim() : 0; }
  bool has_tables() const { return !pieces_.empty(); }
  const std::vector<TablePiece>& pieces() const { return pieces_; }
  /// A piece's weights ([rows][cols], weight dtype) and optimiser state ([rows][state_width]).
  struct PieceBuffers {
    unsigned char* weights = nullptr;
    float* state1 = nullptr;
    float* state2 = nullptr;
    int state_width = 0;
  };
  PieceBuffers buffers(int piece);
  /// The pieces' weights and optimiser state, one blob per piece and buffer.
  std::vector<TableBlob> table_blobs();

 private:
  embedding::TbeProblem problem(std::int64_t batch_size) const;
  bool is_on_device() const { return context_.device != DeviceKind::kCpu; }
  // The TBE's pointers (device copies on a GPU), after copying the batch there if it changed.
  Status stage_batch();
  Status upload_batch(const std::int64_t* offsets, const std::int64_t* ids);
  void* tbe_weights() const;
  embedding::TbeBatchView batch_view() const;
  float* tbe_state(const std::vector<float>& host, const Buffer& device) const;

  model::ModelSpec spec_;
  ExecutionContext context_;
  std::vector<TablePiece> pieces_;
  embedding::PoolingMode pooling_ = embedding::PoolingMode::kSum;
  DType output_dtype_ = DType::kF32;
  embedding::TbeLayout layout_;  // the owned tables only
  std::vector<unsigned char> weights_;
  std::vector<float> state1_, state2_;
  // The routed batch of the last forward, feature-major CSR over the global batch.
  std::vector<std::int64_t> offsets_;
  std::vector<std::int64_t> ids_;
  std::int64_t batch_size_ = 0;
  std::int64_t num_ids_ = 0, num_offsets_ = 0;  // of the batch (the vectors may be on the device only)
  // GPU context only: the pieces and the batch on the device.
  Buffer device_weights_, device_state1_, device_state2_, device_ids_, device_offsets_;
  bool is_batch_staged_ = false;
};

/// Fills the shards' pieces (host) with the single-process model's initial values: a model of
/// `spec` whose tables with no piece in `shards` have one row, initialised with `seed` on
/// `context`'s device (the same per-table counter streams as the full model), its tables copied
/// out. `dense_weights` (optional) receives that model's dense weights.
Status initialize_pieces(const model::ModelSpec& spec, std::uint64_t seed, const ExecutionContext& context,
                         const std::vector<EmbeddingShard*>& shards, std::vector<float>* dense_weights);

}  // namespace parity::train::detail
