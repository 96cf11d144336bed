// GemmChoice::kMeasured's timing (gemm_run_cuda.cpp): scratch operands shaped like a run problem,
// and the time of one cuBLASLt algorithm on them. Internal to src/backends/cuda/gemm/.
#pragma once

#include <cublasLt.h>

#include "parity/core/gpu.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/gemm.hpp"

namespace parity::gemm::detail {

// Each candidate is timed as the best of kMeasureTrials means of kMeasureReps back-to-back runs
// after kMeasureWarmups: at a few hundred microseconds per layer GEMM, well under a second for a
// whole DLRM, paid once when the Gemm is created.
inline constexpr int kMeasureWarmups = 2;
inline constexpr int kMeasureReps = 5;
inline constexpr int kMeasureTrials = 3;
// GemmOptions::measured_flush_l2: the median of kMeasureFlushedReps runs, each after a write of
// twice the L2 (tens of microseconds each: a few milliseconds per candidate pool, once per Gemm).
inline constexpr int kMeasureFlushedReps = 9;

// Scratch operands the candidates run on (small finite values; results are discarded); `flush`
// (twice the device's L2) is allocated only for flushed timing.
struct MeasureBuffers {
  gpu::DeviceBuffer a, b, d, aux, bias, workspace, flush;
};

// Buffers large enough for `problem` (its leading dimensions and batch strides), the aux matrix,
// a bias (gradient) vector, `workspace_bytes` of workspace and, where `flush_l2`, the flush buffer.
Result<MeasureBuffers> allocate_measure_buffers(const GemmRunProblem& problem,
                                                std::uint64_t workspace_bytes, bool flush_l2);

// Microseconds per run of `algo` on the descriptor and layouts (D written in place of C, beta 0),
// on the default stream: flushed medians where buffers.flush is allocated, else the best mean of
// back-to-back runs; kUnsupported when cuBLASLt refuses to launch it.
Result<double> time_matmul_us(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                              cublasLtMatrixLayout_t c, const cublasLtMatmulAlgo_t& algo,
                              const MeasureBuffers& buffers);

}  // namespace parity::gemm::detail
