// Plan <-> JSON (schema "parity.plan/1", docs/planner.md). Strict reader: unknown keys, wrong
// types and impossible shards are errors naming the key; exceptions never leave this file.
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "hw/json_checks.hpp"
#include "parity/plan/plan_io.hpp"
#include "plan/plan_json.hpp"

namespace parity::plan {

using nlohmann::json;
namespace jc = hw::detail;

namespace {

// The numeric fields of the breakdowns, by JSON key (one list drives writer and reader).
struct MemoryField {
  const char* key;
  double MemoryBreakdown::*member;
};
constexpr MemoryField kMemoryFields[] = {
    {"embedding_weights", &MemoryBreakdown::embedding_weights},
    {"embedding_optimizer", &MemoryBreakdown::embedding_optimizer},
    {"dense_parameters", &MemoryBreakdown::dense_parameters},
    {"dense_gradients", &MemoryBreakdown::dense_gradients},
    {"dense_optimizer", &MemoryBreakdown::dense_optimizer},
    {"activations", &MemoryBreakdown::activations},
    {"io_buffers", &MemoryBreakdown::io_buffers},
    {"comm_buffers", &MemoryBreakdown::comm_buffers},
    {"workspaces", &MemoryBreakdown::workspaces},
    {"runtime_reserve", &MemoryBreakdown::runtime_reserve},
    {"allocator_reserve", &MemoryBreakdown::allocator_reserve},
};
struct TimeField {
  const char* key;
  double TimeBreakdown::*member;
};
constexpr TimeField kTimeFields[] = {
    {"tbe_forward_us", &TimeBreakdown::tbe_forward_us},
    {"tbe_backward_us", &TimeBreakdown::tbe_backward_us},
    {"input_dist_us", &TimeBreakdown::input_dist_us},
    {"embedding_a2a_forward_us", &TimeBreakdown::embedding_a2a_forward_us},
    {"embedding_a2a_backward_us", &TimeBreakdown::embedding_a2a_backward_us},
    {"dense_forward_us", &TimeBreakdown::dense_forward_us},
    {"dense_backward_us", &TimeBreakdown::dense_backward_us},
    {"recompute_us", &TimeBreakdown::recompute_us},
    {"allreduce_us", &TimeBreakdown::allreduce_us},
    {"optimizer_us", &TimeBreakdown::optimizer_us},
    {"overhead_us", &TimeBreakdown::overhead_us},
};

template <typename Struct, typename Fields>
json fields_to_json(const Struct& value, const Fields& fields) {
  json out = json::object();
  for (const auto& field : fields) out[field.key] = value.*field.member;
  return out;
}

template <typename Struct, typename Fields>
Result<Struct> fields_from_json(const json& object, const Fields& fields, std::string_view origin,
                                const std::string& path) {
  PARITY_RETURN_IF_ERROR(jc::expect_object(object, jc::key_context(origin, path), "an object"));
  std::vector<std::string_view> keys;
  for (const auto& field : fields) keys.emplace_back(field.key);
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(object, keys, origin, path));
  Struct out;
  for (const auto& field : fields) {
    PARITY_ASSIGN_OR_RETURN(out.*field.member, jc::read_number(object, field.key, origin, path));
  }
  return out;
}

Result<int> read_int(const json& object, std::string_view key, std::string_view origin,
                     const std::string& path, std::int64_t minimum) {
  PARITY_ASSIGN_OR_RETURN(const std::int64_t value, jc::read_integer(object, key, origin, path, minimum));
  PARITY_CHECK_ARG(value <= 1 << 30, jc::key_context(origin, jc::join_key(path, key)), ": value ",
                   value, " is too large");
  return static_cast<int>(value);
}

// [begin, end) with 0 <= begin < end <= max_end (rows: any int64 table; columns: int).
Result<std::array<std::int64_t, 2>> read_range(const json& object, std::string_view key,
                                               std::string_view origin, const std::string& path,
                                               std::int64_t max_end) {
  const std::string where = jc::key_context(origin, jc::join_key(path, key));
  PARITY_CHECK_ARG(object.contains(std::string(key)), where, ": missing");
  const json& range = object.at(std::string(key));
  PARITY_CHECK_ARG(range.is_array() && range.size() == 2 && range[0].is_number_integer() &&
                       range[1].is_number_integer(),
                   where, ": expected [begin, end] integers, got ", jc::describe(range));
  for (const json& bound : range) {  // unsigned values above int64's range would wrap
    PARITY_CHECK_ARG(!bound.is_number_unsigned() ||
                         bound.get<std::uint64_t>() <= static_cast<std::uint64_t>(max_end),
                     where, ": ", bound.dump(), " exceeds ", max_end);
  }
  const std::array<std::int64_t, 2> out{range[0].get<std::int64_t>(), range[1].get<std::int64_t>()};
  PARITY_CHECK_ARG(out[0] >= 0 && out[1] > out[0] && out[1] <= max_end, where, ": [", out[0], ", ",
                   out[1], ") must satisfy 0 <= begin < end <= ", max_end);
  return out;
}

Result<TablePlacement> placement_from_json(const json& object, std::string_view origin,
                                           const std::string& path, int gpus) {
  PARITY_RETURN_IF_ERROR(jc::expect_object(object, jc::key_context(origin, path), "a table"));
  static constexpr std::string_view kKeys[] = {"name", "sharding", "shards"};
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(object, kKeys, origin, path));
  TablePlacement placement;
  PARITY_ASSIGN_OR_RETURN(placement.table, jc::read_string(object, "name", origin, path,
                                                           jc::Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(const std::string type, jc::read_string(object, "sharding", origin, path,
                                                                  jc::Emptiness::kRequireNonEmpty));
  auto parsed_type = parse_sharding_type(type);
  if (!parsed_type.is_ok()) return parsed_type.status().with_context(jc::key_context(origin, path + ".sharding"));
  placement.type = parsed_type.value();
  const std::string shards_path = path + ".shards";
  PARITY_CHECK_ARG(object.contains("shards") && object.at("shards").is_array() &&
                       !object.at("shards").empty(),
                   jc::key_context(origin, shards_path), ": expected a non-empty array");
  static constexpr std::string_view kShardKeys[] = {"rank", "rows", "cols"};
  for (std::size_t i = 0; i < object.at("shards").size(); ++i) {
    const json& entry = object.at("shards")[i];
    const std::string shard_path = shards_path + "[" + std::to_string(i) + "]";
    PARITY_RETURN_IF_ERROR(jc::expect_object(entry, jc::key_context(origin, shard_path), "a shard"));
    PARITY_RETURN_IF_ERROR(jc::check_known_keys(entry, kShardKeys, origin, shard_path));
    Shard shard;
    PARITY_ASSIGN_OR_RETURN(shard.rank, read_int(entry, "rank", origin, shard_path, 0));
    PARITY_CHECK_ARG(shard.rank < gpus, jc::key_context(origin, shard_path + ".rank"), ": rank ",
                     shard.rank, " is outside the plan's ", gpus, " GPUs");
    PARITY_ASSIGN_OR_RETURN(const auto rows, read_range(entry, "rows", origin, shard_path,
                                                          std::numeric_limits<std::int64_t>::max()));
    PARITY_ASSIGN_OR_RETURN(const auto cols, read_range(entry, "cols", origin, shard_path,
                                                          std::numeric_limits<int>::max()));
    shard.row_begin = rows[0];
    shard.row_end = rows[1];
    shard.col_begin = static_cast<int>(cols[0]);
    shard.col_end = static_cast<int>(cols[1]);
    placement.shards.push_back(shard);
  }
  return placement;
}

Result<Prediction> prediction_from_json(const json& object, std::string_view origin) {
  const std::string path = "prediction";
  PARITY_RETURN_IF_ERROR(jc::expect_object(object, jc::key_context(origin, path), "an object"));
  static constexpr std::string_view kKeys[] = {"step_us",        "samples_per_s",      "peak_memory_bytes",
                                               "capacity_bytes", "peak_memory_rank",   "allreduce_total_us",
                                               "step",           "ranks"};
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(object, kKeys, origin, path));
  Prediction p;
  PARITY_ASSIGN_OR_RETURN(p.step_us, jc::read_number(object, "step_us", origin, path));
  PARITY_ASSIGN_OR_RETURN(p.samples_per_s, jc::read_number(object, "samples_per_s", origin, path));
  PARITY_ASSIGN_OR_RETURN(p.peak_memory_bytes, jc::read_number(object, "peak_memory_bytes", origin, path));
  PARITY_ASSIGN_OR_RETURN(p.capacity_bytes, jc::read_number(object, "capacity_bytes", origin, path));
  PARITY_ASSIGN_OR_RETURN(p.peak_memory_rank, read_int(object, "peak_memory_rank", origin, path, 0));
  PARITY_ASSIGN_OR_RETURN(p.allreduce_total_us, jc::read_number(object, "allreduce_total_us", origin, path));
  PARITY_CHECK_ARG(object.contains("step"), jc::key_context(origin, path), ": missing 'step'");
  PARITY_ASSIGN_OR_RETURN(p.step, (fields_from_json<TimeBreakdown>(object.at("step"), kTimeFields, origin, path + ".step")));
  PARITY_CHECK_ARG(object.contains("ranks") && object.at("ranks").is_array(),
                   jc::key_context(origin, path + ".ranks"), ": expected an array");
  for (std::size_t r = 0; r < object.at("ranks").size(); ++r) {
    const json& rank = object.at("ranks")[r];
    const std::string rank_path = path + ".ranks[" + std::to_string(r) + "]";
    PARITY_RETURN_IF_ERROR(jc::expect_object(rank, jc::key_context(origin, rank_path), "an object"));
    static constexpr std::string_view kRankKeys[] = {"memory", "time"};
    PARITY_RETURN_IF_ERROR(jc::check_known_keys(rank, kRankKeys, origin, rank_path));
    PARITY_CHECK_ARG(rank.contains("memory") && rank.contains("time"),
                     jc::key_context(origin, rank_path), ": needs 'memory' and 'time'");
    PARITY_ASSIGN_OR_RETURN(auto memory, (fields_from_json<MemoryBreakdown>(rank.at("memory"), kMemoryFields, origin, rank_path + ".memory")));
    PARITY_ASSIGN_OR_RETURN(auto time, (fields_from_json<TimeBreakdown>(rank.at("time"), kTimeFields, origin, rank_path + ".time")));
    p.memory_per_rank.push_back(memory);
    p.time_per_rank.push_back(time);
  }
  return p;
}

Result<Plan> parse_plan(const json& document, std::string_view origin) {
  PARITY_RETURN_IF_ERROR(jc::expect_object(document, origin, "a plan object"));
  static constexpr std::string_view kKeys[] = {"schema", "model", "hardware", "gpus", "nodes",
                                               "config", "tables", "prediction"};
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(document, kKeys, origin, ""));
  PARITY_ASSIGN_OR_RETURN(const std::string schema, jc::read_string(document, "schema", origin, "",
                                                                    jc::Emptiness::kRequireNonEmpty));
  PARITY_CHECK_ARG(schema == kPlanSchema, origin, ": key 'schema': '", schema, "' is not ", kPlanSchema);
  Plan plan;
  PARITY_ASSIGN_OR_RETURN(plan.model, jc::read_string(document, "model", origin, "", jc::Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(plan.hardware, jc::read_string(document, "hardware", origin, "", jc::Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(plan.num_gpus, read_int(document, "gpus", origin, "", 1));
  PARITY_ASSIGN_OR_RETURN(plan.num_nodes, read_int(document, "nodes", origin, "", 1));
  PARITY_CHECK_ARG(document.contains("config"), origin, ": missing required key 'config'");
  const json& config = document.at("config");
  PARITY_RETURN_IF_ERROR(jc::expect_object(config, jc::key_context(origin, "config"), "an object"));
  static constexpr std::string_view kConfigKeys[] = {"global_batch", "per_rank_batch", "checkpointing", "precision"};
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(config, kConfigKeys, origin, "config"));
  PARITY_ASSIGN_OR_RETURN(plan.config.global_batch, jc::read_integer(config, "global_batch", origin, "config", 1));
  PARITY_ASSIGN_OR_RETURN(plan.config.per_rank_batch, jc::read_integer(config, "per_rank_batch", origin, "config", 1));
  PARITY_CHECK_ARG(plan.config.global_batch == plan.config.per_rank_batch * plan.num_gpus,
                   jc::key_context(origin, "config.global_batch"), ": ", plan.config.global_batch,
                   " is not per_rank_batch ", plan.config.per_rank_batch, " x gpus ", plan.num_gpus);
  PARITY_ASSIGN_OR_RETURN(const std::string policy, jc::read_string(config, "checkpointing", origin, "config", jc::Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(plan.config.checkpointing, parse_checkpointing(policy));
  PARITY_ASSIGN_OR_RETURN(const std::string precision, jc::read_string(config, "precision", origin, "config", jc::Emptiness::kRequireNonEmpty));
  PARITY_ASSIGN_OR_RETURN(plan.config.precision, parse_precision(precision));
  PARITY_CHECK_ARG(document.contains("tables") && document.at("tables").is_array() && !document.at("tables").empty(),
                   jc::key_context(origin, "tables"), ": expected a non-empty array");
  for (std::size_t t = 0; t < document.at("tables").size(); ++t) {
    PARITY_ASSIGN_OR_RETURN(TablePlacement placement,
                            placement_from_json(document.at("tables")[t], origin,
                                                "tables[" + std::to_string(t) + "]", plan.num_gpus));
    plan.tables.push_back(std::move(placement));
  }
  if (document.contains("prediction")) {
    PARITY_ASSIGN_OR_RETURN(plan.prediction, prediction_from_json(document.at("prediction"), origin));
  }
  return plan;
}

}  // namespace

json plan_to_json(const Plan& plan) {
  json tables = json::array();
  for (const TablePlacement& placement : plan.tables) {
    json shards = json::array();
    for (const Shard& shard : placement.shards) {
      shards.push_back({{"rank", shard.rank},
                        {"rows", {shard.row_begin, shard.row_end}},
                        {"cols", {shard.col_begin, shard.col_end}}});
    }
    tables.push_back({{"name", placement.table},
                      {"sharding", sharding_type_name(placement.type)},
                      {"shards", shards}});
  }
  json ranks = json::array();
  for (std::size_t r = 0; r < plan.prediction.memory_per_rank.size(); ++r) {
    ranks.push_back({{"memory", fields_to_json(plan.prediction.memory_per_rank[r], kMemoryFields)},
                     {"time", fields_to_json(plan.prediction.time_per_rank[r], kTimeFields)}});
  }
  const Prediction& p = plan.prediction;
  return {{"schema", kPlanSchema},
          {"model", plan.model},
          {"hardware", plan.hardware},
          {"gpus", plan.num_gpus},
          {"nodes", plan.num_nodes},
          {"config",
           {{"global_batch", plan.config.global_batch},
            {"per_rank_batch", plan.config.per_rank_batch},
            {"checkpointing", checkpointing_name(plan.config.checkpointing)},
            {"precision", precision_name(plan.config.precision)}}},
          {"tables", tables},
          {"prediction",
           {{"step_us", p.step_us},
            {"samples_per_s", p.samples_per_s},
            {"peak_memory_bytes", p.peak_memory_bytes},
            {"capacity_bytes", p.capacity_bytes},
            {"peak_memory_rank", p.peak_memory_rank},
            {"allreduce_total_us", p.allreduce_total_us},
            {"step", fields_to_json(p.step, kTimeFields)},
            {"ranks", ranks}}}};
}

Result<Plan> plan_from_json(const json& document, std::string_view origin) {
  try {
    return parse_plan(document, origin);
  } catch (const std::exception& error) {  // nlohmann type errors the checks above missed
    return invalid_argument(origin, ": ", error.what());
  }
}

std::string plan_to_json_text(const Plan& plan) { return plan_to_json(plan).dump(2) + "\n"; }

Result<Plan> parse_plan_text(std::string_view text, std::string_view origin) {
  PARITY_ASSIGN_OR_RETURN(const json document, jc::parse_json_text(text, origin));
  return plan_from_json(document, origin);
}

Status write_plan_file(const std::filesystem::path& path, const Plan& plan) {
  std::error_code error;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), error);
  std::ofstream out(path);
  if (!out) return io_error("plan: cannot write '", path.string(), "'");
  out << plan_to_json_text(plan);
  if (!out) return io_error("plan: writing '", path.string(), "' failed");
  return Status::ok();
}

Result<Plan> read_plan_file(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(const json document, jc::read_json_file(path));
  return plan_from_json(document, path.string());
}

}  // namespace parity::plan
