// Linear layer variants: forward and backward through gemm::Gemm (OpenBLAS on the CPU), the ReLU
// derivative as an OpenMP pass; GPU slots for the fused cuBLASLt-epilogue variants.
#include "parity/nn/linear.hpp"

#include "nn/gemm_cache.hpp"
#include "nn/linear_steps.hpp"
#include "nn/gpu_slots.hpp"
#include "nn/variant_support.hpp"

namespace parity::nn {

Status LinearProblem::validate() const {
  constexpr std::int64_t kMaxWidth = std::int64_t{1} << 24;
  PARITY_CHECK_ARG(batch_size >= 1 && batch_size <= (std::int64_t{1} << 31), "linear: batch_size=",
                   batch_size, ": out of range [1, 2^31]");
  PARITY_CHECK_ARG(in_features >= 1 && in_features <= kMaxWidth, "linear: in_features=", in_features,
                   ": out of range [1, 2^24]");
  PARITY_CHECK_ARG(out_features >= 1 && out_features <= kMaxWidth, "linear: out_features=",
                   out_features, ": out of range [1, 2^24]");
  PARITY_CHECK_ARG(dtype == DType::kF32 || dtype == DType::kBF16, "linear: dtype=", dtype_name(dtype),
                   ": expected fp32 or bf16");
  return Status::ok();
}

namespace {

gemm::RunEpilogue forward_epilogue(const LinearProblem& problem) {
  const bool has_bias = problem.bias == BiasMode::kBias;
  if (problem.activation == Activation::kRelu) {
    return has_bias ? gemm::RunEpilogue::kBiasRelu : gemm::RunEpilogue::kRelu;
  }
  return has_bias ? gemm::RunEpilogue::kBias : gemm::RunEpilogue::kNone;
}

Status require_fp32_cpu(const LinearProblem& problem, const ExecutionContext& context) {
  PARITY_RETURN_IF_ERROR(detail::require_cpu(context));
  if (problem.dtype != DType::kF32) {
    return unsupported("CPU variants compute fp32 only (dtype=", dtype_name(problem.dtype), ")");
  }
  return Status::ok();
}

Status run_cached_gemm(const gemm::GemmRunProblem& problem, const gemm::GemmArgs& args,
                       const ExecutionContext& context) {
  return detail::run_gemm(problem, args, context);
}

// ReLU'(pre) is 1 exactly where the activated output is positive.
Status relu_backward_cpu(std::int64_t count, DType, const void* grad_out, const void* output, void* grad_pre,
                         const ExecutionContext&) {
  const auto* y = static_cast<const float*>(output);
  const auto* dy = static_cast<const float*>(grad_out);
  auto* dpre = static_cast<float*>(grad_pre);
#pragma omp parallel for schedule(static) if (count >= detail::kParallelMinElements)
  for (std::int64_t k = 0; k < count; ++k) dpre[k] = y[k] > 0.0f ? dy[k] : 0.0f;
  return Status::ok();
}

class LinearForwardGemm final : public LinearForwardVariant {
 public:
  std::string_view name() const override { return "linear_forward_gemm_epilogue"; }
  Status can_implement(const LinearProblem& problem, const ExecutionContext& context) const override {
    return require_fp32_cpu(problem, context);
  }
  Status run(const LinearProblem& problem, const LinearForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return detail::linear_forward_steps(problem, args, context, &run_cached_gemm);
  }
};

class LinearBackwardGemm final : public LinearBackwardVariant {
 public:
  std::string_view name() const override { return "linear_backward_gemm_drelu"; }
  Status can_implement(const LinearProblem& problem, const ExecutionContext& context) const override {
    return require_fp32_cpu(problem, context);
  }
  Status run(const LinearProblem& problem, const LinearBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return detail::linear_backward_steps(problem, args, context, &run_cached_gemm, &relu_backward_cpu);
  }
};

}  // namespace

namespace detail {

Status linear_forward_steps(const LinearProblem& problem, const LinearForwardArgs& args,
                            const ExecutionContext& context, GemmRunner run) {
  PARITY_CHECK_ARG(args.input != nullptr && args.weight != nullptr && args.output != nullptr,
                   "linear_forward: input, weight and output must not be null");
  PARITY_CHECK_ARG(problem.bias == BiasMode::kNone || args.bias != nullptr,
                   "linear_forward: bias is null but the problem has a bias");
  gemm::RunEpilogue epilogue = forward_epilogue(problem);
  if (args.aux != nullptr) {
    PARITY_CHECK_ARG(epilogue == gemm::RunEpilogue::kBiasRelu,
                     "linear_forward: aux (the ReLU mask) needs a ReLU layer with a bias");
    epilogue = gemm::RunEpilogue::kBiasReluAux;
  }
  gemm::GemmArgs gemm_args;
  gemm_args.a = args.weight;
  gemm_args.b = args.input;
  gemm_args.d = args.output;
  gemm_args.bias = problem.bias == BiasMode::kBias ? args.bias : nullptr;
  gemm_args.aux = args.aux;
  return run(linear_forward_gemm(problem.batch_size, problem.in_features, problem.out_features, problem.dtype,
                                 problem.math, epilogue),
             gemm_args, context);
}

Status linear_backward_steps(const LinearProblem& problem, const LinearBackwardArgs& args,
                             const ExecutionContext& context, GemmRunner run, ReluBackward relu_backward) {
  PARITY_CHECK_ARG(args.input != nullptr && args.weight != nullptr && args.grad_output != nullptr &&
                       args.grad_weight != nullptr,
                   "linear_backward: input, weight, grad_output and grad_weight must not be null");
  PARITY_CHECK_ARG(problem.bias == BiasMode::kNone || args.grad_bias != nullptr,
                   "linear_backward: grad_bias is null but the problem has a bias");
  const std::int64_t rows = problem.batch_size, in = problem.in_features, out = problem.out_features;
  const void* grad_pre = args.grad_output;
  if (problem.activation == Activation::kRelu && !args.grad_output_is_preactivation) {
    PARITY_CHECK_ARG(args.output != nullptr && args.grad_preactivation != nullptr,
                     "linear_backward: ReLU needs output and grad_preactivation");
    PARITY_RETURN_IF_ERROR(
        relu_backward(rows * out, problem.dtype, args.grad_output, args.output, args.grad_preactivation, context));
    grad_pre = args.grad_preactivation;
  }
  gemm::GemmArgs weight_args;
  weight_args.a = args.input;
  weight_args.b = grad_pre;
  weight_args.d = args.grad_weight;
  const bool has_bias = problem.bias == BiasMode::kBias;
  weight_args.bias_grad = has_bias ? args.grad_bias : nullptr;
  PARITY_RETURN_IF_ERROR(run(linear_weight_grad_gemm(rows, in, out, problem.dtype, problem.math,
                                                     has_bias ? gemm::RunEpilogue::kBgradB : gemm::RunEpilogue::kNone),
                             weight_args, context));
  if (args.grad_input == nullptr) return Status::ok();
  gemm::GemmArgs data_args;
  data_args.a = args.weight;
  data_args.b = grad_pre;
  data_args.d = args.grad_input;
  // Fused dReLU of the layer that produced the input: its mask gates dx in the epilogue.
  data_args.aux = const_cast<void*>(args.input_relu_mask);
  return run(linear_data_grad_gemm(rows, in, out, problem.dtype, problem.math,
                                   args.input_relu_mask != nullptr ? gemm::RunEpilogue::kDRelu
                                                                   : gemm::RunEpilogue::kNone),
             data_args, context);
}

}  // namespace detail

const std::vector<const LinearForwardVariant*>& linear_forward_variants() {
  static const LinearForwardGemm cpu;
  // GPU: the same GEMM with kBiasReluAux (cuBLASLt), writing the ReLU bit mask to args.aux.
  auto& gpu = detail::linear_forward_gpu_gemm_relu_aux_slot();
  static const std::vector<const LinearForwardVariant*> variants = {&cpu, &gpu};
  return variants;
}

const std::vector<const LinearBackwardVariant*>& linear_backward_variants() {
  static const LinearBackwardGemm cpu;
  // GPU: dReLU fused into the GEMM epilogues (kDReluBgrad) instead of a separate pass.
  auto& gpu = detail::linear_backward_gpu_gemm_drelu_bgrad_slot();
  static const std::vector<const LinearBackwardVariant*> variants = {&cpu, &gpu};
  return variants;
}

Status linear_forward(const LinearProblem& problem, const LinearForwardArgs& args,
                      const ExecutionContext& context) {
  return detail::run_preferred(linear_forward_variants(), problem, args, context, "linear_forward");
}

Status linear_backward(const LinearProblem& problem, const LinearBackwardArgs& args,
                       const ExecutionContext& context) {
  return detail::run_preferred(linear_backward_variants(), problem, args, context, "linear_backward");
}

}  // namespace parity::nn
