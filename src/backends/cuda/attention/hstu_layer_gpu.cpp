// The HSTU layer's GPU variant (include/parity/attention/hstu_layer.hpp), installed into the slots
// of src/attention/hstu_layer_gpu_slots.hpp by register_backends. bf16 activations, fp32 master
// weights and gradients: the weights are rounded to bf16 in the workspace per call, the
// projections run as cuBLASLt GEMMs (nn::linear and the GEMM cache: bias epilogue, the residual
// as beta = 1 on a copy of x, d n accumulated over the four blocks in fp32), p is kept as four
// contiguous blocks so the attention op reads q, k, v and writes d q, d k, d v in place, and the
// norms and the gate run as the kernels of src/backends/gpu/attention/hstu_layer_kernels.cu.
#include <algorithm>
#include <array>
#include <cstdint>

#include "attention/hstu_layer_gpu_slots.hpp"
#include "attention/hstu_layer_projection.hpp"
#include "attention/hstu_layer_saved.hpp"
#include "backends/cuda/register_backends.hpp"
#include "backends/gpu/attention/hstu_layer_launch.hpp"
#include "nn/gemm_cache.hpp"
#include "parity/attention/attention_op.hpp"
#include "parity/nn/dense_gpu.hpp"
#include "parity/nn/linear.hpp"

namespace parity::attention::gpu_variants {
namespace {

namespace kernels = parity::attention::gpu::hstu_layer;
using detail::align_section;

// The four column blocks of p (u | v | q | k): their first row in W_uvqk and their width.
struct Block {
  std::int64_t first_row;
  std::int64_t width;
};
std::array<Block, 4> blocks_of(const HstuLayerProblem& problem) {
  const std::int64_t hv = problem.attention_width();
  const std::int64_t hq = static_cast<std::int64_t>(problem.heads) * problem.dim_qk;
  return {Block{0, hv}, Block{hv, hv}, Block{2 * hv, hq}, Block{2 * hv + hq, hq}};
}

// The workspace, 256-byte aligned sections: bf16 weights, then the backward's buffers (g doubles
// as d a once the output projection's backward has read it).
struct Workspace {
  std::uint16_t* uvqk_weight = nullptr;
  std::uint16_t* uvqk_bias = nullptr;
  std::uint16_t* output_weight = nullptr;
  std::uint16_t* output_bias = nullptr;
  std::uint16_t* g = nullptr;
  std::uint16_t* grad_g = nullptr;
  std::array<std::uint16_t*, 4> grad_p{};  // d u, d v, d q, d k
  float* grad_n = nullptr;
  void* partials = nullptr;
  void* attention = nullptr;
  std::int64_t attention_bytes = 0;
  std::int64_t total_bytes = 0;
};

std::int64_t attention_workspace_bytes(const HstuLayerProblem& problem) {
  std::int64_t most = 0;
  for (const bool deterministic : {false, true}) {
    ExecutionContext context;
    context.device = DeviceKind::kGpu;
    context.deterministic = deterministic;
    const auto bytes = attention_backward_workspace_bytes(problem.attention(), context);
    if (bytes.is_ok()) most = std::max(most, *bytes);
  }
  return most;
}

Workspace workspace_layout(const HstuLayerProblem& problem, void* base) {
  const std::int64_t t = problem.total_tokens, d = problem.model_dim, hv = problem.attention_width();
  const std::int64_t w = problem.uvqk_width();
  auto* bytes = static_cast<unsigned char*>(base);
  std::int64_t offset = 0;
  const auto take = [&](std::int64_t size) {
    unsigned char* at = bytes == nullptr ? nullptr : bytes + offset;
    offset += align_section(size);
    return at;
  };
  Workspace ws;
  ws.uvqk_weight = reinterpret_cast<std::uint16_t*>(take(w * d * 2));
  ws.uvqk_bias = reinterpret_cast<std::uint16_t*>(take(w * 2));
  ws.output_weight = reinterpret_cast<std::uint16_t*>(take(d * hv * 2));
  ws.output_bias = reinterpret_cast<std::uint16_t*>(take(d * 2));
  ws.g = reinterpret_cast<std::uint16_t*>(take(t * hv * 2));
  ws.grad_g = reinterpret_cast<std::uint16_t*>(take(t * hv * 2));
  const auto blocks = blocks_of(problem);
  for (int i = 0; i < 4; ++i) ws.grad_p[i] = reinterpret_cast<std::uint16_t*>(take(t * blocks[i].width * 2));
  ws.grad_n = reinterpret_cast<float*>(take(t * d * 4));
  ws.partials = take(kernels::param_grads_workspace_bytes(t, std::max(d, hv)));
  ws.attention_bytes = attention_workspace_bytes(problem);
  ws.attention = take(ws.attention_bytes);
  ws.total_bytes = offset;
  return ws;
}

// The forward's saved activations (hstu_layer_saved.hpp).
struct Saved {
  std::uint16_t* n;
  std::array<std::uint16_t*, 4> p;  // u, v, q, k
  std::uint16_t* a;
  float *mean1, *rstd1, *mean2, *rstd2;
};
Saved saved_views(const HstuLayerProblem& problem, void* saved) {
  const detail::HstuLayerSavedLayout layout = detail::hstu_layer_saved_layout_16bit(problem);
  auto* base = static_cast<unsigned char*>(saved);
  const auto half = [base](std::int64_t offset) { return reinterpret_cast<std::uint16_t*>(base + offset); };
  const auto single = [base](std::int64_t offset) { return reinterpret_cast<float*>(base + offset); };
  return {half(layout.n), {half(layout.u), half(layout.v), half(layout.q), half(layout.k)}, half(layout.a),
          single(layout.mean1), single(layout.rstd1), single(layout.mean2), single(layout.rstd2)};
}

Status cast_weights(const HstuLayerProblem& problem, const HstuLayerWeights& weights, const Workspace& ws,
                    void* stream) {
  const std::int64_t d = problem.model_dim, w = problem.uvqk_width(), hv = problem.attention_width();
  const std::pair<const float*, std::uint16_t*> tensors[] = {
      {weights.uvqk_weight, ws.uvqk_weight}, {weights.uvqk_bias, ws.uvqk_bias},
      {weights.output_weight, ws.output_weight}, {weights.output_bias, ws.output_bias}};
  const std::int64_t counts[] = {w * d, w, d * hv, d};
  for (int i = 0; i < 4; ++i) {
    PARITY_RETURN_IF_ERROR(nn::gpu::cast(counts[i], tensors[i].first, DType::kF32, tensors[i].second, DType::kBF16, stream));
  }
  return Status::ok();
}

nn::LinearProblem projection(const HstuLayerProblem& problem, std::int64_t in, std::int64_t out) {
  return detail::hstu_layer_projection(problem, in, out, DType::kBF16);
}

AttentionForwardArgs attention_args(const HstuLayerForwardArgs& args, const Saved& s) {
  AttentionForwardArgs a;
  a.q = s.p[2];
  a.k = s.p[3];
  a.v = s.p[1];
  a.q_offsets = args.seq_offsets;
  a.kv_offsets = args.seq_offsets;
  a.num_targets = args.num_targets;
  a.out = s.a;
  return a;
}

Status require_gpu_layer(const HstuLayerProblem& problem, const ExecutionContext& context) {
  if (context.device != DeviceKind::kGpu) return unsupported("runs on the GPU only");
  if (problem.dtype != DType::kBF16) {
    return unsupported("the GPU variant takes bf16 activations (dtype=", dtype_name(problem.dtype), ")");
  }
  // 16-byte rows and block starts: the bf16 GEMMs' and the attention's loads.
  if (problem.model_dim % 8 != 0 || problem.attention_width() % 8 != 0 ||
      (static_cast<std::int64_t>(problem.heads) * problem.dim_qk) % 8 != 0) {
    return unsupported("model_dim=", problem.model_dim, ", heads*dim_v=", problem.attention_width(),
                       " and heads*dim_qk=", problem.heads * problem.dim_qk, " must be multiples of 8");
  }
  return Status::ok();
}

// The attention's GPU variants must take the layer's attention problem, both ways.
Status require_attention(const HstuLayerProblem& problem, const ExecutionContext& context) {
  auto forward = select_variant(attention_forward_variants(), problem.attention(), context);
  if (!forward.is_ok()) return forward.status().with_context("hstu layer attention");
  auto backward = select_variant(attention_backward_variants(), problem.attention(), context);
  if (!backward.is_ok()) return backward.status().with_context("hstu layer attention backward");
  return Status::ok();
}

Status forward(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args, const Workspace& ws,
               const ExecutionContext& context) {
  const std::int64_t t = problem.total_tokens, d = problem.model_dim, hv = problem.attention_width();
  if (t == 0) return Status::ok();
  const Saved s = saved_views(problem, args.saved);
  const HstuLayerWeights& w = args.weights;
  PARITY_RETURN_IF_ERROR(cast_weights(problem, w, ws, context.stream));
  PARITY_RETURN_IF_ERROR(kernels::layer_norm_forward(t, d, static_cast<const std::uint16_t*>(args.x), w.norm_weight,
                                                     w.norm_bias, problem.layer_norm_epsilon, s.n, s.mean1, s.rstd1,
                                                     context.stream));
  const auto blocks = blocks_of(problem);
  for (int i = 0; i < 4; ++i) {
    nn::LinearForwardArgs linear{s.n, ws.uvqk_weight + blocks[i].first_row * d, ws.uvqk_bias + blocks[i].first_row,
                                 s.p[i], nullptr};
    PARITY_RETURN_IF_ERROR(nn::linear_forward(projection(problem, d, blocks[i].width), linear, context));
  }
  PARITY_RETURN_IF_ERROR(attention_forward(problem.attention(), attention_args(args, s), context));
  PARITY_RETURN_IF_ERROR(kernels::gate_forward(t, hv, s.p[0], s.a, w.output_norm_weight, w.output_norm_bias,
                                               problem.layer_norm_epsilon, ws.g, s.mean2, s.rstd2, context.stream));
  // y = x + g W_out^T + b_out: the GEMM adds its product and bias to the copy of x (beta = 1).
  PARITY_RETURN_IF_ERROR(kernels::copy_device(args.x, args.y, t * d * 2, context.stream));
  gemm::GemmArgs out;
  out.a = ws.output_weight;
  out.b = ws.g;
  out.d = args.y;
  out.bias = ws.output_bias;
  out.beta = 1.0f;
  return nn::detail::run_gemm(
      nn::detail::linear_forward_gemm(t, hv, d, DType::kBF16, nn::MathMode::kFp32, gemm::RunEpilogue::kBias), out,
      context);
}

Status zero_gradients(const HstuLayerProblem& problem, const HstuLayerGradients& grads, void* stream) {
  const std::int64_t d = problem.model_dim, w = problem.uvqk_width(), hv = problem.attention_width();
  const std::pair<float*, std::int64_t> tensors[] = {
      {grads.norm_weight, d}, {grads.norm_bias, d}, {grads.uvqk_weight, w * d}, {grads.uvqk_bias, w},
      {grads.output_norm_weight, hv}, {grads.output_norm_bias, hv}, {grads.output_weight, d * hv},
      {grads.output_bias, d}};
  for (const auto& [pointer, count] : tensors) PARITY_RETURN_IF_ERROR(kernels::zero_device(pointer, count * 4, stream));
  return Status::ok();
}

// d p's four blocks -> each block's weight and bias gradient, and d n = sum_i d p_i W_i (fp32).
Status projection_backward(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args, const Saved& s,
                           const Workspace& ws, const ExecutionContext& context) {
  const std::int64_t t = problem.total_tokens, d = problem.model_dim;
  const auto blocks = blocks_of(problem);
  for (int i = 0; i < 4; ++i) {
    const std::uint16_t* weight = ws.uvqk_weight + blocks[i].first_row * d;
    nn::LinearBackwardArgs linear;
    linear.input = s.n;
    linear.weight = weight;
    linear.grad_output = ws.grad_p[i];
    linear.grad_weight = args.grads.uvqk_weight + blocks[i].first_row * d;
    linear.grad_bias = args.grads.uvqk_bias + blocks[i].first_row;
    PARITY_RETURN_IF_ERROR(nn::linear_backward(projection(problem, d, blocks[i].width), linear, context));
    gemm::GemmRunProblem data = nn::detail::linear_data_grad_gemm(t, d, blocks[i].width, DType::kBF16,
                                                                  nn::MathMode::kFp32);
    data.shape.c_dtype = DType::kF32;  // d n accumulates the four blocks in fp32
    gemm::GemmArgs data_args;
    data_args.a = weight;
    data_args.b = ws.grad_p[i];
    data_args.d = ws.grad_n;
    data_args.beta = i == 0 ? 0.0f : 1.0f;
    PARITY_RETURN_IF_ERROR(nn::detail::run_gemm(data, data_args, context));
  }
  return Status::ok();
}

Status backward(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args, const Workspace& ws,
                const ExecutionContext& context) {
  const std::int64_t t = problem.total_tokens, d = problem.model_dim, hv = problem.attention_width();
  const HstuLayerGradients& grads = args.grads;
  if (t == 0) return zero_gradients(problem, grads, context.stream);
  const HstuLayerForwardArgs& fwd = args.forward;
  const HstuLayerWeights& w = fwd.weights;
  const Saved s = saved_views(problem, fwd.saved);
  const auto* x = static_cast<const std::uint16_t*>(fwd.x);
  const auto* dy = static_cast<const std::uint16_t*>(args.grad_y);
  PARITY_RETURN_IF_ERROR(cast_weights(problem, w, ws, context.stream));
  PARITY_RETURN_IF_ERROR(kernels::gate_forward(t, hv, s.p[0], s.a, w.output_norm_weight, w.output_norm_bias,
                                               problem.layer_norm_epsilon, ws.g, nullptr, nullptr, context.stream));
  nn::LinearBackwardArgs out;
  out.input = ws.g;
  out.weight = ws.output_weight;
  out.grad_output = dy;
  out.grad_input = ws.grad_g;
  out.grad_weight = grads.output_weight;
  out.grad_bias = grads.output_bias;
  PARITY_RETURN_IF_ERROR(nn::linear_backward(projection(problem, hv, d), out, context));
  std::uint16_t* grad_a = ws.g;  // g is dead once the output projection's backward has read it
  PARITY_RETURN_IF_ERROR(kernels::gate_backward(t, hv, ws.grad_g, s.p[0], s.a, s.mean2, s.rstd2,
                                                w.output_norm_weight, w.output_norm_bias, ws.grad_p[0], grad_a,
                                                context.stream));
  kernels::ParamGradsInputs gate_norm;
  gate_norm.grad_g = ws.grad_g;
  gate_norm.u = s.p[0];
  gate_norm.in = s.a;
  gate_norm.mean = s.mean2;
  gate_norm.rstd = s.rstd2;
  PARITY_RETURN_IF_ERROR(kernels::layer_norm_param_grads(t, hv, gate_norm, grads.output_norm_weight,
                                                         grads.output_norm_bias, ws.partials, context.stream));
  AttentionBackwardArgs attention;
  attention.forward = attention_args(fwd, s);
  attention.grad_out = grad_a;
  attention.grad_q = ws.grad_p[2];
  attention.grad_k = ws.grad_p[3];
  attention.grad_v = ws.grad_p[1];
  PARITY_RETURN_IF_ERROR(attention_backward(problem.attention(), attention, ws.attention, context));
  PARITY_RETURN_IF_ERROR(projection_backward(problem, args, s, ws, context));
  PARITY_RETURN_IF_ERROR(kernels::layer_norm_backward(t, d, ws.grad_n, x, s.mean1, s.rstd1, w.norm_weight, dy,
                                                      static_cast<std::uint16_t*>(args.grad_x), context.stream));
  kernels::ParamGradsInputs input_norm;
  input_norm.grad_out = ws.grad_n;
  input_norm.in = x;
  input_norm.mean = s.mean1;
  input_norm.rstd = s.rstd1;
  return kernels::layer_norm_param_grads(t, d, input_norm, grads.norm_weight, grads.norm_bias, ws.partials,
                                         context.stream);
}

class HstuLayerForwardGpu final : public HstuLayerForwardVariant {
 public:
  std::string_view name() const override { return "hstu_layer_forward_gpu"; }
  Status can_implement(const HstuLayerProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu_layer(problem, context));
    return require_attention(problem, context);
  }
  std::int64_t workspace_bytes(const HstuLayerProblem& problem) const override {
    return workspace_layout(problem, nullptr).total_bytes;
  }
  Status run(const HstuLayerProblem& problem, const HstuLayerForwardArgs& args, void* workspace,
             const ExecutionContext& context) const override {
    return forward(problem, args, workspace_layout(problem, workspace), context);
  }
};

class HstuLayerBackwardGpu final : public HstuLayerBackwardVariant {
 public:
  std::string_view name() const override { return "hstu_layer_backward_gpu"; }
  Status can_implement(const HstuLayerProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu_layer(problem, context));
    return require_attention(problem, context);
  }
  std::int64_t workspace_bytes(const HstuLayerProblem& problem) const override {
    return workspace_layout(problem, nullptr).total_bytes;
  }
  Status run(const HstuLayerProblem& problem, const HstuLayerBackwardArgs& args, void* workspace,
             const ExecutionContext& context) const override {
    return backward(problem, args, workspace_layout(problem, workspace), context);
  }
};

}  // namespace

void install_hstu_layer() {
  static const HstuLayerForwardGpu forward_variant;
  static const HstuLayerBackwardGpu backward_variant;
  detail::hstu_layer_forward_gpu_slot().install(&forward_variant);
  detail::hstu_layer_backward_gpu_slot().install(&backward_variant);
}

}  // namespace parity::attention::gpu_variants
