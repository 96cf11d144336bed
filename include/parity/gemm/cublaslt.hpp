// The cuBLASLt provider (NVIDIA, runs): enumerates a pruned space of real cuBLASLt configurations
// once per problem class, always adds the heuristic's own picks for the shape, filters everything
// with cublasLtMatmulAlgoCheck, maps each configuration to Candidate features, runs a candidate,
// and runs a candidate; the timing of candidates lives on the bench side
// (parity/bench/gemm_timing.hpp). Implemented in parity_gpu
// (src/backends/cuda/gemm/); only PARITY_HAS_CUDA builds link it. Plain C++: no CUDA header.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/problem.hpp"
#include "parity/gemm/provider.hpp"

namespace parity::gemm {

/// One-time enumeration of a problem class (reported as the provider's start-up cost).
struct EnumerationReport {
  std::string problem_class;      // "bf16 TN align=16 epilogue=none"
  std::vector<int> algo_ids;      // cublasLtMatmulAlgoGetIds
  int family_algo_id = 0;         // the algo the heuristic itself uses; the grid is built on it
  int configs_built = 0;          // grid points built with AlgoInit + ConfigSetAttribute
  int configs_passed_check = 0;   // passed cublasLtMatmulAlgoCheck (kept, cached)
  double enumerate_ms = 0.0;      // host wall time of the whole enumeration
};

class CublasLtProvider final : public Provider {
 public:
  /// Creates the cuBLASLt handle on the current device; kUnsupported without a device.
  static Result<std::unique_ptr<CublasLtProvider>> create();
  ~CublasLtProvider() override;
  CublasLtProvider(const CublasLtProvider&) = delete;
  CublasLtProvider& operator=(const CublasLtProvider&) = delete;

  std::string_view name() const override { return "cublaslt"; }
  /// The class's pruned space (enumerated once, cached) re-checked against this problem (for its
  /// workspace), plus the heuristic's picks for this shape (heuristic_rank 0..7), deduplicated.
  Result<std::vector<Candidate>> enumerate(const GemmProblem& problem) override;
  Status check(const GemmProblem& problem, const Candidate& candidate) override;
  Status run(const GemmProblem& problem, const Candidate& candidate,
             const GemmOperands& operands) override;

  /// cuBLASLt's own ranking for this shape, best first, at most `count` (it offers <= 8 on Hopper).
  Result<std::vector<Candidate>> heuristic(const GemmProblem& problem, int count = 8);
  /// Host time of the last heuristic query, microseconds.
  double last_heuristic_us() const;
  /// Host time of the last per-shape AlgoCheck pass inside enumerate(), milliseconds.
  double last_check_ms() const;
  /// "algo66 tile=256x128 stages=64xAUTO cluster=1x2 custom=7 splitk=1"; from the payload.
  std::string configuration(const Candidate& candidate) const;
  /// A candidate built from features alone (parsed text without payload): tile, stages (tile_k),
  /// cluster, variant, split-K, family. kInvalidArgument naming what does not map.
  Result<Candidate> candidate_from_features(const GemmProblem& problem, const Candidate& features);
  std::vector<EnumerationReport> enumeration_reports() const;
  std::uint64_t max_workspace_bytes() const;
  /// cublasLtGetVersion(), e.g. 130100: payloads are valid for this version only.
  static std::size_t library_version();

 private:
  struct Impl;
  explicit CublasLtProvider(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Device operands filled with normal random values for timing: a host pool of normal values in
/// the operand type is uploaded once and tiled over A and B (filling costs device copies only),
/// and the host recomputes any output element from the same pool for the sampled fp64 check.
class RandomGemmOperands {
 public:
  static Result<RandomGemmOperands> create(const GemmProblem& problem, std::uint64_t seed,
                                           std::uint64_t workspace_bytes);
  RandomGemmOperands();
  ~RandomGemmOperands();
  RandomGemmOperands(RandomGemmOperands&&) noexcept;
  RandomGemmOperands& operator=(RandomGemmOperands&&) noexcept;

  GemmOperands operands(void* stream = nullptr) const;
  /// Writes NaN into every element of D, so an unwritten element fails the next check.
  Status poison_output();
  /// Max over `samples` random entries (corners always included) of |D - ref| / sum_k |a||b|,
  /// ref in fp64 from the host copy of the inputs; a NaN or Inf in D gives +infinity.
  Result<double> max_relative_error(int samples, std::uint64_t seed) const;
  /// Bound for max_relative_error, derived in the implementation from the unit roundoffs.
  static double tolerance(const GemmProblem& problem);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace parity::gemm
