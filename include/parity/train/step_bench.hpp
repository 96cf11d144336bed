// Training-step throughput of a model on the CPU or one GPU, measured the way the PyTorch baselines
// are (../shared/baselines/torch_dlrm*.py): one synthetic batch staged once on the device, then
// warm-up steps and timed steps (forward, loss, backward, fused embedding and dense updates), each
// step's wall time to completion. Reported as the median step time and samples/s; the end-to-end
// figure (batches staged from the host every step) is measured beside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/core/op.hpp"
#include "parity/model/spec.hpp"

namespace parity::train {

struct StepBenchOptions {
  DeviceKind device = DeviceKind::kGpu;
  std::int64_t batch_size = 65536;
  int warmup_steps = 5;
  int timed_steps = 30;
  std::uint64_t seed = 1;
  double zipf_alpha = 0.0;  // 0: uniform ids, as the PyTorch baselines draw them
  Status validate() const;
};

struct StepBenchReport {
  std::string model;
  std::string precision;
  std::string device;
  std::int64_t batch_size = 0;
  std::vector<double> step_ms;          // timed steps, batch resident on the device
  double median_step_ms = 0.0;
  double samples_per_second = 0.0;      // batch_size / median step
  std::vector<double> staged_step_ms;   // the same with the batch copied from the host each step
  double median_staged_step_ms = 0.0;
  double staged_samples_per_second = 0.0;
  double first_loss = 0.0;  // finite losses: the run trained, not only ran
  double last_loss = 0.0;
  std::int64_t dense_parameters = 0;
  std::int64_t peak_device_bytes = 0;  // GPU: device memory in use after the timed steps (0 on CPU)
};

Result<StepBenchReport> benchmark_training_step(const model::ModelSpec& spec, const StepBenchOptions& options);
// One JSON results file (provenance, options, per-step times); kIoError naming the path.
Status write_step_bench_json(const StepBenchReport& report, const StepBenchOptions& options, const std::string& path);

}  // namespace parity::train
