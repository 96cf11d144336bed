// The JSON form of ModelSpec (docs/training.md): strict reading (unknown keys are errors that
// suggest the nearest known key; every error names the key path and the value) and writing.
#include <filesystem>
#include <nlohmann/json.hpp>

#include "hw/json_checks.hpp"
#include "parity/model/spec.hpp"

namespace parity::model {

namespace {

using nlohmann::json;
namespace jc = hw::detail;

// Optional members: absent keeps the default; present must have the right type.
Status read_optional_number(const json& object, std::string_view key, std::string_view origin,
                            std::string_view parent, double* value) {
  if (!object.contains(std::string(key))) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(*value, jc::read_number(object, key, origin, parent));
  return Status::ok();
}

template <typename Integer>
Status read_optional_integer(const json& object, std::string_view key, std::string_view origin,
                             std::string_view parent, std::int64_t minimum, Integer* value) {
  if (!object.contains(std::string(key))) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const std::int64_t read, jc::read_integer(object, key, origin, parent, minimum));
  *value = static_cast<Integer>(read);
  return Status::ok();
}

template <typename Enum>
Status read_optional_enum(const json& object, std::string_view key, std::string_view origin,
                          std::string_view parent, Result<Enum> (*parse)(std::string_view),
                          Enum* value) {
  if (!object.contains(std::string(key))) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const std::string text,
                          jc::read_string(object, key, origin, parent, jc::Emptiness::kRequireNonEmpty));
  Result<Enum> parsed = parse(text);
  if (!parsed.is_ok()) {
    return invalid_argument(jc::key_context(origin, jc::join_key(parent, key)), ": ",
                            parsed.status().message());
  }
  *value = *parsed;
  return Status::ok();
}

Result<std::vector<int>> read_widths(const json& object, std::string_view key, std::string_view origin) {
  const auto it = object.find(std::string(key));
  if (it == object.end()) return invalid_argument(origin, ": missing required key '", key, "'");
  if (!it->is_array()) {
    return invalid_argument(jc::key_context(origin, key), ": expected an array of widths, got ",
                            jc::describe(*it));
  }
  std::vector<int> widths;
  for (std::size_t i = 0; i < it->size(); ++i) {
    const json& width = (*it)[i];
    if (!width.is_number_integer() || width.get<std::int64_t>() < 1 ||
        width.get<std::int64_t>() > (1 << 20)) {
      return invalid_argument(jc::key_context(origin, std::string(key) + "[" + std::to_string(i) + "]"),
                              ": expected a width in [1, 1048576], got ", jc::describe(width));
    }
    widths.push_back(width.get<int>());
  }
  return widths;
}

Result<int> resolve_table(const json& reference, const std::vector<TableConfig>& tables,
                          std::string_view where) {
  if (reference.is_string()) {
    for (std::size_t t = 0; t < tables.size(); ++t) {
      if (tables[t].name == reference.get<std::string>()) return static_cast<int>(t);
    }
    return invalid_argument(where, ": no table named ", jc::describe(reference));
  }
  if (reference.is_number_integer()) return reference.get<int>();
  return invalid_argument(where, ": expected a table name or index, got ", jc::describe(reference));
}

// Long on purpose: one strict reader per key of the `embedding` object, in the documented order.
Status read_embedding(const json& root, std::string_view origin, EmbeddingConfig* config) {
  const auto it = root.find("embedding");
  if (it == root.end()) return invalid_argument(origin, ": missing required key 'embedding'");
  const json& object = *it;
  PARITY_RETURN_IF_ERROR(jc::expect_object(object, jc::key_context(origin, "embedding"), "an object"));
  static constexpr std::string_view kKeys[] = {"tables", "features", "pooling", "dtype", "optimizer"};
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(object, kKeys, origin, "embedding"));
  const auto tables = object.find("tables");
  if (tables == object.end() || !tables->is_array() || tables->empty()) {
    return invalid_argument(jc::key_context(origin, "embedding.tables"),
                            ": expected a non-empty array of tables");
  }
  std::vector<int> default_hots;
  for (std::size_t t = 0; t < tables->size(); ++t) {
    const std::string path = "embedding.tables[" + std::to_string(t) + "]";
    const json& table = (*tables)[t];
    PARITY_RETURN_IF_ERROR(jc::expect_object(table, jc::key_context(origin, path), "an object"));
    static constexpr std::string_view kTableKeys[] = {"name", "rows", "dim", "ids_per_sample"};
    PARITY_RETURN_IF_ERROR(jc::check_known_keys(table, kTableKeys, origin, path));
    TableConfig config_table;
    config_table.name = "C" + std::to_string(t + 1);
    if (table.contains("name")) {
      PARITY_ASSIGN_OR_RETURN(config_table.name,
                              jc::read_string(table, "name", origin, path, jc::Emptiness::kRequireNonEmpty));
    }
    PARITY_ASSIGN_OR_RETURN(config_table.num_rows, jc::read_integer(table, "rows", origin, path, 1));
    PARITY_ASSIGN_OR_RETURN(const std::int64_t dim, jc::read_integer(table, "dim", origin, path, 1));
    config_table.dim = static_cast<int>(std::min<std::int64_t>(dim, 1 << 30));
    int hots = 1;
    PARITY_RETURN_IF_ERROR(read_optional_integer(table, "ids_per_sample", origin, path, 1, &hots));
    default_hots.push_back(hots);
    config->tables.push_back(config_table);
  }
  const auto features = object.find("features");
  if (features == object.end()) {  // one feature per table
    for (std::size_t t = 0; t < config->tables.size(); ++t) {
      config->features.push_back({config->tables[t].name, static_cast<int>(t), default_hots[t]});
    }
  } else {
    if (!features->is_array()) {
      return invalid_argument(jc::key_context(origin, "embedding.features"),
                              ": expected an array, got ", jc::describe(*features));
    }
    for (std::size_t f = 0; f < features->size(); ++f) {
      const std::string path = "embedding.features[" + std::to_string(f) + "]";
      const json& feature = (*features)[f];
      PARITY_RETURN_IF_ERROR(jc::expect_object(feature, jc::key_context(origin, path), "an object"));
      static constexpr std::string_view kFeatureKeys[] = {"name", "table", "ids_per_sample"};
      PARITY_RETURN_IF_ERROR(jc::check_known_keys(feature, kFeatureKeys, origin, path));
      if (!feature.contains("table")) {
        return invalid_argument(origin, ": missing required key '", path, ".table'");
      }
      FeatureConfig config_feature;
      PARITY_ASSIGN_OR_RETURN(config_feature.table,
                              resolve_table(feature["table"], config->tables,
                                            jc::key_context(origin, path + ".table")));
      config_feature.name = "F" + std::to_string(f + 1);
      if (feature.contains("name")) {
        PARITY_ASSIGN_OR_RETURN(config_feature.name, jc::read_string(feature, "name", origin, path,
                                                                     jc::Emptiness::kRequireNonEmpty));
      }
      PARITY_RETURN_IF_ERROR(
          read_optional_integer(feature, "ids_per_sample", origin, path, 1, &config_feature.ids_per_sample));
      config->features.push_back(config_feature);
    }
  }
  const auto parse_pooling = [](std::string_view text) {
    return embedding::parse_pooling_mode(std::string(text));
  };
  PARITY_RETURN_IF_ERROR(read_optional_enum<embedding::PoolingMode>(
      object, "pooling", origin, "embedding", +parse_pooling, &config->pooling));
  PARITY_RETURN_IF_ERROR(read_optional_enum<DType>(object, "dtype", origin, "embedding",
                                                   &parse_dtype, &config->weight_dtype));
  if (object.contains("optimizer")) {
    const json& optimizer = object["optimizer"];
    const std::string path = "embedding.optimizer";
    PARITY_RETURN_IF_ERROR(jc::expect_object(optimizer, jc::key_context(origin, path), "an object"));
    static constexpr std::string_view kOptKeys[] = {"kind", "lr", "eps", "weight_decay", "beta1", "beta2"};
    PARITY_RETURN_IF_ERROR(jc::check_known_keys(optimizer, kOptKeys, origin, path));
    const auto parse_kind = [](std::string_view text) {
      return embedding::parse_optimizer_kind(std::string(text));
    };
    PARITY_RETURN_IF_ERROR(read_optional_enum<embedding::OptimizerKind>(
        optimizer, "kind", origin, path, +parse_kind, &config->optimizer.kind));
    auto& params = config->optimizer;
    double lr = params.learning_rate, eps = params.eps, wd = params.weight_decay;
    double beta1 = params.beta1, beta2 = params.beta2;
    PARITY_RETURN_IF_ERROR(read_optional_number(optimizer, "lr", origin, path, &lr));
    PARITY_RETURN_IF_ERROR(read_optional_number(optimizer, "eps", origin, path, &eps));
    PARITY_RETURN_IF_ERROR(read_optional_number(optimizer, "weight_decay", origin, path, &wd));
    PARITY_RETURN_IF_ERROR(read_optional_number(optimizer, "beta1", origin, path, &beta1));
    PARITY_RETURN_IF_ERROR(read_optional_number(optimizer, "beta2", origin, path, &beta2));
    params.learning_rate = static_cast<float>(lr);
    params.eps = static_cast<float>(eps);
    params.weight_decay = static_cast<float>(wd);
    params.weight_decay_mode = wd > 0 ? embedding::WeightDecayMode::kL2 : embedding::WeightDecayMode::kNone;
    params.beta1 = static_cast<float>(beta1);
    params.beta2 = static_cast<float>(beta2);
  }
  return Status::ok();
}

Status read_interaction(const json& root, std::string_view origin, ModelSpec* spec) {
  const auto it = root.find("interaction");
  if (it == root.end()) return invalid_argument(origin, ": missing required key 'interaction'");
  PARITY_RETURN_IF_ERROR(jc::expect_object(*it, jc::key_context(origin, "interaction"), "an object"));
  static constexpr std::string_view kKeys[] = {"kind", "layers", "rank"};
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(*it, kKeys, origin, "interaction"));
  PARITY_ASSIGN_OR_RETURN(const std::string kind,
                          jc::read_string(*it, "kind", origin, "interaction", jc::Emptiness::kRequireNonEmpty));
  Result<InteractionKind> parsed = parse_interaction_kind(kind);
  if (!parsed.is_ok()) {
    return invalid_argument(jc::key_context(origin, "interaction.kind"), ": ", parsed.status().message());
  }
  spec->interaction = *parsed;
  PARITY_RETURN_IF_ERROR(read_optional_integer(*it, "layers", origin, "interaction", 1, &spec->cross_layers));
  PARITY_RETURN_IF_ERROR(read_optional_integer(*it, "rank", origin, "interaction", 1, &spec->cross_rank));
  return Status::ok();
}

Status read_dense_optimizer_and_schedule(const json& root, std::string_view origin, ModelSpec* spec) {
  if (root.contains("dense_optimizer")) {
    const json& object = root["dense_optimizer"];
    const std::string path = "dense_optimizer";
    PARITY_RETURN_IF_ERROR(jc::expect_object(object, jc::key_context(origin, path), "an object"));
    static constexpr std::string_view kKeys[] = {"kind", "lr", "eps", "beta1", "beta2", "weight_decay"};
    PARITY_RETURN_IF_ERROR(jc::check_known_keys(object, kKeys, origin, path));
    auto& dense = spec->dense_optimizer;
    PARITY_RETURN_IF_ERROR(read_optional_enum<DenseOptimizerKind>(object, "kind", origin, path,
                                                                  &parse_dense_optimizer_kind, &dense.kind));
    double lr = dense.learning_rate, eps = dense.eps, beta1 = dense.beta1, beta2 = dense.beta2;
    double wd = dense.weight_decay;
    PARITY_RETURN_IF_ERROR(read_optional_number(object, "lr", origin, path, &lr));
    PARITY_RETURN_IF_ERROR(read_optional_number(object, "eps", origin, path, &eps));
    PARITY_RETURN_IF_ERROR(read_optional_number(object, "beta1", origin, path, &beta1));
    PARITY_RETURN_IF_ERROR(read_optional_number(object, "beta2", origin, path, &beta2));
    PARITY_RETURN_IF_ERROR(read_optional_number(object, "weight_decay", origin, path, &wd));
    dense.learning_rate = static_cast<float>(lr);
    dense.eps = static_cast<float>(eps);
    dense.beta1 = static_cast<float>(beta1);
    dense.beta2 = static_cast<float>(beta2);
    dense.weight_decay = static_cast<float>(wd);
  }
  if (root.contains("lr_schedule")) {
    const json& object = root["lr_schedule"];
    const std::string path = "lr_schedule";
    PARITY_RETURN_IF_ERROR(jc::expect_object(object, jc::key_context(origin, path), "an object"));
    static constexpr std::string_view kKeys[] = {"warmup_steps", "decay_start_step", "decay_steps",
                                                 "decay", "power", "min_lr"};
    PARITY_RETURN_IF_ERROR(jc::check_known_keys(object, kKeys, origin, path));
    auto& lr = spec->lr_schedule;
    PARITY_RETURN_IF_ERROR(read_optional_integer(object, "warmup_steps", origin, path, 0, &lr.warmup_steps));
    PARITY_RETURN_IF_ERROR(
        read_optional_integer(object, "decay_start_step", origin, path, 0, &lr.decay_start_step));
    PARITY_RETURN_IF_ERROR(read_optional_integer(object, "decay_steps", origin, path, 0, &lr.decay_steps));
    PARITY_RETURN_IF_ERROR(read_optional_enum<LrDecayKind>(object, "decay", origin, path,
                                                           &parse_lr_decay_kind, &lr.decay));
    PARITY_RETURN_IF_ERROR(read_optional_number(object, "power", origin, path, &lr.decay_power));
    PARITY_RETURN_IF_ERROR(read_optional_number(object, "min_lr", origin, path, &lr.min_learning_rate));
  }
  return Status::ok();
}

Result<ModelSpec> spec_from_json(const json& root, std::string_view origin) {
  PARITY_RETURN_IF_ERROR(jc::expect_object(root, std::string(origin), "a JSON object (the model spec)"));
  static constexpr std::string_view kKeys[] = {
      "name", "dense_features", "bottom_mlp", "embedding", "interaction", "top_mlp",
      "precision", "dense_optimizer", "lr_schedule", "activation_checkpointing"};
  PARITY_RETURN_IF_ERROR(jc::check_known_keys(root, kKeys, origin, ""));
  ModelSpec spec;
  spec.name = "custom";
  if (root.contains("name")) {
    PARITY_ASSIGN_OR_RETURN(spec.name, jc::read_string(root, "name", origin, "", jc::Emptiness::kRequireNonEmpty));
  }
  PARITY_RETURN_IF_ERROR(read_optional_integer(root, "dense_features", origin, "", 1, &spec.num_dense_features));
  PARITY_ASSIGN_OR_RETURN(spec.bottom_mlp, read_widths(root, "bottom_mlp", origin));
  PARITY_ASSIGN_OR_RETURN(spec.top_mlp, read_widths(root, "top_mlp", origin));
  PARITY_RETURN_IF_ERROR(read_embedding(root, origin, &spec.embedding));
  PARITY_RETURN_IF_ERROR(read_interaction(root, origin, &spec));
  PARITY_RETURN_IF_ERROR(read_optional_enum<DensePrecision>(root, "precision", origin, "",
                                                            &parse_dense_precision, &spec.precision));
  PARITY_RETURN_IF_ERROR(read_dense_optimizer_and_schedule(root, origin, &spec));
  if (root.contains("activation_checkpointing")) {
    const json& flag = root["activation_checkpointing"];
    if (!flag.is_boolean()) {
      return invalid_argument(jc::key_context(origin, "activation_checkpointing"),
                              ": expected true or false, got ", jc::describe(flag));
    }
    spec.activation_checkpointing =
        flag.get<bool>() ? ActivationCheckpointing::kOn : ActivationCheckpointing::kOff;
  }
  Status valid = spec.validate();
  if (!valid.is_ok()) return valid.with_context(origin);
  return spec;
}

}  // namespace

Result<ModelSpec> parse_spec_json(std::string_view text, std::string_view origin) {
  try {
    const json root = json::parse(text);
    return spec_from_json(root, origin);
  } catch (const json::parse_error& e) {
    return invalid_argument(origin, ": malformed JSON: ", e.what());
  } catch (const std::exception& e) {
    return invalid_argument(origin, ": ", e.what());
  }
}

Result<ModelSpec> read_spec_file(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(const json root, jc::read_json_file(path));
  try {
    return spec_from_json(root, path.string());
  } catch (const std::exception& e) {
    return invalid_argument(path.string(), ": ", e.what());
  }
}

Result<ModelSpec> load_spec(std::string_view preset_or_path) {
  for (const auto& name : preset_names()) {
    if (preset_or_path == name) return preset(name);
  }
  const std::filesystem::path path(preset_or_path);
  std::error_code error;
  if (path.extension() == ".json" || std::filesystem::exists(path, error)) return read_spec_file(path);
  return preset(preset_or_path);  // the unknown-preset message lists the presets
}

Result<ModelSpec> load_spec(std::string_view preset_or_path, const SpecOverrides& overrides) {
  PARITY_ASSIGN_OR_RETURN(ModelSpec spec, load_spec(preset_or_path));
  PARITY_RETURN_IF_ERROR(apply_spec_overrides(spec, overrides));
  return spec;
}

std::string spec_to_json(const ModelSpec& spec) {
  json root;
  root["name"] = spec.name;
  root["dense_features"] = spec.num_dense_features;
  root["bottom_mlp"] = spec.bottom_mlp;
  root["top_mlp"] = spec.top_mlp;
  json tables = json::array();
  for (const auto& table : spec.embedding.tables) {
    tables.push_back({{"name", table.name}, {"rows", table.num_rows}, {"dim", table.dim}});
  }
  json features = json::array();
  for (const auto& feature : spec.embedding.features) {
    features.push_back({{"name", feature.name}, {"table", feature.table},
                        {"ids_per_sample", feature.ids_per_sample}});
  }
  const auto& optimizer = spec.embedding.optimizer;
  root["embedding"] = {{"tables", tables},
                       {"features", features},
                       {"pooling", embedding::pooling_mode_name(spec.embedding.pooling)},
                       {"dtype", std::string(dtype_name(spec.embedding.weight_dtype))},
                       {"optimizer",
                        {{"kind", embedding::optimizer_kind_name(optimizer.kind)},
                         {"lr", optimizer.learning_rate},
                         {"eps", optimizer.eps},
                         {"weight_decay", optimizer.weight_decay},
                         {"beta1", optimizer.beta1},
                         {"beta2", optimizer.beta2}}}};
  root["interaction"] = {{"kind", std::string(interaction_kind_name(spec.interaction))}};
  if (spec.interaction == InteractionKind::kDcnV2) {
    root["interaction"]["layers"] = spec.cross_layers;
    root["interaction"]["rank"] = spec.cross_rank;
  }
  root["precision"] = std::string(dense_precision_name(spec.precision));
  const auto& dense = spec.dense_optimizer;
  root["dense_optimizer"] = {{"kind", std::string(dense_optimizer_kind_name(dense.kind))},
                             {"lr", dense.learning_rate}, {"eps", dense.eps},
                             {"beta1", dense.beta1}, {"beta2", dense.beta2},
                             {"weight_decay", dense.weight_decay}};
  const auto& lr = spec.lr_schedule;
  root["lr_schedule"] = {{"warmup_steps", lr.warmup_steps}, {"decay_start_step", lr.decay_start_step},
                         {"decay_steps", lr.decay_steps},
                         {"decay", std::string(lr_decay_kind_name(lr.decay))},
                         {"power", lr.decay_power}, {"min_lr", lr.min_learning_rate}};
  root["activation_checkpointing"] = spec.activation_checkpointing == ActivationCheckpointing::kOn;
  return root.dump(2);
}

}  // namespace parity::model
