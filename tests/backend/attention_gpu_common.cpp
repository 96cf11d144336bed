// The GPU attention tests' helpers (attention_gpu_common.hpp): running the kernels and the error
// bounds of the check against the fp64 reference.
#include "backend/attention_gpu_common.hpp"

#include <cmath>
#include <cstring>
#include <string_view>

namespace parity::attention::gpu_testing {
namespace {

using testing::JaggedCase;

// Downloads `count` elements and checks the guard band after them is untouched.
template <typename T>
std::vector<T> download_checked(const parity::gpu::DeviceBuffer& buffer, std::size_t count,
                                const char* what) {
  const std::size_t bytes = count * sizeof(T);
  std::vector<std::uint8_t> raw(buffer.size_bytes());
  EXPECT_TRUE(buffer.copy_to_host(raw.data(), raw.size()).is_ok());
  for (std::size_t i = bytes; i < std::min(raw.size(), bytes + kGuardBytes); ++i) {
    if (raw[i] != 0xff) {
      ADD_FAILURE() << what << ": guard byte " << i - bytes << " after the output was overwritten";
      break;
    }
  }
  std::vector<T> out(count);
  if (bytes > 0) std::memcpy(out.data(), raw.data(), bytes);
  return out;
}

// The forward variant named `name` (attention_forward_variants()), run directly.
Status run_forward_variant(const char* name, const AttentionProblem& p, const AttentionForwardArgs& a,
                           const ExecutionContext& context) {
  for (const auto* variant : attention_forward_variants()) {
    if (variant->name() != name) continue;
    PARITY_RETURN_IF_ERROR(variant->can_implement(p, context));
    return variant->run(p, a, nullptr, context);
  }
  return not_found("forward variant ", name);
}

// ---- error bounds --------------------------------------------------------------------------
// The kernels accumulate in fp32 like the CPU path (testing::error_bounds gives that part, E),
// and in one more place round to the element type: the attention weights a_ij (act(alpha s_ij),
// or the softmax p_ij) before the tensor-core products with V and dO, and the score gradients
// dS_ij before the products with K and Q. Rounding to nearest moves each term by at most u_out
// times its magnitude, so each output element x gets the extra bound u_out * M_x with
//   out_iy:  sum_j |a_ij| |v_jy| (/N)        grad_v_jy: sum_i |a_ij| |dO_iy| (/N)
//   grad_q_ic: alpha sum_j |dS_ij| |k_jc| (/N) grad_k_jc: alpha sum_i |dS_ij| |q_ic| (/N)
// with dS_ij = act'(alpha s_ij) dP_ij (pointwise) or p_ij (dP_ij - D_i) (softmax), dP_ij =
// dO_i.v_j, D_i = dO_i.out_i, the /N for the pointwise kinds; M is computed in fp64 from the same
// inputs. Check: |got - ref| <= u_out |ref| + (1 + u_out) (E + u_out M) (the u_out |ref| term: the
// output rounding). A pair the mask gets wrong moves an output by |a_ij v_jy|, a term of M that is
// larger than u_out M (u_out = 2^-8 or 2^-11) unless the sum has hundreds of larger terms.
// The wgmma forward computes SiLU and sigmoid through tanh.approx.f32 (max relative error 2^-11
// in PTX ISA 9.1, 2^-10.987 in earlier editions: the looser is used): sigmoid(x) =
// (1 + tanh(x/2)) / 2 is off by |tanh(x/2)| 2^-10.987 / 2, SiLU by |x| times that, before the
// weight is rounded. Each weight a_ij thus moves by at most e_ij, and out_iy by
// A = sum_j e_ij |v_jy| (/N) (`out_activation`) on top of the other bounds; the rounding then
// moves it by at most u_out (|a_ij| + e_ij), so the out check becomes
// |got - ref| <= u_out |ref| + (1 + u_out) (E + u_out M + (1 + u_out) A).
// The tanh backward (a backward variant named *_tanh) takes the activation's value and derivative
// from the same tanh.approx sigmoid: the weight error e_ij (above) moves dV_jy by e_ij |dO_iy|
// (/N), the derivative error e'_ij (tanh_derivative_error) moves dS_ij by e'_ij |dP_ij| and so
// dQ_ix by alpha e'_ij |dP_ij| |k_jx| (/N) and dK_jx by alpha e'_ij |dP_ij| |q_ix| (/N)
// (`grad_*_activation`), checked as A above.
struct Magnitudes {
  std::vector<double> out, grad_q, grad_k, grad_v;
  std::vector<double> out_activation;  // A: zero unless the forward approximates the activation
  std::vector<double> grad_q_activation, grad_k_activation, grad_v_activation;  // tanh backward
};

double tanh_activation_error(PointwiseActivation a, double x) {
  const double sigmoid_error = std::abs(std::tanh(x / 2)) * std::pow(2.0, -10.987) / 2;
  switch (a) {
    case PointwiseActivation::kSilu:
      return std::abs(x) * sigmoid_error;
    case PointwiseActivation::kSigmoid:
      return sigmoid_error;
    case PointwiseActivation::kGelu:
    case PointwiseActivation::kRelu:
      return 0;
  }
  return 0;
}

// The derivative's error when sigma carries e = |tanh(x/2)| 2^-10.987 / 2: d/dsigma of
// sigma (1 + x (1 - sigma)) is 1 + x (1 - 2 sigma), of sigma (1 - sigma) 1 - 2 sigma; the e^2
// terms bound the rest (backward_wgmma_kernel.cuh, activation_with_derivative).
double tanh_derivative_error(PointwiseActivation a, double x) {
  const double e = std::abs(std::tanh(x / 2)) * std::pow(2.0, -10.987) / 2;
  const double sigma = 1 / (1 + std::exp(-x));
  switch (a) {
    case PointwiseActivation::kSilu:
      return e * std::abs(1 + x * (1 - 2 * sigma)) + std::abs(x) * e * e;
    case PointwiseActivation::kSigmoid:
      return e * std::abs(1 - 2 * sigma) + e * e;
    case PointwiseActivation::kGelu:
    case PointwiseActivation::kRelu:
      return 0;
  }
  return 0;
}

double activation_of(PointwiseActivation a, double x) {
  switch (a) {
    case PointwiseActivation::kSilu:
      return x / (1 + std::exp(-x));
    case PointwiseActivation::kGelu:
      return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case PointwiseActivation::kRelu:
      return x > 0 ? x : 0;
    case PointwiseActivation::kSigmoid:
      return 1 / (1 + std::exp(-x));
  }
  return 0;
}

constexpr double kInvSqrt2Pi = 0.39894228040143268;

double derivative_of(PointwiseActivation a, double x) {
  const double s = 1 / (1 + std::exp(-x));
  switch (a) {
    case PointwiseActivation::kSilu:
      return s * (1 + x * (1 - s));
    case PointwiseActivation::kGelu:
      return 0.5 * (1 + std::erf(x / std::sqrt(2.0))) + x * std::exp(-0.5 * x * x) * kInvSqrt2Pi;
    case PointwiseActivation::kRelu:
      return x > 0 ? 1 : 0;
    case PointwiseActivation::kSigmoid:
      return s * (1 - s);
  }
  return 0;
}

double dot(const std::vector<double>& x, std::int64_t x_at, const std::vector<double>& y,
           std::int64_t y_at, int n) {
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += x[static_cast<std::size_t>(x_at + i)] * y[static_cast<std::size_t>(y_at + i)];
  return sum;
}

Magnitudes rounding_magnitudes(const JaggedCase& c, const std::vector<double>& ref_out,
                               const std::vector<double>& ref_lse, bool tanh_activation,
                               bool tanh_backward) {
  const AttentionProblem& p = c.problem;
  const ref::AttentionRefInputs& in = c.inputs;
  const int h_count = p.heads, dqk = p.dim_qk, dv = p.dim_v;
  const bool softmax = p.kind == AttentionKind::kSoftmax;
  const double alpha = p.effective_alpha();
  const double scale = softmax ? 1.0 : 1.0 / static_cast<double>(p.max_seq_len);
  Magnitudes m;
  m.out.assign(c.q_bits.size() / dqk * dv, 0);
  m.out_activation.assign(m.out.size(), 0);
  m.grad_q.assign(c.q_bits.size(), 0);
  m.grad_k.assign(c.k_bits.size(), 0);
  m.grad_v.assign(c.v_bits.size(), 0);
  m.grad_q_activation.assign(m.grad_q.size(), 0);
  m.grad_k_activation.assign(m.grad_k.size(), 0);
  m.grad_v_activation.assign(m.grad_v.size(), 0);
  const auto& kv_offsets = p.cross ? in.kv_offsets : in.q_offsets;
  for (std::int64_t b = 0; b < p.batch; ++b) {
    const std::int64_t q0 = in.q_offsets[b], kv0 = kv_offsets[b];
    const std::int64_t len_q = in.q_offsets[b + 1] - q0, len_kv = kv_offsets[b + 1] - kv0;
    const std::int64_t targets = p.has_num_targets ? in.num_targets[b] : 0;
    for (int h = 0; h < h_count; ++h) {
      for (std::int64_t i = 0; i < len_q; ++i) {
        const std::int64_t qi = (q0 + i) * h_count + h;
        const double d_i = dot(c.grad_out, qi * dv, ref_out, qi * dv, dv);
        for (std::int64_t j = 0; j < len_kv; ++j) {
          if (!ref::attention_mask_ref(p, len_q, len_kv, targets, i, j)) continue;
          const std::int64_t kj = (kv0 + j) * h_count + h;
          const double s = alpha * dot(in.q, qi * dqk, in.k, kj * dqk, dqk);
          const double weight = softmax ? std::exp(s - ref_lse[static_cast<std::size_t>(qi)])
                                        : activation_of(p.activation, s);
          const double weight_error =
              softmax || !tanh_activation ? 0 : tanh_activation_error(p.activation, s);
          const double dp = dot(c.grad_out, qi * dv, in.v, kj * dv, dv);
          const double ds = softmax ? weight * (dp - d_i) : derivative_of(p.activation, s) * dp;
          const bool tanh_grads = !softmax && tanh_backward;
          const double grad_weight_error = tanh_grads ? tanh_activation_error(p.activation, s) : 0;
          const double ds_error =
              tanh_grads ? tanh_derivative_error(p.activation, s) * std::abs(dp) : 0;
          for (int y = 0; y < dv; ++y) {
            m.out[static_cast<std::size_t>(qi * dv + y)] +=
                std::abs(weight * in.v[static_cast<std::size_t>(kj * dv + y)]) * scale;
            m.out_activation[static_cast<std::size_t>(qi * dv + y)] +=
                weight_error * std::abs(in.v[static_cast<std::size_t>(kj * dv + y)]) * scale;
            m.grad_v[static_cast<std::size_t>(kj * dv + y)] +=
                std::abs(weight * c.grad_out[static_cast<std::size_t>(qi * dv + y)]) * scale;
            m.grad_v_activation[static_cast<std::size_t>(kj * dv + y)] +=
                grad_weight_error * std::abs(c.grad_out[static_cast<std::size_t>(qi * dv + y)]) *
                scale;
          }
          for (int x = 0; x < dqk; ++x) {
            m.grad_q[static_cast<std::size_t>(qi * dqk + x)] +=
                std::abs(ds * in.k[static_cast<std::size_t>(kj * dqk + x)]) * alpha * scale;
            m.grad_k[static_cast<std::size_t>(kj * dqk + x)] +=
                std::abs(ds * in.q[static_cast<std::size_t>(qi * dqk + x)]) * alpha * scale;
            m.grad_q_activation[static_cast<std::size_t>(qi * dqk + x)] +=
                ds_error * std::abs(in.k[static_cast<std::size_t>(kj * dqk + x)]) * alpha * scale;
            m.grad_k_activation[static_cast<std::size_t>(kj * dqk + x)] +=
                ds_error * std::abs(in.q[static_cast<std::size_t>(qi * dqk + x)]) * alpha * scale;
          }
        }
      }
    }
  }
  return m;
}

void expect_within(const char* what, DType dtype, const std::vector<std::uint16_t>& got,
                   const std::vector<double>& want, double fp32_bound,
                   const std::vector<double>& magnitudes,
                   const std::vector<double>* activation_errors = nullptr) {
  ASSERT_EQ(got.size(), want.size()) << what;
  const double u_out = unit_roundoff(dtype);
  double max_error = 0;
  std::size_t failures = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double value = testing::from_bits(dtype, got[i]);
    const double error = std::abs(value - want[i]);
    max_error = std::max(max_error, error);
    const double activation_error =
        activation_errors == nullptr ? 0 : (1 + u_out) * (*activation_errors)[i];
    const double tolerance = u_out * std::abs(want[i]) +
                             (1 + u_out) * (fp32_bound + u_out * magnitudes[i] + activation_error);
    if (!(error <= tolerance) && failures++ < 3) {
      ADD_FAILURE() << what << "[" << i << "]: got " << value << ", want " << want[i] << " (error "
                    << error << " > tolerance " << tolerance << ")";
    }
  }
  EXPECT_EQ(failures, 0u) << what << ": " << failures
                          << " elements out of tolerance, max abs error " << max_error;
}

std::int64_t longest(const JaggedCase& c) {
  const AttentionProblem& p = c.problem;
  std::int64_t n = testing::max_of(lengths_from_offsets(c.inputs.q_offsets.data(), p.batch));
  if (p.cross)
    n = std::max(n, testing::max_of(lengths_from_offsets(c.inputs.kv_offsets.data(), p.batch)));
  return p.kind == AttentionKind::kSoftmax ? std::min(n, p.max_seq_len) : n;
}

// Whether the forward that runs (the named variant, else the op's choice) is a wgmma one (round
// 2 or warp-specialized: both take SiLU and sigmoid through tanh.approx).
bool forward_is_wgmma(const AttentionProblem& p, const char* forward_variant) {
  const auto is_wgmma = [](std::string_view name) {
    return name.starts_with("attention_forward_gpu_wgmma");
  };
  if (forward_variant != nullptr) return is_wgmma(forward_variant);
  ExecutionContext gpu_context;
  gpu_context.device = DeviceKind::kGpu;
  const auto choice = select_variant(attention_forward_variants(), p, gpu_context);
  return choice.is_ok() && is_wgmma(choice->variant->name());
}

// The backward's activation error: a variant named *_tanh or *_tanh_fused_dq, or the op's own
// choice when none is named (the tanh pair walk is the default where it runs).
bool names_tanh_backward(std::string_view name) {
  return name.ends_with("_tanh") || name.ends_with("_tanh_fused_dq");
}
bool backward_is_tanh(const AttentionProblem& p, const char* backward_variant) {
  if (backward_variant != nullptr) return names_tanh_backward(backward_variant);
  ExecutionContext gpu_context;
  gpu_context.device = DeviceKind::kGpu;
  const auto choice = select_variant(attention_backward_variants(), p, gpu_context);
  return choice.is_ok() && names_tanh_backward(choice->variant->name());
}

}  // namespace

AttentionProblem problem_of(AttentionKind kind, int heads, int dim, std::int64_t max_seq_len,
                            DType dtype, int dim_v) {
  AttentionProblem p;
  p.kind = kind;
  p.heads = heads;
  p.dim_qk = dim;
  p.dim_v = dim_v > 0 ? dim_v : dim;
  p.max_seq_len = max_seq_len;
  p.dtype = dtype;
  return p;
}

Result<const AttentionBackwardVariant*> backward_variant_named(const char* name,
                                                               const AttentionProblem& p,
                                                               const ExecutionContext& context) {
  for (const auto* variant : attention_backward_variants()) {
    if (variant->name() != name) continue;
    PARITY_RETURN_IF_ERROR(variant->can_implement(p, context));
    return variant;
  }
  return not_found("backward variant ", name);
}

GpuOutputs run_gpu(const JaggedCase& c, bool with_backward, bool deterministic,
                   const char* forward_variant, const char* backward_variant) {
  const AttentionProblem& p = c.problem;
  const auto q = upload(c.q_bits), k = upload(c.k_bits), v = upload(c.v_bits),
             grad_out = upload(c.grad_out_bits);
  const auto q_offsets = upload(c.inputs.q_offsets);
  const auto kv_offsets = upload(p.cross ? c.inputs.kv_offsets : c.inputs.q_offsets);
  const auto targets = upload(c.inputs.num_targets);
  const std::size_t out_count = static_cast<std::size_t>(p.total_q * p.heads * p.dim_v);
  const std::size_t lse_count = static_cast<std::size_t>(p.total_q * p.heads);
  const auto out = upload(std::vector<std::uint16_t>(), out_count * 2 + kGuardBytes);
  const auto lse = upload(std::vector<float>(), lse_count * 4 + kGuardBytes);
  AttentionForwardArgs a;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.q_offsets = q_offsets.as<std::int64_t>();
  a.kv_offsets = p.cross ? kv_offsets.as<std::int64_t>() : nullptr;
  a.num_targets = p.has_num_targets ? targets.as<std::int32_t>() : nullptr;
  a.out = out.data();
  a.softmax_lse = p.kind == AttentionKind::kSoftmax ? lse.as<float>() : nullptr;
  ExecutionContext gpu_context;
  gpu_context.device = DeviceKind::kGpu;
  const Status forward = forward_variant == nullptr
                             ? attention_forward(p, a, gpu_context)
                             : run_forward_variant(forward_variant, p, a, gpu_context);
  EXPECT_TRUE(forward.is_ok()) << forward.to_string();
  GpuOutputs o;
  o.out = download_checked<std::uint16_t>(out, out_count, "out");
  if (p.kind == AttentionKind::kSoftmax) o.lse = download_checked<float>(lse, lse_count, "lse");
  if (!with_backward) return o;

  AttentionProblem bp = p;
  bp.deterministic = deterministic || p.deterministic;
  const auto grad_q = upload(std::vector<std::uint16_t>(), c.q_bits.size() * 2 + kGuardBytes);
  const auto grad_k = upload(std::vector<std::uint16_t>(), c.k_bits.size() * 2 + kGuardBytes);
  const auto grad_v = upload(std::vector<std::uint16_t>(), c.v_bits.size() * 2 + kGuardBytes);
  const auto named = backward_variant == nullptr
                         ? Result<const AttentionBackwardVariant*>(nullptr)
                         : backward_variant_named(backward_variant, bp, gpu_context);
  EXPECT_TRUE(named.is_ok()) << named.status().to_string();
  auto workspace_bytes = named.is_ok() && *named != nullptr
                             ? Result<std::int64_t>((*named)->workspace_bytes(bp))
                             : attention_backward_workspace_bytes(bp, gpu_context);
  EXPECT_TRUE(workspace_bytes.is_ok()) << workspace_bytes.status().to_string();
  const auto workspace =
      upload(std::vector<std::uint8_t>(),
             static_cast<std::size_t>(workspace_bytes.is_ok() ? workspace_bytes.value() : 0));
  AttentionBackwardArgs b;
  b.forward = a;
  b.grad_out = grad_out.data();
  b.grad_q = grad_q.data();
  b.grad_k = grad_k.data();
  b.grad_v = grad_v.data();
  const Status backward = named.is_ok() && *named != nullptr
                              ? (*named)->run(bp, b, workspace.data(), gpu_context)
                              : attention_backward(bp, b, workspace.data(), gpu_context);
  EXPECT_TRUE(backward.is_ok()) << backward.to_string();
  o.grad_q = download_checked<std::uint16_t>(grad_q, c.q_bits.size(), "grad_q");
  o.grad_k = download_checked<std::uint16_t>(grad_k, c.k_bits.size(), "grad_k");
  o.grad_v = download_checked<std::uint16_t>(grad_v, c.v_bits.size(), "grad_v");
  return o;
}

void expect_gpu_matches_reference(const JaggedCase& c, bool with_backward,
                                  const char* forward_variant,
                                  const char* backward_variant) {
  const AttentionProblem& p = c.problem;
  const testing::ErrorBounds bounds = testing::error_bounds(p, longest(c));
  const GpuOutputs o = run_gpu(c, with_backward, false, forward_variant, backward_variant);
  std::vector<double> out, lse;
  ASSERT_TRUE(ref::attention_forward_ref(p, c.inputs, &out, &lse).is_ok());
  const bool tanh_backward = with_backward && backward_is_tanh(p, backward_variant);
  const Magnitudes m =
      rounding_magnitudes(c, out, lse, forward_is_wgmma(p, forward_variant), tanh_backward);
  expect_within("out", p.dtype, o.out, out, bounds.out, m.out, &m.out_activation);
  for (std::size_t r = 0; r < lse.size(); ++r) {
    if (std::isinf(lse[r])) {
      EXPECT_TRUE(std::isinf(o.lse[r]) && o.lse[r] < 0) << "lse[" << r << "]: " << o.lse[r];
    } else {
      // fp32 lse: score error and log-sum error, the same K u (1 + 4S) form as the softmax out
      // bound.
      EXPECT_NEAR(o.lse[r], lse[r], bounds.out + 1e-6 * std::abs(lse[r])) << "lse[" << r << "]";
    }
  }
  if (!with_backward) return;
  std::vector<double> grad_q, grad_k, grad_v;
  ASSERT_TRUE(
      ref::attention_backward_ref(p, c.inputs, c.grad_out, &grad_q, &grad_k, &grad_v).is_ok());
  expect_within("grad_q", p.dtype, o.grad_q, grad_q, bounds.grad_q, m.grad_q, &m.grad_q_activation);
  expect_within("grad_k", p.dtype, o.grad_k, grad_k, bounds.grad_k, m.grad_k, &m.grad_k_activation);
  expect_within("grad_v", p.dtype, o.grad_v, grad_v, bounds.grad_v, m.grad_v, &m.grad_v_activation);
}

void expect_error(const Status& status, StatusCode code, const std::string& fragment) {
  EXPECT_EQ(status.code(), code) << status.to_string();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.to_string();
}

}  // namespace parity::attention::gpu_testing
