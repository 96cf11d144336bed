// TBE backward fused with SGD by atomic adds (BackwardKernel::kAtomicSgd; fp32, fp16 and bf16 weights).
//
// SGD's update is linear in the gradient, so a row's summed update w -= lr * sum(g) can be applied
// one occurrence at a time: w += -lr * g_i. That needs no sort of the indices, no chunking and no
// combine: one launch instead of the sorted path's linearise + 2-3 radix passes (3 kernels each)
// + chunk + combine, whose fixed costs dominate small batches (docs/embedding.md). A group of G
// lanes takes a bag: each lane scales its vecs of the bag's grad_output row by -lr (x 1/L for
// mean) once, then adds them, times each position's per-sample weight, to every position's weight
// row with vector atomic adds, the indices of kPositionsInFlight positions loaded before their
// adds. fp32 rows: 16-byte adds (red.global.add.v4.f32 on sm_90; four scalar ones elsewhere).
// 16-bit rows: the term is rounded to the row's dtype and added as two packed pairs in one 8-byte
// add (red.global.add.noftz.v2.{f16x2,bf16x2} on sm_90, round to nearest; a 32-bit CAS loop per
// pair elsewhere), so each occurrence rounds to the row's precision once more than the sorted
// path, which rounds each row once. Repeated rows take their adds in arrival order, so results are
// not bitwise reproducible and differ from the sorted path by rounding: within
// (n + 3) u (|w| + lr sum|terms|) for a row taken n times, u the weights dtype's unit roundoff
// (derivation in tests/backend/tbe_gpu_backward_atomic_sgd_test.cpp).
#pragma once

#include <type_traits>

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

template <typename Tag>
__device__ inline std::uint32_t pack_pair(float lo, float hi) {
  if constexpr (std::is_same_v<Tag, F16Tag>) {
    return std::uint32_t{float_to_fp16(lo)} | (std::uint32_t{float_to_fp16(hi)} << 16);
  } else {
    return std::uint32_t{float_to_bf16(lo)} | (std::uint32_t{float_to_bf16(hi)} << 16);
  }
}

template <typename Tag>
__device__ inline float unpack_half(std::uint32_t word, int half) {
  const auto bits = static_cast<std::uint16_t>(half == 0 ? word & 0xffffu : word >> 16);
  if constexpr (std::is_same_v<Tag, F16Tag>) {
    return fp16_to_float(bits);
  } else {
    return bf16_to_float(bits);
  }
}

// Portable packed add of two 16-bit terms (already rounded to the dtype) into one 32-bit word:
// the sum is formed in fp32 and rounded once, as the hardware's packed add does.
template <typename Tag>
__device__ inline void atomic_add_pair_by_cas(std::uint32_t* word, std::uint32_t terms) {
  std::uint32_t seen = *reinterpret_cast<volatile std::uint32_t*>(word);
  while (true) {
    const std::uint32_t sum = pack_pair<Tag>(unpack_half<Tag>(seen, 0) + unpack_half<Tag>(terms, 0),
                                             unpack_half<Tag>(seen, 1) + unpack_half<Tag>(terms, 1));
    const std::uint32_t before = atomicCAS(reinterpret_cast<unsigned int*>(word), seen, sum);
    if (before == seen) return;
    seen = before;
  }
}

// Adds v (four elements, already scaled) to the vec of a row at p (8-byte aligned for 16-bit).
template <typename Tag>
__device__ inline void atomic_add_row_vec(typename Tag::Storage* p, float4 v) {
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    atomic_add_vec(p, v);
  } else {
    const std::uint32_t lo = pack_pair<Tag>(v.x, v.y);
    const std::uint32_t hi = pack_pair<Tag>(v.z, v.w);
#if defined(PARITY_GPU_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    if constexpr (std::is_same_v<Tag, F16Tag>) {
      asm volatile("red.global.add.noftz.v2.f16x2 [%0], {%1, %2};" ::"l"(p), "r"(lo), "r"(hi) : "memory");
    } else {
      asm volatile("red.global.add.noftz.v2.bf16x2 [%0], {%1, %2};" ::"l"(p), "r"(lo), "r"(hi) : "memory");
    }
#else
    auto* words = reinterpret_cast<std::uint32_t*>(p);
    atomic_add_pair_by_cas<Tag>(words, lo);
    atomic_add_pair_by_cas<Tag>(words + 1, hi);
#endif
  }
}

// kGroupLanes: lanes per bag (a power of two <= kWarpSize); a lane owns vecs lane, lane + G, ...
// Groups never exchange data, so they may diverge freely.
template <typename Tag, typename IndexT, int kGroupLanes>
__global__ void __launch_bounds__(kAtomicSgdBlockThreads) tbe_backward_atomic_sgd_kernel(BackwardParams<IndexT> p) {
  constexpr int kGroupsPerBlock = kAtomicSgdBlockThreads / kGroupLanes;
  const int group_lane = static_cast<int>(threadIdx.x) % kGroupLanes;
  const std::int64_t total_groups = static_cast<std::int64_t>(gridDim.x) * kGroupsPerBlock;
  auto* weights = static_cast<typename Tag::Storage*>(p.weights);
  for (std::int64_t bag = static_cast<std::int64_t>(blockIdx.x) * kGroupsPerBlock + threadIdx.x / kGroupLanes;
       bag < p.num_bags; bag += total_groups) {
    const std::int64_t start = static_cast<std::int64_t>(p.offsets[bag]);
    const std::int64_t end = static_cast<std::int64_t>(p.offsets[bag + 1]);
    if (end <= start) continue;  // empty (a decreasing pair reads as empty, as in the forward)
    const auto f = static_cast<int>(bag / p.batch_size);
    const std::int64_t b = bag - static_cast<std::int64_t>(f) * p.batch_size;
    const auto dim = static_cast<int>(p.layout.feature_dim[f]);
    const std::int64_t row_stride = p.layout.feature_row_stride[f];
    auto* table = weights + p.layout.feature_weights_offset[f];
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
          atomic_add_row_vec<Tag>(table + index[u] * row_stride + element,
                                  make_float4(weight[u] * g.x, weight[u] * g.y, weight[u] * g.z, weight[u] * g.w));
        }
      }
    }
  }
}

}  // namespace parity::gpu_device
