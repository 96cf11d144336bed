// time_cublaslt_heuristic: cuBLASLt's default choice (its heuristic top-1), checked then timed.
// Used by `parity bench gemm` and by the probe's bf16 GEMM rate.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <memory>

#include "parity/bench/gemm_timing.hpp"

namespace parity::gemm {

namespace {
// Fixed so two runs time the same inputs; the check draws its own entries from it too.
constexpr std::uint64_t kOperandSeed = 20261129;
constexpr int kCheckSamples = 256;

// The benchmarked problem: D[m x n] = A * B, TN, one dtype throughout; validated with the options.
Result<GemmProblem> tn_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype,
                               const bench::TimingOptions& options) {
  GemmProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.a_dtype = problem.b_dtype = problem.c_dtype = dtype;
  problem.layout = GemmLayout::kTN;
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_RETURN_IF_ERROR(bench::validate_timing_options(options));
  return problem;
}
}  // namespace

Result<GemmTiming> time_cublaslt_heuristic(std::int64_t m, std::int64_t n, std::int64_t k,
                                           DType dtype, const bench::TimingOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const GemmProblem problem, tn_problem(m, n, k, dtype, options));
  PARITY_ASSIGN_OR_RETURN(auto provider, CublasLtProvider::create());
  PARITY_ASSIGN_OR_RETURN(const auto picks, provider->heuristic(problem, 1));
  if (picks.empty()) {
    return unsupported("cuBLASLt's heuristic offers no configuration for ", problem.describe());
  }
  const Candidate& pick = picks.front();
  PARITY_ASSIGN_OR_RETURN(RandomGemmOperands operands,
                          RandomGemmOperands::create(problem, kOperandSeed, pick.workspace_bytes));
  PARITY_RETURN_IF_ERROR(provider->run(problem, pick, operands.operands()));
  if (const cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) {
    return device_error("cublasLtMatmul (heuristic top-1) failed asynchronously: ",
                        cudaGetErrorString(error));
  }
  GemmTiming timing;
  timing.configuration = provider->configuration(pick);
  PARITY_ASSIGN_OR_RETURN(timing.max_relative_error,
                          operands.max_relative_error(kCheckSamples, kOperandSeed + 1));
  const double tolerance = RandomGemmOperands::tolerance(problem);
  if (!(timing.max_relative_error <= tolerance)) {
    return internal_error("cuBLASLt heuristic top-1 (", timing.configuration, ") on ",
                          problem.describe(), ": max relative error ", timing.max_relative_error,
                          " exceeds the derived tolerance ", tolerance, "; not timed");
  }
  const GemmOperands ops = operands.operands();
  PARITY_ASSIGN_OR_RETURN(timing.stats, bench::time_on_device(
                                            [&](gpu::StreamHandle stream) {
                                              GemmOperands on_stream = ops;
                                              on_stream.stream = stream;
                                              return provider->run(problem, pick, on_stream);
                                            },
                                            options));
  timing.median_tflops = problem.flop_count() / (timing.stats.median_ms * 1e-3) / 1e12;
  return timing;
}

}  // namespace parity::gemm

namespace parity::gemm {

Result<GemmTiming> time_cublas_gemm_ex(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype,
                                       const bench::TimingOptions& options,
                                       std::uint64_t workspace_bytes) {
  PARITY_ASSIGN_OR_RETURN(const GemmProblem problem, tn_problem(m, n, k, dtype, options));
  PARITY_CHECK_ARG(dtype == DType::kBF16 || dtype == DType::kF16, "time_cublas_gemm_ex: dtype=",
                   dtype_name(dtype), " (expected bf16 or fp16)");
  const cudaDataType_t type = dtype == DType::kBF16 ? CUDA_R_16BF : CUDA_R_16F;
  PARITY_CHECK_ARG(workspace_bytes <= (1ull << 31), "time_cublas_gemm_ex: workspace_bytes=",
                   workspace_bytes, " (expected <= 2 GiB)");
  PARITY_ASSIGN_OR_RETURN(RandomGemmOperands operands,
                          RandomGemmOperands::create(problem, kOperandSeed, workspace_bytes));
  cublasHandle_t raw_handle = nullptr;
  if (cublasCreate(&raw_handle) != CUBLAS_STATUS_SUCCESS) return device_error("cublasCreate failed");
  const std::unique_ptr<cublasContext, decltype(&cublasDestroy)> handle(raw_handle, &cublasDestroy);
  const GemmOperands ops = operands.operands();
  if (cublasSetWorkspace(handle.get(), ops.workspace, ops.workspace_bytes) != CUBLAS_STATUS_SUCCESS) {
    return device_error("cublasSetWorkspace failed");
  }
  const float alpha = 1.0f;
  const float beta = 0.0f;
  // The call torch's default BLAS backend makes for F.linear: D[m x n] = op(A)=T (K x M stored)
  // times B (K x N stored), fp32 compute, cuBLAS's own algorithm choice.
  const auto run = [&](gpu::StreamHandle stream) -> Status {
    cublasSetStream(handle.get(), static_cast<cudaStream_t>(stream));
    const cublasStatus_t status = cublasGemmEx(
        handle.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n),
        static_cast<int>(k), &alpha, ops.a, type, static_cast<int>(problem.lda_or_packed()), ops.b,
        type, static_cast<int>(problem.ldb_or_packed()), &beta, ops.d, type,
        static_cast<int>(problem.ldc_or_packed()), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    if (status != CUBLAS_STATUS_SUCCESS) {
      return device_error("cublasGemmEx failed: ", cublasGetStatusString(status));
    }
    return Status::ok();
  };
  PARITY_RETURN_IF_ERROR(run(nullptr));
  if (const cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) {
    return device_error("cublasGemmEx failed asynchronously: ", cudaGetErrorString(error));
  }
  GemmTiming timing;
  timing.configuration = detail::concat("cublasGemmEx (CUBLAS_GEMM_DEFAULT, ", workspace_bytes,
                                        " B workspace)");
  PARITY_ASSIGN_OR_RETURN(timing.max_relative_error,
                          operands.max_relative_error(kCheckSamples, kOperandSeed + 1));
  const double tolerance = RandomGemmOperands::tolerance(problem);
  if (!(timing.max_relative_error <= tolerance)) {
    return internal_error("cublasGemmEx on ", problem.describe(), ": max relative error ",
                          timing.max_relative_error, " exceeds the derived tolerance ", tolerance,
                          "; not timed");
  }
  PARITY_ASSIGN_OR_RETURN(timing.stats, bench::time_on_device(run, options));
  timing.median_tflops = problem.flop_count() / (timing.stats.median_ms * 1e-3) / 1e12;
  return timing;
}

}  // namespace parity::gemm
