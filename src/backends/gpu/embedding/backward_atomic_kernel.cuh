// TBE backward fused with SGD by atomic adds (BackwardKernel::kAtomicSgd; fp32 weights only).
//
// SGD's update is linear in the gradient, so a row's summed update w -= lr * sum(g) can be applied
// one occurrence at a time: w += -lr * g_i. That needs no sort of the indices, no chunking and no
// combine: one launch instead of the sorted path's linearise + 2-3 radix passes (3 kernels each)
// + chunk + combine, whose fixed costs dominate small batches (docs/embedding.md). A group of G
// lanes takes a bag: each lane scales its vecs of the bag's grad_output row by -lr (x 1/L for
// mean) once, then adds them, times each position's per-sample weight, to every position's weight
// row with 16-byte atomic adds (red.global.add.v4.f32 on sm_90; four scalar ones elsewhere), the
// indices of kPositionsInFlight positions loaded before their adds. Repeated rows take their adds
// in arrival order, so results are not bitwise reproducible and differ from the sorted path by
// rounding (each add rounds once: (n + 3) u32 (|w| + lr sum|terms|) for a row taken n times).
#pragma once

#include "backends/gpu/embedding/backward_kernels.cuh"

namespace parity::gpu_device {

inline constexpr int kAtomicSgdBlockThreads = 256;
inline constexpr int kAtomicSgdPositionsInFlight = 4;

__device__ inline void atomic_add_vec(float* p, float4 v) {
#if defined(PARITY_GPU_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(p), v);
#else
  atomicAdd(p, v.x);
  atomicAdd(p + 1, v.y);
  atomicAdd(p + 2, v.z);
  atomicAdd(p + 3, v.w);
#endif
}

// kGroupLanes: lanes per bag (a power of two <= kWarpSize); a lane owns vecs lane, lane + G, ...
// Groups never exchange data, so they may diverge freely.
template <typename IndexT, int kGroupLanes>
__global__ void __launch_bounds__(kAtomicSgdBlockThreads) tbe_backward_atomic_sgd_kernel(BackwardParams<IndexT> p) {
  constexpr int kGroupsPerBlock = kAtomicSgdBlockThreads / kGroupLanes;
  const int group_lane = static_cast<int>(threadIdx.x) % kGroupLanes;
  const std::int64_t total_groups = static_cast<std::int64_t>(gridDim.x) * kGroupsPerBlock;
  auto* weights = static_cast<float*>(p.weights);
  for (std::int64_t bag = static_cast<std::int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroupLanes;
       bag < p.num_bags; bag += total_groups) {
    const std::int64_t start = static_cast<std::int64_t>(p.offsets[bag]);
    const std::int64_t end = static_cast<std::int64_t>(p.offsets[bag + 1]);
    if (end <= start) continue;  // empty (a decreasing pair reads as empty, as in the forward)
    const auto f = static_cast<int>(bag / p.batch_size);
    const std::int64_t b = bag - static_cast<std::int64_t>(f) * p.batch_size;
    const auto dim = static_cast<int>(p.layout.feature_dim[f]);
    float* table = weights + p.layout.feature_weights_offset[f];
    const float* grad_row = p.grad_output + b * p.output_cols + p.layout.feature_out_col[f];
    const float scale =
        -p.learning_rate * (p.pooling == Pool::kMean ? 1.0f / static_cast<float>(end - start) : 1.0f);
    for (int element = 4 * group_lane; element < dim; element += 4 * kGroupLanes) {
      float4 g = load_vec(grad_row + element);
      g.x *= scale;
      g.y *= scale;
      g.z *= scale;
      g.w *= scale;
      for (std::int64_t position = start; position < end; position += kAtomicSgdPositionsInFlight) {
        std::int64_t index[kAtomicSgdPositionsInFlight];
        float weight[kAtomicSgdPositionsInFlight];
#pragma unroll
        for (int u = 0; u < kAtomicSgdPositionsInFlight; ++u) {
          const bool live = position + u < end;
          index[u] = live ? static_cast<std::int64_t>(p.indices[position + u]) : -1;
          weight[u] = live && p.per_sample_weights != nullptr ? p.per_sample_weights[position + u] : 1.0f;
        }
#pragma unroll
        for (int u = 0; u < kAtomicSgdPositionsInFlight; ++u) {
          if (index[u] < 0) continue;
          atomic_add_vec(table + index[u] * dim + element,
                         make_float4(weight[u] * g.x, weight[u] * g.y, weight[u] * g.z, weight[u] * g.w));
        }
      }
    }
  }
}

}  // namespace parity::gpu_device
