// The CPU backend of gemm::Gemm: OpenBLAS sgemm (fp32 accumulate) per batch, bf16/fp16 operands
// converted to fp32 in the workspace first, then every epilogue as one pass over D's columns
// (bias, activation, aux, bias-gradient partial sums and the output conversion together).
#include <cblas.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstring>
#include <memory>

#include "gemm/gemm_run_backend.hpp"

namespace parity::gemm::detail {
namespace {

// Columns per bias-gradient partial sum block: a fixed partition, so the reduction order (and the
// result) does not depend on the thread count.
constexpr std::int64_t kBiasGradBlocks = 64;
// Below this many elements a pass runs on one thread (the fork costs more than it saves).
constexpr std::int64_t kParallelMinElements = 1 << 15;
// tanh-approximated GELU, as cuBLASLt's GELU epilogues: 0.5 x (1 + tanh(c0 (x + c1 x^3))).
constexpr float kGeluC0 = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluC1 = 0.044715f;

// bf16 <-> fp32 inline for the hot loops (same rounding as parity::float_to_bf16_bits: RNE).
inline float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}
inline std::uint16_t float_to_bf16(float value) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

inline float load_as_float(const void* base, DType dtype, std::int64_t index) {
  switch (dtype) {
    case DType::kBF16:
      return bf16_to_float(static_cast<const std::uint16_t*>(base)[index]);
    case DType::kF16:
      return fp16_bits_to_float(static_cast<const std::uint16_t*>(base)[index]);
    default:
      return static_cast<const float*>(base)[index];
  }
}

// Column `rows` elements of `src` (dtype, ld_src) -> fp32 `dst` (ld_dst), for `cols` columns.
void convert_to_float(const void* src, DType dtype, std::int64_t rows, std::int64_t cols,
                      std::int64_t ld_src, float* dst, std::int64_t ld_dst) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelMinElements)
  for (std::int64_t col = 0; col < cols; ++col) {
    float* out = dst + col * ld_dst;
    if (dtype == DType::kBF16) {
      const auto* in = static_cast<const std::uint16_t*>(src) + col * ld_src;
      for (std::int64_t row = 0; row < rows; ++row) out[row] = bf16_to_float(in[row]);
    } else if (dtype == DType::kF16) {
      const auto* in = static_cast<const std::uint16_t*>(src) + col * ld_src;
      for (std::int64_t row = 0; row < rows; ++row) out[row] = fp16_bits_to_float(in[row]);
    } else {
      std::memcpy(out, static_cast<const float*>(src) + col * ld_src,
                  static_cast<std::size_t>(rows) * sizeof(float));
    }
  }
}

inline float gelu(float x) {
  return 0.5f * x * (1.0f + std::tanh(kGeluC0 * (x + kGeluC1 * x * x * x)));
}
inline float gelu_derivative(float x) {
  const float t = std::tanh(kGeluC0 * (x + kGeluC1 * x * x * x));
  return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * kGeluC0 * (1.0f + 3.0f * kGeluC1 * x * x);
}

// A stored operand as fp32: the caller's memory when fp32, else converted into `scratch`.
struct FloatMatrix {
  const float* data = nullptr;
  std::int64_t ld = 0;
};

// Everything one column pass needs; `column` is fp32 with alpha/beta already applied.
struct EpiloguePass {
  RunEpilogue epilogue = RunEpilogue::kNone;
  std::int64_t m = 0;
  const float* bias = nullptr;  // fp32 copy, length m
  void* aux = nullptr;          // this batch's aux
  std::int64_t aux_ld = 0;
  DType c_dtype = DType::kF32;
  float* bias_partial = nullptr;  // this block's partial sums (length m) or null
};

void apply_epilogue_column(const EpiloguePass& pass, std::int64_t col, float* x, void* d_column) {
  const std::int64_t m = pass.m;
  const RunEpilogue e = pass.epilogue;
  if (pass.bias != nullptr) {
    for (std::int64_t i = 0; i < m; ++i) x[i] += pass.bias[i];
  }
  const AuxKind aux_kind = epilogue_aux_kind(e);
  if (aux_kind == AuxKind::kReluMask) {
    auto* mask = static_cast<std::uint8_t*>(pass.aux) + col * (pass.aux_ld / 8);
    if (epilogue_writes_aux(e)) {
      std::memset(mask, 0, static_cast<std::size_t>(pass.aux_ld / 8));
      for (std::int64_t i = 0; i < m; ++i) {
        if (x[i] > 0.0f) mask[i / 8] = static_cast<std::uint8_t>(mask[i / 8] | (1u << (i % 8)));
      }
    } else {
      for (std::int64_t i = 0; i < m; ++i) {
        if (((mask[i / 8] >> (i % 8)) & 1u) == 0) x[i] = 0.0f;
      }
    }
  } else if (aux_kind == AuxKind::kGeluPreactivation) {
    const std::int64_t offset = col * pass.aux_ld;
    if (epilogue_writes_aux(e)) {
      if (pass.c_dtype == DType::kF32) {
        std::memcpy(static_cast<float*>(pass.aux) + offset, x, static_cast<std::size_t>(m) * 4);
      } else if (pass.c_dtype == DType::kBF16) {
        auto* out = static_cast<std::uint16_t*>(pass.aux) + offset;
        for (std::int64_t i = 0; i < m; ++i) out[i] = float_to_bf16(x[i]);
      } else {
        auto* out = static_cast<std::uint16_t*>(pass.aux) + offset;
        for (std::int64_t i = 0; i < m; ++i) out[i] = float_to_fp16_bits(x[i]);
      }
    } else {
      for (std::int64_t i = 0; i < m; ++i) {
        x[i] *= gelu_derivative(load_as_float(pass.aux, pass.c_dtype, offset + i));
      }
    }
  }
  if (e == RunEpilogue::kRelu || e == RunEpilogue::kBiasRelu || e == RunEpilogue::kBiasReluAux) {
    for (std::int64_t i = 0; i < m; ++i) x[i] = std::max(x[i], 0.0f);
  } else if (e == RunEpilogue::kGelu || e == RunEpilogue::kBiasGelu ||
             e == RunEpilogue::kBiasGeluAux) {
    for (std::int64_t i = 0; i < m; ++i) x[i] = gelu(x[i]);
  }
  if (pass.bias_partial != nullptr) {
    for (std::int64_t i = 0; i < m; ++i) pass.bias_partial[i] += x[i];
  }
  if (pass.c_dtype == DType::kBF16) {
    auto* out = static_cast<std::uint16_t*>(d_column);
    for (std::int64_t i = 0; i < m; ++i) out[i] = float_to_bf16(x[i]);
  } else if (pass.c_dtype == DType::kF16) {
    auto* out = static_cast<std::uint16_t*>(d_column);
    for (std::int64_t i = 0; i < m; ++i) out[i] = float_to_fp16_bits(x[i]);
  }
  // fp32: x is D's own column, already written in place.
}

bool epilogue_needs_pass(RunEpilogue e) {
  return e != RunEpilogue::kNone && e != RunEpilogue::kBgradA && e != RunEpilogue::kBgradB;
}

class CpuGemmRun final : public GemmRunBackend {
 public:
  explicit CpuGemmRun(const GemmRunProblem& problem) : p_(problem) {
    const GemmProblem& s = p_.shape;
    a_rows_ = is_a_transposed() ? s.k : s.m;
    a_cols_ = is_a_transposed() ? s.m : s.k;
    b_rows_ = is_b_transposed() ? s.n : s.k;
    b_cols_ = is_b_transposed() ? s.k : s.n;
    // Workspace: [A fp32 | B fp32 | D fp32 | bias-gradient partials], each present only if used.
    std::int64_t floats = 0;
    if (s.a_dtype != DType::kF32) {
      a_offset_ = floats;
      floats += a_rows_ * a_cols_;
      b_offset_ = floats;
      floats += b_rows_ * b_cols_;
    }
    if (s.c_dtype != DType::kF32) {
      d_offset_ = floats;
      floats += s.m * s.n;
    }
    if (has_pass_bias_grad()) {
      partial_offset_ = floats;
      floats += kBiasGradBlocks * s.m;
    }
    workspace_bytes_ = floats * static_cast<std::int64_t>(sizeof(float));
  }

  std::int64_t workspace_bytes() const override { return workspace_bytes_; }
  std::string configuration() const override { return "openblas sgemm"; }
  Status run(const GemmArgs& args, const ExecutionContext& context) const override;

 private:
  bool is_a_transposed() const {
    return p_.shape.layout == GemmLayout::kTN || p_.shape.layout == GemmLayout::kTT;
  }
  bool is_b_transposed() const {
    return p_.shape.layout == GemmLayout::kNT || p_.shape.layout == GemmLayout::kTT;
  }
  bool has_pass_bias_grad() const {
    return p_.epilogue == RunEpilogue::kDReluBgrad || p_.epilogue == RunEpilogue::kDGeluBgrad;
  }
  void run_epilogue(const GemmArgs& args, std::int64_t batch_index, float* d32, std::int64_t ld32,
                    void* d_native, float* workspace) const;
  void reduce_operand_bias_grad(const FloatMatrix& a, const FloatMatrix& b, float* out) const;

  GemmRunProblem p_;
  std::int64_t a_rows_ = 0, a_cols_ = 0, b_rows_ = 0, b_cols_ = 0;
  std::int64_t a_offset_ = -1, b_offset_ = -1, d_offset_ = -1, partial_offset_ = -1;
  std::int64_t workspace_bytes_ = 0;
};

void CpuGemmRun::run_epilogue(const GemmArgs& args, std::int64_t batch_index, float* d32,
                              std::int64_t ld32, void* d_native, float* workspace) const {
  const GemmProblem& s = p_.shape;
  const std::int64_t c_size = static_cast<std::int64_t>(dtype_size_bytes(s.c_dtype));
  const std::int64_t ldc = s.ldc_or_packed();
  std::vector<float> bias32;
  EpiloguePass pass;
  pass.epilogue = p_.epilogue;
  pass.m = s.m;
  pass.c_dtype = s.c_dtype;
  if (epilogue_reads_bias(p_.epilogue)) {
    bias32.resize(static_cast<std::size_t>(s.m));
    for (std::int64_t i = 0; i < s.m; ++i) bias32[i] = load_as_float(args.bias, s.c_dtype, i);
    pass.bias = bias32.data();
  }
  if (epilogue_aux_kind(p_.epilogue) != AuxKind::kNone) {
    pass.aux_ld = effective_aux_ld(p_, args);
    const std::int64_t aux_batch_bytes = p_.aux_bytes(args.aux_ld) / s.batch;
    pass.aux = static_cast<std::uint8_t*>(args.aux) + batch_index * aux_batch_bytes;
  }
  auto* d_bytes = static_cast<std::uint8_t*>(d_native);
  const bool parallel = s.m * s.n >= kParallelMinElements;
  if (!has_pass_bias_grad()) {
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t col = 0; col < s.n; ++col) {
      apply_epilogue_column(pass, col, d32 + col * ld32, d_bytes + col * ldc * c_size);
    }
    return;
  }
  // Bias gradient: fixed column blocks, each summing into its own partial row, then the blocks
  // are added in order (deterministic for any thread count).
  float* partials = workspace + partial_offset_;
  const std::int64_t blocks = std::min<std::int64_t>(kBiasGradBlocks, s.n);
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t block = 0; block < blocks; ++block) {
    EpiloguePass block_pass = pass;
    block_pass.bias_partial = partials + block * s.m;
    std::fill_n(block_pass.bias_partial, s.m, 0.0f);
    const std::int64_t begin = block * s.n / blocks, end = (block + 1) * s.n / blocks;
    for (std::int64_t col = begin; col < end; ++col) {
      apply_epilogue_column(block_pass, col, d32 + col * ld32, d_bytes + col * ldc * c_size);
    }
  }
  auto* bias_grad = static_cast<float*>(args.bias_grad);
#pragma omp parallel for schedule(static) if (s.m * blocks >= kParallelMinElements)
  for (std::int64_t i = 0; i < s.m; ++i) {
    float sum = 0.0f;
    for (std::int64_t block = 0; block < blocks; ++block) sum += partials[block * s.m + i];
    bias_grad[i] = sum;
  }
}

// kBgradA: out[m] = sum_k op(A)[m, k]; kBgradB: out[n] = sum_k op(B)[k, n].
void CpuGemmRun::reduce_operand_bias_grad(const FloatMatrix& a, const FloatMatrix& b,
                                          float* out) const {
  const bool is_a = p_.epilogue == RunEpilogue::kBgradA;
  const FloatMatrix& x = is_a ? a : b;
  // op(X)'s reduced index runs down a stored column when A is transposed / B is not.
  const bool contiguous = is_a ? is_a_transposed() : !is_b_transposed();
  const std::int64_t length = is_a ? p_.shape.m : p_.shape.n;
  const std::int64_t k = p_.shape.k;
  const bool parallel = length * k >= kParallelMinElements;
  if (contiguous) {
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t i = 0; i < length; ++i) {
      const float* column = x.data + i * x.ld;
      float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
      for (std::int64_t kk = 0; kk < k; ++kk) sum += column[kk];
      out[i] = sum;
    }
    return;
  }
  constexpr std::int64_t kChunk = 256;
  const std::int64_t chunks = (length + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const std::int64_t begin = chunk * kChunk, end = std::min(length, begin + kChunk);
    float sums[kChunk] = {};
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const float* row = x.data + kk * x.ld;
      for (std::int64_t i = begin; i < end; ++i) sums[i - begin] += row[i];
    }
    std::copy(sums, sums + (end - begin), out + begin);
  }
}

Status CpuGemmRun::run(const GemmArgs& args, const ExecutionContext& /*context*/) const {
  const GemmProblem& s = p_.shape;
  float* workspace = static_cast<float*>(args.workspace);
  const std::int64_t a_size = static_cast<std::int64_t>(dtype_size_bytes(s.a_dtype));
  const std::int64_t c_size = static_cast<std::int64_t>(dtype_size_bytes(s.c_dtype));
  for (std::int64_t batch_index = 0; batch_index < s.batch; ++batch_index) {
    const auto* a_native =
        static_cast<const std::uint8_t*>(args.a) + batch_index * p_.stride_a_or_packed() * a_size;
    const auto* b_native =
        static_cast<const std::uint8_t*>(args.b) + batch_index * p_.stride_b_or_packed() * a_size;
    void* d_native =
        static_cast<std::uint8_t*>(args.d) + batch_index * p_.stride_c_or_packed() * c_size;
    FloatMatrix a{reinterpret_cast<const float*>(a_native), s.lda_or_packed()};
    FloatMatrix b{reinterpret_cast<const float*>(b_native), s.ldb_or_packed()};
    if (s.a_dtype != DType::kF32) {
      convert_to_float(a_native, s.a_dtype, a_rows_, a_cols_, s.lda_or_packed(),
                       workspace + a_offset_, a_rows_);
      convert_to_float(b_native, s.b_dtype, b_rows_, b_cols_, s.ldb_or_packed(),
                       workspace + b_offset_, b_rows_);
      a = {workspace + a_offset_, a_rows_};
      b = {workspace + b_offset_, b_rows_};
    }
    float* d32 = static_cast<float*>(d_native);
    std::int64_t ld32 = s.ldc_or_packed();
    if (s.c_dtype != DType::kF32) {
      d32 = workspace + d_offset_;
      ld32 = s.m;
      // beta reads C (= D's previous contents) in fp32.
      if (args.beta != 0.0f)
        convert_to_float(d_native, s.c_dtype, s.m, s.n, s.ldc_or_packed(), d32, ld32);
    }
    cblas_sgemm(CblasColMajor, is_a_transposed() ? CblasTrans : CblasNoTrans,
                is_b_transposed() ? CblasTrans : CblasNoTrans, static_cast<blasint>(s.m),
                static_cast<blasint>(s.n), static_cast<blasint>(s.k), args.alpha, a.data,
                static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld), args.beta, d32,
                static_cast<blasint>(ld32));
    if (epilogue_needs_pass(p_.epilogue) || s.c_dtype != DType::kF32) {
      run_epilogue(args, batch_index, d32, ld32, d_native, workspace);
    }
    if (p_.epilogue == RunEpilogue::kBgradA || p_.epilogue == RunEpilogue::kBgradB) {
      reduce_operand_bias_grad(a, b, static_cast<float*>(args.bias_grad));
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<GemmRunBackend>> create_cpu_gemm_run_backend(const GemmRunProblem& problem) {
  const GemmProblem& s = problem.shape;
  for (const std::int64_t value :
       {s.m, s.n, s.k, s.lda_or_packed(), s.ldb_or_packed(), s.ldc_or_packed()}) {
    if (value > INT_MAX) {
      return unsupported("gemm: ", s.describe(), " has a size or leading dimension above ", INT_MAX,
                         " (OpenBLAS takes 32-bit ints)");
    }
  }
  return std::unique_ptr<GemmRunBackend>(std::make_unique<CpuGemmRun>(problem));
}

}  // namespace parity::gemm::detail
