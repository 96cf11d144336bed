// The op pattern every op follows (GEMM, TBE, the dense layers, interaction, loss, attention,
// collectives). See docs/architecture.md, "How to add an op".
//
//   struct XProblem { ...sizes, dtypes...; Status validate() const; };   // names param + value
//   struct XArgs    { ...pointers (host for kCpu, device for kGpu)... };
//   class  XVariant : public OpVariant<XProblem, XArgs> { name, can_implement, workspace_bytes, run };
//   Status x_reference(const XProblem&, fp64 views...);                   // src/reference, plain loops
//
// A backend lists its variants per op; `select_variant` takes the first that can implement the
// problem (or the one forced by name) and says why each other one was skipped. CPU and GPU
// variants share the Problem and Args types, so callers (trainer, bench, bindings) never branch on
// the device except through the ExecutionContext.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"

namespace parity {

enum class DeviceKind : std::uint8_t { kCpu, kGpu };

std::string_view device_kind_name(DeviceKind kind);         // "cpu", "gpu"
Result<DeviceKind> parse_device_kind(std::string_view text);  // cpu, gpu, cuda (= gpu)

// How gemm::Gemm picks a GPU configuration (docs/gemm_run.md). kModel: the analytical model's
// ranking; kVendorHeuristic: cuBLASLt's heuristic top-1; kMeasured: the model's and the
// heuristic's best few timed once when the Gemm is created, the fastest kept (costs milliseconds
// per problem); kAuto: the model where rows are 16-byte aligned (TMA kernels), the heuristic
// below that, where the model ranks worst. fp32 without TF32 always takes the heuristic.
enum class GemmChoice : std::uint8_t { kAuto, kModel, kVendorHeuristic, kMeasured };

std::string_view gemm_choice_name(GemmChoice choice);         // "auto", "model", "heuristic", "measured"
Result<GemmChoice> parse_gemm_choice(std::string_view text);  // the same names

// Where and how an op runs. `stream` is the native stream (cudaStream_t / hipStream_t) as void*,
// nullptr = default stream; ignored on the CPU. `deterministic` asks for run-to-run bitwise equal
// results (a variant that cannot give them must refuse in can_implement).
struct ExecutionContext {
  DeviceKind device = DeviceKind::kCpu;
  void* stream = nullptr;
  bool deterministic = false;
  GemmChoice gemm_choice = GemmChoice::kAuto;
};

template <typename Problem, typename Args>
class OpVariant {
 public:
  virtual ~OpVariant() = default;
  virtual std::string_view name() const = 0;
  // ok, or kUnsupported with the reason this variant does not apply (device, dtype, shape...).
  virtual Status can_implement(const Problem& problem, const ExecutionContext& context) const = 0;
  virtual std::int64_t workspace_bytes(const Problem& /*problem*/) const { return 0; }
  // Asynchronous on context.stream for GPU variants; `workspace` has workspace_bytes(problem).
  virtual Status run(const Problem& problem, const Args& args, void* workspace,
                     const ExecutionContext& context) const = 0;
};

// The chosen variant, and one line per variant that was skipped ("name: reason").
template <typename Problem, typename Args>
struct VariantChoice {
  const OpVariant<Problem, Args>* variant = nullptr;
  std::vector<std::string> skipped;
};

// Validates the problem, then returns the first variant (in the backend's order of preference)
// whose can_implement passes, or the one named `forced_name` (which must then pass). kUnsupported
// lists every reason when none applies.
template <typename Problem, typename Args>
Result<VariantChoice<Problem, Args>> select_variant(
    const std::vector<const OpVariant<Problem, Args>*>& variants, const Problem& problem,
    const ExecutionContext& context, std::string_view forced_name = {}) {
  PARITY_RETURN_IF_ERROR(problem.validate());
  VariantChoice<Problem, Args> choice;
  bool name_found = forced_name.empty();
  for (const auto* variant : variants) {
    if (!forced_name.empty() && variant->name() != forced_name) continue;
    name_found = true;
    Status status = variant->can_implement(problem, context);
    if (status.is_ok()) {
      choice.variant = variant;
      return choice;
    }
    choice.skipped.push_back(std::string(variant->name()) + ": " + status.message());
  }
  if (!name_found) return invalid_argument("variant: no variant named '", forced_name, "'");
  std::string reasons;
  for (const auto& line : choice.skipped) reasons += (reasons.empty() ? "" : "; ") + line;
  return unsupported("no variant can run this problem (", reasons, ")");
}

}  // namespace parity
