// DenseReplica: the replicated dense part of the distributed trainer (see dist_dense.hpp). The op
// sequence is the single-rank model's (nn::linear_*, nn::dot_interaction_*, the dense optimiser),
// so one replica over the whole batch gives that model's bits.
#include "train/dist_dense.hpp"

#include <algorithm>

#include "parity/nn/interaction.hpp"
#include "parity/nn/optimizer.hpp"

namespace parity::train::detail {

namespace {
// Parameter blocks start on 64-byte boundaries (16 floats), as in the single-rank model.
std::int64_t align16(std::int64_t count) { return (count + 15) / 16 * 16; }
std::size_t size(std::int64_t count) { return static_cast<std::size_t>(count); }
}  // namespace

Result<DenseReplica> DenseReplica::create(const model::ModelSpec& spec, std::int64_t max_rows,
                                          const ExecutionContext& context) {
  PARITY_RETURN_IF_ERROR(spec.validate());
  if (spec.interaction != model::InteractionKind::kDot) {
    return unsupported("interaction: the distributed trainer runs the dot interaction only (this model has ",
                       model::interaction_kind_name(spec.interaction), ")");
  }
  if (spec.precision == model::DensePrecision::kBf16 || context.device != DeviceKind::kCpu) {
    return unsupported("device: the distributed trainer runs fp32/tf32 on CPU ranks only");
  }
  DenseReplica replica;
  replica.spec_ = spec;
  replica.context_ = context;
  replica.max_rows_ = max_rows;
  std::int64_t offset = 0;
  const auto add_mlp = [&](std::int64_t in, const std::vector<int>& widths, bool relu_on_last,
                           std::vector<Layer>* layers) {
    for (std::size_t l = 0; l < widths.size(); ++l) {
      Layer layer;
      layer.in = in;
      layer.out = widths[l];
      layer.activation = (l + 1 < widths.size() || relu_on_last) ? nn::Activation::kRelu : nn::Activation::kNone;
      layer.weight_offset = offset;
      offset += align16(layer.in * layer.out);
      layer.bias_offset = offset;
      offset += align16(layer.out);
      layers->push_back(layer);
      in = layer.out;
    }
  };
  add_mlp(spec.num_dense_features, spec.bottom_mlp, true, &replica.bottom_);
  const std::int64_t interaction_width = spec.interaction_output_dim();
  add_mlp(interaction_width, spec.top_mlp, false, &replica.top_);
  replica.parameter_count_ = offset;
  const int states = nn::dense_optimizer_state_buffers(spec.dense_optimizer.kind);
  replica.parameters_.assign(size(offset), 0.0f);
  replica.state1_.assign(states >= 1 ? size(offset) : 0, 0.0f);
  replica.state2_.assign(states >= 2 ? size(offset) : 0, 0.0f);
  std::int64_t widest = std::max<std::int64_t>(spec.num_dense_features, interaction_width);
  for (auto* layers : {&replica.bottom_, &replica.top_}) {
    auto& outputs = layers == &replica.bottom_ ? replica.bottom_outputs_ : replica.top_outputs_;
    for (const auto& layer : *layers) {
      outputs.emplace_back(size(max_rows * layer.out));
      widest = std::max(widest, layer.out);
    }
  }
  replica.interaction_.assign(size(max_rows * interaction_width), 0.0f);
  for (auto* scratch : {&replica.grad_a_, &replica.grad_b_, &replica.grad_pre_}) {
    scratch->assign(size(max_rows * widest), 0.0f);
  }
  return replica;
}

Status DenseReplica::forward(const float* dense, const float* pooled, std::int64_t rows, std::int64_t chunk_rows) {
  PARITY_CHECK_ARG(rows >= 1 && rows <= max_rows_, "rows: ", rows, " is out of range [1, ", max_rows_, "]");
  PARITY_CHECK_ARG(chunk_rows >= 1, "chunk_rows: ", chunk_rows, " is out of range [1, ...]");
  dense_input_ = dense;
  pooled_ = pooled;
  for (std::int64_t begin = 0; begin < rows; begin += chunk_rows) {
    PARITY_RETURN_IF_ERROR(forward_rows(begin, std::min(chunk_rows, rows - begin)));
  }
  return Status::ok();
}

Status DenseReplica::forward_rows(std::int64_t begin, std::int64_t count) {
  const nn::MathMode math = spec_.precision == model::DensePrecision::kTf32 ? nn::MathMode::kTf32
                                                                            : nn::MathMode::kFp32;
  const auto run_mlp = [&](const std::vector<Layer>& layers, std::vector<std::vector<float>>& outputs,
                           const float* input, std::int64_t input_width) -> Status {
    input += begin * input_width;
    for (std::size_t l = 0; l < layers.size(); ++l) {
      const auto& layer = layers[l];
      const nn::LinearProblem problem{count, layer.in, layer.out, layer.activation, nn::BiasMode::kBias,
                                      DType::kF32, math};
      float* output = outputs[l].data() + begin * layer.out;
      PARITY_RETURN_IF_ERROR(nn::linear_forward(problem,
                                                {input, parameters_.data() + layer.weight_offset,
                                                 parameters_.data() + layer.bias_offset, output},
                                                context_));
      input = output;
    }
    return Status::ok();
  };
  PARITY_RETURN_IF_ERROR(run_mlp(bottom_, bottom_outputs_, dense_input_, spec_.num_dense_features));
  const std::int64_t dim = spec_.bottom_output_dim(), width = spec_.interaction_output_dim();
  const nn::DotInteractionProblem problem{count, spec_.num_features(), dim, DType::kF32, 0};
  PARITY_RETURN_IF_ERROR(nn::dot_interaction_forward(
      problem, {bottom_outputs_.back().data() + begin * dim, pooled_ + begin * spec_.pooled_embedding_dim(),
                interaction_.data() + begin * width},
      context_));
  return run_mlp(top_, top_outputs_, interaction_.data(), width);
}

// One MLP's backward over rows [begin, begin + count): *grad holds d loss / d output of the last
// layer (count rows) when called and d loss / d input of the first when it returns (when needed).
Status DenseReplica::backward_mlp(const std::vector<Layer>& layers, std::vector<std::vector<float>>& outputs,
                                  const float* input, std::int64_t begin, std::int64_t count,
                                  bool needs_input_grad, float* grads, const float** grad,
                                  const ReadyCallback& on_ready) {
  const nn::MathMode math = spec_.precision == model::DensePrecision::kTf32 ? nn::MathMode::kTf32
                                                                            : nn::MathMode::kFp32;
  for (std::size_t l = layers.size(); l-- > 0;) {
    const auto& layer = layers[l];
    const nn::LinearProblem problem{count, layer.in, layer.out, layer.activation, nn::BiasMode::kBias,
                                    DType::kF32, math};
    float* grad_input = *grad == grad_a_.data() ? grad_b_.data() : grad_a_.data();
    nn::LinearBackwardArgs args;
    args.input = (l == 0 ? input : outputs[l - 1].data()) + begin * layer.in;
    args.weight = parameters_.data() + layer.weight_offset;
    args.output = outputs[l].data() + begin * layer.out;
    args.grad_output = *grad;
    args.grad_input = (l > 0 || needs_input_grad) ? grad_input : nullptr;
    args.grad_weight = grads + layer.weight_offset;
    args.grad_bias = grads + layer.bias_offset;
    args.grad_preactivation = grad_pre_.data();
    PARITY_RETURN_IF_ERROR(nn::linear_backward(problem, args, context_));
    if (args.grad_input != nullptr) *grad = grad_input;
    if (on_ready) PARITY_RETURN_IF_ERROR(on_ready(layer.weight_offset));
  }
  return Status::ok();
}

std::vector<std::int64_t> DenseReplica::layer_offsets_in_backward_order() const {
  std::vector<std::int64_t> offsets;
  for (const auto* layers : {&top_, &bottom_}) {
    for (auto layer = layers->rbegin(); layer != layers->rend(); ++layer) offsets.push_back(layer->weight_offset);
  }
  return offsets;
}

Status DenseReplica::backward_rows(const float* grad_logits, std::int64_t begin, std::int64_t count,
                                   float* grads, float* grad_pooled, const ReadyCallback& on_ready) {
  PARITY_CHECK_ARG(begin >= 0 && count >= 1 && begin + count <= max_rows_, "rows: [", begin, ", ",
                   begin + count, ") is outside [0, ", max_rows_, ")");
  // Alignment padding between blocks stays zero (every block is overwritten).
  std::fill(grads, grads + parameter_count_, 0.0f);
  const float* grad = grad_logits;
  PARITY_RETURN_IF_ERROR(backward_mlp(top_, top_outputs_, interaction_.data(), begin, count, true, grads, &grad, on_ready));
  // grad: d loss / d interaction output (count x I).
  const std::int64_t dim = spec_.bottom_output_dim(), pooled_width = spec_.pooled_embedding_dim();
  float* grad_bottom = grad == grad_a_.data() ? grad_b_.data() : grad_a_.data();
  const nn::DotInteractionProblem problem{count, spec_.num_features(), dim, DType::kF32, 0};
  PARITY_RETURN_IF_ERROR(nn::dot_interaction_backward(
      problem, {bottom_outputs_.back().data() + begin * dim, pooled_ + begin * pooled_width, grad, grad_bottom,
                grad_pooled + begin * pooled_width},
      context_));
  grad = grad_bottom;
  return backward_mlp(bottom_, bottom_outputs_, dense_input_, begin, count, false, grads, &grad, on_ready);
}

Status DenseReplica::apply_update(const float* grads, std::int64_t step) {
  const auto& config = spec_.dense_optimizer;
  nn::DenseOptimizerProblem problem;
  problem.num_elements = parameter_count_;
  problem.kind = config.kind;
  problem.learning_rate = static_cast<float>(spec_.lr_schedule.learning_rate(config.learning_rate, step));
  problem.eps = config.eps;
  problem.beta1 = config.beta1;
  problem.beta2 = config.beta2;
  problem.weight_decay = config.weight_decay;
  problem.step = step + 1;
  return nn::dense_optimizer_step(problem,
                                  {parameters_.data(), grads, state1_.empty() ? nullptr : state1_.data(),
                                   state2_.empty() ? nullptr : state2_.data(), nullptr, DType::kBF16},
                                  context_);
}

}  // namespace parity::train::detail
