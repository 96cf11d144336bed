// dQ conversion fused into the warp-specialized TMA-reduce backward (kFusedGradQ of
// backward_wgmma_ws_kernel.cuh), instead of the separate fp32 -> 16-bit pass over the workspace.
// Each (sequence, head) has one arrival counter in the workspace, zeroed before the kernel. A
// block's end, after its reducers' bulk groups completed (wait_group 0) and a generic <- async
// proxy fence, synchronises its consumers and one thread adds 1 to its pair's counter with an
// acq_rel atomic (the release covers the adds the barrier ordered before it, as a CTA-wide
// semaphore does). The block that brings the count to the pair's block count (p.grid_tiles) has
// acquired every other block's release: every add into the pair's dQ rows is visible, and its two
// consumer warpgroups convert the rows (fp32 from the workspace through L2, times the scale, into
// 16-bit grad_q), whose lines were reduced into a moment ago by the pair's adjacent blocks. Rows
// no add reaches hold the memset's zeros, so every row of the pair is written, as by the separate
// pass. The conversion runs on the last block's SM only, while the other SMs go on with the next
// blocks. NVIDIA sm_90a only (as the kernel).
#pragma once

#include <cstdint>

#include "backends/gpu/attention/backward_wgmma_kernel.cuh"

namespace parity::gpu_device::attention {

// Until at most kPending of this thread's newest bulk groups are incomplete (the older ones'
// global writes performed).
template <int kPending>
__device__ inline void bulk_wait_group_complete() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(kPending) : "memory");
#endif
}
// Orders this thread's completed async-proxy global writes (the reduce-adds) before its later
// generic accesses, and the reverse.
__device__ inline void fence_async_to_generic_global() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.global;" ::: "memory");
#endif
}
__device__ inline int atomic_add_acq_rel_gpu(int* address, int value) {
  int old = 0;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], %2;"
               : "=r"(old)
               : "l"(address), "r"(value)
               : "memory");
#endif
  return old;
}

// The pair's dQ rows [0, raw_len_q) x the head's kDim columns, fp32 from the workspace (ld.cg: L2,
// never a stale L1 line) times `scale` into 16-bit grad_q, by kThreads threads (`thread` in
// [0, kThreads)): consecutive threads take consecutive 8-column chunks of a row (coalesced), and
// each issues kChunksInFlight chunks' loads before any store, so an SM keeps
// kThreads x kChunksInFlight x 32 bytes in flight.
template <Elem16 E, int kDim, int kThreads>
__device__ inline void convert_pair_grad_q(const AttentionParams& p, const BlockSequence& seq,
                                           float scale, int thread) {
  constexpr int kChunksPerRow = kDim / 8;
  constexpr int kChunksInFlight = 8;
  const std::int64_t stride = static_cast<std::int64_t>(p.heads) * kDim;
  const std::int64_t column0 = static_cast<std::int64_t>(seq.head) * kDim;
  const int chunks = seq.raw_len_q * kChunksPerRow;
  for (int base = 0; base < chunks; base += kThreads * kChunksInFlight) {
    float4 value[kChunksInFlight][2];
#pragma unroll
    for (int k = 0; k < kChunksInFlight; ++k) {
      const int chunk = base + k * kThreads + thread;
      const float* source = p.grad_q_accum + (seq.q_begin + chunk / kChunksPerRow) * stride +
                            column0 + 8 * (chunk % kChunksPerRow);
      const bool inside = chunk < chunks;
      value[k][0] = inside ? __ldcg(reinterpret_cast<const float4*>(source)) : float4{};
      value[k][1] = inside ? __ldcg(reinterpret_cast<const float4*>(source) + 1) : float4{};
    }
#pragma unroll
    for (int k = 0; k < kChunksInFlight; ++k) {
      const int chunk = base + k * kThreads + thread;
      if (chunk >= chunks) continue;
      const uint4 packed{pack2<E>(value[k][0].x * scale, value[k][0].y * scale),
                         pack2<E>(value[k][0].z * scale, value[k][0].w * scale),
                         pack2<E>(value[k][1].x * scale, value[k][1].y * scale),
                         pack2<E>(value[k][1].z * scale, value[k][1].w * scale)};
      *reinterpret_cast<uint4*>(p.grad_q + (seq.q_begin + chunk / kChunksPerRow) * stride +
                                column0 + 8 * (chunk % kChunksPerRow)) = packed;
    }
  }
}

}  // namespace parity::gpu_device::attention
