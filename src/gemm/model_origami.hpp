// The Origami-class (AMD CDNA) model: a port of AMD Origami's latency equations (origami.md §2;
// docs/gemm.md lists what is ported and what is not): MFMA latency table, per-XCD L2 hit rates
// from the tiles each XCD runs under WGM and the XCD mapping, MALL, HBM bandwidth fraction in
// active CUs, Origami's tile latency and its k-split-aware stream-K grid. Internal header.
#pragma once

#include "parity/gemm/model.hpp"

namespace parity::gemm {

class OrigamiModel final : public PerformanceModel {
 public:
  using PerformanceModel::PerformanceModel;
  PreparedCandidate prepare(const ProblemClass& problem_class,
                            const Candidate& candidate) const override;
  double predict_us(const GemmProblem& problem, const PreparedCandidate& prepared) const override;
  TimeBreakdown explain(const GemmProblem& problem, const PreparedCandidate& prepared) const override;
  // Hierarchical: candidates come in runs of one macro tile and MFMA shape (their occupancy, WGM
  // and XCD mapping variants follow each other); a run's bound (launch plus timesteps x the tile's
  // compute and L2 cycles, every other term >= 0) is computed once, and only runs whose bound
  // can reach the top-`keep` or the near-tie group are predicted exactly.
  std::size_t predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                             std::size_t count, std::size_t keep, double tie_epsilon,
                             double* predicted_us, double* cutoff_us) const override;

 private:
  double lower_bound_us(const GemmProblem& problem, const PreparedCandidate& c) const;
  template <bool kExplain>
  double predict(const GemmProblem& problem, const PreparedCandidate& c,
                 TimeBreakdown* breakdown) const;
};

}  // namespace parity::gemm
