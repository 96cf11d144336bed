// Table-batched embeddings (TBE): many embedding tables packed into one weights buffer, looked up
// in one pass over a feature-major CSR batch, pooled per bag; backward aggregates per unique row
// and applies the optimiser once per row. Plain C++: the GPU entry points live in tbe_gpu.hpp.
//
// Legend: T tables, F features (feature f reads table table_of_feature[f]), B batch size,
// N indices, D_t the dim of table t, E_t its rows. Bag (f, b) is
// indices[offsets[f*B + b] : offsets[f*B + b + 1]]. Pooled output is row-major [B, sum_f D_f],
// feature f in columns [output_column_offset(f), output_column_offset(f+1)); unpooled (kNone)
// output is [N, D] with one D for all tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"

namespace parity::embedding {

inline constexpr int kMaxEmbeddingDim = 2048;
inline constexpr int kEmbeddingDimMultiple = 4;

enum class PoolingMode : std::uint8_t { kSum, kMean, kNone };
enum class OptimizerKind : std::uint8_t { kSgd, kRowwiseAdagrad, kAdagrad, kAdam };
// kL2 adds wd*w to the gradient; kDecoupled scales the row by (1 - lr*wd) (row-wise Adagrad).
enum class WeightDecayMode : std::uint8_t { kNone, kL2, kDecoupled };
// kError: report, change nothing; kFix: bad index -> 0, offsets repaired; kOff: no check.
enum class BoundsCheckMode : std::uint8_t { kError, kFix, kOff };

const char* pooling_mode_name(PoolingMode mode);
const char* optimizer_kind_name(OptimizerKind kind);
const char* bounds_check_mode_name(BoundsCheckMode mode);
Result<PoolingMode> parse_pooling_mode(const std::string& text);      // sum, mean, none
Result<OptimizerKind> parse_optimizer_kind(const std::string& text);  // sgd, rowwise_adagrad, ...
Result<BoundsCheckMode> parse_bounds_check_mode(const std::string& text);  // error, fix, off

struct TableSpec {
  std::int64_t num_rows = 0;
  int dim = 0;
  /// Elements from one row's start to the next's: 0 = dim (packed rows); else >= dim, a multiple
  /// of 4. Padding keeps rows off DRAM fetch boundaries (aligned_row_stride); only addressing reads
  /// it: lookups, outputs and optimiser results never see the padding.
  int row_stride = 0;
};

/// The row stride the library recommends for `dim` in `weight_dtype`: of the 16-byte multiples up
/// to a third above the row, the one whose rows touch the fewest 64-byte DRAM fetches, where that
/// saves at least 5% of them; else dim (packed). A 56-byte bf16 row (D=28) touches 1.75 fetches
/// on average packed and 1 at a 64-byte stride (docs/embedding.md, "Row stride").
int aligned_row_stride(int dim, DType weight_dtype);
/// `tables` with every row_stride set to aligned_row_stride(dim, weight_dtype).
std::vector<TableSpec> with_aligned_row_strides(std::vector<TableSpec> tables, DType weight_dtype);

/// Where every table lives in the packed weights buffer, and what each feature reads. Built once
/// by `create`, which validates and derives the per-table and per-feature arrays.
class TbeLayout {
 public:
  /// `table_of_feature` empty means one feature per table, in order.
  static Result<TbeLayout> create(std::vector<TableSpec> tables,
                                  std::vector<int> table_of_feature = {});

  int num_tables() const { return static_cast<int>(tables_.size()); }
  int num_features() const { return static_cast<int>(table_of_feature_.size()); }
  const std::vector<TableSpec>& tables() const { return tables_; }
  const std::vector<int>& table_of_feature() const { return table_of_feature_; }
  /// Element offset of table t's row 0 in the weights buffer (multiple of 4; of 32 for a table
  /// whose rows are padded, so its rows start on 64-byte boundaries in every dtype).
  std::int64_t weights_offset(int table) const { return weights_offsets_[table]; }
  /// Elements from one row of table t to the next (dim unless the table's rows are padded).
  int row_stride(int table) const { return row_strides_[table]; }
  int feature_row_stride(int feature) const { return row_strides_[table_of_feature_[feature]]; }
  /// Every table's rows packed (row_stride == dim, offsets running on): the trainer's layout.
  bool is_packed() const { return is_packed_; }
  /// First global row id of table t (rows of all tables numbered consecutively); row-wise state.
  std::int64_t row_base(int table) const { return row_bases_[table]; }
  std::int64_t output_column_offset(int feature) const { return output_column_offsets_[feature]; }
  int feature_dim(int feature) const { return tables_[table_of_feature_[feature]].dim; }
  std::int64_t feature_rows(int feature) const { return tables_[table_of_feature_[feature]].num_rows; }
  std::int64_t total_rows() const { return row_bases_.back(); }
  std::int64_t total_weight_elements() const { return weights_offsets_.back(); }
  /// Sum over features of D_f: the width of a pooled output row.
  std::int64_t total_output_dim() const { return output_column_offsets_.back(); }
  int max_dim() const { return max_dim_; }
  /// Bits needed for a global row id (ceil(log2(total_rows))), at least 1.
  int row_bits() const { return row_bits_; }
  const std::vector<std::int64_t>& weights_offsets() const { return weights_offsets_; }
  const std::vector<std::int64_t>& row_bases() const { return row_bases_; }
  const std::vector<std::int64_t>& output_column_offsets() const { return output_column_offsets_; }
  /// The weights' elements over the packed layout's, less 1: what the padded row strides cost.
  double padding_fraction() const;

 private:
  std::vector<TableSpec> tables_;
  std::vector<int> table_of_feature_;
  std::vector<std::int64_t> weights_offsets_;        // T+1, elements
  std::vector<std::int64_t> row_bases_;              // T+1
  std::vector<std::int64_t> output_column_offsets_;  // F+1
  std::vector<int> row_strides_;                     // T, elements
  bool is_packed_ = true;
  int max_dim_ = 0;
  int row_bits_ = 1;
};

/// One batch's shape and dtypes. Indices and offsets share index_dtype (int32 or int64).
struct TbeProblem {
  TbeLayout layout;
  std::int64_t batch_size = 0;
  std::int64_t num_indices = 0;
  DType index_dtype = DType::kI64;
  DType weight_dtype = DType::kF32;   // fp32, fp16, bf16
  DType output_dtype = DType::kF32;   // fp32, fp16, bf16 (gradients are always fp32)
  PoolingMode pooling = PoolingMode::kSum;
  bool has_per_sample_weights = false;
  /// The longest bag any feature may hold, when the caller knows it (its multi-hot sizes); 0 =
  /// unknown. Only kernel selection reads it (kernels whose tail walks a bag serially are chosen
  /// only under a known bound); results never depend on it.
  std::int64_t max_bag_length_hint = 0;

  std::int64_t num_bags() const { return static_cast<std::int64_t>(layout.num_features()) * batch_size; }
  std::int64_t num_offsets() const { return num_bags() + 1; }
  /// Rows x columns of the output (and of grad_output).
  std::int64_t output_rows() const { return pooling == PoolingMode::kNone ? num_indices : batch_size; }
  std::int64_t output_cols() const {
    return pooling == PoolingMode::kNone ? layout.max_dim() : layout.total_output_dim();
  }
  /// Checks sizes and dtypes (not the contents of indices/offsets: that is the bounds check).
  Status validate() const;
};

struct OptimizerParams {
  OptimizerKind kind = OptimizerKind::kSgd;
  float learning_rate = 0.01f;
  float eps = 1e-8f;
  float weight_decay = 0.0f;
  WeightDecayMode weight_decay_mode = WeightDecayMode::kNone;  // row-wise Adagrad only
  float max_norm = 0.0f;  // row-wise Adagrad: rescale the row to this L2 norm if above; 0 = off
  float beta1 = 0.9f;     // Adam
  float beta2 = 0.999f;   // Adam
  std::int64_t step = 1;  // Adam bias correction uses this global step (>= 1)
  Status validate() const;
};

/// fp32 state per row: 0 (SGD), 1 (row-wise Adagrad, indexed by global row), D (Adagrad, shaped
/// like the weights), 2D (Adam: m in state1 and v in state2, both shaped like the weights).
/// Sizes of the two fp32 state buffers (elements) for a layout and optimiser.
std::int64_t optimizer_state1_elements(const TbeLayout& layout, OptimizerKind kind);
std::int64_t optimizer_state2_elements(const TbeLayout& layout, OptimizerKind kind);

/// Positions per chunk of the GPU backward (one warp's work; the chunk partials are 2 rows of
/// max_dim floats per chunk). kLong: max(128, max_dim). kShort (the default): max(32, P,
/// min(long, ceil(num_indices / 8192))), about 8192 chunks where rows allow, P the fewest
/// positions that keep the partials within max(32 B per index, 32 MiB): ceil(max_dim / 4) on
/// batches of 2^20 indices or more, less on smaller ones. kShortPerIndexPartials: P =
/// ceil(max_dim / 4) at every size (partials <= 32 B per index; the short length before).
/// A function of the problem only, so sums do not depend on the launch. Shared by the backward,
/// the trainer's memory plan and the planner's cost model.
enum class BackwardChunkLength : std::uint8_t { kShort, kLong, kShortPerIndexPartials };
std::int64_t tbe_backward_chunk_positions(std::int64_t num_indices, int max_dim, BackwardChunkLength length);

/// Host view of one batch. `indices` and `offsets` point at index_dtype elements.
struct TbeBatchView {
  const void* indices = nullptr;
  const void* offsets = nullptr;
  const float* per_sample_weights = nullptr;  // N, or null when !has_per_sample_weights
};

/// The outcome of a bounds check. Counts are exact; "first" is the lowest bad position.
struct BoundsCheckReport {
  std::int64_t bad_indices = 0;
  std::int64_t bad_offsets = 0;
  bool last_offset_fixed = false;  // the last offset was not num_indices (fix mode repaired it)
  bool has_bad_index = false;
  int first_bad_feature = -1;
  int first_bad_table = -1;
  std::int64_t first_bad_bag = -1;       // b within the feature
  std::int64_t first_bad_position = -1;  // position in indices
  std::int64_t first_bad_value = 0;
  std::int64_t first_bad_table_rows = 0;
  bool has_bad_offset = false;
  std::int64_t first_bad_offset_position = -1;  // position in offsets
  std::int64_t first_bad_offset_value = 0;
  bool is_clean() const { return bad_indices == 0 && bad_offsets == 0; }
  /// One line: counts and the first bad entry, for warnings and errors.
  std::string describe() const;
};

/// kInvalidArgument naming table, bag, position and value in error mode when the report is not
/// clean; ok otherwise (fix mode's repairs are warnings: read the counts from the report).
Status bounds_check_status(const BoundsCheckReport& report, BoundsCheckMode mode);

/// Byte models (docs/embedding.md): the fewest bytes each pass must move.
struct TbeByteModel {
  double forward_bytes = 0;             // rows read per index + output + indices + offsets (+psw)
  double forward_unique_rows_bytes = 0;  // DRAM floor: unique rows read once
  double backward_bytes = 0;            // idx + grad rows per index + 2 U D s_w + 2 U S (+psw)
  double bounds_check_bytes = 0;        // indices + offsets read
};
/// Per-feature index counts N_f and unique-row counts U_f, counted on the host from the batch.
TbeByteModel tbe_byte_model(const TbeProblem& problem, OptimizerKind optimizer,
                            const std::vector<std::int64_t>& indices_per_feature,
                            const std::vector<std::int64_t>& unique_rows_per_feature);

}  // namespace parity::embedding
