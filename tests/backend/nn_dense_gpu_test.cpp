// The dense DLRM GPU kernels (interaction, BCE, cross step, optimisers, casts; the element-wise ones
// in 16-byte vectors with a scalar tail) and the GPU cross layer variants against fp64; the fused
// dReLU against the separate pass.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "parity/nn/dense_gpu.hpp"
#include "common/fused_drelu_check.hpp"
#include "parity/nn/interaction.hpp"
#include "reference/dlrm_dense.hpp"
#include "reference/nn.hpp"

namespace parity {
namespace {

// Host values rounded to `dtype` (returned as doubles, so the reference sees exactly what the
// device reads) and their storage bytes.
struct HostTensor {
  std::vector<double> values;
  std::vector<std::uint8_t> bytes;
};

HostTensor make_tensor(std::size_t count, DType dtype, Rng& rng, double scale = 1.0) {
  HostTensor t;
  t.values.resize(count);
  t.bytes.resize(count * dtype_size_bytes(dtype));
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = static_cast<float>(rng.normal() * scale);
    if (dtype == DType::kF32) {
      t.values[i] = v;
      std::memcpy(&t.bytes[i * 4], &v, 4);
    } else {
      const std::uint16_t bits = dtype == DType::kBF16 ? float_to_bf16_bits(v) : float_to_fp16_bits(v);
      t.values[i] = dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
      std::memcpy(&t.bytes[i * 2], &bits, 2);
    }
  }
  return t;
}

std::vector<double> to_doubles(const std::vector<std::uint8_t>& bytes, DType dtype) {
  const std::size_t count = bytes.size() / dtype_size_bytes(dtype);
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (dtype == DType::kF32) {
      float v;
      std::memcpy(&v, &bytes[i * 4], 4);
      out[i] = v;
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, &bytes[i * 2], 2);
      out[i] = dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
    }
  }
  return out;
}

gpu::DeviceBuffer upload_bytes(const std::vector<std::uint8_t>& bytes) {
  auto buffer = gpu::DeviceBuffer::allocate(std::max<std::size_t>(bytes.size(), 1));
  EXPECT_TRUE(buffer.is_ok());
  if (!bytes.empty()) {
    EXPECT_TRUE(buffer->copy_from_host(bytes.data(), bytes.size()).is_ok());
  }
  return std::move(buffer).value();
}

std::vector<std::uint8_t> download_bytes(const gpu::DeviceBuffer& buffer, std::size_t size) {
  std::vector<std::uint8_t> out(size);
  if (size > 0) {
    EXPECT_TRUE(buffer.copy_to_host(out.data(), size).is_ok());
  }
  return out;
}

// gamma_n = n u / (1 - n u): the bound on a length-n fp32 sum's relative error (Higham 3.1).
double gamma(int n) {
  const double u = unit_roundoff(DType::kF32);
  return n * u / (1.0 - n * u);
}

TEST(GpuDenseOps, InteractionForwardAndBackwardMatchFp64) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(31);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  struct Case { std::int64_t batch; int embeddings; int dim; DType dtype; std::int64_t stride; };
  for (const Case c : {Case{3, 26, 128, DType::kF32, 0}, Case{5, 26, 128, DType::kBF16, 480},
                       Case{1, 1, 1, DType::kF32, 0}, Case{7, 5, 13, DType::kF16, 31}, Case{0, 4, 8, DType::kF32, 0},
                       Case{64, 8, 64, DType::kBF16, 0}}) {
    SCOPED_TRACE(::testing::Message() << "batch=" << c.batch << " E=" << c.embeddings << " D=" << c.dim << " "
                                      << dtype_name(c.dtype));
    nn::gpu::InteractionShape shape{c.batch, c.embeddings, c.dim, c.dtype, c.stride};
    const std::int64_t width = shape.output_width();
    const std::int64_t stride = shape.output_row_stride();
    const auto b_count = static_cast<std::size_t>(c.batch * c.dim);
    const auto e_count = static_cast<std::size_t>(c.batch * c.embeddings * c.dim);
    const auto o_count = static_cast<std::size_t>(c.batch * stride);
    auto bottom = make_tensor(b_count, c.dtype, rng);
    auto emb = make_tensor(e_count, c.dtype, rng);
    auto grad_out = make_tensor(o_count, c.dtype, rng);
    // The references take packed rows: the strided grad_output without its padding columns.
    std::vector<double> grad_out_packed;
    for (std::int64_t b = 0; b < c.batch; ++b) {
      for (std::int64_t col = 0; col < width; ++col) grad_out_packed.push_back(grad_out.values[static_cast<std::size_t>(b * stride + col)]);
    }
    auto d_bottom = upload_bytes(bottom.bytes);
    auto d_emb = upload_bytes(emb.bytes);
    auto d_grad_out = upload_bytes(grad_out.bytes);
    const std::size_t s = dtype_size_bytes(c.dtype);
    auto d_out = gpu::DeviceBuffer::allocate(std::max<std::size_t>(o_count * s, 1)).value();
    auto d_grad_bottom = gpu::DeviceBuffer::allocate(std::max<std::size_t>(b_count * s, 1)).value();
    auto d_grad_emb = gpu::DeviceBuffer::allocate(std::max<std::size_t>(e_count * 4, 1)).value();
    ASSERT_TRUE(nn::gpu::interaction_dot_forward(shape, d_bottom.data(), d_emb.data(), d_out.data()).is_ok());
    ASSERT_TRUE(nn::gpu::interaction_dot_backward(shape, d_bottom.data(), d_emb.data(), d_grad_out.data(),
                                                  d_grad_bottom.data(), d_grad_emb.as<float>()).is_ok());
    ASSERT_TRUE(gpu::synchronize().is_ok());
    const auto out = to_doubles(download_bytes(d_out, o_count * s), c.dtype);
    const auto grad_bottom = to_doubles(download_bytes(d_grad_bottom, b_count * s), c.dtype);
    const auto grad_emb = to_doubles(download_bytes(d_grad_emb, e_count * 4), DType::kF32);
    const auto want = ref::interaction_dot_forward(c.batch, c.embeddings, c.dim, bottom.values, emb.values);
    std::vector<double> want_gb, want_ge;
    ref::interaction_dot_backward(c.batch, c.embeddings, c.dim, bottom.values, emb.values, grad_out_packed, &want_gb,
                                  &want_ge);
    // Inputs are exact; the kernel sums D (forward) or F + 1 (backward) products in fp32, then
    // rounds to the output type: |err| <= gamma_n * sum|terms| + u_out * |value|. The sums of |terms|
    // are bounded by the same reference run on |inputs|.
    auto abs_all = [](std::vector<double> v) { for (auto& x : v) x = std::abs(x); return v; };
    const auto bound_fwd = ref::interaction_dot_forward(c.batch, c.embeddings, c.dim, abs_all(bottom.values), abs_all(emb.values));
    std::vector<double> bound_gb, bound_ge;
    ref::interaction_dot_backward(c.batch, c.embeddings, c.dim, abs_all(bottom.values), abs_all(emb.values),
                                  abs_all(grad_out_packed), &bound_gb, &bound_ge);
    const double u_out = unit_roundoff(c.dtype);
    for (std::int64_t b = 0; b < c.batch; ++b) {
      for (std::int64_t col = 0; col < stride; ++col) {
        const double got = out[static_cast<std::size_t>(b * stride + col)];
        if (col >= width) {
          ASSERT_EQ(got, 0.0) << "padding of row " << b << " column " << col;
          continue;
        }
        const auto i = static_cast<std::size_t>(b * width + col);
        ASSERT_NEAR(got, want[i], gamma(c.dim) * bound_fwd[i] + u_out * std::abs(want[i]) + 1e-30) << "output " << i;
      }
    }
    const int vectors = c.embeddings + 1;
    for (std::size_t i = 0; i < grad_bottom.size(); ++i) {
      ASSERT_NEAR(grad_bottom[i], want_gb[i], gamma(vectors + 1) * bound_gb[i] + u_out * std::abs(want_gb[i]) + 1e-30)
          << "grad_bottom " << i;
    }
    for (std::size_t i = 0; i < grad_emb.size(); ++i) {
      ASSERT_NEAR(grad_emb[i], want_ge[i], gamma(vectors + 1) * bound_ge[i] + 1e-30) << "grad_embeddings " << i;
    }
  }
}

TEST(GpuDenseOps, BceLossAndGradientMatchFp64AndAreDeterministic) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(32);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  for (std::int64_t batch : {1LL, 255LL, 257LL, 65536LL, 300001LL}) {
    auto logits = make_tensor(static_cast<std::size_t>(batch), DType::kF32, rng, 3.0);
    std::vector<float> labels(static_cast<std::size_t>(batch));
    std::vector<double> labels_d(labels.size());
    for (std::size_t i = 0; i < labels.size(); ++i) labels_d[i] = labels[i] = rng.uniform() < 0.3 ? 1.0f : 0.0f;
    auto d_logits = upload_bytes(logits.bytes);
    auto d_labels = gpu::upload(labels).value();
    auto d_grad = gpu::DeviceBuffer::allocate(labels.size() * 4).value();
    auto d_loss = gpu::DeviceBuffer::allocate(4).value();
    const std::int64_t ws_bytes = nn::gpu::bce_workspace_bytes(batch);
    auto d_ws = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(ws_bytes)).value();
    const float scale = 1.0f / static_cast<float>(batch);
    float loss_bits[2];
    for (int run = 0; run < 2; ++run) {
      ASSERT_TRUE(nn::gpu::bce_with_logits(batch, DType::kF32, d_logits.data(), d_labels.as<float>(),
                                           d_loss.as<float>(), d_grad.data(), scale, d_ws.data(), ws_bytes).is_ok());
      ASSERT_TRUE(d_loss.copy_to_host(&loss_bits[run], 4).is_ok());
    }
    EXPECT_EQ(std::memcmp(&loss_bits[0], &loss_bits[1], 4), 0) << "loss differs between runs";
    std::vector<double> want_grad;
    const double want = ref::bce_with_logits(logits.values, labels_d, scale, &want_grad);
    // Per-sample terms (expf, log1pf: a few ulp each, say 4u relative on terms >= 0) summed in fp32
    // over `batch` terms by a tree: |err| <= (gamma_batch + 4u) * sum(terms) = (...) * want.
    const double u = unit_roundoff(DType::kF32);
    EXPECT_NEAR(loss_bits[0], want, (gamma(static_cast<int>(batch)) + 4 * u) * want) << "batch=" << batch;
    const auto grad = to_doubles(download_bytes(d_grad, labels.size() * 4), DType::kF32);
    for (std::size_t i = 0; i < grad.size(); ++i) {
      // sigmoid through expf and one division: <= 4u relative on p in [0, 1], then * scale.
      ASSERT_NEAR(grad[i], want_grad[i], 8 * u * scale) << "grad " << i;
    }
  }
}

TEST(GpuDenseOps, OptimizerStepsMatchFp64AndWriteTheShadowCopy) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(33);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  const std::size_t count = 10007;
  for (auto kind : {nn::gpu::DenseOptimizer::kSgd, nn::gpu::DenseOptimizer::kAdagrad, nn::gpu::DenseOptimizer::kAdam}) {
    nn::gpu::DenseOptimizerParams params;
    params.kind = kind;
    params.learning_rate = 0.05f;
    params.step = 3;
    std::vector<float> w(count), g(count), s1(count), s2(count);
    for (std::size_t i = 0; i < count; ++i) {
      w[i] = static_cast<float>(rng.normal());
      g[i] = static_cast<float>(rng.normal());
      s1[i] = static_cast<float>(std::abs(rng.normal()));
      s2[i] = static_cast<float>(std::abs(rng.normal()));
    }
    auto dw = gpu::upload(w).value();
    auto dg = gpu::upload(g).value();
    auto ds1 = gpu::upload(s1).value();
    auto ds2 = gpu::upload(s2).value();
    auto shadow = gpu::DeviceBuffer::allocate(count * 2).value();
    ASSERT_TRUE(nn::gpu::dense_optimizer_step(params, static_cast<std::int64_t>(count), dw.as<float>(), ds1.as<float>(),
                                              ds2.as<float>(), dg.data(), DType::kF32, shadow.data(), DType::kBF16)
                    .is_ok());
    const auto got = gpu::download<float>(dw, count).value();
    const auto got_shadow = gpu::download<std::uint16_t>(shadow, count).value();
    const double u = unit_roundoff(DType::kF32);
    for (std::size_t i = 0; i < count; ++i) {
      const double gi = g[i];
      double want = w[i];
      if (kind == nn::gpu::DenseOptimizer::kSgd) {
        want -= 0.05 * gi;
      } else if (kind == nn::gpu::DenseOptimizer::kAdagrad) {
        want -= 0.05 * gi / (std::sqrt(s1[i] + gi * gi) + 1e-8);
      } else {
        // The betas as the kernel sees them (fp32 values), the rest in fp64.
        const double b1 = static_cast<double>(0.9f), b2 = static_cast<double>(0.999f);
        const double m = b1 * s1[i] + (1 - b1) * gi;
        const double v = b2 * s2[i] + (1 - b2) * gi * gi;
        want -= static_cast<double>(0.05f) * (m / (1 - std::pow(b1, 3))) / (std::sqrt(v / (1 - std::pow(b2, 3))) + 1e-8);
      }
      // The update passes through ~12 fp32 roundings (state updates, corrections, sqrt, divide,
      // lr), each <= u relative to the update: 16u of the update, plus the final subtraction's
      // rounding of w (u |w|). The sum below bounds both.
      const double scale = std::abs(w[i]) + std::abs(want - w[i]);
      ASSERT_NEAR(got[i], want, 16 * u * scale + 1e-30) << "element " << i;
      ASSERT_EQ(got_shadow[i], float_to_bf16_bits(got[i])) << "shadow " << i;
    }
  }
}

TEST(GpuDenseOps, CrossStepAndCastMatchFp64) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(34);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  const std::size_t count = 4099;
  auto x0 = make_tensor(count, DType::kF32, rng);
  auto t = make_tensor(count, DType::kF32, rng);
  auto xl = make_tensor(count, DType::kF32, rng);
  auto go = make_tensor(count, DType::kF32, rng);
  auto d_x0 = upload_bytes(x0.bytes), d_t = upload_bytes(t.bytes), d_xl = upload_bytes(xl.bytes),
       d_go = upload_bytes(go.bytes);
  auto d_out = gpu::DeviceBuffer::allocate(count * 4).value();
  auto d_gt = gpu::DeviceBuffer::allocate(count * 4).value();
  auto d_gx0 = gpu::DeviceBuffer::allocate(count * 4).value();
  ASSERT_TRUE(nn::gpu::cross_forward(count, DType::kF32, d_x0.data(), d_t.data(), d_xl.data(), d_out.data()).is_ok());
  ASSERT_TRUE(nn::gpu::cross_backward(count, DType::kF32, d_go.data(), d_x0.data(), d_t.data(), d_gt.data(),
                                      d_gx0.data(), false).is_ok());
  ASSERT_TRUE(nn::gpu::cross_backward(count, DType::kF32, d_go.data(), d_x0.data(), d_t.data(), d_gt.data(),
                                      d_gx0.data(), true).is_ok());
  const auto out = gpu::download<float>(d_out, count).value();
  const auto gt = gpu::download<float>(d_gt, count).value();
  const auto gx0 = gpu::download<float>(d_gx0, count).value();
  const double u = unit_roundoff(DType::kF32);
  for (std::size_t i = 0; i < count; ++i) {
    const double want = x0.values[i] * t.values[i] + xl.values[i];
    ASSERT_NEAR(out[i], want, u * (std::abs(x0.values[i] * t.values[i]) + std::abs(xl.values[i])) * 2) << i;
    ASSERT_NEAR(gt[i], go.values[i] * x0.values[i], u * std::abs(go.values[i] * x0.values[i])) << i;
    // Two fused steps of g*t: the second fma adds an exact-product to the rounded first.
    ASSERT_NEAR(gx0[i], 2 * go.values[i] * t.values[i], 2 * u * std::abs(2 * go.values[i] * t.values[i])) << i;
  }
  // ReLU backward in place: kept where the output is positive, zero elsewhere (exact).
  ASSERT_TRUE(nn::gpu::relu_backward(count, DType::kF32, d_go.data(), d_x0.data(), d_go.data()).is_ok());
  const auto relu_grad = gpu::download<float>(d_go, count).value();
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(relu_grad[i], x0.values[i] > 0 ? go.values[i] : 0.0) << i;
  auto d_bf16 = gpu::DeviceBuffer::allocate(count * 2).value();
  ASSERT_TRUE(nn::gpu::cast(count, d_x0.data(), DType::kF32, d_bf16.data(), DType::kBF16).is_ok());
  const auto bf16 = gpu::download<std::uint16_t>(d_bf16, count).value();
  for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(bf16[i], float_to_bf16_bits(static_cast<float>(x0.values[i]))) << i;
}

TEST(GpuDenseOps, AddSplitColumnsMatchesFp64) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(35);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  struct Case { DType dtype; std::int64_t left, right; };  // 16/136: the 16-byte vector path
  for (const Case shape : {Case{DType::kF32, 13, 130}, Case{DType::kBF16, 13, 130}, Case{DType::kF32, 16, 136},
                           Case{DType::kBF16, 16, 136}}) {
    SCOPED_TRACE(::testing::Message() << dtype_name(shape.dtype) << " " << shape.left << "+" << shape.right);
    const DType dtype = shape.dtype;
    const std::int64_t rows = 37, left = shape.left, right = shape.right, width = left + right;
    auto a = make_tensor(static_cast<std::size_t>(rows * width), dtype, rng);
    auto b = make_tensor(static_cast<std::size_t>(rows * width), dtype, rng);
    auto d_a = upload_bytes(a.bytes), d_b = upload_bytes(b.bytes);
    const std::size_t element = dtype_size_bytes(dtype);
    auto d_left = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(rows * left) * element).value();
    auto d_right = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(rows * right) * 4).value();
    ASSERT_TRUE(nn::gpu::add_split_columns(d_a.data(), d_b.data(), dtype, rows, left, right, d_left.data(),
                                           d_right.as<float>()).is_ok());
    const auto got_left = to_doubles(download_bytes(d_left, static_cast<std::size_t>(rows * left) * element), dtype);
    const auto got_right = gpu::download<float>(d_right, static_cast<std::size_t>(rows * right)).value();
    // One fp32 addition (error <= u_fp32 |a + b|), then one rounding to the left half's dtype
    // (<= u_out (1 + u_fp32) |a + b|); |a + b| <= |a| + |b|.
    const double u = unit_roundoff(DType::kF32), u_out = unit_roundoff(dtype) * (1 + unit_roundoff(DType::kF32));
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < width; ++c) {
        const double want = a.values[r * width + c] + b.values[r * width + c];
        const double magnitude = std::abs(a.values[r * width + c]) + std::abs(b.values[r * width + c]);
        if (c < left) {
          ASSERT_NEAR(got_left[r * left + c], want, (u + u_out) * magnitude) << r << "," << c;
        } else {
          ASSERT_NEAR(got_right[r * right + c - left], want, u * magnitude) << r << "," << c;
        }
      }
    }
  }
}

TEST(GpuDenseOps, FusedDreluMatchesTheSeparatePass) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = testing::test_seed(36);
  SCOPED_TRACE(testing::seed_trace(seed));
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  for (const nn::MathMode math : {nn::MathMode::kFp32, nn::MathMode::kTf32}) {
    for (const auto& c : {testing::FusedDreluCase{256, 16, 64, 32, math}, testing::FusedDreluCase{96, 24, 136, 8, math}}) {
      SCOPED_TRACE(::testing::Message() << "B=" << c.batch << " I=" << c.in << " H=" << c.hidden << " O=" << c.out
                                        << (math == nn::MathMode::kTf32 ? " tf32" : " fp32"));
      testing::expect_fused_drelu_matches_unfused(c, context, seed);
    }
  }
}

// Magnitudes of the cross layer's values evaluated on absolute values (the first-order error
// bound's scale, Higham 3.5): every value below is within gamma_n * its magnitude of exact.
struct CrossMagnitudes {
  std::vector<double> out, grad_x0, grad_x, grad_v, grad_u, grad_c;
};

CrossMagnitudes cross_magnitudes(std::int64_t batch, std::int64_t width, std::int64_t rank, const std::vector<double>& x0,
                                 const std::vector<double>& x, const std::vector<double>& v,
                                 const std::vector<double>& u, const std::vector<double>& c,
                                 const std::vector<double>& g) {
  const auto W = static_cast<std::size_t>(width), R = static_cast<std::size_t>(rank);
  const auto B = static_cast<std::size_t>(batch);
  CrossMagnitudes m{std::vector<double>(B * W), std::vector<double>(B * W), std::vector<double>(B * W),
                    std::vector<double>(R * W, 0.0), std::vector<double>(W * R, 0.0), std::vector<double>(W, 0.0)};
  std::vector<double> low(R), dlow(R), cross(W), dcross(W);
  for (std::size_t b = 0; b < B; ++b) {
    for (std::size_t r = 0; r < R; ++r) {
      low[r] = 0;
      for (std::size_t w = 0; w < W; ++w) low[r] += std::abs(v[r * W + w]) * std::abs(x[b * W + w]);
    }
    for (std::size_t w = 0; w < W; ++w) {
      cross[w] = std::abs(c[w]);
      for (std::size_t r = 0; r < R; ++r) cross[w] += std::abs(u[w * R + r]) * low[r];
      const std::size_t k = b * W + w;
      m.out[k] = std::abs(x0[k]) * cross[w] + std::abs(x[k]);
      m.grad_x0[k] = std::abs(g[k]) * cross[w];
      dcross[w] = std::abs(g[k]) * std::abs(x0[k]);
      m.grad_c[w] += dcross[w];
      for (std::size_t r = 0; r < R; ++r) m.grad_u[w * R + r] += dcross[w] * low[r];
    }
    for (std::size_t r = 0; r < R; ++r) {
      dlow[r] = 0;
      for (std::size_t w = 0; w < W; ++w) dlow[r] += dcross[w] * std::abs(u[w * R + r]);
    }
    for (std::size_t w = 0; w < W; ++w) {
      m.grad_x[b * W + w] = std::abs(g[b * W + w]);
      for (std::size_t r = 0; r < R; ++r) {
        m.grad_x[b * W + w] += dlow[r] * std::abs(v[r * W + w]);
        m.grad_v[r * W + w] += dlow[r] * std::abs(x[b * W + w]);
      }
    }
  }
  return m;
}

void expect_within_bound(const std::vector<double>& got, const std::vector<double>& want,
                         const std::vector<double>& magnitude, double factor, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], factor * magnitude[i]) << what << "[" << i << "]";
  }
}

TEST(GpuDenseOps, CrossLayerVariantsMatchFp64) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(37);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  struct Case { std::int64_t batch, width, rank; DType dtype; };
  for (const Case c : {Case{5, 13, 3, DType::kF32}, Case{64, 144, 8, DType::kF32}, Case{33, 144, 16, DType::kBF16},
                       Case{128, 256, 64, DType::kBF16}}) {
    SCOPED_TRACE(::testing::Message() << "B=" << c.batch << " W=" << c.width << " R=" << c.rank << " "
                                      << dtype_name(c.dtype));
    const auto n_bw = static_cast<std::size_t>(c.batch * c.width), n_rw = static_cast<std::size_t>(c.rank * c.width);
    const double weight_scale = std::sqrt(2.0 / static_cast<double>(c.width + c.rank));
    auto x0 = make_tensor(n_bw, c.dtype, rng), x = make_tensor(n_bw, c.dtype, rng), g = make_tensor(n_bw, c.dtype, rng);
    auto v = make_tensor(n_rw, c.dtype, rng, weight_scale), u = make_tensor(n_rw, c.dtype, rng, weight_scale);
    auto bias = make_tensor(static_cast<std::size_t>(c.width), c.dtype, rng, 0.1);
    auto d_x0 = upload_bytes(x0.bytes), d_x = upload_bytes(x.bytes), d_g = upload_bytes(g.bytes);
    auto d_v = upload_bytes(v.bytes), d_u = upload_bytes(u.bytes), d_c = upload_bytes(bias.bytes);
    const std::size_t element = dtype_size_bytes(c.dtype);
    const auto device_zeros = [](std::size_t bytes) {
      auto buffer = gpu::DeviceBuffer::allocate(bytes).value();
      EXPECT_TRUE(buffer.fill_bytes(0).is_ok());
      return buffer;
    };
    auto d_low = device_zeros(static_cast<std::size_t>(c.batch * c.rank) * element);
    auto d_cross = device_zeros(n_bw * element), d_out = device_zeros(n_bw * element);
    auto d_gx0 = device_zeros(n_bw * element), d_gx = device_zeros(n_bw * element);
    auto d_gv = device_zeros(n_rw * 4), d_gu = device_zeros(n_rw * 4), d_gc = device_zeros(static_cast<std::size_t>(c.width) * 4);
    auto d_scratch_cross = device_zeros(n_bw * element);
    auto d_scratch_low = device_zeros(static_cast<std::size_t>(c.batch * c.rank) * element);
    const nn::CrossLayerProblem problem{c.batch, c.width, c.rank, c.dtype, nn::MathMode::kFp32};
    ASSERT_TRUE(nn::cross_layer_forward(problem, {d_x0.data(), d_x.data(), d_v.data(), d_u.data(), d_c.data(),
                                                  d_low.data(), d_cross.data(), d_out.data()}, context).is_ok());
    nn::CrossLayerBackwardArgs args{d_x0.data(), d_x.data(), d_v.data(), d_u.data(), d_low.data(),
                                    d_cross.data(), d_g.data(), d_gx0.data(), d_gx.data(), d_gv.as<float>(),
                                    d_gu.as<float>(), d_gc.as<float>(), d_scratch_cross.data(),
                                    d_scratch_low.data()};
    // Alternate cases overwrite a grad_x0 full of junk instead of accumulating onto zeros.
    const bool overwrite = c.batch % 2 == 1;
    if (overwrite) {
      ASSERT_TRUE(d_gx0.fill_bytes(0x3f).is_ok());
      args.accumulate_grad_x0 = false;
    }
    const Status status = nn::cross_layer_backward(problem, args, context);
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    ASSERT_TRUE(gpu::synchronize().is_ok());

    const auto want_out = ref::cross_layer_forward(c.batch, c.width, c.rank, x0.values, x.values, v.values,
                                                   u.values, bias.values);
    const auto want = ref::cross_layer_backward(c.batch, c.width, c.rank, x0.values, x.values, v.values, u.values,
                                                bias.values, g.values);
    const auto m = cross_magnitudes(c.batch, c.width, c.rank, x0.values, x.values, v.values, u.values, bias.values,
                                    g.values);
    // fp32: the longest chain is B + W + R plus a few element-wise steps (gamma_n, n = B + W + R + 4).
    // bf16: the kept low/cross and the stored d cross, d low, grad_x, grad_x0 are rounded to bf16
    // at most 5 times along a chain: add gamma_5 in bf16's unit roundoff.
    const double n = static_cast<double>(c.batch + c.width + c.rank + 4);
    const double u32 = unit_roundoff(DType::kF32), u16 = unit_roundoff(DType::kBF16);
    const double factor = n * u32 / (1 - n * u32) + (c.dtype == DType::kF32 ? 0.0 : 5 * u16 / (1 - 5 * u16));
    const auto download_act = [&](const gpu::DeviceBuffer& buffer) { return to_doubles(download_bytes(buffer, n_bw * element), c.dtype); };
    const auto download_f32 = [](const gpu::DeviceBuffer& buffer, std::size_t count) {
      const auto values = gpu::download<float>(buffer, count).value();
      return std::vector<double>(values.begin(), values.end());
    };
    expect_within_bound(download_act(d_out), want_out, m.out, factor, "out");
    expect_within_bound(download_act(d_gx0), want.x0, m.grad_x0, factor, "grad_x0");
    expect_within_bound(download_act(d_gx), want.x, m.grad_x, factor, "grad_input");
    expect_within_bound(download_f32(d_gv, n_rw), want.v, m.grad_v, factor, "grad_v");
    expect_within_bound(download_f32(d_gu, n_rw), want.u, m.grad_u, factor, "grad_u");
    expect_within_bound(download_f32(d_gc, static_cast<std::size_t>(c.width)), want.c, m.grad_c, factor, "grad_c");
  }
}

TEST(GpuDenseOps, BadArgumentsAreNamed) {
  nn::gpu::InteractionShape shape{4, 0, 16, DType::kF32};
  auto status = shape.validate();
  EXPECT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("num_embeddings=0"), std::string::npos) << status.message();
  shape = {4, 200, 128, DType::kF32};
  EXPECT_EQ(shape.validate().code(), StatusCode::kUnsupported);
  shape = {4, 2, 16, DType::kI32};
  EXPECT_NE(shape.validate().message().find("int32"), std::string::npos) << shape.validate().message();
  nn::gpu::DenseOptimizerParams params;
  params.beta1 = 1.0f;
  EXPECT_NE(params.validate().message().find("beta1"), std::string::npos);
}

}  // namespace
}  // namespace parity
