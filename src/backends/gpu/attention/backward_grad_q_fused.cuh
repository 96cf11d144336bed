// dQ conversion fused into the warp-specialized TMA-reduce backward (kFusedGradQ of
// backward_wgmma_ws_kernel.cuh), instead of the separate fp32 -> 16-bit pass over the workspace.
// Each (sequence, head, 64-row q tile, 64-column half of dQ) has an arrival counter, set by
// attention_grad_q_arrivals_kernel before the backward to the number of kv tiles whose dQ
// reduce-adds reach the tile (the same bwd_q_tile_needed walk the kernel takes, so exact for every
// mask). A reducer thread counts an add down only once the bulk group that carried it completed
// (its global writes performed), after a generic <- async proxy fence, with an acq_rel atomic; the
// reducer that counts a tile to zero has seen every other add (release/acquire through the
// counter) and its warpgroup converts the fp32 tile (L2 reads) into grad_q. The reducer retires a
// step's adds two steps later (wait_group 1: the newest group may still be in flight), so it rarely
// waits. q tiles that no kv tile reaches, and rows past a truncated sequence's end, are zeroed by
// the arrivals kernel. NVIDIA sm_90a only (as the kernel).
#pragma once

#include <cstdint>

#include "backends/gpu/attention/backward_wgmma_kernel.cuh"

namespace parity::gpu_device::attention {

// Whether q tile i (64 rows) sees any of the kv tile's 128 rows from kv0: the producer, the
// consumers and the arrivals kernel walk the same list.
__device__ inline bool bwd_q_tile_needed(const SequenceMask& mask, int i, int kv0) {
  return mask.classify(i * kTileCols, (i + 1) * kTileCols, kv0, kv0 + kBwdWgmmaRows) !=
         TileClass::kEmpty;
}

// Counter of (sequence, head, tile 0, half); tile i's is i x heads x kGradQHalves further
// (grad_q_counter_slots, params.cuh).
__device__ inline std::int64_t grad_q_counter_base(const AttentionParams& p, std::int64_t sequence,
                                                   std::int64_t q_begin, int head, int half) {
  return ((q_begin / kTileCols + sequence) * p.heads + head) * kGradQHalves + half;
}

// One block per sequence (grid-strided): thread per q tile counts the kv tiles that reach it into
// its counters (all heads and halves), or zeroes the tile's grad_q rows where none does.
template <int kDim>
__global__ void attention_grad_q_arrivals_kernel(const AttentionParams p) {
  for (std::int64_t b = blockIdx.x; b < p.batch; b += gridDim.x) {
    const BlockSequence seq = block_sequence(p, b * p.heads);  // the mask is the same per head
    const int q_tiles = (seq.mask.len_q + kTileCols - 1) / kTileCols;
    const int raw_q_tiles = (seq.raw_len_q + kTileCols - 1) / kTileCols;
    const int kv_tiles = (seq.raw_len_kv + kBwdWgmmaRows - 1) / kBwdWgmmaRows;
    for (int i = static_cast<int>(threadIdx.x); i < raw_q_tiles;
         i += static_cast<int>(blockDim.x)) {
      int arrivals = 0;
      for (int t = 0; i < q_tiles && t < kv_tiles; ++t)
        arrivals += bwd_q_tile_needed(seq.mask, i, t * kBwdWgmmaRows) ? 1 : 0;
      if (arrivals > 0) {
        for (int h = 0; h < p.heads; ++h)
          for (int half = 0; half < kGradQHalves; ++half)
            p.grad_q_counters[grad_q_counter_base(p, b, seq.q_begin, h, half) +
                              static_cast<std::int64_t>(i) * p.heads * kGradQHalves] = arrivals;
        continue;
      }
      // No add reaches these rows: grad_q is zero (the separate pass converted zeros).
      const int rows = min(kTileCols, seq.raw_len_q - i * kTileCols);
      const std::int64_t row_chunks = static_cast<std::int64_t>(p.heads) * kDim / 8;
      auto* out =
          reinterpret_cast<uint4*>(p.grad_q + (seq.q_begin + i * kTileCols) * p.heads * kDim);
      for (std::int64_t c = 0; c < rows * row_chunks; ++c) out[c] = uint4{0, 0, 0, 0};
    }
  }
}

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

// One reducer's bookkeeping, in shared memory (no registers across the kv loop): its counters'
// base, the q tiles of its two newest bulk groups (-1: none; [0] the older), and the tile its
// warpgroup converts this step (-1: none).
struct FusedGradQState {
  std::int64_t counter_base;
  int pending[2];
  int convert;
  int unused;
};
inline constexpr int kFusedGradQStateBytes = 2 * static_cast<int>(sizeof(FusedGradQState));

// The reducer: retires its oldest pending group once at most kPending newer ones are in flight,
// and records in state->convert whether its warpgroup converts that tile.
template <int kPending>
__device__ inline void retire_grad_q_adds(const AttentionParams& p, FusedGradQState* state) {
  bulk_wait_group_complete<kPending>();
  const int tile = state->pending[0];
  state->pending[0] = state->pending[1];
  state->pending[1] = -1;
  int convert = -1;
  if (tile >= 0) {
    fence_async_to_generic_global();
    int* const counter = p.grad_q_counters + state->counter_base +
                         static_cast<std::int64_t>(tile) * p.heads * kGradQHalves;
    if (atomic_add_acq_rel_gpu(counter, -1) == 1) convert = tile;  // every other add is visible
  }
  state->convert = convert;
}

// The warpgroup's 128 threads: rows [64 tile, 64 tile + 64) of the sequence (past its raw end:
// the next sequence's, skipped) and dQ columns [64 half, 64 half + 64) of the head, fp32 from the
// workspace (L2: ld.cg, never a stale L1 line) times `scale` into 16-bit grad_q. Per thread four
// 16-byte stores of 8 columns each, all loads issued first.
template <Elem16 E, int kDim>
__device__ inline void convert_grad_q_half(const AttentionParams& p, const BlockSequence& seq,
                                           int tile, int half, float scale, int consumer_thread) {
  constexpr int kChunksPerRow = 64 / 8;
  constexpr int kChunks = kTileCols * kChunksPerRow / kWarpgroupThreads;  // 4
  const std::int64_t stride = static_cast<std::int64_t>(p.heads) * kDim;
  const std::int64_t column = static_cast<std::int64_t>(seq.head) * kDim + 64 * half;
  float4 value[kChunks][2];
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int index = k * kWarpgroupThreads + consumer_thread;
    const int row = tile * kTileCols + index / kChunksPerRow;
    const float* source =
        p.grad_q_accum + (seq.q_begin + row) * stride + column + 8 * (index % kChunksPerRow);
    const bool inside = row < seq.raw_len_q;
    value[k][0] = inside ? __ldcg(reinterpret_cast<const float4*>(source)) : float4{};
    value[k][1] = inside ? __ldcg(reinterpret_cast<const float4*>(source) + 1) : float4{};
  }
#pragma unroll
  for (int k = 0; k < kChunks; ++k) {
    const int index = k * kWarpgroupThreads + consumer_thread;
    const int row = tile * kTileCols + index / kChunksPerRow;
    if (row >= seq.raw_len_q) continue;
    const uint4 packed{pack2<E>(value[k][0].x * scale, value[k][0].y * scale),
                       pack2<E>(value[k][0].z * scale, value[k][0].w * scale),
                       pack2<E>(value[k][1].x * scale, value[k][1].y * scale),
                       pack2<E>(value[k][1].z * scale, value[k][1].w * scale)};
    *reinterpret_cast<uint4*>(p.grad_q + (seq.q_begin + row) * stride + column +
                              8 * (index % kChunksPerRow)) = packed;
  }
}

}  // namespace parity::gpu_device::attention
