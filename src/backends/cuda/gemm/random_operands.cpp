// Normal random GEMM operands for timing, and the sampled fp64 check (cublaslt.hpp).
// A host pool of P normal values, rounded to the operand type, is uploaded twice back to back;
// element e of an operand starting at pool offset o holds pool[(o + e) mod P], so each P-long
// chunk is one contiguous device-to-device copy and the host can recompute any element.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "parity/gemm/cublaslt.hpp"
#include "reference/gemm.hpp"
#include "backends/cuda/common/cuda_try.hpp"

namespace parity::gemm {
namespace {

// Odd and not a multiple of any tile or row length, so rows do not repeat each other.
constexpr std::int64_t kPoolElements = (std::int64_t{1} << 22) - 3;

double bits_to_double(DType dtype, const unsigned char* bytes) {
  switch (dtype) {
    case DType::kBF16: {
      std::uint16_t bits = 0;
      std::memcpy(&bits, bytes, 2);
      return bf16_bits_to_float(bits);
    }
    case DType::kF16: {
      std::uint16_t bits = 0;
      std::memcpy(&bits, bytes, 2);
      return fp16_bits_to_float(bits);
    }
    default: {
      float value = 0.0f;
      std::memcpy(&value, bytes, 4);
      return value;
    }
  }
}

}  // namespace

struct RandomGemmOperands::Impl {
  GemmProblem problem;
  gpu::DeviceBuffer a, b, d, bias, workspace;
  std::vector<float> pool;  // exactly representable in the operand type
  std::int64_t a_offset = 0, b_offset = 0, bias_offset = 0;

  double pool_at(std::int64_t offset, std::int64_t index) const {
    return pool[static_cast<std::size_t>((offset + index) % kPoolElements)];
  }
};

RandomGemmOperands::RandomGemmOperands() = default;
RandomGemmOperands::~RandomGemmOperands() = default;
RandomGemmOperands::RandomGemmOperands(RandomGemmOperands&&) noexcept = default;
RandomGemmOperands& RandomGemmOperands::operator=(RandomGemmOperands&&) noexcept = default;

namespace {

Status tile_pool(const gpu::DeviceBuffer& doubled_pool, std::size_t elem_bytes, std::int64_t offset,
                 gpu::DeviceBuffer& target, std::int64_t elements) {
  const auto* source = static_cast<const unsigned char*>(doubled_pool.data()) +
                       static_cast<std::size_t>(offset) * elem_bytes;
  auto* destination = static_cast<unsigned char*>(target.data());
  for (std::int64_t done = 0; done < elements; done += kPoolElements) {
    const std::int64_t count = std::min(kPoolElements, elements - done);
    PARITY_CUDA_TRY(cudaMemcpy(destination + static_cast<std::size_t>(done) * elem_bytes, source,
                               static_cast<std::size_t>(count) * elem_bytes,
                               cudaMemcpyDeviceToDevice));
  }
  return Status::ok();
}

}  // namespace

Result<RandomGemmOperands> RandomGemmOperands::create(const GemmProblem& problem, std::uint64_t seed,
                                                      std::uint64_t workspace_bytes) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  RandomGemmOperands out;
  out.impl_ = std::make_unique<Impl>();
  Impl& impl = *out.impl_;
  impl.problem = problem;
  const DType in = problem.a_dtype;
  const std::size_t in_bytes = dtype_size_bytes(in);
  const std::size_t out_bytes = dtype_size_bytes(problem.c_dtype);

  // Pool values in the operand type; raw bits twice back to back for contiguous copies.
  Rng rng(seed);
  impl.pool.resize(static_cast<std::size_t>(kPoolElements));
  std::vector<unsigned char> bits(2 * static_cast<std::size_t>(kPoolElements) * in_bytes);
  for (std::size_t i = 0; i < impl.pool.size(); ++i) {
    const auto value = static_cast<float>(rng.normal());
    unsigned char* slot = bits.data() + i * in_bytes;
    if (in == DType::kBF16 || in == DType::kF16) {
      const std::uint16_t b16 = in == DType::kBF16 ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
      std::memcpy(slot, &b16, 2);
    } else {
      std::memcpy(slot, &value, 4);
    }
    impl.pool[i] = static_cast<float>(bits_to_double(in, slot));
  }
  std::memcpy(bits.data() + bits.size() / 2, bits.data(), bits.size() / 2);
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer doubled_pool, gpu::upload(bits));
  impl.a_offset = rng.uniform_int(0, kPoolElements - 1);
  impl.b_offset = rng.uniform_int(0, kPoolElements - 1);
  impl.bias_offset = rng.uniform_int(0, kPoolElements - 1);

  const std::int64_t a_elements = ref::gemm_a_storage(problem);
  const std::int64_t b_elements = ref::gemm_b_storage(problem);
  const std::int64_t d_elements = ref::gemm_d_storage(problem);
  PARITY_ASSIGN_OR_RETURN(impl.a, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(a_elements) * in_bytes));
  PARITY_ASSIGN_OR_RETURN(impl.b, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(b_elements) * in_bytes));
  PARITY_ASSIGN_OR_RETURN(impl.d, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(d_elements) * out_bytes));
  PARITY_RETURN_IF_ERROR(tile_pool(doubled_pool, in_bytes, impl.a_offset, impl.a, a_elements));
  PARITY_RETURN_IF_ERROR(tile_pool(doubled_pool, in_bytes, impl.b_offset, impl.b, b_elements));
  if (problem.epilogue == Epilogue::kBias) {
    // The bias has D's type and is tiled from the input pool: the two types must agree.
    if (problem.c_dtype != in) {
      return unsupported("random operands: epilogue=bias with c_dtype != a_dtype is not supported");
    }
    PARITY_ASSIGN_OR_RETURN(impl.bias, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(problem.m) * in_bytes));
    PARITY_RETURN_IF_ERROR(tile_pool(doubled_pool, in_bytes, impl.bias_offset, impl.bias, problem.m));
  }
  if (workspace_bytes > 0) {
    PARITY_ASSIGN_OR_RETURN(impl.workspace, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(workspace_bytes)));
  }
  PARITY_RETURN_IF_ERROR(out.poison_output());
  return out;
}

GemmOperands RandomGemmOperands::operands(void* stream) const {
  GemmOperands ops;
  ops.a = impl_->a.data();
  ops.b = impl_->b.data();
  ops.d = impl_->d.data();
  ops.bias = impl_->bias.data();
  ops.workspace = impl_->workspace.data();
  ops.workspace_bytes = impl_->workspace.size_bytes();
  ops.stream = stream;
  return ops;
}

Status RandomGemmOperands::poison_output() {
  // All-ones bytes are a NaN in bf16, fp16 and fp32 alike.
  return impl_->d.fill_bytes(0xff);
}

Result<double> RandomGemmOperands::max_relative_error(int samples, std::uint64_t seed) const {
  PARITY_CHECK_ARG(samples >= 1, "max_relative_error: samples=", samples, " (expected >= 1)");
  const GemmProblem& p = impl_->problem;
  const Impl& impl = *impl_;
  const ref::ElementAt a_at = [&](std::int64_t i) { return impl.pool_at(impl.a_offset, i); };
  const ref::ElementAt b_at = [&](std::int64_t i) { return impl.pool_at(impl.b_offset, i); };
  const ref::ElementAt bias_at = [&](std::int64_t i) { return impl.pool_at(impl.bias_offset, i); };
  Rng rng(seed);
  const std::size_t out_bytes = dtype_size_bytes(p.c_dtype);
  double worst = 0.0;
  for (int s = 0; s < samples; ++s) {
    std::int64_t batch_index = rng.uniform_int(0, p.batch - 1);
    std::int64_t row = rng.uniform_int(0, p.m - 1);
    std::int64_t col = rng.uniform_int(0, p.n - 1);
    if (s < 4) {  // the four corners: edge tiles are where partial-tile bugs live
      row = (s & 1) != 0 ? p.m - 1 : 0;
      col = (s & 2) != 0 ? p.n - 1 : 0;
      batch_index = (s & 1) != 0 ? p.batch - 1 : 0;
    }
    unsigned char bytes[4] = {};
    const auto index = static_cast<std::size_t>(ref::gemm_d_index(p, batch_index, row, col));
    PARITY_RETURN_IF_ERROR(impl.d.copy_to_host(bytes, out_bytes, index * out_bytes));
    const double got = bits_to_double(p.c_dtype, bytes);
    if (!std::isfinite(got)) return std::numeric_limits<double>::infinity();
    const ref::GemmElement want = ref::gemm_element(p, a_at, b_at, bias_at, batch_index, row, col);
    const double scale = want.abs_sum > 0.0 ? want.abs_sum : 1.0;
    worst = std::max(worst, std::abs(got - want.value) / scale);
  }
  return worst;
}

double RandomGemmOperands::tolerance(const GemmProblem& problem) {
  // Error of one output relative to sum_k |a||b| (inputs are exact in their type):
  //   rounding the fp32 result to the output type: u_out;
  //   TF32 operands are rounded to 10 mantissa bits inside the tensor cores: 2 u_tf32 per product;
  //   fp32 accumulation of k products plus split-K partial sums: gamma_{k+2} <= (k+2) u_fp32, doubled
  //   for the tensor cores' truncating alignment inside an MMA.
  const double u_out = unit_roundoff(problem.c_dtype);
  const double u_tf32 = problem.a_dtype == DType::kF32 ? std::ldexp(1.0, -11) : 0.0;
  const double u_fp32 = std::ldexp(1.0, -24);
  return u_out + 2.0 * u_tf32 + 2.0 * static_cast<double>(problem.k + 2) * u_fp32;
}

}  // namespace parity::gemm
