// `parity bench gemm`: cuBLASLt's default choice (its heuristic top-1) for D = A*B, TN, bf16/fp16
// in and out with fp32 accumulation (fp32 as TF32), normal random inputs, output checked against
// an fp64 reference on sampled entries before timing; device-event times with the L2 flushed.
// The driver is parity/bench/gemm_timing.hpp's run_gemm_bench. Arguments are validated first
// (exit 2), then the device is required (exit 3).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/gemm_timing.hpp"

namespace parity::cli {
namespace {

struct BenchGemmArgs {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "bf16";
  std::string shapes;
  bench::TimingSettings timing;
  std::string library = "cublaslt";
  std::uint64_t cublas_workspace_bytes = 32ull << 20;
  std::string out;
};

Status run_bench_gemm(const BenchGemmArgs& args) {
  PARITY_ASSIGN_OR_RETURN(const DType dtype, gemm::parse_gemm_dtype(args.dtype));
  gemm::GemmBenchRequest request;
  request.dtype = dtype;
  PARITY_ASSIGN_OR_RETURN(request.shapes, gemm::gemm_bench_shapes(args.shapes, args.m, args.n, args.k, dtype));
  PARITY_ASSIGN_OR_RETURN(request.timing, bench::timing_options_from_settings("bench gemm", args.timing));
  request.use_cublas = args.library == "cublas";
  request.cublas_workspace_bytes = args.cublas_workspace_bytes;
  request.out = args.out;
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench gemm"));
#ifdef PARITY_HAS_CUDA
  const auto print = [](const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  };
  PARITY_ASSIGN_OR_RETURN(const std::string summary, gemm::run_gemm_bench(request, print));
  std::fputs(summary.c_str(), stdout);
#endif
  return Status::ok();
}

}  // namespace

void add_bench_gemm_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchGemmArgs>();
  auto* cmd = bench.add_subcommand(
      "gemm", "GEMM with cuBLASLt's default choice: checked, then timed with the L2 flushed");
  cmd->add_option("--m", args->m, "rows of C");
  cmd->add_option("--n", args->n, "columns of C");
  cmd->add_option("--k", args->k, "reduction length");
  cmd->add_option("--dtype", args->dtype, "bf16, fp16 or fp32 (run as TF32)");
  cmd->add_option("--shapes", args->shapes, "CSV of shapes (name,m,n,k[,...]) instead of --m/--n/--k");
  add_timing_flags(cmd, args->timing, TimingFlags::kAll);
  cmd->add_option("--library", args->library,
                  "cublaslt: cuBLASLt's heuristic top-1 (default); cublas: cublasGemmEx, the call torch's "
                  "default BLAS backend makes")
      ->check(CLI::IsMember({"cublaslt", "cublas"}));
  cmd->add_option("--cublas-workspace-bytes", args->cublas_workspace_bytes,
                  "workspace of the cuBLAS handle with --library cublas (cuBLAS's choice depends on it)");
  cmd->add_option("--out", args->out, "write the results JSON (with provenance) to FILE");
  cmd->callback([args, &outcome] { outcome.status = run_bench_gemm(*args); });
}

}  // namespace parity::cli
