// Internal: what a device backend of gemm::Gemm implements, and the hook through which the GPU
// library (parity_gpu) registers its backend at static-initialisation time, so the CPU library
// links without it and answers kUnsupported for a GPU context in a CPU-only build.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "parity/gemm/gemm.hpp"

namespace parity::gemm::detail {

// A candidate GemmChoice::kMeasured timed: its text (with where each source ranked it) and time.
struct TimedCandidate {
  std::string configuration;
  double time_us = 0.0;
};

// One prepared problem on one device: selected once at creation, then run many times.
class GemmRunBackend {
 public:
  virtual ~GemmRunBackend() = default;
  virtual std::int64_t workspace_bytes() const = 0;
  virtual std::string configuration() const = 0;
  // Every candidate GemmChoice::kMeasured timed at creation, in pool order (empty otherwise).
  virtual std::vector<TimedCandidate> timed_candidates() const { return {}; }
  // Arguments are already checked against the problem (pointers, aux_ld, workspace size).
  virtual Status run(const GemmArgs& args, const ExecutionContext& context) const = 0;
};

using GemmRunBackendFactory = Result<std::unique_ptr<GemmRunBackend>> (*)(
    const GemmRunProblem& problem, const ExecutionContext& context, const GemmOptions& options);

// Installs the GPU factory (parity_gpu calls this from a static initialiser); thread-safe.
void register_gpu_gemm_run_factory(GemmRunBackendFactory factory);

// The registered GPU backend for a validated problem (what Gemm::create uses): for benchmarks that
// read more than a Gemm exposes (timed_candidates). kUnsupported without a GPU backend.
Result<std::unique_ptr<GemmRunBackend>> create_gpu_gemm_run_backend(const GemmRunProblem& problem,
                                                                    const ExecutionContext& context,
                                                                    const GemmOptions& options);

// The CPU backend (OpenBLAS); the problem is already validated.
Result<std::unique_ptr<GemmRunBackend>> create_cpu_gemm_run_backend(const GemmRunProblem& problem);

// aux_ld with 0 resolved.
std::int64_t effective_aux_ld(const GemmRunProblem& problem, const GemmArgs& args);

}  // namespace parity::gemm::detail
