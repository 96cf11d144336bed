// `parity bench gemm`: cuBLASLt's default choice (its heuristic top-1) for D = A*B, TN, bf16/fp16
// in and out with fp32 accumulation (fp32 as TF32), normal random inputs, output checked against
// an fp64 reference on sampled entries before timing; device-event times with the L2 flushed.
// Arguments are validated first (exit 2), then the device is required (exit 3).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/bench/provenance.hpp"
#include "parity/bench/results.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/problem.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/gemm/cublaslt.hpp"
#endif

namespace parity::cli {
namespace {

struct BenchGemmArgs {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "bf16";
  std::string shapes;
  int warmup = 10;
  int reps = 50;
  double warmup_ms = 0.0;
  double rep_ms = 0.0;
  std::string flush_bytes = "0";
  std::string cache = "flush";
  std::string library = "cublaslt";
  std::uint64_t cublas_workspace_bytes = 32ull << 20;
  std::string out;
};

struct NamedShape {
  std::string name;
  gemm::GemmProblem problem;
};

Result<std::vector<NamedShape>> shapes_from_args(const BenchGemmArgs& args, DType dtype) {
  std::vector<NamedShape> shapes;
  if (!args.shapes.empty()) {
    PARITY_CHECK_ARG(args.m == 0 && args.n == 0 && args.k == 0,
                     "bench gemm: give either --shapes or --m/--n/--k, not both");
    PARITY_ASSIGN_OR_RETURN(const gemm::ShapeSuite suite, gemm::read_shape_suite(args.shapes));
    PARITY_CHECK_ARG(!suite.problems.empty(), "bench gemm: --shapes='", args.shapes,
                     "' holds no shapes");
    for (std::size_t i = 0; i < suite.problems.size(); ++i) {
      shapes.push_back({suite.names[i], suite.problems[i]});
    }
  } else {
    PARITY_CHECK_ARG(args.m > 0 && args.n > 0 && args.k > 0, "bench gemm: --m=", args.m, " --n=",
                     args.n, " --k=", args.k, " must all be > 0 (or give --shapes FILE)");
    gemm::GemmProblem problem;
    problem.m = args.m;
    problem.n = args.n;
    problem.k = args.k;
    shapes.push_back({"", problem});
  }
  for (auto& shape : shapes) {
    shape.problem.a_dtype = shape.problem.b_dtype = shape.problem.c_dtype = dtype;
    shape.problem.layout = gemm::GemmLayout::kTN;
    PARITY_RETURN_IF_ERROR(shape.problem.validate().with_context("bench gemm"));
  }
  return shapes;
}

Status run_bench_gemm(const BenchGemmArgs& args) {
  PARITY_ASSIGN_OR_RETURN(const DType dtype, gemm::parse_gemm_dtype(args.dtype));
  PARITY_ASSIGN_OR_RETURN(const auto shapes, shapes_from_args(args, dtype));
  PARITY_ASSIGN_OR_RETURN(const bench::TimingOptions options,
                          timing_options_from_flags("bench gemm", args.warmup, args.reps, args.cache, args.warmup_ms,
                                                    args.rep_ms, args.flush_bytes));
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench gemm"));
#ifdef PARITY_HAS_CUDA
  ProcessArgs process_args;
  nlohmann::json document = bench::results_document(
      "gemm_cublaslt_heuristic", bench::provenance_json(process_args.argc(), process_args.argv(), 0));
  document["method"] = {{"layout", "TN"},
                        {"dtype", gemm::gemm_dtype_name(dtype)},
                        {"accumulate", "fp32"},
                        {"choice", "cuBLASLt heuristic top-1"},
                        {"cache", bench::cache_mode_name(options.cache)},
                        {"warmup_iterations", options.warmup_iterations},
                        {"repetitions", options.repetitions},
                        {"warmup_ms", options.warmup_ms},
                        {"rep_ms", options.rep_ms},
                        {"flush_bytes", options.flush_bytes},
                        {"inputs", "normal(0,1) rounded to the operand type"},
                        {"cublaslt_version", gemm::CublasLtProvider::library_version()}};
  PARITY_ASSIGN_OR_RETURN(const auto clocks_before, bench::read_device_clocks());
  std::printf("bench gemm: %s, %s TN, fp32 accumulate, cache=%s, warmup=%d, reps=%d\n",
              args.library == "cublas" ? "cublasGemmEx (cuBLAS's own choice)" : "cuBLASLt heuristic top-1",
              std::string(gemm::gemm_dtype_name(dtype)).c_str(), bench::cache_mode_name(options.cache),
              options.warmup_iterations, options.repetitions);
  std::printf("%-24s %6s %6s %6s %10s %10s %10s %10s %8s %9s  %s\n", "shape", "m", "n", "k",
              "median_ms", "p10_ms", "p90_ms", "min_ms", "TFLOP/s", "max_rel", "configuration");
  nlohmann::json results = nlohmann::json::array();
  for (const auto& shape : shapes) {
    const auto& p = shape.problem;
    auto timing = args.library == "cublas" ? gemm::time_cublas_gemm_ex(p.m, p.n, p.k, dtype, options,
                                                                       args.cublas_workspace_bytes)
                                           : gemm::time_cublaslt_heuristic(p.m, p.n, p.k, dtype, options);
    if (!timing.is_ok()) return timing.status().with_context("bench gemm " + p.describe());
    const auto& s = timing->stats;
    std::printf("%-24s %6lld %6lld %6lld %10.4f %10.4f %10.4f %10.4f %8.1f %9.2e  %s\n",
                shape.name.c_str(), static_cast<long long>(p.m), static_cast<long long>(p.n),
                static_cast<long long>(p.k), s.median_ms, s.p10_ms, s.p90_ms, s.min_ms,
                timing->median_tflops, timing->max_relative_error, timing->configuration.c_str());
    std::fflush(stdout);
    results.push_back({{"name", shape.name},
                       {"m", p.m},
                       {"n", p.n},
                       {"k", p.k},
                       {"dtype", gemm::gemm_dtype_name(dtype)},
                       {"stats", bench::sample_stats_json(s)},
                       {"median_tflops", timing->median_tflops},
                       {"configuration", timing->configuration},
                       {"library", args.library},
                       {"max_relative_error", timing->max_relative_error},
                       {"tolerance", gemm::RandomGemmOperands::tolerance(p)}});
  }
  PARITY_ASSIGN_OR_RETURN(const auto clocks_after, bench::read_device_clocks());
  std::printf("clocks: SM %d -> %d MHz (%s)\n", clocks_before.sm_clock_mhz, clocks_after.sm_clock_mhz,
              clocks_after.source.c_str());
  document["results"] = std::move(results);
  return finish_results_document(document, clocks_before, clocks_after, args.out);
#else
  return internal_error("bench gemm: unreachable without CUDA");
#endif
}

}  // namespace

void add_bench_gemm_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchGemmArgs>();
  auto* cmd = bench.add_subcommand(
      "gemm", "GEMM with cuBLASLt's default choice: checked, then timed with the L2 flushed");
  cmd->add_option("--m", args->m, "rows of C");
  cmd->add_option("--n", args->n, "columns of C");
  cmd->add_option("--k", args->k, "reduction length");
  cmd->add_option("--dtype", args->dtype, "bf16, fp16 or fp32 (run as TF32)")->capture_default_str();
  cmd->add_option("--shapes", args->shapes, "CSV of shapes (name,m,n,k[,...]) instead of --m/--n/--k");
  cmd->add_option("--warmup", args->warmup, "untimed iterations before timing")->capture_default_str();
  cmd->add_option("--reps", args->reps, "timed repetitions (each timed alone)")->capture_default_str();
  add_time_based_flags(cmd, args->warmup_ms, args->rep_ms, args->flush_bytes);
  cmd->add_option("--cache", args->cache, "flush: L2 flushed before each repetition; warm: not flushed")
      ->capture_default_str();
  cmd->add_option("--library", args->library,
                  "cublaslt: cuBLASLt's heuristic top-1 (default); cublas: cublasGemmEx, the call torch's "
                  "default BLAS backend makes")
      ->check(CLI::IsMember({"cublaslt", "cublas"}))
      ->capture_default_str();
  cmd->add_option("--cublas-workspace-bytes", args->cublas_workspace_bytes,
                  "workspace of the cuBLAS handle with --library cublas (cuBLAS's choice depends on it)")
      ->capture_default_str();
  cmd->add_option("--out", args->out, "write the results JSON (with provenance) to FILE");
  cmd->callback([args, &outcome] { outcome.status = run_bench_gemm(*args); });
}

}  // namespace parity::cli
