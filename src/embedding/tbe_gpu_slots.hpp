// Internal: the GPU slots of the TBE op (src/core/gpu_slot.hpp), installed by parity_gpu.
#pragma once

#include "core/gpu_slot.hpp"
#include "parity/embedding/tbe_op.hpp"

namespace parity::embedding::detail {

parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_warp_tile_slot();
parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_narrow_rows_slot();
parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_fitted_groups_slot();
parity::detail::GpuSlotVariant<TbeProblem, TbeForwardArgs>& tbe_forward_gpu_slot();
parity::detail::GpuSlotVariant<TbeProblem, TbeBackwardArgs>& tbe_backward_fused_gpu_narrow_rows_slot();
parity::detail::GpuSlotVariant<TbeProblem, TbeBackwardArgs>& tbe_backward_fused_gpu_slot();

}  // namespace parity::embedding::detail
