// fp64 reference GEMM: D = epilogue(op(A) * op(B)) in the column-major terms of
// parity/gemm/problem.hpp (alpha = 1, beta = 0). Plain loops, written for clarity; shares no code
// with any GPU path. Operands are read through storage accessors (element index -> value) so the
// same loops serve whole host arrays (tests) and sampled checks of large device operands.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "parity/gemm/problem.hpp"

namespace parity::ref {

struct GemmElement {
  double value = 0.0;    // D[row, col] of batch `batch_index`, epilogue applied
  double abs_sum = 0.0;  // sum_k |op(A)[row,k]| * |op(B)[k,col]| (+ |bias[row]|): error scale
};

// Storage index of op(A)[row, kk], op(B)[kk, col] and D[row, col] (batch strides ld * columns).
std::int64_t gemm_a_index(const gemm::GemmProblem& problem, std::int64_t batch_index,
                          std::int64_t row, std::int64_t kk);
std::int64_t gemm_b_index(const gemm::GemmProblem& problem, std::int64_t batch_index,
                          std::int64_t kk, std::int64_t col);
std::int64_t gemm_d_index(const gemm::GemmProblem& problem, std::int64_t batch_index,
                          std::int64_t row, std::int64_t col);
// Elements each operand's storage spans over all batches (A, B, D).
std::int64_t gemm_a_storage(const gemm::GemmProblem& problem);
std::int64_t gemm_b_storage(const gemm::GemmProblem& problem);
std::int64_t gemm_d_storage(const gemm::GemmProblem& problem);

using ElementAt = std::function<double(std::int64_t)>;

// One element; `bias_at` (length M) is used only for Epilogue::kBias.
GemmElement gemm_element(const gemm::GemmProblem& problem, const ElementAt& a_at,
                         const ElementAt& b_at, const ElementAt& bias_at, std::int64_t batch_index,
                         std::int64_t row, std::int64_t col);

// Every element, laid out like D's storage (gemm_d_storage elements; padding rows left 0).
std::vector<GemmElement> gemm(const gemm::GemmProblem& problem, const std::vector<float>& a,
                              const std::vector<float>& b, const std::vector<float>& bias = {});

}  // namespace parity::ref
