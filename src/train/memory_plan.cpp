// The trainer's allocation list (include/parity/train/memory_plan.hpp). Mirrors DlrmModel::create
// buffer by buffer; TrainMemoryPlan.MatchesTheModelsAllocations checks the sum against the model's
// real buffers, so a change to one without the other fails a test.
#include "parity/train/memory_plan.hpp"

#include <algorithm>

#include "parity/core/dtype.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/nn/optimizer.hpp"

namespace parity::train {
namespace {

constexpr std::int64_t kFloatBytes = 4;
std::int64_t align16(std::int64_t count) { return (count + 15) / 16 * 16; }  // parameter blocks
std::int64_t align256(std::int64_t bytes) { return (bytes + 255) / 256 * 256; }  // workspace regions
std::int64_t pad8(bool pad, std::int64_t columns) { return pad ? (columns + 7) / 8 * 8 : columns; }

// Floats in the flat dense parameter buffer: each weight and bias block 16-float aligned, the
// first layer of each MLP as wide as its (padded) input buffer.
std::int64_t padded_dense_parameters(const model::ModelSpec& spec, std::int64_t dense_input_width,
                                     std::int64_t top_input_width) {
  std::int64_t floats = 0;
  const auto mlp = [&floats](std::int64_t in, const std::vector<int>& widths) {
    for (const int out : widths) {
      floats += align16(in * out) + align16(out);
      in = out;
    }
  };
  mlp(dense_input_width, spec.bottom_mlp);
  if (spec.interaction == model::InteractionKind::kDcnV2) {
    const std::int64_t width = spec.interaction_output_dim();
    floats += spec.cross_layers * (2 * align16(spec.cross_rank * width) + align16(width));
  }
  mlp(top_input_width, spec.top_mlp);
  return floats;
}

// The TBE backward's workspace (src/backends/gpu/embedding/backward.cu, plan_backward): two
// 8-byte sort-key arrays, the chunk partials of runs crossing chunk boundaries (2 rows of max_dim
// floats and 16 bytes per chunk of embedding::tbe_backward_chunk_positions, the default short
// length); the radix-sort digit counts (2 KiB per tile: 0.5 B per key, 2 B per key in the 1K-key
// tiles of sorts of at most 2^20 keys, i.e. at most 2 MiB there) are left out.
std::int64_t tbe_backward_workspace_bytes(const embedding::TbeLayout& layout, std::int64_t num_indices) {
  const std::int64_t max_dim = layout.max_dim();
  const std::int64_t chunk_positions =
      embedding::tbe_backward_chunk_positions(num_indices, static_cast<int>(max_dim), embedding::BackwardChunkLength::kShort);
  const std::int64_t chunks = (num_indices + chunk_positions - 1) / chunk_positions;
  return 2 * align256(8 * num_indices) + align256(chunks * 2 * max_dim * kFloatBytes) +
         2 * align256(chunks * 2 * 8);
}

}  // namespace

std::string_view allocation_kind_name(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kEmbeddingWeights: return "embedding_weights";
    case AllocationKind::kEmbeddingOptimizer: return "embedding_optimizer";
    case AllocationKind::kDenseParameters: return "dense_parameters";
    case AllocationKind::kDenseGradients: return "dense_gradients";
    case AllocationKind::kDenseOptimizer: return "dense_optimizer";
    case AllocationKind::kInputs: return "inputs";
    case AllocationKind::kActivations: return "activations";
    case AllocationKind::kActivationGradients: return "activation_gradients";
    case AllocationKind::kWorkspace: return "workspace";
  }
  return "unknown";
}

std::int64_t TrainingMemoryPlan::buffer_bytes() const {
  std::int64_t total = 0;
  for (const Allocation& allocation : buffers) total += allocation.bytes;
  return total;
}

std::int64_t TrainingMemoryPlan::workspace_bytes() const {
  std::int64_t total = 0;
  for (const Allocation& allocation : workspaces) total += allocation.bytes;
  return total;
}

std::int64_t TrainingMemoryPlan::bytes_of(AllocationKind kind) const {
  std::int64_t total = 0;
  for (const auto* list : {&buffers, &workspaces}) {
    for (const Allocation& allocation : *list) total += allocation.kind == kind ? allocation.bytes : 0;
  }
  return total;
}

Result<TrainingMemoryPlan> training_memory_plan(const model::ModelSpec& spec, std::int64_t batch_size,
                                                DeviceKind device, ReluBackward relu_backward) {
  PARITY_RETURN_IF_ERROR(spec.validate());
  PARITY_CHECK_ARG(batch_size >= 1, "batch: ", batch_size, " must be >= 1");
  PARITY_ASSIGN_OR_RETURN(const embedding::TbeLayout layout, spec.tbe_layout());
  const bool on_gpu = device == DeviceKind::kGpu;
  const bool is_dcn = spec.interaction == model::InteractionKind::kDcnV2;
  const std::int64_t act = spec.precision == model::DensePrecision::kBf16 ? 2 : kFloatBytes;
  const std::int64_t b = batch_size;
  // GPU: the dense input, and the dot interaction's output, padded to 8 columns (13 -> 16, 479 -> 480).
  const std::int64_t dense_input_width = pad8(on_gpu, spec.num_dense_features);
  const std::int64_t width = spec.interaction_output_dim();
  const std::int64_t top_input_width = pad8(on_gpu && !is_dcn, width);
  const std::int64_t parameters = padded_dense_parameters(spec, dense_input_width, top_input_width);
  const int dense_states = nn::dense_optimizer_state_buffers(spec.dense_optimizer.kind);

  TrainingMemoryPlan plan;
  auto& list = plan.buffers;
  const auto add = [&list](std::string name, AllocationKind kind, std::int64_t bytes) {
    list.push_back({std::move(name), kind, bytes});
  };
  add("dense weights", AllocationKind::kDenseParameters, parameters * kFloatBytes);
  add("dense gradients", AllocationKind::kDenseGradients, parameters * kFloatBytes);
  if (act == 2) {
    add("bf16 dense weights", AllocationKind::kDenseParameters, parameters * 2);
    add("bf16 dense input", AllocationKind::kInputs, b * dense_input_width * 2);
  }
  add("dense state1", AllocationKind::kDenseOptimizer, dense_states >= 1 ? parameters * kFloatBytes : 0);
  add("dense state2", AllocationKind::kDenseOptimizer, dense_states >= 2 ? parameters * kFloatBytes : 0);
  const auto optimizer = spec.embedding.optimizer.kind;
  add("embedding weights", AllocationKind::kEmbeddingWeights,
      layout.total_weight_elements() * static_cast<std::int64_t>(dtype_size_bytes(spec.embedding.weight_dtype)));
  add("embedding state1", AllocationKind::kEmbeddingOptimizer,
      embedding::optimizer_state1_elements(layout, optimizer) * kFloatBytes);
  add("embedding state2", AllocationKind::kEmbeddingOptimizer,
      embedding::optimizer_state2_elements(layout, optimizer) * kFloatBytes);

  std::int64_t ids_per_sample = 0;
  for (const auto& feature : spec.embedding.features) ids_per_sample += feature.ids_per_sample;
  add("dense input", AllocationKind::kInputs, b * dense_input_width * kFloatBytes);
  add("indices", AllocationKind::kInputs, b * ids_per_sample * 8);
  add("offsets", AllocationKind::kInputs, (b * spec.num_features() + 1) * 8);
  add("labels", AllocationKind::kInputs, b * kFloatBytes);

  std::int64_t widest = std::max(dense_input_width, top_input_width);
  const auto outputs = [&](const std::vector<int>& widths, const char* what) {
    for (std::size_t l = 0; l < widths.size(); ++l) {
      add(what, AllocationKind::kActivations, b * widths[l] * act);
      // Fused ReLU backward: bit masks of the layers feeding another layer of the same MLP (every
      // one but the last has a ReLU), columns padded to 128 bits.
      const bool has_mask = relu_backward == ReluBackward::kFusedMasks && l + 1 < widths.size();
      if (has_mask) add("ReLU masks", AllocationKind::kActivations, b * ((widths[l] + 127) / 128 * 16));
      widest = std::max<std::int64_t>(widest, widths[l]);
    }
  };
  outputs(spec.bottom_mlp, "bottom activations");
  outputs(spec.top_mlp, "top activations");
  for (int l = 0; is_dcn && l < spec.cross_layers; ++l) {
    add("cross outputs", AllocationKind::kActivations, b * width * act);
    add("cross low", AllocationKind::kActivations, b * spec.cross_rank * act);
    add("cross products", AllocationKind::kActivations, b * width * act);
  }
  const std::int64_t pooled = layout.total_output_dim();
  add("pooled embeddings", AllocationKind::kActivations, b * pooled * act);
  add("interaction", AllocationKind::kActivations, b * top_input_width * act);
  for (int g = 0; g < 3; ++g) add("gradients", AllocationKind::kActivationGradients, b * widest * act);
  add("embedding gradients", AllocationKind::kActivationGradients, b * pooled * kFloatBytes);
  const std::int64_t cross_rows = is_dcn ? b : 0;
  add("cross x0 gradient", AllocationKind::kActivationGradients, cross_rows * width * act);
  add("cross scratch", AllocationKind::kActivationGradients, cross_rows * width * act);
  add("cross scratch", AllocationKind::kActivationGradients, cross_rows * spec.cross_rank * act);
  add("logit gradients", AllocationKind::kActivationGradients, b * act);

  if (on_gpu) {
    plan.workspaces.push_back({"tbe backward workspace", AllocationKind::kWorkspace,
                               tbe_backward_workspace_bytes(layout, b * ids_per_sample)});
    plan.workspaces.push_back({"gemm workspace", AllocationKind::kWorkspace, kGemmWorkspaceBytes});
  }
  return plan;
}

}  // namespace parity::train
