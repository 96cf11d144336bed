// The GPU slots of the nn ops (gpu_slots.hpp): one object per op, named after its GPU variant.
#include "nn/gpu_slots.hpp"

namespace parity::nn::detail {

parity::detail::GpuSlotVariant<LinearProblem, LinearForwardArgs>& linear_forward_gpu_gemm_relu_aux_slot() {
  static parity::detail::GpuSlotVariant<LinearProblem, LinearForwardArgs> slot("linear_forward_gpu_gemm_relu_aux");
  return slot;
}

parity::detail::GpuSlotVariant<LinearProblem, LinearBackwardArgs>& linear_backward_gpu_gemm_drelu_bgrad_slot() {
  static parity::detail::GpuSlotVariant<LinearProblem, LinearBackwardArgs> slot("linear_backward_gpu_gemm_drelu_bgrad");
  return slot;
}

parity::detail::GpuSlotVariant<BceLossProblem, BceLossArgs>& bce_with_logits_gpu_reduce_slot() {
  static parity::detail::GpuSlotVariant<BceLossProblem, BceLossArgs> slot("bce_with_logits_gpu_reduce");
  return slot;
}

parity::detail::GpuSlotVariant<DenseOptimizerProblem, DenseOptimizerArgs>& dense_optimizer_gpu_elementwise_slot() {
  static parity::detail::GpuSlotVariant<DenseOptimizerProblem, DenseOptimizerArgs> slot("dense_optimizer_gpu_elementwise");
  return slot;
}

parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionForwardArgs>& dot_interaction_forward_gpu_gram_tiles_slot() {
  static parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionForwardArgs> slot("dot_interaction_forward_gpu_gram_tiles");
  return slot;
}

parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionBackwardArgs>& dot_interaction_backward_gpu_register_columns_slot() {
  static parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionBackwardArgs> slot("dot_interaction_backward_gpu_register_columns");
  return slot;
}

parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionForwardArgs>& dot_interaction_forward_gpu_shared_slot() {
  static parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionForwardArgs> slot("dot_interaction_forward_gpu_shared");
  return slot;
}

parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionBackwardArgs>& dot_interaction_backward_gpu_shared_slot() {
  static parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionBackwardArgs> slot("dot_interaction_backward_gpu_shared");
  return slot;
}

parity::detail::GpuSlotVariant<CrossLayerProblem, CrossLayerForwardArgs>& cross_layer_forward_gpu_gemm_fused_slot() {
  static parity::detail::GpuSlotVariant<CrossLayerProblem, CrossLayerForwardArgs> slot("cross_layer_forward_gpu_gemm_fused");
  return slot;
}

parity::detail::GpuSlotVariant<CrossLayerProblem, CrossLayerBackwardArgs>& cross_layer_backward_gpu_gemm_fused_slot() {
  static parity::detail::GpuSlotVariant<CrossLayerProblem, CrossLayerBackwardArgs> slot("cross_layer_backward_gpu_gemm_fused");
  return slot;
}

}  // namespace parity::nn::detail
