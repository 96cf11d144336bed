// fp64 reference for table-batched embeddings: plain loops, written for clarity, sharing no code
// with the CPU path or the kernels. Repeated rows are aggregated before one optimiser update per
// unique row per step (FBGEMM's exact optimisers; recsys memo §1.3-1.4).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "parity/embedding/tbe.hpp"

namespace parity::ref {

struct TbeRefBatch {
  std::vector<std::int64_t> indices;
  std::vector<std::int64_t> offsets;
  std::vector<double> per_sample_weights;  // empty when unweighted
};

/// Output rows x cols (problem.output_rows() x output_cols()), fp64. Weights: all elements, fp64.
std::vector<double> tbe_forward(const embedding::TbeProblem& problem, const std::vector<double>& weights,
                                const TbeRefBatch& batch);

/// Gradient summed per unique global row (row of table t: its D_t entries).
std::map<std::int64_t, std::vector<double>> tbe_row_gradients(const embedding::TbeProblem& problem,
                                                              const TbeRefBatch& batch,
                                                              const std::vector<double>& grad_output);

struct TbeRefTrainingState {
  std::vector<double> weights;
  std::vector<double> state1;
  std::vector<double> state2;
};

/// One training step's optimiser update from grad_output (per recsys memo §1.4).
void tbe_backward_fused(const embedding::TbeProblem& problem, const embedding::OptimizerParams& optimizer,
                        TbeRefTrainingState& state, const TbeRefBatch& batch,
                        const std::vector<double>& grad_output);

/// The bounds check's specification: counts, first bad entry, and in fix mode the repaired arrays
/// (bad index -> 0; offsets clamped to [0, N] and made non-decreasing by a running max; last := N).
embedding::BoundsCheckReport tbe_bounds_check(const embedding::TbeProblem& problem,
                                              embedding::BoundsCheckMode mode,
                                              std::vector<std::int64_t>& indices,
                                              std::vector<std::int64_t>& offsets);

}  // namespace parity::ref
