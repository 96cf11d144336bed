// Dot interaction (per-sample loops, OpenMP over the batch; each sample's sums run in a fixed
// order, so results do not depend on the thread count) and the DCNv2 cross layer (two linear ops
// and elementwise OpenMP passes). GPU slots: the dot interaction's fast kernels first (Gram tiles
// forward, register-column backward), then the general shared-memory ones that take any shape.
#include "parity/nn/interaction.hpp"

#include <vector>

#include "nn/gpu_slots.hpp"
#include "nn/variant_support.hpp"

namespace parity::nn {

Status DotInteractionProblem::validate() const {
  PARITY_CHECK_ARG(batch_size >= 1, "dot_interaction: batch_size=", batch_size, ": expected >= 1");
  PARITY_CHECK_ARG(num_embeddings >= 1 && num_embeddings <= 4096, "dot_interaction: num_embeddings=",
                   num_embeddings, ": out of range [1, 4096]");
  PARITY_CHECK_ARG(dim >= 1 && dim <= 65536, "dot_interaction: dim=", dim, ": out of range [1, 65536]");
  PARITY_CHECK_ARG(dtype == DType::kF32 || dtype == DType::kBF16, "dot_interaction: dtype=",
                   dtype_name(dtype), ": expected fp32 or bf16");
  return Status::ok();
}

namespace {

Status require_fp32_cpu(DType dtype, const ExecutionContext& context) {
  PARITY_RETURN_IF_ERROR(detail::require_cpu(context));
  if (dtype != DType::kF32) return unsupported("CPU variants compute fp32 only (dtype=", dtype_name(dtype), ")");
  return Status::ok();
}

// Vector k of sample b: k = 0 the bottom output, k >= 1 embedding k - 1.
inline const float* vector_at(const float* bottom, const float* embeddings, std::int64_t features,
                              std::int64_t dim, std::int64_t b, std::int64_t k) {
  return k == 0 ? bottom + b * dim : embeddings + (b * features + k - 1) * dim;
}

class DotForwardCpu final : public DotInteractionForwardVariant {
 public:
  std::string_view name() const override { return "dot_interaction_forward_cpu_omp"; }
  Status can_implement(const DotInteractionProblem& problem, const ExecutionContext& context) const override {
    if (problem.output_stride != 0 && problem.output_stride != problem.output_dim()) {
      return unsupported("a padded output stride runs on the GPU variant only");
    }
    return require_fp32_cpu(problem.dtype, context);
  }
  Status run(const DotInteractionProblem& problem, const DotInteractionForwardArgs& args, void*,
             const ExecutionContext&) const override {
    PARITY_CHECK_ARG(args.bottom && args.embeddings && args.output,
                     "dot_interaction_forward: bottom, embeddings and output must not be null");
    const auto* bottom = static_cast<const float*>(args.bottom);
    const auto* embeddings = static_cast<const float*>(args.embeddings);
    auto* output = static_cast<float*>(args.output);
    const std::int64_t features = problem.num_embeddings, dim = problem.dim;
    const std::int64_t width = problem.output_dim();
#pragma omp parallel for schedule(static) if (problem.batch_size * width * dim >= detail::kParallelMinElements)
    for (std::int64_t b = 0; b < problem.batch_size; ++b) {
      float* row = output + b * width;
      for (std::int64_t d = 0; d < dim; ++d) row[d] = bottom[b * dim + d];
      std::int64_t pair = dim;
      for (std::int64_t i = 1; i <= features; ++i) {
        const float* zi = vector_at(bottom, embeddings, features, dim, b, i);
        for (std::int64_t j = 0; j < i; ++j) {
          const float* zj = vector_at(bottom, embeddings, features, dim, b, j);
          float dot = 0.0f;
          for (std::int64_t d = 0; d < dim; ++d) dot += zi[d] * zj[d];
          row[pair++] = dot;
        }
      }
    }
    return Status::ok();
  }
};

class DotBackwardCpu final : public DotInteractionBackwardVariant {
 public:
  std::string_view name() const override { return "dot_interaction_backward_cpu_omp"; }
  Status can_implement(const DotInteractionProblem& problem, const ExecutionContext& context) const override {
    if (problem.output_stride != 0 && problem.output_stride != problem.output_dim()) {
      return unsupported("a padded output stride runs on the GPU variant only");
    }
    return require_fp32_cpu(problem.dtype, context);
  }
  Status run(const DotInteractionProblem& problem, const DotInteractionBackwardArgs& args, void*,
             const ExecutionContext&) const override {
    PARITY_CHECK_ARG(args.bottom && args.embeddings && args.grad_output && args.grad_bottom &&
                         args.grad_embeddings,
                     "dot_interaction_backward: every pointer must be set");
    const auto* bottom = static_cast<const float*>(args.bottom);
    const auto* embeddings = static_cast<const float*>(args.embeddings);
    const auto* grad_output = static_cast<const float*>(args.grad_output);
    auto* grad_bottom = static_cast<float*>(args.grad_bottom);
    float* grad_embeddings = args.grad_embeddings;
    const std::int64_t features = problem.num_embeddings, dim = problem.dim;
    const std::int64_t width = problem.output_dim();
#pragma omp parallel for schedule(static) if (problem.batch_size * width * dim >= detail::kParallelMinElements)
    for (std::int64_t b = 0; b < problem.batch_size; ++b) {
      const float* g = grad_output + b * width;
      // dz_k = sum over pairs (k, j), j < k of g_kj z_j + sum over pairs (i, k), i > k of g_ik z_i.
      for (std::int64_t k = 0; k <= features; ++k) {
        float* dz = k == 0 ? grad_bottom + b * dim : grad_embeddings + (b * features + k - 1) * dim;
        for (std::int64_t d = 0; d < dim; ++d) dz[d] = k == 0 ? g[d] : 0.0f;
        for (std::int64_t j = 0; j < k; ++j) {
          const float gkj = g[dim + k * (k - 1) / 2 + j];
          const float* zj = vector_at(bottom, embeddings, features, dim, b, j);
          for (std::int64_t d = 0; d < dim; ++d) dz[d] += gkj * zj[d];
        }
        for (std::int64_t i = k + 1; i <= features; ++i) {
          const float gik = g[dim + i * (i - 1) / 2 + k];
          const float* zi = vector_at(bottom, embeddings, features, dim, b, i);
          for (std::int64_t d = 0; d < dim; ++d) dz[d] += gik * zi[d];
        }
      }
    }
    return Status::ok();
  }
};

}  // namespace

const std::vector<const DotInteractionForwardVariant*>& dot_interaction_forward_variants() {
  static const DotForwardCpu cpu;
  auto& gpu_tiles = detail::dot_interaction_forward_gpu_gram_tiles_slot();
  auto& gpu = detail::dot_interaction_forward_gpu_shared_slot();
  static const std::vector<const DotInteractionForwardVariant*> variants = {&cpu, &gpu_tiles, &gpu};
  return variants;
}

const std::vector<const DotInteractionBackwardVariant*>& dot_interaction_backward_variants() {
  static const DotBackwardCpu cpu;
  auto& gpu_columns = detail::dot_interaction_backward_gpu_register_columns_slot();
  auto& gpu = detail::dot_interaction_backward_gpu_shared_slot();
  static const std::vector<const DotInteractionBackwardVariant*> variants = {&cpu, &gpu_columns, &gpu};
  return variants;
}

Status dot_interaction_forward(const DotInteractionProblem& problem,
                               const DotInteractionForwardArgs& args, const ExecutionContext& context) {
  return detail::run_preferred(dot_interaction_forward_variants(), problem, args, context,
                               "dot_interaction_forward");
}

Status dot_interaction_backward(const DotInteractionProblem& problem,
                                const DotInteractionBackwardArgs& args,
                                const ExecutionContext& context) {
  return detail::run_preferred(dot_interaction_backward_variants(), problem, args, context,
                               "dot_interaction_backward");
}

// ---- DCNv2 cross layer ----

Status CrossLayerProblem::validate() const {
  PARITY_CHECK_ARG(batch_size >= 1, "cross_layer: batch_size=", batch_size, ": expected >= 1");
  PARITY_CHECK_ARG(width >= 1 && width <= (1 << 24), "cross_layer: width=", width,
                   ": out of range [1, 2^24]");
  PARITY_CHECK_ARG(rank >= 1 && rank <= (1 << 24), "cross_layer: rank=", rank, ": out of range [1, 2^24]");
  PARITY_CHECK_ARG(dtype == DType::kF32 || dtype == DType::kBF16, "cross_layer: dtype=",
                   dtype_name(dtype), ": expected fp32 or bf16");
  return Status::ok();
}

LinearProblem CrossLayerProblem::down_projection() const {
  return {batch_size, width, rank, Activation::kNone, BiasMode::kNone, dtype, math};
}

LinearProblem CrossLayerProblem::up_projection() const {
  return {batch_size, rank, width, Activation::kNone, BiasMode::kBias, dtype, math};
}

namespace {

class CrossForwardCpu final : public CrossLayerForwardVariant {
 public:
  std::string_view name() const override { return "cross_layer_forward_cpu_gemm"; }
  Status can_implement(const CrossLayerProblem& problem, const ExecutionContext& context) const override {
    return require_fp32_cpu(problem.dtype, context);
  }
  Status run(const CrossLayerProblem& problem, const CrossLayerForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_CHECK_ARG(args.x0 && args.input && args.low && args.cross && args.output,
                     "cross_layer_forward: x0, input, low, cross and output must not be null");
    PARITY_RETURN_IF_ERROR(linear_forward(problem.down_projection(),
                                          {args.input, args.v_weight, nullptr, args.low}, context));
    PARITY_RETURN_IF_ERROR(linear_forward(problem.up_projection(),
                                          {args.low, args.u_weight, args.u_bias, args.cross}, context));
    const auto* x0 = static_cast<const float*>(args.x0);
    const auto* x = static_cast<const float*>(args.input);
    const auto* cross = static_cast<const float*>(args.cross);
    auto* out = static_cast<float*>(args.output);
    const std::int64_t n = problem.batch_size * problem.width;
#pragma omp parallel for schedule(static) if (n >= detail::kParallelMinElements)
    for (std::int64_t k = 0; k < n; ++k) out[k] = x0[k] * cross[k] + x[k];
    return Status::ok();
  }
};

class CrossBackwardCpu final : public CrossLayerBackwardVariant {
 public:
  std::string_view name() const override { return "cross_layer_backward_cpu_gemm"; }
  Status can_implement(const CrossLayerProblem& problem, const ExecutionContext& context) const override {
    return require_fp32_cpu(problem.dtype, context);
  }
  Status run(const CrossLayerProblem& problem, const CrossLayerBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_CHECK_ARG(args.x0 && args.input && args.low && args.cross && args.grad_output &&
                         args.grad_x0 && args.grad_input && args.scratch_cross && args.scratch_low,
                     "cross_layer_backward: activations, gradients and scratch must not be null");
    PARITY_CHECK_ARG(args.grad_x0 != args.grad_input,
                     "cross_layer_backward: grad_x0 and grad_input must be different buffers");
    const auto* x0 = static_cast<const float*>(args.x0);
    const auto* cross = static_cast<const float*>(args.cross);
    const auto* g = static_cast<const float*>(args.grad_output);
    auto* grad_x0 = static_cast<float*>(args.grad_x0);
    auto* dcross = static_cast<float*>(args.scratch_cross);
    const std::int64_t n = problem.batch_size * problem.width;
#pragma omp parallel for schedule(static) if (n >= detail::kParallelMinElements)
    for (std::int64_t k = 0; k < n; ++k) {
      dcross[k] = g[k] * x0[k];
      grad_x0[k] = args.accumulate_grad_x0 ? grad_x0[k] + g[k] * cross[k] : g[k] * cross[k];
    }
    LinearBackwardArgs up;
    up.input = args.low;
    up.weight = args.u_weight;
    up.grad_output = dcross;
    up.grad_input = args.scratch_low;
    up.grad_weight = args.grad_u;
    up.grad_bias = args.grad_u_bias;
    PARITY_RETURN_IF_ERROR(linear_backward(problem.up_projection(), up, context));
    LinearBackwardArgs down;
    down.input = args.input;
    down.weight = args.v_weight;
    down.grad_output = args.scratch_low;
    down.grad_input = args.grad_input;
    down.grad_weight = args.grad_v;
    PARITY_RETURN_IF_ERROR(linear_backward(problem.down_projection(), down, context));
    auto* grad_input = static_cast<float*>(args.grad_input);
#pragma omp parallel for schedule(static) if (n >= detail::kParallelMinElements)
    for (std::int64_t k = 0; k < n; ++k) grad_input[k] += g[k];
    return Status::ok();
  }
};

}  // namespace

const std::vector<const CrossLayerForwardVariant*>& cross_layer_forward_variants() {
  static const CrossForwardCpu cpu;
  auto& gpu = detail::cross_layer_forward_gpu_gemm_fused_slot();
  static const std::vector<const CrossLayerForwardVariant*> variants = {&cpu, &gpu};
  return variants;
}

const std::vector<const CrossLayerBackwardVariant*>& cross_layer_backward_variants() {
  static const CrossBackwardCpu cpu;
  auto& gpu = detail::cross_layer_backward_gpu_gemm_fused_slot();
  static const std::vector<const CrossLayerBackwardVariant*> variants = {&cpu, &gpu};
  return variants;
}

Status cross_layer_forward(const CrossLayerProblem& problem, const CrossLayerForwardArgs& args,
                           const ExecutionContext& context) {
  return detail::run_preferred(cross_layer_forward_variants(), problem, args, context,
                               "cross_layer_forward");
}

Status cross_layer_backward(const CrossLayerProblem& problem, const CrossLayerBackwardArgs& args,
                            const ExecutionContext& context) {
  return detail::run_preferred(cross_layer_backward_variants(), problem, args, context,
                               "cross_layer_backward");
}

}  // namespace parity::nn
