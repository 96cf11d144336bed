// Training-step throughput of a model on the CPU or one GPU, measured the way the PyTorch baselines
// are (../shared/baselines/torch_dlrm*.py): one synthetic batch staged once on the device, then
// warm-up steps and timed steps (forward, loss, backward, fused embedding and dense updates), each
// step's wall time to completion. Reported as the median step time and samples/s; the end-to-end
// figure (batches staged from the host every step) is measured beside it. A separate instrumented
// pass (so the headline figures stay unperturbed) breaks the step down into embeddings (TBE forward
// and backward with the fused update), GEMMs (the MLPs, their ReLU backward), interaction (dot, or
// the DCNv2 cross net with its low-rank GEMMs) and other (loss, dense optimiser), timed by device
// events at the phase boundaries (host clock on the CPU), and samples the device memory in use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parity/core/op.hpp"
#include "parity/data/dataset.hpp"
#include "parity/model/spec.hpp"

namespace parity::train {

struct StepBenchOptions {
  DeviceKind device = DeviceKind::kGpu;
  std::int64_t batch_size = 65536;
  int warmup_steps = 5;
  int timed_steps = 30;
  std::uint64_t seed = 1;
  double zipf_alpha = 0.0;  // 0: uniform ids, as the PyTorch baselines draw them
  int breakdown_steps = 10;  // instrumented steps after the timed ones; 0: no breakdown
  bool fused_drelu = false;  // DlrmModel::set_fused_drelu
  GemmChoice gemm_choice = GemmChoice::kMeasured;  // as TrainOptions::gemm_choice (trainer.hpp)
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
  double first_step_ms = 0.0;  // includes creating the GEMM plans (selection, kMeasured's timing)
  double first_loss = 0.0;  // finite losses: the run trained, not only ran
  double last_loss = 0.0;
  std::int64_t dense_parameters = 0;
  std::int64_t peak_device_bytes = 0;  // GPU: device memory in use after the timed steps (0 on CPU)

  struct Phase {
    std::string name;  // "embeddings", "gemms", "interaction", "other"
    double median_ms = 0.0;
  };
  std::vector<Phase> breakdown;         // empty when breakdown_steps is 0
  // "problem -> chosen configuration" of every GEMM plan in the process after the run.
  std::vector<std::string> gemm_plans;
  double breakdown_step_ms = 0.0;       // median instrumented step (its phases' sum)
  // Bytes of the model's own buffers (parameters, optimiser state, activations, gradients): all
  // allocated at creation, so also their high-water mark.
  std::int64_t model_buffer_bytes = 0;
  // GPU: the most device memory in use (cudaMemGetInfo: total - free, every process and library
  // allocation included) seen after any instrumented step or after the timed ones.
  std::int64_t peak_device_bytes_in_use = 0;
};

/// The benchmark's batch, drawn as the PyTorch baselines draw theirs: N(0, 1) dense features, ids
/// uniform (or Zipf with options.zipf_alpha) per table, labels Bernoulli(0.25); seeded.
data::Batch synthetic_step_batch(const model::ModelSpec& spec, const StepBenchOptions& options);

Result<StepBenchReport> benchmark_training_step(const model::ModelSpec& spec, const StepBenchOptions& options);
// One JSON results file (provenance, options, per-step times); kIoError naming the path.
Status write_step_bench_json(const StepBenchReport& report, const StepBenchOptions& options, const std::string& path);
/// `parity bench train` in this process: benchmark_training_step, then `print` gets its text
/// (step_bench_text) and, with `out`, "wrote OUT" once the JSON is written.
Status run_step_bench(const model::ModelSpec& spec, const StepBenchOptions& options, const std::string& out,
                      const std::function<void(const std::string&)>& print);

}  // namespace parity::train
