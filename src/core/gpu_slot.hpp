// Internal: the GPU entry of an op's variant list. The CPU library lists it so every op has its GPU
// slot; parity_gpu installs the implementation at start-up (src/backends/cuda/register_backends.cpp).
// Until then — and always in a CPU-only build — it refuses with the reason.
#pragma once

#include <atomic>
#include <string_view>

#include "parity/core/op.hpp"

namespace parity::detail {

template <typename Problem, typename Args>
class GpuSlotVariant final : public OpVariant<Problem, Args> {
 public:
  explicit GpuSlotVariant(std::string_view name) : name_(name) {}
  void install(const OpVariant<Problem, Args>* implementation) { implementation_.store(implementation); }

  std::string_view name() const override { return name_; }
  Status can_implement(const Problem& problem, const ExecutionContext& context) const override {
    if (context.device != DeviceKind::kGpu) return unsupported("runs on the GPU only");
    const auto* implementation = implementation_.load();
    if (implementation == nullptr) return unsupported("this build has no GPU backend");
    return implementation->can_implement(problem, context);
  }
  std::int64_t workspace_bytes(const Problem& problem) const override {
    const auto* implementation = implementation_.load();
    return implementation == nullptr ? 0 : implementation->workspace_bytes(problem);
  }
  Status run(const Problem& problem, const Args& args, void* workspace,
             const ExecutionContext& context) const override {
    const auto* implementation = implementation_.load();
    if (implementation == nullptr) return unsupported(name_, ": this build has no GPU backend");
    return implementation->run(problem, args, workspace, context);
  }

 private:
  std::string_view name_;
  std::atomic<const OpVariant<Problem, Args>*> implementation_{nullptr};
};

}  // namespace parity::detail
