// Plans as files and reports: the JSON `parity train --plan FILE` reads (schema in
// docs/planner.md), a readable text table, and SVG charts (Pareto front).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/plan/plan.hpp"
#include "parity/plan/search.hpp"

namespace parity::plan {

inline constexpr const char* kPlanSchema = "parity.plan/1";

// The plan as JSON text (schema kPlanSchema).
std::string plan_to_json_text(const Plan& plan);
// Strict: malformed JSON, unknown keys, wrong types, overlapping or missing shards, ranks outside
// the plan are errors naming the key and value. `origin` prefixes messages.
Result<Plan> parse_plan_text(std::string_view text, std::string_view origin);
Status write_plan_file(const std::filesystem::path& path, const Plan& plan);
Result<Plan> read_plan_file(const std::filesystem::path& path);

// The plan's placement describes `model`: same tables in order, each table's shards tile it
// (table-wise: one whole shard; column-wise: full rows, columns partitioned; row-wise: full
// columns, rows partitioned; data-parallel: the whole table on every rank), ranks < gpus.
Status check_plan_matches_model(const Plan& plan, const PlannerModel& model);

// What `parity train --plan FILE` does with a plan: checks that it describes `spec`'s tables
// (check_plan_matches_model) and writes its precision and checkpointing into `spec`. The batch
// is plan.config.per_rank_batch per rank; each rank's shards are in plan.tables.
Status apply_plan_to_spec(const Plan& plan, model::ModelSpec& spec);

// What differs between two plans of the same model: batch, checkpointing, precision, sharding
// types and placements, one line each.
std::vector<std::string> plan_differences(const Plan& from, const Plan& to);

// Per-rank memory and time breakdown, then each table's placement.
std::string plan_report(const Plan& plan, const PlannerModel& model);
// Direct port vs co-designed, side by side, with the changes and the target's headroom.
std::string comparison_report(const Comparison& comparison);
// The Pareto front (samples/s vs peak memory per rank), the best plan marked, capacity drawn.
std::string pareto_svg(const SearchResult& result, std::string_view title);

}  // namespace parity::plan
