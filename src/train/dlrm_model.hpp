// The DLRM-family model the trainer runs (internal): parameters, optimiser state and activations
// in train::Buffer storage, and one training step as a sequence of ops (TBE, linear, interaction,
// loss, optimisers), each chosen through its variant list with the run's ExecutionContext. On a GPU
// the same sequence runs (every op has a GPU variant) and Buffer allocates device memory; the few
// layout steps between ops (the cross net's input concatenation and gradient split) go through
// the device hooks.
//
// Legend: B batch, F features, D bottom output width, P pooled width (sum of feature dims),
// I interaction output width, W cross width (= D + P), R cross rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/core/op.hpp"
#include "parity/data/dataset.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/model/spec.hpp"
#include "parity/nn/linear.hpp"
#include "parity/train/buffer.hpp"

namespace parity::train::detail {

struct LinearSlot {
  std::int64_t in = 0;       // columns of the input buffer (padded to 8 on the GPU)
  std::int64_t fan_in = 0;   // the model's input width: the initialisation bound 1/sqrt(fan_in)
  std::int64_t out = 0;
  nn::Activation activation = nn::Activation::kRelu;
  std::int64_t weight_offset = 0;  // floats into the dense parameter buffer
  std::int64_t bias_offset = 0;
};

struct CrossSlot {
  std::int64_t v_offset = 0;  // R x W
  std::int64_t u_offset = 0;  // W x R
  std::int64_t c_offset = 0;  // W
};

/// A named piece of training state (parameters or optimiser state) for checkpoints.
struct StateBuffer {
  std::string name;
  Buffer* buffer = nullptr;
};

/// The parts of a training step a breakdown reports (step_bench): the TBE forward and backward
/// with its fused update; the MLP GEMMs (with their ReLU backward); the dot interaction or the
/// cross net (its low-rank GEMMs included); the rest (loss, dense optimiser, casts).
enum class StepPhase : std::uint8_t { kEmbeddings, kGemms, kInteraction, kOther };
inline constexpr int kStepPhaseCount = 4;
const char* step_phase_name(StepPhase phase);  // "embeddings", "gemms", "interaction", "other"

/// Told when a training step enters each phase, in stream order (the benchmark records a device
/// event there). The step ends when train_step_staged returns.
class StepPhaseObserver {
 public:
  virtual ~StepPhaseObserver() = default;
  virtual Status enter(StepPhase phase) = 0;
};

/// Distributed training (train/gpu_dist_step.cpp): the pooled embeddings come from tables sharded
/// across ranks, the loss covers the global batch, and the dense gradients are reduced across ranks
/// before the update. When set on a model, its own TBE (and index staging) is skipped and these run
/// in its place, in stream order on the model's device.
class StepExchange {
 public:
  virtual ~StepExchange() = default;
  /// Writes the staged rows' pooled embeddings: pooled is [B][P] in the activation dtype.
  virtual Status forward_pooled(std::int64_t batch_size, void* pooled) = 0;
  /// The loss of the step (mean over the global batch) and d loss / d logit of the B local rows.
  virtual Result<double> loss(std::int64_t batch_size, const void* logits, const float* labels,
                              void* grad_logits) = 0;
  /// d loss / d pooled ([B][P], fp32) is final: back to the tables' owners, their fused update.
  virtual Status backward_pooled(std::int64_t batch_size, const float* grad_pooled, std::int64_t step) = 0;
  /// The dense gradient (count floats) is final: reduce it across ranks, in place.
  virtual Status reduce_dense_gradients(float* grads, std::int64_t count) = 0;
};

class DlrmModel {
 public:
  static Result<DlrmModel> create(const model::ModelSpec& spec, std::int64_t max_batch_size,
                                  const ExecutionContext& context);
  /// Seeded initialisation, independent of the thread count: Linear weights and biases
  /// U(-1/sqrt(in), 1/sqrt(in)) (torch's default), cross V and U Xavier-normal with zero bias
  /// (torchrec), embedding rows U(-1/sqrt(rows), 1/sqrt(rows)) (DLRM); optimiser state zero.
  Status initialize(std::uint64_t seed);

  /// Forward only (evaluation): logits() holds B values afterwards.
  Status forward(const data::Batch& batch);
  /// Host memory on every device (a GPU run copies the logits back in forward()).
  const float* logits() const;
  /// Forward, BCE loss, backward, then the embedding (fused in the TBE backward) and dense
  /// updates at the schedule's learning rate for `step` (0-based). Returns the batch's mean loss.
  Result<double> train_step(const data::Batch& batch, std::int64_t step);
  /// Copies a batch into the model's input buffers (host to device on a GPU run).
  Status stage_inputs(const data::Batch& batch);
  /// train_step on the batch staged last (benchmarks: the batch stays resident on the device).
  Result<double> train_step_staged(std::int64_t batch_size, std::int64_t step);

  std::vector<StateBuffer> state_buffers();
  /// bf16 runs: recomputes the bf16 copy of the dense weights (after a checkpoint is loaded).
  Status refresh_shadow();
  const model::ModelSpec& spec() const { return spec_; }
  std::int64_t dense_parameter_count() const { return dense_parameters_; }
  /// Bytes of every buffer the model allocated (all at create(), none later): its high-water mark.
  std::int64_t buffer_bytes() const;
  /// Writes the parameters as named fp32 tensors in the checkpoint container (an "index" JSON blob
  /// names each tensor's shape; GPU padding stripped): what a reference implementation loads to
  /// start from the same weights (parameter_export.cpp, docs/training.md).
  Status write_parameter_file(const std::string& path) const;
  /// Null (the default) or an observer of the step's phases; not owned.
  void set_phase_observer(StepPhaseObserver* observer) { observer_ = observer; }
  /// Null (the default: the model's own tables) or the distributed step's exchange; not owned.
  void set_step_exchange(StepExchange* exchange) { exchange_ = exchange; }
  DType activation_dtype() const { return act_dtype_; }
  const ExecutionContext& context() const { return context_; }
  /// Fused dReLU (off by default): ReLU layers feeding another layer write their mask in the
  /// forward epilogue and the next layer's data-gradient GEMM applies it, instead of the separate
  /// ReLU-backward pass. Off is the default because on the H200 the epilogue GEMMs cuBLASLt offers
  /// measured slower than the separate pass (dlrm-kaggle TF32: 12.3 against 9.4 ms per step).
  Status set_fused_drelu(bool fused);

 private:
  Status forward_staged(std::int64_t batch_size);  // forward() on staged inputs, logits left on the device
  Status initialize_tables_on_device(std::uint64_t seed);
  Status forward_dense_blocks(std::int64_t batch_size);
  Status backward(std::int64_t batch_size, std::int64_t step);
  Status backward_interaction(std::int64_t batch_size, void* grad, void* spare, void** grad_bottom);
  Status apply_dense_update(std::int64_t step);
  Status enter(StepPhase phase) const { return observer_ != nullptr ? observer_->enter(phase) : Status::ok(); }
  Status concat_cross_input(std::int64_t batch_size, const void* bottom, const void* pooled, void* x0);
  Status split_cross_input_grad(std::int64_t batch_size, const void* grad_x0, const void* grad_input,
                                void* grad_bottom);
  Status check_device_memory(std::int64_t batch_size) const;
  embedding::TbeProblem tbe_problem(std::int64_t batch_size) const;
  float* params() const { return dense_weights_.as<float>(); }
  /// The dense weights the GEMMs read, element `offset`: the bf16 shadow in bf16 runs, else the
  /// fp32 master weights.
  const void* gemm_params(std::int64_t offset) const {
    return shadow_.size_bytes() > 0 ? static_cast<const void*>(shadow_.as<std::uint16_t>() + offset)
                                    : static_cast<const void*>(params() + offset);
  }
  float* grads() const { return dense_grads_.as<float>(); }

  model::ModelSpec spec_;
  ExecutionContext context_;
  embedding::TbeLayout layout_;
  std::int64_t max_batch_size_ = 0;
  std::int64_t max_indices_ = 0;
  std::int64_t num_indices_ = 0;  // of the staged batch
  std::vector<LinearSlot> bottom_;
  std::vector<CrossSlot> cross_;
  std::vector<LinearSlot> top_;
  std::int64_t dense_parameters_ = 0;

  Buffer dense_weights_, dense_grads_, dense_state1_, dense_state2_;
  Buffer embedding_weights_, embedding_state1_, embedding_state2_;
  Buffer input_dense_, input_indices_, input_offsets_, input_labels_;
  std::vector<Buffer> bottom_outputs_, top_outputs_;
  // Fused dReLU only: ReLU bit masks written by the forward GEMMs of the layers whose output feeds
  // another layer of the same MLP; that layer's data-gradient GEMM applies them. Empty elsewhere.
  std::vector<Buffer> bottom_masks_, top_masks_;
  Buffer pooled_, interaction_;  // interaction_: dot output, or the cross net's x0
  std::vector<Buffer> cross_outputs_, cross_low_, cross_cross_;
  Buffer grad_a_, grad_b_, grad_pre_, grad_pooled_, grad_x0_, scratch_cross_, scratch_low_;
  Buffer grad_logits_;
  // GPU: the dense input and the dot interaction's output are padded to a multiple of 8 columns
  // (zeros), so every GEMM row is 16-byte aligned (TMA kernels); the padded weight columns multiply
  // zeros and get zero gradients. CPU: no padding.
  std::int64_t dense_input_width_ = 0;
  std::int64_t top_input_width_ = 0;
  DType act_dtype_ = DType::kF32;       // activations and their gradients (bf16 runs: kBF16)
  Buffer shadow_;                       // bf16 runs: bf16 copy of dense_weights_
  Buffer input_dense_act_;              // bf16 runs: the dense input cast to bf16
  std::vector<float> padded_dense_;     // GPU: the dense input with its padding columns, on the host
  void* logits_ = nullptr;              // on the model's device, act_dtype_
  std::vector<float> host_logits_;      // GPU runs: the last forward()'s logits
  StepPhaseObserver* observer_ = nullptr;
  StepExchange* exchange_ = nullptr;
};

}  // namespace parity::train::detail
