// ShardLayout (internal): a validated placement of the distributed trainer, as the pieces each
// rank holds and the exchange units the all-to-alls carry.
//
// An exchange unit is one feature's part on one shard: the feature of a table-wise table is one
// unit (all columns, all rows); of a column-wise table, one unit per column shard (the same ids,
// a column range of the pooled row); of a row-wise table, one unit per row shard (the ids falling
// in its rows, rebased to the shard, pooled into a partial sum of all columns). Units are
// feature-major, shards in row or column order. Features of data-parallel tables are no units:
// every rank pools its own samples from its replica.
//
// Legend: L rows of this rank, P the model's pooled width, U the units' total width.
#pragma once

#include <cstdint>
#include <vector>

#include "parity/comm/embedding_exchange.hpp"
#include "parity/data/dataset.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/dist_trainer.hpp"

namespace parity::train::detail {

/// One table's piece on one rank: rows [row_begin, row_end) x columns [col_begin, col_end).
struct TablePiece {
  int table = 0;
  int rank = 0;
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  int col_begin = 0;
  int col_end = 0;
  std::int64_t rows() const { return row_end - row_begin; }
  int cols() const { return col_end - col_begin; }
};

struct ExchangeUnit {
  int feature = 0;
  TablePiece piece;
  /// A row-wise shard's partial sum: folded into the pooled row by addition (the first by copy).
  bool is_partial = false;
  bool is_first_partial = false;
};

struct ShardLayout {
  std::vector<plan::ShardingType> table_type;
  std::vector<ExchangeUnit> units;
  std::vector<int> replicated_features;  // features of data-parallel tables, ascending
  std::vector<int> replicated_tables;    // data-parallel tables, ascending
  /// Every table's pieces, for checkpoints: the shards of sharded tables and one whole piece on
  /// rank 0 for each data-parallel table (its replicas are equal).
  std::vector<TablePiece> saved_pieces;

  /// Pieces of rank `rank`'s sharded tables (table, then shard order) and the piece each of its
  /// units reads (its units in unit order: the routed order).
  std::vector<TablePiece> pieces_of(int rank, std::vector<int>* piece_of_unit) const;
  /// Rank `rank`'s replicas: every data-parallel table whole, and the replica each replicated
  /// feature reads (in replicated_features order).
  std::vector<TablePiece> replica_pieces(const model::ModelSpec& spec, int rank,
                                         std::vector<int>* replica_of_feature) const;
  /// The pooled width of the replicated features.
  std::int64_t replicated_width(const model::ModelSpec& spec) const;
  std::vector<int> unit_owners() const;
  std::vector<std::int64_t> unit_widths() const;
  std::int64_t units_width() const;
};

/// Validates `placement` (table_owner or tables) for `spec` on `num_ranks` ranks. Errors name the
/// table and the reason.
Result<ShardLayout> make_shard_layout(const TablePlacement& placement, const model::ModelSpec& spec, int num_ranks);

/// Rows [begin, begin + count) of `batch` as the units' CSR (exchange units are the units).
comm::SparseBatch unit_slice(const data::Batch& batch, const ShardLayout& layout, std::int64_t begin,
                             std::int64_t count);
/// Rows [begin, begin + count) of the given features of `batch`: feature-major lengths and ids.
void feature_slice(const data::Batch& batch, const std::vector<int>& features, std::int64_t begin,
                   std::int64_t count, std::vector<std::int64_t>* lengths, std::vector<std::int64_t>* ids);

/// Mean pooling, taken at the sample's rank (a row shard sees part of a bag, not its length):
/// units pool sums, and fold_units multiplies each bag's sum by mean_scale[b * F + f] = 1 / L
/// (1 for an empty bag), as the single-rank TBE scales its sum; spread_to_units multiplies the
/// gradient by it, as that TBE's backward does. Empty for sum pooling.
std::vector<float> mean_scales(const data::Batch& batch, const model::ModelSpec& spec, std::int64_t begin,
                               std::int64_t count);
/// units [rows][U] -> pooled [rows][P]: column units copied to their columns, row-wise partials
/// summed in shard order (the first copied), then scaled (mean_scale, when not null). Columns of
/// data-parallel features are left alone.
void fold_units(const ShardLayout& layout, const model::ModelSpec& spec, std::int64_t rows, const float* units,
                const float* mean_scale, float* pooled);
/// Its backward: pooled gradient [rows][P] -> units [rows][U] (every row-wise shard gets the whole
/// gradient of its feature, a column shard its columns), scaled like the forward.
void spread_to_units(const ShardLayout& layout, const model::ModelSpec& spec, std::int64_t rows,
                     const float* pooled_grad, const float* mean_scale, float* units);
/// Columns of `features` between a [rows][P] pooled buffer and a packed [rows][sum of their dims].
enum class ColumnCopy : std::uint8_t { kPackedToPooled, kPooledToPacked };
void copy_feature_columns(const model::ModelSpec& spec, const std::vector<int>& features, std::int64_t rows,
                          ColumnCopy direction, const float* from, float* to);

}  // namespace parity::train::detail
