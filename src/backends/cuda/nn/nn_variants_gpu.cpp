// GPU implementations of the nn ops' variants (installed into the slots of src/nn/gpu_slots.hpp by
// register_backends): GEMMs through gemm::Gemm (cuBLASLt), the rest through the portable kernels of
// include/parity/nn/dense_gpu.hpp. Asynchronous on the context's stream, except the loss, whose
// value is read back (the trainer reports it every step).
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "backends/cuda/register_backends.hpp"
#include "nn/gemm_cache.hpp"
#include "nn/gpu_slots.hpp"
#include "nn/linear_steps.hpp"
#include "parity/core/gpu.hpp"
#include "parity/nn/dense_gpu.hpp"
#include "parity/nn/interaction.hpp"

namespace parity::nn::gpu_variants {
namespace {

// fp32 (FMA or TF32) and bf16 activations; weights and biases in the same type (bf16 runs read
// the shadow copy of the fp32 master weights), weight and bias gradients fp32.
Status require_gpu_linear(const LinearProblem&, const ExecutionContext& context) {
  if (context.device != DeviceKind::kGpu) return unsupported("runs on the GPU only");
  return Status::ok();
}

// cuBLASLt has no bf16 kernel for some of a layer's GEMMs (the bias-gradient epilogue at 2-byte
// row alignment, e.g. 479 columns; an output width of 1). Those run on fp32 copies of the operands
// (TF32 tensor cores, fp32 accumulation as before) and the result is cast back; the choice is
// remembered per problem so the failed selection is not repeated every step.
class Fp32Fallback {
 public:
  Status run(const gemm::GemmRunProblem& problem, const gemm::GemmArgs& args, const ExecutionContext& context) {
    const std::string key = problem.shape.describe() + " c=" + std::string(dtype_name(problem.shape.c_dtype)) + " " +
                            std::string(gemm::run_epilogue_name(problem.epilogue));
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (fp32_problems_.count(key) == 0) {
        const Status status = detail::run_gemm(problem, args, context);
        if (status.is_ok() || problem.shape.a_dtype == DType::kF32 ||
            (status.code() != StatusCode::kUnsupported && status.code() != StatusCode::kDeviceError)) {
          return status;
        }
        fp32_problems_.insert(key);
      }
    }
    return run_fp32(problem, args, context);
  }

 private:
  Status run_fp32(const gemm::GemmRunProblem& problem, const gemm::GemmArgs& args, const ExecutionContext& context) {
    const auto& shape = problem.shape;
    const std::int64_t a_count = shape.m * shape.k, b_count = shape.k * shape.n, d_count = shape.m * shape.n;
    const bool cast_d = shape.c_dtype != DType::kF32;
    const bool has_bias = args.bias != nullptr;
    const std::int64_t floats = a_count + b_count + (cast_d ? d_count : 0) + (has_bias && cast_d ? shape.m : 0);
    std::lock_guard<std::mutex> lock(mutex_);
    if (staging_.size_bytes() < static_cast<std::size_t>(floats) * 4) {
      PARITY_RETURN_IF_ERROR(parity::gpu::synchronize());
      PARITY_ASSIGN_OR_RETURN(staging_, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(floats) * 4));
    }
    float* a = staging_.as<float>();
    float* b = a + a_count;
    float* d = cast_d ? b + b_count : static_cast<float*>(args.d);
    float* bias = has_bias && cast_d ? b + b_count + d_count : nullptr;
    PARITY_RETURN_IF_ERROR(gpu::cast(a_count, args.a, shape.a_dtype, a, DType::kF32, context.stream));
    PARITY_RETURN_IF_ERROR(gpu::cast(b_count, args.b, shape.b_dtype, b, DType::kF32, context.stream));
    if (bias != nullptr) PARITY_RETURN_IF_ERROR(gpu::cast(shape.m, args.bias, shape.c_dtype, bias, DType::kF32, context.stream));
    // beta != 0 reads D's previous contents as C.
    if (cast_d && args.beta != 0.0f) PARITY_RETURN_IF_ERROR(gpu::cast(d_count, args.d, shape.c_dtype, d, DType::kF32, context.stream));
    gemm::GemmRunProblem fp32 = problem;
    fp32.shape.a_dtype = fp32.shape.b_dtype = fp32.shape.c_dtype = DType::kF32;
    fp32.allow_tf32 = true;
    gemm::GemmArgs fp32_args = args;
    fp32_args.a = a;
    fp32_args.b = b;
    fp32_args.d = d;
    if (has_bias) fp32_args.bias = cast_d ? bias : args.bias;
    PARITY_RETURN_IF_ERROR(detail::run_gemm(fp32, fp32_args, context));
    if (!cast_d) return Status::ok();
    return gpu::cast(d_count, d, DType::kF32, args.d, shape.c_dtype, context.stream);
  }

  std::mutex mutex_;
  std::set<std::string> fp32_problems_;
  parity::gpu::DeviceBuffer staging_;
};

Fp32Fallback& fallback() {
  static Fp32Fallback instance;
  return instance;
}

Status run_gemm_with_fallback(const gemm::GemmRunProblem& problem, const gemm::GemmArgs& args,
                              const ExecutionContext& context) {
  return fallback().run(problem, args, context);
}

Status relu_backward_gpu(std::int64_t count, DType dtype, const void* grad_out, const void* output, void* grad_pre,
                         const ExecutionContext& context) {
  return gpu::relu_backward(count, dtype, grad_out, output, grad_pre, context.stream);
}

class LinearForwardGpu final : public LinearForwardVariant {
 public:
  std::string_view name() const override { return "linear_forward_gpu_gemm_epilogue"; }
  Status can_implement(const LinearProblem& problem, const ExecutionContext& context) const override {
    return require_gpu_linear(problem, context);
  }
  Status run(const LinearProblem& problem, const LinearForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return detail::linear_forward_steps(problem, args, context, &run_gemm_with_fallback);
  }
};

// Whether cuBLASLt has a kernel for the data-gradient GEMM with the dReLU epilogue (it lacks some,
// e.g. bf16 dReLU epilogues at some alignments): probed once per problem by creating its plan.
class FusedDreluSupport {
 public:
  bool available(const gemm::GemmRunProblem& problem, const ExecutionContext& context) {
    const std::string key = problem.shape.describe() + " c=" + std::string(dtype_name(problem.shape.c_dtype)) +
                            " tf32=" + std::to_string(problem.allow_tf32);
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = known_.find(key);
    if (found != known_.end()) return found->second;
    const bool ok = detail::gemm_cache().get(problem, context).is_ok();
    known_.emplace(key, ok);
    return ok;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, bool> known_;
};

FusedDreluSupport& fused_drelu_support() {
  static FusedDreluSupport instance;
  return instance;
}

class LinearBackwardGpu final : public LinearBackwardVariant {
 public:
  std::string_view name() const override { return "linear_backward_gpu_gemm_bgrad"; }
  Status can_implement(const LinearProblem& problem, const ExecutionContext& context) const override {
    return require_gpu_linear(problem, context);
  }
  Status run(const LinearProblem& problem, const LinearBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    if (args.input_relu_mask != nullptr && args.grad_input != nullptr &&
        !fused_drelu_support().available(
            detail::linear_data_grad_gemm(problem.batch_size, problem.in_features, problem.out_features, problem.dtype,
                                          problem.math, gemm::RunEpilogue::kDRelu),
            context)) {
      // No fused kernel: the plain data gradient, then the producer's dReLU from its output (this
      // layer's input) in place, as the unfused path would have run it.
      LinearBackwardArgs plain = args;
      plain.input_relu_mask = nullptr;
      PARITY_RETURN_IF_ERROR(
          detail::linear_backward_steps(problem, plain, context, &run_gemm_with_fallback, &relu_backward_gpu));
      return gpu::relu_backward(problem.batch_size * problem.in_features, problem.dtype, args.grad_input, args.input,
                                args.grad_input, context.stream);
    }
    return detail::linear_backward_steps(problem, args, context, &run_gemm_with_fallback, &relu_backward_gpu);
  }
};

Status require_gpu(const ExecutionContext& context) {
  if (context.device != DeviceKind::kGpu) return unsupported("runs on the GPU only");
  return Status::ok();
}

gpu::InteractionShape interaction_shape(const DotInteractionProblem& problem) {
  gpu::InteractionShape shape;
  shape.batch = problem.batch_size;
  shape.num_embeddings = static_cast<int>(problem.num_embeddings);
  shape.dim = static_cast<int>(problem.dim);
  shape.dtype = problem.dtype;
  shape.output_stride = problem.output_stride;
  return shape;
}

class DotInteractionForwardGpu final : public DotInteractionForwardVariant {
 public:
  std::string_view name() const override { return "dot_interaction_forward_gpu_shared"; }
  Status can_implement(const DotInteractionProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    return interaction_shape(problem).validate();
  }
  Status run(const DotInteractionProblem& problem, const DotInteractionForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return gpu::interaction_dot_forward(interaction_shape(problem), args.bottom, args.embeddings, args.output,
                                        context.stream);
  }
};

class DotInteractionBackwardGpu final : public DotInteractionBackwardVariant {
 public:
  std::string_view name() const override { return "dot_interaction_backward_gpu_shared"; }
  Status can_implement(const DotInteractionProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    return interaction_shape(problem).validate();
  }
  Status run(const DotInteractionProblem& problem, const DotInteractionBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return gpu::interaction_dot_backward(interaction_shape(problem), args.bottom, args.embeddings, args.grad_output,
                                         args.grad_bottom, args.grad_embeddings, context.stream);
  }
};

class DotInteractionForwardGramTiles final : public DotInteractionForwardVariant {
 public:
  std::string_view name() const override { return "dot_interaction_forward_gpu_gram_tiles"; }
  Status can_implement(const DotInteractionProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    return gpu::interaction_gram_tiles_supported(interaction_shape(problem));
  }
  Status run(const DotInteractionProblem& problem, const DotInteractionForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return gpu::interaction_dot_forward_gram_tiles(interaction_shape(problem), args.bottom, args.embeddings,
                                                   args.output, context.stream);
  }
};

class DotInteractionBackwardRegisterColumns final : public DotInteractionBackwardVariant {
 public:
  std::string_view name() const override { return "dot_interaction_backward_gpu_register_columns"; }
  Status can_implement(const DotInteractionProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    return gpu::interaction_register_columns_supported(interaction_shape(problem));
  }
  Status run(const DotInteractionProblem& problem, const DotInteractionBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return gpu::interaction_dot_backward_register_columns(interaction_shape(problem), args.bottom, args.embeddings,
                                                          args.grad_output, args.grad_bottom, args.grad_embeddings,
                                                          context.stream);
  }
};

// DCNv2 cross layer: the two low-rank projections as GEMMs (gemm::Gemm, bf16 or fp32/TF32 like the
// MLP), the element-wise step as one kernel. The backward's kernel also copies grad_output into
// grad_input, and V's data-gradient GEMM adds d low V onto it (beta = 1): grad_input = g + dx
// without a separate pass.
Status require_gpu_cross(const CrossLayerProblem& problem, const ExecutionContext& context) {
  PARITY_RETURN_IF_ERROR(require_gpu(context));
  return problem.validate();
}

class CrossForwardGpu final : public CrossLayerForwardVariant {
 public:
  std::string_view name() const override { return "cross_layer_forward_gpu_gemm_fused"; }
  Status can_implement(const CrossLayerProblem& problem, const ExecutionContext& context) const override {
    return require_gpu_cross(problem, context);
  }
  Status run(const CrossLayerProblem& problem, const CrossLayerForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_CHECK_ARG(args.x0 && args.input && args.low && args.cross && args.output,
                     "cross_layer_forward: x0, input, low, cross and output must not be null");
    PARITY_RETURN_IF_ERROR(detail::linear_forward_steps(problem.down_projection(),
                                                        {args.input, args.v_weight, nullptr, args.low}, context,
                                                        &run_gemm_with_fallback));
    PARITY_RETURN_IF_ERROR(detail::linear_forward_steps(problem.up_projection(),
                                                        {args.low, args.u_weight, args.u_bias, args.cross}, context,
                                                        &run_gemm_with_fallback));
    return gpu::cross_forward(problem.batch_size * problem.width, problem.dtype, args.x0, args.cross, args.input,
                              args.output, context.stream);
  }
};

class CrossBackwardGpu final : public CrossLayerBackwardVariant {
 public:
  std::string_view name() const override { return "cross_layer_backward_gpu_gemm_fused"; }
  Status can_implement(const CrossLayerProblem& problem, const ExecutionContext& context) const override {
    return require_gpu_cross(problem, context);
  }
  Status run(const CrossLayerProblem& problem, const CrossLayerBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_CHECK_ARG(args.x0 && args.input && args.low && args.cross && args.grad_output && args.grad_x0 &&
                         args.grad_input && args.scratch_cross && args.scratch_low && args.grad_v && args.grad_u &&
                         args.grad_u_bias,
                     "cross_layer_backward: activations, gradients and scratch must not be null");
    PARITY_CHECK_ARG(args.grad_x0 != args.grad_input && args.grad_input != args.grad_output,
                     "cross_layer_backward: grad_input must differ from grad_x0 and grad_output");
    const std::int64_t rows = problem.batch_size, width = problem.width, rank = problem.rank;
    // d cross = g * x0, grad_x0 (+)= g * cross, grad_input = g.
    PARITY_RETURN_IF_ERROR(gpu::cross_backward(rows * width, problem.dtype, args.grad_output, args.x0, args.cross,
                                               args.scratch_cross, args.grad_x0, args.accumulate_grad_x0,
                                               context.stream, args.grad_input));
    LinearBackwardArgs up;
    up.input = args.low;
    up.weight = args.u_weight;
    up.grad_output = args.scratch_cross;
    up.grad_input = args.scratch_low;
    up.grad_weight = args.grad_u;
    up.grad_bias = args.grad_u_bias;
    PARITY_RETURN_IF_ERROR(
        detail::linear_backward_steps(problem.up_projection(), up, context, &run_gemm_with_fallback, &relu_backward_gpu));
    gemm::GemmArgs weight_args;  // dV = d low^T x
    weight_args.a = args.input;
    weight_args.b = args.scratch_low;
    weight_args.d = args.grad_v;
    PARITY_RETURN_IF_ERROR(run_gemm_with_fallback(
        detail::linear_weight_grad_gemm(rows, width, rank, problem.dtype, problem.math, gemm::RunEpilogue::kNone),
        weight_args, context));
    gemm::GemmArgs data_args;  // grad_input += d low V
    data_args.a = args.v_weight;
    data_args.b = args.scratch_low;
    data_args.d = args.grad_input;
    data_args.beta = 1.0f;
    return run_gemm_with_fallback(detail::linear_data_grad_gemm(rows, width, rank, problem.dtype, problem.math),
                                  data_args, context);
  }
};

// The loss keeps its own device scratch (block partials, the sum, a gradient sink for evaluation),
// grown to the largest batch seen.
class BceLossGpu final : public BceLossVariant {
 public:
  std::string_view name() const override { return "bce_with_logits_gpu_two_pass"; }
  Status can_implement(const BceLossProblem&, const ExecutionContext& context) const override {
    return require_gpu(context);
  }
  Status run(const BceLossProblem& problem, const BceLossArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_CHECK_ARG(args.logits != nullptr && args.labels != nullptr && args.loss != nullptr,
                     "bce_with_logits: logits, labels and loss must not be null");
    const std::int64_t batch = problem.batch_size;
    std::lock_guard<std::mutex> lock(mutex_);
    const std::int64_t partial_bytes = gpu::bce_workspace_bytes(batch);
    const std::int64_t needed = partial_bytes + 16 + (args.grad_logits == nullptr ? batch * 4 : 0);  // a sink of <= 4 B per logit
    if (scratch_.size_bytes() < static_cast<std::size_t>(needed)) {
      PARITY_ASSIGN_OR_RETURN(scratch_, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(needed)));
    }
    auto* base = static_cast<char*>(scratch_.data());
    auto* loss_sum = reinterpret_cast<float*>(base + partial_bytes);
    void* grad = args.grad_logits != nullptr ? args.grad_logits : static_cast<void*>(base + partial_bytes + 16);
    PARITY_RETURN_IF_ERROR(gpu::bce_with_logits(batch, problem.dtype, args.logits, args.labels, loss_sum, grad,
                                                1.0f / static_cast<float>(batch), base, partial_bytes,
                                                context.stream));
    float sum = 0.0f;
    PARITY_RETURN_IF_ERROR(scratch_.copy_to_host(&sum, sizeof(sum), static_cast<std::size_t>(partial_bytes)));
    *args.loss = static_cast<double>(sum) / static_cast<double>(batch);
    return Status::ok();
  }

 private:
  mutable std::mutex mutex_;
  mutable parity::gpu::DeviceBuffer scratch_;
};

class DenseOptimizerGpu final : public DenseOptimizerVariant {
 public:
  std::string_view name() const override { return "dense_optimizer_gpu_elementwise"; }
  Status can_implement(const DenseOptimizerProblem&, const ExecutionContext& context) const override {
    return require_gpu(context);
  }
  Status run(const DenseOptimizerProblem& problem, const DenseOptimizerArgs& args, void*,
             const ExecutionContext& context) const override {
    gpu::DenseOptimizerParams params;
    params.kind = problem.kind == DenseOptimizerKind::kSgd       ? gpu::DenseOptimizer::kSgd
                  : problem.kind == DenseOptimizerKind::kAdagrad ? gpu::DenseOptimizer::kAdagrad
                                                                 : gpu::DenseOptimizer::kAdam;
    params.learning_rate = problem.learning_rate;
    params.eps = problem.eps;
    params.beta1 = problem.beta1;
    params.beta2 = problem.beta2;
    params.weight_decay = problem.weight_decay;
    params.step = problem.step;
    return gpu::dense_optimizer_step(params, problem.num_elements, args.weights, args.state1, args.state2, args.grads,
                                     DType::kF32, args.shadow, args.shadow == nullptr ? DType::kF32 : args.shadow_dtype,
                                     context.stream);
  }
};

}  // namespace

void install() {
  static const LinearForwardGpu linear_forward;
  static const LinearBackwardGpu linear_backward;
  static const DotInteractionForwardGpu interaction_forward;
  static const DotInteractionBackwardGpu interaction_backward;
  static const DotInteractionForwardGramTiles interaction_forward_tiles;
  static const DotInteractionBackwardRegisterColumns interaction_backward_columns;
  static const BceLossGpu bce;
  static const DenseOptimizerGpu optimizer;
  static const CrossForwardGpu cross_forward;
  static const CrossBackwardGpu cross_backward;
  detail::linear_forward_gpu_gemm_relu_aux_slot().install(&linear_forward);
  detail::linear_backward_gpu_gemm_drelu_bgrad_slot().install(&linear_backward);
  detail::dot_interaction_forward_gpu_shared_slot().install(&interaction_forward);
  detail::dot_interaction_backward_gpu_shared_slot().install(&interaction_backward);
  detail::dot_interaction_forward_gpu_gram_tiles_slot().install(&interaction_forward_tiles);
  detail::dot_interaction_backward_gpu_register_columns_slot().install(&interaction_backward_columns);
  detail::bce_with_logits_gpu_reduce_slot().install(&bce);
  detail::dense_optimizer_gpu_elementwise_slot().install(&optimizer);
  detail::cross_layer_forward_gpu_gemm_fused_slot().install(&cross_forward);
  detail::cross_layer_backward_gpu_gemm_fused_slot().install(&cross_backward);
}

}  // namespace parity::nn::gpu_variants
