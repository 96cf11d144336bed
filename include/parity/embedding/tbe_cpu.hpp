// TBE on the CPU: an OpenMP path for training without a GPU and for cross-checks. Same semantics
// as the GPU kernels (fp32 accumulation, one optimiser update per unique row per step).
#pragma once

#include <cstdint>
#include <vector>

#include "parity/embedding/tbe.hpp"

namespace parity::embedding::cpu {

/// output: problem.output_rows() x output_cols() elements of output_dtype.
Status tbe_forward(const TbeProblem& problem, const void* weights, const TbeBatchView& batch,
                   void* output);

/// grad_output: fp32, output_rows() x output_cols(). Updates weights and state in place.
Status tbe_backward_fused(const TbeProblem& problem, const OptimizerParams& optimizer, void* weights,
                          float* state1, float* state2, const TbeBatchView& batch,
                          const float* grad_output);

/// Per-unique-row gradients: `unique_rows` ascending global row ids, `grads` U x max_dim (a row of
/// table t uses its first D_t columns, the rest are 0).
Status tbe_backward_dense(const TbeProblem& problem, const TbeBatchView& batch,
                          const float* grad_output, std::vector<std::int64_t>* unique_rows,
                          std::vector<float>* grads);

/// Checks (and in fix mode repairs) indices and offsets in place.
Result<BoundsCheckReport> tbe_bounds_check(const TbeProblem& problem, BoundsCheckMode mode,
                                           void* indices, void* offsets);

}  // namespace parity::embedding::cpu
