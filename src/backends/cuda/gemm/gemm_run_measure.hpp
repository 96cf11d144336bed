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

// Scratch operands the candidates run on (small finite values; results are discarded).
struct MeasureBuffers {
  gpu::DeviceBuffer a, b, d, aux, bias, workspace;
};

// Buffers large enough for `problem` (its leading dimensions and batch strides), the aux matrix,
// a bias (gradient) vector and `workspace_bytes` of workspace.
Result<MeasureBuffers> allocate_measure_buffers(const GemmRunProblem& problem,
                                                std::uint64_t workspace_bytes);

// Microseconds per run of `algo` on the descriptor and layouts (D written in place of C, beta 0),
// on the default stream; kUnsupported when cuBLASLt refuses to launch it.
Result<double> time_matmul_us(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                              cublasLtMatrixLayout_t c, const cublasLtMatmulAlgo_t& algo,
                              const MeasureBuffers& buffers);

}  // namespace parity::gemm::detail
