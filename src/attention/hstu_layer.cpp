// HstuLayerProblem::validate, the attention the layer runs, the saved-activation size, the FLOP
// model, and the op's dispatch (variants: the CPU one in hstu_layer_cpu.cpp; the GPU one in
// src/backends/cuda/attention/hstu_layer_gpu.cpp, installed into hstu_layer_gpu_slots.hpp).
#include "parity/attention/hstu_layer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "attention/hstu_layer_cpu.hpp"
#include "attention/hstu_layer_gpu_slots.hpp"
#include "attention/hstu_layer_saved.hpp"
#include "nn/variant_support.hpp"

namespace parity::attention {
namespace {

constexpr int kMaxModelDim = 1 << 16;

Status check_range(const char* name, std::int64_t value, std::int64_t low, std::int64_t high) {
  if (value < low || value > high) {
    return invalid_argument("hstu layer: ", name, "=", value, ": out of range [", low, ", ", high, "]");
  }
  return Status::ok();
}

Status require_pointer(const void* pointer, const char* name) {
  if (pointer == nullptr) return invalid_argument("hstu layer: ", name, " is null");
  return Status::ok();
}

// HstuLayerWeights and HstuLayerGradients name the same eight tensors.
template <typename Parameters>
Status check_parameters(const Parameters& p, const std::string& prefix) {
  const std::pair<const void*, const char*> fields[] = {
      {p.norm_weight, "norm_weight"},   {p.norm_bias, "norm_bias"},
      {p.uvqk_weight, "uvqk_weight"},   {p.uvqk_bias, "uvqk_bias"},
      {p.output_norm_weight, "output_norm_weight"}, {p.output_norm_bias, "output_norm_bias"},
      {p.output_weight, "output_weight"}, {p.output_bias, "output_bias"}};
  for (const auto& [pointer, name] : fields) {
    if (pointer == nullptr) return invalid_argument("hstu layer: ", prefix, name, " is null");
  }
  return Status::ok();
}

Status cpu_fp32_only(const HstuLayerProblem& problem, const ExecutionContext& context) {
  PARITY_RETURN_IF_ERROR(nn::detail::require_cpu(context));
  if (problem.dtype != DType::kF32) {
    return unsupported("the CPU variant computes fp32 only (dtype=", dtype_name(problem.dtype), ")");
  }
  return Status::ok();
}

// The offsets by the layer's own names first (seq_offsets, total_tokens), then the attention's
// checks of the lengths and num_targets.
Status check_offsets(const HstuLayerProblem& problem, const std::int64_t* seq_offsets) {
  PARITY_RETURN_IF_ERROR(require_pointer(seq_offsets, "seq_offsets"));
  if (seq_offsets[0] != 0) return invalid_argument("hstu layer: seq_offsets[0]=", seq_offsets[0], ": must be 0");
  for (std::int64_t b = 1; b <= problem.batch; ++b) {
    if (seq_offsets[b] < seq_offsets[b - 1]) {
      return invalid_argument("hstu layer: seq_offsets[", b, "]=", seq_offsets[b], " is below seq_offsets[", b - 1,
                              "]=", seq_offsets[b - 1]);
    }
  }
  if (seq_offsets[problem.batch] != problem.total_tokens) {
    return invalid_argument("hstu layer: seq_offsets[", problem.batch, "]=", seq_offsets[problem.batch],
                            " differs from total_tokens=", problem.total_tokens);
  }
  return Status::ok();
}

// Tensors may be null only when there are no rows.
Status require_rows_pointer(const HstuLayerProblem& problem, const void* pointer, const char* name) {
  return problem.total_tokens == 0 ? Status::ok() : require_pointer(pointer, name);
}

// The offsets and targets on the host (the CPU variants read args' own; the GPU variants the host
// copies, when given), then the pointers every variant reads.
Status check_forward_inputs(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args,
                            const std::int64_t* host_seq_offsets, const std::int32_t* host_num_targets) {
  if (host_seq_offsets != nullptr) {
    PARITY_RETURN_IF_ERROR(check_offsets(problem, host_seq_offsets));
    PARITY_RETURN_IF_ERROR(check_attention_inputs(problem.attention(), host_seq_offsets, nullptr, host_num_targets)
                               .with_context("hstu layer"));
  }
  PARITY_RETURN_IF_ERROR(require_rows_pointer(problem, args.x, "x"));
  PARITY_RETURN_IF_ERROR(require_rows_pointer(problem, args.saved, "saved"));
  return check_parameters(args.weights, "weights.");
}

Status check_forward_args(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args) {
  PARITY_RETURN_IF_ERROR(require_pointer(args.seq_offsets, "seq_offsets"));
  return check_forward_inputs(problem, args, args.seq_offsets, args.num_targets);
}

// The GPU variants behind their slots, with the checks that need no device memory: pointers, the
// host copies of the offsets when given.
Status check_forward_args_gpu(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args) {
  if (problem.total_tokens > 0) PARITY_RETURN_IF_ERROR(require_pointer(args.seq_offsets, "seq_offsets"));
  if (problem.has_num_targets && problem.total_tokens > 0) {
    PARITY_RETURN_IF_ERROR(require_pointer(args.num_targets, "num_targets"));
  }
  return check_forward_inputs(problem, args, args.host_seq_offsets, args.host_num_targets);
}

// What a forward writes: y, which must not alias x.
Status check_forward_output(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args) {
  PARITY_RETURN_IF_ERROR(require_rows_pointer(problem, args.y, "y"));
  if (problem.total_tokens > 0 && args.y == args.x) {
    return invalid_argument("hstu layer: y aliases x (the residual reads x after y is written)");
  }
  return Status::ok();
}

// What a backward reads and writes beyond its forward's arguments.
Status check_backward_args(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args) {
  PARITY_RETURN_IF_ERROR(require_rows_pointer(problem, args.grad_y, "grad_y"));
  PARITY_RETURN_IF_ERROR(require_rows_pointer(problem, args.grad_x, "grad_x"));
  return check_parameters(args.grads, "grads.");
}

class HstuLayerForwardCpu final : public HstuLayerForwardVariant {
 public:
  std::string_view name() const override { return "hstu_layer_forward_cpu"; }
  Status can_implement(const HstuLayerProblem& problem, const ExecutionContext& context) const override {
    return cpu_fp32_only(problem, context);
  }
  Status run(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(check_forward_args(problem, args));
    PARITY_RETURN_IF_ERROR(check_forward_output(problem, args));
    return cpu::hstu_layer_forward(problem, args, context);
  }
};

class HstuLayerBackwardCpu final : public HstuLayerBackwardVariant {
 public:
  std::string_view name() const override { return "hstu_layer_backward_cpu"; }
  Status can_implement(const HstuLayerProblem& problem, const ExecutionContext& context) const override {
    return cpu_fp32_only(problem, context);
  }
  Status run(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(check_forward_args(problem, args.forward));
    PARITY_RETURN_IF_ERROR(check_backward_args(problem, args));
    return cpu::hstu_layer_backward(problem, args, context);
  }
};

class HstuLayerForwardGpu final : public HstuLayerForwardVariant {
 public:
  std::string_view name() const override { return detail::hstu_layer_forward_gpu_slot().name(); }
  Status can_implement(const HstuLayerProblem& problem, const ExecutionContext& context) const override {
    return detail::hstu_layer_forward_gpu_slot().can_implement(problem, context);
  }
  std::int64_t workspace_bytes(const HstuLayerProblem& problem) const override {
    return detail::hstu_layer_forward_gpu_slot().workspace_bytes(problem);
  }
  Status run(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args, void* workspace,
             const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(check_forward_args_gpu(problem, args));
    PARITY_RETURN_IF_ERROR(check_forward_output(problem, args));
    return detail::hstu_layer_forward_gpu_slot().run(problem, args, workspace, context);
  }
};

class HstuLayerBackwardGpu final : public HstuLayerBackwardVariant {
 public:
  std::string_view name() const override { return detail::hstu_layer_backward_gpu_slot().name(); }
  Status can_implement(const HstuLayerProblem& problem, const ExecutionContext& context) const override {
    return detail::hstu_layer_backward_gpu_slot().can_implement(problem, context);
  }
  std::int64_t workspace_bytes(const HstuLayerProblem& problem) const override {
    return detail::hstu_layer_backward_gpu_slot().workspace_bytes(problem);
  }
  Status run(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args, void* workspace,
             const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(check_forward_args_gpu(problem, args.forward));
    PARITY_RETURN_IF_ERROR(check_backward_args(problem, args));
    return detail::hstu_layer_backward_gpu_slot().run(problem, args, workspace, context);
  }
};

// The first variant that applies, with the caller's workspace checked against what it needs.
template <typename Args>
Status run_layer(const std::vector<const OpVariant<HstuLayerProblem, Args>*>& variants,
                 const HstuLayerProblem& problem, const Args& args, const HstuLayerForwardArgs& forward,
                 const ExecutionContext& context, std::string_view op_name) {
  PARITY_RETURN_IF_ERROR(problem.validate().with_context(op_name));
  auto choice = select_variant(variants, problem, context);
  if (!choice.is_ok()) return choice.status().with_context(op_name);
  const auto* variant = choice->variant;
  const std::int64_t needed = variant->workspace_bytes(problem);
  if (needed > 0 && (forward.workspace == nullptr || forward.workspace_bytes < needed)) {
    return invalid_argument(op_name, ": workspace=", forward.workspace == nullptr ? "null" : "given", " of ",
                            forward.workspace_bytes, " bytes; variant ", variant->name(), " needs ", needed,
                            " (hstu_layer_workspace_bytes)");
  }
  return variant->run(problem, args, forward.workspace, context);
}

}  // namespace

namespace detail {

parity::detail::GpuSlotVariant<HstuLayerProblem, HstuLayerForwardArgs>& hstu_layer_forward_gpu_slot() {
  static parity::detail::GpuSlotVariant<HstuLayerProblem, HstuLayerForwardArgs> slot("hstu_layer_forward_gpu");
  return slot;
}
parity::detail::GpuSlotVariant<HstuLayerProblem, HstuLayerBackwardArgs>& hstu_layer_backward_gpu_slot() {
  static parity::detail::GpuSlotVariant<HstuLayerProblem, HstuLayerBackwardArgs> slot("hstu_layer_backward_gpu");
  return slot;
}

}  // namespace detail

Status HstuLayerProblem::validate() const {
  PARITY_RETURN_IF_ERROR(check_range("batch", batch, 1, std::numeric_limits<std::int32_t>::max()));
  PARITY_RETURN_IF_ERROR(check_range("total_tokens", total_tokens, 0, std::int64_t{1} << 40));
  PARITY_RETURN_IF_ERROR(check_range("model_dim", model_dim, 1, kMaxModelDim));
  PARITY_RETURN_IF_ERROR(check_range("heads", heads, 1, 1024));
  PARITY_RETURN_IF_ERROR(check_range("dim_qk", dim_qk, 1, 1024));
  PARITY_RETURN_IF_ERROR(check_range("dim_v", dim_v, 1, 1024));
  if (!(layer_norm_epsilon > 0.0F) || !std::isfinite(layer_norm_epsilon)) {
    return invalid_argument("hstu layer: layer_norm_epsilon=", layer_norm_epsilon, ": must be finite and > 0");
  }
  if (dtype != DType::kF32 && dtype != DType::kBF16) {
    return invalid_argument("hstu layer: dtype=", dtype_name(dtype), ": expected fp32 or bf16");
  }
  return attention().validate().with_context("hstu layer attention");
}

AttentionProblem HstuLayerProblem::attention() const {
  AttentionProblem a;
  a.kind = AttentionKind::kHstu;
  a.activation = PointwiseActivation::kSilu;
  a.batch = batch;
  a.heads = heads;
  a.dim_qk = dim_qk;
  a.dim_v = dim_v;
  a.total_q = total_tokens;
  a.total_kv = total_tokens;
  a.max_seq_len = max_seq_len;
  a.causal = causal;
  a.has_num_targets = has_num_targets;
  a.contextual_len = contextual_len;
  a.max_attn_len = max_attn_len;
  a.min_full_attn_len = min_full_attn_len;
  a.alpha = alpha;
  a.dtype = DType::kBF16;
  return a;
}

std::int64_t hstu_layer_saved_bytes(const HstuLayerProblem& problem) {
  if (problem.dtype != DType::kF32) return detail::hstu_layer_saved_layout_16bit(problem).total_bytes;
  const std::int64_t t = problem.total_tokens;
  const std::int64_t floats = t * (problem.model_dim + problem.uvqk_width() + problem.attention_width() + 4);
  return floats * static_cast<std::int64_t>(sizeof(float));
}

const std::vector<const HstuLayerForwardVariant*>& hstu_layer_forward_variants() {
  static const HstuLayerForwardCpu cpu_variant;
  static const HstuLayerForwardGpu gpu_variant;
  static const std::vector<const HstuLayerForwardVariant*> variants = {&cpu_variant, &gpu_variant};
  return variants;
}

const std::vector<const HstuLayerBackwardVariant*>& hstu_layer_backward_variants() {
  static const HstuLayerBackwardCpu cpu_variant;
  static const HstuLayerBackwardGpu gpu_variant;
  static const std::vector<const HstuLayerBackwardVariant*> variants = {&cpu_variant, &gpu_variant};
  return variants;
}

Result<std::int64_t> hstu_layer_workspace_bytes(const HstuLayerProblem& problem, const ExecutionContext& context) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  auto forward = select_variant(hstu_layer_forward_variants(), problem, context);
  if (!forward.is_ok()) return forward.status().with_context("hstu_layer_workspace_bytes");
  auto backward = select_variant(hstu_layer_backward_variants(), problem, context);
  if (!backward.is_ok()) return backward.status().with_context("hstu_layer_workspace_bytes");
  return std::max(forward->variant->workspace_bytes(problem), backward->variant->workspace_bytes(problem));
}

Status hstu_layer_forward(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args,
                          const ExecutionContext& context) {
  return run_layer(hstu_layer_forward_variants(), problem, args, args, context, "hstu_layer_forward");
}

Status hstu_layer_backward(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args,
                           const ExecutionContext& context) {
  return run_layer(hstu_layer_backward_variants(), problem, args, args.forward, context, "hstu_layer_backward");
}

HstuLayerFlops hstu_layer_flops(const HstuLayerProblem& problem, const std::vector<std::int64_t>& lengths) {
  const double tokens = static_cast<double>(problem.total_tokens);
  const double projections =
      2.0 * tokens * problem.model_dim * static_cast<double>(problem.uvqk_width() + problem.attention_width());
  const AttentionFlops attention = useful_flops(problem.attention(), lengths);
  return {projections + attention.forward, 2.0 * projections + attention.backward};
}

}  // namespace parity::attention
