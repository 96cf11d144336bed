// Shared pieces of the nn op variants (internal): the GPU placeholder every op lists after its
// CPU variant, the device check CPU variants make, and running the preferred variant.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/op.hpp"

namespace parity::nn::detail {

// Below this many elements of work an OpenMP region costs more than it saves (a fork-join is a
// few microseconds on idle cores and a scheduler time slice on oversubscribed ones), so loops
// run on one thread. The results do not change: every loop's iterations are independent.
inline constexpr std::int64_t kParallelMinElements = std::int64_t{1} << 16;

// Listed so the variant tables already have the GPU slot: refuses with the reason until the
// kernel exists (issue 14: the lead adds the CUDA kernels behind the same Problem/Args).
template <typename Problem, typename Args>
class GpuPendingVariant final : public OpVariant<Problem, Args> {
 public:
  explicit GpuPendingVariant(std::string_view name) : name_(name) {}
  std::string_view name() const override { return name_; }
  Status can_implement(const Problem&, const ExecutionContext& context) const override {
    if (context.device != DeviceKind::kGpu) return unsupported("runs on the GPU only");
    return unsupported("the GPU kernel is not implemented yet in this build");
  }
  Status run(const Problem&, const Args&, void*, const ExecutionContext&) const override {
    return unsupported(name_, ": the GPU kernel is not implemented yet in this build");
  }

 private:
  std::string_view name_;
};

inline Status require_cpu(const ExecutionContext& context) {
  if (context.device != DeviceKind::kCpu) return unsupported("host code: needs a CPU context");
  return Status::ok();
}

// Selects the first variant that applies and runs it; CPU variants need no workspace.
template <typename Problem, typename Args>
Status run_preferred(const std::vector<const OpVariant<Problem, Args>*>& variants,
                     const Problem& problem, const Args& args, const ExecutionContext& context,
                     std::string_view op_name) {
  auto choice = select_variant(variants, problem, context);
  if (!choice.is_ok()) return choice.status().with_context(op_name);
  const auto* variant = choice->variant;
  if (variant->workspace_bytes(problem) != 0) {
    return internal_error(op_name, ": variant ", variant->name(), " needs a workspace");
  }
  return variant->run(problem, args, nullptr, context);
}

}  // namespace parity::nn::detail
