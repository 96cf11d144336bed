// Shared by the CPU and GPU linear-layer tests: the fused dReLU backward (the producer's ReLU mask
// applied in the consumer's data-gradient GEMM epilogue) against the unfused one (a separate
// ReLU-backward pass), on two stacked ReLU layers x -> L1 (I -> H) -> L2 (H -> O), fp32 activations.
//
// Tolerance: both paths run the same GEMMs on the same inputs; masking is exact, so they can differ
// only by the GEMMs' summation order (different epilogue configurations). Each value of a chain of
// fp32 dot products of lengths K_1, K_2, ... lies within gamma_{sum K} * m of the exact value, m
// being the same chain evaluated on absolute values (Higham 3.5, first order); two evaluations
// differ by at most twice that. The chains here are at most B + O + H long; m is computed in fp64
// from |x|, |W|, |b| and |dy| with every ReLU mask taken as 1 (an upper bound). With TF32 the
// GEMMs round their operands to 10-bit mantissas (u_t = 2^-11): the products' magnitudes grow by at
// most (1 + u_t)^2, and the layer-1 GEMMs' operand d pre1, which may differ in its last fp32 bits
// between the paths, can round to neighbouring TF32 values: at most 2 u_t of its magnitude more.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/rng.hpp"
#include "parity/nn/linear.hpp"
#include "parity/train/buffer.hpp"
#include "common/test_support.hpp"

namespace parity::testing {

struct FusedDreluCase {
  std::int64_t batch = 0, in = 0, hidden = 0, out = 0;
  nn::MathMode math = nn::MathMode::kFp32;
};

inline train::Buffer upload_floats(DeviceKind device, const std::vector<float>& values) {
  auto buffer = train::Buffer::allocate(device, static_cast<std::int64_t>(values.size() * 4), "test");
  EXPECT_TRUE(buffer.is_ok());
  EXPECT_TRUE(buffer->copy_from_host(values.data(), static_cast<std::int64_t>(values.size() * 4)).is_ok());
  return std::move(buffer).value();
}

inline std::vector<float> download_floats(const train::Buffer& buffer) {
  std::vector<float> values(static_cast<std::size_t>(buffer.size_bytes() / 4));
  EXPECT_TRUE(buffer.copy_to_host(values.data(), buffer.size_bytes()).is_ok());
  return values;
}

inline train::Buffer zeros(DeviceKind device, std::int64_t bytes) {
  auto buffer = train::Buffer::allocate(device, bytes, "test");
  EXPECT_TRUE(buffer.is_ok());
  EXPECT_TRUE(buffer->fill_zero().is_ok());
  return std::move(buffer).value();
}

// Runs the forward (with L1's mask) and both backwards; expects every gradient to agree.
inline void expect_fused_drelu_matches_unfused(const FusedDreluCase& c, const ExecutionContext& context,
                                               std::uint64_t seed) {
  const DeviceKind device = context.device;
  Rng rng(seed);
  const auto random = [&rng](std::int64_t count, double scale) {
    std::vector<float> values(static_cast<std::size_t>(count));
    for (auto& v : values) v = static_cast<float>(rng.normal() * scale);
    return values;
  };
  const std::int64_t B = c.batch, I = c.in, H = c.hidden, O = c.out;
  const auto x = random(B * I, 1.0), w1 = random(H * I, 1.0 / std::sqrt(I)), b1 = random(H, 0.5);
  const auto w2 = random(O * H, 1.0 / std::sqrt(H)), b2 = random(O, 0.5), dy = random(B * O, 1.0);
  auto dx_ = upload_floats(device, x), dw1 = upload_floats(device, w1), db1 = upload_floats(device, b1);
  auto dw2 = upload_floats(device, w2), db2 = upload_floats(device, b2), ddy = upload_floats(device, dy);
  auto y1 = zeros(device, B * H * 4), y2 = zeros(device, B * O * 4);
  auto mask = zeros(device, B * ((H + 127) / 128 * 16));
  const nn::LinearProblem p1{B, I, H, nn::Activation::kRelu, nn::BiasMode::kBias, DType::kF32, c.math};
  const nn::LinearProblem p2{B, H, O, nn::Activation::kRelu, nn::BiasMode::kBias, DType::kF32, c.math};
  ASSERT_TRUE(nn::linear_forward(p1, {dx_.data(), dw1.data(), db1.data(), y1.data(), mask.data()}, context).is_ok());
  ASSERT_TRUE(nn::linear_forward(p2, {y1.data(), dw2.data(), db2.data(), y2.data()}, context).is_ok());

  // Outputs of one backward: gw1, gb1, gw2, gb2, gx.
  const auto backward = [&](bool fused) {
    std::vector<train::Buffer> g;
    for (std::int64_t bytes : {H * I * 4, H * 4, O * H * 4, O * 4, B * I * 4}) g.push_back(zeros(device, bytes));
    auto dh = zeros(device, B * H * 4), scratch = zeros(device, B * std::max(H, O) * 4);
    nn::LinearBackwardArgs a2;
    a2.input = y1.data();
    a2.weight = dw2.data();
    a2.output = y2.data();
    a2.grad_output = ddy.data();
    a2.grad_input = dh.data();
    a2.grad_weight = g[2].as<float>();
    a2.grad_bias = g[3].as<float>();
    a2.grad_preactivation = scratch.data();
    a2.input_relu_mask = fused ? mask.data() : nullptr;
    EXPECT_TRUE(nn::linear_backward(p2, a2, context).is_ok());
    nn::LinearBackwardArgs a1;
    a1.input = dx_.data();
    a1.weight = dw1.data();
    a1.output = y1.data();
    a1.grad_output = dh.data();
    a1.grad_input = g[4].data();
    a1.grad_weight = g[0].as<float>();
    a1.grad_bias = g[1].as<float>();
    a1.grad_preactivation = scratch.data();
    a1.grad_output_is_preactivation = fused;
    EXPECT_TRUE(nn::linear_backward(p1, a1, context).is_ok());
    std::vector<std::vector<float>> host;
    for (const auto& buffer : g) host.push_back(download_floats(buffer));
    return host;
  };
  const auto unfused = backward(false);
  const auto fused = backward(true);

  // fp64 magnitudes with every mask 1: m_dpre1[b][h] = sum_o |W2[o][h]| |dy[b][o]|.
  std::vector<double> m_dpre1(static_cast<std::size_t>(B * H), 0.0), m_y1(static_cast<std::size_t>(B * H), 0.0);
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      double grad = 0, act = std::fabs(b1[h]);
      for (std::int64_t o = 0; o < O; ++o) grad += std::fabs(w2[o * H + h]) * std::fabs(dy[b * O + o]);
      for (std::int64_t i = 0; i < I; ++i) act += std::fabs(w1[h * I + i]) * std::fabs(x[b * I + i]);
      m_dpre1[b * H + h] = grad;
      m_y1[b * H + h] = act;
    }
  }
  std::vector<std::vector<double>> magnitude = {
      std::vector<double>(static_cast<std::size_t>(H * I), 0.0), std::vector<double>(static_cast<std::size_t>(H), 0.0),
      std::vector<double>(static_cast<std::size_t>(O * H), 0.0), std::vector<double>(static_cast<std::size_t>(O), 0.0),
      std::vector<double>(static_cast<std::size_t>(B * I), 0.0)};
  for (std::int64_t b = 0; b < B; ++b) {
    for (std::int64_t h = 0; h < H; ++h) {
      const double d = m_dpre1[b * H + h];
      magnitude[1][h] += d;
      for (std::int64_t i = 0; i < I; ++i) {
        magnitude[0][h * I + i] += d * std::fabs(x[b * I + i]);
        magnitude[4][b * I + i] += d * std::fabs(w1[h * I + i]);
      }
      for (std::int64_t o = 0; o < O; ++o) magnitude[2][o * H + h] += std::fabs(dy[b * O + o]) * m_y1[b * H + h];
    }
    for (std::int64_t o = 0; o < O; ++o) magnitude[3][o] += std::fabs(dy[b * O + o]);
  }
  const double u = unit_roundoff(DType::kF32);
  const double n = static_cast<double>(B + O + H + I);  // the longest chain, the forward's I included
  const bool tf32 = c.math == nn::MathMode::kTf32;
  const double operand_growth = tf32 ? std::pow(1.0 + 0x1p-11, 2) : 1.0;
  const double factor = 2.0 * (n * u / (1.0 - n * u)) * operand_growth + (tf32 ? 2 * 0x1p-11 : 0.0);
  const char* names[] = {"grad_w1", "grad_b1", "grad_w2", "grad_b2", "grad_x"};
  int differing = 0;
  for (std::size_t k = 0; k < fused.size(); ++k) {
    ASSERT_EQ(fused[k].size(), unfused[k].size());
    for (std::size_t i = 0; i < fused[k].size(); ++i) {
      const double tolerance = factor * magnitude[k][i];
      if (std::fabs(static_cast<double>(fused[k][i]) - unfused[k][i]) > tolerance && ++differing <= 5) {
        ADD_FAILURE() << names[k] << "[" << i << "]: fused " << fused[k][i] << " vs unfused " << unfused[k][i]
                      << " (tolerance " << tolerance << ")";
      }
    }
  }
  EXPECT_EQ(differing, 0);
}

}  // namespace parity::testing
