// Internal: the embedding placement search for one configuration (used by search.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "parity/plan/search.hpp"

namespace parity::plan::detail {

struct ShardExtent {
  std::int64_t rows = 0;
  int cols = 0;
};

// One way to shard a table: its pieces' extents and costs (piece i of a spread option lives on
// rank i).
struct TableOption {
  ShardingType type = ShardingType::kTableWise;
  int pieces = 1;
  std::vector<ShardExtent> extents;
  std::vector<ShardCost> costs;
};

// What the search minimises: fitting first, then step time, then peak memory; among plans that
// do not fit, the smaller excess.
struct Objective {
  bool fits = false;
  double excess_bytes = 0;
  double step_us = 0;
  double peak_memory_bytes = 0;
  double imbalance = 0;
  bool better_than(const Objective& other) const;
};

class PlacementSearch {
 public:
  PlacementSearch(const PlannerContext& context, const PlanOptions& options,
                  const ConfigCosts& costs);
  // ok, or kInvalidArgument naming the first table that no allowed sharding type can place
  // (e.g. only column_wise for a table narrower than two 32-column shards). Before run().
  Status validate() const;
  // Greedy placement, then up to `passes` local-search passes (stops when one finds nothing).
  void run(int passes);
  // Local search only, from the current placement (a warm start).
  void improve(int passes);
  Objective objective() const;
  std::vector<TablePlacement> placements() const;
  // The current choice and ranks, to re-use a placement under another configuration.
  const std::vector<std::size_t>& choice() const { return choice_; }
  const std::vector<std::vector<int>>& ranks_of() const { return ranks_of_; }
  void set_placement(const std::vector<std::size_t>& choice,
                     const std::vector<std::vector<int>>& ranks_of);

 private:
  enum class Start : std::uint8_t { kTableWise, kFinestColumns };
  void greedy(Start start);
  bool improve_once();
  void place_table(int table);
  void remove_table(int table);
  // Ranks worth trying for one more piece: all of them on small machines, else the few with the
  // least TBE time, pooled columns or memory.
  std::vector<int> candidate_ranks() const;

  const PlannerContext& context_;
  const ConfigCosts& costs_;
  CommParams comm_;
  double capacity_ = 0;
  PlacementLoad load_;
  std::vector<std::vector<TableOption>> options_;  // per table
  std::vector<std::size_t> choice_;                // per table: index into options_
  std::vector<std::vector<int>> ranks_of_;         // per table: rank of each piece
};

}  // namespace parity::plan::detail
