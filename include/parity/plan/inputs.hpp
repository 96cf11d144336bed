// Planner inputs: the model as the planner sees it (tables, MLP widths, interaction), the machine
// (GPU from the catalogue, number of GPUs and scale-up domains) and the search options.
// Everything here is plain data; the models in cost_model.hpp are pure functions of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/hw/hardware_spec.hpp"
#include "parity/model/spec.hpp"

namespace parity::plan {

enum class InteractionKind : std::uint8_t { kDot, kDcnV2 };
enum class DenseOptimizer : std::uint8_t { kSgd, kAdagrad, kAdam };

// How a table is spread over ranks (TorchRec's taxonomy, minus the host-level variants).
enum class ShardingType : std::uint8_t { kTableWise, kRowWise, kColumnWise, kDataParallel };
// The trainer's activation checkpointing: kFull keeps only each dense block's input (bottom MLP,
// interaction, top MLP) and recomputes the block's forward during backward (spec "on").
enum class Checkpointing : std::uint8_t { kNone, kFull };
// kFp32: exact fp32 GEMMs (SIMT). kTf32: fp32 storage, TF32 tensor-core GEMMs. kBf16: bf16 dense
// compute and activations, fp32 master weights and gradients, fp32 tables, bf16 embedding
// communication. kBf16Fp16Tables: kBf16 with fp16 table weights (fp32 optimiser state).
enum class Precision : std::uint8_t { kFp32, kTf32, kBf16, kBf16Fp16Tables };

std::string_view sharding_type_name(ShardingType type);    // table_wise, row_wise, ...
std::string_view checkpointing_name(Checkpointing policy);  // none, full
std::string_view precision_name(Precision precision);       // fp32, tf32, bf16, bf16_fp16tables
std::string_view interaction_name(InteractionKind kind);    // dot, dcnv2
Result<ShardingType> parse_sharding_type(std::string_view text);
Result<Checkpointing> parse_checkpointing(std::string_view text);
Result<Precision> parse_precision(std::string_view text);

struct PrecisionBytes {
  int activation = 4;  // dense activations and activation gradients
  int table = 4;       // embedding weights
  int comm = 4;        // pooled embeddings and their gradients on the wire
  DType gemm_dtype = DType::kF32;  // the GEMM model's operand type (kF32 = TF32)
  bool is_simt_fp32 = false;       // exact fp32: priced on the vector FP32 rate, not the model
};
PrecisionBytes precision_bytes(Precision precision);

struct PlannerTable {
  std::string name;
  std::int64_t rows = 0;
  int dim = 0;
  double ids_per_sample = 1.0;  // mean lookups per sample, summed over the features reading it
  int features = 1;             // features (pooled outputs) that read this table
};

// The DLRM the planner prices, flattened from the trainer's model::ModelSpec (spec_adapter.hpp).
// Widths are layer outputs; the bottom MLP's input is `dense_features`; the dot interaction needs
// every table's dim equal to the bottom MLP's output.
struct PlannerModel {
  std::string name;
  std::vector<PlannerTable> tables;
  int dense_features = 13;
  std::vector<int> bottom_mlp;
  std::vector<int> top_mlp;
  InteractionKind interaction = InteractionKind::kDot;
  int cross_layers = 0;  // DCNv2 only
  int cross_rank = 0;    // DCNv2 low-rank r
  embedding::OptimizerKind table_optimizer = embedding::OptimizerKind::kRowwiseAdagrad;
  DenseOptimizer dense_optimizer = DenseOptimizer::kAdagrad;
  Precision precision = Precision::kFp32;  // the model's own default
  Checkpointing checkpointing = Checkpointing::kNone;
  std::int64_t default_global_batch = 0;  // 0: none given

  // Sizes > 0, dims TBE can run (multiples of 4 up to 2048), top MLP ends in 1, dot: dims equal
  // the bottom MLP output, DCNv2 has layers and a rank. Messages name the field and value.
  Status validate() const;
  int num_features() const;               // pooled outputs (F)
  std::int64_t pooled_width() const;      // sum over features of their table's dim
  // Width of the interaction output (= top MLP input): dot D + (F+1)F/2, dcnv2 D + pooled.
  std::int64_t interaction_output_width() const;
  std::int64_t dense_parameter_count() const;
};

// The planner's view of the trainer's model: tables with the summed ids of the features reading
// them, widths, interaction, optimisers, and the spec's precision and checkpointing.
Result<PlannerModel> planner_model_from_spec(const model::ModelSpec& spec);
// Writes a plan's precision and checkpointing into a spec (what `parity train --plan` applies
// besides the placement): dense precision, table weight dtype, activation checkpointing.
void apply_precision_and_checkpointing(Precision precision, Checkpointing checkpointing,
                                       model::ModelSpec& spec);

// A machine: `num_gpus` GPUs of one catalogue type in `num_nodes` scale-up domains ("nodes":
// an 8-GPU HGX/MI3xx board, or a whole NVL72 rack for GB200) joined by per-GPU NICs.
struct Machine {
  hw::HardwareSpec gpu;
  int num_gpus = 0;
  int num_nodes = 0;
  int gpus_per_node() const { return num_nodes > 0 ? num_gpus / num_nodes : 0; }
};
// `num_nodes` 0 picks the fewest domains that hold the GPUs. Errors: zero GPUs, GPUs not
// divisible by nodes, more GPUs per node than the scale-up domain holds.
Result<Machine> make_machine(const hw::HardwareSpec& gpu, int num_gpus, int num_nodes);

struct PlanOptions {
  // Global batch candidates: every power-of-two multiple of the ranks in [min, max] (a single
  // value when min == max). Must be divisible by the ranks.
  std::int64_t min_global_batch = 0;
  std::int64_t max_global_batch = 0;
  std::vector<Checkpointing> checkpointing{Checkpointing::kNone, Checkpointing::kFull};
  std::vector<Precision> precisions{Precision::kTf32, Precision::kBf16};
  std::vector<ShardingType> sharding_types{ShardingType::kTableWise, ShardingType::kRowWise,
                                           ShardingType::kColumnWise, ShardingType::kDataParallel};
  int local_search_passes = 4;  // improvement passes per configuration (each is deterministic)
  Status validate(const Machine& machine) const;
};

}  // namespace parity::plan
