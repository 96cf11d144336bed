// ModelSpec: names, validation, derived sizes, the learning-rate schedule, presets and the memory
// estimate. JSON reading and writing live in spec_json.cpp.
#include "parity/model/spec.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "parity/core/parse.hpp"
#include "parity/embedding/tbe.hpp"

namespace parity::model {

namespace {

template <typename Enum, std::size_t N>
Result<Enum> parse_named(std::string_view text, std::string_view what,
                         const std::array<Enum, N>& values, std::string_view (*name)(Enum)) {
  std::string expected;
  for (Enum value : values) {
    if (text == name(value)) return value;
    expected += (expected.empty() ? "" : ", ") + std::string(name(value));
  }
  return invalid_argument(what, ": unknown value '", text, "' (expected one of ", expected, ")");
}

}  // namespace

std::string_view interaction_kind_name(InteractionKind kind) {
  return kind == InteractionKind::kDot ? "dot" : "dcnv2";
}
Result<InteractionKind> parse_interaction_kind(std::string_view text) {
  return parse_named(text, "interaction",
                     std::array{InteractionKind::kDot, InteractionKind::kDcnV2}, interaction_kind_name);
}
std::string_view dense_precision_name(DensePrecision precision) {
  switch (precision) {
    case DensePrecision::kFp32: return "fp32";
    case DensePrecision::kTf32: return "tf32";
    case DensePrecision::kBf16: return "bf16";
  }
  return "?";
}
Result<DensePrecision> parse_dense_precision(std::string_view text) {
  return parse_named(text, "precision",
                     std::array{DensePrecision::kFp32, DensePrecision::kTf32, DensePrecision::kBf16},
                     dense_precision_name);
}
std::string_view dense_optimizer_kind_name(DenseOptimizerKind kind) {
  switch (kind) {
    case DenseOptimizerKind::kSgd: return "sgd";
    case DenseOptimizerKind::kAdagrad: return "adagrad";
    case DenseOptimizerKind::kAdam: return "adam";
  }
  return "?";
}
Result<DenseOptimizerKind> parse_dense_optimizer_kind(std::string_view text) {
  return parse_named(
      text, "dense_optimizer.kind",
      std::array{DenseOptimizerKind::kSgd, DenseOptimizerKind::kAdagrad, DenseOptimizerKind::kAdam},
      dense_optimizer_kind_name);
}
std::string_view lr_decay_kind_name(LrDecayKind kind) {
  switch (kind) {
    case LrDecayKind::kNone: return "none";
    case LrDecayKind::kLinear: return "linear";
    case LrDecayKind::kPoly: return "poly";
  }
  return "?";
}
Result<LrDecayKind> parse_lr_decay_kind(std::string_view text) {
  return parse_named(text, "lr_schedule.decay",
                     std::array{LrDecayKind::kNone, LrDecayKind::kLinear, LrDecayKind::kPoly},
                     lr_decay_kind_name);
}

double LrSchedule::learning_rate(double base_learning_rate, std::int64_t step) const {
  // MLPerf counts scheduler steps from 1; `step` is 0-based, so step s is the (s+1)-th update.
  const std::int64_t count = step + 1;
  if (count < warmup_steps) {
    return base_learning_rate * static_cast<double>(count) / static_cast<double>(warmup_steps);
  }
  if (decay == LrDecayKind::kNone || decay_steps <= 0 || count < decay_start_step) {
    return base_learning_rate;
  }
  const double power = decay == LrDecayKind::kLinear ? 1.0 : decay_power;
  const std::int64_t decayed = std::min(count - decay_start_step, decay_steps);
  const double remaining = static_cast<double>(decay_steps - decayed) / static_cast<double>(decay_steps);
  return std::max(min_learning_rate, base_learning_rate * std::pow(remaining, power));
}

std::int64_t ModelSpec::pooled_embedding_dim() const {
  std::int64_t total = 0;
  for (const auto& feature : embedding.features) {
    if (feature.table >= 0 && feature.table < static_cast<int>(embedding.tables.size())) {
      total += embedding.tables[feature.table].dim;
    }
  }
  return total;
}

std::int64_t ModelSpec::interaction_output_dim() const {
  if (interaction == InteractionKind::kDcnV2) return bottom_output_dim() + pooled_embedding_dim();
  const std::int64_t vectors = num_features() + 1;
  return bottom_output_dim() + vectors * (vectors - 1) / 2;
}

namespace {

std::int64_t mlp_parameter_count(std::int64_t input_width, const std::vector<int>& widths) {
  std::int64_t count = 0;
  for (int width : widths) {
    count += input_width * width + width;
    input_width = width;
  }
  return count;
}

}  // namespace

std::int64_t ModelSpec::dense_parameter_count() const {
  std::int64_t count = mlp_parameter_count(num_dense_features, bottom_mlp);
  if (interaction == InteractionKind::kDcnV2) {
    const std::int64_t width = interaction_output_dim();
    // Per layer: V (rank x width, no bias), U (width x rank) and its bias (width).
    count += cross_layers * (2 * width * cross_rank + width);
  }
  return count + mlp_parameter_count(interaction_output_dim(), top_mlp);
}

std::int64_t ModelSpec::embedding_row_count() const {
  std::int64_t rows = 0;
  for (const auto& table : embedding.tables) rows += table.num_rows;
  return rows;
}

Result<embedding::TbeLayout> ModelSpec::tbe_layout() const {
  std::vector<embedding::TableSpec> tables;
  for (const auto& table : embedding.tables) tables.push_back({table.num_rows, table.dim});
  std::vector<int> table_of_feature;
  for (const auto& feature : embedding.features) table_of_feature.push_back(feature.table);
  return embedding::TbeLayout::create(std::move(tables), std::move(table_of_feature));
}

namespace {

Status validate_mlp(const std::vector<int>& widths, std::string_view key) {
  PARITY_CHECK_ARG(!widths.empty(), key, ": is empty; expected at least one layer width");
  for (std::size_t i = 0; i < widths.size(); ++i) {
    PARITY_CHECK_ARG(widths[i] >= 1 && widths[i] <= (1 << 20), key, "[", i, "]=", widths[i],
                     ": out of range [1, 1048576]");
  }
  return Status::ok();
}

Status validate_embedding(const EmbeddingConfig& config) {
  PARITY_CHECK_ARG(!config.tables.empty(), "embedding.tables: is empty; expected at least one table");
  PARITY_CHECK_ARG(!config.features.empty(), "embedding.features: is empty; expected at least one");
  const int num_tables = static_cast<int>(config.tables.size());
  for (int t = 0; t < num_tables; ++t) {
    const auto& table = config.tables[t];
    PARITY_CHECK_ARG(table.num_rows >= 1 && table.num_rows <= (std::int64_t{1} << 40),
                     "embedding.tables[", t, "].rows=", table.num_rows, ": out of range [1, 2^40]");
    PARITY_CHECK_ARG(table.dim >= embedding::kEmbeddingDimMultiple &&
                         table.dim <= embedding::kMaxEmbeddingDim &&
                         table.dim % embedding::kEmbeddingDimMultiple == 0,
                     "embedding.tables[", t, "].dim=", table.dim, ": expected a multiple of ",
                     embedding::kEmbeddingDimMultiple, " in [", embedding::kEmbeddingDimMultiple,
                     ", ", embedding::kMaxEmbeddingDim, "]");
  }
  for (std::size_t f = 0; f < config.features.size(); ++f) {
    const auto& feature = config.features[f];
    PARITY_CHECK_ARG(feature.table >= 0 && feature.table < num_tables, "embedding.features[", f,
                     "].table=", feature.table, ": no such table (", num_tables, " tables)");
    PARITY_CHECK_ARG(feature.ids_per_sample >= 1 && feature.ids_per_sample <= 65536,
                     "embedding.features[", f, "].ids_per_sample=", feature.ids_per_sample,
                     ": out of range [1, 65536]");
  }
  PARITY_CHECK_ARG(config.pooling != embedding::PoolingMode::kNone,
                   "embedding.pooling=none: the model needs pooled features (sum or mean)");
  PARITY_CHECK_ARG(config.weight_dtype == DType::kF32 || config.weight_dtype == DType::kF16 ||
                       config.weight_dtype == DType::kBF16,
                   "embedding.dtype=", dtype_name(config.weight_dtype),
                   ": expected fp32, fp16 or bf16");
  Status optimizer = config.optimizer.validate();
  if (!optimizer.is_ok()) return optimizer.with_context("embedding.optimizer");
  return Status::ok();
}

}  // namespace

Status ModelSpec::validate() const {
  PARITY_CHECK_ARG(num_dense_features >= 1 && num_dense_features <= 65536,
                   "dense_features=", num_dense_features, ": out of range [1, 65536]");
  PARITY_RETURN_IF_ERROR(validate_mlp(bottom_mlp, "bottom_mlp"));
  PARITY_RETURN_IF_ERROR(validate_mlp(top_mlp, "top_mlp"));
  PARITY_CHECK_ARG(top_mlp.back() == 1, "top_mlp[", top_mlp.size() - 1, "]=", top_mlp.back(),
                   ": the last layer must have width 1 (the logit)");
  PARITY_RETURN_IF_ERROR(validate_embedding(embedding));
  if (interaction == InteractionKind::kDot) {
    for (std::size_t f = 0; f < embedding.features.size(); ++f) {
      const int dim = embedding.tables[embedding.features[f].table].dim;
      PARITY_CHECK_ARG(dim == bottom_output_dim(), "embedding.features[", f, "]: dim ", dim,
                       " differs from bottom_mlp's output ", bottom_output_dim(),
                       "; the dot interaction needs equal widths");
    }
  } else {
    PARITY_CHECK_ARG(cross_layers >= 1 && cross_layers <= 64, "interaction.layers=", cross_layers,
                     ": out of range [1, 64]");
    PARITY_CHECK_ARG(cross_rank >= 1 && cross_rank <= 65536, "interaction.rank=", cross_rank,
                     ": out of range [1, 65536]");
  }
  const auto& dense = dense_optimizer;
  PARITY_CHECK_ARG(std::isfinite(dense.learning_rate) && dense.learning_rate > 0,
                   "dense_optimizer.lr=", dense.learning_rate, ": expected a finite value > 0");
  PARITY_CHECK_ARG(std::isfinite(dense.eps) && dense.eps > 0, "dense_optimizer.eps=", dense.eps,
                   ": expected a finite value > 0");
  PARITY_CHECK_ARG(dense.beta1 >= 0 && dense.beta1 < 1, "dense_optimizer.beta1=", dense.beta1,
                   ": out of range [0, 1)");
  PARITY_CHECK_ARG(dense.beta2 >= 0 && dense.beta2 < 1, "dense_optimizer.beta2=", dense.beta2,
                   ": out of range [0, 1)");
  PARITY_CHECK_ARG(std::isfinite(dense.weight_decay) && dense.weight_decay >= 0,
                   "dense_optimizer.weight_decay=", dense.weight_decay, ": expected >= 0");
  const auto& lr = lr_schedule;
  PARITY_CHECK_ARG(lr.warmup_steps >= 0, "lr_schedule.warmup_steps=", lr.warmup_steps, ": expected >= 0");
  PARITY_CHECK_ARG(lr.decay_start_step >= 0, "lr_schedule.decay_start_step=", lr.decay_start_step,
                   ": expected >= 0");
  PARITY_CHECK_ARG(lr.decay_steps >= 0, "lr_schedule.decay_steps=", lr.decay_steps, ": expected >= 0");
  PARITY_CHECK_ARG(std::isfinite(lr.decay_power) && lr.decay_power > 0,
                   "lr_schedule.power=", lr.decay_power, ": expected a finite value > 0");
  PARITY_CHECK_ARG(std::isfinite(lr.min_learning_rate) && lr.min_learning_rate >= 0,
                   "lr_schedule.min_lr=", lr.min_learning_rate, ": expected >= 0");
  return Status::ok();
}

std::vector<std::string> preset_names() { return {"tiny", "dlrm-kaggle", "dlrm-v2"}; }

namespace {

ModelSpec make_model(std::string name, const std::vector<std::int64_t>& rows,
                     const std::vector<int>& ids_per_sample, int dim) {
  ModelSpec spec;
  spec.name = std::move(name);
  for (std::size_t t = 0; t < rows.size(); ++t) {
    spec.embedding.tables.push_back({"C" + std::to_string(t + 1), rows[t], dim});
    spec.embedding.features.push_back({"C" + std::to_string(t + 1), static_cast<int>(t),
                                       ids_per_sample.empty() ? 1 : ids_per_sample[t]});
  }
  return spec;
}

ModelSpec tiny_preset() {
  ModelSpec spec = make_model("tiny", {1000, 500, 2000, 100, 50, 3000, 10, 700},
                              {1, 1, 2, 1, 1, 3, 1, 1}, 16);
  spec.bottom_mlp = {32, 16};
  spec.top_mlp = {64, 32, 1};
  spec.dense_optimizer = {DenseOptimizerKind::kAdagrad, 0.05f, 1e-8f, 0.9f, 0.999f, 0.0f};
  spec.embedding.optimizer.kind = embedding::OptimizerKind::kRowwiseAdagrad;
  spec.embedding.optimizer.learning_rate = 0.05f;
  return spec;
}

ModelSpec kaggle_preset() {
  // Criteo Kaggle categorical cardinalities (torch_dlrm.py), capped at 4M rows.
  std::vector<std::int64_t> rows = {1460, 583, 10131227, 2202608, 305, 24, 12517, 633, 3,
                                    93145, 5683, 8351593, 3194, 27, 14992, 5461306, 10, 5652,
                                    2173, 4, 7046547, 18, 15, 286181, 105, 142572};
  for (auto& count : rows) count = std::min<std::int64_t>(count, 4'000'000);
  ModelSpec spec = make_model("dlrm-kaggle", rows, {}, 128);
  spec.bottom_mlp = {512, 256, 128};
  spec.top_mlp = {1024, 1024, 512, 256, 1};
  spec.dense_optimizer.kind = DenseOptimizerKind::kSgd;
  spec.dense_optimizer.learning_rate = 0.1f;
  spec.embedding.optimizer.kind = embedding::OptimizerKind::kSgd;
  spec.embedding.optimizer.learning_rate = 0.1f;
  return spec;
}

ModelSpec dlrm_v2_preset() {
  // MLPerf DLRMv2 (Criteo 1TB multi-hot): rows and ids per sample per table (recsys.md 3.2).
  const std::vector<std::int64_t> rows = {
      40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956, 405282, 10,
      2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000, 590152, 12973, 108, 36};
  const std::vector<int> hots = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1,
                                 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
  ModelSpec spec = make_model("dlrm-v2", rows, hots, 128);
  spec.bottom_mlp = {512, 256, 128};
  spec.interaction = InteractionKind::kDcnV2;
  spec.cross_layers = 3;
  spec.cross_rank = 512;
  spec.top_mlp = {1024, 1024, 512, 256, 1};
  // MLPerf uses Adagrad lr 0.005 for both; element-wise state for 204M x 128 rows would not fit
  // one H200, so the tables use row-wise Adagrad (+0.8 GB) as recsys.md 3.2 recommends.
  spec.dense_optimizer.kind = DenseOptimizerKind::kAdagrad;
  spec.dense_optimizer.learning_rate = 0.005f;
  spec.embedding.optimizer.kind = embedding::OptimizerKind::kRowwiseAdagrad;
  spec.embedding.optimizer.learning_rate = 0.005f;
  return spec;
}

}  // namespace

Result<ModelSpec> preset(std::string_view name) {
  if (name == "tiny") return tiny_preset();
  if (name == "dlrm-kaggle") return kaggle_preset();
  if (name == "dlrm-v2") return dlrm_v2_preset();
  return invalid_argument("model: unknown preset '", name, "' (expected tiny, dlrm-kaggle, dlrm-v2 ",
                          "or a path to a JSON spec file)");
}

void cap_table_rows(ModelSpec& spec, std::int64_t max_rows) {
  for (auto& table : spec.embedding.tables) table.num_rows = std::min(table.num_rows, max_rows);
}

Status apply_spec_overrides(ModelSpec& spec, const SpecOverrides& overrides) {
  if (!overrides.precision.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec.precision, parse_dense_precision(overrides.precision));
  }
  if (!overrides.table_cap.empty()) {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t cap, parse_int64(overrides.table_cap, "--table-cap", 1));
    cap_table_rows(spec, cap);
  }
  if (!overrides.optimizer.empty()) {
    // One name for both parts (the PyTorch baselines use SGD for both); Adagrad tables are row-wise.
    const std::string& name = overrides.optimizer;
    if (name != "sgd" && name != "adagrad" && name != "adam") {
      return invalid_argument("optimizer: '", name, "' is not one of sgd, adagrad, adam");
    }
    PARITY_ASSIGN_OR_RETURN(spec.dense_optimizer.kind, parse_dense_optimizer_kind(name));
    PARITY_ASSIGN_OR_RETURN(spec.embedding.optimizer.kind,
                            embedding::parse_optimizer_kind(name == "adagrad" ? "rowwise_adagrad" : name));
  }
  return Status::ok();
}

data::DatasetSchema dataset_schema(const ModelSpec& spec) {
  data::DatasetSchema schema;
  schema.num_dense = spec.num_dense_features;
  for (const auto& feature : spec.embedding.features) {
    schema.tables.push_back({spec.embedding.tables[feature.table].num_rows, feature.ids_per_sample});
  }
  return schema;
}

std::int64_t MemoryEstimate::total_bytes() const {
  return embedding_weight_bytes + embedding_state_bytes + dense_weight_bytes + dense_grad_bytes +
         dense_state_bytes + activation_bytes;
}

MemoryEstimate estimate_memory(const ModelSpec& spec, std::int64_t batch_size) {
  MemoryEstimate estimate;
  constexpr std::int64_t kFloatBytes = 4;
  std::int64_t weight_elements = 0;
  std::int64_t state_elements = 0;
  for (const auto& table : spec.embedding.tables) {
    weight_elements += table.num_rows * table.dim;
    switch (spec.embedding.optimizer.kind) {
      case embedding::OptimizerKind::kSgd: break;
      case embedding::OptimizerKind::kRowwiseAdagrad: state_elements += table.num_rows; break;
      case embedding::OptimizerKind::kAdagrad: state_elements += table.num_rows * table.dim; break;
      case embedding::OptimizerKind::kAdam: state_elements += 2 * table.num_rows * table.dim; break;
    }
  }
  estimate.embedding_weight_bytes =
      weight_elements * static_cast<std::int64_t>(dtype_size_bytes(spec.embedding.weight_dtype));
  estimate.embedding_state_bytes = state_elements * kFloatBytes;

  const std::int64_t parameters = spec.dense_parameter_count();
  const std::int64_t compute_copy = spec.precision == DensePrecision::kBf16 ? 2 : 0;
  estimate.dense_weight_bytes = parameters * (kFloatBytes + compute_copy);
  estimate.dense_grad_bytes = parameters * kFloatBytes;
  const std::int64_t state_per_parameter =
      spec.dense_optimizer.kind == DenseOptimizerKind::kAdam      ? 2
      : spec.dense_optimizer.kind == DenseOptimizerKind::kAdagrad ? 1
                                                                  : 0;
  estimate.dense_state_bytes = parameters * state_per_parameter * kFloatBytes;

  // Activations kept for the backward: every layer's output (MLPs, cross net with its two
  // intermediates), the pooled embeddings and the interaction output, plus one gradient buffer
  // per kept activation, all fp32. Activation checkpointing keeps only the layer inputs of the
  // MLP blocks, so count the widest layer twice instead of every layer.
  std::int64_t widths = spec.num_dense_features + spec.pooled_embedding_dim() +
                        spec.interaction_output_dim();
  std::int64_t widest = 0;
  for (int width : spec.bottom_mlp) widths += width, widest = std::max<std::int64_t>(widest, width);
  for (int width : spec.top_mlp) widths += width, widest = std::max<std::int64_t>(widest, width);
  if (spec.interaction == InteractionKind::kDcnV2) {
    widths += spec.cross_layers * (2 * spec.interaction_output_dim() + spec.cross_rank);
  }
  if (spec.activation_checkpointing == ActivationCheckpointing::kOn) {
    widths = spec.num_dense_features + spec.pooled_embedding_dim() +
             2 * spec.interaction_output_dim() + 2 * widest;
  }
  estimate.activation_bytes = 2 * batch_size * widths * kFloatBytes;
  return estimate;
}

Status check_fits(const MemoryEstimate& estimate, std::int64_t available_bytes,
                  std::string_view device_description) {
  const std::int64_t needed = estimate.total_bytes();
  if (needed <= available_bytes) return Status::ok();
  const auto gigabytes = [](std::int64_t bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.2f GB", static_cast<double>(bytes) / 1e9);
    return std::string(text);
  };
  return Status(StatusCode::kOutOfMemory,
                detail::concat("model does not fit: needs ", gigabytes(needed), " (embeddings ",
                               gigabytes(estimate.embedding_weight_bytes + estimate.embedding_state_bytes),
                               ", dense ",
                               gigabytes(estimate.dense_weight_bytes + estimate.dense_grad_bytes +
                                         estimate.dense_state_bytes),
                               ", activations ", gigabytes(estimate.activation_bytes), "), ",
                               device_description, " has ", gigabytes(available_bytes),
                               " (short by ", gigabytes(needed - available_bytes), ")"));
}

}  // namespace parity::model
