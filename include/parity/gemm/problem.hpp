// GemmProblem: one matrix multiply D = epilogue(alpha * op(A) * op(B) + beta * C), described in
// cuBLAS column-major terms so it maps 1:1 onto cuBLASLt and hipBLASLt.
//
// Legend: M, N = rows and columns of C/D; K = reduction length; batch = independent GEMMs of the
// same shape (strided). Layout letters give op(A) then op(B):
//   T for A: A is stored K x M (column-major, lda >= K), i.e. row-major M x K, K contiguous.
//   N for A: A is stored M x K (lda >= M).            N for B: B is stored K x N (ldb >= K).
//   T for B: B is stored N x K (ldb >= N).             C/D: stored M x N (ldc >= M).
// "TN" (both operands K-contiguous) is the layout the dev shape suite and baselines use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"

namespace parity::gemm {

enum class GemmLayout : std::uint8_t { kTN, kNN, kNT, kTT };
enum class Epilogue : std::uint8_t { kNone, kBias, kRelu };

std::string_view layout_name(GemmLayout layout);          // "TN"
Result<GemmLayout> parse_layout(std::string_view text);   // "tn"/"TN"
std::string_view epilogue_name(Epilogue epilogue);        // "none", "bias", "relu"
Result<Epilogue> parse_epilogue(std::string_view text);

// Supported operand types: bf16, fp16, and fp32 (computed as TF32 on tensor cores). Accumulation
// is always fp32. `parse_gemm_dtype` accepts "bf16", "fp16", "fp32", "tf32", "fp32-tf32".
Result<DType> parse_gemm_dtype(std::string_view text);
std::string_view gemm_dtype_name(DType dtype);  // "bf16", "fp16", "fp32-tf32"

struct GemmProblem {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  std::int64_t batch = 1;
  DType a_dtype = DType::kBF16;
  DType b_dtype = DType::kBF16;
  DType c_dtype = DType::kBF16;  // C and D share a type
  GemmLayout layout = GemmLayout::kTN;
  // Leading dimensions in elements; 0 = packed (the minimum the layout allows).
  std::int64_t lda = 0;
  std::int64_t ldb = 0;
  std::int64_t ldc = 0;
  // Alignment the caller guarantees for pointers and rows, in bytes (a power of two, 2..256);
  // 0 = derive from the leading dimensions (largest of 16/8/4/2 dividing all rows in bytes).
  int alignment_bytes = 0;
  Epilogue epilogue = Epilogue::kNone;

  // Checks sizes > 0, supported dtypes (A and B equal), leading dims >= their minimum, and that
  // every row in bytes is a multiple of the declared alignment. Messages name the parameter.
  Status validate() const;

  std::int64_t lda_or_packed() const;
  std::int64_t ldb_or_packed() const;
  std::int64_t ldc_or_packed() const;
  // Effective alignment class in bytes: min(declared or 16, largest power of two <= 16 dividing
  // every leading dimension in bytes). Kernels are enumerated and cached per this class.
  int alignment_class_bytes() const;
  double flop_count() const;  // 2*M*N*K*batch
  // Compulsory traffic: A, B read once and D written once (C read too when beta != 0 is not
  // modelled: epilogues here never read C).
  double min_bytes() const;
  std::string describe() const;  // "m=4096 n=4096 k=4096 batch=1 bf16 TN align=16 epilogue=none"
};

/// `sizes` (m, n, k, batch, leading dimensions, alignment) with the dtype of A, B and C, the
/// layout and the epilogue parsed from text (as a command line or a binding gives them), then
/// validated; errors name the parameter.
Result<GemmProblem> gemm_problem_from_text(GemmProblem sizes, std::string_view dtype, std::string_view layout,
                                           std::string_view epilogue = "none");

// The key candidate spaces are enumerated, checked and cached under: the things that change which
// kernels are valid, but not the sizes.
struct ProblemClass {
  DType a_dtype = DType::kBF16;
  DType c_dtype = DType::kBF16;
  GemmLayout layout = GemmLayout::kTN;
  int alignment_bytes = 16;
  Epilogue epilogue = Epilogue::kNone;
  friend bool operator==(const ProblemClass&, const ProblemClass&) = default;
};
ProblemClass problem_class(const GemmProblem& problem);
std::uint64_t problem_class_hash(const ProblemClass& key);

}  // namespace parity::gemm
