// Every GPU variant of the dot interaction (the Gram-tile forward, the register-column backward and
// the general shared-memory kernels) against the fp64 reference: random seeded inputs, odd batch
// sizes, one sample, D 16/64/128, 2..27 vectors, padded and packed output strides, NaN guard rows
// behind every output, refusals with their reasons, and bitwise run-to-run equality.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "parity/nn/dense_gpu.hpp"
#include "parity/nn/interaction.hpp"
#include "reference/dlrm_dense.hpp"

namespace parity {
namespace {

using nn::DotInteractionProblem;

ExecutionContext gpu_context() {
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  return context;
}

// Values rounded to `dtype` (so the reference sees what the device reads) and their bytes.
struct Rounded {
  std::vector<double> values;
  std::vector<std::uint8_t> bytes;
};

Rounded random_rounded(std::size_t count, DType dtype, Rng& rng) {
  Rounded r;
  const std::size_t size = dtype_size_bytes(dtype);
  r.values.resize(count);
  r.bytes.resize(count * size);
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = static_cast<float>(rng.normal());
    if (dtype == DType::kF32) {
      r.values[i] = v;
      std::memcpy(&r.bytes[i * size], &v, size);
    } else {
      const std::uint16_t bits = float_to_bf16_bits(v);
      r.values[i] = bf16_bits_to_float(bits);
      std::memcpy(&r.bytes[i * size], &bits, size);
    }
  }
  return r;
}

double decode(const std::uint8_t* p, DType dtype) {
  if (dtype == DType::kF32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, p, 2);
  return bf16_bits_to_float(bits);
}

// A device buffer of `payload` bytes followed by one guard row of `guard` bytes, all 0xFF (NaN
// in fp32 and bf16) before the kernel runs.
struct Guarded {
  gpu::DeviceBuffer buffer;
  std::size_t payload = 0;
  std::size_t guard = 0;
};

Guarded guarded(std::size_t payload, std::size_t guard) {
  Guarded g{gpu::DeviceBuffer::allocate(payload + guard).value(), payload, guard};
  EXPECT_TRUE(g.buffer.fill_bytes(0xFF).is_ok());
  return g;
}

std::vector<std::uint8_t> download(const Guarded& g) {
  std::vector<std::uint8_t> bytes(g.payload + g.guard);
  EXPECT_TRUE(g.buffer.copy_to_host(bytes.data(), bytes.size()).is_ok());
  for (std::size_t i = g.payload; i < bytes.size(); ++i) {
    if (bytes[i] != 0xFF) {
      ADD_FAILURE() << "guard byte " << i - g.payload << " behind the output was written";
      break;
    }
  }
  bytes.resize(g.payload);
  return bytes;
}

gpu::DeviceBuffer upload_bytes(const std::vector<std::uint8_t>& bytes, std::size_t offset_bytes = 0) {
  auto buffer = gpu::DeviceBuffer::allocate(bytes.size() + offset_bytes).value();
  EXPECT_TRUE(buffer.copy_from_host(bytes.data(), bytes.size(), offset_bytes).is_ok());
  return buffer;
}

// gamma_n = n u / (1 - n u): the bound on a length-n fp32 sum's relative error (Higham 3.1).
double gamma(int n) {
  const double u = unit_roundoff(DType::kF32);
  return n * u / (1.0 - n * u);
}

struct Case {
  std::int64_t batch;
  int embeddings;
  int dim;
  DType dtype;
  std::int64_t stride;       // 0 = packed
  std::size_t misalign = 0;  // elements by which bottom is shifted (tests the aligned-load fallback)
};

std::string describe(const Case& c) {
  return "batch=" + std::to_string(c.batch) + " F=" + std::to_string(c.embeddings) + " D=" + std::to_string(c.dim) +
         " " + std::string(dtype_name(c.dtype)) + " stride=" + std::to_string(c.stride) +
         " misalign=" + std::to_string(c.misalign);
}

// Runs the named forward and backward variants on one case and checks them against fp64.
void check_case(const Case& c, const char* forward_name, const char* backward_name, Rng& rng) {
  SCOPED_TRACE(describe(c) + " " + forward_name + " / " + backward_name);
  const DotInteractionProblem problem{c.batch, c.embeddings, c.dim, c.dtype, c.stride};
  const std::int64_t width = problem.output_dim();
  const std::int64_t stride = c.stride == 0 ? width : c.stride;
  const std::size_t size = dtype_size_bytes(c.dtype);
  const auto b_count = static_cast<std::size_t>(c.batch * c.dim);
  const auto e_count = static_cast<std::size_t>(c.batch * c.embeddings * c.dim);
  const auto o_count = static_cast<std::size_t>(c.batch * stride);
  const auto bottom = random_rounded(b_count, c.dtype, rng);
  const auto emb = random_rounded(e_count, c.dtype, rng);
  const auto grad_out = random_rounded(o_count, c.dtype, rng);
  auto d_bottom = upload_bytes(bottom.bytes, c.misalign * size);
  auto d_emb = upload_bytes(emb.bytes);
  auto d_grad_out = upload_bytes(grad_out.bytes);
  auto out = guarded(o_count * size, static_cast<std::size_t>(stride) * size);
  auto grad_bottom = guarded(b_count * size, static_cast<std::size_t>(c.dim) * size);
  auto grad_emb = guarded(e_count * 4, static_cast<std::size_t>(c.embeddings * c.dim) * 4);
  const void* bottom_ptr = static_cast<const std::uint8_t*>(d_bottom.data()) + c.misalign * size;

  const auto context = gpu_context();
  auto forward = select_variant(nn::dot_interaction_forward_variants(), problem, context, forward_name);
  ASSERT_TRUE(forward.is_ok()) << forward.status().message();
  auto backward = select_variant(nn::dot_interaction_backward_variants(), problem, context, backward_name);
  ASSERT_TRUE(backward.is_ok()) << backward.status().message();
  ASSERT_TRUE(forward->variant->run(problem, {bottom_ptr, d_emb.data(), out.buffer.data()}, nullptr, context).is_ok());
  const nn::DotInteractionBackwardArgs backward_args{bottom_ptr, d_emb.data(), d_grad_out.data(),
                                                     grad_bottom.buffer.data(), grad_emb.buffer.as<float>()};
  ASSERT_TRUE(backward->variant->run(problem, backward_args, nullptr, context).is_ok());
  ASSERT_TRUE(gpu::synchronize().is_ok());
  const auto got_out = download(out);
  const auto got_gb = download(grad_bottom);
  const auto got_ge = download(grad_emb);

  std::vector<double> grad_out_packed;  // the reference takes rows without padding columns
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t col = 0; col < width; ++col) {
      grad_out_packed.push_back(grad_out.values[static_cast<std::size_t>(b * stride + col)]);
    }
  }
  const auto want = ref::interaction_dot_forward(c.batch, c.embeddings, c.dim, bottom.values, emb.values);
  std::vector<double> want_gb, want_ge;
  ref::interaction_dot_backward(c.batch, c.embeddings, c.dim, bottom.values, emb.values, grad_out_packed, &want_gb,
                                &want_ge);
  // Inputs are exact in fp32. A pair sums K = D products in fp32, a gradient K = V products (V - 1
  // pairs and the zero diagonal) plus the bottom's pass-through term: |err| <= gamma_n sum|terms| +
  // u_out |value| with n = D or V + 1 (then one rounding to the output type). sum|terms| is the
  // reference run on |inputs|.
  auto abs_all = [](std::vector<double> v) {
    for (auto& x : v) x = std::abs(x);
    return v;
  };
  const auto bound = ref::interaction_dot_forward(c.batch, c.embeddings, c.dim, abs_all(bottom.values),
                                                  abs_all(emb.values));
  std::vector<double> bound_gb, bound_ge;
  ref::interaction_dot_backward(c.batch, c.embeddings, c.dim, abs_all(bottom.values), abs_all(emb.values),
                                abs_all(grad_out_packed), &bound_gb, &bound_ge);
  const double u_out = unit_roundoff(c.dtype);
  const int vectors = c.embeddings + 1;
  for (std::int64_t b = 0; b < c.batch; ++b) {
    for (std::int64_t col = 0; col < stride; ++col) {
      const double got = decode(&got_out[static_cast<std::size_t>(b * stride + col) * size], c.dtype);
      if (col >= width) {
        ASSERT_EQ(got, 0.0) << "padding of row " << b << " column " << col;
        continue;
      }
      const auto i = static_cast<std::size_t>(b * width + col);
      ASSERT_NEAR(got, want[i], gamma(c.dim) * bound[i] + u_out * std::abs(want[i]))
          << "output row " << b << " column " << col;
    }
  }
  for (std::size_t i = 0; i < b_count; ++i) {
    const double got = decode(&got_gb[i * size], c.dtype);
    ASSERT_NEAR(got, want_gb[i], gamma(vectors + 1) * bound_gb[i] + u_out * std::abs(want_gb[i])) << "grad_bottom " << i;
  }
  for (std::size_t i = 0; i < e_count; ++i) {
    const double got = decode(&got_ge[i * 4], DType::kF32);
    ASSERT_NEAR(got, want_ge[i], gamma(vectors + 1) * bound_ge[i]) << "grad_embeddings " << i;
  }
}

constexpr const char* kForwardTiles = "dot_interaction_forward_gpu_gram_tiles";
constexpr const char* kBackwardColumns = "dot_interaction_backward_gpu_register_columns";
constexpr const char* kForwardShared = "dot_interaction_forward_gpu_shared";
constexpr const char* kBackwardShared = "dot_interaction_backward_gpu_shared";

// Odd batch sizes, padded strides (to 8 columns as the trainer pads) and packed ones.
std::vector<Case> random_cases(Rng& rng) {
  std::vector<Case> cases;
  for (const DType dtype : {DType::kF32, DType::kBF16}) {
    for (const int dim : {16, 64, 128}) {
      for (const int vectors : {2, 3, 5, 8, 9, 17, 27}) {
        const std::int64_t batch = 1 + 2 * static_cast<std::int64_t>(rng.uniform() * 20.0);  // odd, 1..39
        const std::int64_t width = dim + static_cast<std::int64_t>(vectors) * (vectors - 1) / 2;
        const bool is_padded = rng.uniform() < 0.5;
        cases.push_back({batch, vectors - 1, dim, dtype, is_padded ? (width + 7) / 8 * 8 : 0});
      }
    }
  }
  cases.push_back({1, 26, 128, DType::kBF16, 480});
  cases.push_back({1, 1, 4, DType::kF32, 0});
  return cases;
}

TEST(GpuInteraction, FastVariantsMatchFp64) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(1414);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  for (const Case& c : random_cases(rng)) check_case(c, kForwardTiles, kBackwardColumns, rng);
}

TEST(GpuInteraction, GeneralVariantsMatchFp64) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(1415);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  for (const Case& c : random_cases(rng)) check_case(c, kForwardShared, kBackwardShared, rng);
}

// Inputs not aligned for the vector loads run the general kernels inside the fast variants.
TEST(GpuInteraction, MisalignedInputsFallBack) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(1416);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  check_case({5, 26, 128, DType::kBF16, 480, 1}, kForwardTiles, kBackwardColumns, rng);
  check_case({3, 7, 64, DType::kF32, 0, 1}, kForwardTiles, kBackwardColumns, rng);
}

TEST(GpuInteraction, FastVariantsSayWhyTheyRefuse) {
  PARITY_REQUIRE_GPU();  // the slots answer only with the GPU backend installed
  const auto context = gpu_context();
  const auto& forward = nn::dot_interaction_forward_variants();
  const auto& backward = nn::dot_interaction_backward_variants();
  auto forward_reason = [&](const DotInteractionProblem& p) {
    return select_variant(forward, p, context, kForwardTiles).status().message();
  };
  auto backward_reason = [&](const DotInteractionProblem& p) {
    return select_variant(backward, p, context, kBackwardColumns).status().message();
  };
  EXPECT_NE(forward_reason({4, 3, 13, DType::kF32}).find("dim=13 is not a multiple of 4"), std::string::npos);
  EXPECT_NE(backward_reason({4, 3, 13, DType::kF32}).find("dim=13 is odd"), std::string::npos);
  EXPECT_NE(backward_reason({4, 40, 16, DType::kF32}).find("41 vectors exceed the 32"), std::string::npos);
  // The general variants take these shapes: the op still runs them.
  EXPECT_TRUE(select_variant(forward, DotInteractionProblem{4, 3, 13, DType::kF32}, context).is_ok());
  EXPECT_TRUE(select_variant(backward, DotInteractionProblem{4, 40, 16, DType::kF32}, context).is_ok());
  // dlrm-kaggle's shape takes the fast variants by default.
  const DotInteractionProblem kaggle{65536, 26, 128, DType::kBF16, 480};
  EXPECT_EQ(select_variant(forward, kaggle, context)->variant->name(), kForwardTiles);
  EXPECT_EQ(select_variant(backward, kaggle, context)->variant->name(), kBackwardColumns);
}

// The fast kernels sum in a fixed order: two runs give the same bits.
TEST(GpuInteraction, FastVariantsAreBitwiseRepeatable) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(1417);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  const nn::gpu::InteractionShape shape{257, 26, 128, DType::kF32, 480};
  const auto bottom = random_rounded(static_cast<std::size_t>(257 * 128), DType::kF32, rng);
  const auto emb = random_rounded(static_cast<std::size_t>(257 * 26 * 128), DType::kF32, rng);
  const auto grad = random_rounded(static_cast<std::size_t>(257 * 480), DType::kF32, rng);
  auto d_bottom = upload_bytes(bottom.bytes);
  auto d_emb = upload_bytes(emb.bytes);
  auto d_grad = upload_bytes(grad.bytes);
  std::vector<std::vector<float>> runs;
  for (int run = 0; run < 2; ++run) {
    auto out = gpu::DeviceBuffer::allocate(257 * 480 * 4).value();
    auto grad_bottom = gpu::DeviceBuffer::allocate(257 * 128 * 4).value();
    auto grad_emb = gpu::DeviceBuffer::allocate(257 * 26 * 128 * 4).value();
    ASSERT_TRUE(nn::gpu::interaction_dot_forward_gram_tiles(shape, d_bottom.data(), d_emb.data(), out.data()).is_ok());
    ASSERT_TRUE(nn::gpu::interaction_dot_backward_register_columns(shape, d_bottom.data(), d_emb.data(), d_grad.data(),
                                                                   grad_bottom.data(), grad_emb.as<float>())
                    .is_ok());
    std::vector<float> all(257 * (480 + 128 + 26 * 128));
    ASSERT_TRUE(out.copy_to_host(all.data(), 257 * 480 * 4).is_ok());
    ASSERT_TRUE(grad_bottom.copy_to_host(all.data() + 257 * 480, 257 * 128 * 4).is_ok());
    ASSERT_TRUE(grad_emb.copy_to_host(all.data() + 257 * (480 + 128), 257 * 26 * 128 * 4).is_ok());
    runs.push_back(std::move(all));
  }
  EXPECT_EQ(std::memcmp(runs[0].data(), runs[1].data(), runs[0].size() * 4), 0);
}

}  // namespace
}  // namespace parity
