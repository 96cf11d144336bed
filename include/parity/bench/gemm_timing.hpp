// GEMM timing on NVIDIA (implemented in parity_gpu, src/backends/cuda/gemm/): cuBLASLt's and
// cuBLAS's own choices timed as a baseline, and honest timing of cuBLASLt candidates for one shape
// (the oracle of `parity gemm measure`, the measured side of `parity gemm run`).
// Candidate timing (origami.md §7.5): every candidate is run once and its launch checked; a
// screening pass times every candidate with a few L2-flushed repetitions; the best top_k of it,
// every heuristic pick and every selector pick are then checked against an fp64 reference on
// sampled entries and timed in full: L2 flushed before each repetition, warm-up first, one
// repetition per candidate per round over `repetitions` rounds (more for short kernels, see
// min_timed_ms), the order shuffled every round; the median is reported. The oracle's top
// `noise_top` are re-timed the same way for the noise floor.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/stats.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/cublaslt.hpp"
#include "parity/gemm/problem.hpp"

// The types stay in parity::gemm (they describe GEMM candidates); only their home is the bench.
namespace parity::gemm {

struct GemmTiming {
  bench::SampleStats stats;         // per-repetition device times
  double median_tflops = 0.0;       // 2*m*n*k / median
  std::string configuration;        // human-readable: tile, stages, cluster, split-K, ...
  double max_relative_error = 0.0;  // checked against a reference before timing
};

/// Times cuBLASLt's own heuristic top-1 for D = A*B (TN; bf16/fp16 in and out, fp32 accumulate;
/// fp32 uses TF32), inputs drawn from a normal distribution, output checked before timing
/// (kInternal when the check fails, so a wrong kernel is never timed).
Result<GemmTiming> time_cublaslt_heuristic(std::int64_t m, std::int64_t n, std::int64_t k,
                                           DType dtype, const bench::TimingOptions& options);

/// Times cublasGemmEx with cuBLAS's own algorithm choice (CUBLAS_GEMM_DEFAULT, fp32 compute,
/// the given handle workspace; cuBLAS's choice depends on it): the call torch's default BLAS
/// backend makes for F.linear, so the harness can be checked against torch's timing of the very
/// same kernel. bf16 or fp16, TN, checked first.
Result<GemmTiming> time_cublas_gemm_ex(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype,
                                       const bench::TimingOptions& options,
                                       std::uint64_t workspace_bytes = 32ull << 20);



struct MeasureOptions {
  int screen_repetitions = 3;
  int repetitions = 30;  // >= 30 for the oracle; one per round, interleaved
  // Short kernels get more rounds: max(repetitions, min(max_repetitions, ceil(min_timed_ms /
  // fastest screened median))), so each median rests on about min_timed_ms of kernel time and a
  // 10 us shape's median is not noisier than a 1 ms one's (0 = always `repetitions`).
  double min_timed_ms = 0.0;
  int max_repetitions = 300;
  int warmup_iterations = 5;
  int top_k = 8;         // best screened candidates promoted to full timing
  int noise_top = 5;     // oracle's top candidates re-timed for the noise floor (0 = none)
  int check_samples = 128;
  std::uint64_t seed = 1;
  std::int64_t flush_bytes = 0;  // 0 = 2 x L2
  bool screen_all = true;  // false: time only heuristic + selector picks (gemm run)
};
Status validate_measure_options(const MeasureOptions& options);
/// The counts `command` takes as flags, named as flags: "gemm run: --reps=0 must be >= 1".
Status validate_measure_counts(const MeasureOptions& options, std::string_view command);

struct TimedCandidate {
  Candidate candidate;
  std::string configuration;         // provider's tuple text
  bool from_pruned_set = false;
  int selector_rank = -1;            // rank among the selector picks passed in; -1 otherwise
  double screen_ms = -1.0;           // < 0: not screened (or failed)
  bool is_timed = false;
  bench::SampleStats stats;          // valid when is_timed
  double max_relative_error = -1.0;  // < 0: not checked
  std::string error;                 // non-empty: failed at launch or in the check
};

struct NoiseRetime {
  std::size_t index = 0;  // into ShapeMeasurement::candidates
  double first_ms = 0.0;
  double second_ms = 0.0;
};

struct ShapeMeasurement {
  GemmProblem problem;
  double check_ms = 0.0;      // per-shape AlgoCheck of the cached class space
  double heuristic_us = 0.0;  // host time of this shape's heuristic query
  double tolerance = 0.0;     // bound the sampled check used
  std::vector<TimedCandidate> candidates;
  int oracle = -1;            // fastest timed candidate
  int heuristic_top1 = -1;
  int selector_top1 = -1;
  std::vector<NoiseRetime> noise;
  double noise_max_relative_spread = 0.0;
  int rounds = 0;             // interleaved rounds of the full timing (and of the noise floor)
};

/// Measures one shape. `selector_picks` (best first, may be empty) are matched to enumerated
/// candidates by their cuBLASLt tuple, or built from features when they carry no payload.
Result<ShapeMeasurement> measure_shape(CublasLtProvider& provider, const GemmProblem& problem,
                                       const std::vector<Candidate>& selector_picks,
                                       const MeasureOptions& options);

// ---- `parity bench gemm`: the vendor's default choice per shape, checked then timed ----
struct NamedGemmShape {
  std::string name;
  GemmProblem problem;
};
/// The shapes of a suite CSV (`shapes_file` non-empty) or the one m x n x k, as TN problems of
/// `dtype`, validated (CPU; kInvalidArgument naming the flag).
Result<std::vector<NamedGemmShape>> gemm_bench_shapes(const std::string& shapes_file, std::int64_t m,
                                                      std::int64_t n, std::int64_t k, DType dtype);
struct GemmBenchRequest {
  std::vector<NamedGemmShape> shapes;
  DType dtype = DType::kBF16;
  bench::TimingOptions timing;
  bool use_cublas = false;  // false: cuBLASLt's heuristic top-1; true: cublasGemmEx (torch's call)
  std::uint64_t cublas_workspace_bytes = 32ull << 20;
  std::string out;  // results JSON with provenance (empty: none)
};
/// `parity bench gemm` as a command line or a binding gives it (dtype and library as text).
struct GemmBenchSettings {
  std::int64_t m = 0, n = 0, k = 0;
  std::string shapes;  // suite CSV instead of m x n x k
  std::string dtype = "bf16";
  bench::TimingSettings timing;
  std::string library = "cublaslt";  // or "cublas" (GemmBenchRequest::use_cublas)
  std::uint64_t cublas_workspace_bytes = 32ull << 20;
  std::string out;
};
/// The checked request with its shapes (CPU, before any device; kInvalidArgument naming the flag).
Result<GemmBenchRequest> gemm_bench_request_from_settings(const GemmBenchSettings& settings);
/// Times every shape (parity_gpu); `print` gets the table lines as they are produced.
Result<std::string> run_gemm_bench(const GemmBenchRequest& request,
                                   const std::function<void(const std::string&)>& print);

}  // namespace parity::gemm
