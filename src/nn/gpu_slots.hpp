// Internal: the GPU slot of every nn op (see src/core/gpu_slot.hpp). The op files list them;
// parity_gpu installs the implementations (src/backends/cuda/nn/).
#pragma once

#include "core/gpu_slot.hpp"
#include "parity/nn/interaction.hpp"
#include "parity/nn/linear.hpp"
#include "parity/nn/loss.hpp"
#include "parity/nn/optimizer.hpp"

namespace parity::nn::detail {

parity::detail::GpuSlotVariant<LinearProblem, LinearForwardArgs>& linear_forward_gpu_gemm_relu_aux_slot();
parity::detail::GpuSlotVariant<LinearProblem, LinearBackwardArgs>& linear_backward_gpu_gemm_drelu_bgrad_slot();
parity::detail::GpuSlotVariant<BceLossProblem, BceLossArgs>& bce_with_logits_gpu_reduce_slot();
parity::detail::GpuSlotVariant<DenseOptimizerProblem, DenseOptimizerArgs>& dense_optimizer_gpu_elementwise_slot();
parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionForwardArgs>& dot_interaction_forward_gpu_gram_tiles_slot();
parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionForwardArgs>& dot_interaction_forward_gpu_shared_slot();
parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionBackwardArgs>& dot_interaction_backward_gpu_register_columns_slot();
parity::detail::GpuSlotVariant<DotInteractionProblem, DotInteractionBackwardArgs>& dot_interaction_backward_gpu_shared_slot();
parity::detail::GpuSlotVariant<CrossLayerProblem, CrossLayerForwardArgs>& cross_layer_forward_gpu_gemm_fused_slot();
parity::detail::GpuSlotVariant<CrossLayerProblem, CrossLayerBackwardArgs>& cross_layer_backward_gpu_gemm_fused_slot();

}  // namespace parity::nn::detail
