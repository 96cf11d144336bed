// The Origami-class (AMD CDNA) model: a cycle model after AMD's Origami (origami.md §2): MFMA
// latency table, per-XCD L2 hit rates from the tiles each XCD runs under WGM and the XCD mapping,
// MALL, HBM bandwidth fraction in active CUs, wave quantisation, stream-K. Internal header.
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

 private:
  template <bool kExplain>
  double predict(const GemmProblem& problem, const PreparedCandidate& c,
                 TimeBreakdown* breakdown) const;
};

}  // namespace parity::gemm
