// Placements the distributed tests share: row- and column-wise shard lists and a placement mixing
// all four types (uneven row shards, a rank holding two shards of a table).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "parity/model/spec.hpp"
#include "parity/train/dist_trainer.hpp"

namespace parity::comm::testing {

// Shards of `rows` rows over `pieces` row ranges, the k-th on rank ranks[k % ranks.size()].
inline train::ShardedTable row_wise(std::int64_t rows, int dim, const std::vector<int>& ranks, int pieces) {
  train::ShardedTable table{plan::ShardingType::kRowWise, {}};
  for (int k = 0; k < pieces; ++k) {
    table.shards.push_back({ranks[static_cast<std::size_t>(k) % ranks.size()], rows * k / pieces,
                            rows * (k + 1) / pieces, 0, dim});
  }
  return table;
}

inline train::ShardedTable column_wise(std::int64_t rows, int dim, const std::vector<int>& ranks, int pieces) {
  train::ShardedTable table{plan::ShardingType::kColumnWise, {}};
  for (int k = 0; k < pieces; ++k) {
    table.shards.push_back({ranks[static_cast<std::size_t>(k) % ranks.size()], 0, rows, dim * k / pieces,
                            dim * (k + 1) / pieces});
  }
  return table;
}

// Table t by t % 4: row-wise (uneven: one more piece than ranks, so a rank holds two), column-wise
// (4 pieces), data-parallel, table-wise; tables read with more than 2 ids per sample are never
// row-wise (a row shard's partial sums regroup a bag's sum, which changes no bit for bags of at
// most 2 ids: x + 0 = x, a + b = b + a). Ranks counted down from `first`, so the owners differ from greedy's.
inline train::TablePlacement mixed_placement(const model::ModelSpec& spec, int ranks, int first) {
  train::TablePlacement placement;
  std::vector<int> order;
  for (int r = 0; r < ranks; ++r) order.push_back((first - r + 2 * ranks) % ranks);
  for (std::size_t t = 0; t < spec.embedding.tables.size(); ++t) {
    const auto& table = spec.embedding.tables[t];
    std::size_t kind = t % 4;
    if (kind == 0 && spec.embedding.features[t].ids_per_sample > 2) kind = 1;
    if (kind == 0) {
      const auto pieces = static_cast<int>(std::min<std::int64_t>(ranks + 1, table.num_rows));
      placement.tables.push_back(row_wise(table.num_rows, table.dim, order, pieces));
    }
    if (kind == 1) placement.tables.push_back(column_wise(table.num_rows, table.dim, order, 4));
    if (kind == 2) {
      train::ShardedTable replicated{plan::ShardingType::kDataParallel, {}};
      for (int r = 0; r < ranks; ++r) replicated.shards.push_back({r, 0, table.num_rows, 0, table.dim});
      placement.tables.push_back(replicated);
    }
    if (kind == 3) {
      placement.tables.push_back({plan::ShardingType::kTableWise,
                                  {{order[t % order.size()], 0, table.num_rows, 0, table.dim}}});
    }
  }
  return placement;
}

}  // namespace parity::comm::testing
