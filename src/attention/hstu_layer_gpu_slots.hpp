// Internal: the GPU slots of the HSTU layer (src/core/gpu_slot.hpp). parity_gpu installs the
// variants of src/backends/cuda/attention/hstu_layer_gpu.cpp at start-up; until then they refuse
// with the reason. hstu_layer.cpp lists them behind the argument checks both devices share.
#pragma once

#include "core/gpu_slot.hpp"
#include "parity/attention/hstu_layer.hpp"

namespace parity::attention::detail {

parity::detail::GpuSlotVariant<HstuLayerProblem, HstuLayerForwardArgs>& hstu_layer_forward_gpu_slot();
parity::detail::GpuSlotVariant<HstuLayerProblem, HstuLayerBackwardArgs>& hstu_layer_backward_gpu_slot();

}  // namespace parity::attention::detail
