// Host helpers shared by the TBE launch files: the device view of the layout, grid sizing.
#pragma once

#include "backends/gpu/embedding/kernels.cuh"
#include "parity/embedding/tbe_gpu.hpp"

namespace parity::embedding::gpu {

/// Pointers into the DeviceTbeLayout buffer (order fixed by DeviceTbeLayout::create).
gpu_device::LayoutView make_layout_view(const DeviceTbeLayout& device_layout, const TbeLayout& layout);

/// Multiprocessor count of the current device (grid caps scale with it, never a literal).
Result<int> current_sm_count();

/// The problem's layout must be the one the device layout was built from (feature count).
Status check_device_layout(const DeviceTbeLayout& device_layout, const TbeLayout& layout, const char* op);

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace parity::embedding::gpu
