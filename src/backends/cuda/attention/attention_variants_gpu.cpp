// GPU implementations of the attention op's variants (include/parity/attention/attention_op.hpp),
// installed into the slots of src/attention/attention_gpu_slots.hpp by register_backends. They
// call the kernels' host entry points (src/backends/gpu/attention/attention_launch.hpp); the
// offsets live on the device, so the caller checks its host copy (check_attention_inputs).
#include "attention/attention_gpu_slots.hpp"
#include "backends/cuda/register_backends.hpp"
#include "backends/gpu/attention/attention_launch.hpp"

namespace parity::attention::gpu_variants {
namespace {

Status require_gpu(const ExecutionContext& context) {
  if (context.device != DeviceKind::kGpu) return unsupported("runs on the GPU only");
  return Status::ok();
}

// A deterministic context asks for the deterministic backward even if the problem does not.
AttentionProblem with_context(const AttentionProblem& problem, const ExecutionContext& context) {
  AttentionProblem adjusted = problem;
  adjusted.deterministic = problem.deterministic || context.deterministic;
  return adjusted;
}

// One class for the forward kernels: they differ only in the kernel the host entry launches.
class AttentionForwardGpu final : public AttentionForwardVariant {
 public:
  AttentionForwardGpu(std::string_view name, gpu::ForwardKernel kernel)
      : name_(name), kernel_(kernel) {}
  std::string_view name() const override { return name_; }
  Status can_implement(const AttentionProblem& problem,
                       const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    return gpu::can_implement_forward(problem, kernel_);
  }
  Status run(const AttentionProblem& problem, const AttentionForwardArgs& args, void*,
             const ExecutionContext& context) const override {
    return gpu::forward(problem, args, context.stream, kernel_);
  }

 private:
  std::string_view name_;
  gpu::ForwardKernel kernel_;
};

class AttentionBackwardGpu final : public AttentionBackwardVariant {
 public:
  AttentionBackwardGpu(std::string_view name, gpu::BackwardKernel kernel)
      : name_(name), kernel_(kernel) {}
  std::string_view name() const override { return name_; }
  Status can_implement(const AttentionProblem& problem,
                       const ExecutionContext& context) const override {
    PARITY_RETURN_IF_ERROR(require_gpu(context));
    return gpu::can_implement_backward(with_context(problem, context), kernel_);
  }
  std::int64_t workspace_bytes(const AttentionProblem& problem) const override {
    return static_cast<std::int64_t>(gpu::backward_workspace_bytes(problem));
  }
  Status run(const AttentionProblem& problem, const AttentionBackwardArgs& args, void* workspace,
             const ExecutionContext& context) const override {
    return gpu::backward(with_context(problem, context), args, workspace, context.stream, kernel_);
  }

 private:
  std::string_view name_;
  gpu::BackwardKernel kernel_;
};

}  // namespace

void install() {
  static const AttentionForwardGpu forward("attention_forward_gpu", gpu::ForwardKernel::kRows64);
  static const AttentionForwardGpu forward_rows128("attention_forward_gpu_rows128",
                                                   gpu::ForwardKernel::kRows128);
  static const AttentionForwardGpu forward_wgmma("attention_forward_gpu_wgmma",
                                                 gpu::ForwardKernel::kWgmma);
  static const AttentionForwardGpu forward_wgmma_ws("attention_forward_gpu_wgmma_ws",
                                                    gpu::ForwardKernel::kWgmmaWs);
  static const AttentionForwardGpu forward_wgmma_ws128("attention_forward_gpu_wgmma_ws128",
                                                       gpu::ForwardKernel::kWgmmaWs128);
  static const AttentionForwardGpu forward_wgmma_tma("attention_forward_gpu_wgmma_tma",
                                                     gpu::ForwardKernel::kWgmmaTma);
  static const AttentionForwardGpu forward_wgmma_tma64("attention_forward_gpu_wgmma_tma64",
                                                       gpu::ForwardKernel::kWgmmaTma64);
  static const AttentionForwardGpu forward_wgmma_tma_seq("attention_forward_gpu_wgmma_tma_seq",
                                                         gpu::ForwardKernel::kWgmmaTmaSeq);
  static const AttentionForwardGpu forward_wgmma_tma_tile_major(
      "attention_forward_gpu_wgmma_tma_tile_major", gpu::ForwardKernel::kWgmmaTmaTileMajor);
  static const AttentionForwardGpu forward_wgmma_tma_persistent(
      "attention_forward_gpu_wgmma_tma_persistent", gpu::ForwardKernel::kWgmmaTmaPersistent);
  static const AttentionForwardGpu forward_wgmma_tma_pair_walk(
      "attention_forward_gpu_wgmma_tma_pair_walk", gpu::ForwardKernel::kWgmmaTmaPairWalk);
  static const AttentionBackwardGpu backward("attention_backward_gpu", gpu::BackwardKernel::kMmaSync);
  static const AttentionBackwardGpu backward_wgmma("attention_backward_gpu_wgmma",
                                                   gpu::BackwardKernel::kWgmma);
  static const AttentionBackwardGpu backward_wgmma_ring("attention_backward_gpu_wgmma_ring",
                                                        gpu::BackwardKernel::kWgmmaRing);
  static const AttentionBackwardGpu backward_wgmma_ws("attention_backward_gpu_wgmma_ws",
                                                      gpu::BackwardKernel::kWgmmaWs);
  static const AttentionBackwardGpu backward_wgmma_ws_dqtma(
      "attention_backward_gpu_wgmma_ws_dqtma", gpu::BackwardKernel::kWgmmaWsTmaReduce);
  static const AttentionBackwardGpu backward_wgmma_ws_dqtma_pair_walk(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk",
      gpu::BackwardKernel::kWgmmaWsTmaReducePairWalk);
  static const AttentionBackwardGpu backward_wgmma_ws_dqtma_pair_walk_tanh(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh",
      gpu::BackwardKernel::kWgmmaWsTmaReducePairWalkTanh);
  static const AttentionBackwardGpu backward_wgmma_ws_dqtma_pair_walk_overlap_tanh(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh",
      gpu::BackwardKernel::kWgmmaWsTmaReducePairWalkOverlapTanh);
  static const AttentionBackwardGpu backward_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq",
      gpu::BackwardKernel::kWgmmaWsTmaReducePairWalkOverlapTanhFusedGradQ);
  detail::attention_forward_gpu_slot().install(&forward);
  detail::attention_forward_gpu_rows128_slot().install(&forward_rows128);
  detail::attention_forward_gpu_wgmma_slot().install(&forward_wgmma);
  detail::attention_forward_gpu_wgmma_ws_slot().install(&forward_wgmma_ws);
  detail::attention_forward_gpu_wgmma_ws128_slot().install(&forward_wgmma_ws128);
  detail::attention_forward_gpu_wgmma_tma_slot().install(&forward_wgmma_tma);
  detail::attention_forward_gpu_wgmma_tma64_slot().install(&forward_wgmma_tma64);
  detail::attention_forward_gpu_wgmma_tma_seq_slot().install(&forward_wgmma_tma_seq);
  detail::attention_forward_gpu_wgmma_tma_tile_major_slot().install(&forward_wgmma_tma_tile_major);
  detail::attention_forward_gpu_wgmma_tma_persistent_slot().install(&forward_wgmma_tma_persistent);
  detail::attention_forward_gpu_wgmma_tma_pair_walk_slot().install(&forward_wgmma_tma_pair_walk);
  detail::attention_backward_gpu_slot().install(&backward);
  detail::attention_backward_gpu_wgmma_slot().install(&backward_wgmma);
  detail::attention_backward_gpu_wgmma_ring_slot().install(&backward_wgmma_ring);
  detail::attention_backward_gpu_wgmma_ws_slot().install(&backward_wgmma_ws);
  detail::attention_backward_gpu_wgmma_ws_dqtma_slot().install(&backward_wgmma_ws_dqtma);
  detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_slot().install(
      &backward_wgmma_ws_dqtma_pair_walk);
  detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh_slot().install(
      &backward_wgmma_ws_dqtma_pair_walk_tanh);
  detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_slot().install(
      &backward_wgmma_ws_dqtma_pair_walk_overlap_tanh);
  detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq_slot().install(
      &backward_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq);
  install_hstu_layer();
}

}  // namespace parity::attention::gpu_variants
