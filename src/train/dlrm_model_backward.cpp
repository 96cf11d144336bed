// DlrmModel backward: top MLP, interaction, bottom MLP, then the fused TBE update and the dense
// optimiser step. Gradients flow through two ping-pong buffers (grad_a_, grad_b_).
#include <algorithm>
#include <cstring>
#include <utility>

#include "core/device_hooks.hpp"
#include "parity/embedding/tbe_op.hpp"
#include "parity/nn/interaction.hpp"
#include "parity/nn/optimizer.hpp"
#include "nn/variant_support.hpp"
#include "train/dlrm_model.hpp"

namespace parity::train::detail {

namespace {
constexpr std::int64_t kFloat = 4;
}

Status DlrmModel::backward(std::int64_t batch_size, std::int64_t step) {
  if (spec_.activation_checkpointing == model::ActivationCheckpointing::kOn) {
    // Recompute the MLP and cross activations from the block inputs (the pooled embeddings and
    // the dense input are kept); the ops are deterministic, so the values equal the forward's.
    PARITY_RETURN_IF_ERROR(forward_dense_blocks(batch_size));
  }
  // Every gradient GEMM overwrites its block (beta = 0); padding stays zero from initialize().
  const nn::MathMode math = spec_.precision == model::DensePrecision::kTf32 ? nn::MathMode::kTf32
                                                                            : nn::MathMode::kFp32;
  // Ping-pong: a layer's input gradient goes to whichever of grad_a_ / grad_b_ its output
  // gradient is not in.
  const auto other = [this](const void* buffer) { return buffer == grad_a_.data() ? grad_b_.data() : grad_a_.data(); };
  void* grad = grad_logits_.data();  // B x 1: the top MLP's output gradient
  // A layer whose input is the previous layer's ReLU output hands that layer's mask to its
  // data-gradient GEMM (fused dReLU); the previous layer then gets d pre-activation directly.
  const auto run_mlp_backward = [&](const std::vector<LinearSlot>& slots, std::vector<Buffer>& outputs,
                                    const std::vector<Buffer>& masks, const void* input,
                                    bool needs_input_grad) -> Status {
    PARITY_RETURN_IF_ERROR(enter(StepPhase::kGemms));
    bool grad_is_preactivation = false;
    for (std::size_t l = slots.size(); l-- > 0;) {
      const auto& slot = slots[l];
      const nn::LinearProblem problem{batch_size, slot.in, slot.out, slot.activation,
                                      nn::BiasMode::kBias, act_dtype_, math};
      nn::LinearBackwardArgs args;
      args.input = l == 0 ? input : outputs[l - 1].data();
      args.weight = gemm_params(slot.weight_offset);
      args.output = outputs[l].data();
      args.grad_output = grad;
      args.grad_input = (l > 0 || needs_input_grad) ? other(grad) : nullptr;
      args.grad_weight = grads() + slot.weight_offset;
      args.grad_bias = grads() + slot.bias_offset;
      args.grad_preactivation = grad_pre_.data();
      args.grad_output_is_preactivation = grad_is_preactivation;
      args.input_relu_mask = l > 0 && args.grad_input != nullptr && masks[l - 1].size_bytes() > 0
                                 ? masks[l - 1].data() : nullptr;
      PARITY_RETURN_IF_ERROR(nn::linear_backward(problem, args, context_));
      if (args.grad_input != nullptr) grad = args.grad_input;
      grad_is_preactivation = args.input_relu_mask != nullptr;
    }
    return Status::ok();
  };
  const void* top_input = cross_.empty() ? interaction_.data() : cross_outputs_.back().data();
  PARITY_RETURN_IF_ERROR(run_mlp_backward(top_, top_outputs_, top_masks_, top_input, true));
  // grad: d loss / d top input (B x I).
  void* grad_bottom = nullptr;
  PARITY_RETURN_IF_ERROR(enter(StepPhase::kInteraction));
  PARITY_RETURN_IF_ERROR(backward_interaction(batch_size, grad, other(grad), &grad_bottom));
  grad = grad_bottom;
  const void* dense_input = input_dense_act_.size_bytes() > 0 ? input_dense_act_.data() : input_dense_.data();
  PARITY_RETURN_IF_ERROR(run_mlp_backward(bottom_, bottom_outputs_, bottom_masks_, dense_input, false));

  embedding::OptimizerParams optimizer = spec_.embedding.optimizer;
  optimizer.learning_rate = static_cast<float>(
      spec_.lr_schedule.learning_rate(spec_.embedding.optimizer.learning_rate, step));
  optimizer.step = step + 1;
  embedding::TbeBackwardArgs tbe_args;
  tbe_args.optimizer = optimizer;
  tbe_args.weights = embedding_weights_.data();
  tbe_args.state1 = embedding_state1_.as<float>();
  tbe_args.state2 = embedding_state2_.as<float>();
  tbe_args.batch = embedding::TbeBatchView{input_indices_.data(), input_offsets_.data(), nullptr};
  tbe_args.grad_output = grad_pooled_.as<float>();
  PARITY_RETURN_IF_ERROR(enter(StepPhase::kEmbeddings));
  if (exchange_ != nullptr) {
    PARITY_RETURN_IF_ERROR(exchange_->backward_pooled(batch_size, grad_pooled_.as<float>(), step));
  } else {
    PARITY_RETURN_IF_ERROR(embedding::tbe_backward_fused(tbe_problem(batch_size), tbe_args, context_));
  }
  PARITY_RETURN_IF_ERROR(enter(StepPhase::kOther));
  if (exchange_ != nullptr) PARITY_RETURN_IF_ERROR(exchange_->reduce_dense_gradients(grads(), dense_parameters_));
  return apply_dense_update(step);
}

Status DlrmModel::backward_interaction(std::int64_t batch_size, void* grad_untyped, void* spare_untyped,
                                       void** grad_bottom) {
  const std::int64_t dim = spec_.bottom_output_dim();
  if (cross_.empty()) {
    const nn::DotInteractionProblem problem{batch_size, spec_.num_features(), dim, act_dtype_,
                                            top_input_width_ == spec_.interaction_output_dim() ? 0 : top_input_width_};
    PARITY_RETURN_IF_ERROR(nn::dot_interaction_backward(
        problem, {bottom_outputs_.back().data(), pooled_.data(), grad_untyped, spare_untyped, grad_pooled_.as<float>()},
        context_));
    *grad_bottom = spare_untyped;
    return Status::ok();
  }
  void* grad = grad_untyped;
  void* spare = spare_untyped;
  const nn::MathMode math = spec_.precision == model::DensePrecision::kTf32 ? nn::MathMode::kTf32
                                                                            : nn::MathMode::kFp32;
  const std::int64_t width = dim + layout_.total_output_dim();
  const nn::CrossLayerProblem problem{batch_size, width, spec_.cross_rank, act_dtype_, math};
  for (std::size_t l = cross_.size(); l-- > 0;) {
    const auto& slot = cross_[l];
    nn::CrossLayerBackwardArgs args{interaction_.data(),
                                    l == 0 ? interaction_.data() : cross_outputs_[l - 1].data(),
                                    gemm_params(slot.v_offset), gemm_params(slot.u_offset),
                                    cross_low_[l].data(), cross_cross_[l].data(), grad,
                                    grad_x0_.data(), spare, grads() + slot.v_offset,
                                    grads() + slot.u_offset, grads() + slot.c_offset,
                                    scratch_cross_.data(), scratch_low_.data()};
    args.accumulate_grad_x0 = l + 1 < cross_.size();  // the last layer, visited first, starts the sum
    PARITY_RETURN_IF_ERROR(nn::cross_layer_backward(problem, args, context_));
    std::swap(grad, spare);
  }
  // x0 feeds layer 0 as its input too: its total gradient is grad_x0 + layer 0's input gradient.
  PARITY_RETURN_IF_ERROR(split_cross_input_grad(batch_size, grad_x0_.data(), grad, spare));
  *grad_bottom = spare;
  return Status::ok();
}

// grad_x0 + grad_input split into the bottom output's columns (grad_bottom, activation dtype) and
// the pooled embeddings' columns (grad_pooled_, fp32: the TBE backward's input).
Status DlrmModel::split_cross_input_grad(std::int64_t batch_size, const void* grad_x0, const void* grad_input,
                                         void* grad_bottom) {
  const std::int64_t dim = spec_.bottom_output_dim(), pooled = layout_.total_output_dim();
  const std::int64_t width = dim + pooled;
  if (context_.device == DeviceKind::kGpu) {
    PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("cross net gradient"));
    return hooks->add_split_columns(grad_x0, grad_input, act_dtype_, batch_size, dim, pooled, grad_bottom,
                                    grad_pooled_.as<float>(), context_.stream);
  }
  const auto* x0_grad = static_cast<const float*>(grad_x0);
  const auto* input_grad = static_cast<const float*>(grad_input);
  auto* bottom_grad = static_cast<float*>(grad_bottom);
  float* pooled_grad = grad_pooled_.as<float>();
#pragma omp parallel for schedule(static) if (batch_size * width >= nn::detail::kParallelMinElements)
  for (std::int64_t b = 0; b < batch_size; ++b) {
    for (std::int64_t c = 0; c < dim; ++c) bottom_grad[b * dim + c] = x0_grad[b * width + c] + input_grad[b * width + c];
    for (std::int64_t c = 0; c < pooled; ++c) {
      pooled_grad[b * pooled + c] = x0_grad[b * width + dim + c] + input_grad[b * width + dim + c];
    }
  }
  return Status::ok();
}

Status DlrmModel::apply_dense_update(std::int64_t step) {
  const auto& config = spec_.dense_optimizer;
  nn::DenseOptimizerProblem problem;
  problem.num_elements = dense_parameters_;
  problem.kind = config.kind;
  problem.learning_rate = static_cast<float>(spec_.lr_schedule.learning_rate(config.learning_rate, step));
  problem.eps = config.eps;
  problem.beta1 = config.beta1;
  problem.beta2 = config.beta2;
  problem.weight_decay = config.weight_decay;
  problem.step = step + 1;
  return nn::dense_optimizer_step(
      problem, {params(), grads(), dense_state1_.as<float>(), dense_state2_.as<float>(),
                shadow_.size_bytes() > 0 ? shadow_.data() : nullptr, DType::kBF16},
      context_);
}

std::vector<StateBuffer> DlrmModel::state_buffers() {
  return {{"dense.weights", &dense_weights_},         {"dense.state1", &dense_state1_},
          {"dense.state2", &dense_state2_},           {"embedding.weights", &embedding_weights_},
          {"embedding.state1", &embedding_state1_},   {"embedding.state2", &embedding_state2_}};
}

}  // namespace parity::train::detail
