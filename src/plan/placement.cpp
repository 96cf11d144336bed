// Embedding placement for one (batch, checkpointing, precision): every table's sharding option
// is priced once (TBE byte model), then a capacity- and load-aware greedy placement (largest
// shards first, each on the rank where the step gets least worse) and a deterministic local
// search (re-shard a table, move a shard) on the full step-time model (score_placement).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "placement.hpp"

namespace parity::plan::detail {
namespace {

// Column splits keep TBE's 4-column granularity and at least 32 columns per shard.
constexpr int kMinColumnShard = 32;
// Placing a piece tries every rank up to this many ranks, else kCandidatesPerKey per balance key.
constexpr int kAllRanksUpTo = 16;
constexpr int kCandidatesPerKey = 4;

std::vector<TableOption> table_options(const PlannerContext& context, const PlanOptions& options,
                                       const ConfigCosts& costs, int table) {
  const PlannerTable& spec = context.model.tables[static_cast<std::size_t>(table)];
  const int ranks = context.machine.num_gpus;
  auto cost_of = [&](ShardingType type, std::int64_t rows, int cols) {
    return shard_cost(context.machine, context.model, context.calibration, costs, table, type, rows,
                      cols);
  };
  auto allowed = [&](ShardingType type) {
    return std::find(options.sharding_types.begin(), options.sharding_types.end(), type) !=
           options.sharding_types.end();
  };
  std::vector<TableOption> out;
  if (allowed(ShardingType::kTableWise)) {
    out.push_back({ShardingType::kTableWise, 1, {{spec.rows, spec.dim}}, {cost_of(ShardingType::kTableWise, spec.rows, spec.dim)}});
  }
  if (allowed(ShardingType::kColumnWise)) {
    for (int pieces = 2; pieces <= ranks && spec.dim / pieces >= kMinColumnShard; pieces *= 2) {
      if (spec.dim % (pieces * embedding::kEmbeddingDimMultiple) != 0) break;
      const int cols = spec.dim / pieces;
      TableOption option{ShardingType::kColumnWise, pieces, {}, {}};
      for (int piece = 0; piece < pieces; ++piece) {
        option.extents.push_back({spec.rows, cols});
        option.costs.push_back(piece == 0 ? cost_of(ShardingType::kColumnWise, spec.rows, cols)
                                          : option.costs.front());
      }
      out.push_back(std::move(option));
    }
  }
  if (allowed(ShardingType::kRowWise) && ranks > 1 && spec.rows >= ranks) {
    TableOption option{ShardingType::kRowWise, ranks, {}, {}};
    const std::int64_t base = spec.rows / ranks, extra = spec.rows % ranks;
    const ShardCost larger = cost_of(ShardingType::kRowWise, base + 1, spec.dim);
    const ShardCost smaller = cost_of(ShardingType::kRowWise, base, spec.dim);
    for (int r = 0; r < ranks; ++r) {
      option.extents.push_back({base + (r < extra ? 1 : 0), spec.dim});
      option.costs.push_back(r < extra ? larger : smaller);
    }
    out.push_back(std::move(option));
  }
  if (allowed(ShardingType::kDataParallel) && ranks > 1) {
    const ShardCost replica = cost_of(ShardingType::kDataParallel, spec.rows, spec.dim);
    out.push_back({ShardingType::kDataParallel, ranks,
                   std::vector<ShardExtent>(static_cast<std::size_t>(ranks), {spec.rows, spec.dim}),
                   std::vector<ShardCost>(static_cast<std::size_t>(ranks), replica)});
  }
  return out;
}

bool is_spread(ShardingType type) {
  return type == ShardingType::kRowWise || type == ShardingType::kDataParallel;
}

}  // namespace

bool Objective::better_than(const Objective& other) const {
  if (fits != other.fits) return fits;
  if (!fits) return excess_bytes < other.excess_bytes;
  // Relative tolerance so floating-point noise never flips a deterministic choice.
  if (step_us < other.step_us * (1.0 - 1e-9)) return true;
  if (other.step_us < step_us * (1.0 - 1e-9)) return false;
  if (imbalance < other.imbalance * (1.0 - 1e-9)) return true;
  if (other.imbalance < imbalance * (1.0 - 1e-9)) return false;
  return peak_memory_bytes < other.peak_memory_bytes * (1.0 - 1e-9);
}

PlacementSearch::PlacementSearch(const PlannerContext& context, const PlanOptions& options,
                                 const ConfigCosts& costs)
    : context_(context),
      costs_(costs),
      comm_(comm_params(context.machine, context.calibration)),
      capacity_(rank_capacity_bytes(context.machine)),
      load_(context.machine.num_gpus) {
  const int tables = static_cast<int>(context.model.tables.size());
  options_.resize(static_cast<std::size_t>(tables));
  for (int t = 0; t < tables; ++t) options_[static_cast<std::size_t>(t)] = table_options(context, options, costs, t);
  choice_.assign(static_cast<std::size_t>(tables), 0);
  ranks_of_.assign(static_cast<std::size_t>(tables), {});
}

Status PlacementSearch::validate() const {
  for (std::size_t t = 0; t < options_.size(); ++t) {
    if (!options_[t].empty()) continue;
    const PlannerTable& table = context_.model.tables[t];
    return invalid_argument("sharding: table '", table.name, "' (", table.rows, " rows, dim ", table.dim,
                            ") has no placement among the allowed types on ", context_.machine.num_gpus,
                            " GPU(s): column_wise needs dim >= ", 2 * kMinColumnShard,
                            " in shards that are multiples of ", embedding::kEmbeddingDimMultiple,
                            ", row_wise and data_parallel more than one GPU (row_wise also rows >= GPUs); "
                            "allow table_wise or another type");
  }
  return Status::ok();
}

Objective PlacementSearch::objective() const {
  const StepScore score = score_placement(comm_, context_.calibration, costs_, load_);
  return {score.peak_memory_bytes <= capacity_, std::max(0.0, score.peak_memory_bytes - capacity_),
          score.step_us, score.peak_memory_bytes, score.imbalance};
}

std::vector<int> PlacementSearch::candidate_ranks() const {
  const int ranks = context_.machine.num_gpus;
  std::vector<int> all(static_cast<std::size_t>(ranks));
  std::iota(all.begin(), all.end(), 0);
  if (ranks <= kAllRanksUpTo) return all;
  std::vector<int> picked;
  auto add_lowest = [&](auto key) {
    std::vector<int> order = all;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return key(a) < key(b); });
    for (int i = 0; i < kCandidatesPerKey; ++i) {
      if (std::find(picked.begin(), picked.end(), order[static_cast<std::size_t>(i)]) == picked.end()) {
        picked.push_back(order[static_cast<std::size_t>(i)]);
      }
    }
  };
  const auto& loads = load_.ranks;
  add_lowest([&](int r) { return loads[static_cast<std::size_t>(r)].tbe_forward_us + loads[static_cast<std::size_t>(r)].tbe_backward_us; });
  add_lowest([&](int r) { return loads[static_cast<std::size_t>(r)].pooled_dim; });
  add_lowest([&](int r) { return loads[static_cast<std::size_t>(r)].weight_bytes + loads[static_cast<std::size_t>(r)].optimizer_bytes; });
  std::sort(picked.begin(), picked.end());
  return picked;
}

void PlacementSearch::remove_table(int table) {
  const auto t = static_cast<std::size_t>(table);
  const TableOption& option = options_[t][choice_[t]];
  for (std::size_t piece = 0; piece < ranks_of_[t].size(); ++piece) {
    load_.apply(ranks_of_[t][piece], option.costs[piece], -1.0);
  }
  ranks_of_[t].clear();
}

// Places every piece of the table's chosen option: spread options on every rank in order; each
// other piece on the rank that gives the best objective, never two pieces of a table on one rank.
void PlacementSearch::place_table(int table) {
  const auto t = static_cast<std::size_t>(table);
  const TableOption& option = options_[t][choice_[t]];
  const int ranks = context_.machine.num_gpus;
  if (is_spread(option.type)) {
    for (int r = 0; r < ranks; ++r) {
      load_.apply(r, option.costs[static_cast<std::size_t>(r)], +1.0);
      ranks_of_[t].push_back(r);
    }
    return;
  }
  for (std::size_t piece = 0; piece < option.costs.size(); ++piece) {
    int best_rank = -1;
    Objective best;
    for (const int r : candidate_ranks()) {
      if (std::find(ranks_of_[t].begin(), ranks_of_[t].end(), r) != ranks_of_[t].end()) continue;
      load_.apply(r, option.costs[piece], +1.0);
      const Objective candidate = objective();
      load_.apply(r, option.costs[piece], -1.0);
      if (best_rank < 0 || candidate.better_than(best)) {
        best = candidate;
        best_rank = r;
      }
    }
    if (best_rank < 0) {  // every candidate already holds a piece: take the first free rank
      best_rank = 0;
      while (std::find(ranks_of_[t].begin(), ranks_of_[t].end(), best_rank) != ranks_of_[t].end()) ++best_rank;
    }
    load_.apply(best_rank, option.costs[piece], +1.0);
    ranks_of_[t].push_back(best_rank);
  }
}

void PlacementSearch::greedy(Start start) {
  const int tables = static_cast<int>(context_.model.tables.size());
  for (int t = 0; t < tables; ++t) {
    if (!ranks_of_[static_cast<std::size_t>(t)].empty()) remove_table(t);
  }
  // Start every table on its first option that is not replicated (table-wise when allowed), or
  // on its finest column split (the most, narrowest pieces: the easiest to balance).
  for (int t = 0; t < tables; ++t) {
    const auto& table_options = options_[static_cast<std::size_t>(t)];
    std::size_t pick = 0;
    bool found = false;
    for (std::size_t i = 0; i < table_options.size(); ++i) {
      const ShardingType type = table_options[i].type;
      if (start == Start::kTableWise && type != ShardingType::kDataParallel && !found) {
        pick = i;
        found = true;
      }
      if (start == Start::kFinestColumns && type == ShardingType::kColumnWise) pick = i;
    }
    choice_[static_cast<std::size_t>(t)] = pick;
  }
  // Spread options first, then the largest tables (bytes, then TBE time) first.
  std::vector<int> order(static_cast<std::size_t>(tables));
  std::iota(order.begin(), order.end(), 0);
  auto weight = [&](int t) {
    const TableOption& option = options_[static_cast<std::size_t>(t)][choice_[static_cast<std::size_t>(t)]];
    const ShardCost& cost = option.costs.front();
    return std::make_tuple(is_spread(option.type) ? 1 : 0, cost.weight_bytes + cost.optimizer_bytes,
                           cost.tbe_forward_us + cost.tbe_backward_us);
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return weight(a) > weight(b); });
  for (const int t : order) place_table(t);
}

bool PlacementSearch::improve_once() {
  bool improved = false;
  const int tables = static_cast<int>(context_.model.tables.size());
  for (int t = 0; t < tables; ++t) {
    const auto ti = static_cast<std::size_t>(t);
    // Re-shard: every option of this table, placed greedily; keep the best.
    Objective best = objective();
    const std::size_t start_choice = choice_[ti];
    const std::vector<int> start_ranks = ranks_of_[ti];
    std::size_t best_choice = start_choice;
    std::vector<int> best_ranks = start_ranks;
    for (std::size_t option = 0; option < options_[ti].size(); ++option) {
      remove_table(t);
      choice_[ti] = option;
      place_table(t);
      const Objective candidate = objective();
      if (candidate.better_than(best)) {
        best = candidate;
        best_choice = option;
        best_ranks = ranks_of_[ti];
      }
    }
    remove_table(t);
    choice_[ti] = best_choice;
    const TableOption& chosen = options_[ti][best_choice];
    for (std::size_t piece = 0; piece < best_ranks.size(); ++piece) {
      load_.apply(best_ranks[piece], chosen.costs[piece], +1.0);
    }
    ranks_of_[ti] = best_ranks;
    if (best_choice != start_choice || best_ranks != start_ranks) improved = true;
  }
  return improved;
}

void PlacementSearch::run(int passes) {
  // Two starts, each greedy then local search; the better one stays (ties: the first).
  greedy(Start::kTableWise);
  improve(passes);
  const Objective first = objective();
  const std::vector<std::size_t> first_choice = choice_;
  const std::vector<std::vector<int>> first_ranks = ranks_of_;
  greedy(Start::kFinestColumns);
  improve(passes);
  if (!objective().better_than(first)) set_placement(first_choice, first_ranks);
}

void PlacementSearch::improve(int passes) {
  for (int pass = 0; pass < passes; ++pass) {
    if (!improve_once()) break;
  }
}

void PlacementSearch::set_placement(const std::vector<std::size_t>& choice,
                                    const std::vector<std::vector<int>>& ranks_of) {
  const int tables = static_cast<int>(context_.model.tables.size());
  for (int t = 0; t < tables; ++t) {
    if (!ranks_of_[static_cast<std::size_t>(t)].empty()) remove_table(t);
  }
  choice_ = choice;
  for (int t = 0; t < tables; ++t) {
    const auto ti = static_cast<std::size_t>(t);
    const TableOption& option = options_[ti][choice_[ti]];
    for (std::size_t piece = 0; piece < ranks_of[ti].size(); ++piece) {
      load_.apply(ranks_of[ti][piece], option.costs[piece], +1.0);
    }
    ranks_of_[ti] = ranks_of[ti];
  }
}

std::vector<TablePlacement> PlacementSearch::placements() const {
  std::vector<TablePlacement> out;
  for (std::size_t t = 0; t < options_.size(); ++t) {
    const TableOption& option = options_[t][choice_[t]];
    TablePlacement placement{context_.model.tables[t].name, option.type, {}};
    std::int64_t row = 0;
    int col = 0;
    for (std::size_t piece = 0; piece < ranks_of_[t].size(); ++piece) {
      const ShardExtent& extent = option.extents[piece];
      Shard shard{ranks_of_[t][piece], 0, extent.rows, 0, extent.cols};
      if (option.type == ShardingType::kRowWise) {
        shard.row_begin = row;
        shard.row_end = row + extent.rows;
        row = shard.row_end;
      } else if (option.type == ShardingType::kColumnWise) {
        shard.col_begin = col;
        shard.col_end = col + extent.cols;
        col = shard.col_end;
      }
      placement.shards.push_back(shard);
    }
    out.push_back(std::move(placement));
  }
  return out;
}

}  // namespace parity::plan::detail
