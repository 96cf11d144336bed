// `parity bench gemm` driver (include/parity/bench/gemm_timing.hpp): cuBLASLt's default choice (or
// cublasGemmEx's) per shape, output checked against an fp64 reference on sampled entries before
// timing, device-event times with the L2 flushed, and the results file.
#include "bench/results_json.hpp"
#include "core/text_format.hpp"
#include "parity/bench/gemm_timing.hpp"

namespace parity::gemm {

Result<std::string> run_gemm_bench(const GemmBenchRequest& request,
                                   const std::function<void(const std::string&)>& print) {
  const auto& options = request.timing;
  const std::string library = request.use_cublas ? "cublas" : "cublaslt";
  nlohmann::json document = bench::results_document("gemm_cublaslt_heuristic", bench::provenance_json(0));
  document["method"] = {{"layout", "TN"},
                        {"dtype", gemm_dtype_name(request.dtype)},
                        {"accumulate", "fp32"},
                        {"choice", "cuBLASLt heuristic top-1"},
                        {"cache", bench::cache_mode_name(options.cache)},
                        {"warmup_iterations", options.warmup_iterations},
                        {"repetitions", options.repetitions},
                        {"warmup_ms", options.warmup_ms},
                        {"rep_ms", options.rep_ms},
                        {"flush_bytes", options.flush_bytes},
                        {"inputs", "normal(0,1) rounded to the operand type"},
                        {"cublaslt_version", CublasLtProvider::library_version()}};
  PARITY_ASSIGN_OR_RETURN(const auto clocks_before, bench::read_device_clocks());
  print(format_text("bench gemm: %s, %s TN, fp32 accumulate, cache=%s, warmup=%d, reps=%d\n",
                    request.use_cublas ? "cublasGemmEx (cuBLAS's own choice)" : "cuBLASLt heuristic top-1",
                    std::string(gemm_dtype_name(request.dtype)).c_str(), bench::cache_mode_name(options.cache),
                    options.warmup_iterations, options.repetitions));
  print(format_text("%-24s %6s %6s %6s %10s %10s %10s %10s %8s %9s  %s\n", "shape", "m", "n", "k", "median_ms",
                    "p10_ms", "p90_ms", "min_ms", "TFLOP/s", "max_rel", "configuration"));
  nlohmann::json results = nlohmann::json::array();
  for (const auto& shape : request.shapes) {
    const auto& p = shape.problem;
    auto timing = request.use_cublas
                      ? time_cublas_gemm_ex(p.m, p.n, p.k, request.dtype, options, request.cublas_workspace_bytes)
                      : time_cublaslt_heuristic(p.m, p.n, p.k, request.dtype, options);
    if (!timing.is_ok()) return timing.status().with_context("bench gemm " + p.describe());
    const auto& s = timing->stats;
    print(format_text("%-24s %6lld %6lld %6lld %10.4f %10.4f %10.4f %10.4f %8.1f %9.2e  %s\n", shape.name.c_str(),
                      static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                      s.median_ms, s.p10_ms, s.p90_ms, s.min_ms, timing->median_tflops, timing->max_relative_error,
                      timing->configuration.c_str()));
    results.push_back({{"name", shape.name},
                       {"m", p.m},
                       {"n", p.n},
                       {"k", p.k},
                       {"dtype", gemm_dtype_name(request.dtype)},
                       {"stats", bench::sample_stats_json(s)},
                       {"median_tflops", timing->median_tflops},
                       {"configuration", timing->configuration},
                       {"library", library},
                       {"max_relative_error", timing->max_relative_error},
                       {"tolerance", RandomGemmOperands::tolerance(p)}});
  }
  PARITY_ASSIGN_OR_RETURN(const auto clocks_after, bench::read_device_clocks());
  std::string text = format_text("clocks: SM %d -> %d MHz (%s)\n", clocks_before.sm_clock_mhz,
                                 clocks_after.sm_clock_mhz, clocks_after.source.c_str());
  document["results"] = std::move(results);
  PARITY_RETURN_IF_ERROR(bench::finish_results_document(document, clocks_before, clocks_after, request.out, &text));
  return text;
}

}  // namespace parity::gemm
