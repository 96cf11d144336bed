// Attention op variants: the CPU ones wrap attention_cpu.hpp after checking the host offsets and
// pointers; the GPU slots are filled by parity_gpu (src/backends/cuda/attention/).
#include "parity/attention/attention_op.hpp"

#include "attention/attention_cpu.hpp"
#include "attention/attention_gpu_slots.hpp"

namespace parity::attention {
namespace {

Status require_cpu(const ExecutionContext& context) {
  if (context.device != DeviceKind::kCpu) return unsupported("host code: needs a CPU context");
  return Status::ok();
}

Status require_pointer(const void* pointer, const char* name, std::int64_t rows) {
  if (pointer == nullptr && rows > 0) return invalid_argument(name, ": null with ", rows, " rows");
  return Status::ok();
}

Status check_forward_args(const AttentionProblem& problem, const AttentionForwardArgs& args) {
  PARITY_RETURN_IF_ERROR(check_attention_inputs(problem, args.q_offsets, args.kv_offsets, args.num_targets));
  PARITY_RETURN_IF_ERROR(require_pointer(args.q, "q", problem.total_q));
  PARITY_RETURN_IF_ERROR(require_pointer(args.k, "k", problem.total_kv));
  PARITY_RETURN_IF_ERROR(require_pointer(args.v, "v", problem.total_kv));
  PARITY_RETURN_IF_ERROR(require_pointer(args.out, "out", problem.total_q));
  if (problem.kind == AttentionKind::kSoftmax) {
    PARITY_RETURN_IF_ERROR(require_pointer(args.softmax_lse, "softmax_lse", problem.total_q));
  }
  return Status::ok();
}

class AttentionForwardCpu final : public AttentionForwardVariant {
 public:
  std::string_view name() const override { return "attention_forward_cpu_openmp"; }
  Status can_implement(const AttentionProblem&, const ExecutionContext& context) const override {
    return require_cpu(context);
  }
  Status run(const AttentionProblem& problem, const AttentionForwardArgs& args, void*,
             const ExecutionContext&) const override {
    PARITY_RETURN_IF_ERROR(check_forward_args(problem, args));
    return cpu::forward(problem, args);
  }
};

class AttentionBackwardCpu final : public AttentionBackwardVariant {
 public:
  std::string_view name() const override { return "attention_backward_cpu_openmp"; }
  // Two passes without atomics: deterministic by construction.
  Status can_implement(const AttentionProblem&, const ExecutionContext& context) const override {
    return require_cpu(context);
  }
  Status run(const AttentionProblem& problem, const AttentionBackwardArgs& args, void*,
             const ExecutionContext&) const override {
    PARITY_RETURN_IF_ERROR(check_forward_args(problem, args.forward));
    PARITY_RETURN_IF_ERROR(require_pointer(args.grad_out, "grad_out", problem.total_q));
    PARITY_RETURN_IF_ERROR(require_pointer(args.grad_q, "grad_q", problem.total_q));
    PARITY_RETURN_IF_ERROR(require_pointer(args.grad_k, "grad_k", problem.total_kv));
    PARITY_RETURN_IF_ERROR(require_pointer(args.grad_v, "grad_v", problem.total_kv));
    return cpu::backward(problem, args);
  }
};

}  // namespace

namespace detail {
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_rows128_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu_rows128");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu_wgmma");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_ws_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu_wgmma_ws");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_ws128_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu_wgmma_ws128");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu_wgmma_tma");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma64_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu_wgmma_tma64");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_seq_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot("attention_forward_gpu_wgmma_tma_seq");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_tile_major_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot(
      "attention_forward_gpu_wgmma_tma_tile_major");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_persistent_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot(
      "attention_forward_gpu_wgmma_tma_persistent");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs>& attention_forward_gpu_wgmma_tma_pair_walk_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionForwardArgs> slot(
      "attention_forward_gpu_wgmma_tma_pair_walk");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot("attention_backward_gpu");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot("attention_backward_gpu_wgmma");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ring_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot(
      "attention_backward_gpu_wgmma_ring");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot("attention_backward_gpu_wgmma_ws");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot(
      "attention_backward_gpu_wgmma_ws_dqtma");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh");
  return slot;
}
parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs>& attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq_slot() {
  static parity::detail::GpuSlotVariant<AttentionProblem, AttentionBackwardArgs> slot(
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq");
  return slot;
}
}  // namespace detail

const std::vector<const AttentionForwardVariant*>& attention_forward_variants() {
  static const AttentionForwardCpu cpu;
  // GPU order of preference: the TMA wgmma kernel walking the q tiles of a few adjacent blocks per
  // (sequence, head) where it runs (sm_90a, d_qk = d_v in {64, 128}; K and V read from L2: 6% /
  // 16-18% faster than the one-block-per-pair walk at N = 2048 / 4096, run 58), then that walk
  // (1-13% faster than wgmma_ws, run 46; same limits), then the cp.async warp-specialized one (14-16% faster than the round-2 wgmma kernel, run 44), then
  // that round-2 wgmma kernel (kept for A/B by name), then the 128-row mma.sync kernel (4-16%
  // faster than the 64-row one, run 35), then the 64-row one for what all refuse (head dims
  // above 128, HIP builds). The other 128-key and TMA variants come last (by name, for A/B).
  static const std::vector<const AttentionForwardVariant*> variants = {
      &cpu, &detail::attention_forward_gpu_wgmma_tma_pair_walk_slot(),
      &detail::attention_forward_gpu_wgmma_tma_seq_slot(), &detail::attention_forward_gpu_wgmma_ws_slot(),
      &detail::attention_forward_gpu_wgmma_slot(), &detail::attention_forward_gpu_rows128_slot(),
      &detail::attention_forward_gpu_slot(), &detail::attention_forward_gpu_wgmma_ws128_slot(),
      &detail::attention_forward_gpu_wgmma_tma_slot(), &detail::attention_forward_gpu_wgmma_tma64_slot(),
      &detail::attention_forward_gpu_wgmma_tma_tile_major_slot(),
      &detail::attention_forward_gpu_wgmma_tma_persistent_slot()};
  return variants;
}

const std::vector<const AttentionBackwardVariant*>& attention_backward_variants() {
  static const AttentionBackwardCpu cpu;
  // GPU order: the warp-specialized wgmma backward with dQ by TMA reduce-adds on the pair walk's
  // grid where it runs (sm_90a, d_qk = d_v in {64, 128}; 8-17% faster than one block per pair,
  // run 59; its deterministic mode walks one block per pair), with SiLU / sigmoid through
  // tanh.approx (one MUFU op per score: HSTU 3-4% faster, run 63) and the next kv tile's K/V
  // prefetched into L2 with no dQ completion wait between kv tiles (3-3.5% faster at N = 2048,
  // run 66; the deterministic mode keeps the wait), first with each (sequence, head)'s last block
  // converting its dQ rows (no separate pass: HSTU 4.6% / 1.6% faster at N = 2048 / 4096, jagged
  // flash 0.7-0.9% slower, run 83), then with the separate pass, then without the overlap, then with
  // ex2 + rcp, then the same kernel on the walking grid (its adds come in kv-tile order), measured
  // 3-8% faster than the lockstep wgmma backward, which follows (the same limits: it serves if the
  // first is ever refused), then the mma.sync one for everything else (mixed dims, HIP; d = 256 is
  // refused by all). The ring schedule and the atomic-dQ warp-specialized backward come last (by
  // name, A/B).
  static const std::vector<const AttentionBackwardVariant*> variants = {
      &cpu, &detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq_slot(),
      &detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_slot(),
      &detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh_slot(),
      &detail::attention_backward_gpu_wgmma_ws_dqtma_pair_walk_slot(),
      &detail::attention_backward_gpu_wgmma_ws_dqtma_slot(),
      &detail::attention_backward_gpu_wgmma_slot(), &detail::attention_backward_gpu_slot(),
      &detail::attention_backward_gpu_wgmma_ring_slot(), &detail::attention_backward_gpu_wgmma_ws_slot()};
  return variants;
}

Status attention_forward(const AttentionProblem& problem, const AttentionForwardArgs& args,
                         const ExecutionContext& context) {
  auto choice = select_variant(attention_forward_variants(), problem, context);
  if (!choice.is_ok()) return choice.status().with_context("attention_forward");
  return choice->variant->run(problem, args, nullptr, context).with_context("attention_forward");
}

Result<std::int64_t> attention_backward_workspace_bytes(const AttentionProblem& problem,
                                                        const ExecutionContext& context) {
  auto choice = select_variant(attention_backward_variants(), problem, context);
  if (!choice.is_ok()) return choice.status().with_context("attention_backward");
  return choice->variant->workspace_bytes(problem);
}

Status attention_backward(const AttentionProblem& problem, const AttentionBackwardArgs& args, void* workspace,
                          const ExecutionContext& context) {
  auto choice = select_variant(attention_backward_variants(), problem, context);
  if (!choice.is_ok()) return choice.status().with_context("attention_backward");
  return choice->variant->run(problem, args, workspace, context).with_context("attention_backward");
}

}  // namespace parity::attention
