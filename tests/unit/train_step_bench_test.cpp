// The training-step benchmark's breakdown on the CPU: four named phases, each measured, medians
// that add up to the instrumented step, the model's buffer bytes, and the JSON fields.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "parity/model/spec.hpp"
#include "parity/train/step_bench.hpp"

namespace parity {
namespace {

TEST(TrainStepBench, BreakdownNamesAndMeasuresEveryPhase) {
  for (const auto interaction : {model::InteractionKind::kDot, model::InteractionKind::kDcnV2}) {
    model::ModelSpec spec = model::load_spec("tiny").value();
    spec.interaction = interaction;
    spec.cross_layers = 2;
    spec.cross_rank = 4;
    train::StepBenchOptions options;
    options.device = DeviceKind::kCpu;
    options.batch_size = 64;
    options.warmup_steps = 0;
    options.timed_steps = 1;
    options.breakdown_steps = 3;
    const auto report = train::benchmark_training_step(spec, options);
    ASSERT_TRUE(report.is_ok()) << report.status().to_string();
    ASSERT_EQ(report->breakdown.size(), 4u);
    const char* names[] = {"embeddings", "gemms", "interaction", "other"};
    for (std::size_t p = 0; p < 4; ++p) {
      EXPECT_EQ(report->breakdown[p].name, names[p]);
      EXPECT_GT(report->breakdown[p].median_ms, 0.0) << names[p];  // every phase runs code each step
    }
    EXPECT_GT(report->breakdown_step_ms, 0.0);
    EXPECT_GT(report->model_buffer_bytes, spec.dense_parameter_count() * 4 * 2);  // weights and gradients at least
    EXPECT_EQ(report->peak_device_bytes_in_use, 0);  // no device on the CPU

    const std::string path = (std::filesystem::temp_directory_path() / "parity_step_bench_test.json").string();
    ASSERT_TRUE(train::write_step_bench_json(*report, options, path).is_ok());
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    for (const char* key : {"\"breakdown\"", "\"phase_ms\"", "\"interaction\"", "\"model_buffer_bytes\"",
                            "\"peak_device_bytes_in_use\""}) {
      EXPECT_NE(text.str().find(key), std::string::npos) << key;
    }
    std::filesystem::remove(path);
  }
}

TEST(TrainStepBench, NoBreakdownWhenAskedForNone) {
  train::StepBenchOptions options;
  options.device = DeviceKind::kCpu;
  options.batch_size = 16;
  options.warmup_steps = 0;
  options.timed_steps = 1;
  options.breakdown_steps = 0;
  const auto report = train::benchmark_training_step(model::load_spec("tiny").value(), options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  EXPECT_TRUE(report->breakdown.empty());
  options.breakdown_steps = -1;
  EXPECT_NE(options.validate().message().find("breakdown-steps: -1"), std::string::npos);
}

}  // namespace
}  // namespace parity
