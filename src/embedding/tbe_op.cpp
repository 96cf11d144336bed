// TBE op variants: the CPU ones wrap tbe_cpu.hpp; the GPU slots are filled by parity_gpu.
#include "parity/embedding/tbe_op.hpp"

#include "embedding/tbe_gpu_slots.hpp"
#include "parity/embedding/tbe_cpu.hpp"

namespace parity::embedding {
namespace {

Status require_cpu(const ExecutionContext& context) {
  if (context.device != DeviceKind::kCpu) return unsupported("host code: needs a CPU context");
  return Status::ok();
}

class TbeForwardCpu final : public TbeForwardVariant {
 public:
  std::string_view name() const override { return "tbe_forward_cpu_openmp"; }
  Status can_implement(const TbeProblem&, const ExecutionContext& context) const override {
    return require_cpu(context);
  }
  Status run(const TbeProblem& problem, const TbeForwardArgs& args, void*, const ExecutionContext&) const override {
    return cpu::tbe_forward(problem, args.weights, args.batch, args.output);
  }
};

class TbeBackwardCpu final : public TbeBackwardVariant {
 public:
  std::string_view name() const override { return "tbe_backward_fused_cpu_openmp"; }
  Status can_implement(const TbeProblem&, const ExecutionContext& context) const override {
    return require_cpu(context);
  }
  Status run(const TbeProblem& problem, const TbeBackwardArgs& args, void*, const ExecutionContext&) const override {
    return cpu::tbe_backward_fused(problem, args.optimizer, args.weights, args.state1, args.state2, args.batch,
                                   args.grad_output);
  }
};

// The chosen variant runs with no caller workspace: GPU variants own theirs.
template <typename Args>
Status run_first(const std::vector<const OpVariant<TbeProblem, Args>*>& variants, const TbeProblem& problem,
                 const Args& args, const ExecutionContext& context, const char* op_name) {
  auto choice = select_variant(variants, problem, context);
  if (!choice.is_ok()) return choice.status().with_context(op_name);
  return choice->variant->run(problem, args, nullptr, context).with_context(op_name);
}

}  // namespace

namespace detail {
parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_warp_tile_slot() {
  static parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs> slot("tbe_forward_gpu_warp_tile");
  return slot;
}
parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_narrow_rows_slot() {
  static parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs> slot("tbe_forward_gpu_narrow_rows");
  return slot;
}
parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_fitted_groups_slot() {
  static parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs> slot("tbe_forward_gpu_fitted_groups");
  return slot;
}
parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_slot() {
  static parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs> slot("tbe_forward_gpu");
  return slot;
}
parity::detail::GpuSlotVariant<TbeProblem, TbeBackwardArgs>& tbe_backward_fused_gpu_narrow_rows_slot() {
  static parity::detail::GpuSlotVariant<TbeProblem, TbeBackwardArgs> slot("tbe_backward_fused_gpu_narrow_rows");
  return slot;
}
parity::detail::GpuSlotVariant<TbeProblem, TbeBackwardArgs>& tbe_backward_fused_gpu_slot() {
  static parity::detail::GpuSlotVariant<TbeProblem, TbeBackwardArgs> slot("tbe_backward_fused_gpu");
  return slot;
}
}  // namespace detail

const std::vector<const TbeForwardVariant*>& tbe_forward_variants() {
  static const TbeForwardCpu cpu;
  // The order of gpu::select_forward_kernel: warp tiles (can_implement: mixed_wide_short_bags_forward_fits,
  // wide_one_hot_forward_fits, short_bags_forward_fits or many_bags_forward_fits),
  // narrow rows (narrow_rows_forward_fits), fitted groups (fitted_groups_forward_fits), then group
  // per bag for every shape.
  static const std::vector<const TbeForwardVariant*> variants = {
      &cpu, &detail::tbe_forward_gpu_warp_tile_slot(), &detail::tbe_forward_gpu_narrow_rows_slot(),
      &detail::tbe_forward_gpu_fitted_groups_slot(), &detail::tbe_forward_gpu_slot()};
  return variants;
}

const std::vector<const TbeBackwardVariant*>& tbe_backward_fused_variants() {
  static const TbeBackwardCpu cpu;
  static const std::vector<const TbeBackwardVariant*> variants = {
      &cpu, &detail::tbe_backward_fused_gpu_narrow_rows_slot(), &detail::tbe_backward_fused_gpu_slot()};
  return variants;
}

Status tbe_forward(const TbeProblem& problem, const TbeForwardArgs& args, const ExecutionContext& context) {
  return run_first(tbe_forward_variants(), problem, args, context, "tbe_forward");
}

Status tbe_backward_fused(const TbeProblem& problem, const TbeBackwardArgs& args, const ExecutionContext& context) {
  return run_first(tbe_backward_fused_variants(), problem, args, context, "tbe_backward_fused");
}

}  // namespace parity::embedding
