// ModelSpec: what the trainer builds — a DLRM-family model (bottom MLP over the dense features,
// embedding tables pooled per feature, a `dot` or `dcnv2` interaction, top MLP ending in one
// logit) plus its precision, optimisers and learning-rate schedule. Read from a JSON file
// (docs/training.md) or a preset; validated with errors naming the key and the value.
//
// Legend: F features (one pooled embedding each; feature f reads table table_of_feature), T tables,
// D_bottom the bottom MLP's output width, B batch size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"
#include "parity/data/dataset.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/nn/optimizer.hpp"

namespace parity::model {

enum class InteractionKind : std::uint8_t { kDot, kDcnV2 };
// Dense-part compute: fp32; TF32 tensor cores for the fp32 GEMMs (GPU; exact fp32 on the CPU);
// bf16 operands with fp32 accumulation and fp32 master weights.
enum class DensePrecision : std::uint8_t { kFp32, kTf32, kBf16 };
using nn::DenseOptimizerKind;  // sgd, adagrad, adam (nn/optimizer.hpp)
// After warm-up: none (constant), linear (power 1) or poly (power `decay_power`, MLPerf DLRMv2
// uses 2) from the base rate down to `min_learning_rate` over `decay_steps`.
enum class LrDecayKind : std::uint8_t { kNone, kLinear, kPoly };
enum class ActivationCheckpointing : std::uint8_t { kOff, kOn };

std::string_view interaction_kind_name(InteractionKind kind);  // "dot", "dcnv2"
Result<InteractionKind> parse_interaction_kind(std::string_view text);
std::string_view dense_precision_name(DensePrecision precision);  // "fp32", "tf32", "bf16"
Result<DensePrecision> parse_dense_precision(std::string_view text);
std::string_view dense_optimizer_kind_name(DenseOptimizerKind kind);  // "sgd", "adagrad", "adam"
Result<DenseOptimizerKind> parse_dense_optimizer_kind(std::string_view text);
std::string_view lr_decay_kind_name(LrDecayKind kind);  // "none", "linear", "poly"
Result<LrDecayKind> parse_lr_decay_kind(std::string_view text);

struct TableConfig {
  std::string name;
  std::int64_t num_rows = 0;
  int dim = 0;
};

/// One categorical input: which table it reads and how many ids each sample has (multi-hot).
struct FeatureConfig {
  std::string name;
  int table = 0;
  int ids_per_sample = 1;
};

struct EmbeddingConfig {
  std::vector<TableConfig> tables;
  std::vector<FeatureConfig> features;  // several features may share a table
  embedding::PoolingMode pooling = embedding::PoolingMode::kSum;  // sum or mean
  DType weight_dtype = DType::kF32;                               // fp32, fp16, bf16
  // The fused TBE optimiser; learning_rate is the base rate the schedule scales.
  embedding::OptimizerParams optimizer;
};

struct DenseOptimizerConfig {
  DenseOptimizerKind kind = DenseOptimizerKind::kSgd;
  float learning_rate = 0.01f;  // base rate the schedule scales
  float eps = 1e-8f;            // Adagrad, Adam
  float beta1 = 0.9f;           // Adam
  float beta2 = 0.999f;         // Adam
  float weight_decay = 0.0f;    // L2: adds weight_decay * w to the gradient
};

/// MLPerf DLRMv2's LRPolicyScheduler: linear warm-up from 0 over warmup_steps, constant until
/// decay_start_step, then decay over decay_steps to min_learning_rate (a floor), then constant.
struct LrSchedule {
  std::int64_t warmup_steps = 0;
  std::int64_t decay_start_step = 0;
  std::int64_t decay_steps = 0;  // 0 = no decay
  LrDecayKind decay = LrDecayKind::kNone;
  double decay_power = 2.0;  // kPoly
  double min_learning_rate = 1e-7;
  /// Learning rate at `step` (0-based) for a base rate; pure function, same on every rank.
  double learning_rate(double base_learning_rate, std::int64_t step) const;
};

struct ModelSpec {
  std::string name;
  int num_dense_features = 13;
  std::vector<int> bottom_mlp;  // output widths; the last is D_bottom (ReLU after every layer)
  InteractionKind interaction = InteractionKind::kDot;
  int cross_layers = 3;   // dcnv2
  int cross_rank = 512;   // dcnv2: low rank r of U (width x r) and V (r x width)
  std::vector<int> top_mlp;  // output widths; must end in 1 (the logit; no ReLU on the last)
  DensePrecision precision = DensePrecision::kFp32;
  EmbeddingConfig embedding;
  DenseOptimizerConfig dense_optimizer;
  LrSchedule lr_schedule;
  ActivationCheckpointing activation_checkpointing = ActivationCheckpointing::kOff;

  /// Every rule the model needs; messages name the key path ("top_mlp[4]=2: ...") and the value.
  Status validate() const;

  int num_features() const { return static_cast<int>(embedding.features.size()); }
  /// The longest bag any feature holds (its ids per sample, a fixed count): the TBE problem's
  /// max_bag_length_hint.
  int max_ids_per_sample() const {
    int longest = 0;
    for (const auto& feature : embedding.features) longest = std::max(longest, feature.ids_per_sample);
    return longest;
  }
  int bottom_output_dim() const { return bottom_mlp.empty() ? 0 : bottom_mlp.back(); }
  /// Width of the pooled embeddings: sum over features of their table's dim.
  std::int64_t pooled_embedding_dim() const;
  /// Width of the interaction output fed to the top MLP: dot: D_bottom + (F+1)F/2;
  /// dcnv2: D_bottom + sum of feature dims (the cross net keeps the width).
  std::int64_t interaction_output_dim() const;
  /// Dense (MLP + cross) parameter count: weights and biases.
  std::int64_t dense_parameter_count() const;
  /// Embedding rows over all tables.
  std::int64_t embedding_row_count() const;
  /// The TBE layout of the tables and the feature->table map.
  Result<embedding::TbeLayout> tbe_layout() const;
};

/// Names of the built-in presets: tiny, dlrm-kaggle, dlrm-v2.
std::vector<std::string> preset_names();
/// tiny: 8 small tables, two multi-hot, 13-32-16 / dot / 64-32-1, Adagrad (trains in seconds).
/// dlrm-kaggle: the Criteo Kaggle tables capped at 4M rows, D=128, 13-512-256-128, dot,
///   1024-1024-512-256-1, one-hot, SGD lr 0.1 (torch_dlrm.py).
/// dlrm-v2: MLPerf DLRMv2, 26 tables (204M rows), D=128, multi-hot (214 ids per sample),
///   13-512-256-128, dcnv2 3 layers rank 512, 1024-1024-512-256-1, row-wise Adagrad tables,
///   Adagrad dense, lr 0.005 (fp32 tables + row-wise state = 105 GB).
Result<ModelSpec> preset(std::string_view name);

/// Caps every table at `max_rows` rows (the `--table-cap` override); names keep their order.
void cap_table_rows(ModelSpec& spec, std::int64_t max_rows);

/// Text overrides of a loaded spec, as the commands and bindings give them; empty: the spec's.
struct SpecOverrides {
  std::string precision;  // dense precision: fp32, tf32, bf16
  std::string table_cap;  // cap every table at this many rows (>= 1)
  std::string optimizer;  // sgd, adagrad or adam for the dense part and the tables (row-wise Adagrad)
};

/// Applies the overrides in that order; errors name the setting ("--table-cap: ...").
Status apply_spec_overrides(ModelSpec& spec, const SpecOverrides& overrides);

/// Parses and validates a JSON spec (docs/training.md); `origin` names it in errors.
Result<ModelSpec> parse_spec_json(std::string_view text, std::string_view origin = "spec");
/// Reads a spec file: kNotFound naming the path when absent.
Result<ModelSpec> read_spec_file(const std::filesystem::path& path);
/// A preset name or a path to a JSON spec.
Result<ModelSpec> load_spec(std::string_view preset_or_path);
/// load_spec, then apply_spec_overrides: what every command that takes --model and overrides does.
Result<ModelSpec> load_spec(std::string_view preset_or_path, const SpecOverrides& overrides);
/// The JSON form parse_spec_json reads back to an equal spec (checkpoints store it).
std::string spec_to_json(const ModelSpec& spec);

/// The dataset layout the model reads: num_dense and, per feature, its table's rows and ids per
/// sample (the dataset's "table f" is the model's feature f; shared tables repeat their rows).
data::DatasetSchema dataset_schema(const ModelSpec& spec);

/// Bytes the training state needs at one batch size (docs/training.md, "Memory").
struct MemoryEstimate {
  std::int64_t embedding_weight_bytes = 0;
  std::int64_t embedding_state_bytes = 0;  // fused optimiser state
  std::int64_t dense_weight_bytes = 0;     // fp32 master (+ bf16 copy for bf16 compute)
  std::int64_t dense_grad_bytes = 0;
  std::int64_t dense_state_bytes = 0;
  std::int64_t activation_bytes = 0;  // kept for the backward + gradient buffers, at batch B
  std::int64_t total_bytes() const;
};
MemoryEstimate estimate_memory(const ModelSpec& spec, std::int64_t batch_size);

/// ok, or kOutOfMemory: "<what> does not fit: needs X GB, <device> has Y GB (short by Z GB)".
Status check_fits(const MemoryEstimate& estimate, std::int64_t available_bytes,
                  std::string_view device_description);

}  // namespace parity::model
