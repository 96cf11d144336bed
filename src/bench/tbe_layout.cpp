// Table-layout files for `parity bench tbe --layout FILE` (schema in docs/embedding.md,
// "Table-layout files"): tables with rows, dim, weights dtype, pooling, bag lengths and Zipf alpha;
// features mapping to tables. Read strictly: unknown keys, wrong types, out-of-range values and
// dangling table names are errors naming the table or feature, the field and the value. Never
// throws.
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>

#include "hw/json_checks.hpp"
#include "parity/bench/tbe_bench.hpp"

namespace parity::bench {
namespace {

using nlohmann::json;
namespace jc = hw::detail;
using embedding::BagLengthDistribution;

constexpr std::int64_t kMaxRows = std::int64_t{1} << 40;
constexpr std::int64_t kMaxBagLength = 1000000;
constexpr std::array<std::string_view, 5> kTopKeys = {"schema_version", "name", "batch_size",
                                                      "tables", "features"};
constexpr std::array<std::string_view, 7> kTableKeys = {
    "name", "rows", "dim", "weights_dtype", "pooling", "bag_length", "zipf_alpha"};
constexpr std::array<std::string_view, 4> kFeatureKeys = {"name", "table", "bag_length",
                                                          "zipf_alpha"};

// "bag_length": 20 (fixed), "one-hot", {"fixed": 20} or {"uniform": [low, high]}.
Result<BagLengthDistribution> read_bag_length(const json& value, const std::string& where) {
  const std::string what = where + ": bag_length";
  if (value.is_number_integer()) {
    const auto length = value.get<std::int64_t>();
    PARITY_CHECK_ARG(length >= 0 && length <= kMaxBagLength, what, "=", length,
                     " is out of range [0, ", kMaxBagLength, "]");
    return BagLengthDistribution::fixed(static_cast<int>(length));
  }
  if (value.is_string() && value.get<std::string>() == "one-hot")
    return BagLengthDistribution::one_hot();
  if (value.is_object() && value.size() == 1 && value.contains("fixed"))
    return read_bag_length(value["fixed"], where);
  if (value.is_object() && value.size() == 1 && value.contains("uniform")) {
    const json& range = value["uniform"];
    PARITY_CHECK_ARG(range.is_array() && range.size() == 2 && range[0].is_number_integer() &&
                         range[1].is_number_integer(),
                     what, ".uniform: expected [low, high] (two integers), got ",
                     jc::describe(range));
    const auto low = range[0].get<std::int64_t>();
    const auto high = range[1].get<std::int64_t>();
    PARITY_CHECK_ARG(low >= 0 && low <= high && high <= kMaxBagLength, what, ".uniform=[", low,
                     ", ", high, "] must satisfy 0 <= low <= high <= ", kMaxBagLength);
    return BagLengthDistribution::uniform(static_cast<int>(low), static_cast<int>(high));
  }
  return invalid_argument(
      what,
      ": expected an integer, \"one-hot\", {\"fixed\": n} or {\"uniform\": [low, high]}, got ",
      jc::describe(value));
}

Result<double> read_zipf(const json& object, const std::string& origin, const std::string& parent,
                         double fallback) {
  PARITY_ASSIGN_OR_RETURN(const double alpha,
                          jc::read_optional_number(object, "zipf_alpha", origin, parent, fallback));
  PARITY_CHECK_ARG(alpha >= 0 && alpha <= 100,
                   jc::key_context(origin, jc::join_key(parent, "zipf_alpha")), ": ", alpha,
                   " must be in [0, 100] (0 = uniform)");
  return alpha;
}

struct TableEntry {
  std::string name;
  embedding::TableSpec shape;
  DType weight_dtype = DType::kF32;
  embedding::PoolingMode pooling = embedding::PoolingMode::kSum;
  embedding::FeatureDraw draw;
};

Result<TableEntry> read_table(const json& table, const std::string& origin,
                              const std::string& parent) {
  PARITY_RETURN_IF_ERROR(
      jc::expect_object(table, jc::key_context(origin, parent), "a table object"));
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(table, kTableKeys, origin, parent));
  TableEntry entry;
  PARITY_ASSIGN_OR_RETURN(
      entry.name, jc::read_string(table, "name", origin, parent, jc::Emptiness::kRequireNonEmpty));
  const std::string where = jc::key_context(origin, parent) + " (table '" + entry.name + "')";
  PARITY_ASSIGN_OR_RETURN(entry.shape.num_rows,
                          jc::read_integer(table, "rows", origin, parent, 1, kMaxRows));
  PARITY_ASSIGN_OR_RETURN(const std::int64_t dim, jc::read_integer(table, "dim", origin, parent, 1,
                                                                   embedding::kMaxEmbeddingDim));
  entry.shape.dim = static_cast<int>(dim);
  PARITY_ASSIGN_OR_RETURN(const std::string dtype,
                          jc::read_optional_string(table, "weights_dtype", origin, parent, "fp32"));
  PARITY_CHECK_ARG(dtype == "fp32" || dtype == "fp16" || dtype == "bf16", where,
                   ": weights_dtype='", dtype, "' is not one of fp32, fp16, bf16");
  entry.weight_dtype = dtype == "fp32" ? DType::kF32 : dtype == "fp16" ? DType::kF16 : DType::kBF16;
  PARITY_ASSIGN_OR_RETURN(const std::string pooling,
                          jc::read_optional_string(table, "pooling", origin, parent, "sum"));
  PARITY_CHECK_ARG(pooling == "sum" || pooling == "mean", where, ": pooling='", pooling,
                   "' is not one of sum, mean");
  entry.pooling = pooling == "sum" ? embedding::PoolingMode::kSum : embedding::PoolingMode::kMean;
  PARITY_CHECK_ARG(table.contains("bag_length"), where, ": missing required key 'bag_length'");
  PARITY_ASSIGN_OR_RETURN(entry.draw.bag_lengths, read_bag_length(table["bag_length"], where));
  PARITY_ASSIGN_OR_RETURN(entry.draw.zipf_alpha, read_zipf(table, origin, parent, 0.0));
  return entry;
}

// The features array: each names a table (shared tables allowed) and may override its draw.
Status read_features(const json& features, const std::string& origin,
                     const std::vector<TableEntry>& tables, TbeBenchSpec* spec) {
  PARITY_CHECK_ARG(features.is_array() && !features.empty(), jc::key_context(origin, "features"),
                   ": expected a non-empty array of feature objects, got ", jc::describe(features));
  std::map<std::string, int> table_index;
  for (std::size_t t = 0; t < tables.size(); ++t) table_index[tables[t].name] = static_cast<int>(t);
  for (std::size_t f = 0; f < features.size(); ++f) {
    const std::string parent = "features[" + std::to_string(f) + "]";
    const json& feature = features[f];
    PARITY_RETURN_IF_ERROR(
        jc::expect_object(feature, jc::key_context(origin, parent), "a feature object"));
    PARITY_RETURN_IF_ERROR(jc::check_known_keys(feature, kFeatureKeys, origin, parent));
    PARITY_ASSIGN_OR_RETURN(
        const std::string table,
        jc::read_string(feature, "table", origin, parent, jc::Emptiness::kRequireNonEmpty));
    const auto it = table_index.find(table);
    PARITY_CHECK_ARG(it != table_index.end(), jc::key_context(origin, parent + ".table"),
                     ": no table named '", table, "'");
    PARITY_RETURN_IF_ERROR(jc::read_optional_string(feature, "name", origin, parent, "").status());
    embedding::FeatureDraw draw = tables[static_cast<std::size_t>(it->second)].draw;
    if (feature.contains("bag_length")) {
      PARITY_ASSIGN_OR_RETURN(draw.bag_lengths, read_bag_length(feature["bag_length"],
                                                                jc::key_context(origin, parent)));
    }
    PARITY_ASSIGN_OR_RETURN(draw.zipf_alpha, read_zipf(feature, origin, parent, draw.zipf_alpha));
    spec->table_of_feature.push_back(it->second);
    spec->per_feature.push_back(draw);
  }
  return Status::ok();
}

// One weights dtype and one pooling mode for the whole TBE (the op's problem has one of each).
Status check_uniform_types(const std::vector<TableEntry>& tables, const std::string& origin) {
  for (const auto& t : tables) {
    PARITY_CHECK_ARG(
        t.weight_dtype == tables[0].weight_dtype, origin, ": table '", t.name,
        "' has weights_dtype ", dtype_name(t.weight_dtype), ", table '", tables[0].name, "' ",
        dtype_name(tables[0].weight_dtype),
        "; one TBE holds one weights dtype (split the layout into one file per dtype)");
    PARITY_CHECK_ARG(t.pooling == tables[0].pooling, origin, ": table '", t.name, "' has pooling ",
                     embedding::pooling_mode_name(t.pooling), ", table '", tables[0].name, "' ",
                     embedding::pooling_mode_name(tables[0].pooling), "; one TBE pools one way");
  }
  return Status::ok();
}

Result<TbeBenchSpec> spec_from_document(const json& doc, const std::string& origin) {
  PARITY_RETURN_IF_ERROR(jc::expect_object(doc, origin, "a table-layout object"));
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(doc, kTopKeys, origin, ""));
  PARITY_RETURN_IF_ERROR(jc::check_schema_version(doc, origin, 1));
  TbeBenchSpec spec;
  PARITY_ASSIGN_OR_RETURN(spec.name, jc::read_optional_string(doc, "name", origin, "", "layout"));
  PARITY_ASSIGN_OR_RETURN(spec.batch,
                          jc::read_optional_integer(doc, "batch_size", origin, "", 1, 1 << 30, 0));
  const auto tables_it = doc.find("tables");
  PARITY_CHECK_ARG(tables_it != doc.end() && tables_it->is_array() && !tables_it->empty(),
                   jc::key_context(origin, "tables"),
                   ": expected a non-empty array of table objects, got ",
                   tables_it == doc.end() ? std::string("nothing") : jc::describe(*tables_it));
  std::vector<TableEntry> tables;
  std::map<std::string, std::size_t> seen;
  for (std::size_t t = 0; t < tables_it->size(); ++t) {
    PARITY_ASSIGN_OR_RETURN(
        TableEntry entry, read_table((*tables_it)[t], origin, "tables[" + std::to_string(t) + "]"));
    PARITY_CHECK_ARG(seen.emplace(entry.name, t).second,
                     jc::key_context(origin, "tables[" + std::to_string(t) + "].name"), ": '",
                     entry.name, "' is already the name of tables[", seen[entry.name], "]");
    tables.push_back(std::move(entry));
  }
  PARITY_RETURN_IF_ERROR(check_uniform_types(tables, origin));
  for (const auto& t : tables) {
    spec.tables.push_back(t.shape);
    spec.table_names.push_back(t.name);
  }
  spec.weight_dtype = spec.output_dtype = tables[0].weight_dtype;
  spec.pooling = tables[0].pooling;
  if (doc.contains("features")) {
    PARITY_RETURN_IF_ERROR(read_features(doc["features"], origin, tables, &spec));
  } else {
    for (const auto& t : tables) spec.per_feature.push_back(t.draw);
  }
  // The layout's own checks (dims a multiple of 4, total size), named by the table's name.
  auto layout = embedding::TbeLayout::create(spec.tables, spec.table_of_feature);
  if (!layout) return invalid_argument(origin, ": ", layout.status().message());
  return spec;
}

}  // namespace

Result<TbeBenchSpec> tbe_bench_spec_from_layout_json(const std::string& text,
                                                     const std::string& source) {
  try {
    PARITY_ASSIGN_OR_RETURN(const json doc, jc::parse_json_text(text, source));
    return spec_from_document(doc, source);
  } catch (const std::exception& e) {  // the reader checks types first; this is the last guard
    return invalid_argument(source, ": ", e.what());
  }
}

Result<TbeBenchSpec> read_tbe_layout_file(const std::string& path) {
  auto text = jc::read_text_file(path, "bench tbe: --layout");
  if (!text) return text.status().with_context("bench tbe: --layout");
  return tbe_bench_spec_from_layout_json(*text, path);
}

}  // namespace parity::bench
