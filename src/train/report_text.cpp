// Text lines of training runs and step benchmarks (parity/train/report_text.hpp).
#include "parity/train/report_text.hpp"

#include <cstdio>

#include "core/text_format.hpp"

namespace parity::train {


std::string clock_text(double seconds) {
  if (seconds < 0) return "?";
  const auto total = static_cast<long>(seconds + 0.5);
  return format_text("%ld:%02ld:%02ld", total / 3600, total / 60 % 60, total % 60);
}

std::string progress_text(const TrainProgress& progress) {
  return format_text("step %lld/%lld  %.0f samples/s  loss %.5f  lr %.3g  ETA %s",
                     static_cast<long long>(progress.step), static_cast<long long>(progress.total_steps),
                     progress.samples_per_second, progress.loss, progress.learning_rate,
                     clock_text(progress.eta_seconds).c_str());
}

std::string evaluation_text(const EvalRecord& e) {
  return format_text("eval  step %lld: NE %.5f  AUC %.5f  logloss %.5f  (%lld samples)\n",
                     static_cast<long long>(e.step), e.ne, e.auc, e.logloss, static_cast<long long>(e.samples));
}

std::string ProgressText::render(const TrainProgress& progress, double now_seconds) {
  if (progress.event == TrainProgress::Event::kEvaluation) return end_bar() + evaluation_text(progress.evaluation);
  if (progress.event != TrainProgress::Event::kStep) return "";
  const bool is_terminal = style_ == Style::kTerminalBar;
  const bool is_last = progress.step == progress.total_steps;
  if (!is_last && now_seconds - last_seconds_ < (is_terminal ? 0.1 : 10.0)) return "";
  last_seconds_ = now_seconds;
  const double fraction =
      progress.total_steps > 0 ? static_cast<double>(progress.step) / static_cast<double>(progress.total_steps) : 0;
  const std::string line = progress_text(progress);
  if (!is_terminal) return format_text("train %3.0f%% ", fraction * 100) + line + "\n";
  constexpr int kBarWidth = 30;
  const int filled = static_cast<int>(fraction * kBarWidth);
  is_bar_open_ = true;
  return "\r[" + std::string(static_cast<std::size_t>(filled), '#') +
         std::string(static_cast<std::size_t>(kBarWidth - filled), ' ') + format_text("] %3.0f%% ", fraction * 100) +
         line + "\033[K";
}

std::string ProgressText::end_bar() {
  const bool was_open = is_bar_open_;
  is_bar_open_ = false;
  return was_open ? "\n" : "";
}

std::string train_start_text(const TrainOptions& options) {
  return format_text("train: model %s (%lld dense parameters, %lld embedding rows), batch %lld, device %s\n",
                     options.spec.name.c_str(), static_cast<long long>(options.spec.dense_parameter_count()),
                     static_cast<long long>(options.spec.embedding_row_count()),
                     static_cast<long long>(options.batch_size),
                     std::string(device_kind_name(options.device)).c_str());
}

std::string summary_text(const TrainSummary& s) {
  std::string text =
      format_text("done: %lld steps, %lld samples, %lld epoch(s) on %d thread(s), %.1f s training, %.0f samples/s\n",
                  static_cast<long long>(s.steps), static_cast<long long>(s.samples),
                  static_cast<long long>(s.epochs_completed), s.num_threads, s.train_seconds, s.samples_per_second);
  if (s.resumed_from_step >= 0) {
    text += format_text("resumed from the checkpoint at step %lld\n", static_cast<long long>(s.resumed_from_step));
  }
  if (!s.evaluations.empty()) {
    const auto& e = s.evaluations.back();
    text += format_text("eval: NE %.5f  AUC %.5f  logloss %.5f  (%lld samples)\n", e.ne, e.auc, e.logloss,
                        static_cast<long long>(e.samples));
  }
  if (s.planted_auc >= 0) text += format_text("planted model's AUC on the eval split: %.5f\n", s.planted_auc);
  // Paths can be longer than format_text's line limit: joined as strings.
  text += "files: " + s.metrics_log_path + ", " + s.svg_path + ", " + s.checkpoint_path + ", " + s.summary_path + "\n";
  return text;
}

std::string step_bench_text(const StepBenchReport& report, const StepBenchOptions& options) {
  constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;
  std::string text = format_text(
      "bench train: %s %s on %s, batch %lld: %.3f ms/step, %.3f M samples/s (batch resident); "
      "%.3f ms/step, %.3f M samples/s (staged from the host); loss %.4f -> %.4f; device memory in use %.2f GiB\n",
      report.model.c_str(), report.precision.c_str(), report.device.c_str(), static_cast<long long>(report.batch_size),
      report.median_step_ms, report.samples_per_second / 1e6, report.median_staged_step_ms,
      report.staged_samples_per_second / 1e6, report.first_loss, report.last_loss,
      static_cast<double>(report.peak_device_bytes) / kBytesPerGib);
  if (options.fused_drelu) text += "dReLU fused into the data-gradient GEMM epilogues\n";
  text += format_text("GEMM choice: %s; first step %.1f ms (GEMM plans created in it)\n",
                      std::string(gemm_choice_name(options.gemm_choice)).c_str(), report.first_step_ms);
  if (!report.breakdown.empty()) {
    text += format_text("step breakdown (%d instrumented steps, medians): ", options.breakdown_steps);
    for (const auto& phase : report.breakdown) {
      const double share = report.breakdown_step_ms > 0 ? 100.0 * phase.median_ms / report.breakdown_step_ms : 0.0;
      text += format_text("%s %.3f ms (%.0f%%), ", phase.name.c_str(), phase.median_ms, share);
    }
    text += format_text("step %.3f ms\n", report.breakdown_step_ms);
  }
  text += format_text("memory: model buffers %.3f GiB; peak device memory in use %.3f GiB (0 on the CPU)\n",
                      static_cast<double>(report.model_buffer_bytes) / kBytesPerGib,
                      static_cast<double>(report.peak_device_bytes_in_use) / kBytesPerGib);
  return text;
}

std::string dist_step_bench_text(const DistStepBenchReport& report, const model::ModelSpec& spec,
                                 const StepBenchOptions& options, int rounds) {
  const double batch = static_cast<double>(options.batch_size);
  std::string text = format_text(
      "bench train --comm %s: %s %s, batch %lld, %d rank(s), %zu timed steps each in %d alternating rounds\n",
      report.backend.c_str(), spec.name.c_str(), std::string(model::dense_precision_name(spec.precision)).c_str(),
      static_cast<long long>(options.batch_size), report.ranks, report.distributed_step_ms.size(), rounds);
  if (!report.single_step_ms.empty()) {
    text += format_text("single process: %.3f ms/step (%.3f M samples/s)\n", report.median_single_ms,
                        batch / (report.median_single_ms * 1e-3) / 1e6);
  }
  text += format_text("distributed:    %.3f ms/step (%.3f M samples/s)\n", report.median_distributed_ms,
                      batch / (report.median_distributed_ms * 1e-3) / 1e6);
  if (!report.single_step_ms.empty()) {
    text += format_text("overhead: %+.2f%% (medians); first-step loss difference %.3g (0: the same bits)\n",
                        report.overhead_percent, report.first_loss_difference);
  }
  return text;
}

}  // namespace parity::train
