// Jagged attention forward, 128-row variant ("rows128"): the FlashAttention-2 block shape for
// d <= 128 on sm_80/sm_90 tensor cores (mma.sync).
//
// Legend: a block owns one (sequence, head) and kRows128 = 128 q rows; its 4 mma groups own 32
// rows each (two 16-row m blocks), so every K and V fragment read from shared memory feeds two
// mma instead of one (the 64-row kernel, 16 rows per group, is bound by shared-memory reads).
// K and V stream through two shared buffers each, in separate cp.async groups: S = Q K_j^T starts
// as soon as K_j has landed while V_j is still in flight, and the copy of K_{j+1} / V_{j+1}
// overlaps the products of step j. P is rounded to the element type in registers and fed to the
// P V mma directly (C fragments of S are A fragments of P). Tiles the mask hides for the whole
// block are never loaded; a group skips the (kv tile) steps its 32 rows cannot see; only 16-row
// blocks that the mask partly hides evaluate it per element. Q stays in shared memory (32 rows x
// d in registers would not fit beside the 32 x d fp32 accumulators).
// Schedule as the 64-row kernel: block b takes tile slot b / (batch*heads) counted from the last
// tile (most keys under a causal mask first) and strides by grid_tiles.
#pragma once

#include "backends/gpu/attention/forward_kernel.cuh"

namespace parity::gpu_device::attention {

inline constexpr int kRows128GroupRows = kRows128 / (kRows128Threads / kMmaLanes);  // 32
inline constexpr int kRows128MBlocks = kRows128GroupRows / 16;                      // 2
// Keys per product: a 64-key tile is multiplied in two halves so that S (32 x 32 fp32) and P
// (its bf16 A fragments) fit beside the 32 x d_v accumulators without spilling; Q's fragments are
// read twice per tile for it.
inline constexpr int kRows128SubCols = 32;

template <int kDimQk, int kDimV>
constexpr int forward_rows128_shared_bytes() {
  return (kRows128 * kDimQk + 2 * kTileCols * (kDimQk + kDimV)) * 2;
}

#if defined(__CUDA_ARCH__) && !defined(PARITY_ATTENTION_SM80)
#error "the 128-row attention kernel needs sm_80+ (mma.sync, ldmatrix, cp.async)"
#endif

__device__ inline unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// The value, hidden from the optimiser: addresses derived from it inside the kv loop are then
// computed there (an add the ldmatrix immediate absorbs) instead of one hoisted register each.
__device__ inline unsigned opaque(unsigned value) {
#if defined(PARITY_ATTENTION_SM80)
  asm volatile("" : "+r"(value));
#endif
  return value;
}

// Copies rows [row_begin, row_begin + kRows) of a row-major global matrix (row stride
// `row_stride` elements, kCols columns) into the swizzled shared tile at tile_address; rows at or
// past `row_limit` are zero-filled. A thread copies one 16-byte chunk column every kRowStep rows:
// its source pointer advances by a constant step and its destination by an immediate, so no
// per-chunk address stays live across the kv loop (load_tile_async's do, and spill here).
template <int kRows, int kCols, int kThreads>
__device__ inline void copy_tile_rows(unsigned tile_address, const std::uint16_t* global,
                                      std::int64_t row_stride, int row_begin, int row_limit) {
  constexpr int kChunksPerRow = kCols / 8;
  constexpr int kRowStep = kThreads / kChunksPerRow;
  static_assert(kThreads % kChunksPerRow == 0 && kRowStep % 8 == 0 && kRows % kRowStep == 0,
                "each thread's rows must share row % 8 (one swizzle phase)");
  const int row0 = static_cast<int>(threadIdx.x) / kChunksPerRow;
  const int chunk = static_cast<int>(threadIdx.x) % kChunksPerRow;
  const unsigned destination =
      tile_address + static_cast<unsigned>(row0 * kCols * 2 + ((chunk ^ (row0 & 7)) << 4));
  const std::uint16_t* source = global + (row_begin + row0) * row_stride + chunk * 8;
#pragma unroll
  for (int i = 0; i < kRows / kRowStep; ++i) {
    const bool in_range = row_begin + row0 + i * kRowStep < row_limit;
#if defined(PARITY_ATTENTION_SM80)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(
                     destination + static_cast<unsigned>(i * kRowStep * kCols * 2)),
                 "l"(in_range ? source : global), "r"(in_range ? 16 : 0));
#else
    (void)destination;  // host pass only
#endif
    source += kRowStep * row_stride;
  }
}

// Byte offsets, inside a swizzled tile of kCols 16-bit columns (swizzled_offset), of the fragment
// row this lane addresses (row % 8 == lane % 8) at 16-byte chunk 2 c + chunk_bit, c = 0, 1, ...:
// the chunk is XORed with row % 8, which for c >= 4 only adds 128 bytes per 4 c, so four phases
// and an immediate cover every c. Computing each address from scratch instead lets the compiler
// hoist one register per (c, fragment) out of the kv loop, which spills.
template <int kCols>
struct FragmentOffsets {
  static_assert(kCols % 64 == 0, "swizzled tiles need at least 8 chunks per row");
  unsigned phase[4];
  __device__ FragmentOffsets(int row, int chunk_bit) {
    const int x = chunk_bit ^ (row & 7);
#pragma unroll
    for (int i = 0; i < 4; ++i)
      phase[i] = static_cast<unsigned>(row * kCols * 2 + (((2 * i) ^ x) << 4));
  }
  __device__ unsigned at(int c) const {
    return phase[c & 3] + static_cast<unsigned>(c >> 2) * 128u;
  }
};

// C (kM*16 x kCols) = A (kM*16 rows at a_address, kDepth columns) x B^T (kCols rows at
// b_address, kDepth columns). Each B fragment feeds kM mma. a_offsets: row lane%8 +
// ((lane/8)&1)*8, chunk bit lane/16; b_offsets: row (lane/16)*8 + lane%8, chunk bit (lane/8)&1.
template <Elem16 E, int kM, int kDepth, int kCols>
__device__ inline void multiply_row_blocks_by_rows_t(float (&c)[kM][kCols / 8][4],
                                                     unsigned a_address,
                                                     const FragmentOffsets<kDepth>& a_offsets,
                                                     unsigned b_address,
                                                     const FragmentOffsets<kDepth>& b_offsets) {
  constexpr unsigned kRowBlockBytes = 16 * kDepth * 2;
#pragma unroll
  for (int m = 0; m < kM; ++m)
#pragma unroll
    for (int n = 0; n < kCols / 8; ++n) c[m][n][0] = c[m][n][1] = c[m][n][2] = c[m][n][3] = 0.0f;
#pragma unroll
  for (int kc = 0; kc < kDepth / 16; ++kc) {
    std::uint32_t a[kM][4];
#pragma unroll
    for (int m = 0; m < kM; ++m)
      load_fragments_x4_shared<false>(a[m], a_address + a_offsets.at(kc) + m * kRowBlockBytes);
#pragma unroll
    for (int n2 = 0; n2 < kCols / 16; ++n2) {
      std::uint32_t b[4];
      load_fragments_x4_shared<false>(b, b_address + b_offsets.at(kc) + n2 * kRowBlockBytes);
      const std::uint32_t b_even[2] = {b[0], b[1]};
      const std::uint32_t b_odd[2] = {b[2], b[3]};
#pragma unroll
      for (int m = 0; m < kM; ++m) {
        mma_16x8x16<E>(c[m][2 * n2], a[m], b_even);
        mma_16x8x16<E>(c[m][2 * n2 + 1], a[m], b_odd);
      }
    }
  }
}

// acc (kM*16 x kDim) += P x B (kDepth rows at b_address, kDim columns), P given as A fragments
// (p[m][kc]: 16 rows x 16 keys of m block m, already rounded to the element type). b_offsets:
// row ((lane/8)&1)*8 + lane%8, chunk bit lane/16 (transposed loads).
template <Elem16 E, int kM, int kDepth, int kDim>
__device__ inline void accumulate_row_blocks(float (&acc)[kM][kDim / 8][4],
                                             const std::uint32_t (&p)[kM][kDepth / 16][4],
                                             unsigned b_address,
                                             const FragmentOffsets<kDim>& b_offsets) {
  constexpr int kGroup = 2;  // B fragments loaded together before their products
  static_assert((kDim / 16) % kGroup == 0, "kDim must be a multiple of 32");
#pragma unroll
  for (int kc = 0; kc < kDepth / 16; ++kc) {
#pragma unroll
    for (int g0 = 0; g0 < kDim / 16; g0 += kGroup) {
      std::uint32_t b[kGroup][4];
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
        load_fragments_x4_shared<true>(b[i], b_address + b_offsets.at(g0 + i) + kc * 16 * kDim * 2);
      }
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
        const std::uint32_t b_even[2] = {b[i][0], b[i][1]};
        const std::uint32_t b_odd[2] = {b[i][2], b[i][3]};
#pragma unroll
        for (int m = 0; m < kM; ++m) {
          mma_16x8x16<E>(acc[m][2 * (g0 + i)], p[m][kc], b_even);
          mma_16x8x16<E>(acc[m][2 * (g0 + i) + 1], p[m][kc], b_odd);
        }
      }
    }
  }
}

// C fragments of a 16 x kCols fp32 tile -> A fragments of the same tile in the element type:
// a[kc] covers keys [16 kc, 16 kc + 16) (A[g][2t..] is C tile 2kc's [0..1], A[g+8][2t..] its
// [2..3], the +8 columns come from C tile 2kc+1).
template <Elem16 E, int kCols>
__device__ inline void to_a_fragments(std::uint32_t (&a)[kCols / 16][4],
                                      const float (&c)[kCols / 8][4]) {
#pragma unroll
  for (int kc = 0; kc < kCols / 16; ++kc) {
    a[kc][0] = pack2<E>(c[2 * kc][0], c[2 * kc][1]);
    a[kc][1] = pack2<E>(c[2 * kc][2], c[2 * kc][3]);
    a[kc][2] = pack2<E>(c[2 * kc + 1][0], c[2 * kc + 1][1]);
    a[kc][3] = pack2<E>(c[2 * kc + 1][2], c[2 * kc + 1][3]);
  }
}

// The weights of this group's 32 rows (at q_address) for keys [col0, col0 + kRows128SubCols)
// (at k_address):
// S = Q K^T, then the activation or an online-softmax step (which rescales o), the mask on the
// 16-row blocks it partly hides, rounded into P's A fragments.
template <Elem16 E, Mode kMode, int kDimQk, int kDimV>
__device__ inline void rows128_weights(
    std::uint32_t (&p_frag)[kRows128MBlocks][kRows128SubCols / 16][4],
    float (&o)[kRows128MBlocks][kDimV / 8][4], float (&row_max)[kRows128MBlocks][2],
    float (&row_sum)[kRows128MBlocks][2], unsigned q_address,
    const FragmentOffsets<kDimQk>& q_offsets, unsigned k_address,
    const FragmentOffsets<kDimQk>& k_offsets, const SequenceMask& mask, int q_row0, int col0,
    TileClass group_class, Activation activation, float score_scale) {
  constexpr int kM = kRows128MBlocks;
  float s[kM][kRows128SubCols / 8][4];
  multiply_row_blocks_by_rows_t<E, kM, kDimQk, kRows128SubCols>(s, q_address, q_offsets, k_address,
                                                                k_offsets);
#pragma unroll
  for (int m = 0; m < kM; ++m) {
    const int row0 = q_row0 + m * 16;
    const bool masked =
        group_class == TileClass::kPartial &&
        mask.classify(row0, row0 + 16, col0, col0 + kRows128SubCols) != TileClass::kFull;
    if constexpr (kMode == Mode::kSoftmax) {
#pragma unroll
      for (int n = 0; n < kRows128SubCols / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[m][n][e] *= score_scale;
      if (masked) mask_scores(s[m], mask, row0, col0, -INFINITY);
      online_softmax_step<kDimV>(s[m], o[m], row_max[m], row_sum[m]);
    } else {
      activate_tile(activation, s[m], score_scale);
      if (masked) mask_scores(s[m], mask, row0, col0, 0.0f);
    }
    to_a_fragments<E, kRows128SubCols>(p_frag[m], s[m]);
  }
}

// Long on purpose, as the 64-row kernel: one body whose phases share registers and shared memory.
template <Elem16 E, Mode kMode, int kDimQk, int kDimV>
__global__ void __launch_bounds__(kRows128Threads)
    attention_forward_rows128_kernel(const AttentionParams p) {
  constexpr int kM = kRows128MBlocks;
  // The per-group branches below (tiles a group skips) must be warp-uniform: one group, one warp.
  static_assert(kWarpSize == kMmaLanes, "the 128-row kernel needs 32-lane warps");
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto* q_tile = reinterpret_cast<std::uint16_t*>(shared_bytes);  // kRows128 x kDimQk
  std::uint16_t* k_tiles = q_tile + kRows128 * kDimQk;            // 2 x kTileCols x kDimQk
  std::uint16_t* v_tiles = k_tiles + 2 * kTileCols * kDimQk;      // 2 x kTileCols x kDimV

  const ForwardBlock<kDimQk, kDimV> block(p);
  const BlockSequence& seq = block.seq;
  const int group_row0 = (static_cast<int>(threadIdx.x) / kMmaLanes) * kRows128GroupRows;
  const float score_scale = kMode == Mode::kSoftmax ? p.alpha * kLog2e : p.alpha;
  const int kv_tile_count = (seq.mask.len_kv + kTileCols - 1) / kTileCols;
  const int q_tile_count = (seq.raw_len_q + kRows128 - 1) / kRows128;
  const int lane = mma_lane();
  const FragmentOffsets<kDimQk> q_offsets(lane % 8 + ((lane / 8) & 1) * 8, lane / 16);
  const FragmentOffsets<kDimQk> k_offsets((lane / 16) * 8 + lane % 8, (lane / 8) & 1);
  const FragmentOffsets<kDimV> v_offsets(((lane / 8) & 1) * 8 + lane % 8, lane / 16);
  const unsigned q_group_address = shared_address(q_tile) + group_row0 * kDimQk * 2;

  for (int tile = p.grid_tiles - 1 - block.slot; tile < q_tile_count; tile += p.grid_tiles) {
    const int q0 = tile * kRows128;
    int first = -1, last = -1;
    reachable_tiles(seq.mask, q0, q0 + kRows128, kTileCols, kv_tile_count, first, last);
    __syncthreads();  // the previous tile's shared-memory reads are done
    // Groups in flight, oldest first: {Q, K_first}, {V_first}; then each step commits {K_j+1}
    // and {V_j+1} (empty past the last tile), so "wait until one group is pending" always
    // leaves exactly the newer of the two in flight.
    copy_tile_rows<kRows128, kDimQk, kRows128Threads>(shared_address(q_tile), block.q_base,
                                                      block.qk_stride, q0, seq.mask.len_q);
    if (first >= 0) {
      copy_tile_rows<kTileCols, kDimQk, kRows128Threads>(shared_address(k_tiles), block.k_base,
                                                         block.qk_stride, first * kTileCols,
                                                         seq.mask.len_kv);
    }
    commit_async_copies();
    if (first >= 0) {
      copy_tile_rows<kTileCols, kDimV, kRows128Threads>(shared_address(v_tiles), block.v_base,
                                                        block.v_stride, first * kTileCols,
                                                        seq.mask.len_kv);
    }
    commit_async_copies();

    float o[kM][kDimV / 8][4];
    float row_max[kM][2], row_sum[kM][2];
#pragma unroll
    for (int m = 0; m < kM; ++m) {
#pragma unroll
      for (int n = 0; n < kDimV / 8; ++n) o[m][n][0] = o[m][n][1] = o[m][n][2] = o[m][n][3] = 0.0f;
      row_max[m][0] = row_max[m][1] = -INFINITY;
      row_sum[m][0] = row_sum[m][1] = 0.0f;
    }

    for (int j = first; first >= 0 && j <= last; ++j) {
      const int buffer = (j - first) & 1;
      const unsigned k_address = opaque(shared_address(k_tiles + buffer * kTileCols * kDimQk));
      const unsigned v_address = opaque(shared_address(v_tiles + buffer * kTileCols * kDimV));
      const unsigned q_address = opaque(q_group_address);
      wait_async_copies<1>();  // K_j (and Q) landed; V_j may be in flight
      __syncthreads();         // ... for every thread; step j-1's reads of the other buffers done
      if (j < last) {
        copy_tile_rows<kTileCols, kDimQk, kRows128Threads>(
            shared_address(k_tiles + (buffer ^ 1) * kTileCols * kDimQk), block.k_base,
            block.qk_stride, (j + 1) * kTileCols, seq.mask.len_kv);
      }
      commit_async_copies();
      // Half 0's weights, then (V_j landed) its product, then half 1.
      const int group_q0 = q0 + group_row0;
      TileClass group_class[2];
      std::uint32_t p_frag[kM][kRows128SubCols / 16][4];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int col0 = j * kTileCols + half * kRows128SubCols;
        group_class[half] =
            seq.mask.classify(group_q0, group_q0 + kRows128GroupRows, col0, col0 + kRows128SubCols);
      }
      if (group_class[0] != TileClass::kEmpty) {
        rows128_weights<E, kMode, kDimQk, kDimV>(
            p_frag, o, row_max, row_sum, q_address, q_offsets, k_address, k_offsets, seq.mask,
            group_q0, j * kTileCols, group_class[0], p.activation, score_scale);
      }
      wait_async_copies<1>();  // V_j landed (K_j+1 may be in flight)
      __syncthreads();         // ... for every thread; step j-1's reads of V's other buffer done
      if (j < last) {
        copy_tile_rows<kTileCols, kDimV, kRows128Threads>(
            shared_address(v_tiles + (buffer ^ 1) * kTileCols * kDimV), block.v_base,
            block.v_stride, (j + 1) * kTileCols, seq.mask.len_kv);
      }
      commit_async_copies();
      if (group_class[0] != TileClass::kEmpty)
        accumulate_row_blocks<E, kM, kRows128SubCols, kDimV>(o, p_frag, v_address, v_offsets);
      if (group_class[1] != TileClass::kEmpty) {
        const int col0 = j * kTileCols + kRows128SubCols;
        rows128_weights<E, kMode, kDimQk, kDimV>(p_frag, o, row_max, row_sum, q_address, q_offsets,
                                                 k_address + kRows128SubCols * kDimQk * 2,
                                                 k_offsets, seq.mask, group_q0, col0,
                                                 group_class[1], p.activation, score_scale);
        accumulate_row_blocks<E, kM, kRows128SubCols, kDimV>(
            o, p_frag, v_address + kRows128SubCols * kDimV * 2, v_offsets);
      }
    }
    wait_async_copies<0>();

    // Epilogue: scale, round to the element type, store the rows this sequence owns.
#pragma unroll
    for (int m = 0; m < kM; ++m) {
      store_row_block<E, kMode, kDimV>(p, seq, block.v_stride, q0 + group_row0 + m * 16, o[m],
                                       row_max[m], row_sum[m]);
    }
  }
}

}  // namespace parity::gpu_device::attention
