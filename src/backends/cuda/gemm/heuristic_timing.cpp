// time_cublaslt_heuristic: cuBLASLt's default choice (its heuristic top-1), checked then timed.
// Used by `parity bench gemm` and by the probe's bf16 GEMM rate.
#include <cuda_runtime.h>

#include "parity/gemm/cublaslt.hpp"

namespace parity::gemm {

namespace {
// Fixed so two runs time the same inputs; the check draws its own entries from it too.
constexpr std::uint64_t kOperandSeed = 20261129;
constexpr int kCheckSamples = 256;
}  // namespace

Result<GemmTiming> time_cublaslt_heuristic(std::int64_t m, std::int64_t n, std::int64_t k,
                                           DType dtype, const bench::TimingOptions& options) {
  GemmProblem problem;
  problem.m = m;
  problem.n = n;
  problem.k = k;
  problem.a_dtype = problem.b_dtype = problem.c_dtype = dtype;
  problem.layout = GemmLayout::kTN;
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_RETURN_IF_ERROR(bench::validate_timing_options(options));
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
