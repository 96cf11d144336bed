// `parity bench train`: training-step throughput of a model preset or spec on the CPU or the GPU
// (include/parity/train/step_bench.hpp): batch resident on the device, and staged from the host
// every step, medians of the timed steps.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cmd_bench_train_comm.hpp"
#include "commands.hpp"
#include "parity/core/parse.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/train/step_bench.hpp"

namespace parity::cli {
namespace {

struct BenchTrainArgs {
  std::string model = "dlrm-kaggle";
  std::string device = "cuda";
  std::string batch = "65536";
  std::string precision;  // empty: the spec's
  std::string table_cap;  // empty: the spec's rows
  std::string optimizer;  // empty: the spec's; else sgd, adagrad, adam (dense) with the tables' like it
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

Status run_bench_train(const BenchTrainArgs& args) {
  PARITY_ASSIGN_OR_RETURN(model::ModelSpec spec, model::load_spec(args.model));
  if (!args.precision.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec.precision, model::parse_dense_precision(args.precision));
  }
  if (!args.table_cap.empty()) {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t cap, parse_int64(args.table_cap, "table-cap", 1));
    for (auto& table : spec.embedding.tables) table.num_rows = std::min(table.num_rows, cap);
  }
  if (!args.optimizer.empty()) {
    // One name for both parts (the PyTorch baselines use SGD for both); Adagrad tables are row-wise.
    if (args.optimizer != "sgd" && args.optimizer != "adagrad" && args.optimizer != "adam") {
      return invalid_argument("optimizer: '", args.optimizer, "' is not one of sgd, adagrad, adam");
    }
    PARITY_ASSIGN_OR_RETURN(spec.dense_optimizer.kind, model::parse_dense_optimizer_kind(args.optimizer));
    PARITY_ASSIGN_OR_RETURN(spec.embedding.optimizer.kind,
                            embedding::parse_optimizer_kind(args.optimizer == "adagrad" ? "rowwise_adagrad" : args.optimizer));
  }
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
  std::printf("bench train: %s %s on %s, batch %lld: %.3f ms/step, %.3f M samples/s (batch resident); "
              "%.3f ms/step, %.3f M samples/s (staged from the host); loss %.4f -> %.4f; device memory in use %.2f GiB\n",
              report.model.c_str(), report.precision.c_str(), report.device.c_str(),
              static_cast<long long>(report.batch_size), report.median_step_ms, report.samples_per_second / 1e6,
              report.median_staged_step_ms, report.staged_samples_per_second / 1e6, report.first_loss,
              report.last_loss, static_cast<double>(report.peak_device_bytes) / (1024.0 * 1024.0 * 1024.0));
  if (options.fused_drelu) std::printf("dReLU fused into the data-gradient GEMM epilogues\n");
  std::printf("GEMM choice: %s; first step %.1f ms (GEMM plans created in it)\n",
              std::string(gemm_choice_name(options.gemm_choice)).c_str(), report.first_step_ms);
  if (!report.breakdown.empty()) {
    std::printf("step breakdown (%d instrumented steps, medians): ", options.breakdown_steps);
    for (const auto& phase : report.breakdown) {
      const double share = report.breakdown_step_ms > 0 ? 100.0 * phase.median_ms / report.breakdown_step_ms : 0.0;
      std::printf("%s %.3f ms (%.0f%%), ", phase.name.c_str(), phase.median_ms, share);
    }
    std::printf("step %.3f ms\n", report.breakdown_step_ms);
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  std::printf("memory: model buffers %.3f GiB; peak device memory in use %.3f GiB (0 on the CPU)\n",
              static_cast<double>(report.model_buffer_bytes) / gib,
              static_cast<double>(report.peak_device_bytes_in_use) / gib);
  if (args.out.empty()) return Status::ok();
  PARITY_RETURN_IF_ERROR(train::write_step_bench_json(report, options, args.out));
  std::printf("wrote %s\n", args.out.c_str());
  return Status::ok();
}

}  // namespace

void add_bench_train_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchTrainArgs>();
  auto* cmd = bench.add_subcommand("train", "Training-step throughput of a model (synthetic batch, medians)");
  cmd->add_option("--model", args->model, "preset (tiny, dlrm-kaggle, dlrm-v2) or a JSON spec file")->capture_default_str();
  cmd->add_option("--device", args->device, "cpu or cuda")->capture_default_str();
  cmd->add_option("--batch", args->batch, "samples per step")->capture_default_str();
  cmd->add_option("--precision", args->precision, "dense precision: fp32, tf32, bf16 (default: the spec's)");
  cmd->add_option("--table-cap", args->table_cap, "cap every table at this many rows");
  cmd->add_option("--optimizer", args->optimizer,
                  "sgd, adagrad (row-wise for the tables) or adam for the dense part and the tables "
                  "(default: the spec's)");
  cmd->add_option("--warmup", args->warmup, "untimed steps first")->capture_default_str();
  cmd->add_option("--steps", args->steps, "timed steps (each mode)")->capture_default_str();
  cmd->add_option("--breakdown-steps", args->breakdown_steps,
                  "instrumented steps for the phase breakdown, after the timed ones (0: none)")
      ->capture_default_str();
  cmd->add_flag("--fused-drelu", args->fused_drelu,
                "apply dReLU in the next layer's data-gradient GEMM epilogue (ReLU mask from the forward) "
                "instead of a separate pass");
  cmd->add_option("--gemm-choice", args->gemm_choice,
                  "how the dense layers' GEMMs are chosen: auto (the model where rows are 16-byte aligned, "
                  "else the vendor heuristic), model, heuristic, measured (the best few of both timed once)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "initialisation and batch seed")->capture_default_str();
  cmd->add_option("--out", args->out, "write the results JSON to FILE");
  cmd->add_option("--comm", args->comm,
                  "nccl or local: the distributed step on this communicator's ranks against the single-process "
                  "step (one rank), alternating rounds");
  cmd->add_option("--rounds", args->rounds, "--comm: alternating rounds the timed steps are split into")
      ->capture_default_str();
  cmd->callback([args, &outcome] { outcome.status = run_bench_train(*args); });
}

}  // namespace parity::cli
