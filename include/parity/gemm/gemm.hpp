// gemm::Gemm: the run API the trainer, the HSTU layer and the bench use. One object per exact
// problem: the configuration is selected once at create() (analytical model on the GPU; OpenBLAS
// on the CPU) and reused by every run(). Column-major, cuBLAS terms (see problem.hpp's legend).
//
// A row-major linear layer Y[B, out] = X[B, in] * W[out, in]^T + bias maps to:
//   forward      TN  M=out N=B K=in   A=W  B=X   D=Y    bias length M, epilogue kBias/kBiasRelu...
//   data grad    NN  M=in  N=B K=out  A=W  B=dY  D=dX   epilogue kDRelu* reads the forward's aux
//   weight grad  NT  M=in  N=out K=B  A=X  B=dY  D=dW   epilogue kBgradB: bias_grad = sum over B of dY
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "parity/core/op.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::gemm {

// Epilogues of the run API (cuBLASLt's CUBLASLT_EPILOGUE_* family). "Aux" writes the auxiliary
// output the backward needs (ReLU: a bit mask or the pre-activation; GELU: the pre-activation) to
// GemmArgs::aux. The backward ones read that aux (dReLU/dGELU) and may also reduce the bias
// gradient (Bgrad); kBgradA / kBgradB only reduce the bias gradient of A's rows / B's columns.
enum class RunEpilogue : std::uint8_t {
  kNone,
  kBias,
  kRelu,
  kBiasRelu,
  kBiasReluAux,
  kGelu,
  kBiasGelu,
  kBiasGeluAux,
  kDRelu,
  kDReluBgrad,
  kDGelu,
  kDGeluBgrad,
  kBgradA,
  kBgradB,
};
std::string_view run_epilogue_name(RunEpilogue epilogue);  // "bias_relu_aux", "drelu_bgrad", ...
Result<RunEpilogue> parse_run_epilogue(std::string_view text);

// What an epilogue reads and writes besides A, B and D (run() checks exactly these arguments).
enum class AuxKind : std::uint8_t {
  kNone,
  kReluMask,           // one bit per element of D: pre-activation > 0 (aux_ld a multiple of 128)
  kGeluPreactivation,  // the pre-activation in c_dtype (aux_ld a multiple of 8)
};
bool epilogue_reads_bias(RunEpilogue epilogue);  // kBias, kBiasRelu*, kBiasGelu*
bool epilogue_writes_aux(RunEpilogue epilogue);  // kBiasReluAux, kBiasGeluAux
bool epilogue_reads_aux(RunEpilogue epilogue);   // kDRelu*, kDGelu*
AuxKind epilogue_aux_kind(RunEpilogue epilogue);  // kNone when the epilogue has no aux

// What a run computes: D = epilogue(alpha * op(A) * op(B) + beta * C), C and D alias.
struct GemmRunProblem {
  GemmProblem shape;  // m, n, k, batch, dtypes, layout, leading dims (shape.epilogue unused)
  RunEpilogue epilogue = RunEpilogue::kNone;
  // Strided batch: element strides between consecutive matrices (0 = packed, ld * cols).
  std::int64_t stride_a = 0;
  std::int64_t stride_b = 0;
  std::int64_t stride_c = 0;
  // fp32 operands: true computes on TF32 tensor cores (GPU), false keeps fp32 FMA.
  bool allow_tf32 = true;
  Status validate() const;  // shape.validate() plus epilogue/batch/stride rules, naming each

  // Element strides with 0 resolved (ld * stored columns of each operand).
  std::int64_t stride_a_or_packed() const;
  std::int64_t stride_b_or_packed() const;
  std::int64_t stride_c_or_packed() const;
  // bias_grad length: M (kDReluBgrad, kDGeluBgrad, kBgradA), N (kBgradB), 0 otherwise.
  std::int64_t bias_grad_length() const;
  // aux_ld that GemmArgs::aux_ld = 0 stands for: M rounded up to 128 (ReLU mask) or 8 (GELU).
  std::int64_t default_aux_ld() const;
  // Bytes the aux buffer spans for all batches (batch stride aux_ld * N elements), given aux_ld
  // (0 = default_aux_ld()); 0 when the epilogue has no aux.
  std::int64_t aux_bytes(std::int64_t aux_ld = 0) const;
};

// Pointers: host memory for kCpu, device memory for kGpu. Vectors are c_dtype unless said.
// The bias is shared by all batches; aux batches are aux_ld * N apart. GPU: a, b, d aligned to the
// problem's alignment class, bias / aux / bias_grad to 16 bytes (run() checks).
struct GemmArgs {
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  const void* bias = nullptr;  // length M: the bias epilogues
  void* aux = nullptr;         // M x N (ld = aux_ld): written by *Aux, read by kDRelu*/kDGelu*
  std::int64_t aux_ld = 0;     // in elements (bits for the ReLU mask); 0 = default_aux_ld()
  void* bias_grad = nullptr;   // fp32: length M (Bgrad of D's rows) or N for kBgradB
  float alpha = 1.0f;
  float beta = 0.0f;
  void* workspace = nullptr;
  std::int64_t workspace_bytes = 0;
};

struct GemmOptions {
  // Catalogue entry the analytical model selects for (GPU); empty = the device the run is on
  // (hw::find_hardware_for_device on its runtime name: "NVIDIA H100 80GB HBM3" -> h100), with the
  // calibration <data>/calibration/<entry>_gemm.json where one exists.
  std::string hardware;
  std::string forced_configuration;  // empty = select; otherwise a configuration text to run
  // GemmChoice::kMeasured: how many of the model's ranking and of cuBLASLt's heuristic ranking
  // (at most kMaxHeuristicCandidates) are timed. A count above the candidate space times every
  // candidate the descriptor accepts: the oracle with the run epilogue (`bench gemm-run`).
  // 8 with distinct tiles: run 91 (H100, dlrm-kaggle) against 4 configurations (docs/gemm_run.md).
  int measured_candidates_per_source = 8;
  // GemmChoice::kMeasured: the model's candidates are its best configurations (false) or the best
  // configuration of each of its best macro tiles (tile_m x tile_n x tile_k) and splits (true): a tile's cluster shapes
  // predict alike and time within ~1% of each other, so distinct tiles spread the timings over
  // more of the kernels the oracle finds fastest. The heuristic's list is unchanged.
  bool measured_distinct_tiles = true;
  // GemmChoice::kMeasured: each candidate timed as the median of runs that each follow an L2
  // flush (true: how the oracle and every benchmark figure time a GEMM, so the choice ranks what
  // they rank) or as the best mean of back-to-back runs on a warm L2 (false: run 92's method,
  // whose pick ran up to 1.13x slower than the oracle's on ~25-100 us GEMMs).
  bool measured_flush_l2 = true;
};
inline constexpr int kMaxHeuristicCandidates = 64;

class Gemm {
 public:
  // Validates, selects the configuration (once), and sizes the workspace. kUnsupported when the
  // device of `context` cannot run the problem (e.g. a GPU context in a CPU-only build).
  static Result<Gemm> create(const GemmRunProblem& problem, const ExecutionContext& context,
                             const GemmOptions& options = {});
  Gemm(Gemm&&) noexcept;
  Gemm& operator=(Gemm&&) noexcept;
  ~Gemm();

  const GemmRunProblem& problem() const;
  std::int64_t workspace_bytes() const;
  // Human-readable chosen configuration ("openblas sgemm", "algo66 tile=256x128 ...").
  std::string configuration() const;
  // Enqueues on context.stream (GPU) or runs to completion (CPU). Checks the arguments the
  // epilogue needs (bias, aux, bias_grad) and the workspace size.
  Status run(const GemmArgs& args, const ExecutionContext& context) const;

  struct Impl;

 private:
  explicit Gemm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace parity::gemm
