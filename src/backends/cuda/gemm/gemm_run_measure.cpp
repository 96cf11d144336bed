// Scratch operands and timing for GemmChoice::kMeasured (gemm_run_measure.hpp).
#include "backends/cuda/gemm/gemm_run_measure.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <vector>

#include "backends/cuda/common/cuda_try.hpp"
#include "backends/cuda/gemm/lt_common.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/rng.hpp"

namespace parity::gemm::detail {
namespace {

// Odd, so a pool-long period never lines up with a row or a tile.
constexpr std::size_t kNormalPoolElements = (std::size_t{1} << 20) - 3;

// `buffer` filled with normal random values of `dtype`: a host pool uploaded once, then copied
// device to device pool-long piece by piece.
Status fill_normal(gpu::DeviceBuffer& buffer, DType dtype, std::uint64_t seed) {
  const std::size_t element_bytes = dtype_size_bytes(dtype);
  std::vector<unsigned char> bits(kNormalPoolElements * element_bytes);
  Rng rng(seed);
  for (std::size_t i = 0; i < kNormalPoolElements; ++i) {
    const auto value = static_cast<float>(rng.normal());
    unsigned char* slot = bits.data() + i * element_bytes;
    if (dtype == DType::kBF16 || dtype == DType::kF16) {
      const std::uint16_t b16 = dtype == DType::kBF16 ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
      std::memcpy(slot, &b16, 2);
    } else {
      std::memcpy(slot, &value, 4);
    }
  }
  PARITY_ASSIGN_OR_RETURN(const gpu::DeviceBuffer pool, gpu::upload(bits));
  auto* destination = static_cast<unsigned char*>(buffer.data());
  const std::size_t total = buffer.size_bytes();
  for (std::size_t done = 0; done < total; done += bits.size()) {
    PARITY_CUDA_TRY(cudaMemcpy(destination + done, pool.data(), std::min(bits.size(), total - done),
                               cudaMemcpyDeviceToDevice));
  }
  return Status::ok();
}

}  // namespace

Result<MeasureBuffers> allocate_measure_buffers(const GemmRunProblem& p,
                                                std::uint64_t workspace_bytes) {
  const GemmProblem& s = p.shape;
  const bool a_t = s.layout == GemmLayout::kTN || s.layout == GemmLayout::kTT;
  const bool b_t = s.layout == GemmLayout::kNT || s.layout == GemmLayout::kTT;
  auto bytes = [&](std::int64_t ld, std::int64_t cols, std::int64_t stride, DType type) {
    const std::int64_t elements = ld * cols + stride * (s.batch - 1);
    return static_cast<std::size_t>(elements) * dtype_size_bytes(type);
  };
  MeasureBuffers buffers;
  PARITY_ASSIGN_OR_RETURN(buffers.a, gpu::DeviceBuffer::allocate(bytes(
                                         s.lda_or_packed(), a_t ? s.m : s.k, p.stride_a_or_packed(), s.a_dtype)));
  PARITY_ASSIGN_OR_RETURN(buffers.b, gpu::DeviceBuffer::allocate(bytes(
                                         s.ldb_or_packed(), b_t ? s.k : s.n, p.stride_b_or_packed(), s.b_dtype)));
  PARITY_ASSIGN_OR_RETURN(buffers.d, gpu::DeviceBuffer::allocate(
                                         bytes(s.ldc_or_packed(), s.n, p.stride_c_or_packed(), s.c_dtype)));
  // The aux matrix holds at most one D element per entry (the ReLU mask holds one bit).
  const std::int64_t aux_elements = std::max(p.default_aux_ld() * s.n * s.batch, std::int64_t{1});
  PARITY_ASSIGN_OR_RETURN(buffers.aux, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(aux_elements) *
                                                                    dtype_size_bytes(s.c_dtype)));
  PARITY_ASSIGN_OR_RETURN(buffers.bias, gpu::DeviceBuffer::allocate(
                                            static_cast<std::size_t>(std::max(s.m, s.n) + 16) * 4));
  PARITY_ASSIGN_OR_RETURN(buffers.workspace, gpu::DeviceBuffer::allocate(workspace_bytes));
  PARITY_RETURN_IF_ERROR(fill_normal(buffers.a, s.a_dtype, 1));
  PARITY_RETURN_IF_ERROR(fill_normal(buffers.b, s.b_dtype, 2));
  PARITY_RETURN_IF_ERROR(buffers.d.fill_bytes(0));
  PARITY_RETURN_IF_ERROR(buffers.aux.fill_bytes(0));
  PARITY_RETURN_IF_ERROR(buffers.bias.fill_bytes(0));
  return buffers;
}

Result<double> time_matmul_us(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                              cublasLtMatrixLayout_t c, const cublasLtMatmulAlgo_t& algo,
                              const MeasureBuffers& buffers) {
  const float alpha = 1.0f, beta = 0.0f;
  auto launch = [&]() {
    return cublasLtMatmul(handle, desc, &alpha, buffers.a.data(), a, buffers.b.data(), b, &beta,
                          buffers.d.data(), c, buffers.d.data(), c, &algo, buffers.workspace.data(),
                          buffers.workspace.size_bytes(), nullptr);
  };
  for (int i = 0; i < kMeasureWarmups; ++i) {
    const cublasStatus_t status = launch();
    if (status != CUBLAS_STATUS_SUCCESS) {
      return unsupported("cublasLtMatmul: ", cublasLtGetStatusName(status));
    }
  }
  cudaEvent_t start = nullptr, stop = nullptr;
  struct EventGuard {
    cudaEvent_t& first;
    cudaEvent_t& second;
    ~EventGuard() {
      if (first != nullptr) cudaEventDestroy(first);
      if (second != nullptr) cudaEventDestroy(second);
    }
  } guard{start, stop};
  PARITY_CUDA_TRY(cudaEventCreate(&start));
  PARITY_CUDA_TRY(cudaEventCreate(&stop));
  double best_us = std::numeric_limits<double>::infinity();
  for (int trial = 0; trial < kMeasureTrials; ++trial) {
    PARITY_CUDA_TRY(cudaEventRecord(start, nullptr));
    for (int i = 0; i < kMeasureReps; ++i) PARITY_CUBLASLT_TRY(launch());
    PARITY_CUDA_TRY(cudaEventRecord(stop, nullptr));
    PARITY_CUDA_TRY(cudaEventSynchronize(stop));
    float elapsed_ms = 0.0f;
    PARITY_CUDA_TRY(cudaEventElapsedTime(&elapsed_ms, start, stop));
    best_us = std::min(best_us, 1000.0 * elapsed_ms / kMeasureReps);
  }
  return best_us;
}

Result<std::size_t> runoff_fastest(const std::vector<double>& first_pass_us, int finalists,
                                   const std::function<Result<double>(std::size_t)>& time_candidate,
                                   double* best_us) {
  std::vector<std::size_t> order(first_pass_us.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return first_pass_us[x] < first_pass_us[y]; });
  std::size_t count = 0;
  while (count < order.size() && count < static_cast<std::size_t>(std::max(finalists, 1)) &&
         first_pass_us[order[count]] < std::numeric_limits<double>::infinity()) {
    ++count;
  }
  if (count == 0) return invalid_argument("gemm runoff: no candidate ran in the first pass");
  std::vector<std::vector<double>> rounds_us(count);
  for (int round = 0; round < kMeasureRunoffRounds && count > 1; ++round) {
    for (std::size_t f = 0; f < count; ++f) {
      PARITY_ASSIGN_OR_RETURN(const double us, time_candidate(order[f]));
      rounds_us[f].push_back(us);
    }
  }
  std::size_t winner = 0;
  double winner_us = first_pass_us[order[0]];
  for (std::size_t f = 0; count > 1 && f < count; ++f) {
    auto& times = rounds_us[f];
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
    const double median_us = times[times.size() / 2];
    if (f == 0 || median_us < winner_us) {
      winner = f;
      winner_us = median_us;
    }
  }
  *best_us = winner_us;
  return order[winner];
}

}  // namespace parity::gemm::detail
