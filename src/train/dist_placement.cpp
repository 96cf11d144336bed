// Placements of the distributed trainer: greedy and plan placements (public), their validation
// into a ShardLayout, and the unit slicing and folding of the all-to-alls (see dist_placement.hpp).
#include "train/dist_placement.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "parity/core/dtype.hpp"
#include "parity/embedding/tbe.hpp"

namespace parity::train {

namespace {

using plan::ShardingType;

std::vector<std::int64_t> feature_column_offsets(const model::ModelSpec& spec) {
  std::vector<std::int64_t> offsets(1, 0);
  for (const auto& feature : spec.embedding.features) {
    offsets.push_back(offsets.back() + spec.embedding.tables[static_cast<std::size_t>(feature.table)].dim);
  }
  return offsets;
}

bool is_whole(const plan::Shard& shard, const model::TableConfig& table) {
  return shard.row_begin == 0 && shard.row_end == table.num_rows && shard.col_begin == 0 && shard.col_end == table.dim;
}

// Shards of a row-wise (columns: false) or column-wise (true) table must tile its rows or columns
// in order, each spanning the other dimension whole.
Status check_tiling(const ShardedTable& sharded, const model::TableConfig& table, bool by_columns) {
  std::int64_t next = 0;
  for (std::size_t k = 0; k < sharded.shards.size(); ++k) {
    const auto& shard = sharded.shards[k];
    const std::int64_t begin = by_columns ? shard.col_begin : shard.row_begin;
    const std::int64_t end = by_columns ? shard.col_end : shard.row_end;
    const bool other_whole = by_columns ? (shard.row_begin == 0 && shard.row_end == table.num_rows)
                                        : (shard.col_begin == 0 && shard.col_end == table.dim);
    PARITY_CHECK_ARG(begin == next && end > begin && other_whole, "shard ", k, " (rows [", shard.row_begin, ", ",
                     shard.row_end, "), columns [", shard.col_begin, ", ", shard.col_end, ")) does not continue the ",
                     by_columns ? "columns" : "rows", " at ", next, " spanning all ",
                     by_columns ? "rows" : "columns");
    if (by_columns) {
      PARITY_CHECK_ARG((end - begin) % embedding::kEmbeddingDimMultiple == 0, "shard ", k, ": ", end - begin,
                       " columns are not a multiple of ", embedding::kEmbeddingDimMultiple);
    }
    next = end;
  }
  PARITY_CHECK_ARG(next == (by_columns ? table.dim : table.num_rows), "the shards end at ", next, " of ",
                   by_columns ? table.dim : table.num_rows, by_columns ? " columns" : " rows");
  return Status::ok();
}

Status check_table(const ShardedTable& sharded, const model::ModelSpec& spec, std::size_t t, int num_ranks) {
  const auto& table = spec.embedding.tables[t];
  PARITY_CHECK_ARG(!sharded.shards.empty(), "no shards");
  for (const auto& shard : sharded.shards) {
    PARITY_CHECK_ARG(shard.rank >= 0 && shard.rank < num_ranks, "a shard is on rank ", shard.rank, ", outside [0, ",
                     num_ranks, ")");
  }
  switch (sharded.type) {
    case ShardingType::kTableWise:
      PARITY_CHECK_ARG(sharded.shards.size() == 1 && is_whole(sharded.shards.front(), table),
                       "table_wise needs one shard of the whole table (", table.num_rows, " x ", table.dim, ")");
      return Status::ok();
    case ShardingType::kRowWise:
      return check_tiling(sharded, table, false);
    case ShardingType::kColumnWise:
      if (spec.embedding.optimizer.kind == embedding::OptimizerKind::kRowwiseAdagrad) {
        return unsupported("column_wise with row-wise Adagrad: its per-row state is the mean of g^2 over all ",
                           table.dim, " columns, which no column shard sees; place it table_wise or row_wise, or "
                           "train the tables with sgd, adagrad or adam");
      }
      return check_tiling(sharded, table, true);
    case ShardingType::kDataParallel: {
      std::vector<int> ranks;
      for (const auto& shard : sharded.shards) {
        PARITY_CHECK_ARG(is_whole(shard, table), "data_parallel shards must be whole tables");
        ranks.push_back(shard.rank);
      }
      std::sort(ranks.begin(), ranks.end());
      std::vector<int> every(static_cast<std::size_t>(num_ranks));
      std::iota(every.begin(), every.end(), 0);
      PARITY_CHECK_ARG(ranks == every, "data_parallel needs one replica on each of the ", num_ranks, " ranks (it has ",
                       sharded.shards.size(), " shards)");
      return Status::ok();
    }
  }
  return Status::ok();
}

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
  bool all_table_wise = true;
  for (std::size_t t = 0; t < plan.tables.size(); ++t) {
    const auto& table = plan.tables[t];
    PARITY_CHECK_ARG(table.table == spec.embedding.tables[t].name, "plan: table ", t, " is '", table.table,
                     "'; the model's is '", spec.embedding.tables[t].name, "'");
    placement.tables.push_back({table.type, table.shards});
    all_table_wise = all_table_wise && table.type == ShardingType::kTableWise && table.shards.size() == 1;
    if (all_table_wise) placement.table_owner.push_back(table.shards.front().rank);
  }
  if (!all_table_wise) placement.table_owner.clear();
  PARITY_RETURN_IF_ERROR(detail::make_shard_layout(placement, spec, num_ranks).status().with_context("plan"));
  return placement;
}

namespace detail {

Result<ShardLayout> make_shard_layout(const TablePlacement& placement, const model::ModelSpec& spec, int num_ranks) {
  const auto num_tables = spec.embedding.tables.size();
  std::vector<ShardedTable> tables = placement.tables;
  if (tables.empty()) {
    PARITY_CHECK_ARG(placement.table_owner.size() == num_tables, "placement: ", placement.table_owner.size(),
                     " owners for ", num_tables, " tables");
    for (std::size_t t = 0; t < num_tables; ++t) {
      const int owner = placement.table_owner[t];
      PARITY_CHECK_ARG(owner >= 0 && owner < num_ranks, "placement: table ", t, " is on rank ", owner,
                       ", outside [0, ", num_ranks, ")");
      tables.push_back({ShardingType::kTableWise,
                        {{owner, 0, spec.embedding.tables[t].num_rows, 0, spec.embedding.tables[t].dim}}});
    }
  }
  PARITY_CHECK_ARG(tables.size() == num_tables, "placement: ", tables.size(), " tables placed; the model has ",
                   num_tables);
  ShardLayout layout;
  for (std::size_t t = 0; t < num_tables; ++t) {
    const Status status = check_table(tables[t], spec, t, num_ranks);
    if (!status.is_ok()) {
      return Status(status.code(), "placement: table '" + spec.embedding.tables[t].name + "' (" +
                                       std::string(plan::sharding_type_name(tables[t].type)) + "): " +
                                       status.message());
    }
    layout.table_type.push_back(tables[t].type);
    if (tables[t].type == ShardingType::kDataParallel) {
      layout.replicated_tables.push_back(static_cast<int>(t));
      const auto& table = spec.embedding.tables[t];
      layout.saved_pieces.push_back({static_cast<int>(t), 0, 0, table.num_rows, 0, table.dim});
      continue;
    }
    for (const auto& shard : tables[t].shards) {
      layout.saved_pieces.push_back(
          {static_cast<int>(t), shard.rank, shard.row_begin, shard.row_end, shard.col_begin, shard.col_end});
    }
  }
  for (int f = 0; f < spec.num_features(); ++f) {
    const int t = spec.embedding.features[static_cast<std::size_t>(f)].table;
    if (layout.table_type[static_cast<std::size_t>(t)] == ShardingType::kDataParallel) {
      layout.replicated_features.push_back(f);
      continue;
    }
    bool first = true;
    for (const auto& piece : layout.saved_pieces) {
      if (piece.table != t) continue;
      const bool partial = layout.table_type[static_cast<std::size_t>(t)] == ShardingType::kRowWise;
      layout.units.push_back({f, piece, partial, partial && first});
      first = false;
    }
  }
  return layout;
}

std::vector<TablePiece> ShardLayout::replica_pieces(const model::ModelSpec& spec, int rank,
                                                   std::vector<int>* replica_of_feature) const {
  std::vector<TablePiece> pieces;
  for (const int t : replicated_tables) {
    const auto& table = spec.embedding.tables[static_cast<std::size_t>(t)];
    pieces.push_back({t, rank, 0, table.num_rows, 0, table.dim});
  }
  replica_of_feature->clear();
  for (const int f : replicated_features) {
    const int t = spec.embedding.features[static_cast<std::size_t>(f)].table;
    const auto at = std::find(replicated_tables.begin(), replicated_tables.end(), t);
    replica_of_feature->push_back(static_cast<int>(at - replicated_tables.begin()));
  }
  return pieces;
}

std::int64_t ShardLayout::replicated_width(const model::ModelSpec& spec) const {
  std::int64_t width = 0;
  for (const int f : replicated_features) {
    width += spec.embedding.tables[static_cast<std::size_t>(spec.embedding.features[static_cast<std::size_t>(f)].table)].dim;
  }
  return width;
}

std::vector<TablePiece> ShardLayout::pieces_of(int rank, std::vector<int>* piece_of_unit) const {
  std::vector<TablePiece> pieces;
  for (const auto& piece : saved_pieces) {
    if (piece.rank == rank && table_type[static_cast<std::size_t>(piece.table)] != ShardingType::kDataParallel) {
      pieces.push_back(piece);
    }
  }
  if (piece_of_unit != nullptr) {
    piece_of_unit->clear();
    for (const auto& unit : units) {
      if (unit.piece.rank != rank) continue;
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        const auto& p = pieces[i];
        if (p.table == unit.piece.table && p.row_begin == unit.piece.row_begin && p.col_begin == unit.piece.col_begin) {
          piece_of_unit->push_back(static_cast<int>(i));
          break;
        }
      }
    }
  }
  return pieces;
}

std::vector<int> ShardLayout::unit_owners() const {
  std::vector<int> owners;
  for (const auto& unit : units) owners.push_back(unit.piece.rank);
  return owners;
}

std::vector<std::int64_t> ShardLayout::unit_widths() const {
  std::vector<std::int64_t> widths;
  for (const auto& unit : units) widths.push_back(unit.piece.cols());
  return widths;
}

std::int64_t ShardLayout::units_width() const {
  const auto widths = unit_widths();
  return std::accumulate(widths.begin(), widths.end(), std::int64_t{0});
}

comm::SparseBatch unit_slice(const data::Batch& batch, const ShardLayout& layout, std::int64_t begin,
                             std::int64_t count) {
  comm::SparseBatch local;
  local.num_tables = static_cast<int>(layout.units.size());
  local.batch_size = count;
  local.lengths.resize(layout.units.size() * static_cast<std::size_t>(count));
  for (std::size_t u = 0; u < layout.units.size(); ++u) {
    const ExchangeUnit& unit = layout.units[u];
    for (std::int64_t b = 0; b < count; ++b) {
      const auto bag = static_cast<std::size_t>(unit.feature * batch.batch_size + begin + b);
      std::int64_t length = 0;
      for (std::int64_t p = batch.offsets[bag]; p < batch.offsets[bag + 1]; ++p) {
        const std::int64_t id = batch.indices[static_cast<std::size_t>(p)];
        // A row shard takes the ids of its rows, in bag order, rebased to the shard.
        if (unit.is_partial && (id < unit.piece.row_begin || id >= unit.piece.row_end)) continue;
        local.ids.push_back(id - unit.piece.row_begin);
        ++length;
      }
      local.lengths[u * static_cast<std::size_t>(count) + static_cast<std::size_t>(b)] = length;
    }
  }
  return local;
}

void feature_slice(const data::Batch& batch, const std::vector<int>& features, std::int64_t begin,
                   std::int64_t count, std::vector<std::int64_t>* lengths, std::vector<std::int64_t>* ids) {
  lengths->clear();
  ids->clear();
  for (const int f : features) {
    for (std::int64_t b = 0; b < count; ++b) {
      const auto bag = static_cast<std::size_t>(f * batch.batch_size + begin + b);
      lengths->push_back(batch.offsets[bag + 1] - batch.offsets[bag]);
      ids->insert(ids->end(), batch.indices.begin() + batch.offsets[bag], batch.indices.begin() + batch.offsets[bag + 1]);
    }
  }
}

std::vector<float> mean_scales(const data::Batch& batch, const model::ModelSpec& spec, std::int64_t begin,
                               std::int64_t count) {
  if (spec.embedding.pooling != embedding::PoolingMode::kMean) return {};
  const int features = spec.num_features();
  std::vector<float> scales(static_cast<std::size_t>(count * features), 1.0f);
  for (std::int64_t b = 0; b < count; ++b) {
    for (int f = 0; f < features; ++f) {
      const auto bag = static_cast<std::size_t>(f * batch.batch_size + begin + b);
      const std::int64_t length = batch.offsets[bag + 1] - batch.offsets[bag];
      // The TBE's own expression: 1.0f / L, and 1 for an empty bag.
      if (length > 0) scales[static_cast<std::size_t>(b * features + f)] = 1.0f / static_cast<float>(length);
    }
  }
  return scales;
}

void fold_units(const ShardLayout& layout, const model::ModelSpec& spec, std::int64_t rows, const float* units,
                const float* mean_scale, float* pooled) {
  const auto column = feature_column_offsets(spec);
  const std::int64_t width = column.back(), unit_width = layout.units_width();
  const int features = spec.num_features();
  for (std::int64_t b = 0; b < rows; ++b) {
    const float* source = units + b * unit_width;
    for (const auto& unit : layout.units) {
      float* target = pooled + b * width + column[static_cast<std::size_t>(unit.feature)] + unit.piece.col_begin;
      const int cols = unit.piece.cols();
      if (unit.is_partial && !unit.is_first_partial) {
        for (int j = 0; j < cols; ++j) target[j] += source[j];
      } else {
        std::copy_n(source, cols, target);
      }
      source += cols;
    }
    if (mean_scale == nullptr) continue;
    for (std::size_t u = 0; u < layout.units.size(); ++u) {  // each feature once, after its partials
      const ExchangeUnit& unit = layout.units[u];
      if (u > 0 && layout.units[u - 1].feature == unit.feature && unit.is_partial) continue;
      const float scale = mean_scale[b * features + unit.feature];
      float* target = pooled + b * width + column[static_cast<std::size_t>(unit.feature)] + unit.piece.col_begin;
      for (int j = 0; j < unit.piece.cols(); ++j) target[j] *= scale;
    }
  }
}

void spread_to_units(const ShardLayout& layout, const model::ModelSpec& spec, std::int64_t rows,
                     const float* pooled_grad, const float* mean_scale, float* units) {
  const auto column = feature_column_offsets(spec);
  const std::int64_t width = column.back(), unit_width = layout.units_width();
  const int features = spec.num_features();
  for (std::int64_t b = 0; b < rows; ++b) {
    float* target = units + b * unit_width;
    for (const auto& unit : layout.units) {
      const float* source = pooled_grad + b * width + column[static_cast<std::size_t>(unit.feature)] + unit.piece.col_begin;
      const float scale = mean_scale != nullptr ? mean_scale[b * features + unit.feature] : 1.0f;
      // The single-rank TBE backward adds scale * g (scale = 1 / L); the shard's sum-mode TBE then
      // adds 1 * (scale * g): the same bits.
      for (int j = 0; j < unit.piece.cols(); ++j) target[j] = mean_scale != nullptr ? scale * source[j] : source[j];
      target += unit.piece.cols();
    }
  }
}

void copy_feature_columns(const model::ModelSpec& spec, const std::vector<int>& features, std::int64_t rows,
                          ColumnCopy direction, const float* from, float* to) {
  const auto column = feature_column_offsets(spec);
  std::int64_t packed_width = 0;
  for (const int f : features) packed_width += column[static_cast<std::size_t>(f) + 1] - column[static_cast<std::size_t>(f)];
  for (std::int64_t b = 0; b < rows; ++b) {
    std::int64_t packed = b * packed_width;
    for (const int f : features) {
      const std::int64_t dim = column[static_cast<std::size_t>(f) + 1] - column[static_cast<std::size_t>(f)];
      const std::int64_t pooled = b * column.back() + column[static_cast<std::size_t>(f)];
      if (direction == ColumnCopy::kPackedToPooled) {
        std::copy_n(from + packed, dim, to + pooled);
      } else {
        std::copy_n(from + pooled, dim, to + packed);
      }
      packed += dim;
    }
  }
}

}  // namespace detail
}  // namespace parity::train
