// gemm::Gemm: problem and argument checks, epilogue names, and the dispatch to the device backend
// (CPU: gemm_run_cpu.cpp; GPU: registered by parity_gpu, src/backends/cuda/gemm/gemm_run_cuda.cpp).
#include <array>
#include <atomic>
#include <cctype>
#include <string>
#include <utility>

#include "gemm/gemm_run_backend.hpp"
#include "parity/gemm/gemm.hpp"

namespace parity::gemm {
namespace {

struct EpilogueInfo {
  RunEpilogue epilogue;
  std::string_view name;
};
constexpr std::array<EpilogueInfo, 14> kEpilogues = {{
    {RunEpilogue::kNone, "none"},
    {RunEpilogue::kBias, "bias"},
    {RunEpilogue::kRelu, "relu"},
    {RunEpilogue::kBiasRelu, "bias_relu"},
    {RunEpilogue::kBiasReluAux, "bias_relu_aux"},
    {RunEpilogue::kGelu, "gelu"},
    {RunEpilogue::kBiasGelu, "bias_gelu"},
    {RunEpilogue::kBiasGeluAux, "bias_gelu_aux"},
    {RunEpilogue::kDRelu, "drelu"},
    {RunEpilogue::kDReluBgrad, "drelu_bgrad"},
    {RunEpilogue::kDGelu, "dgelu"},
    {RunEpilogue::kDGeluBgrad, "dgelu_bgrad"},
    {RunEpilogue::kBgradA, "bgrada"},
    {RunEpilogue::kBgradB, "bgradb"},
}};

bool a_transposed(GemmLayout layout) {
  return layout == GemmLayout::kTN || layout == GemmLayout::kTT;
}
bool b_transposed(GemmLayout layout) {
  return layout == GemmLayout::kNT || layout == GemmLayout::kTT;
}
std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}
// Elements per ld step of the aux buffer: the ReLU mask packs 8 per byte.
std::int64_t aux_ld_multiple(AuxKind kind) { return kind == AuxKind::kReluMask ? 128 : 8; }

std::atomic<detail::GemmRunBackendFactory> g_gpu_factory{nullptr};

}  // namespace

std::string_view run_epilogue_name(RunEpilogue epilogue) {
  for (const auto& info : kEpilogues) {
    if (info.epilogue == epilogue) return info.name;
  }
  return "?";
}

Result<RunEpilogue> parse_run_epilogue(std::string_view text) {
  std::string lower(text);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string expected;
  for (const auto& info : kEpilogues) {
    if (info.name == lower) return info.epilogue;
    expected += (expected.empty() ? "" : ", ") + std::string(info.name);
  }
  return invalid_argument("epilogue: unknown value '", text, "' (expected one of ", expected, ")");
}

bool epilogue_reads_bias(RunEpilogue e) {
  return e == RunEpilogue::kBias || e == RunEpilogue::kBiasRelu || e == RunEpilogue::kBiasReluAux ||
         e == RunEpilogue::kBiasGelu || e == RunEpilogue::kBiasGeluAux;
}
bool epilogue_writes_aux(RunEpilogue e) {
  return e == RunEpilogue::kBiasReluAux || e == RunEpilogue::kBiasGeluAux;
}
bool epilogue_reads_aux(RunEpilogue e) {
  return e == RunEpilogue::kDRelu || e == RunEpilogue::kDReluBgrad || e == RunEpilogue::kDGelu ||
         e == RunEpilogue::kDGeluBgrad;
}
AuxKind epilogue_aux_kind(RunEpilogue e) {
  switch (e) {
    case RunEpilogue::kBiasReluAux:
    case RunEpilogue::kDRelu:
    case RunEpilogue::kDReluBgrad:
      return AuxKind::kReluMask;
    case RunEpilogue::kBiasGeluAux:
    case RunEpilogue::kDGelu:
    case RunEpilogue::kDGeluBgrad:
      return AuxKind::kGeluPreactivation;
    default:
      return AuxKind::kNone;
  }
}

std::int64_t GemmRunProblem::stride_a_or_packed() const {
  return stride_a != 0 ? stride_a
                       : shape.lda_or_packed() * (a_transposed(shape.layout) ? shape.m : shape.k);
}
std::int64_t GemmRunProblem::stride_b_or_packed() const {
  return stride_b != 0 ? stride_b
                       : shape.ldb_or_packed() * (b_transposed(shape.layout) ? shape.k : shape.n);
}
std::int64_t GemmRunProblem::stride_c_or_packed() const {
  return stride_c != 0 ? stride_c : shape.ldc_or_packed() * shape.n;
}

std::int64_t GemmRunProblem::bias_grad_length() const {
  switch (epilogue) {
    case RunEpilogue::kDReluBgrad:
    case RunEpilogue::kDGeluBgrad:
    case RunEpilogue::kBgradA:
      return shape.m;
    case RunEpilogue::kBgradB:
      return shape.n;
    default:
      return 0;
  }
}

std::int64_t GemmRunProblem::default_aux_ld() const {
  const AuxKind kind = epilogue_aux_kind(epilogue);
  return kind == AuxKind::kNone ? 0 : round_up(shape.m, aux_ld_multiple(kind));
}

std::int64_t GemmRunProblem::aux_bytes(std::int64_t aux_ld) const {
  const AuxKind kind = epilogue_aux_kind(epilogue);
  if (kind == AuxKind::kNone) return 0;
  const std::int64_t ld = aux_ld != 0 ? aux_ld : default_aux_ld();
  const std::int64_t elements = ld * shape.n * shape.batch;
  return kind == AuxKind::kReluMask
             ? elements / 8
             : elements * static_cast<std::int64_t>(dtype_size_bytes(shape.c_dtype));
}

Status GemmRunProblem::validate() const {
  PARITY_RETURN_IF_ERROR(shape.validate());
  PARITY_CHECK_ARG(shape.c_dtype == shape.a_dtype || shape.c_dtype == DType::kF32,
                   "gemm: c_dtype=", gemm_dtype_name(shape.c_dtype),
                   " with a_dtype=", gemm_dtype_name(shape.a_dtype),
                   " is unsupported (D is the input type or fp32)");
  PARITY_CHECK_ARG(run_epilogue_name(epilogue) != "?",
                   "gemm: epilogue=", static_cast<int>(epilogue), " is not a RunEpilogue value");
  const struct {
    const char* name;
    std::int64_t stride;
    std::int64_t matrix_elements;
    const char* matrix;
  } strides[] = {
      {"stride_a", stride_a,
       shape.lda_or_packed() * (a_transposed(shape.layout) ? shape.m : shape.k), "lda * columns"},
      {"stride_b", stride_b,
       shape.ldb_or_packed() * (b_transposed(shape.layout) ? shape.k : shape.n), "ldb * columns"},
      {"stride_c", stride_c, shape.ldc_or_packed() * shape.n, "ldc * n"},
  };
  for (const auto& s : strides) {
    PARITY_CHECK_ARG(s.stride >= 0, "gemm: ", s.name, "=", s.stride, " must be >= 0 (0 = packed)");
    PARITY_CHECK_ARG(shape.batch == 1 || s.stride == 0 || s.stride >= s.matrix_elements,
                     "gemm: ", s.name, "=", s.stride, " is smaller than one matrix (", s.matrix,
                     " = ", s.matrix_elements, " elements): batches would overlap");
  }
  PARITY_CHECK_ARG(bias_grad_length() == 0 || shape.batch == 1, "gemm: epilogue ",
                   run_epilogue_name(epilogue), " reduces a bias gradient and needs batch=1 (got ",
                   shape.batch, ")");
  return Status::ok();
}

namespace detail {

void register_gpu_gemm_run_factory(GemmRunBackendFactory factory) { g_gpu_factory.store(factory); }

Result<std::unique_ptr<GemmRunBackend>> create_gpu_gemm_run_backend(const GemmRunProblem& problem,
                                                                    const ExecutionContext& context,
                                                                    const GemmOptions& options) {
  const GemmRunBackendFactory factory = g_gpu_factory.load();
  if (factory == nullptr) {
    return unsupported("gemm: this build has no GPU backend (device=gpu needs parity_gpu)");
  }
  return factory(problem, context, options);
}

std::int64_t effective_aux_ld(const GemmRunProblem& problem, const GemmArgs& args) {
  return args.aux_ld != 0 ? args.aux_ld : problem.default_aux_ld();
}

}  // namespace detail

struct Gemm::Impl {
  GemmRunProblem problem;
  std::unique_ptr<detail::GemmRunBackend> backend;
  std::int64_t workspace_bytes = 0;
  DeviceKind device = DeviceKind::kCpu;
};

Gemm::Gemm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Gemm::Gemm(Gemm&&) noexcept = default;
Gemm& Gemm::operator=(Gemm&&) noexcept = default;
Gemm::~Gemm() = default;

Result<Gemm> Gemm::create(const GemmRunProblem& problem, const ExecutionContext& context,
                          const GemmOptions& options) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  auto impl = std::make_unique<Impl>();
  impl->problem = problem;
  impl->device = context.device;
  if (context.device == DeviceKind::kCpu) {
    if (!options.forced_configuration.empty() && options.forced_configuration != "openblas sgemm") {
      return invalid_argument("forced_configuration: '", options.forced_configuration,
                              "' is not a CPU configuration (the CPU has 'openblas sgemm')");
    }
    PARITY_ASSIGN_OR_RETURN(impl->backend, detail::create_cpu_gemm_run_backend(problem));
  } else {
    PARITY_ASSIGN_OR_RETURN(impl->backend,
                            detail::create_gpu_gemm_run_backend(problem, context, options));
  }
  impl->workspace_bytes = impl->backend->workspace_bytes();
  return Gemm(std::move(impl));
}

const GemmRunProblem& Gemm::problem() const { return impl_->problem; }
std::int64_t Gemm::workspace_bytes() const { return impl_->workspace_bytes; }
std::string Gemm::configuration() const { return impl_->backend->configuration(); }

Status Gemm::run(const GemmArgs& args, const ExecutionContext& context) const {
  if (!impl_) return invalid_argument("gemm run: this Gemm was moved from");
  const GemmRunProblem& p = impl_->problem;
  const std::string_view epilogue = run_epilogue_name(p.epilogue);
  PARITY_CHECK_ARG(args.a != nullptr, "gemm run: a is null");
  PARITY_CHECK_ARG(args.b != nullptr, "gemm run: b is null");
  PARITY_CHECK_ARG(args.d != nullptr, "gemm run: d is null");
  PARITY_CHECK_ARG(!epilogue_reads_bias(p.epilogue) || args.bias != nullptr,
                   "gemm run: bias is null but epilogue ", epilogue,
                   " needs a bias vector of length m=", p.shape.m);
  const AuxKind aux_kind = epilogue_aux_kind(p.epilogue);
  if (aux_kind != AuxKind::kNone) {
    PARITY_CHECK_ARG(args.aux != nullptr, "gemm run: aux is null but epilogue ", epilogue,
                     epilogue_writes_aux(p.epilogue) ? " writes" : " reads", " an aux buffer (",
                     p.aux_bytes(args.aux_ld), " bytes)");
    const std::int64_t aux_ld = detail::effective_aux_ld(p, args);
    const std::int64_t multiple = aux_ld_multiple(aux_kind);
    PARITY_CHECK_ARG(aux_ld >= p.shape.m && aux_ld % multiple == 0, "gemm run: aux_ld=", aux_ld,
                     " must be >= m=", p.shape.m, " and a multiple of ", multiple, " for epilogue ",
                     epilogue, " (0 = ", p.default_aux_ld(), ")");
  } else {
    PARITY_CHECK_ARG(args.aux_ld >= 0, "gemm run: aux_ld=", args.aux_ld, " must be >= 0");
  }
  PARITY_CHECK_ARG(p.bias_grad_length() == 0 || args.bias_grad != nullptr,
                   "gemm run: bias_grad is null but epilogue ", epilogue,
                   " writes a bias gradient of length ", p.bias_grad_length(), " (fp32)");
  // Whether cuBLASLt scales the reduced operand by alpha is not documented: only alpha = 1 is
  // defined for the operand bias gradients.
  PARITY_CHECK_ARG(args.alpha == 1.0f ||
                       (p.epilogue != RunEpilogue::kBgradA && p.epilogue != RunEpilogue::kBgradB),
                   "gemm run: alpha=", args.alpha, " with epilogue ", epilogue,
                   " (the operand bias gradient is defined for alpha = 1 only)");
  PARITY_CHECK_ARG(args.workspace_bytes >= impl_->workspace_bytes,
                   "gemm run: workspace_bytes=", args.workspace_bytes, " is smaller than the ",
                   impl_->workspace_bytes, " bytes this problem needs (Gemm::workspace_bytes())");
  PARITY_CHECK_ARG(impl_->workspace_bytes == 0 || args.workspace != nullptr,
                   "gemm run: workspace is null but this problem needs ", impl_->workspace_bytes,
                   " bytes");
  PARITY_CHECK_ARG(context.device == impl_->device,
                   "gemm run: context.device=", device_kind_name(context.device),
                   " differs from the device this Gemm was "
                   "created for (",
                   device_kind_name(impl_->device), ")");
  return impl_->backend->run(args, context);
}

}  // namespace parity::gemm
