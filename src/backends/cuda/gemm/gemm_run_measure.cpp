// Scratch operands and timing for GemmChoice::kMeasured (gemm_run_measure.hpp).
#include "backends/cuda/gemm/gemm_run_measure.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "backends/cuda/common/cuda_try.hpp"
#include "backends/cuda/gemm/lt_common.hpp"

namespace parity::gemm::detail {

Result<MeasureBuffers> allocate_measure_buffers(const GemmRunProblem& p,
                                                std::uint64_t workspace_bytes, bool flush_l2) {
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
  // 0x3c in every byte: about 0.0115 in bf16 and fp32, 1.06 in fp16 -- finite, no overflow.
  PARITY_RETURN_IF_ERROR(buffers.a.fill_bytes(0x3c));
  PARITY_RETURN_IF_ERROR(buffers.b.fill_bytes(0x3c));
  PARITY_RETURN_IF_ERROR(buffers.d.fill_bytes(0));
  PARITY_RETURN_IF_ERROR(buffers.aux.fill_bytes(0));
  PARITY_RETURN_IF_ERROR(buffers.bias.fill_bytes(0));
  if (flush_l2) {
    int device = 0, l2_bytes = 0;
    PARITY_CUDA_TRY(cudaGetDevice(&device));
    PARITY_CUDA_TRY(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    PARITY_ASSIGN_OR_RETURN(buffers.flush, gpu::DeviceBuffer::allocate(
                                               2 * static_cast<std::size_t>(std::max(l2_bytes, 1 << 20))));
  }
  return buffers;
}

namespace {

struct EventPool {
  std::vector<cudaEvent_t> events;
  ~EventPool() {
    for (cudaEvent_t e : events) cudaEventDestroy(e);
  }
};

// The median of kMeasureFlushedReps runs, each timed alone after the flush buffer is rewritten.
Result<double> time_flushed_median_us(const std::function<cublasStatus_t()>& launch, const gpu::DeviceBuffer& flush) {
  EventPool pool;
  for (int i = 0; i < 2 * kMeasureFlushedReps; ++i) {
    cudaEvent_t event = nullptr;
    PARITY_CUDA_TRY(cudaEventCreate(&event));
    pool.events.push_back(event);
  }
  for (int rep = 0; rep < kMeasureFlushedReps; ++rep) {
    PARITY_CUDA_TRY(cudaMemsetAsync(flush.data(), rep & 0xff, flush.size_bytes(), nullptr));
    PARITY_CUDA_TRY(cudaEventRecord(pool.events[2 * rep], nullptr));
    PARITY_CUBLASLT_TRY(launch());
    PARITY_CUDA_TRY(cudaEventRecord(pool.events[2 * rep + 1], nullptr));
  }
  PARITY_CUDA_TRY(cudaEventSynchronize(pool.events.back()));
  std::vector<double> us(kMeasureFlushedReps);
  for (int rep = 0; rep < kMeasureFlushedReps; ++rep) {
    float elapsed_ms = 0.0f;
    PARITY_CUDA_TRY(cudaEventElapsedTime(&elapsed_ms, pool.events[2 * rep], pool.events[2 * rep + 1]));
    us[rep] = 1000.0 * elapsed_ms;
  }
  std::nth_element(us.begin(), us.begin() + kMeasureFlushedReps / 2, us.end());
  return us[kMeasureFlushedReps / 2];
}

}  // namespace

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
  if (buffers.flush.size_bytes() > 0) return time_flushed_median_us(launch, buffers.flush);
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

}  // namespace parity::gemm::detail
