#include "parity/gemm/problem.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

namespace parity::gemm {
namespace {

std::string lower(std::string_view text) {
  std::string s(text);
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_gemm_dtype(DType t) { return t == DType::kBF16 || t == DType::kF16 || t == DType::kF32; }

bool is_power_of_two(int v) { return v > 0 && (v & (v - 1)) == 0; }

// Largest power of two <= 16 dividing `bytes` (row starts stay aligned to it).
int row_alignment_bytes(std::int64_t bytes) {
  int align = 16;
  while (align > 1 && bytes % align != 0) align /= 2;
  return align;
}

// x * y, or nullopt when the product overflows 64 bits.
std::optional<std::int64_t> checked_product(std::int64_t x, std::int64_t y) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(x, y, &product)) return std::nullopt;
  return product;
}

// Every operand and the output, counted in elements with its leading dimension and batch, must
// fit kMaxOperandElements. The bound is far above any device's memory (2^48 bf16 elements are
// 512 TiB) and keeps every tile, wave and byte count the models derive exact in a double and in
// 64-bit integers, so no prediction can wrap around into a rate above the hardware's peak.
Status check_operand_sizes(const GemmProblem& p, bool a_transposed, bool b_transposed) {
  constexpr std::int64_t kMaxOperandElements = std::int64_t{1} << 48;
  const struct {
    const char* name;
    const char* ld_name;
    std::int64_t ld;
    const char* columns_name;
    std::int64_t columns;
  } operands[] = {
      {"A", "lda", p.lda_or_packed(), a_transposed ? "m" : "k", a_transposed ? p.m : p.k},
      {"B", "ldb", p.ldb_or_packed(), b_transposed ? "k" : "n", b_transposed ? p.k : p.n},
      {"C", "ldc", p.ldc_or_packed(), "n", p.n},
  };
  for (const auto& operand : operands) {
    const auto per_matrix = checked_product(operand.ld, operand.columns);
    const auto total = per_matrix ? checked_product(*per_matrix, p.batch) : std::nullopt;
    PARITY_CHECK_ARG(total && *total <= kMaxOperandElements, "gemm: ", operand.name, " holds ",
                     operand.ld_name, " x ", operand.columns_name, " x batch = ", operand.ld, " x ",
                     operand.columns, " x ", p.batch, " elements",
                     total ? "" : " (overflows 64 bits)", ", above the limit of 2^48");
  }
  return Status::ok();
}

}  // namespace

std::string_view layout_name(GemmLayout layout) {
  switch (layout) {
    case GemmLayout::kTN: return "TN";
    case GemmLayout::kNN: return "NN";
    case GemmLayout::kNT: return "NT";
    case GemmLayout::kTT: return "TT";
  }
  return "?";
}

Result<GemmLayout> parse_layout(std::string_view text) {
  const std::string s = lower(text);
  if (s == "tn") return GemmLayout::kTN;
  if (s == "nn") return GemmLayout::kNN;
  if (s == "nt") return GemmLayout::kNT;
  if (s == "tt") return GemmLayout::kTT;
  return invalid_argument("layout: unknown value '", text, "' (expected one of TN, NN, NT, TT)");
}

std::string_view epilogue_name(Epilogue epilogue) {
  switch (epilogue) {
    case Epilogue::kNone: return "none";
    case Epilogue::kBias: return "bias";
    case Epilogue::kRelu: return "relu";
  }
  return "?";
}

Result<Epilogue> parse_epilogue(std::string_view text) {
  const std::string s = lower(text);
  if (s == "none") return Epilogue::kNone;
  if (s == "bias") return Epilogue::kBias;
  if (s == "relu") return Epilogue::kRelu;
  return invalid_argument("epilogue: unknown value '", text, "' (expected one of none, bias, relu)");
}

Result<DType> parse_gemm_dtype(std::string_view text) {
  const std::string s = lower(text);
  if (s == "bf16" || s == "bfloat16") return DType::kBF16;
  if (s == "fp16" || s == "f16" || s == "half") return DType::kF16;
  if (s == "fp32" || s == "tf32" || s == "fp32-tf32" || s == "f32") return DType::kF32;
  return invalid_argument("dtype: unsupported GEMM type '", text,
                          "' (expected one of bf16, fp16, fp32-tf32)");
}

Result<GemmProblem> gemm_problem_from_text(GemmProblem sizes, std::string_view dtype, std::string_view layout,
                                           std::string_view epilogue) {
  PARITY_ASSIGN_OR_RETURN(const DType parsed_dtype, parse_gemm_dtype(dtype));
  sizes.a_dtype = sizes.b_dtype = sizes.c_dtype = parsed_dtype;
  PARITY_ASSIGN_OR_RETURN(sizes.layout, parse_layout(layout));
  PARITY_ASSIGN_OR_RETURN(sizes.epilogue, parse_epilogue(epilogue));
  PARITY_RETURN_IF_ERROR(sizes.validate());
  return sizes;
}

std::string_view gemm_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kBF16: return "bf16";
    case DType::kF16: return "fp16";
    case DType::kF32: return "fp32-tf32";
    default: return dtype_name(dtype);
  }
}

std::int64_t GemmProblem::lda_or_packed() const {
  if (lda != 0) return lda;
  const bool a_transposed = layout == GemmLayout::kTN || layout == GemmLayout::kTT;
  return a_transposed ? k : m;
}

std::int64_t GemmProblem::ldb_or_packed() const {
  if (ldb != 0) return ldb;
  const bool b_transposed = layout == GemmLayout::kNT || layout == GemmLayout::kTT;
  return b_transposed ? n : k;
}

std::int64_t GemmProblem::ldc_or_packed() const { return ldc != 0 ? ldc : m; }

Status GemmProblem::validate() const {
  PARITY_CHECK_ARG(m > 0, "gemm: m=", m, " must be > 0");
  PARITY_CHECK_ARG(n > 0, "gemm: n=", n, " must be > 0");
  PARITY_CHECK_ARG(k > 0, "gemm: k=", k, " must be > 0");
  PARITY_CHECK_ARG(batch > 0, "gemm: batch=", batch, " must be > 0");
  PARITY_CHECK_ARG(is_gemm_dtype(a_dtype), "gemm: a_dtype=", dtype_name(a_dtype),
                   " is not supported (expected bf16, fp16 or fp32-tf32)");
  PARITY_CHECK_ARG(is_gemm_dtype(b_dtype), "gemm: b_dtype=", dtype_name(b_dtype),
                   " is not supported (expected bf16, fp16 or fp32-tf32)");
  PARITY_CHECK_ARG(is_gemm_dtype(c_dtype), "gemm: c_dtype=", dtype_name(c_dtype),
                   " is not supported (expected bf16, fp16 or fp32-tf32)");
  PARITY_CHECK_ARG(a_dtype == b_dtype, "gemm: b_dtype=", dtype_name(b_dtype),
                   " differs from a_dtype=", dtype_name(a_dtype), " (mixed inputs unsupported)");
  const bool a_transposed = layout == GemmLayout::kTN || layout == GemmLayout::kTT;
  const bool b_transposed = layout == GemmLayout::kNT || layout == GemmLayout::kTT;
  const std::int64_t min_lda = a_transposed ? k : m;
  const std::int64_t min_ldb = b_transposed ? n : k;
  PARITY_CHECK_ARG(lda >= 0, "gemm: lda=", lda, " must be >= 0 (0 = packed)");
  PARITY_CHECK_ARG(ldb >= 0, "gemm: ldb=", ldb, " must be >= 0 (0 = packed)");
  PARITY_CHECK_ARG(ldc >= 0, "gemm: ldc=", ldc, " must be >= 0 (0 = packed)");
  PARITY_CHECK_ARG(lda == 0 || lda >= min_lda, "gemm: lda=", lda, " is smaller than ",
                   a_transposed ? "k=" : "m=", min_lda, " (layout ", layout_name(layout), ")");
  PARITY_CHECK_ARG(ldb == 0 || ldb >= min_ldb, "gemm: ldb=", ldb, " is smaller than ",
                   b_transposed ? "n=" : "k=", min_ldb, " (layout ", layout_name(layout), ")");
  PARITY_CHECK_ARG(ldc == 0 || ldc >= m, "gemm: ldc=", ldc, " is smaller than m=", m);
  PARITY_RETURN_IF_ERROR(check_operand_sizes(*this, a_transposed, b_transposed));
  if (alignment_bytes != 0) {
    PARITY_CHECK_ARG(is_power_of_two(alignment_bytes) && alignment_bytes >= 2 &&
                         alignment_bytes <= 256,
                     "gemm: alignment_bytes=", alignment_bytes,
                     " must be a power of two in [2, 256] (or 0 = derive)");
    const struct {
      const char* name;
      std::int64_t ld;
      DType dtype;
    } rows[] = {{"lda", lda_or_packed(), a_dtype},
                {"ldb", ldb_or_packed(), b_dtype},
                {"ldc", ldc_or_packed(), c_dtype}};
    for (const auto& row : rows) {
      const std::int64_t row_bytes = row.ld * static_cast<std::int64_t>(dtype_size_bytes(row.dtype));
      const std::int64_t need = std::min<std::int64_t>(alignment_bytes, 16);
      PARITY_CHECK_ARG(row_bytes % need == 0, "gemm: ", row.name, "=", row.ld, " (", row_bytes,
                       " bytes per row) is misaligned: rows must be a multiple of ", need,
                       " bytes for alignment_bytes=", alignment_bytes);
    }
  }
  return Status::ok();
}

int GemmProblem::alignment_class_bytes() const {
  int align = alignment_bytes == 0 ? 16 : std::min(alignment_bytes, 16);
  align = std::min(align, row_alignment_bytes(lda_or_packed() *
                                              static_cast<std::int64_t>(dtype_size_bytes(a_dtype))));
  align = std::min(align, row_alignment_bytes(ldb_or_packed() *
                                              static_cast<std::int64_t>(dtype_size_bytes(b_dtype))));
  align = std::min(align, row_alignment_bytes(ldc_or_packed() *
                                              static_cast<std::int64_t>(dtype_size_bytes(c_dtype))));
  return align;
}

double GemmProblem::flop_count() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
         static_cast<double>(batch);
}

double GemmProblem::min_bytes() const {
  const double a = static_cast<double>(dtype_size_bytes(a_dtype));
  const double b = static_cast<double>(dtype_size_bytes(b_dtype));
  const double c = static_cast<double>(dtype_size_bytes(c_dtype));
  const double md = static_cast<double>(m), nd = static_cast<double>(n),
               kd = static_cast<double>(k);
  return static_cast<double>(batch) * (md * kd * a + kd * nd * b + md * nd * c);
}

std::string GemmProblem::describe() const {
  return detail::concat("m=", m, " n=", n, " k=", k, " batch=", batch, " ",
                        gemm_dtype_name(a_dtype), " ", layout_name(layout),
                        " align=", alignment_class_bytes(), " epilogue=", epilogue_name(epilogue));
}

ProblemClass problem_class(const GemmProblem& problem) {
  ProblemClass key;
  key.a_dtype = problem.a_dtype;
  key.c_dtype = problem.c_dtype;
  key.layout = problem.layout;
  key.alignment_bytes = problem.alignment_class_bytes();
  key.epilogue = problem.epilogue;
  return key;
}

std::uint64_t problem_class_hash(const ProblemClass& key) {
  return (static_cast<std::uint64_t>(key.a_dtype) << 40) |
         (static_cast<std::uint64_t>(key.c_dtype) << 32) |
         (static_cast<std::uint64_t>(key.layout) << 24) |
         (static_cast<std::uint64_t>(key.epilogue) << 16) |
         static_cast<std::uint64_t>(key.alignment_bytes);
}

}  // namespace parity::gemm
