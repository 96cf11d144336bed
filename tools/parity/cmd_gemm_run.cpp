// `parity gemm run`: the selector's choice for one shape through cuBLASLt, measured against
// predicted, with cuBLASLt's heuristic top-1 (and the best of its 8) timed beside it.
// `parity gemm measure --shapes FILE --out FILE`: the oracle data set gemm calibrate / gemm eval
// read (docs/gemm_measurements.md). Both live in parity/bench/gemm_measure.hpp; arguments are
// validated first (exit 2), then the device (exit 3).
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/bench/gemm_measure.hpp"

namespace parity::cli {
namespace {

Status run_gemm_measure(const gemm::SuiteMeasureSettings& settings) {
  std::string selector_warning;
  auto request = gemm::suite_measure_request_from_settings(settings, selector_warning);
  if (request.is_ok() && !selector_warning.empty()) std::fputs(selector_warning.c_str(), stderr);
  return run_on_cuda_device("gemm measure", request,
                            [](const auto& checked) { return gemm::measure_gemm_suite(checked, print_flushed); });
}

void add_common(CLI::App* cmd, gemm::GemmMeasureSettings& args) {
  cmd->add_option("--hw", args.model.hw, "catalogue name of this GPU, for the selector's model");
  add_data_dir_option(cmd, args.data_dir);
  cmd->add_option("--reps", args.options.repetitions, "timed repetitions per candidate (one per interleaved round)");
  cmd->add_option("--warmup", args.options.warmup_iterations, "untimed iterations per candidate first");
  add_seed_option(cmd, args.options.seed, "seed of the inputs and of the interleaving order");
}

}  // namespace

void add_gemm_run_commands(CLI::App& gemm, Outcome& outcome) {
  auto run_args = std::make_shared<gemm::GemmRunSettings>();
  auto* run = gemm.add_subcommand("run", "Run the selector's choice on this GPU (cuBLASLt): measured vs "
                                         "predicted, with cuBLASLt's heuristic top-1 beside it");
  run->add_option("--m", run_args->sizes.m, "rows of C")->required();
  run->add_option("--n", run_args->sizes.n, "columns of C")->required();
  run->add_option("--k", run_args->sizes.k, "reduction length")->required();
  run->add_option("--dtype", run_args->dtype, "bf16, fp16 or fp32 (TF32)");
  run->add_option("--layout", run_args->layout, "TN, NN, NT or TT (op(A) then op(B))");
  run->add_option("--out", run_args->out, "write the result JSON (with provenance) to FILE");
  add_common(run, *run_args);
  run->callback([run_args, &outcome] {
    outcome.status = run_on_cuda_device("gemm run", gemm::gemm_run_request_from_settings(*run_args),
                                        [](const auto& request) { return gemm::run_selected_gemm(request); });
  });

  auto measure_args = std::make_shared<gemm::SuiteMeasureSettings>();
  auto& r = measure_args->request;
  auto& o = measure_args->options;
  auto* measure = gemm.add_subcommand(
      "measure", "Oracle data set: time the pruned cuBLASLt space + heuristic's 8 + selector's top-3 per shape");
  measure->add_option("--shapes", r.shapes, "CSV of shapes (name,m,n,k[,...])")->required();
  measure->add_option("--out", measure_args->out, "measurements JSON to write")->required();
  measure->add_option("--dtype", measure_args->dtype, "bf16, fp16 or fp32 (TF32)");
  measure->add_option("--screen-reps", o.screen_repetitions, "flushed repetitions of the screening pass");
  measure->add_option("--min-timed-ms", o.min_timed_ms,
                      "kernel time each fully timed candidate accumulates: short kernels get more rounds than "
                      "--reps, up to --max-reps (0 = always --reps)");
  measure->add_option("--max-reps", o.max_repetitions, "most rounds a short kernel gets");
  measure->add_option("--top-k", o.top_k, "best screened candidates timed in full");
  measure->add_option("--noise-top", o.noise_top, "oracle's top candidates re-timed for the noise floor");
  measure->add_option("--limit", r.limit, "measure at most this many shapes (0 = all)");
  measure->add_option("--stride", r.stride, "measure every STRIDE-th shape of the file");
  measure->add_option("--time-budget-s", r.time_budget_s,
                      "start no shape that would end past this many seconds (0 = no limit)");
  add_common(measure, *measure_args);
  measure->callback([measure_args, &outcome] { outcome.status = run_gemm_measure(*measure_args); });
}

}  // namespace parity::cli
