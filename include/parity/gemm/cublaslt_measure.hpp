// Honest timing of cuBLASLt candidates for one shape: the oracle of `parity gemm measure` and the
// measured side of `parity gemm run`. Method (origami.md §7.5): every candidate is run once and its
// launch checked; a screening pass times every candidate with a few L2-flushed repetitions; the
// best top_k of it, every heuristic pick and every selector pick are then checked against an fp64
// reference on sampled entries and timed in full: L2 flushed before each repetition, warm-up
// first, one repetition per candidate per round over `repetitions` rounds (more for short kernels,
// see min_timed_ms), the order shuffled every round; the median is reported. The oracle's top
// `noise_top` are re-timed the same way for the noise floor. Implemented in parity_gpu.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/bench/stats.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/cublaslt.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::gemm {

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

}  // namespace parity::gemm
