// `parity train`: parse the flags, call train::train(), render its progress (a bar on a terminal,
// periodic plain lines otherwise) and print the summary. The loop lives in src/train.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/train/dist_run.hpp"
#include "parity/train/report_text.hpp"

namespace parity::cli {
namespace {

// train::ProgressText on stderr: a bar on a terminal, plain lines when it is a file or a pipe.
class ProgressPrinter {
 public:
  void operator()(const train::TrainProgress& progress) {
    const double now_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    write(text_.render(progress, now_seconds));
  }
  void end_bar() { write(text_.end_bar()); }

 private:
  static void write(const std::string& text) {
    if (text.empty()) return;
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  }
  train::ProgressText text_{isatty(fileno(stderr)) != 0 ? train::ProgressText::Style::kTerminalBar
                                                         : train::ProgressText::Style::kPlainLines};
};

Status run_train(const train::TrainRun& run) {
  auto printer = std::make_shared<ProgressPrinter>();
  train::DistRunReport report;
  report.print = print_flushed;
  report.on_summary = [printer](const train::TrainSummary& summary) {
    printer->end_bar();
    std::fputs(train::summary_text(summary).c_str(), stdout);
  };
  report.on_peer_lost = exit_without_finalize;
  const Status status =
      train::run_train_command(run, [printer](const train::TrainProgress& progress) { (*printer)(progress); }, report);
  printer->end_bar();  // a run that failed ends its bar before the error (one that ended already did)
  return status;
}

}  // namespace

void add_train_command(CLI::App& app, Outcome& outcome) {
  auto flags = std::make_shared<train::TrainRun>();
  train::TrainSettings& settings = flags->settings;
  auto* cmd = app.add_subcommand("train", "Train a DLRM-family model on the CPU or a GPU (NE/AUC, checkpoints, metrics)");
  cmd->add_option("--model", settings.model, "preset (tiny, dlrm-kaggle, dlrm-v2) or a JSON spec file")->required();
  cmd->add_option("--data", settings.data, "dataset directory (parity data generate / convert-criteo)");
  cmd->add_option("--synthetic", settings.synthetic, "generate N training samples for the model into OUT/data");
  cmd->add_option("--device", settings.device, "cpu or cuda");
  cmd->add_option("--batch", settings.batch, "batch size");
  cmd->add_option("--out", settings.out, "output directory (checkpoint, metrics.jsonl, training.svg, summary.json)")
      ->required();
  cmd->add_option("--plan", flags->plan, "a plan from parity plan (--distributed: its table-wise placement)");
  cmd->add_flag("--resume", settings.resume, "continue from OUT/checkpoint.ckpt when present");
  cmd->add_option("--steps", settings.steps, "stop after S steps (0: no limit)");
  cmd->add_option("--epochs", settings.epochs, "passes over the training split");
  cmd->add_option("--eval-every", settings.eval_every, "evaluate every K steps (0: at the end)");
  cmd->add_option("--eval-samples", settings.eval_samples, "evaluate on at most N samples (0: all)");
  cmd->add_option("--checkpoint-every", settings.checkpoint_every, "checkpoint every K steps (0: at each evaluation)");
  cmd->add_option("--lr", settings.lr, "base learning rate for dense and embedding optimisers");
  cmd->add_option("--export-initial", settings.export_initial,
                  "write the initial parameters (named fp32 tensors) to FILE before training");
  cmd->add_flag("--deterministic", settings.deterministic, "bitwise reproducible (resumed runs included)");
  cmd->add_option("--gemm-choice", settings.gemm_choice,
                  "GPU GEMM choice: measured (time the best few once; auto when --deterministic), auto, "
                  "model, heuristic");
  cmd->add_option("--seed", settings.seed, "initialisation and synthetic-data seed");
  cmd->add_option("--table-cap", settings.table_cap, "cap every table at ROWS rows");
  cmd->add_option("--threads", settings.threads, "CPU threads (0: automatic; 1 per rank when distributed)");
  cmd->add_flag("--distributed", flags->distributed, "train on the ranks of mpirun (CPU, MPI)");
  cmd->add_option("--backend", flags->backend,
                  "distributed: mpi (CPU ranks), nccl (one GPU per rank, --device cuda) or local (one CPU rank, "
                  "the GPU path's code)");
  cmd->add_option("--gradient-chunks", flags->dist.gradient_chunks,
                  "distributed: dense gradient chunks of the batch, a multiple of the ranks (0: one per rank)");
  cmd->add_option("--comm-timeout", flags->dist.comm_timeout, "distributed: seconds before a collective fails");
  cmd->add_option("--dense-reduction", flags->dist.dense_reduction,
                  "distributed: overlapped (bucket all-reduces started during the backward) or after-backward");
  cmd->add_option("--bucket-bytes", flags->dist.bucket_bytes, "distributed: dense gradient bucket size (e.g. 4MiB)");
  cmd->add_flag("--reduction-timings", flags->dist.report_timings,
                "distributed: print rank 0's backward, exposed and in-flight communication times per step");
  cmd->callback([flags, &outcome] { outcome.status = run_train(*flags); });
}

}  // namespace parity::cli
