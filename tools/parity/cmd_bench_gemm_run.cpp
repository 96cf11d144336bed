// `parity bench gemm-run`: the dense-layer GEMMs of dlrm-kaggle and dlrm-v2 (forward with bias +
// ReLU aux, data gradient with dReLU + bias gradient, weight gradient with the bias gradient)
// through gemm::Gemm::run, beside cuBLASLt's heuristic top-1 and the `gemm measure` oracle of the
// same shape, plus Gemm::run's host time against a bare cublasLtMatmul. Arguments are validated
// first (exit 2), then the device (exit 3).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/gemm_run_bench.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::cli {
namespace {

struct BenchGemmRunArgs {
  std::string model = "all";
  std::int64_t batch = 65536;
  std::string dtype = "bf16";
  int warmup = 10;
  int reps = 30;
  int oracle_reps = 30;
  bool no_oracle = false;
  std::string hw = "h200";
  std::string out;
};


Status run_bench_gemm_run(const BenchGemmRunArgs& args) {
  PARITY_CHECK_ARG(args.batch > 0, "bench gemm-run: --batch=", args.batch, " must be > 0");
  PARITY_CHECK_ARG(args.oracle_reps >= 1, "bench gemm-run: --oracle-reps=", args.oracle_reps,
                   " must be >= 1");
  PARITY_ASSIGN_OR_RETURN(const DType dtype, gemm::parse_gemm_dtype(args.dtype));
  PARITY_ASSIGN_OR_RETURN(
      const auto problems,
      bench::select_models(bench::dlrm_gemm_run_problems(args.batch, dtype), args.model));
  bench::GemmRunBenchOptions options;
  PARITY_ASSIGN_OR_RETURN(options.timing,
                          timing_options_from_flags("bench gemm-run", args.warmup, args.reps));
  options.measure_oracle = !args.no_oracle;
  options.oracle_repetitions = args.oracle_reps;
  options.hardware = args.hw;
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench gemm-run"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(const auto clocks_before, bench::read_device_clocks());
  PARITY_ASSIGN_OR_RETURN(const auto results, bench::run_gemm_run_bench(problems, options));
  PARITY_ASSIGN_OR_RETURN(const auto clocks_after, bench::read_device_clocks());
  std::printf("%-12s %-26s %-11s %10s %10s %10s %7s %8s  %s\n", "model", "layer", "pass", "run_ms",
              "heur_ms", "oracle_ms", "ratio", "host_us", "configuration");
  for (const auto& r : results) {
    if (!r.error.empty()) {
      std::printf("%-12s %-26s %-11s error: %s\n", r.item.model.c_str(), r.item.layer.c_str(),
                  r.item.pass.c_str(), r.error.c_str());
    } else {
      std::printf("%-12s %-26s %-11s %10.4f %10.4f %10.4f %7.3f %8.2f  %s\n", r.item.model.c_str(),
                  r.item.layer.c_str(), r.item.pass.c_str(), r.run.median_ms, r.heuristic.median_ms,
                  r.oracle_median_ms,
                  r.oracle_median_ms > 0.0 ? r.oracle_median_ms / r.run.median_ms : 0.0,
                  r.host_run_us - r.host_bare_us, r.configuration.c_str());
    }
  }
  if (args.out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(bench::write_gemm_run_bench_json(results, {args.batch, dtype}, options, clocks_before,
                                                          clocks_after, args.out));
  std::printf("wrote %s\n", args.out.c_str());
  return Status::ok();
#else
  return internal_error("bench gemm-run: unreachable without CUDA");
#endif
}

}  // namespace

void add_bench_gemm_run_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchGemmRunArgs>();
  auto* cmd = bench.add_subcommand("gemm-run",
                                   "DLRM dense-layer GEMMs through gemm::Gemm::run vs the oracle");
  cmd->add_option("--model", args->model, "all, dlrm-kaggle or dlrm-v2")->capture_default_str();
  cmd->add_option("--batch", args->batch,
                  "batch size (N of forward/data-gradient, K of weight-gradient)")
      ->capture_default_str();
  cmd->add_option("--dtype", args->dtype, "bf16, fp16 or fp32 (run as TF32)")
      ->capture_default_str();
  cmd->add_option("--warmup", args->warmup, "untimed iterations before timing")
      ->capture_default_str();
  cmd->add_option("--reps", args->reps, "timed repetitions (each timed alone, L2 flushed)")
      ->capture_default_str();
  cmd->add_option("--oracle-reps", args->oracle_reps, "gemm measure repetitions per candidate")
      ->capture_default_str();
  cmd->add_flag("--no-oracle", args->no_oracle,
                "skip the oracle (fast: Gemm::run, heuristic, host time only)");
  cmd->add_option("--hw", args->hw, "catalogue entry the selector models")->capture_default_str();
  cmd->add_option("--out", args->out, "write the results JSON (with provenance) to FILE");
  cmd->callback([args, &outcome] { outcome.status = run_bench_gemm_run(*args); });
}

}  // namespace parity::cli
