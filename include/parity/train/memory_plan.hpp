// The trainer's device memory, listed without allocating: every buffer DlrmModel::create makes
// (name, kind, bytes, with the GPU's column padding; the ReLU bit masks when the fused backward is on) and the workspaces the GPU
// ops allocate on first use (TBE backward sort keys and chunk partials, the GEMM workspace).
// The planner predicts the same figures from its own model (docs/planner.md, "Memory model");
// tests check this list against DlrmModel's real allocations and the planner against this list.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/op.hpp"
#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"

namespace parity::train {

enum class AllocationKind : std::uint8_t {
  kEmbeddingWeights,
  kEmbeddingOptimizer,
  kDenseParameters,  // fp32 master (+ the bf16 shadow)
  kDenseGradients,
  kDenseOptimizer,
  kInputs,           // one staged batch: dense features (+ bf16 copy), indices, offsets, labels
  kActivations,      // layer outputs kept for the backward, ReLU masks, pooled embeddings
  kActivationGradients,
  kWorkspace,        // GPU op workspaces, allocated on first use and kept
};
std::string_view allocation_kind_name(AllocationKind kind);

struct Allocation {
  std::string name;
  AllocationKind kind = AllocationKind::kActivations;
  std::int64_t bytes = 0;
};

struct TrainingMemoryPlan {
  std::vector<Allocation> buffers;     // DlrmModel's own, all made at creation (DlrmModel::buffer_bytes)
  std::vector<Allocation> workspaces;  // GPU only: the ops' workspaces at this batch
  std::int64_t buffer_bytes() const;
  std::int64_t workspace_bytes() const;
  std::int64_t total_bytes() const { return buffer_bytes() + workspace_bytes(); }
  std::int64_t bytes_of(AllocationKind kind) const;  // buffers and workspaces of one kind
};

// The trainer's ReLU backward (DlrmModel::set_fused_drelu): unfused (the default) reads the kept
// outputs; fused keeps a 1-bit mask per element of each ReLU layer that feeds another layer.
enum class ReluBackward : std::uint8_t { kUnfused, kFusedMasks };

// cuBLASLt's workspace cap (the GEMM cache grows its one workspace up to this).
inline constexpr std::int64_t kGemmWorkspaceBytes = std::int64_t{64} << 20;

// What the trainer allocates for `spec` at `batch_size` on `device`. Activation checkpointing
// changes nothing here: the trainer recomputes into the buffers it keeps.
Result<TrainingMemoryPlan> training_memory_plan(const model::ModelSpec& spec, std::int64_t batch_size,
                                                DeviceKind device,
                                                ReluBackward relu_backward = ReluBackward::kUnfused);

}  // namespace parity::train
