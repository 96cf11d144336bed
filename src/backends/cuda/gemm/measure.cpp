// measure_shape: screening, check, interleaved full timing and noise floor (bench/gemm_timing.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "parity/bench/device_timing.hpp"
#include "parity/bench/gemm_timing.hpp"

namespace parity::gemm {

namespace {

struct Session {
  CublasLtProvider& provider;
  const GemmProblem& problem;
  const MeasureOptions& options;
  RandomGemmOperands& operands;

  bench::TimingOptions timing(int warmup, int repetitions) const {
    bench::TimingOptions t;
    t.warmup_iterations = warmup;
    t.repetitions = repetitions;
    t.cache = bench::TimingOptions::CacheMode::kFlushL2;
    t.flush_bytes = options.flush_bytes;
    return t;
  }

  Result<bench::SampleStats> time(const Candidate& candidate, int warmup, int repetitions) {
    const GemmOperands base = operands.operands();
    return bench::time_on_device(
        [&](gpu::StreamHandle stream) {
          GemmOperands ops = base;
          ops.stream = stream;
          return provider.run(problem, candidate, ops);
        },
        timing(warmup, repetitions));
  }

  // Runs once on poisoned output, then compares sampled entries with the fp64 reference.
  Result<double> check(const Candidate& candidate) {
    PARITY_RETURN_IF_ERROR(operands.poison_output());
    PARITY_RETURN_IF_ERROR(provider.run(problem, candidate, operands.operands()));
    if (const cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) {
      return device_error("cublasLtMatmul failed asynchronously: ", cudaGetErrorString(error));
    }
    return operands.max_relative_error(options.check_samples, options.seed + 17);
  }

  // Interleaved full timing: warm-up each, then `rounds` rounds of one flushed repetition
  // per candidate, order shuffled each round. Returns per-candidate samples.
  Result<std::vector<std::vector<double>>> interleaved(const std::vector<std::size_t>& order_in,
                                                       std::vector<TimedCandidate>& all,
                                                       int rounds, std::mt19937_64& engine) {
    std::vector<std::vector<double>> samples(order_in.size());
    for (std::size_t i = 0; i < order_in.size(); ++i) {
      PARITY_RETURN_IF_ERROR(time(all[order_in[i]].candidate, options.warmup_iterations, 1).status());
    }
    std::vector<std::size_t> order(order_in.size());
    std::iota(order.begin(), order.end(), 0);
    for (int round = 0; round < rounds; ++round) {
      std::shuffle(order.begin(), order.end(), engine);
      for (std::size_t slot : order) {
        PARITY_ASSIGN_OR_RETURN(const auto one, time(all[order_in[slot]].candidate, 0, 1));
        samples[slot].push_back(one.median_ms);
      }
    }
    return samples;
  }
};

// Candidate set: the pruned class space + the heuristic's picks (enumerate), or only the
// heuristic's picks; then the selector's picks, matched by their cuBLASLt tuple.
Status gather_candidates(CublasLtProvider& provider, const GemmProblem& problem,
                         const std::vector<Candidate>& selector_picks, const MeasureOptions& options,
                         ShapeMeasurement* out) {
  std::vector<Candidate> set;
  if (options.screen_all) {
    PARITY_ASSIGN_OR_RETURN(set, provider.enumerate(problem));
    out->check_ms = provider.last_check_ms();
  } else {
    PARITY_ASSIGN_OR_RETURN(set, provider.heuristic(problem, 8));
  }
  out->heuristic_us = provider.last_heuristic_us();
  std::vector<std::string> keys;
  for (const Candidate& c : set) {
    TimedCandidate timed;
    timed.candidate = c;
    timed.configuration = provider.configuration(c);
    timed.from_pruned_set = options.screen_all;
    keys.push_back(timed.configuration);
    out->candidates.push_back(std::move(timed));
  }
  for (std::size_t rank = 0; rank < selector_picks.size(); ++rank) {
    Candidate pick = selector_picks[rank];
    if (!pick.has_payload) {
      PARITY_ASSIGN_OR_RETURN(pick, provider.candidate_from_features(problem, pick));
    }
    const std::string key = provider.configuration(pick);
    auto found = std::find(keys.begin(), keys.end(), key);
    if (found == keys.end()) {
      TimedCandidate timed;
      timed.candidate = pick;
      timed.configuration = key;
      keys.push_back(key);
      out->candidates.push_back(std::move(timed));
      found = keys.end() - 1;
    }
    auto& entry = out->candidates[static_cast<std::size_t>(found - keys.begin())];
    if (entry.selector_rank < 0) entry.selector_rank = static_cast<int>(rank);
  }
  if (out->candidates.empty()) {
    return unsupported("measure: no cuBLASLt candidate for ", problem.describe());
  }
  return Status::ok();
}

// Screening (every candidate, a few flushed repetitions, random order; a candidate whose launch
// fails is recorded and dropped: AlgoCheck does not see pointers, origami.md §5.4), then
// promotion: the best top_k screened, every heuristic pick, every selector pick.
Result<std::vector<std::size_t>> screen_and_promote(Session& session, const MeasureOptions& options,
                                                    std::mt19937_64& engine, ShapeMeasurement* out) {
  std::vector<std::size_t> order(out->candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), engine);
  const bool must_time_all = !options.screen_all;
  for (std::size_t index : order) {
    auto& c = out->candidates[index];
    if (must_time_all) continue;
    auto stats = session.time(c.candidate, 1, options.screen_repetitions);
    if (!stats.is_ok()) {
      if (stats.status().code() != StatusCode::kDeviceError) return stats.status();
      c.error = stats.status().message();
      continue;
    }
    c.screen_ms = stats->median_ms;
  }
  std::vector<std::size_t> screened;
  for (std::size_t i = 0; i < out->candidates.size(); ++i) {
    if (out->candidates[i].screen_ms > 0.0) screened.push_back(i);
  }
  std::sort(screened.begin(), screened.end(), [&](std::size_t x, std::size_t y) {
    return out->candidates[x].screen_ms < out->candidates[y].screen_ms;
  });
  std::vector<std::size_t> promoted;
  for (std::size_t i = 0; i < screened.size() && static_cast<int>(i) < options.top_k; ++i) {
    promoted.push_back(screened[i]);
  }
  for (std::size_t i = 0; i < out->candidates.size(); ++i) {
    const auto& c = out->candidates[i];
    const bool always = must_time_all || c.candidate.heuristic_rank >= 0 || c.selector_rank >= 0;
    if (always && c.error.empty() &&
        std::find(promoted.begin(), promoted.end(), i) == promoted.end()) {
      promoted.push_back(i);
    }
  }
  return promoted;
}

// Check before timing: a wrong result is never timed. Returns the candidates that passed.
Result<std::vector<std::size_t>> check_promoted(Session& session,
                                                const std::vector<std::size_t>& promoted,
                                                ShapeMeasurement* out) {
  std::vector<std::size_t> checked;
  for (std::size_t index : promoted) {
    auto& c = out->candidates[index];
    auto error = session.check(c.candidate);
    if (!error.is_ok()) {
      if (error.status().code() != StatusCode::kDeviceError) return error.status();
      c.error = error.status().message();
      continue;
    }
    c.max_relative_error = *error;
    if (!(*error <= out->tolerance)) {
      c.error = detail::concat("max relative error ", *error, " exceeds the tolerance ", out->tolerance);
      continue;
    }
    checked.push_back(index);
  }
  return checked;
}

// Rounds from the fastest screened median: a 10 us kernel's repetitions scatter by ~10% (launch
// and DRAM-latency jitter), so 30 of them leave its median ~1% uncertain; min_timed_ms of kernel
// time brings every shape's median to about the same precision.
int timed_rounds(const std::vector<std::size_t>& checked, const MeasureOptions& options,
                 const ShapeMeasurement& out) {
  double fastest_screen_ms = 0.0;
  for (std::size_t index : checked) {
    const double screen_ms = out.candidates[index].screen_ms;
    if (screen_ms > 0.0 && (fastest_screen_ms == 0.0 || screen_ms < fastest_screen_ms)) {
      fastest_screen_ms = screen_ms;
    }
  }
  if (options.min_timed_ms <= 0.0 || fastest_screen_ms <= 0.0) return options.repetitions;
  const double wanted = std::ceil(options.min_timed_ms / fastest_screen_ms);
  return static_cast<int>(std::clamp(wanted, static_cast<double>(options.repetitions),
                                     static_cast<double>(options.max_repetitions)));
}

// Noise floor: the oracle's top noise_top timed again, the same way.
Status retime_noise_floor(Session& session, const std::vector<std::size_t>& by_time,
                          const MeasureOptions& options, std::mt19937_64& engine,
                          ShapeMeasurement* out) {
  if (options.noise_top <= 0 || by_time.empty()) return Status::ok();
  std::vector<std::size_t> top(
      by_time.begin(),
      by_time.begin() + std::min<std::ptrdiff_t>(options.noise_top,
                                                 static_cast<std::ptrdiff_t>(by_time.size())));
  PARITY_ASSIGN_OR_RETURN(auto again, session.interleaved(top, out->candidates, out->rounds, engine));
  for (std::size_t slot = 0; slot < top.size(); ++slot) {
    PARITY_ASSIGN_OR_RETURN(const auto stats, bench::summarize(again[slot]));
    NoiseRetime retime{top[slot], out->candidates[top[slot]].stats.median_ms, stats.median_ms};
    out->noise_max_relative_spread =
        std::max(out->noise_max_relative_spread,
                 std::abs(retime.second_ms - retime.first_ms) / retime.first_ms);
    out->noise.push_back(retime);
  }
  return Status::ok();
}

}  // namespace

Result<ShapeMeasurement> measure_shape(CublasLtProvider& provider, const GemmProblem& problem,
                                       const std::vector<Candidate>& selector_picks,
                                       const MeasureOptions& options) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  PARITY_RETURN_IF_ERROR(validate_measure_options(options));
  ShapeMeasurement out;
  out.problem = problem;
  out.tolerance = RandomGemmOperands::tolerance(problem);
  PARITY_RETURN_IF_ERROR(gather_candidates(provider, problem, selector_picks, options, &out));

  std::uint64_t workspace = 0;
  for (const auto& c : out.candidates) workspace = std::max(workspace, c.candidate.workspace_bytes);
  PARITY_ASSIGN_OR_RETURN(RandomGemmOperands operands,
                          RandomGemmOperands::create(problem, options.seed, workspace));
  Session session{provider, problem, options, operands};
  std::mt19937_64 engine(options.seed);
  PARITY_ASSIGN_OR_RETURN(const auto promoted, screen_and_promote(session, options, engine, &out));
  PARITY_ASSIGN_OR_RETURN(const auto checked, check_promoted(session, promoted, &out));

  out.rounds = timed_rounds(checked, options, out);
  PARITY_ASSIGN_OR_RETURN(auto samples,
                          session.interleaved(checked, out.candidates, out.rounds, engine));
  for (std::size_t slot = 0; slot < checked.size(); ++slot) {
    auto& c = out.candidates[checked[slot]];
    PARITY_ASSIGN_OR_RETURN(c.stats, bench::summarize(samples[slot]));
    c.is_timed = true;
  }
  std::vector<std::size_t> by_time = checked;
  std::sort(by_time.begin(), by_time.end(), [&](std::size_t x, std::size_t y) {
    return out.candidates[x].stats.median_ms < out.candidates[y].stats.median_ms;
  });
  if (!by_time.empty()) out.oracle = static_cast<int>(by_time.front());
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    const auto& c = out.candidates[i];
    if (!c.is_timed) continue;
    if (c.candidate.heuristic_rank == 0) out.heuristic_top1 = static_cast<int>(i);
    if (c.selector_rank == 0) out.selector_top1 = static_cast<int>(i);
  }
  PARITY_RETURN_IF_ERROR(retime_noise_floor(session, by_time, options, engine, &out));
  return out;
}

}  // namespace parity::gemm
