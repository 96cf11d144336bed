#include "parity/plan/inputs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace parity::plan {
namespace {

template <typename Enum, std::size_t N>
Result<Enum> parse_named(std::string_view text, const std::array<std::pair<Enum, std::string_view>, N>& names,
                         std::string_view what) {
  std::string known;
  for (const auto& [value, name] : names) {
    if (name == text) return value;
    known += (known.empty() ? "" : ", ") + std::string(name);
  }
  return invalid_argument(what, ": unknown value '", text, "'; expected one of ", known);
}

constexpr std::array<std::pair<ShardingType, std::string_view>, 4> kShardingNames{{
    {ShardingType::kTableWise, "table_wise"},
    {ShardingType::kRowWise, "row_wise"},
    {ShardingType::kColumnWise, "column_wise"},
    {ShardingType::kDataParallel, "data_parallel"},
}};
constexpr std::array<std::pair<Checkpointing, std::string_view>, 2> kCheckpointingNames{{
    {Checkpointing::kNone, "none"},
    {Checkpointing::kFull, "full"},
}};
constexpr std::array<std::pair<Precision, std::string_view>, 4> kPrecisionNames{{
    {Precision::kFp32, "fp32"},
    {Precision::kTf32, "tf32"},
    {Precision::kBf16, "bf16"},
    {Precision::kBf16Fp16Tables, "bf16_fp16tables"},
}};

template <typename Enum, std::size_t N>
std::string_view name_of(Enum value, const std::array<std::pair<Enum, std::string_view>, N>& names) {
  for (const auto& [candidate, name] : names) {
    if (candidate == value) return name;
  }
  return "unknown";
}

}  // namespace

std::string_view sharding_type_name(ShardingType type) { return name_of(type, kShardingNames); }
std::string_view checkpointing_name(Checkpointing policy) {
  return name_of(policy, kCheckpointingNames);
}
std::string_view precision_name(Precision precision) { return name_of(precision, kPrecisionNames); }
std::string_view interaction_name(InteractionKind kind) {
  return kind == InteractionKind::kDot ? "dot" : "dcnv2";
}
Result<ShardingType> parse_sharding_type(std::string_view text) {
  return parse_named(text, kShardingNames, "sharding type");
}
Result<Checkpointing> parse_checkpointing(std::string_view text) {
  return parse_named(text, kCheckpointingNames, "checkpointing");
}
Result<Precision> parse_precision(std::string_view text) {
  return parse_named(text, kPrecisionNames, "precision");
}

PrecisionBytes precision_bytes(Precision precision) {
  switch (precision) {
    case Precision::kFp32: return {4, 4, 4, DType::kF32, true};
    case Precision::kTf32: return {4, 4, 4, DType::kF32, false};
    case Precision::kBf16: return {2, 4, 2, DType::kBF16, false};
    case Precision::kBf16Fp16Tables: return {2, 2, 2, DType::kBF16, false};
  }
  return {};
}

Status PlannerModel::validate() const {
  PARITY_CHECK_ARG(!tables.empty(), "model '", name, "': tables: empty; a DLRM needs >= 1 table");
  PARITY_CHECK_ARG(dense_features >= 1, "model '", name, "': dense_features: ", dense_features,
                   " must be >= 1");
  PARITY_CHECK_ARG(!bottom_mlp.empty() && !top_mlp.empty(), "model '", name,
                   "': bottom_mlp and top_mlp need >= 1 layer each");
  for (const auto* widths : {&bottom_mlp, &top_mlp}) {
    for (const int width : *widths) {
      PARITY_CHECK_ARG(width >= 1, "model '", name, "': MLP width ", width, " must be >= 1");
    }
  }
  PARITY_CHECK_ARG(top_mlp.back() == 1, "model '", name, "': top_mlp must end in 1 (the logit), got ",
                   top_mlp.back());
  for (const PlannerTable& table : tables) {
    PARITY_CHECK_ARG(table.rows >= 1, "model '", name, "': table '", table.name, "' rows: ",
                     table.rows, " must be >= 1");
    PARITY_CHECK_ARG(table.dim >= embedding::kEmbeddingDimMultiple &&
                         table.dim <= embedding::kMaxEmbeddingDim &&
                         table.dim % embedding::kEmbeddingDimMultiple == 0,
                     "model '", name, "': table '", table.name, "' dim: ", table.dim,
                     " must be a multiple of ", embedding::kEmbeddingDimMultiple, " in [",
                     embedding::kEmbeddingDimMultiple, ", ", embedding::kMaxEmbeddingDim, "]");
    PARITY_CHECK_ARG(table.features >= 1, "model '", name, "': table '", table.name,
                     "' features: ", table.features, " must be >= 1");
    PARITY_CHECK_ARG(std::isfinite(table.ids_per_sample) && table.ids_per_sample > 0.0, "model '",
                     name, "': table '", table.name, "' ids_per_sample: ", table.ids_per_sample,
                     " must be > 0");
    PARITY_CHECK_ARG(interaction != InteractionKind::kDot || table.dim == bottom_mlp.back(),
                     "model '", name, "': table '", table.name, "' dim ", table.dim,
                     " differs from the bottom MLP output ", bottom_mlp.back(),
                     " (the dot interaction needs equal widths)");
  }
  if (interaction == InteractionKind::kDcnV2) {
    PARITY_CHECK_ARG(cross_layers >= 1 && cross_rank >= 1, "model '", name,
                     "': dcnv2 needs cross_layers >= 1 and cross_rank >= 1, got ", cross_layers,
                     " and ", cross_rank);
  }
  return Status::ok();
}

int PlannerModel::num_features() const {
  int features = 0;
  for (const PlannerTable& table : tables) features += table.features;
  return features;
}

std::int64_t PlannerModel::pooled_width() const {
  std::int64_t width = 0;
  for (const PlannerTable& table : tables) width += std::int64_t{table.features} * table.dim;
  return width;
}

std::int64_t PlannerModel::interaction_output_width() const {
  const std::int64_t dim = bottom_mlp.back();
  if (interaction == InteractionKind::kDcnV2) return dim + pooled_width();
  const std::int64_t vectors = num_features() + 1;
  return dim + vectors * (vectors - 1) / 2;  // bottom output + strictly-lower pair dots
}

std::int64_t PlannerModel::dense_parameter_count() const {
  std::int64_t count = 0;
  std::int64_t in = dense_features;
  for (const int out : bottom_mlp) {
    count += in * out + out;
    in = out;
  }
  if (interaction == InteractionKind::kDcnV2) {
    const std::int64_t width = interaction_output_width();
    count += cross_layers * (2 * width * cross_rank + width);  // V, U and the bias per layer
  }
  in = interaction_output_width();
  for (const int out : top_mlp) {
    count += in * out + out;
    in = out;
  }
  return count;
}

Result<PlannerModel> planner_model_from_spec(const model::ModelSpec& spec) {
  PARITY_RETURN_IF_ERROR(spec.validate());
  PlannerModel out;
  out.name = spec.name;
  for (const model::TableConfig& table : spec.embedding.tables) {
    out.tables.push_back({table.name, table.num_rows, table.dim, 0.0, 0});
  }
  for (const model::FeatureConfig& feature : spec.embedding.features) {
    PlannerTable& table = out.tables.at(static_cast<std::size_t>(feature.table));
    table.ids_per_sample += feature.ids_per_sample;
    table.features += 1;
  }
  // A table no feature reads is never looked up: it costs memory only.
  for (PlannerTable& table : out.tables) {
    if (table.features == 0) table.ids_per_sample = 1e-9;
    table.features = std::max(table.features, 1);
  }
  out.dense_features = spec.num_dense_features;
  out.bottom_mlp = spec.bottom_mlp;
  out.top_mlp = spec.top_mlp;
  out.interaction = spec.interaction == model::InteractionKind::kDcnV2 ? InteractionKind::kDcnV2
                                                                       : InteractionKind::kDot;
  out.cross_layers = spec.cross_layers;
  out.cross_rank = spec.cross_rank;
  out.table_optimizer = spec.embedding.optimizer.kind;
  switch (spec.dense_optimizer.kind) {
    case model::DenseOptimizerKind::kSgd: out.dense_optimizer = DenseOptimizer::kSgd; break;
    case model::DenseOptimizerKind::kAdagrad: out.dense_optimizer = DenseOptimizer::kAdagrad; break;
    case model::DenseOptimizerKind::kAdam: out.dense_optimizer = DenseOptimizer::kAdam; break;
  }
  switch (spec.precision) {
    case model::DensePrecision::kFp32: out.precision = Precision::kFp32; break;
    case model::DensePrecision::kTf32: out.precision = Precision::kTf32; break;
    case model::DensePrecision::kBf16:
      out.precision = spec.embedding.weight_dtype == DType::kF32 ? Precision::kBf16
                                                                 : Precision::kBf16Fp16Tables;
      break;
  }
  out.checkpointing = spec.activation_checkpointing == model::ActivationCheckpointing::kOn
                          ? Checkpointing::kFull
                          : Checkpointing::kNone;
  PARITY_RETURN_IF_ERROR(out.validate());
  return out;
}

void apply_precision_and_checkpointing(Precision precision, Checkpointing checkpointing,
                                       model::ModelSpec& spec) {
  switch (precision) {
    case Precision::kFp32: spec.precision = model::DensePrecision::kFp32; break;
    case Precision::kTf32: spec.precision = model::DensePrecision::kTf32; break;
    case Precision::kBf16:
    case Precision::kBf16Fp16Tables: spec.precision = model::DensePrecision::kBf16; break;
  }
  spec.embedding.weight_dtype = precision == Precision::kBf16Fp16Tables ? DType::kF16 : DType::kF32;
  spec.activation_checkpointing = checkpointing == Checkpointing::kFull
                                      ? model::ActivationCheckpointing::kOn
                                      : model::ActivationCheckpointing::kOff;
}

Result<Machine> make_machine(const hw::HardwareSpec& gpu, int num_gpus, int num_nodes) {
  PARITY_CHECK_ARG(num_gpus >= 1, "gpus: ", num_gpus, " must be >= 1");
  PARITY_CHECK_ARG(num_nodes >= 0, "nodes: ", num_nodes, " must be >= 1");
  const int domain = static_cast<int>(gpu.scale_up_domain_gpus.value);
  if (num_nodes == 0) num_nodes = (num_gpus + domain - 1) / domain;
  PARITY_CHECK_ARG(num_gpus % num_nodes == 0, "gpus: ", num_gpus,
                   " is not divisible by nodes: ", num_nodes);
  PARITY_CHECK_ARG(num_gpus / num_nodes <= domain, "gpus: ", num_gpus, " over ", num_nodes,
                   " node(s) puts ", num_gpus / num_nodes, " GPUs in one node, but a ", gpu.name,
                   " scale-up domain holds ", domain, "; use --nodes >= ",
                   (num_gpus + domain - 1) / domain);
  return Machine{gpu, num_gpus, num_nodes};
}

Status PlanOptions::validate(const Machine& machine) const {
  PARITY_CHECK_ARG(min_global_batch >= 1 && max_global_batch >= min_global_batch,
                   "batch: range ", min_global_batch, ":", max_global_batch,
                   " must satisfy 1 <= min <= max");
  PARITY_CHECK_ARG(min_global_batch % machine.num_gpus == 0, "batch: ", min_global_batch,
                   " is not divisible by the ", machine.num_gpus, " ranks");
  PARITY_CHECK_ARG(max_global_batch % machine.num_gpus == 0, "batch: ", max_global_batch,
                   " is not divisible by the ", machine.num_gpus, " ranks");
  PARITY_CHECK_ARG(!checkpointing.empty(), "checkpointing: no policy allowed");
  PARITY_CHECK_ARG(!precisions.empty(), "precision: no precision allowed");
  PARITY_CHECK_ARG(!sharding_types.empty(), "sharding: no sharding type allowed");
  PARITY_CHECK_ARG(local_search_passes >= 0, "local_search_passes: ", local_search_passes,
                   " must be >= 0");
  return Status::ok();
}

}  // namespace parity::plan
