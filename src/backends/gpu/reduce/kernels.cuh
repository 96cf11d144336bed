// Block sum reduction: the smallest kernel that exercises the portability header end to end
// (lane count, shuffles, shared memory) on both vendors.
// Mapping: grid-stride loop, each thread accumulates in fp64, the block reduces by warp shuffles
// then across warps in shared memory; thread 0 writes one partial per block. No atomics.
#pragma once

#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device {

template <int kBlockThreads>
__global__ void __launch_bounds__(kBlockThreads)
    reduce_sum_block_partials_kernel(const float* __restrict__ values, std::int64_t count,
                                     double* __restrict__ block_partials) {
  static_assert(kBlockThreads % kWarpSize == 0, "block must be whole warps");
  __shared__ double scratch[kBlockThreads / kWarpSize];
  double sum = 0.0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlockThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlockThreads + threadIdx.x; i < count;
       i += stride) {
    sum += static_cast<double>(values[i]);
  }
  sum = block_reduce_sum(sum, scratch);
  if (threadIdx.x == 0) block_partials[blockIdx.x] = sum;
}

template <int kBlockThreads>
__global__ void __launch_bounds__(kBlockThreads)
    reduce_sum_final_kernel(const double* __restrict__ partials, int count, double* __restrict__ total) {
  __shared__ double scratch[kBlockThreads / kWarpSize];
  double sum = 0.0;
  for (int i = static_cast<int>(threadIdx.x); i < count; i += kBlockThreads) sum += partials[i];
  sum = block_reduce_sum(sum, scratch);
  if (threadIdx.x == 0) *total = sum;
}

}  // namespace parity::gpu_device
