// Training and step-benchmark settings from text (include/parity/train/train_settings.hpp).
#include "parity/train/train_settings.hpp"

#include "parity/core/parse.hpp"

namespace parity::train {

Result<TrainOptions> train_options_from_settings(const TrainSettings& settings) {
  TrainOptions options;
  model::SpecOverrides overrides;
  overrides.table_cap = settings.table_cap;
  PARITY_ASSIGN_OR_RETURN(options.spec, model::load_spec(settings.model, overrides));
  PARITY_ASSIGN_OR_RETURN(options.device, parse_device_kind(settings.device));
  PARITY_ASSIGN_OR_RETURN(options.batch_size, parse_int64(settings.batch, "--batch"));
  options.data_dir = settings.data;
  if (!settings.synthetic.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.synthetic_samples,
                            parse_int64(settings.synthetic, "--synthetic", 1));
  }
  options.out_dir = settings.out;
  PARITY_ASSIGN_OR_RETURN(options.max_steps, parse_int64(settings.steps, "--steps", 0));
  PARITY_ASSIGN_OR_RETURN(options.max_epochs, parse_int64(settings.epochs, "--epochs", 1));
  PARITY_ASSIGN_OR_RETURN(options.eval_every_steps,
                          parse_int64(settings.eval_every, "--eval-every", 0));
  PARITY_ASSIGN_OR_RETURN(options.eval_max_samples,
                          parse_int64(settings.eval_samples, "--eval-samples", 0));
  PARITY_ASSIGN_OR_RETURN(options.checkpoint_every_steps,
                          parse_int64(settings.checkpoint_every, "--checkpoint-every", 0));
  if (!settings.lr.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.learning_rate, parse_double(settings.lr, "--lr"));
  }
  PARITY_ASSIGN_OR_RETURN(options.seed, parse_uint64(settings.seed, "--seed"));
  PARITY_ASSIGN_OR_RETURN(const std::int64_t threads,
                          parse_int64(settings.threads, "--threads", 0, 4096));
  options.num_threads = static_cast<int>(threads);
  options.resume = settings.resume ? ResumeMode::kFromLatestCheckpoint : ResumeMode::kFresh;
  options.initial_parameters_path = settings.export_initial;
  options.determinism = settings.deterministic ? Determinism::kBitwise : Determinism::kDefault;
  PARITY_ASSIGN_OR_RETURN(options.gemm_choice, parse_gemm_choice(settings.gemm_choice));
  return options;
}

Result<StepBenchOptions> step_bench_options_from_settings(const StepBenchSettings& settings) {
  StepBenchOptions options;
  PARITY_ASSIGN_OR_RETURN(options.device, parse_device_kind(settings.device));
  PARITY_ASSIGN_OR_RETURN(options.batch_size, parse_int64(settings.batch, "batch", 1));
  PARITY_ASSIGN_OR_RETURN(options.seed, parse_uint64(settings.seed, "seed"));
  options.warmup_steps = settings.warmup;
  options.timed_steps = settings.steps;
  options.breakdown_steps = settings.breakdown_steps;
  options.fused_drelu = settings.fused_drelu;
  PARITY_ASSIGN_OR_RETURN(options.gemm_choice, parse_gemm_choice(settings.gemm_choice));
  return options;
}

}  // namespace parity::train
