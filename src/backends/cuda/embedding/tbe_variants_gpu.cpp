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

class TbeForwardGpu final : public TbeForwardVariant {
 public:
  std::string_view name() const override { return "tbe_forward_gpu"; }
  Status can_implement(const TbeProblem&, const ExecutionContext& context) const override {
    return require_gpu(context);
  }
  Status run(const TbeProblem& problem, const TbeForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_ASSIGN_OR_RETURN(const gpu::DeviceTbeLayout* layout, state().layout(problem.layout));
    return gpu::tbe_forward(problem, *layout, args.weights, device_batch(args.batch), args.output, context.stream);
  }
};

class TbeBackwardFusedGpu final : public TbeBackwardVariant {
 public:
  std::string_view name() const override { return "tbe_backward_fused_gpu"; }
  Status can_implement(const TbeProblem& problem, const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    return gpu::tbe_backward_workspace_bytes(problem).status();
  }
  Status run(const TbeProblem& problem, const TbeBackwardArgs& args, void*,
             const ExecutionContext& context) const override {
    PARITY_ASSIGN_OR_RETURN(const gpu::DeviceTbeLayout* layout, state().layout(problem.layout));
    PARITY_ASSIGN_OR_RETURN(const std::int64_t workspace_bytes, gpu::tbe_backward_workspace_bytes(problem));
    PARITY_ASSIGN_OR_RETURN(void* workspace, state().workspace(workspace_bytes, context.stream));
    gpu::BackwardOptions options;
    options.deterministic = true;
    return gpu::tbe_backward_fused(problem, *layout, args.optimizer,
                                   gpu::TrainingState{args.weights, args.state1, args.state2},
                                   device_batch(args.batch), args.grad_output, workspace, workspace_bytes, options,
                                   context.stream);
  }
};

}  // namespace

void install() {
  static const TbeForwardGpu forward;
  static const TbeBackwardFusedGpu backward;
  detail::tbe_forward_gpu_slot().install(&forward);
  detail::tbe_backward_fused_gpu_slot().install(&backward);
}

}  // namespace parity::embedding::gpu_variants
