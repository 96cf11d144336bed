// GPU jagged attention kernels (through the op's GPU slots) against the fp64 reference: every mask
// case, jagged lengths 0/1/127/129 and tile +- 1, head dims, both 16-bit dtypes, forward and
// backward, GDPA cross attention, the deterministic backward (bitwise repeatable), guard bands
// and the reasons the kernels give for what they do not run; the 128-row forward variant by name
// on the same cases, and the Hopper wgmma forward by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "backends/gpu/attention/attention_launch.hpp"
#include "common/test_support.hpp"
#include "parity/attention/attention_op.hpp"
#include "parity/core/gpu.hpp"
#include "unit/attention_test_util.hpp"

namespace parity::attention {
namespace {

using testing::JaggedCase;
using testing::make_case;

constexpr std::int64_t kTile =
    64;  // the kernels' q and kv tile (src/backends/gpu/attention/params.cuh)
constexpr std::size_t kGuardBytes = 256;

AttentionProblem problem_of(AttentionKind kind, int heads, int dim, std::int64_t max_seq_len,
                            DType dtype = DType::kBF16, int dim_v = 0) {
  AttentionProblem p;
  p.kind = kind;
  p.heads = heads;
  p.dim_qk = dim;
  p.dim_v = dim_v > 0 ? dim_v : dim;
  p.max_seq_len = max_seq_len;
  p.dtype = dtype;
  return p;
}

template <typename T>
parity::gpu::DeviceBuffer upload(const std::vector<T>& host, std::size_t guard_bytes = 0) {
  const std::size_t bytes = host.size() * sizeof(T);
  auto buffer = parity::gpu::DeviceBuffer::allocate(std::max<std::size_t>(bytes + guard_bytes, 16));
  EXPECT_TRUE(buffer.is_ok());
  EXPECT_TRUE(buffer->fill_bytes(0xff).is_ok());  // NaN in every float type: the guard band
  if (bytes > 0) {
    EXPECT_TRUE(buffer->copy_from_host(host.data(), bytes).is_ok());
  }
  return std::move(buffer).value();
}

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

struct GpuOutputs {
  std::vector<std::uint16_t> out, grad_q, grad_k, grad_v;
  std::vector<float> lse;
};

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

// The backward variant named `name` (attention_backward_variants()): its workspace size, or the
// reason it cannot run.
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

// forward_variant, backward_variant: null = the op's choice (attention_forward,
// attention_backward), else that variant by name.
GpuOutputs run_gpu(const JaggedCase& c, bool with_backward, bool deterministic = false,
                   const char* forward_variant = nullptr, const char* backward_variant = nullptr) {
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
struct Magnitudes {
  std::vector<double> out, grad_q, grad_k, grad_v;
  std::vector<double> out_activation;  // A: zero unless the forward approximates the activation
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
                               const std::vector<double>& ref_lse, bool tanh_activation) {
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
          for (int y = 0; y < dv; ++y) {
            m.out[static_cast<std::size_t>(qi * dv + y)] +=
                std::abs(weight * in.v[static_cast<std::size_t>(kj * dv + y)]) * scale;
            m.out_activation[static_cast<std::size_t>(qi * dv + y)] +=
                weight_error * std::abs(in.v[static_cast<std::size_t>(kj * dv + y)]) * scale;
            m.grad_v[static_cast<std::size_t>(kj * dv + y)] +=
                std::abs(weight * c.grad_out[static_cast<std::size_t>(qi * dv + y)]) * scale;
          }
          for (int x = 0; x < dqk; ++x) {
            m.grad_q[static_cast<std::size_t>(qi * dqk + x)] +=
                std::abs(ds * in.k[static_cast<std::size_t>(kj * dqk + x)]) * alpha * scale;
            m.grad_k[static_cast<std::size_t>(kj * dqk + x)] +=
                std::abs(ds * in.q[static_cast<std::size_t>(qi * dqk + x)]) * alpha * scale;
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

// Forward (and backward) on the GPU against the fp64 reference.
void expect_gpu_matches_reference(const JaggedCase& c, bool with_backward = true,
                                  const char* forward_variant = nullptr,
                                  const char* backward_variant = nullptr) {
  const AttentionProblem& p = c.problem;
  const testing::ErrorBounds bounds = testing::error_bounds(p, longest(c));
  const GpuOutputs o = run_gpu(c, with_backward, false, forward_variant, backward_variant);
  std::vector<double> out, lse;
  ASSERT_TRUE(ref::attention_forward_ref(p, c.inputs, &out, &lse).is_ok());
  const Magnitudes m = rounding_magnitudes(c, out, lse, forward_is_wgmma(p, forward_variant));
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
  expect_within("grad_q", p.dtype, o.grad_q, grad_q, bounds.grad_q, m.grad_q);
  expect_within("grad_k", p.dtype, o.grad_k, grad_k, bounds.grad_k, m.grad_k);
  expect_within("grad_v", p.dtype, o.grad_v, grad_v, bounds.grad_v, m.grad_v);
}

TEST(AttentionGpu, HstuJaggedLengthsAndTargets) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15201);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 64, 200, dtype);
    // Lengths 0, 1, 127, 129, the tile +- 1 and 2 tiles + 1; num_targets 0, 1, longer than the
    // sequence.
    expect_gpu_matches_reference(
        make_case(p, {0, 1, 127, 129, kTile - 1, kTile + 1, kTile, 2 * kTile + 1}, {},
                  {3, 0, 1, 20, 200, 5, 64, 0}, seed));
    expect_gpu_matches_reference(make_case(p, {129, 2, kTile}, {}, {}, seed + 1));
  }
}

TEST(AttentionGpu, HstuContextualWindowAndNonCausal) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15202);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 64, 300);
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {40, 5, 0, 290, 9}, {}, {4, 1, 0, 12, 3}, seed));
  p.contextual_len = 0;
  p.max_attn_len = 16;  // windows narrower and wider than a tile
  expect_gpu_matches_reference(make_case(p, {270, 3}, {}, {}, seed + 1));
  p.max_attn_len = 100;
  p.min_full_attn_len = 8;
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {280, 30}, {}, {5, 2}, seed + 2));
  p = problem_of(AttentionKind::kHstu, 2, 64, 300);
  p.causal = false;
  expect_gpu_matches_reference(make_case(p, {200, 7, 64}, {}, {3, 1, 0}, seed + 3));
}

TEST(AttentionGpu, HstuMaxSeqLenLongerThanEverySequence) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15203);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  expect_gpu_matches_reference(
      make_case(problem_of(AttentionKind::kHstu, 2, 64, 1000), {30, 65}, {}, {}, seed));
}

TEST(AttentionGpu, HeadDims64128And256AndMixed) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15204);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (int dim : {64, 128, 256}) {
    for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " " + std::string(attention_kind_name(kind)));
      const AttentionProblem p = problem_of(kind, 2, dim, 160);
      // d = 256 has a forward only (can_implement_backward says why).
      expect_gpu_matches_reference(make_case(p, {kTile + 1, 7, 150}, {}, {}, seed), dim != 256);
    }
  }
  // d_qk != d_v (64 and 128 either way).
  for (int dim_v : {128, 64}) {
    const int dim_qk = 192 - dim_v;
    for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
      SCOPED_TRACE("d_qk " + std::to_string(dim_qk) + " d_v " + std::to_string(dim_v) + " " +
                   std::string(attention_kind_name(kind)));
      const AttentionProblem p = problem_of(kind, 2, dim_qk, 160, DType::kBF16, dim_v);
      expect_gpu_matches_reference(make_case(p, {kTile + 1, 33}, {}, {}, seed + 1));
    }
  }
}

TEST(AttentionGpu, SoftmaxCausalNonCausalAndTruncation) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15205);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    AttentionProblem p = problem_of(AttentionKind::kSoftmax, 2, 64, 100, dtype);
    expect_gpu_matches_reference(
        make_case(p, {0, 1, 127, kTile + 1, kTile - 1, 230}, {}, {}, seed));  // cut at 100
    p.causal = false;
    expect_gpu_matches_reference(make_case(p, {129, 5, 64}, {}, {}, seed + 1));
  }
}

TEST(AttentionGpu, GdpaCrossAttentionWithFewKeysEveryActivation) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15206);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu,
                          PointwiseActivation::kSigmoid, PointwiseActivation::kRelu}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = problem_of(AttentionKind::kGdpa, 2, 64, 130);
    p.activation = activation;
    p.causal = false;
    // relu's derivative jumps at 0, where an fp32 and an fp64 score may fall on different sides.
    const bool with_backward = activation != PointwiseActivation::kRelu;
    expect_gpu_matches_reference(make_case(p, {129, 0, 40, 3}, {64, 64, 1, 0}, {}, seed),
                                 with_backward);
    // Self-attention GDPA with the causal mask.
    p.causal = true;
    expect_gpu_matches_reference(make_case(p, {100, 65}, {}, {}, seed + 1), with_backward);
  }
}

// Each backward that takes the deterministic mode (mma.sync; wgmma where it runs), by name.
TEST(AttentionGpu, DeterministicBackwardIsBitwiseRepeatable) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15207);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (const char* variant : {"attention_backward_gpu", "attention_backward_gpu_wgmma"}) {
    for (int dim : {64, 128}) {
      for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
        SCOPED_TRACE(std::string(variant) + " d " + std::to_string(dim) + " " +
                     std::string(attention_kind_name(kind)));
        const JaggedCase c =
            make_case(problem_of(kind, 2, dim, 400), {390, 70, 200}, {}, {}, seed);
        AttentionProblem deterministic = c.problem;
        deterministic.deterministic = true;
        ExecutionContext gpu_context;
        gpu_context.device = DeviceKind::kGpu;
        const auto runnable = backward_variant_named(variant, deterministic, gpu_context);
        if (!runnable.is_ok()) {  // the wgmma backward off sm_90a
          std::printf("skipped %s: %s\n", variant, runnable.status().to_string().c_str());
          continue;
        }
        const GpuOutputs first = run_gpu(c, true, true, nullptr, variant);
        const GpuOutputs second = run_gpu(c, true, true, nullptr, variant);
        EXPECT_EQ(first.grad_q, second.grad_q);
        EXPECT_EQ(first.grad_k, second.grad_k);
        EXPECT_EQ(first.grad_v, second.grad_v);
        // dK and dV do not depend on the mode (no cross-block sums); dQ differs only in the
        // order of the fp32 sums, both within the reference bounds (checked below and by the
        // other tests).
        const GpuOutputs atomic = run_gpu(c, true, false, nullptr, variant);
        EXPECT_EQ(first.grad_k, atomic.grad_k);
        EXPECT_EQ(first.grad_v, atomic.grad_v);
      }
    }
  }
}

// The deterministic wgmma backward against the fp64 reference on the edge cases (its dQ path
// differs from the atomic mode's: both warpgroups' dS^T, split by columns).
TEST(AttentionGpu, DeterministicWgmmaBackwardMatchesReference) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15208);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem probe = problem_of(AttentionKind::kHstu, 2, 128, 300);
  probe.batch = 2;
  probe.total_q = probe.total_kv = 100;
  const Status runnable = gpu::can_implement_backward(probe, gpu::BackwardKernel::kWgmma);
  if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  for (int dim : {64, 128}) {
    for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
      SCOPED_TRACE("d " + std::to_string(dim) + " " + std::string(attention_kind_name(kind)));
      AttentionProblem p = problem_of(kind, 2, dim, 300);
      p.deterministic = true;
      expect_gpu_matches_reference(
          make_case(p, {0, 1, 127, 129, 63, 65, 128, 257, 300}, {}, {}, seed), true, nullptr,
          "attention_backward_gpu_wgmma");
      p.max_attn_len = 40;  // a window: kv tiles whose one half is hidden from a q tile
      p.contextual_len = 5;
      expect_gpu_matches_reference(make_case(p, {290, 70}, {}, {}, seed + 1), true, nullptr,
                                   "attention_backward_gpu_wgmma");
    }
  }
}

void expect_error(const Status& status, StatusCode code, const std::string& fragment) {
  EXPECT_EQ(status.code(), code) << status.to_string();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.to_string();
}

// ---- the 128-row forward kernels by name: attention_forward_gpu_rows128 (mma.sync) and
// attention_forward_gpu_wgmma (Hopper wgmma, sm_90a), forward only ----
// Same bounds as the 64-row kernel: they make the same roundings (weights to the element type
// before the P V product, fp32 sums), only in another order and tile shape; the wgmma kernel's
// SiLU and sigmoid add the tanh.approx term (Magnitudes::out_activation). The wgmma kernel
// takes d_qk = d_v only, and is skipped where it cannot run (no GPU, not sm_90a: the reason is
// printed).

constexpr const char* kRows128 = "attention_forward_gpu_rows128";
constexpr const char* kWgmma = "attention_forward_gpu_wgmma";
constexpr const char* kWgmmaWs = "attention_forward_gpu_wgmma_ws";  // warp-specialized
constexpr const char* kWgmmaWs128 = "attention_forward_gpu_wgmma_ws128";  // 128-key S tiles
constexpr const char* kWgmmaTma = "attention_forward_gpu_wgmma_tma";      // + TMA loads
constexpr const char* kWgmmaTma64 = "attention_forward_gpu_wgmma_tma64";  // TMA, 64-key tiles
// kWgmmaTma with one block per (sequence, head): every multi-tile sequence walks its q tiles.
constexpr const char* kWgmmaTmaSeq = "attention_forward_gpu_wgmma_tma_seq";
constexpr std::int64_t kTile128 = 128;  // their q tile (and ws128's kv tile); kv tiles else 64

class AttentionGpuRows128 : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    PARITY_REQUIRE_GPU();
    if (!equal_dims_only()) return;
    AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 128, 300);
    p.batch = 2;
    p.total_q = p.total_kv = 100;
    const Status runnable = gpu::can_implement_forward(p, gpu::ForwardKernel::kWgmma);
    if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  }
  const char* variant() const { return GetParam(); }
  // The wgmma kernels (round 2 and warp-specialized): sm_90a, d_qk = d_v.
  bool equal_dims_only() const { return std::string(GetParam()) != kRows128; }
};

INSTANTIATE_TEST_SUITE_P(ForwardVariants, AttentionGpuRows128,
                         ::testing::Values(kRows128, kWgmma, kWgmmaWs, kWgmmaWs128, kWgmmaTma,
                                           kWgmmaTma64, kWgmmaTmaSeq),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           const std::string name = param_info.param;
                           if (name == kWgmmaWs) return std::string("wgmma_ws");
                           if (name == kWgmmaWs128) return std::string("wgmma_ws128");
                           if (name == kWgmmaTma) return std::string("wgmma_tma");
                           if (name == kWgmmaTma64) return std::string("wgmma_tma64");
                           if (name == kWgmmaTmaSeq) return std::string("wgmma_tma_seq");
                           return name == kWgmma ? std::string("wgmma") : std::string("rows128");
                         });

TEST_P(AttentionGpuRows128, HstuLengthsTargetsAndDtypes) {
  const std::uint64_t seed = parity::testing::test_seed(15211);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      const AttentionProblem p = problem_of(AttentionKind::kHstu, 2, dim, 300, dtype);
      // Lengths 0, 1, 127, 129, both tiles +- 1, 2 q tiles + 1; targets 0, 1, longer than the
      // sequence.
      expect_gpu_matches_reference(
          make_case(p, {0, 1, 127, 129, kTile128 - 1, kTile128 + 1, kTile128, 2 * kTile128 + 1,
                        kTile - 1, kTile + 1},
                    {}, {3, 0, 1, 20, 300, 5, 64, 0, 2, 1}, seed),
          false, variant());
      expect_gpu_matches_reference(make_case(p, {257, 2, kTile128, kTile, 300}, {}, {}, seed + 1),
                                   false, variant());
    }
  }
}

TEST_P(AttentionGpuRows128, ContextualWindowNonCausalAndLongN) {
  const std::uint64_t seed = parity::testing::test_seed(15212);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 128, 300);
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {40, 5, 0, 290, 9}, {}, {4, 1, 0, 12, 3}, seed), false,
                               variant());
  p.contextual_len = 0;
  p.max_attn_len = 16;  // windows narrower than a half tile, and wider than a q tile
  expect_gpu_matches_reference(make_case(p, {270, 3}, {}, {}, seed + 1), false, variant());
  p.max_attn_len = 150;
  p.min_full_attn_len = 8;
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {280, 30}, {}, {5, 2}, seed + 2), false, variant());
  p = problem_of(AttentionKind::kHstu, 2, 64, 300);
  p.causal = false;
  expect_gpu_matches_reference(make_case(p, {200, 7, 64}, {}, {3, 1, 0}, seed + 3), false,
                               variant());
  // N longer than every sequence (the 1/N scale).
  expect_gpu_matches_reference(
      make_case(problem_of(AttentionKind::kHstu, 2, 64, 1000), {30, 130}, {}, {}, seed + 4), false,
      variant());
}

TEST_P(AttentionGpuRows128, SoftmaxAndHeadDims) {
  const std::uint64_t seed = parity::testing::test_seed(15213);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      AttentionProblem p = problem_of(AttentionKind::kSoftmax, 2, dim, 200, dtype);
      expect_gpu_matches_reference(  // cut at 200
          make_case(p, {0, 1, 127, kTile128 + 1, kTile128 - 1, 330, kTile - 1, kTile, kTile + 1},
                    {}, {}, seed),
          false, variant());
      p.causal = false;
      expect_gpu_matches_reference(make_case(p, {129, 5, 64}, {}, {}, seed + 1), false, variant());
      // A negative alpha: the wgmma kernel folds only a positive score scale into the exp2.
      p.alpha = -1.0f / std::sqrt(static_cast<float>(dim));
      expect_gpu_matches_reference(make_case(p, {129, 5}, {}, {}, seed + 3), false, variant());
    }
  }
  for (int dim_qk : {64, 128}) {
    for (int dim_v : {64, 128}) {
      if (dim_qk != dim_v && equal_dims_only()) continue;
      for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
        SCOPED_TRACE("d_qk " + std::to_string(dim_qk) + " d_v " + std::to_string(dim_v) + " " +
                     std::string(attention_kind_name(kind)));
        const AttentionProblem p = problem_of(kind, 2, dim_qk, 300, DType::kBF16, dim_v);
        expect_gpu_matches_reference(make_case(p, {kTile128 + 1, 33, 290}, {}, {}, seed + 2),
                                     false, variant());
      }
    }
  }
}

TEST_P(AttentionGpuRows128, GdpaCrossAttentionEveryActivation) {
  const std::uint64_t seed = parity::testing::test_seed(15214);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu,
                          PointwiseActivation::kSigmoid, PointwiseActivation::kRelu}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = problem_of(AttentionKind::kGdpa, 2, 64, 260);
    p.activation = activation;
    p.causal = false;
    expect_gpu_matches_reference(make_case(p, {257, 0, 40, 3}, {64, 64, 1, 0}, {}, seed), false,
                                 variant());
  }
}

// The walking TMA forward (the default on sm_90a) with enough (sequence, head) pairs that each
// block walks every q tile of its sequence (B x H = 280 >= 2 blocks per SM on a 132-SM H200;
// fewer SMs too): lengths 0, 1, 129, 200, 257, 300 (up to 3 q tiles), HSTU causal, d = 64.
TEST(AttentionGpu, TmaSeqWalksTheQTilesOfManySequences) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15215);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  const AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 64, 300);
  AttentionProblem probe = p;  // batch and totals as the fixture's probe: the kernel's limits only
  probe.batch = 2;
  probe.total_q = probe.total_kv = 100;
  const Status runnable = gpu::can_implement_forward(probe, gpu::ForwardKernel::kWgmmaTmaSeq);
  if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  const std::int64_t cycle[] = {129, 300, 0, 257, 1, 200, 130};
  std::vector<std::int64_t> lengths;
  for (int b = 0; b < 70; ++b) lengths.push_back(cycle[b % 7]);
  expect_gpu_matches_reference(make_case(p, lengths, {}, {}, seed), false, kWgmmaTmaSeq);
}

TEST(AttentionGpu, Rows128RefusesWithReasons) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 2048);
  p.batch = 2;
  p.total_q = p.total_kv = 100;
  EXPECT_TRUE(gpu::can_implement_forward(p, gpu::ForwardKernel::kRows64).is_ok());
  AttentionProblem wide = p;
  wide.dim_qk = wide.dim_v = 256;
  EXPECT_TRUE(gpu::can_implement_forward(wide, gpu::ForwardKernel::kRows64).is_ok());
  // Built for NVIDIA here (a HIP build refuses every problem, naming the warp width).
  expect_error(gpu::can_implement_forward(wide, gpu::ForwardKernel::kRows128),
               StatusCode::kUnsupported, "d_qk=256");
  EXPECT_TRUE(gpu::can_implement_forward(p, gpu::ForwardKernel::kRows128).is_ok());
  AttentionProblem f32 = p;
  f32.dtype = DType::kF32;
  expect_error(gpu::can_implement_forward(f32, gpu::ForwardKernel::kRows128),
               StatusCode::kInvalidArgument, "dtype: fp32");
  // The wgmma kernel: head dims first (no device needed), then the device and binary.
  expect_error(gpu::can_implement_forward(wide, gpu::ForwardKernel::kWgmma),
               StatusCode::kUnsupported, "d_qk=256");
  AttentionProblem mixed = p;
  mixed.dim_v = 64;
  expect_error(gpu::can_implement_forward(mixed, gpu::ForwardKernel::kWgmma),
               StatusCode::kUnsupported, "d_v=64");
  expect_error(gpu::can_implement_forward(f32, gpu::ForwardKernel::kWgmma),
               StatusCode::kInvalidArgument, "dtype: fp32");
  // The warp-specialized one has the same limits.
  expect_error(gpu::can_implement_forward(wide, gpu::ForwardKernel::kWgmmaWs),
               StatusCode::kUnsupported, "d_qk=256");
  expect_error(gpu::can_implement_forward(mixed, gpu::ForwardKernel::kWgmmaWs),
               StatusCode::kUnsupported, "d_v=64");
}

// ---- the backward kernels by name: attention_backward_gpu (mma.sync, 64 kv rows a block) and
// attention_backward_gpu_wgmma (Hopper wgmma, sm_90a, 128 kv rows a block) ----
// Same bounds as above: both round P and dS to the element type before the products and sum in
// fp32, in another order and tile shape. The wgmma backward takes d_qk = d_v in {64, 128} and is
// skipped where it cannot run (no GPU, not sm_90a: the reason is printed). The forward is the
// op's choice. Lengths straddle both kernels' kv tiles (64 and 128) and the q tile (64).

constexpr const char* kBackwardMma = "attention_backward_gpu";
constexpr const char* kBackwardWgmma = "attention_backward_gpu_wgmma";

class AttentionGpuBackward : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    PARITY_REQUIRE_GPU();
    if (std::string(GetParam()) == kBackwardMma) return;
    AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 128, 300);
    p.batch = 2;
    p.total_q = p.total_kv = 100;
    const Status runnable = gpu::can_implement_backward(p, gpu::BackwardKernel::kWgmma);
    if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  }
  void expect_matches(const JaggedCase& c) const {
    expect_gpu_matches_reference(c, true, nullptr, GetParam());
  }
};

INSTANTIATE_TEST_SUITE_P(BackwardVariants, AttentionGpuBackward,
                         ::testing::Values(kBackwardMma, kBackwardWgmma),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           const std::string name = param_info.param;
                           return name == kBackwardWgmma ? std::string("wgmma")
                                                         : std::string("mma_sync");
                         });

TEST_P(AttentionGpuBackward, HstuLengthsTargetsAndDtypes) {
  const std::uint64_t seed = parity::testing::test_seed(15221);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      const AttentionProblem p = problem_of(AttentionKind::kHstu, 2, dim, 300, dtype);
      // Lengths 0, 1, 127, 129, both kv tiles +- 1, 2 tiles + 1; targets 0, 1, longer than the
      // sequence.
      expect_matches(make_case(p,
                               {0, 1, 127, 129, kTile128 - 1, kTile128 + 1, kTile128,
                                2 * kTile128 + 1, kTile - 1, kTile + 1},
                               {}, {3, 0, 1, 20, 300, 5, 64, 0, 2, 1}, seed));
      expect_matches(make_case(p, {257, 2, kTile128, kTile, 300}, {}, {}, seed + 1));
    }
  }
}

TEST_P(AttentionGpuBackward, ContextualWindowNonCausalAndLongN) {
  const std::uint64_t seed = parity::testing::test_seed(15222);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (int dim : {64, 128}) {
    SCOPED_TRACE("d " + std::to_string(dim));
    AttentionProblem p = problem_of(AttentionKind::kHstu, 2, dim, 300);
    p.contextual_len = 10;
    expect_matches(make_case(p, {40, 5, 0, 290, 9}, {}, {4, 1, 0, 12, 3}, seed));
    p.contextual_len = 0;
    p.max_attn_len = 16;  // windows narrower than a q tile, and wider than a kv tile
    expect_matches(make_case(p, {270, 3}, {}, {}, seed + 1));
    p.max_attn_len = 150;
    p.min_full_attn_len = 8;
    p.contextual_len = 10;
    expect_matches(make_case(p, {280, 30}, {}, {5, 2}, seed + 2));
    p = problem_of(AttentionKind::kHstu, 2, dim, 300);
    p.causal = false;
    expect_matches(make_case(p, {200, 7, 64}, {}, {3, 1, 0}, seed + 3));
    // N longer than every sequence (the 1/N scale).
    expect_matches(
        make_case(problem_of(AttentionKind::kHstu, 2, dim, 1000), {30, 130}, {}, {}, seed + 4));
  }
}

TEST_P(AttentionGpuBackward, SoftmaxCausalNonCausalAndTruncation) {
  const std::uint64_t seed = parity::testing::test_seed(15223);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      AttentionProblem p = problem_of(AttentionKind::kSoftmax, 2, dim, 200, dtype);
      expect_matches(  // cut at 200: kv rows past the cut get zero gradients
          make_case(p, {0, 1, 127, kTile128 + 1, kTile128 - 1, 330, kTile - 1, kTile, kTile + 1},
                    {}, {}, seed));
      p.causal = false;
      expect_matches(make_case(p, {129, 5, 64}, {}, {}, seed + 1));
      p.causal = true;  // with targets
      expect_matches(make_case(p, {150, 40, 1}, {}, {7, 0, 1}, seed + 2));
    }
  }
}

TEST_P(AttentionGpuBackward, GdpaCrossAttentionActivations) {
  const std::uint64_t seed = parity::testing::test_seed(15224);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  // relu's derivative jumps at 0, where an fp32 and an fp64 score may fall on different sides.
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu,
                          PointwiseActivation::kSigmoid}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = problem_of(AttentionKind::kGdpa, 2, 64, 260);
    p.activation = activation;
    p.causal = false;
    expect_matches(make_case(p, {257, 0, 40, 3}, {64, 129, 1, 0}, {}, seed));
  }
}

// 70 sequences x 4 heads = 280 (sequence, head) pairs fill an H200's 132 SMs twice, so the default
// (not deterministic) wgmma backward takes the walking schedule there; on smaller devices it still
// runs, one block per kv tile. Either way against the fp64 reference.
TEST(AttentionGpu, WgmmaBackwardOnManySequences) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15216);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (const AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
    const AttentionProblem p = problem_of(kind, 4, 64, 300);
    AttentionProblem probe = p;
    probe.batch = 2;
    probe.total_q = probe.total_kv = 100;
    const Status runnable = gpu::can_implement_backward(probe, gpu::BackwardKernel::kWgmma);
    if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
    const std::int64_t cycle[] = {129, 300, 0, 257, 1, 200, 130};
    std::vector<std::int64_t> lengths;
    for (int b = 0; b < 70; ++b) lengths.push_back(cycle[b % 7]);
    expect_gpu_matches_reference(make_case(p, lengths, {}, {}, seed), true, nullptr,
                                 "attention_backward_gpu_wgmma");
  }
}

TEST(AttentionGpu, WgmmaBackwardRefusesWithReasons) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 2048);
  p.batch = 2;
  p.total_q = p.total_kv = 100;
  // Head dims and mode first (no device needed), then the device and binary.
  AttentionProblem mixed = p;
  mixed.dim_v = 64;
  EXPECT_TRUE(gpu::can_implement_backward(mixed, gpu::BackwardKernel::kMmaSync).is_ok());
  expect_error(gpu::can_implement_backward(mixed, gpu::BackwardKernel::kWgmma),
               StatusCode::kUnsupported, "d_v=64");
  AttentionProblem wide = p;
  wide.dim_qk = wide.dim_v = 256;
  expect_error(gpu::can_implement_backward(wide, gpu::BackwardKernel::kWgmma),
               StatusCode::kUnsupported, "d_qk=256");
  // The ring schedule is disabled (wrong dV on some masks): it refuses every problem.
  expect_error(gpu::can_implement_backward(p, gpu::BackwardKernel::kWgmmaRing),
               StatusCode::kUnsupported, "disabled");
  // Deterministic mode: the lockstep schedule has it.
  AttentionProblem deterministic = p;
  deterministic.deterministic = true;
  EXPECT_TRUE(gpu::can_implement_backward(deterministic, gpu::BackwardKernel::kMmaSync).is_ok());
  const Status lockstep = gpu::can_implement_backward(deterministic, gpu::BackwardKernel::kWgmma);
  EXPECT_EQ(lockstep.message().find("deterministic"), std::string::npos) << lockstep.to_string();
}

// ---- what the kernels do not run, and bad arguments ----

TEST(AttentionGpu, CanImplementGivesReasons) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 2048);
  p.batch = 2;
  p.total_q = p.total_kv = 100;
  EXPECT_TRUE(gpu::can_implement(p).is_ok());
  EXPECT_TRUE(gpu::can_implement_backward(p).is_ok());
  AttentionProblem wide = p;
  wide.dim_qk = wide.dim_v = 256;
  EXPECT_TRUE(gpu::can_implement(wide).is_ok());
  expect_error(gpu::can_implement_backward(wide), StatusCode::kUnsupported, "d_qk=256");
  AttentionProblem mixed = p;
  mixed.dim_v = 64;
  EXPECT_TRUE(gpu::can_implement_backward(mixed).is_ok());
  AttentionProblem wide_mixed = wide;
  wide_mixed.dim_v = 128;
  expect_error(gpu::can_implement(wide_mixed), StatusCode::kUnsupported, "d_v=128");
  AttentionProblem f32 = p;
  f32.dtype = DType::kF32;
  EXPECT_FALSE(gpu::can_implement(f32).is_ok());
  // Softmax needs the row terms; the pointwise kinds only the dQ accumulator.
  AttentionProblem softmax = p;
  softmax.kind = AttentionKind::kSoftmax;
  EXPECT_GT(gpu::backward_workspace_bytes(softmax), gpu::backward_workspace_bytes(p));
  EXPECT_GE(gpu::backward_workspace_bytes(p), static_cast<std::size_t>(100 * 4 * 128 * 4));
}

TEST(AttentionGpu, RejectsMisalignedAndMissingPointers) {
  PARITY_REQUIRE_GPU();
  const JaggedCase c =
      make_case(problem_of(AttentionKind::kSoftmax, 1, 64, 64), {10, 20}, {}, {}, 5);
  const auto q = upload(c.q_bits, 64), offsets = upload(c.inputs.q_offsets);
  AttentionForwardArgs a;
  a.q = q.as<std::uint8_t>() + 2;  // misaligned
  a.k = a.v = a.out = q.data();
  a.q_offsets = offsets.as<std::int64_t>();
  a.softmax_lse = reinterpret_cast<float*>(q.data());
  expect_error(gpu::forward(c.problem, a, nullptr), StatusCode::kInvalidArgument, "q: ");
  a.q = q.data();
  a.softmax_lse = nullptr;
  expect_error(gpu::forward(c.problem, a, nullptr), StatusCode::kInvalidArgument, "softmax_lse");
}

}  // namespace
}  // namespace parity::attention
