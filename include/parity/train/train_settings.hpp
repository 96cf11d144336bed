// The settings of a training run and of the step benchmark as a command line, a config file or a
// binding gives them (text), turned into TrainOptions / StepBenchOptions: parsed strictly ("64x"
// is not 64), each error naming the setting as its flag ("--batch: ...").
#pragma once

#include <string>

#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/step_bench.hpp"
#include "parity/train/trainer.hpp"

namespace parity::train {

struct TrainSettings {
  std::string model;      // preset or JSON spec
  std::string table_cap;  // empty: the spec's tables
  std::string data;       // dataset directory
  std::string synthetic;  // empty, or samples generated into out/data
  std::string device = "cpu";
  std::string batch = "256";
  std::string out;
  std::string steps = "0";  // 0: no limit
  std::string epochs = "1";
  std::string eval_every = "0";
  std::string eval_samples = "0";
  std::string checkpoint_every = "0";
  std::string lr;  // empty: the spec's
  std::string seed = "1";
  std::string threads = "0";   // 0: automatic
  std::string export_initial;  // initial parameters file, or empty
  std::string gemm_choice = "measured";
  bool resume = false;
  bool deterministic = false;
};

/// The spec (with the table cap) and every option; on_progress is left empty.
Result<TrainOptions> train_options_from_settings(const TrainSettings& settings);

struct StepBenchSettings {
  std::string model = "dlrm-kaggle";
  model::SpecOverrides overrides;  // empty fields: the spec's
  std::string device = "cuda";
  std::string batch = "65536";
  std::string seed = "1";
  std::string gemm_choice = "measured";
  int warmup = 5;
  int steps = 30;
  int breakdown_steps = 10;
  bool fused_drelu = false;
};

/// The benchmark's options (the spec is model::load_spec(settings.model, settings.overrides)).
Result<StepBenchOptions> step_bench_options_from_settings(const StepBenchSettings& settings);

}  // namespace parity::train
