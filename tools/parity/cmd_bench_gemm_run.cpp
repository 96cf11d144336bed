// `parity bench gemm-run`: the dense-layer GEMMs of dlrm-kaggle and dlrm-v2 as the trainer runs
// them (forward with bias + ReLU, data gradient, weight gradient with the bias gradient; and the
// fused-dReLU mode's forward with the ReLU mask and data gradient with dReLU)
// through gemm::Gemm::run, beside cuBLASLt's heuristic top-1 and the `gemm measure` oracle of the
// same shape, plus Gemm::run's host time against a bare cublasLtMatmul. The driver is
// parity/bench/gemm_run_bench.hpp's run_gemm_run_bench_report. Arguments are validated first
// (exit 2), then the device (exit 3).
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
  bench::TimingSettings timing{.warmup = 10, .reps = 30};
  bool no_oracle = false;
  std::string gemm_choice = "measured";
  std::string hw = "h200";
  std::string out;
};

Status run_bench_gemm_run(const BenchGemmRunArgs& args) {
  bench::GemmRunBenchRequest request;
  request.model = args.model;
  request.batch_size = args.batch;
  PARITY_ASSIGN_OR_RETURN(request.dtype, gemm::parse_gemm_dtype(args.dtype));
  PARITY_ASSIGN_OR_RETURN(request.options.timing, bench::timing_options_from_settings("bench gemm-run", args.timing));
  request.options.measure_oracle = !args.no_oracle;
  PARITY_ASSIGN_OR_RETURN(request.options.gemm_choice, parse_gemm_choice(args.gemm_choice));
  request.options.hardware = args.hw;
  request.out = args.out;
  PARITY_RETURN_IF_ERROR(bench::gemm_run_bench_problems(request).status());
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench gemm-run"));
#ifdef PARITY_HAS_CUDA
  const auto print = [](const std::string& line) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  };
  PARITY_ASSIGN_OR_RETURN(const std::string summary,
                          bench::run_gemm_run_bench_report(request, print));
  std::fputs(summary.c_str(), stdout);
#endif
  return Status::ok();
}

}  // namespace

void add_bench_gemm_run_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchGemmRunArgs>();
  auto* cmd = bench.add_subcommand("gemm-run",
                                   "DLRM dense-layer GEMMs through gemm::Gemm::run vs the oracle");
  cmd->add_option("--model", args->model, "all, dlrm-kaggle or dlrm-v2");
  cmd->add_option("--batch-size", args->batch,
                  "batch size (N of forward/data-gradient, K of weight-gradient)");
  cmd->add_option("--dtype", args->dtype, "bf16, fp16 or fp32 (run as TF32)");
  add_timing_flags(cmd, args->timing, TimingFlags::kCounts);
  cmd->add_option("--gemm-choice", args->gemm_choice,
                  "how the evaluated Gemm chooses: measured (the trainer's default), auto, model, heuristic");
  cmd->add_flag("--no-oracle", args->no_oracle,
                "skip the oracle (fast: Gemm::run, heuristic, host time only)");
  cmd->add_option("--hw", args->hw, "catalogue entry the selector models");
  cmd->add_option("--out", args->out, "write the results JSON (with provenance) to FILE");
  cmd->callback([args, &outcome] { outcome.status = run_bench_gemm_run(*args); });
}

}  // namespace parity::cli
