// `parity bench train`: training-step throughput of a model preset or spec on the CPU or the GPU
// (include/parity/train/step_bench.hpp): batch resident on the device, and staged from the host
// every step, medians of the timed steps; with --comm, the distributed step beside it.
// `parity bench comm` (run as `mpirun -np R parity bench comm ...`): collectives swept over sizes
// in nccl-tests conventions (checked, then timed; algbw/busbw), results JSON, and the planner's
// alpha-beta calibration (--calibration-out, or --fit-from RESULTS.json without running); rank 0
// prints (parity/comm/bench_run.hpp).
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/comm/bench_run.hpp"
#include "parity/train/dist_run.hpp"

namespace parity::cli {

void add_bench_comm_command(CLI::App& bench, Outcome& outcome) {
  auto run = std::make_shared<comm::CommBenchRun>();
  comm::CommBenchSettings& settings = run->settings;
  auto* cmd = bench.add_subcommand(
      "comm", "Collectives (nccl-tests conventions) and the planner's alpha-beta fit; run under mpirun -np R");
  const auto flag = [cmd](const char* name, auto& value, const char* help) { cmd->add_option(name, value, help); };
  flag("--backend", run->backend, "local, mpi (CPU ranks) or nccl (GPUs)");
  flag("--min-bytes", settings.min_bytes, "smallest size S (e.g. 8, 1KiB)");
  flag("--max-bytes", settings.max_bytes, "largest size S");
  flag("--step-factor", settings.step_factor, "size multiplier between steps (> 1)");
  flag("--collectives", settings.collectives, "comma list (also: broadcast)");
  flag("--placement", settings.placement, "both, out_of_place or in_place");
  flag("--dtype", settings.dtype, "fp32, fp64, bf16, fp16, int32, int64");
  flag("--op", settings.op, "sum or max");
  flag("--warmup", settings.warmup, "untimed calls per size");
  flag("--reps", settings.repetitions, "timed repetitions per size (median reported)");
  flag("--timeout-ms", run->timeout_ms, "a collective not done by then fails (0: no deadline)");
  flag("--out", run->out, "results JSON with provenance (rank 0 writes)");
  flag("--calibration-out", run->calibration_out,
       "fit alpha-beta, write the calibration JSON ('auto': <data dir>/calibration/comm_*.json)");
  flag("--fit-from", run->fit_from, "fit a results JSON written earlier (no run)");
  cmd->callback([run, &outcome] { outcome.status = comm::run_comm_bench_command(*run, print_flushed); });
}

void add_bench_train_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<train::StepBenchRun>();
  train::StepBenchSettings& settings = args->settings;
  auto* cmd = bench.add_subcommand("train", "Training-step throughput of a model (synthetic batch, medians)");
  cmd->add_option("--model", settings.model, "preset (tiny, dlrm-kaggle, dlrm-v2) or a JSON spec file");
  cmd->add_option("--device", settings.device, "cpu or cuda");
  cmd->add_option("--batch", settings.batch, "samples per step");
  cmd->add_option("--precision", settings.overrides.precision, "dense precision: fp32, tf32, bf16 (default: the spec's)");
  cmd->add_option("--table-cap", settings.overrides.table_cap, "cap every table at this many rows");
  cmd->add_option("--optimizer", settings.overrides.optimizer,
                  "sgd, adagrad (row-wise for the tables) or adam for the dense part and the tables "
                  "(default: the spec's)");
  cmd->add_option("--warmup", settings.warmup, "untimed steps first");
  cmd->add_option("--steps", settings.steps, "timed steps (each mode)");
  cmd->add_option("--breakdown-steps", settings.breakdown_steps,
                  "instrumented steps for the phase breakdown, after the timed ones (0: none)");
  cmd->add_flag("--fused-drelu", settings.fused_drelu,
                "apply dReLU in the next layer's data-gradient GEMM epilogue (ReLU mask from the forward) "
                "instead of a separate pass");
  cmd->add_option("--gemm-choice", settings.gemm_choice,
                  "dense GEMMs: auto (model on 16-byte rows, else heuristic), model, heuristic, measured");
  cmd->add_option("--seed", settings.seed, "initialisation and batch seed");
  cmd->add_option("--out", args->out, "write the results JSON to FILE");
  cmd->add_option("--comm", args->comm,
                  "nccl or local: the distributed step on this communicator's ranks against the single-process "
                  "step (one rank), alternating rounds");
  cmd->add_option("--rounds", args->rounds, "--comm: alternating rounds the timed steps are split into");
  cmd->callback([args, &outcome] { outcome.status = train::run_step_bench_command(*args, print_flushed); });
}

}  // namespace parity::cli
