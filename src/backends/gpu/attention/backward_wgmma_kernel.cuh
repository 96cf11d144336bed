// Jagged attention backward on Hopper warpgroup MMA ("wgmma", sm_90a only), FA3's dataflow
// (hopper/mainloop_bwd_sm90_tma_gmma_ws.hpp in Dao-AILab/flash-attention) on this project's tiles.
//
// Legend: a block owns one (sequence, head) and kWgmmaRows = 128 kv rows; its two warpgroups own
// 64 kv rows apiece and keep dK, dV (64 x d fp32) for them in registers. The block streams the
// q tiles (kTileCols = 64 rows) that the mask lets see its keys, one tile ahead (Q, dO and, for
// softmax, the row terms lse*log2e and D = dO.O), and per q tile each warpgroup computes
//   S^T  (64 kv x 64 q) = K Q^T    wgmma m64n64k16, K and Q from shared memory (K-major),
//   dP^T (64 kv x 64 q) = V dO^T   the same shape, both issued before either is waited for,
//   P^T = act(alpha S^T) or exp2(alpha log2e S^T - lse2), masked, rounded into A fragments
//       (the D fragments of S^T are the A fragments of P^T, wgmma.cuh),
//   dV += P^T dO                   wgmma m64n{d}k16, P^T from registers, dO MN-major,
//   dS^T = act'(alpha S^T) dP^T or P^T (dP^T - D), rounded into A fragments, also stored to a
//       64 x 64 swizzled shared tile,
//   dK += dS^T Q                   register A, Q MN-major (the same tile S^T read K-major),
//   dQ (64 q x d) = dS K           A = the dS^T tile read MN-major (transposed), B = K MN-major,
//       64 columns at a time, added to the fp32 workspace with vector atomics (red.v2.f32):
//       each warpgroup adds its own 64 kv rows' share, so the two never wait for each other.
// Scales (1/N, alpha) are applied at the end as in the mma.sync backward (backward_kernel.cuh,
// which also supplies the row-terms and dQ-conversion kernels this one is launched between).
// Schedule: block b takes kv tile slot b / (batch*heads) and strides by grid_tiles.
// Head dims: d_qk = d_v = kDim in {64, 128}. Atomics only: no deterministic mode (the host
// refuses it, and the mma.sync backward takes it).
#pragma once

#include "backends/gpu/attention/backward_kernel.cuh"
#include "backends/gpu/attention/forward_wgmma_ws_kernel.cuh"

namespace parity::gpu_device::attention {

inline constexpr int kBwdWgmmaRows = kWgmmaRows;        // kv rows per block
inline constexpr int kBwdWgmmaThreads = kWgmmaThreads;  // two warpgroups
inline constexpr int kBwdDsBarrier0 = 1;                // named barriers 1, 2: a warpgroup's dS^T
inline constexpr int kBwdBlockBarrier = 3;  // deterministic mode: both warpgroups' dS^T

// Q-side stages (Q, dO, row terms of one q tile): two with a block barrier per step; a ring of
// four with mbarriers (the `ring` schedule, below).
constexpr int backward_wgmma_stages(bool ring) { return ring ? 4 : 2; }

template <int kDim, bool kRing>
constexpr int backward_wgmma_shared_bytes() {
  // K and V (128 rows), Q and dO (a stage each of 64 rows), the two warpgroups' dS^T tiles
  // (64 x 64), the row terms (a stage each of {lse2, D} x 64 fp32), the full mbarriers, the
  // alignment slack.
  constexpr int kStages = backward_wgmma_stages(kRing);
  return (2 * kBwdWgmmaRows * kDim + kStages * 2 * kTileCols * kDim +
          2 * kWarpgroupRows * kTileCols) *
             2 +
         kStages * 2 * kTileCols * 4 + kStages * 8 + kSharedAlignBytes;
}

// D (64 x 64 fp32) = A (64 x 16) x B (16 x 64), both through descriptors of MN-major tiles
// (transpose bits 1: A stored [k][m], B stored [k][n]), + D when accumulate != 0.
template <Elem16 E>
__device__ inline void wgmma_m64n64k16_ss_mn_major(float (&d)[8][4], std::uint64_t a_descriptor,
                                                   std::uint64_t b_descriptor, int accumulate) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define PARITY_BWD_WGMMA_SS_T(TYPES)                                                           \
  asm volatile(                                                                                \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                             \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPES                                      \
      " {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,"   \
      "%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, p, 1, 1, 1, 1;\n}\n"                    \
      : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]),             \
        "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), "+f"(d[2][0]), "+f"(d[2][1]),             \
        "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]),             \
        "+f"(d[3][3]), "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]),             \
        "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), "+f"(d[6][0]),             \
        "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]),             \
        "+f"(d[7][2]), "+f"(d[7][3])                                                           \
      : "l"(a_descriptor), "l"(b_descriptor), "r"(accumulate))
  if constexpr (E == Elem16::kBF16) {
    PARITY_BWD_WGMMA_SS_T("bf16.bf16");
  } else {
    PARITY_BWD_WGMMA_SS_T("f16.f16");
  }
#undef PARITY_BWD_WGMMA_SS_T
#else
  (void)d, (void)a_descriptor, (void)b_descriptor, (void)accumulate;
#endif
}

// Issues dQ columns [64 c, 64 c + 64) = dS K over kRows kv rows as one committed group.
// ds_address: the dS^T rows (kRows kv rows x 64 q columns, one column block: a warpgroup's tile,
// or both, which lie back to back); k_rows_address: the first K row inside the 128-row K tile
// (column blocks 128 rows tall).
template <Elem16 E, int kDim, int kRows = kWarpgroupRows>
__device__ inline void issue_grad_q(float (&dq)[8][4], unsigned ds_address,
                                    unsigned k_rows_address, int c) {
  constexpr unsigned kDsBlockBytes = kRows * kSwizzleRowBytes;
  constexpr unsigned kKBlockBytes = kBwdWgmmaRows * kSwizzleRowBytes;
  const std::uint64_t a0 = swizzled_descriptor(ds_address, kDsBlockBytes, kSwizzleAtomBytes);
  const std::uint64_t b0 = swizzled_descriptor(
      k_rows_address + static_cast<unsigned>(c) * kKBlockBytes, kKBlockBytes, kSwizzleAtomBytes);
  wgmma_fence_operands(dq);
  wgmma_fence();
#pragma unroll
  for (int kc = 0; kc < kRows / 16; ++kc) {
    const unsigned step_bytes = static_cast<unsigned>(kc) * 16 * kSwizzleRowBytes;
    wgmma_m64n64k16_ss_mn_major<E>(dq, descriptor_plus(a0, step_bytes),
                                   descriptor_plus(b0, step_bytes), kc > 0 ? 1 : 0);
  }
  wgmma_commit_group();
}

// Adds this thread's share of a 64 x 64 dQ block (q rows from q_row0, columns from 64 c) into
// the fp32 workspace, two adjacent columns per vector atomic; rows at or past len_q belong to
// other sequences (or were truncated) and are skipped.
template <int kDim>
__device__ inline void add_grad_q_block(const AttentionParams& p, const BlockSequence& seq,
                                        const float (&dq)[8][4], int q_row0, int c) {
  const int lane = mma_lane();
  const int warp = (static_cast<int>(threadIdx.x) / kMmaLanes) % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = q_row0 + 16 * warp + lane / 4 + 8 * half;
    if (row >= seq.mask.len_q) continue;
    float* destination = p.grad_q_accum + ((seq.q_begin + row) * p.heads + seq.head) * kDim +
                         64 * c + 2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < 8; ++n) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
      atomicAdd(reinterpret_cast<float2*>(destination + 8 * n),
                make_float2(dq[n][2 * half], dq[n][2 * half + 1]));
#else
      atomicAdd(destination + 8 * n, dq[n][2 * half]);
      atomicAdd(destination + 8 * n + 1, dq[n][2 * half + 1]);
#endif
    }
  }
}

// Stores dS^T's A fragments (this warp's 16 kv rows x 64 q columns) into the warpgroup's
// swizzled dS^T tile (wgmma.cuh layout: row r's 16-byte chunk c at r * 128 + (c ^ r % 8) * 16).
__device__ inline void store_ds_tile(unsigned char* ds_tile, const std::uint32_t (&a)[4][4]) {
  const int lane = mma_lane();
  const int warp = (static_cast<int>(threadIdx.x) / kMmaLanes) % 4;
  const int g = lane / 4, t = lane % 4;
  // Rows 16 warp + g (+ 8) both have row % 8 = g: one base address and one swizzle term.
  unsigned char* const rows = ds_tile + (16 * warp + g) * kSwizzleRowBytes + 4 * t;
  const int swizzle = g << 4;
#pragma unroll
  for (int kc = 0; kc < 4; ++kc) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int chunk = 2 * kc + e / 2;  // a[kc][2], a[kc][3]: columns + 8
      *reinterpret_cast<std::uint32_t*>(rows + 8 * (e % 2) * kSwizzleRowBytes +
                                        ((chunk << 4) ^ swizzle)) = a[kc][e];
    }
  }
}

// Pointwise modes: P^T = act(scale S^T) straight into A fragments (the fp32 P^T is never held:
// registers) and s := act'(scale S^T); both 0 where the mask hides (q, kv) when `masked`. This
// warp's kv rows start at kv_row0, the tile's q columns at q0.
// Value and derivative of the activation at x = scale s: SiLU and sigmoid from one exp2 and one
// reciprocal (sigma = 1 / (1 + 2^(-log2e x)); SiLU' = sigma (1 + x (1 - sigma)) = sigma + sigma
// (x - SiLU)), the others as mask.cuh computes them. kTanhSigmoid: sigma = 0.5 tanh(x/2) + 0.5
// from one tanh.approx (one MUFU op instead of two; the forward's tanh_approx). Its error
// |tanh(x/2)| 2^-10.987 / 2 =: e moves SiLU by |x| e, sigmoid by e, SiLU' by
// |1 + x (1 - 2 sigma)| e + |x| e^2 and sigmoid' by |1 - 2 sigma| e + e^2 (d/dsigma of each form;
// the GPU tests add these terms to their dQ, dK, dV bounds).
template <Activation A, bool kTanhSigmoid = false>
__device__ inline void activation_with_derivative(float s, float scale, float neg_scale_log2e,
                                                  float& value, float& derivative) {
  if constexpr (A == Activation::kSilu || A == Activation::kSigmoid) {
    const float sigma = kTanhSigmoid ? fmaf(0.5f, tanh_approx(0.5f * scale * s), 0.5f)
                                     : fast_divide(1.0f, 1.0f + fast_exp2(s * neg_scale_log2e));
    if constexpr (A == Activation::kSilu) {
      const float x = s * scale;
      value = x * sigma;
      derivative = fmaf(sigma, x - value, sigma);
    } else {
      value = sigma;
      derivative = fmaf(-sigma, sigma, sigma);
    }
  } else {
    value = activation_value<A>(s * scale);
    derivative = activation_derivative<A>(s * scale);
  }
}
// Under a plain causal mask (mask.plain_causal()), this thread's kv rows (kv_row0 + g, + 8) are
// seen by the q columns [lo, hi) (plain_causal_mask.hpp), here relative to the lane's first
// column q0 + 2t, so each score of the mask pass compares its constant offset n * 8 + j.
struct KvRowsSeen {
  int lo[2], hi[2];
};
__device__ inline KvRowsSeen plain_causal_kv_rows_seen(const SequenceMask& mask, int q0,
                                                       int kv_row0) {
  const int g = mma_lane() / 4, t = mma_lane() % 4;
  const PlainCausalLengths lengths = mask.plain_causal_lengths();
  KvRowsSeen seen;
#pragma unroll
  for (int pair = 0; pair < 2; ++pair) {
    const int kv_row = kv_row0 + g + 8 * pair;
    seen.lo[pair] = kv_row - q0 - 2 * t;
    seen.hi[pair] = causal_column_seen_end(lengths, kv_row) - q0 - 2 * t;
  }
  return seen;
}
__device__ inline bool kv_row_seen(const KvRowsSeen& seen, int pair, int offset) {
  return offset >= seen.lo[pair] && offset < seen.hi[pair];
}
// Calls hide(n, e) for every score s[n][e] of this thread's S^T tile (kv rows from kv_row0, q
// columns from q0) that the mask hides. One loop per form under one branch: a select per score
// would compute both.
template <typename Hide>
__device__ inline void for_each_hidden_score(const SequenceMask& mask, int q0, int kv_row0,
                                             Hide&& hide) {
  if (mask.plain_causal()) {
    const KvRowsSeen seen = plain_causal_kv_rows_seen(mask, q0, kv_row0);
#pragma unroll
    for (int n = 0; n < kTileCols / 8; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (!kv_row_seen(seen, e / 2, n * 8 + (e % 2))) hide(n, e);
    return;
  }
  const int g = mma_lane() / 4, t = mma_lane() % 4;
#pragma unroll
  for (int n = 0; n < kTileCols / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      if (!mask.valid(q0 + n * 8 + 2 * t + (e % 2), kv_row0 + g + (e / 2) * 8)) hide(n, e);
}

template <Elem16 E, Activation A, bool kTanhSigmoid = false>
__device__ inline void pointwise_weights(float (&s)[kTileCols / 8][4],
                                         std::uint32_t (&pt)[kTileCols / 16][4], float scale,
                                         const SequenceMask& mask, bool masked, int q0,
                                         int kv_row0) {
  const float neg_scale_log2e = -scale * kLog2e;
#pragma unroll
  for (int n = 0; n < kTileCols / 8; ++n) {
#pragma unroll
    for (int pair = 0; pair < 2; ++pair) {  // rows g and g + 8
      float value[2];
#pragma unroll
      for (int j = 0; j < 2; ++j)
        activation_with_derivative<A, kTanhSigmoid>(s[n][2 * pair + j], scale, neg_scale_log2e,
                                                    value[j], s[n][2 * pair + j]);
      // to_a_fragments' order: a[kc][0..1] from C tile 2kc, a[kc][2..3] from C tile 2kc + 1.
      pt[n / 2][2 * (n % 2) + pair] = pack2<E>(value[0], value[1]);
    }
  }
  if (!masked) return;  // as in softmax_weights: the mask pass only on partial tiles
  for_each_hidden_score(mask, q0, kv_row0, [&](int n, int e) {
    s[n][e] = 0.0f;
    // pack2 puts its first value in the low half.
    pt[n / 2][2 * (n % 2) + e / 2] &= e % 2 == 0 ? 0xffff0000u : 0x0000ffffu;
  });
}
template <Elem16 E, bool kTanhSigmoid = false>
__device__ inline void pointwise_weights(Activation activation, float (&s)[kTileCols / 8][4],
                                         std::uint32_t (&pt)[kTileCols / 16][4], float scale,
                                         const SequenceMask& mask, bool masked, int q0,
                                         int kv_row0) {
  switch (activation) {
    case Activation::kSilu:
      return pointwise_weights<E, Activation::kSilu, kTanhSigmoid>(s, pt, scale, mask, masked, q0,
                                                                   kv_row0);
    case Activation::kGelu:
      return pointwise_weights<E, Activation::kGelu, kTanhSigmoid>(s, pt, scale, mask, masked, q0,
                                                                   kv_row0);
    case Activation::kRelu:
      return pointwise_weights<E, Activation::kRelu, kTanhSigmoid>(s, pt, scale, mask, masked, q0,
                                                                   kv_row0);
    case Activation::kSigmoid:
      return pointwise_weights<E, Activation::kSigmoid, kTanhSigmoid>(s, pt, scale, mask, masked,
                                                                      q0, kv_row0);
  }
}

// Softmax P^T in place of S^T (this warp's kv rows from kv_row0, the tile's q columns from q0):
// exp2(scale S^T - lse2), zero where the mask hides (q, kv) when `masked`. The mask pass is a
// separate loop under one branch: tested per score inside the exp2 loop, every MUFU.EX2 got its
// own branch in the SASS (no two back to back) on unmasked tiles too, 9-10% of the backward.
__device__ inline void softmax_weights(float (&s)[kTileCols / 8][4], const float* lse2,
                                       float score_scale, const SequenceMask& mask, bool masked,
                                       int q0, int kv_row0) {
  const int t = mma_lane() % 4;
#pragma unroll
  for (int n = 0; n < kTileCols / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      s[n][e] = fast_exp2(s[n][e] * score_scale - lse2[n * 8 + 2 * t + (e % 2)]);
  if (!masked) return;
  for_each_hidden_score(mask, q0, kv_row0, [&](int n, int e) { s[n][e] = 0.0f; });
}

// One step's score half, shared by the wgmma and ws kernels: issues S^T = K Q^T and dP^T = V dO^T,
// turns S^T into P^T (kept in s: P^T for softmax, act'(alpha S^T) pointwise) and its A fragments,
// and issues dV += P^T dO. On return dP^T and dV are in flight (wgmma groups); the caller picks how
// far to wait. `activation` is a constant in the ws kernel (the switch folds away); kTanhSigmoid
// as in activation_with_derivative.
template <Elem16 E, Mode kMode, int kDim, bool kTanhSigmoid = false>
__device__ __forceinline__ void issue_scores_weights_grad_v(
    float (&s)[kTileCols / 8][4], float (&dp)[kTileCols / 8][4],
    std::uint32_t (&pt_frag)[kTileCols / 16][4], float (&dv)[kDim / 8][4], unsigned k_rows,
    unsigned v_rows, unsigned q_address, unsigned do_address, const float* lse2,
    Activation activation, float score_scale, const SequenceMask& mask, bool masked, int q0,
    int kv_row0) {
  issue_scores<E, kDim>(s, k_rows, q_address);
  issue_scores<E, kDim>(dp, v_rows, do_address);
  wgmma_wait_group<1>();  // S^T landed; dP^T may still run
  wgmma_fence_operands(s);
  if constexpr (kMode == Mode::kSoftmax) {
    (void)activation;
    softmax_weights(s, lse2, score_scale, mask, masked, q0, kv_row0);
    to_a_fragments<E, kTileCols>(pt_frag, s);
  } else {
    (void)lse2;
    pointwise_weights<E, kTanhSigmoid>(activation, s, pt_frag, score_scale, mask, masked, q0,
                                       kv_row0);
  }
  issue_accumulate<E, kDim>(dv, pt_frag, do_address);  // dV += P^T dO
}

// dS^T in place of dP^T: P^T (dP^T - D) (softmax; s holds P^T) or act'(alpha S^T) dP^T
// (pointwise; s holds the derivative).
template <Mode kMode>
__device__ inline void grad_scores(float (&dp)[kTileCols / 8][4], const float (&s)[kTileCols / 8][4],
                                   const float* row_dot) {
  const int t = mma_lane() % 4;
#pragma unroll
  for (int n = 0; n < kTileCols / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      if constexpr (kMode == Mode::kSoftmax) {
        dp[n][e] = s[n][e] * (dp[n][e] - row_dot[n * 8 + 2 * t + (e % 2)]);
      } else {
        (void)row_dot;
        dp[n][e] = s[n][e] * dp[n][e];
      }
    }
}

// Stores this warp's dK, dV rows (16 kv rows from kv_row0 of the sequence, scaled, rounded to the
// element type); rows at or past the sequence's length are skipped.
template <Elem16 E, int kDim>
__device__ inline void store_grad_kv(const AttentionParams& p, const ForwardBlock<kDim, kDim>& block,
                                     const float (&dk)[kDim / 8][4], const float (&dv)[kDim / 8][4],
                                     int kv_row0, float grad_k_scale, float grad_v_scale) {
  const BlockSequence& seq = block.seq;
  const int g = mma_lane() / 4, t = mma_lane() % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = kv_row0 + g + half * 8;
    if (row >= seq.raw_len_kv) continue;
    auto* k_row = reinterpret_cast<std::uint32_t*>(
        p.grad_k + (seq.kv_begin + row) * block.qk_stride + seq.head * kDim);
    auto* v_row = reinterpret_cast<std::uint32_t*>(
        p.grad_v + (seq.kv_begin + row) * block.v_stride + seq.head * kDim);
#pragma unroll
    for (int n = 0; n < kDim / 8; ++n) {
      k_row[n * 4 + t] =
          pack2<E>(dk[n][2 * half] * grad_k_scale, dk[n][2 * half + 1] * grad_k_scale);
      v_row[n * 4 + t] =
          pack2<E>(dv[n][2 * half] * grad_v_scale, dv[n][2 * half + 1] * grad_v_scale);
    }
  }
}

// Long on purpose, as the other attention kernels: one body whose phases share registers.
// kRing: the ring schedule. Without it, one block barrier per q tile publishes the tile (copied
// one ahead) and frees the buffer of the previous one, so the two warpgroups run each step in
// lockstep (their exp and atomic phases coincide while the tensor cores idle). With it, Q-side
// tiles are copied two ahead into a ring of four stages and published per stage by an mbarrier
// (256 arrivals: every thread after its copies of the tile landed and were fenced); a thread
// publishes tile i + 1 in step i and waits for tile i, so a warpgroup runs at most one step
// ahead of the other, and the stage refilled in step i (tile i + 2's, last read in step i - 2)
// is free without an empty barrier: a warpgroup in step i saw tile i published by the other one,
// which the other did after finishing step i - 2.
// kDeterministic (lockstep schedule only; the host launches one block per (sequence, head), which
// walks its kv tiles in order): dQ is not split by kv rows between the warpgroups but by columns
// (warpgroup w adds columns [64 w, 64 w + 64) over all 128 kv rows, after a block barrier that
// completes both dS^T tiles; at d = 64 warpgroup 0 adds them all), so every dQ element gets its
// adds from one thread in kv-tile order: the same fire-and-forget atomics, a bitwise-repeatable
// sum.
template <Elem16 E, Mode kMode, int kDim, bool kRing, bool kDeterministic>
__global__ void __launch_bounds__(kBwdWgmmaThreads, 1)
    attention_backward_wgmma_kernel(const AttentionParams p) {
  static_assert(kDim == 64 || kDim == 128, "the wgmma backward takes d_qk = d_v in {64, 128}");
  static_assert(kWarpSize == kMmaLanes, "warpgroups are 4 warps of 32 lanes");
  static_assert(!(kRing && kDeterministic), "the deterministic mode runs the lockstep schedule");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const unsigned base = shared_address(shared_bytes);
  const unsigned k_tile = (base + (kSharedAlignBytes - 1)) & ~unsigned{kSharedAlignBytes - 1};
  constexpr unsigned kKvTileBytes = kBwdWgmmaRows * kDim * 2;
  constexpr unsigned kQTileBytes = kTileCols * kDim * 2;
  constexpr unsigned kDsTileBytes = kWarpgroupRows * kTileCols * 2;
  const unsigned v_tile = k_tile + kKvTileBytes;
  constexpr int kStages = backward_wgmma_stages(kRing);
  const unsigned q_tiles = v_tile + kKvTileBytes;             // kStages x kQTileBytes
  const unsigned do_tiles = q_tiles + kStages * kQTileBytes;  // kStages x kQTileBytes
  const unsigned ds_tiles = do_tiles + kStages * kQTileBytes;  // 2 warpgroups x kDsTileBytes
  const unsigned row_terms_address = ds_tiles + 2 * kDsTileBytes;  // kStages x {lse2, D} x 64
  const unsigned full = row_terms_address + kStages * 2 * kTileCols * 4;  // kStages mbarriers
  unsigned char* const shared_window = shared_bytes + (k_tile - base);
  auto* const row_terms = reinterpret_cast<float*>(shared_window + (row_terms_address - k_tile));
  if (kRing && threadIdx.x == 0) {
    for (int stage = 0; stage < kStages; ++stage)
      mbarrier_init(full + stage * 8, kBwdWgmmaThreads);
  }  // published by the kv-tile loop's first barrier

  const ForwardBlock<kDim, kDim> block(p);  // (sequence, head), slot, strides, bases
  const BlockSequence& seq = block.seq;
  // Broadcast from lane 0 so ptxas sees a warp-uniform role (see the forward_ws kernel).
  const int warpgroup = shfl(static_cast<int>(threadIdx.x) / kWarpgroupThreads, 0);
  const int warpgroup_row0 = warpgroup * kWarpgroupRows;
  const int warp_row0 = warpgroup_row0 + ((static_cast<int>(threadIdx.x) / kMmaLanes) % 4) * 16;
  const unsigned k_rows = k_tile + warpgroup_row0 * kSwizzleRowBytes;
  const unsigned v_rows = v_tile + warpgroup_row0 * kSwizzleRowBytes;
  const unsigned ds_tile = ds_tiles + warpgroup * kDsTileBytes;
  unsigned char* const ds_tile_pointer = shared_window + (ds_tile - k_tile);
  const float score_scale = kMode == Mode::kSoftmax ? p.alpha * kLog2e : p.alpha;
  const float grad_k_scale = kMode == Mode::kSoftmax ? p.alpha : p.alpha * p.inv_max_seq_len;
  const float grad_v_scale = kMode == Mode::kSoftmax ? 1.0f : p.inv_max_seq_len;
  const int q_tile_count = (seq.mask.len_q + kTileCols - 1) / kTileCols;
  const int kv_tile_count = (seq.raw_len_kv + kBwdWgmmaRows - 1) / kBwdWgmmaRows;
  const int thread = static_cast<int>(threadIdx.x);

  // Starts the copies of q tile `tile` into buffer `buffer` (one cp.async group with the caller's).
  const auto load_q_side = [&](int tile, int buffer) {
    const int row0 = tile * kTileCols;
    copy_rows_swizzled<kTileCols, kDim, kBwdWgmmaThreads>(q_tiles + buffer * kQTileBytes, thread,
                                                          block.q_base, block.qk_stride, row0,
                                                          seq.mask.len_q);
    copy_rows_swizzled<kTileCols, kDim, kBwdWgmmaThreads>(
        do_tiles + buffer * kQTileBytes, thread,
        p.grad_out + seq.q_begin * block.v_stride + seq.head * kDim, block.v_stride, row0,
        seq.mask.len_q);
    if constexpr (kMode == Mode::kSoftmax)
      load_row_terms_async(p, seq, row0, row_terms, buffer, thread);
  };

  int ring_base = 0;  // ring position of this kv tile's first q tile (counts across kv tiles)
  // Under a causal mask the first kv tiles are seen by the most q rows: slot 0 takes tile 0.
  for (int tile = block.slot; tile < kv_tile_count; tile += p.grid_tiles) {
    const int kv0 = tile * kBwdWgmmaRows;
    const int group_kv0 = kv0 + warpgroup_row0;
    int first = -1, last = -1;
    for (int i = 0; i < q_tile_count; ++i) {
      if (seq.mask.classify(i * kTileCols, (i + 1) * kTileCols, kv0, kv0 + kBwdWgmmaRows) ==
          TileClass::kEmpty)
        continue;
      if (first < 0) first = i;
      last = i;
    }
    __syncthreads();  // the previous kv tile's products (all waited for) are done
    copy_rows_swizzled<kBwdWgmmaRows, kDim, kBwdWgmmaThreads>(
        k_tile, thread, block.k_base, block.qk_stride, kv0, seq.mask.len_kv);
    copy_rows_swizzled<kBwdWgmmaRows, kDim, kBwdWgmmaThreads>(
        v_tile, thread, block.v_base, block.v_stride, kv0, seq.mask.len_kv);
    if (first >= 0) load_q_side(first, ring_base % kStages);
    commit_async_copies();
    if constexpr (kRing) {  // tile first + 1: the ring copies two ahead
      if (first >= 0 && first + 1 <= last) load_q_side(first + 1, (ring_base + 1) % kStages);
      commit_async_copies();
    }

    float dk[kDim / 8][4];
    float dv[kDim / 8][4];
#pragma unroll
    for (int n = 0; n < kDim / 8; ++n) {
      dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = 0.0f;
      dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.0f;
    }

    for (int i = first; first >= 0 && i <= last; ++i) {
      const int position = ring_base + (i - first);
      const int buffer = position % kStages;
      if constexpr (kRing) {
        // cp.async groups, oldest first: ..., tile i + 1, tile i + 2 (empty past the last), so
        // "all but the newest done" covers tiles i and i + 1 for this thread.
        if (i + 2 <= last) load_q_side(i + 2, (position + 2) % kStages);
        commit_async_copies();
        wait_async_copies<1>();
        fence_generic_to_async_shared();
        if (i == first) mbarrier_arrive(full + buffer * 8);
        if (i + 1 <= last) mbarrier_arrive(full + ((position + 1) % kStages) * 8);
        mbarrier_wait(full + buffer * 8, static_cast<unsigned>(position / kStages) & 1u);
      } else {
        // Tile i landed for this thread; the fence hands it to the async proxy, and the barrier
        // publishes it and says both warpgroups finished step i - 1, whose buffer takes tile
        // i + 1.
        wait_async_copies<0>();
        fence_generic_to_async_shared();
        __syncthreads();
        if (i < last) load_q_side(i + 1, (position + 1) % kStages);
        commit_async_copies();
      }
      const int q0 = i * kTileCols;
      // Uniform over the warpgroup (wgmma needs all 128 threads).
      const TileClass group_class =
          seq.mask.classify(q0, q0 + kTileCols, group_kv0, group_kv0 + kWarpgroupRows);
      // Deterministic mode: dQ of the whole 128-row tile, this warpgroup's column block, once
      // both dS^T tiles are complete (the next step's block barrier protects them from rewrites).
      const auto deterministic_grad_q = [&]() {
        fence_generic_to_async_shared();
        named_barrier_sync(kBwdBlockBarrier, kBwdWgmmaThreads);
        if (warpgroup < kDim / 64) {
          float dq[8][4];
          issue_grad_q<E, kDim, kBwdWgmmaRows>(dq, ds_tiles, k_tile, warpgroup);
          wgmma_wait_group<0>();
          wgmma_fence_operands(dq);
          add_grad_q_block<kDim>(p, seq, dq, q0, warpgroup);
        }
      };
      if (group_class == TileClass::kEmpty) {
        if constexpr (kDeterministic) {
          const int other_kv0 = kv0 + (1 - warpgroup) * kWarpgroupRows;
          if (seq.mask.classify(q0, q0 + kTileCols, other_kv0, other_kv0 + kWarpgroupRows) !=
              TileClass::kEmpty) {  // the other warpgroup's dQ rows need this tile: zeros
            const int group_thread = thread % kWarpgroupThreads;
#pragma unroll
            for (int k = 0; k < static_cast<int>(kDsTileBytes) / (16 * kWarpgroupThreads); ++k)
              *reinterpret_cast<uint4*>(ds_tile_pointer + (k * kWarpgroupThreads + group_thread) *
                                                              16) = uint4{0, 0, 0, 0};
            deterministic_grad_q();
          }
        }
        continue;
      }
      const unsigned q_address = q_tiles + buffer * kQTileBytes;
      const unsigned do_address = do_tiles + buffer * kQTileBytes;
      const float* lse2 = row_terms + (buffer * 2) * kTileCols;
      const float* row_dot = row_terms + (buffer * 2 + 1) * kTileCols;

      float s[kTileCols / 8][4];   // S^T, then P^T (softmax) or act'(alpha S^T) (pointwise)
      float dp[kTileCols / 8][4];  // dP^T, then dS^T
      std::uint32_t pt_frag[kTileCols / 16][4];
      issue_scores_weights_grad_v<E, kMode, kDim>(
          s, dp, pt_frag, dv, k_rows, v_rows, q_address, do_address, lse2, p.activation,
          score_scale, seq.mask, group_class == TileClass::kPartial, q0, kv0 + warp_row0);
      wgmma_wait_group<1>();  // dP^T landed; dV may still run
      wgmma_fence_operands(dp);
      grad_scores<kMode>(dp, s, row_dot);
      std::uint32_t ds_frag[kTileCols / 16][4];
      to_a_fragments<E, kTileCols>(ds_frag, dp);
      issue_accumulate<E, kDim>(dk, ds_frag, q_address);  // dK += dS^T Q
      // The previous step's dQ products read the dS^T tile and were waited for.
      store_ds_tile(ds_tile_pointer, ds_frag);
      if constexpr (kDeterministic) {
        deterministic_grad_q();
        wgmma_wait_group<0>();  // dV and dK (a warpgroup without dQ columns waits here)
      } else {
        fence_generic_to_async_shared();
        named_barrier_sync(kBwdDsBarrier0 + warpgroup, kWarpgroupThreads);
#pragma unroll 1  // unrolled, the second block's products are hoisted into the first's registers
        for (int c = 0; c < kDim / 64; ++c) {
          float dq[8][4];
          issue_grad_q<E, kDim>(dq, ds_tile, k_rows, c);
          wgmma_wait_group<0>();
          wgmma_fence_operands(dq);
          add_grad_q_block<kDim>(p, seq, dq, q0, c);
        }
      }
      wgmma_fence_operands(dv);
      wgmma_fence_operands(dk);
      wgmma_fence_operands(pt_frag);
      wgmma_fence_operands(ds_frag);
      // Every thread of the warpgroup read its dQ before the tile is rewritten next step.
      named_barrier_sync(kBwdDsBarrier0 + warpgroup, kWarpgroupThreads);
    }
    wait_async_copies<0>();
    if (first >= 0) ring_base += last - first + 1;
    store_grad_kv<E, kDim>(p, block, dk, dv, kv0 + warp_row0, grad_k_scale, grad_v_scale);
  }
#else
  // Not an sm_90a binary: no wgmma. The host never launches this body (can_implement_backward
  // refuses off sm_90a).
  (void)p;
#endif
}

}  // namespace parity::gpu_device::attention
