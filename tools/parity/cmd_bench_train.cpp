// `parity bench train`: training-step throughput of a model preset or spec on the CPU or the GPU
// (include/parity/train/step_bench.hpp): batch resident on the device, and staged from the host
// every step, medians of the timed steps.
#include <cstdio>
#include <memory>
#include <string>

#include "comm_session.hpp"
#include "commands.hpp"
#include "parity/core/parse.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/gpu_dist_trainer.hpp"
#include "parity/train/report_text.hpp"
#include "parity/train/step_bench.hpp"

namespace parity::cli {
namespace {

struct BenchTrainArgs {
  std::string model = "dlrm-kaggle";
  std::string device = "cuda";
  std::string batch = "65536";
  model::SpecOverrides overrides;  // empty fields: the spec's
  int warmup = 5;
  int steps = 30;
  int breakdown_steps = 10;
  bool fused_drelu = false;
  std::string gemm_choice = "measured";
  std::string seed = "1";
  std::string out;
  std::string comm;  // empty: the single-process benchmark
  int rounds = 5;
};

// --comm nccl (GPU ranks; one rank also times the single-process step) or local (CPU, one rank):
// the distributed step against the single-process step on the same resident batch, alternating
// rounds (train::benchmark_distributed_step); rank 0 prints and writes the JSON.
Status run_bench_train_comm(const model::ModelSpec& spec, const train::StepBenchOptions& options,
                            const std::string& backend, int rounds, const std::string& out) {
  const DeviceKind wanted = backend == "nccl" ? DeviceKind::kGpu : DeviceKind::kCpu;
  PARITY_CHECK_ARG(options.device == wanted, "--device: ", device_kind_name(options.device), " does not go with ",
                   "--comm ", backend, " (", backend == "nccl" ? "use --device cuda" : "use --device cpu", ")");
  PARITY_ASSIGN_OR_RETURN(CommSession session, open_comm_session(backend, {}));
  PARITY_ASSIGN_OR_RETURN(const auto report,
                          train::benchmark_distributed_step(spec, options, *session.collective, rounds));
  if (session.collective->rank() != 0) return Status::ok();
  std::fputs(train::dist_step_bench_text(report, spec, options, rounds).c_str(), stdout);
  if (out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(train::write_dist_step_bench_json(report, spec, options, out));
  std::printf("wrote %s\n", out.c_str());
  return Status::ok();
}

Status run_bench_train(const BenchTrainArgs& args) {
  PARITY_ASSIGN_OR_RETURN(model::ModelSpec spec, model::load_spec(args.model));
  PARITY_RETURN_IF_ERROR(model::apply_spec_overrides(spec, args.overrides));
  train::StepBenchOptions options;
  PARITY_ASSIGN_OR_RETURN(options.device, parse_device_kind(args.device));
  PARITY_ASSIGN_OR_RETURN(options.batch_size, parse_int64(args.batch, "batch", 1));
  PARITY_ASSIGN_OR_RETURN(options.seed, parse_uint64(args.seed, "seed"));
  options.warmup_steps = args.warmup;
  options.timed_steps = args.steps;
  options.breakdown_steps = args.breakdown_steps;
  options.fused_drelu = args.fused_drelu;
  PARITY_ASSIGN_OR_RETURN(options.gemm_choice, parse_gemm_choice(args.gemm_choice));
  if (!args.comm.empty()) return run_bench_train_comm(spec, options, args.comm, args.rounds, args.out);
  PARITY_ASSIGN_OR_RETURN(const auto report, train::benchmark_training_step(spec, options));
  std::fputs(train::step_bench_text(report, options).c_str(), stdout);
  if (args.out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(train::write_step_bench_json(report, options, args.out));
  std::printf("wrote %s\n", args.out.c_str());
  return Status::ok();
}

}  // namespace

void add_bench_train_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchTrainArgs>();
  auto* cmd = bench.add_subcommand("train", "Training-step throughput of a model (synthetic batch, medians)");
  cmd->add_option("--model", args->model, "preset (tiny, dlrm-kaggle, dlrm-v2) or a JSON spec file");
  cmd->add_option("--device", args->device, "cpu or cuda");
  cmd->add_option("--batch", args->batch, "samples per step");
  cmd->add_option("--precision", args->overrides.precision, "dense precision: fp32, tf32, bf16 (default: the spec's)");
  cmd->add_option("--table-cap", args->overrides.table_cap, "cap every table at this many rows");
  cmd->add_option("--optimizer", args->overrides.optimizer,
                  "sgd, adagrad (row-wise for the tables) or adam for the dense part and the tables "
                  "(default: the spec's)");
  cmd->add_option("--warmup", args->warmup, "untimed steps first");
  cmd->add_option("--steps", args->steps, "timed steps (each mode)");
  cmd->add_option("--breakdown-steps", args->breakdown_steps,
                  "instrumented steps for the phase breakdown, after the timed ones (0: none)");
  cmd->add_flag("--fused-drelu", args->fused_drelu,
                "apply dReLU in the next layer's data-gradient GEMM epilogue (ReLU mask from the forward) "
                "instead of a separate pass");
  cmd->add_option("--gemm-choice", args->gemm_choice,
                  "how the dense layers' GEMMs are chosen: auto (the model where rows are 16-byte aligned, "
                  "else the vendor heuristic), model, heuristic, measured (the best few of both timed once)");
  cmd->add_option("--seed", args->seed, "initialisation and batch seed");
  cmd->add_option("--out", args->out, "write the results JSON to FILE");
  cmd->add_option("--comm", args->comm,
                  "nccl or local: the distributed step on this communicator's ranks against the single-process "
                  "step (one rank), alternating rounds");
  cmd->add_option("--rounds", args->rounds, "--comm: alternating rounds the timed steps are split into");
  cmd->callback([args, &outcome] { outcome.status = run_bench_train(*args); });
}

}  // namespace parity::cli
