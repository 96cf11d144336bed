// Provider: a source of GEMM kernel configurations that can enumerate, check and run them.
// Implementations: the cuBLASLt provider (src/backends/cuda/gemm/, NVIDIA, runs) and the
// modelled spaces (candidate_space.hpp, no device: they enumerate but cannot run).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::gemm {

// Device operands for run(). Pointers are device pointers and `stream` the native stream handle
// (cudaStream_t / hipStream_t) cast to void*, so this header stays free of vendor headers.
struct GemmOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;            // output (and C when beta != 0; C and D alias)
  const void* bias = nullptr;   // length M, c_dtype; required for Epilogue::kBias
  void* workspace = nullptr;
  std::uint64_t workspace_bytes = 0;
  void* stream = nullptr;
  float alpha = 1.0f;
  float beta = 0.0f;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string_view name() const = 0;
  // All candidates this provider offers for the problem, with features filled in; implementations
  // cache per problem_class() so repeated calls are cheap.
  virtual Result<std::vector<Candidate>> enumerate(const GemmProblem& problem) = 0;
  // ok when the candidate can run this problem (validity, workspace); kUnsupported with a reason
  // otherwise.
  virtual Status check(const GemmProblem& problem, const Candidate& candidate) = 0;
  // Enqueues the GEMM on operands.stream. Modelled providers return kUnsupported.
  virtual Status run(const GemmProblem& problem, const Candidate& candidate,
                     const GemmOperands& operands) = 0;
};

}  // namespace parity::gemm
