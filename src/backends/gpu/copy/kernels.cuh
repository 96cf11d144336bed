// Device-to-device copy at full memory bandwidth, plus the fill and compare kernels that check it.
// Purpose: the HBM ceiling (`parity bench hbm`, `parity hw probe`), portable to CUDA and HIP.
// Strategy: 16-byte vectors (uint4), grid-stride; each thread issues kUnroll independent loads
// before its stores so enough bytes are in flight per SM to cover memory latency. A tail of
// fewer than 16 bytes is copied byte-wise by block 0.
// Limits: pointers 16-byte aligned (device allocations are 256-byte aligned; launch.cu checks).
#pragma once

#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device {

template <int kBlockThreads, int kUnroll>
__global__ void __launch_bounds__(kBlockThreads)
    copy_vectorized_grid_stride_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                       std::int64_t vector_count, const unsigned char* __restrict__ src_tail,
                                       unsigned char* __restrict__ dst_tail, int tail_bytes) {
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(kBlockThreads) * kUnroll;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kChunk;
  std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kChunk + threadIdx.x;
  // Whole chunks: all kUnroll vectors of this thread are in range.
  for (; base + (kUnroll - 1) * kBlockThreads < vector_count; base += stride) {
    uint4 values[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) values[u] = src[base + u * kBlockThreads];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[base + u * kBlockThreads] = values[u];
  }
  // The last, partial chunk of this thread (later chunks start past vector_count).
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::int64_t index = base + u * kBlockThreads;
    if (index < vector_count) dst[index] = src[index];
  }
  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail_bytes) dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}

// Reads every 16-byte vector (the L2 then holds these lines clean). The XOR of all of them is
// stored only if it equals a value the caller never passes, so the loads cannot be removed.
template <int kBlockThreads, int kUnroll>
__global__ void __launch_bounds__(kBlockThreads)
    read_vectors_kernel(const uint4* __restrict__ src, std::int64_t vector_count, unsigned int impossible,
                        unsigned int* __restrict__ sink) {
  constexpr std::int64_t kChunk = static_cast<std::int64_t>(kBlockThreads) * kUnroll;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kChunk;
  unsigned int folded = 0;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * kChunk + threadIdx.x; base < vector_count;
       base += stride) {
    uint4 values[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t index = base + u * kBlockThreads;
      values[u] = index < vector_count ? src[index] : make_uint4(0u, 0u, 0u, 0u);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) folded ^= values[u].x ^ values[u].y ^ values[u].z ^ values[u].w;
  }
  if (folded == impossible) *sink = folded;
}

// word[i] = hash(i, seed): every 4-byte word distinct from its neighbours, so a copy that drops,
// duplicates or shifts any vector is caught by the comparison.
template <int kBlockThreads>
__global__ void __launch_bounds__(kBlockThreads)
    fill_word_pattern_kernel(unsigned int* __restrict__ words, std::int64_t word_count, unsigned int seed) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlockThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlockThreads + threadIdx.x; i < word_count;
       i += stride) {
    unsigned int x = static_cast<unsigned int>(i) ^ (static_cast<unsigned int>(i >> 32) * 0x9e3779b9u) ^ seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    words[i] = x;
  }
}

// Counts differing bytes between a and b; one atomic per thread that saw a difference.
template <int kBlockThreads>
__global__ void __launch_bounds__(kBlockThreads)
    count_mismatched_bytes_kernel(const unsigned char* __restrict__ a, const unsigned char* __restrict__ b,
                                  std::int64_t size_bytes, unsigned long long* __restrict__ mismatches) {
  const std::int64_t vector_count = size_bytes / 16;
  const auto* a_vectors = reinterpret_cast<const uint4*>(a);
  const auto* b_vectors = reinterpret_cast<const uint4*>(b);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlockThreads;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kBlockThreads + threadIdx.x;
  unsigned long long local = 0;
  for (std::int64_t i = first; i < vector_count; i += stride) {
    const uint4 x = a_vectors[i];
    const uint4 y = b_vectors[i];
    if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w) {
      for (int byte = 0; byte < 16; ++byte) local += a[i * 16 + byte] != b[i * 16 + byte] ? 1u : 0u;
    }
  }
  for (std::int64_t i = vector_count * 16 + first; i < size_bytes; i += stride) local += a[i] != b[i] ? 1u : 0u;
  if (local != 0) atomicAdd(mismatches, local);
}

}  // namespace parity::gpu_device
