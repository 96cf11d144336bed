// GPU implementations of the TBE op's variants (include/parity/embedding/tbe_op.hpp), installed
// into the slots of src/embedding/tbe_gpu_slots.hpp by register_backends. They keep the device
// copy of each layout they have seen and one backward workspace grown to the largest batch.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/cuda/register_backends.hpp"
#include "embedding/tbe_gpu_slots.hpp"
#include "parity/embedding/tbe_gpu.hpp"

namespace parity::embedding::gpu_variants {
namespace {

std::string layout_key(const TbeLayout& layout) {
  std::string key;
  for (const auto& table : layout.tables()) key += std::to_string(table.num_rows) + "x" + std::to_string(table.dim) + ";";
  key += "|";
  for (int t : layout.table_of_feature()) key += std::to_string(t) + ",";
  return key;
}

// Device layouts by content, and the backward workspace; shared by both variants.
class GpuTbeState {
 public:
  Result<const gpu::DeviceTbeLayout*> layout(const TbeLayout& layout) {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string key = layout_key(layout);
    auto it = layouts_.find(key);
    if (it != layouts_.end()) return it->second.get();
    PARITY_ASSIGN_OR_RETURN(gpu::DeviceTbeLayout device_layout, gpu::DeviceTbeLayout::create(layout));
    auto owned = std::make_unique<gpu::DeviceTbeLayout>(std::move(device_layout));
    const gpu::DeviceTbeLayout* pointer = owned.get();
    layouts_.emplace(key, std::move(owned));
    return pointer;
  }
  Result<void*> workspace(std::int64_t size_bytes, gpu::StreamHandle stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (static_cast<std::size_t>(size_bytes) > workspace_.size_bytes()) {
      PARITY_RETURN_IF_ERROR(parity::gpu::synchronize());  // the old one may still be in use
      (void)stream;
      PARITY_ASSIGN_OR_RETURN(workspace_, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(size_bytes)));
    }
    return workspace_.data();
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<gpu::DeviceTbeLayout>> layouts_;
  parity::gpu::DeviceBuffer workspace_;
};

GpuTbeState& state() {
  static GpuTbeState instance;
  return instance;
}

Status require_gpu(const ExecutionContext& context) {
  if (context.device != DeviceKind::kGpu) return unsupported("runs on the GPU only");
  return Status::ok();
}

gpu::DeviceBatch device_batch(const TbeBatchView& view) {
  return gpu::DeviceBatch{view.indices, view.offsets, view.per_sample_weights};
}

// Group per bag: every shape. Warp tiles, narrow rows and fitted groups: their can_implement is their rule
// (the pieces of gpu::select_forward_kernel, so the op picks what kAuto picks). Fitted groups
// with 16-bit weights also need a 16-byte aligned weights pointer (every DeviceBuffer is).
class TbeForwardGpu final : public TbeForwardVariant {
 public:
  TbeForwardGpu(std::string_view name, gpu::ForwardKernel kernel) : name_(name), kernel_(kernel) {}
  std::string_view name() const override { return name_; }
  Status can_implement(const TbeProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    if (kernel_ == gpu::ForwardKernel::kWarpTileOneHot) {
      if (gpu::wide_one_hot_forward_fits(problem).is_ok()) return Status::ok();
      if (gpu::mixed_wide_short_bags_forward_fits(problem).is_ok()) return Status::ok();
      if (gpu::many_bags_forward_fits(problem).is_ok()) return Status::ok();
      return gpu::short_bags_forward_fits(problem);
    }
    if (kernel_ == gpu::ForwardKernel::kNarrowRows) return gpu::narrow_rows_forward_fits(problem);
    if (kernel_ == gpu::ForwardKernel::kFittedGroups) return gpu::fitted_groups_forward_fits(problem);
    return Status::ok();
  }
  Status run(const TbeProblem& problem, const TbeForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_ASSIGN_OR_RETURN(const gpu::DeviceTbeLayout* layout, state().layout(problem.layout));
    // The warp-tile variant runs the warp-tile kernel the rule picks (one-hot, wide one-hot or short
    // bags); the narrow-rows variant kAuto's choice where that is narrow rows (split bags or not,
    // by the device's SM count: gpu::narrow_rows_split_parts).
    gpu::ForwardKernel kernel = kernel_;
    if (kernel_ == gpu::ForwardKernel::kWarpTileOneHot) kernel = gpu::select_warp_tile_kernel(problem);
    if (kernel_ == gpu::ForwardKernel::kNarrowRows &&
        gpu::select_forward_kernel(problem) == gpu::ForwardKernel::kNarrowRows) {
      kernel = gpu::ForwardKernel::kAuto;
    }
    return gpu::tbe_forward(problem, *layout, args.weights, device_batch(args.batch), args.output,
                            gpu::ForwardOptions{kernel}, context.stream);
  }

 private:
  std::string_view name_;
  gpu::ForwardKernel kernel_;
};

// Warp per chunk: every shape. Narrow rows: its can_implement adds the narrow-row rule.
class TbeBackwardFusedGpu final : public TbeBackwardVariant {
 public:
  TbeBackwardFusedGpu(std::string_view name, gpu::BackwardKernel kernel) : name_(name), kernel_(kernel) {}
  std::string_view name() const override { return name_; }
  Status can_implement(const TbeProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    if (kernel_ == gpu::BackwardKernel::kNarrowRows) PARITY_RETURN_IF_ERROR(gpu::narrow_rows_backward_fits(problem));
    return gpu::tbe_backward_workspace_bytes(problem).status();
  }
  Status run(const TbeProblem& problem, const TbeBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_ASSIGN_OR_RETURN(const gpu::DeviceTbeLayout* layout, state().layout(problem.layout));
    PARITY_ASSIGN_OR_RETURN(const std::int64_t workspace_bytes, gpu::tbe_backward_workspace_bytes(problem));
    PARITY_ASSIGN_OR_RETURN(void* workspace, state().workspace(workspace_bytes, context.stream));
    gpu::BackwardOptions options;
    options.deterministic = true;
    options.kernel = kernel_;
    return gpu::tbe_backward_fused(problem, *layout, args.optimizer,
                                   gpu::TrainingState{args.weights, args.state1, args.state2},
                                   device_batch(args.batch), args.grad_output, workspace, workspace_bytes, options,
                                   context.stream);
  }

 private:
  std::string_view name_;
  gpu::BackwardKernel kernel_;
};

}  // namespace

void install() {
  static const TbeForwardGpu forward_warp_tile("tbe_forward_gpu_warp_tile", gpu::ForwardKernel::kWarpTileOneHot);
  static const TbeForwardGpu forward_narrow_rows("tbe_forward_gpu_narrow_rows", gpu::ForwardKernel::kNarrowRows);
  static const TbeForwardGpu forward_fitted_groups("tbe_forward_gpu_fitted_groups", gpu::ForwardKernel::kFittedGroups);
  static const TbeForwardGpu forward("tbe_forward_gpu", gpu::ForwardKernel::kGroupPerBag);
  static const TbeBackwardFusedGpu backward_narrow_rows("tbe_backward_fused_gpu_narrow_rows",
                                                        gpu::BackwardKernel::kNarrowRows);
  static const TbeBackwardFusedGpu backward("tbe_backward_fused_gpu", gpu::BackwardKernel::kWarpPerChunk);
  detail::tbe_forward_gpu_warp_tile_slot().install(&forward_warp_tile);
  detail::tbe_forward_gpu_narrow_rows_slot().install(&forward_narrow_rows);
  detail::tbe_forward_gpu_fitted_groups_slot().install(&forward_fitted_groups);
  detail::tbe_forward_gpu_slot().install(&forward);
  detail::tbe_backward_fused_gpu_narrow_rows_slot().install(&backward_narrow_rows);
  detail::tbe_backward_fused_gpu_slot().install(&backward);
}

}  // namespace parity::embedding::gpu_variants
