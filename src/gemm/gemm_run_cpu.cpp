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
// Columns of D (and of op(B)) per panel when operands or D are converted: bounds the workspace to
// (K + M) * kPanelColumns floats (plus M * K for A) however large N (the batch) is.
constexpr std::int64_t kPanelColumns = 2048;
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

// kBgradA / kBgradB: out[i] = sum_k op(X)[i, k] over `length` entries of x (op(A)'s rows or a
// panel of op(B)'s columns). `contiguous`: the K entries of one i are adjacent in memory.
void reduce_operand(const FloatMatrix& x, bool contiguous, std::int64_t length, std::int64_t k,
                    float* out) {
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

class CpuGemmRun final : public GemmRunBackend {
 public:
  explicit CpuGemmRun(const GemmRunProblem& problem) : p_(problem) {
    const GemmProblem& s = p_.shape;
    const bool converts = s.a_dtype != DType::kF32 || s.c_dtype != DType::kF32;
    panel_columns_ = converts ? std::min(s.n, kPanelColumns) : s.n;
    // Workspace: [A fp32 | B panel fp32 | D panel fp32 | bias-gradient partials], each only if
    // used; the panels bound it to (K + M) * kPanelColumns floats however large N is.
    std::int64_t floats = 0;
    if (s.a_dtype != DType::kF32) {
      a_offset_ = floats;
      floats += s.m * s.k;
      b_offset_ = floats;
      floats += s.k * panel_columns_;
    }
    if (s.c_dtype != DType::kF32) {
      d_offset_ = floats;
      floats += s.m * panel_columns_;
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
  // First column of bias-gradient block `block` (fixed blocks over all N columns).
  std::int64_t block_begin(std::int64_t block, std::int64_t blocks) const {
    return block * p_.shape.n / blocks;
  }
  EpiloguePass make_pass(const GemmArgs& args, std::int64_t batch_index,
                         std::vector<float>* bias32) const;
  void epilogue_panel(const EpiloguePass& pass, std::int64_t first_col, std::int64_t cols,
                      float* d32, std::int64_t ld32, std::uint8_t* d_native, float* partials) const;
  void panel_gemm(const GemmArgs& args, const FloatMatrix& a, const std::uint8_t* b_native,
                  std::uint8_t* d_native, std::int64_t first_col, std::int64_t cols,
                  const EpiloguePass& pass, float* workspace) const;

  GemmRunProblem p_;
  std::int64_t panel_columns_ = 0;
  std::int64_t a_offset_ = -1, b_offset_ = -1, d_offset_ = -1, partial_offset_ = -1;
  std::int64_t workspace_bytes_ = 0;
};

EpiloguePass CpuGemmRun::make_pass(const GemmArgs& args, std::int64_t batch_index,
                                   std::vector<float>* bias32) const {
  const GemmProblem& s = p_.shape;
  EpiloguePass pass;
  pass.epilogue = p_.epilogue;
  pass.m = s.m;
  pass.c_dtype = s.c_dtype;
  if (epilogue_reads_bias(p_.epilogue)) {
    bias32->resize(static_cast<std::size_t>(s.m));
    for (std::int64_t i = 0; i < s.m; ++i) (*bias32)[i] = load_as_float(args.bias, s.c_dtype, i);
    pass.bias = bias32->data();
  }
  if (epilogue_aux_kind(p_.epilogue) != AuxKind::kNone) {
    pass.aux_ld = effective_aux_ld(p_, args);
    const std::int64_t aux_batch_bytes = p_.aux_bytes(args.aux_ld) / s.batch;
    pass.aux = static_cast<std::uint8_t*>(args.aux) + batch_index * aux_batch_bytes;
  }
  return pass;
}

// Columns [first_col, first_col + cols) of D: d32 / d_native point at the first of them.
void CpuGemmRun::epilogue_panel(const EpiloguePass& pass, std::int64_t first_col, std::int64_t cols,
                                float* d32, std::int64_t ld32, std::uint8_t* d_native,
                                float* partials) const {
  const GemmProblem& s = p_.shape;
  const std::int64_t column_bytes =
      s.ldc_or_packed() * static_cast<std::int64_t>(dtype_size_bytes(s.c_dtype));
  const bool parallel = s.m * cols >= kParallelMinElements;
  if (partials == nullptr) {
#pragma omp parallel for schedule(static) if (parallel)
    for (std::int64_t col = 0; col < cols; ++col) {
      apply_epilogue_column(pass, first_col + col, d32 + col * ld32, d_native + col * column_bytes);
    }
    return;
  }
  // Bias gradient: each fixed block sums its columns in order into its own partial row (a
  // block may span panels, which run in order), so the result does not depend on threads.
  const std::int64_t blocks = std::min<std::int64_t>(kBiasGradBlocks, s.n);
  std::int64_t first_block = first_col * blocks / s.n;
  while (block_begin(first_block + 1, blocks) <= first_col) ++first_block;
  const std::int64_t end_col = first_col + cols;
  std::int64_t last_block = first_block;
  while (last_block + 1 < blocks && block_begin(last_block + 1, blocks) < end_col) ++last_block;
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t block = first_block; block <= last_block; ++block) {
    EpiloguePass block_pass = pass;
    block_pass.bias_partial = partials + block * s.m;
    const std::int64_t begin = std::max(block_begin(block, blocks), first_col);
    const std::int64_t end = std::min(block_begin(block + 1, blocks), end_col);
    for (std::int64_t col = begin; col < end; ++col) {
      const std::int64_t local = col - first_col;
      apply_epilogue_column(block_pass, col, d32 + local * ld32, d_native + local * column_bytes);
    }
  }
}

// One panel of columns: B's panel as fp32, sgemm into D's panel (or its fp32 copy), epilogue.
void CpuGemmRun::panel_gemm(const GemmArgs& args, const FloatMatrix& a,
                            const std::uint8_t* b_native, std::uint8_t* d_native,
                            std::int64_t first_col, std::int64_t cols, const EpiloguePass& pass,
                            float* workspace) const {
  const GemmProblem& s = p_.shape;
  const std::int64_t in_size = static_cast<std::int64_t>(dtype_size_bytes(s.a_dtype));
  const std::int64_t c_size = static_cast<std::int64_t>(dtype_size_bytes(s.c_dtype));
  const std::int64_t ldb = s.ldb_or_packed(), ldc = s.ldc_or_packed();
  // op(B)[:, first_col..]: rows first_col.. of a transposed B, columns first_col.. otherwise.
  const std::uint8_t* b_panel =
      b_native + (is_b_transposed() ? first_col : first_col * ldb) * in_size;
  FloatMatrix b{reinterpret_cast<const float*>(b_panel), ldb};
  if (s.a_dtype != DType::kF32) {
    const std::int64_t rows = is_b_transposed() ? cols : s.k;
    convert_to_float(b_panel, s.b_dtype, rows, is_b_transposed() ? s.k : cols, ldb,
                     workspace + b_offset_, rows);
    b = {workspace + b_offset_, rows};
  }
  std::uint8_t* d_panel = d_native + first_col * ldc * c_size;
  float* d32 = reinterpret_cast<float*>(d_panel);
  std::int64_t ld32 = ldc;
  if (s.c_dtype != DType::kF32) {
    d32 = workspace + d_offset_;
    ld32 = s.m;
    // beta reads C (= D's previous contents) in fp32.
    if (args.beta != 0.0f) convert_to_float(d_panel, s.c_dtype, s.m, cols, ldc, d32, ld32);
  }
  cblas_sgemm(CblasColMajor, is_a_transposed() ? CblasTrans : CblasNoTrans,
              is_b_transposed() ? CblasTrans : CblasNoTrans, static_cast<blasint>(s.m),
              static_cast<blasint>(cols), static_cast<blasint>(s.k), args.alpha, a.data,
              static_cast<blasint>(a.ld), b.data, static_cast<blasint>(b.ld), args.beta, d32,
              static_cast<blasint>(ld32));
  if (epilogue_needs_pass(p_.epilogue) || s.c_dtype != DType::kF32) {
    float* partials = has_pass_bias_grad() ? workspace + partial_offset_ : nullptr;
    epilogue_panel(pass, first_col, cols, d32, ld32, d_panel, partials);
  }
  if (p_.epilogue == RunEpilogue::kBgradB) {
    reduce_operand(b, !is_b_transposed(), cols, s.k,
                   static_cast<float*>(args.bias_grad) + first_col);
  }
}

Status CpuGemmRun::run(const GemmArgs& args, const ExecutionContext& /*context*/) const {
  const GemmProblem& s = p_.shape;
  float* workspace = static_cast<float*>(args.workspace);
  const std::int64_t in_size = static_cast<std::int64_t>(dtype_size_bytes(s.a_dtype));
  const std::int64_t c_size = static_cast<std::int64_t>(dtype_size_bytes(s.c_dtype));
  const std::int64_t a_rows = is_a_transposed() ? s.k : s.m, a_cols = is_a_transposed() ? s.m : s.k;
  std::vector<float> bias32;
  for (std::int64_t batch_index = 0; batch_index < s.batch; ++batch_index) {
    const auto* a_native =
        static_cast<const std::uint8_t*>(args.a) + batch_index * p_.stride_a_or_packed() * in_size;
    const auto* b_native =
        static_cast<const std::uint8_t*>(args.b) + batch_index * p_.stride_b_or_packed() * in_size;
    auto* d_native =
        static_cast<std::uint8_t*>(args.d) + batch_index * p_.stride_c_or_packed() * c_size;
    FloatMatrix a{reinterpret_cast<const float*>(a_native), s.lda_or_packed()};
    if (s.a_dtype != DType::kF32) {
      convert_to_float(a_native, s.a_dtype, a_rows, a_cols, s.lda_or_packed(),
                       workspace + a_offset_, a_rows);
      a = {workspace + a_offset_, a_rows};
    }
    if (p_.epilogue == RunEpilogue::kBgradA) {
      reduce_operand(a, is_a_transposed(), s.m, s.k, static_cast<float*>(args.bias_grad));
    }
    const EpiloguePass pass = make_pass(args, batch_index, &bias32);
    if (has_pass_bias_grad()) std::fill_n(workspace + partial_offset_, kBiasGradBlocks * s.m, 0.0f);
    for (std::int64_t first_col = 0; first_col < s.n; first_col += panel_columns_) {
      const std::int64_t cols = std::min(panel_columns_, s.n - first_col);
      panel_gemm(args, a, b_native, d_native, first_col, cols, pass, workspace);
    }
    if (has_pass_bias_grad()) {
      const std::int64_t blocks = std::min<std::int64_t>(kBiasGradBlocks, s.n);
      const float* partials = workspace + partial_offset_;
      auto* bias_grad = static_cast<float*>(args.bias_grad);
#pragma omp parallel for schedule(static) if (s.m * blocks >= kParallelMinElements)
      for (std::int64_t i = 0; i < s.m; ++i) {
        float sum = 0.0f;
        for (std::int64_t block = 0; block < blocks; ++block) sum += partials[block * s.m + i];
        bias_grad[i] = sum;
      }
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
