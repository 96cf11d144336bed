// A one-thread kernel that keeps its stream busy until the host writes a release flag (the
// "blocking kernel" of nvbench). Purpose: timed launches queued behind it start back to back once
// released, so host-side enqueue time (a slow driver call, a descheduled thread) never lands
// between a start and a stop event. The flag lives in pinned, device-mapped host memory.
// Limits: gives up after timeout_cycles of its SM's clock, so a host that never releases costs
// bounded time instead of a hang.
#pragma once

#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device {

__global__ void hold_until_released_kernel(const volatile int* release_flag,
                                           long long timeout_cycles) {
  const long long start = clock64();
  while (*release_flag == 0 && clock64() - start < timeout_cycles) {
  }
}

}  // namespace parity::gpu_device
