// Jagged attention forward on Hopper warpgroup MMA ("wgmma", sm_90a only).
//
// Legend: a block owns one (sequence, head) and kWgmmaRows = 128 q rows; its two warpgroups
// (4 warps each, 256 threads) own 64 rows apiece. Per kv tile j (kTileCols = 64 keys) a warpgroup
//   S_j (64 x 64 fp32) = Q K_j^T    wgmma m64n64k16, Q and K from shared memory (descriptors),
//   P_j = act(alpha S_j) (masked) or the online-softmax exp2 step, rounded to the element type in
//       registers (the D fragments of S are the A fragments of P, wgmma.cuh),
//   O (64 x d fp32) += P_j V_j      wgmma m64n{d}k16, P from registers, V from shared memory
//                                   (MN-major descriptor),
// pipelined inside the warpgroup (FA3's intra-warpgroup overlap): S_j is issued, then the pending
// O += P_{j-1} V_{j-1}; only S_j is waited for, and P_j's activation or softmax runs on the
// CUDA cores while that product runs on the tensor cores. SiLU and sigmoid use tanh.approx (one
// transcendental op per score instead of ex2 + rcp).
// All threads copy with cp.async into the 128-byte-swizzled layout the descriptors expect
// (wgmma.cuh): Q once per q tile, K and V through a four-stage ring (tile j - 1 whose P V product
// is pending, tile j, and tiles j + 1 and j + 2 streaming in); each thread fences the generic
// proxy against the async one before the barrier that publishes a tile. Tiles the mask hides for
// the whole block are never loaded; a warpgroup skips the tiles its 64 rows cannot see; a warp
// evaluates the mask per element only on tiles that partly hide its 16 rows (mask.cuh, shared
// with the mma.sync kernels, as are the softmax step and the epilogue's LSE). Schedule as the
// other forwards: block b takes tile slot b / (batch*heads) counted from the last tile and
// strides by grid_tiles.
// Head dims: d_qk = d_v = kDim in {64, 128}.
#pragma once

#include "backends/gpu/attention/forward_rows128_kernel.cuh"
#include "backends/gpu/attention/wgmma.cuh"

namespace parity::gpu_device::attention {

inline constexpr int kWarpgroupThreads = 128;     // 4 warps: the wgmma issue unit
inline constexpr int kWarpgroupRows = 64;         // q rows per warpgroup (wgmma M)
inline constexpr int kWgmmaTilesAhead = 2;        // K/V tiles copied ahead of the one multiplied
inline constexpr int kWgmmaStages = 4;            // K/V ring: tiles j - 1 (P V pending) .. j + 2
inline constexpr int kSharedAlignBytes = 1024;    // the swizzle period: tile bases align to it

template <int kDim>
constexpr int forward_wgmma_shared_bytes() {
  // Q, the K and V ring, and the slack to align the dynamic shared window to 1024 bytes.
  return (kWgmmaRows * kDim + kWgmmaStages * 2 * kTileCols * kDim) * 2 + kSharedAlignBytes;
}

// Copies rows [row_begin, row_begin + kRows) of a row-major global matrix (row stride
// `row_stride` elements, kCols columns) into the column-blocked swizzled tile at tile_address
// (wgmma.cuh) whose column blocks are kBlockRows rows tall (the tile's own height, or a taller
// tile when the rows are part of one); rows at or past row_limit are zero-filled. Thread
// `thread` of kThreads copies 16-byte chunk thread % (kCols/8) of rows thread / (kCols/8) +
// k * kRowStep; kRowStep is a multiple of 8, so all its rows share one swizzle phase and its
// destination advances by an immediate.
template <int kRows, int kCols, int kThreads, int kBlockRows = kRows>
__device__ inline void copy_rows_swizzled(unsigned tile_address, int thread,
                                          const std::uint16_t* global, std::int64_t row_stride,
                                          int row_begin, int row_limit) {
  constexpr int kChunksPerRow = kCols / 8;
  constexpr int kRowStep = kThreads / kChunksPerRow;
  static_assert(kCols % 64 == 0 && kRowStep % 8 == 0 && kRows % kRowStep == 0,
                "each thread's rows must share row % 8 (one swizzle phase)");
  const int row0 = thread / kChunksPerRow;
  const int chunk = thread % kChunksPerRow;
  const unsigned destination =
      tile_address + static_cast<unsigned>((chunk / 8) * kBlockRows) * kSwizzleRowBytes +
      static_cast<unsigned>(row0) * kSwizzleRowBytes +
      static_cast<unsigned>(((chunk % 8) ^ (row0 % 8)) << 4);
  const std::uint16_t* source = global + (row_begin + row0) * row_stride + chunk * 8;
#pragma unroll
  for (int i = 0; i < kRows / kRowStep; ++i) {
    const bool in_range = row_begin + row0 + i * kRowStep < row_limit;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                     destination + static_cast<unsigned>(i * kRowStep) * kSwizzleRowBytes),
                 "l"(in_range ? source : global), "r"(in_range ? 16 : 0));
#else
    (void)destination, (void)in_range;
#endif
    source += kRowStep * row_stride;
  }
}

// The whole tile, copied by all kWgmmaThreads threads of the round-2 kernel.
template <int kRows, int kCols>
__device__ inline void copy_tile_swizzled(unsigned tile_address, const std::uint16_t* global,
                                          std::int64_t row_stride, int row_begin, int row_limit) {
  copy_rows_swizzled<kRows, kCols, kWgmmaThreads>(tile_address, static_cast<int>(threadIdx.x),
                                                  global, row_stride, row_begin, row_limit);
}

// Issues S (this warpgroup's 64 rows x kKeys keys) = Q K^T as one committed wgmma group; s is
// written asynchronously: read it only after a wgmma_wait_group that covers the group and
// wgmma_fence_operands(s). Q: kWgmmaRows-row tile, this warpgroup's rows start at q_rows_address
// (inside column block 0); K: kKeys-row tile at k_address (64 or 128 keys: one m64n64 or m64n128
// wgmma per k16 step).
template <Elem16 E, int kDim, int kKeys = kTileCols>
__device__ inline void issue_scores(float (&s)[kKeys / 8][4], unsigned q_rows_address,
                                    unsigned k_address) {
  static_assert(kKeys == 64 || kKeys == 128, "S tiles of 64 or 128 keys");
  constexpr unsigned kQBlockBytes = kWgmmaRows * kSwizzleRowBytes;
  constexpr unsigned kKBlockBytes = kKeys * kSwizzleRowBytes;
  constexpr unsigned kUnusedLeadingBytes = 16;  // K-major swizzled: LBO unused (1 by convention)
  const std::uint64_t a0 =
      swizzled_descriptor(q_rows_address, kUnusedLeadingBytes, kSwizzleAtomBytes);
  const std::uint64_t b0 = swizzled_descriptor(k_address, kUnusedLeadingBytes, kSwizzleAtomBytes);
  wgmma_fence_operands(s);
  wgmma_fence();
#pragma unroll
  for (int kc = 0; kc < kDim / 16; ++kc) {
    const unsigned block = static_cast<unsigned>(kc / 4), step_bytes = (kc % 4) * 32u;
    const std::uint64_t a = descriptor_plus(a0, block * kQBlockBytes + step_bytes);
    const std::uint64_t b = descriptor_plus(b0, block * kKBlockBytes + step_bytes);
    wgmma_m64nNk16_ss<E, kKeys>(s, a, b, kc > 0 ? 1 : 0);
  }
  wgmma_commit_group();
}

// Issues O (64 x kDim) += P V as one committed wgmma group (P as A fragments, p[kc]: keys
// 16 kc .. 16 kc + 15; V: kKeys x kDim tile at v_address). Until a wait covers the group,
// neither o nor p may be touched.
template <Elem16 E, int kDim, int kKeys = kTileCols>
__device__ inline void issue_accumulate(float (&o)[kDim / 8][4], std::uint32_t (&p)[kKeys / 16][4],
                                        unsigned v_address) {
  constexpr unsigned kVBlockBytes = kKeys * kSwizzleRowBytes;  // LBO: the next 64 columns
  const std::uint64_t b0 = swizzled_descriptor(v_address, kVBlockBytes, kSwizzleAtomBytes);
  wgmma_fence_operands(o);
  wgmma_fence_operands(p);
  wgmma_fence();
#pragma unroll
  for (int kc = 0; kc < kKeys / 16; ++kc) {
    const std::uint64_t b = descriptor_plus(b0, kc * 16 * kSwizzleRowBytes);
    wgmma_m64nNk16_rs<E, kDim>(o, p[kc], b);
  }
  wgmma_commit_group();
}

// Waits for every wgmma group of this warpgroup; o may be read and p rewritten again (pinning p
// here keeps its registers live, unreused, while the product reads them).
template <int kDim, int kKeys = kTileCols>
__device__ inline void wait_accumulate(float (&o)[kDim / 8][4], std::uint32_t (&p)[kKeys / 16][4]) {
  wgmma_wait_group<0>();
  wgmma_fence_operands(o);
  wgmma_fence_operands(p);
}

// The value, opaque to the optimizer (an empty mov): what is derived from it is neither hoisted
// nor folded with what the optimizer knows of the original.
__device__ inline int opaque(int value) {
  asm volatile("mov.b32 %0, %0;" : "+r"(value));
  return value;
}
__device__ inline std::int64_t opaque(std::int64_t value) {
  asm volatile("mov.b64 %0, %0;" : "+l"(value));
  return value;
}

// tanh.approx.f32: one MUFU op, where sigmoid through exp and a reciprocal takes two (the
// transcendental unit, not the tensor cores, bounds the HSTU forward otherwise). Max relative
// error 2^-11 (PTX ISA 9.1; 2^-10.987 in earlier editions), so sigmoid(x) = 0.5 tanh(x/2) + 0.5
// is off by at most 2^-11.987 and SiLU(x) = x sigmoid(x) by |x| 2^-11.987 (the GPU tests add
// that term to their bound).
__device__ inline float tanh_approx(float x) {
  float y = x;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
#endif
  return y;
}

// x := act(scale x) over a register tile, SiLU and sigmoid through tanh_approx (3 and 3 ops per
// score: FMUL, MUFU, FFMA); the other activations as the mma.sync kernels compute them.
template <int kN>
__device__ inline void activate_tile_tanh(Activation activation, float (&x)[kN][4], float scale) {
  const float half_scale = 0.5f * scale;
  if (activation == Activation::kSilu) {
#pragma unroll
    for (int n = 0; n < kN; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float half_x = x[n][e] * half_scale;  // x sigmoid(x) = x/2 + x/2 tanh(x/2)
        x[n][e] = fmaf(half_x, tanh_approx(half_x), half_x);
      }
  } else if (activation == Activation::kSigmoid) {
#pragma unroll
    for (int n = 0; n < kN; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[n][e] = fmaf(0.5f, tanh_approx(x[n][e] * half_scale), 0.5f);
  } else {
    activate_tile(activation, x, scale);
  }
}

// P_j's weights in place of the scores s (this warp's 16 rows from warp_q0, keys from col0):
// the online-softmax exp2 step (row_max, row_sum, and the O correction) or the activation, and
// the mask where the tile partly hides the warp's rows (`masked`). `silu` (activation is SiLU,
// passed through opaque by the caller) is tested on its own: tested inside the if-chain, the
// compiler turned the activations into a jump table per step (a constant load, a second one for
// the table and an indirect branch on the way to the MUFU work).
template <Mode kMode, int kN>
__device__ inline void tile_weights(float (&s)[kN][4], Activation activation, bool silu,
                                    const SequenceMask& mask,
                                    float score_scale, bool masked, int warp_q0, int col0,
                                    float (&row_max)[2], float (&row_sum)[2],
                                    float (&correction)[2]) {
  if constexpr (kMode == Mode::kSoftmax) {
    if (score_scale > 0.0f) {  // the usual case: scale folded into the exp2 argument
      if (masked) mask_scores(s, mask, warp_q0, col0, -INFINITY);
      online_softmax_weights(s, score_scale, row_max, row_sum, correction);
    } else {
#pragma unroll
      for (int n = 0; n < kN; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[n][e] *= score_scale;
      if (masked) mask_scores(s, mask, warp_q0, col0, -INFINITY);
      online_softmax_weights(s, 1.0f, row_max, row_sum, correction);
    }
  } else {
    (void)row_max, (void)row_sum, (void)correction;
    if (silu) {
      activate_tile_tanh(Activation::kSilu, s, score_scale);
    } else {
      activate_tile_tanh(activation, s, score_scale);
    }
    if (masked) mask_scores(s, mask, warp_q0, col0, 0.0f);
  }
}

// Long on purpose, as the other forwards: one body whose phases share registers and shared memory.
template <Elem16 E, Mode kMode, int kDim>
__global__ void __launch_bounds__(kWgmmaThreads, 1)
    attention_forward_wgmma_kernel(const AttentionParams p) {
  static_assert(kDim == 64 || kDim == 128, "the wgmma forward takes d_qk = d_v in {64, 128}");
  static_assert(kWarpSize == kMmaLanes, "warpgroups are 4 warps of 32 lanes");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const unsigned q_tile =
      (shared_address(shared_bytes) + (kSharedAlignBytes - 1)) & ~unsigned{kSharedAlignBytes - 1};
  constexpr unsigned kTileBytes = kTileCols * kDim * 2;
  const unsigned k_tiles = q_tile + kWgmmaRows * kDim * 2;       // kWgmmaStages x kTileBytes
  const unsigned v_tiles = k_tiles + kWgmmaStages * kTileBytes;  // kWgmmaStages x kTileBytes

  const ForwardBlock<kDim, kDim> block(p);
  const BlockSequence& seq = block.seq;
  const int warpgroup = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  const int warpgroup_row0 = warpgroup * kWarpgroupRows;
  const int warp_row0 = warpgroup_row0 + ((static_cast<int>(threadIdx.x) / kMmaLanes) % 4) * 16;
  const unsigned q_rows_address = q_tile + warpgroup_row0 * kSwizzleRowBytes;
  const float score_scale = kMode == Mode::kSoftmax ? p.alpha * kLog2e : p.alpha;
  const int kv_tile_count = (seq.mask.len_kv + kTileCols - 1) / kTileCols;
  const int q_tile_count = (seq.raw_len_q + kWgmmaRows - 1) / kWgmmaRows;

  for (int tile = p.grid_tiles - 1 - block.slot; tile < q_tile_count; tile += p.grid_tiles) {
    const int q0 = tile * kWgmmaRows;
    int first = -1, last = -1;
    reachable_tiles(seq.mask, q0, q0 + kWgmmaRows, kTileCols, kv_tile_count, first, last);
    __syncthreads();  // the previous tile's shared-memory reads are done
    copy_tile_swizzled<kWgmmaRows, kDim>(q_tile, block.q_base, block.qk_stride, q0,
                                         seq.mask.len_q);
    // cp.async groups, oldest first: {Q, tile first}, {tile first + 1}, then one per step (tile
    // j + 2; empty past the last), so "all but the newest group done" at step j means tile j.
    for (int ahead = 0; ahead < kWgmmaTilesAhead; ++ahead) {
      const int kv_tile = first + ahead;
      if (first >= 0 && kv_tile <= last) {
        copy_tile_swizzled<kTileCols, kDim>(k_tiles + ahead * kTileBytes, block.k_base,
                                            block.qk_stride, kv_tile * kTileCols, seq.mask.len_kv);
        copy_tile_swizzled<kTileCols, kDim>(v_tiles + ahead * kTileBytes, block.v_base,
                                            block.v_stride, kv_tile * kTileCols, seq.mask.len_kv);
      }
      commit_async_copies();
    }

    float o[kDim / 8][4];
#pragma unroll
    for (int n = 0; n < kDim / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.0f, 0.0f};
    const int group_q0 = q0 + warpgroup_row0;
    const int warp_q0 = q0 + warp_row0;

    // Intra-warpgroup pipeline: step j issues S_j = Q K_j^T, then O += P_{j-1} V_{j-1} (P of the
    // previous tile this warpgroup saw, still in registers), waits for S_j only, computes P_j's
    // weights while the P V product runs on the tensor cores, then waits for it (softmax:
    // rescales O) and rounds P_j. A tile this warpgroup cannot see flushes the pending product
    // first, so the pending tile is always the previous one and its stage is not refilled before
    // the product has landed (the ring holds tiles j - 1 .. j + 2).
    std::uint32_t p_frag[kTileCols / 16][4];
    bool pending = false;  // p_frag holds P_{j-1}, its P V product not yet issued
    unsigned pending_v = 0;
    for (int j = first; first >= 0 && j <= last; ++j) {
      const unsigned stage = static_cast<unsigned>((j - first) % kWgmmaStages);
      // Tile j landed for this thread (tile j + 1 may be in flight); the fence hands its writes to
      // the async proxy, and the barrier publishes them and says every warpgroup finished step
      // j - 1 (its wgmma waited), so tile j - 2's stage may take tile j + 2.
      wait_async_copies<kWgmmaTilesAhead - 1>();
      fence_generic_to_async_shared();
      __syncthreads();
      if (j + kWgmmaTilesAhead <= last) {
        const unsigned refill = (stage + kWgmmaTilesAhead) % kWgmmaStages;
        const int kv_row0 = (j + kWgmmaTilesAhead) * kTileCols;
        copy_tile_swizzled<kTileCols, kDim>(k_tiles + refill * kTileBytes, block.k_base,
                                            block.qk_stride, kv_row0, seq.mask.len_kv);
        copy_tile_swizzled<kTileCols, kDim>(v_tiles + refill * kTileBytes, block.v_base,
                                            block.v_stride, kv_row0, seq.mask.len_kv);
      }
      commit_async_copies();
      const int col0 = j * kTileCols;
      // Uniform over the warpgroup (wgmma needs all 128 threads).
      const TileClass group_class =
          seq.mask.classify(group_q0, group_q0 + kWarpgroupRows, col0, col0 + kTileCols);
      if (group_class == TileClass::kEmpty) {
        if (pending) {
          issue_accumulate<E, kDim>(o, p_frag, pending_v);
          wait_accumulate<kDim>(o, p_frag);
          pending = false;
        }
        continue;
      }
      float s[kTileCols / 8][4];
      issue_scores<E, kDim>(s, q_rows_address, k_tiles + stage * kTileBytes);
      if (pending) {
        issue_accumulate<E, kDim>(o, p_frag, pending_v);
        wgmma_wait_group<1>();  // S_j landed; the P V product may still run
      } else {
        wgmma_wait_group<0>();
      }
      wgmma_fence_operands(s);
      const bool masked =
          group_class == TileClass::kPartial &&
          seq.mask.classify(warp_q0, warp_q0 + 16, col0, col0 + kTileCols) != TileClass::kFull;
      float correction[2];
      tile_weights<kMode>(s, p.activation, p.activation == Activation::kSilu, seq.mask,
                          score_scale, masked, warp_q0, col0, row_max, row_sum, correction);
      wait_accumulate<kDim>(o, p_frag);
      if constexpr (kMode == Mode::kSoftmax) rescale_rows<kDim>(o, correction);
      to_a_fragments<E, kTileCols>(p_frag, s);
      pending = true;
      pending_v = v_tiles + stage * kTileBytes;
    }
    if (pending) {
      issue_accumulate<E, kDim>(o, p_frag, pending_v);
      wait_accumulate<kDim>(o, p_frag);
    }
    wait_async_copies<0>();

    store_row_block<E, kMode, kDim>(p, seq, block.v_stride, warp_q0, o, row_max, row_sum);
  }
#else
  // Not an sm_90a binary: no wgmma. The host never launches this body (can_implement_forward
  // refuses); the marker is how it tells: a static shared variable only this body has.
  __shared__ volatile int not_sm90a_marker;
  if (threadIdx.x == 0 && p.batch < 0) not_sm90a_marker = 0;
#endif
}

}  // namespace parity::gpu_device::attention
