// The gemm::Gemm run benchmark: the dense layers of dlrm-kaggle and dlrm-v2 (bottom and top MLPs,
// DCNv2 low-rank cross layers) as the trainer runs them — forward (bias + ReLU with the mask aux),
// data gradient (dReLU + bias gradient) and weight gradient (bias gradient of dY) — each timed
// through Gemm::run and compared with the `gemm measure` oracle of the same GEMM, plus the host
// time Gemm::run adds to a bare cublasLtMatmul. The problem list is CPU code; the measurement is
// implemented in parity_gpu (src/backends/cuda/bench/gemm_run_bench.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/stats.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/gemm.hpp"

namespace parity::bench {

struct GemmRunBenchProblem {
  std::string model;  // "dlrm-kaggle", "dlrm-v2"
  std::string layer;  // "bottom0 13->512", "cross1_down 3456->512", ...
  std::string pass;   // "forward", "data_grad", "weight_grad"
  gemm::GemmRunProblem problem;
};

// Every GEMM of both models' dense layers at `batch_size`, operands in `dtype` (D in `dtype`,
// weight gradients in fp32). The first bottom layer has no data gradient (its input is the data).
std::vector<GemmRunBenchProblem> dlrm_gemm_run_problems(std::int64_t batch_size, DType dtype);

// Filters by model name ("all" keeps both); kInvalidArgument for an unknown name.
Result<std::vector<GemmRunBenchProblem>> select_models(std::vector<GemmRunBenchProblem> problems,
                                                       const std::string& model);

struct GemmRunBenchOptions {
  TimingOptions timing;        // Gemm::run and heuristic timings (L2 flushed by default)
  // How the evaluated Gemm chooses (the trainer's default: measured).
  GemmChoice gemm_choice = GemmChoice::kMeasured;
  // gemm_choice=measured's pool (GemmOptions::measured_candidates_per_source / _distinct_tiles).
  int measured_candidates_per_source = gemm::GemmOptions{}.measured_candidates_per_source;
  bool measured_distinct_tiles = gemm::GemmOptions{}.measured_distinct_tiles;
  // gemm_choice=measured's timing (GemmOptions::measured_flush_l2); the oracle's pass is always flushed.
  bool measured_flush_l2 = gemm::GemmOptions{}.measured_flush_l2;
  // The oracle: every candidate the problem's descriptor (run epilogue included) accepts, timed
  // as GemmChoice::kMeasured times its pool (flushed medians), the fastest then timed like the others.
  bool measure_oracle = true;
  // Then this many of that pass's next fastest after its winner are timed like the chosen
  // configuration too (L2 flushed, medians of the bench's repetitions) and the fastest of those medians is the
  // oracle: the pass ranks on 9 runs each, so close candidates can swap (run 92, back-to-back pass:
  // its winner ran up to 1.25x slower than the choice). 0 = the pass's winner alone.
  int oracle_flushed_finalists = 8;
  double oracle_min_timed_ms = 2.0;
  int host_calls = 50;   // Gemm::run / bare cublasLtMatmul calls per host-time sample
  int host_samples = 21;  // sample pairs (Gemm::run and bare alternating; medians reported)
  std::string hardware;  // GemmOptions::hardware: empty = the device's catalogue entry
};

struct GemmRunBenchResult {
  GemmRunBenchProblem item;
  std::string configuration;  // Gemm::configuration(): the algo and how it was chosen
  double create_ms = 0.0;     // Gemm::create host time (selection included)
  SampleStats run;            // Gemm::run, device time
  std::string heuristic_configuration;
  SampleStats heuristic;  // the same problem with cuBLASLt's heuristic top-1 forced
  // The oracle with the run epilogue (GemmRunBenchOptions::measure_oracle); oracle_problem names
  // the shape (the provider's form, for reference).
  std::string oracle_problem;
  std::string oracle_configuration;
  double oracle_median_ms = 0.0;  // 0 when not measured
  double oracle_pass_winner_median_ms = 0.0;  // the oracle pass's winner, timed like the others
  int oracle_flushed_finalists = 0;            // finalists timed again (flushed medians)
  // Every candidate the oracle timed: (configuration with each source's rank, microseconds).
  std::vector<std::pair<std::string, double>> oracle_candidates;
  double host_run_us = 0.0;       // median host time per Gemm::run call
  double host_bare_us = 0.0;      // median host time per bare cublasLtMatmul call
  double host_overhead_us = 0.0;  // median over sample pairs of (Gemm::run - bare) per call
  std::string error;              // non-empty: this GEMM could not be created or run
};


// Runs every problem on the current device; a problem that fails is reported in its `error`.
// `on_result` (optional) sees each result as soon as it is measured.
Result<std::vector<GemmRunBenchResult>> run_gemm_run_bench(
    const std::vector<GemmRunBenchProblem>& problems, const GemmRunBenchOptions& options,
    const std::function<void(const GemmRunBenchResult&)>& on_result = {});

// `parity bench gemm-run` as one call.
struct GemmRunBenchRequest {
  std::string model = "all";  // all, dlrm-kaggle, dlrm-v2
  std::int64_t batch_size = 65536;
  DType dtype = DType::kBF16;
  GemmRunBenchOptions options;
  std::string out;  // results JSON with provenance (empty: none)
};
// CPU: checks the request (kInvalidArgument naming the field) and lists its problems.
Result<std::vector<GemmRunBenchProblem>> gemm_run_bench_problems(
    const GemmRunBenchRequest& request);
// `parity bench gemm-run` as a command line or a binding gives it (names as text).
struct GemmRunBenchSettings {
  GemmRunBenchRequest request;  // model, batch size, hardware, out; the rest from the fields below
  std::string dtype = "bf16";   // bf16, fp16 or fp32 (run as TF32)
  TimingSettings timing{.warmup = 10, .reps = 30};
  bool skip_oracle = false;              // GemmRunBenchOptions::measure_oracle off
  std::string gemm_choice = "measured";  // parse_gemm_choice
  int measured_per_source = gemm::GemmOptions{}.measured_candidates_per_source;  // >= 1
  // configs or tiles (measured_distinct_tiles); default: GemmOptions'.
  std::string measured_model_list = gemm::GemmOptions{}.measured_distinct_tiles ? "tiles" : "configs";
  // flushed or back-to-back (measured_flush_l2); default: GemmOptions'.
  std::string measured_timing = gemm::GemmOptions{}.measured_flush_l2 ? "flushed" : "back-to-back";
};
// CPU: the checked request (kInvalidArgument naming the flag); its problems listed once as a check.
Result<GemmRunBenchRequest> gemm_run_bench_request_from_settings(const GemmRunBenchSettings& settings);
// parity_gpu: runs them, hands `print` one table line per GEMM as it finishes, writes the JSON
// (provenance, method, one row per GEMM, clocks) and returns the closing text.
Result<std::string> run_gemm_run_bench_report(const GemmRunBenchRequest& request,
                                              const std::function<void(const std::string&)>& print);

}  // namespace parity::bench
