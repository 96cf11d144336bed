// Shared pieces of the nn op variants (internal): the device check CPU variants make, and running
// the preferred variant. The GPU slots are in gpu_slots.hpp.
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
