// Jagged attention backward (FlashAttention-2 order), on tensor cores.
//
// Legend: a block owns one (sequence, head) and a tile of kTileRows = 64 kv rows; its 4 mma
// groups own 16 kv rows apiece and keep dK, dV for them in fp32 registers. The block streams the
// q tiles (64 rows) that the mask lets see its keys, double-buffered (Q, dO and, for softmax, the
// row terms lse*log2e and D = dO.O), and for each 16-row slice of a q tile (to bound registers):
//   S^T = K Q^T,  P^T = act(alpha S^T) or exp2(alpha log2e S^T - lse2),  dV += P^T dO,
//   dP^T = V dO^T,  dS^T = act'(alpha S^T) dP^T or P^T (dP^T - D),  dK += dS^T Q,
// then writes dS^T (16-bit) to shared memory; after a barrier each group computes dQ for 16 q
// rows, dQ += dS K, 32 columns at a time, and adds it into an fp32 workspace: with atomics by
// default (kv tiles run in parallel, any order), or in deterministic mode with one block walking all
// kv tiles of its (sequence, head) in order, so each element's adds come from one thread in a fixed
// order (bitwise repeatable). Scales (1/N, alpha) are
// applied once at the end, so the 16-bit P and dS keep their precision.
#pragma once

#include "backends/gpu/attention/forward_kernel.cuh"

namespace parity::gpu_device::attention {

inline constexpr int kPassCols = 16;  // q columns per register pass

template <int kDimQk, int kDimV>
constexpr int backward_shared_bytes() {
  return (kTileRows * (kDimQk + kDimV) + 2 * kTileCols * (kDimQk + kDimV) + kTileRows * kTileCols) *
             2 +
         2 * 2 * kTileCols * 4;
}

// dQ rows [q_row0, q_row0+16) of the tile: dS (from the dS^T tile) x K, added into the fp32
// workspace 32 columns at a time; rows at or past len_q belong to other sequences and are skipped.
template <Elem16 E, int kDimQk>
__device__ inline void add_grad_q(const AttentionParams& p, const BlockSequence& seq,
                                  const std::uint16_t* ds_tile, const std::uint16_t* k_tile,
                                  int q_tile_row0, int q_row0) {
  const int lane = mma_lane();
  const int g = lane / 4;
  const int t = lane % 4;
  for (int c0 = 0; c0 < kDimQk; c0 += 32) {
    float acc[4][4];
#pragma unroll
    for (int n = 0; n < 4; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
#pragma unroll
    for (int kc = 0; kc < kTileRows / 16; ++kc) {
      std::uint32_t a[4];
      load_fragments_x4<true>(
          a, ds_tile + swizzled_offset<kTileCols>(kc * 16 + (lane / 16) * 8 + lane % 8,
                                                  q_row0 + ((lane / 8) & 1) * 8));
#pragma unroll
      for (int n2 = 0; n2 < 2; ++n2) {
        std::uint32_t b[4];
        load_fragments_x4<true>(
            b, k_tile + swizzled_offset<kDimQk>(kc * 16 + ((lane / 8) & 1) * 8 + lane % 8,
                                                c0 + n2 * 16 + (lane / 16) * 8));
        const std::uint32_t b_even[2] = {b[0], b[1]};
        const std::uint32_t b_odd[2] = {b[2], b[3]};
        mma_16x8x16<E>(acc[2 * n2], a, b_even);
        mma_16x8x16<E>(acc[2 * n2 + 1], a, b_odd);
      }
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = q_tile_row0 + q_row0 + g + half * 8;
      if (row >= seq.mask.len_q) continue;
      float* destination =
          p.grad_q_accum + ((seq.q_begin + row) * p.heads + seq.head) * kDimQk + c0 + 2 * t;
      // Fire-and-forget atomic adds in both modes. In deterministic mode one block owns the
      // (sequence, head) and one thread each element, so every element receives its adds from a
      // single thread in program (= kv tile) order: the same sum every run, without the load
      // round trip a plain read-modify-write would wait for.
#pragma unroll
      for (int n = 0; n < 4; ++n) {
        atomicAdd(destination + n * 8, acc[n][2 * half]);
        atomicAdd(destination + n * 8 + 1, acc[n][2 * half + 1]);
      }
    }
  }
}

// Starts the copies of the softmax row terms of q rows [row0, row0 + kTileCols) into `buffer`
// ({lse2, D} x kTileCols floats each); threads [0, 64) copy lse2, [64, 128) D.
__device__ inline void load_row_terms_async(const AttentionParams& p, const BlockSequence& seq,
                                            int row0, float* row_terms, int buffer, int thread) {
  if (thread >= 2 * kTileCols) return;
  const int which = thread / kTileCols;
  const int row = row0 + thread % kTileCols;
  const float* source = p.row_terms +
                        (static_cast<std::int64_t>(which) * p.heads + seq.head) * p.total_q +
                        seq.q_begin + row;
  copy_float_async(row_terms + (buffer * 2 + which) * kTileCols + thread % kTileCols, source,
                   row < seq.mask.len_q, 0.0f);
}

// Starts the copies of q tile `tile` (Q, dO, softmax row terms) into `buffer`.
template <Mode kMode, int kDimQk, int kDimV>
__device__ inline void load_q_side_async(const AttentionParams& p, const BlockSequence& seq,
                                         int tile, std::uint16_t* q_tiles, std::uint16_t* do_tiles,
                                         float* row_terms, int buffer) {
  const std::int64_t qk_stride = static_cast<std::int64_t>(p.heads) * kDimQk;
  const std::int64_t v_stride = static_cast<std::int64_t>(p.heads) * kDimV;
  const int row0 = tile * kTileCols;
  load_tile_async<kTileCols, kDimQk, kThreads>(q_tiles + buffer * kTileCols * kDimQk,
                                               p.q + seq.q_begin * qk_stride + seq.head * kDimQk,
                                               qk_stride, row0, seq.mask.len_q);
  load_tile_async<kTileCols, kDimV, kThreads>(
      do_tiles + buffer * kTileCols * kDimV, p.grad_out + seq.q_begin * v_stride + seq.head * kDimV,
      v_stride, row0, seq.mask.len_q);
  if constexpr (kMode == Mode::kSoftmax)
    load_row_terms_async(p, seq, row0, row_terms, buffer, static_cast<int>(threadIdx.x));
}

// Long on purpose: one kernel body whose phases share registers and shared memory; split into
// device functions it would hide the data flow the tuning depends on.
template <Elem16 E, Mode kMode, int kDimQk, int kDimV>
__global__ void __launch_bounds__(kThreads) attention_backward_kernel(const AttentionParams p) {
  static_assert(2 * kTileCols <= kThreads, "row terms are loaded one float per thread");
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto* k_tile = reinterpret_cast<std::uint16_t*>(shared_bytes);  // kTileRows x kDimQk
  std::uint16_t* v_tile = k_tile + kTileRows * kDimQk;            // kTileRows x kDimV
  std::uint16_t* q_tiles = v_tile + kTileRows * kDimV;            // 2 x kTileCols x kDimQk
  std::uint16_t* do_tiles = q_tiles + 2 * kTileCols * kDimQk;     // 2 x kTileCols x kDimV
  std::uint16_t* ds_tile = do_tiles + 2 * kTileCols * kDimV;      // kTileRows (kv) x kTileCols (q)
  auto* row_terms =
      reinterpret_cast<float*>(ds_tile + kTileRows * kTileCols);  // 2 buffers x {lse2, D} x 64

  const std::int64_t sequence_heads = p.batch * p.heads;
  const BlockSequence seq =
      block_sequence(p, static_cast<std::int64_t>(blockIdx.x) % sequence_heads);
  const int slot = static_cast<int>(static_cast<std::int64_t>(blockIdx.x) / sequence_heads);
  const int group_row0 = (static_cast<int>(threadIdx.x) / kMmaLanes) * 16;
  const int g = mma_lane() / 4;
  const int t = mma_lane() % 4;
  const std::int64_t qk_stride = static_cast<std::int64_t>(p.heads) * kDimQk;
  const std::int64_t v_stride = static_cast<std::int64_t>(p.heads) * kDimV;
  const float score_scale = kMode == Mode::kSoftmax ? p.alpha * kLog2e : p.alpha;
  const float grad_k_scale = kMode == Mode::kSoftmax ? p.alpha : p.alpha * p.inv_max_seq_len;
  const float grad_v_scale = kMode == Mode::kSoftmax ? 1.0f : p.inv_max_seq_len;
  const int q_tile_count = (seq.mask.len_q + kTileCols - 1) / kTileCols;
  const int kv_tile_count = (seq.raw_len_kv + kTileRows - 1) / kTileRows;

  // Under a causal mask the first kv tiles are seen by the most q rows: slot 0 takes tile 0.
  for (int tile = slot; tile < kv_tile_count; tile += p.grid_tiles) {
    const int kv0 = tile * kTileRows;
    int first = -1, last = -1;
    for (int i = 0; i < q_tile_count; ++i) {
      if (seq.mask.classify(i * kTileCols, (i + 1) * kTileCols, kv0, kv0 + kTileRows) ==
          TileClass::kEmpty)
        continue;
      if (first < 0) first = i;
      last = i;
    }
    __syncthreads();  // the previous tile's shared-memory reads are done
    load_tile_async<kTileRows, kDimQk, kThreads>(k_tile,
                                                 p.k + seq.kv_begin * qk_stride + seq.head * kDimQk,
                                                 qk_stride, kv0, seq.mask.len_kv);
    load_tile_async<kTileRows, kDimV, kThreads>(
        v_tile, p.v + seq.kv_begin * v_stride + seq.head * kDimV, v_stride, kv0, seq.mask.len_kv);
    if (first >= 0)
      load_q_side_async<kMode, kDimQk, kDimV>(p, seq, first, q_tiles, do_tiles, row_terms, 0);
    commit_async_copies();

    float dk[kDimQk / 8][4];
    float dv[kDimV / 8][4];
#pragma unroll
    for (int n = 0; n < kDimQk / 8; ++n) dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = 0.0f;
#pragma unroll
    for (int n = 0; n < kDimV / 8; ++n) dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.0f;

    for (int i = first; first >= 0 && i <= last; ++i) {
      const int buffer = (i - first) & 1;
      if (i < last)
        load_q_side_async<kMode, kDimQk, kDimV>(p, seq, i + 1, q_tiles, do_tiles, row_terms,
                                                buffer ^ 1);
      commit_async_copies();
      wait_async_copies<1>();
      __syncthreads();
      const TileClass tile_class =
          seq.mask.classify(i * kTileCols, (i + 1) * kTileCols, kv0, kv0 + kTileRows);
      if (tile_class == TileClass::kEmpty)
        continue;  // block-uniform; the next step's barrier orders the buffers
      const std::uint16_t* q_tile = q_tiles + buffer * kTileCols * kDimQk;
      const std::uint16_t* do_tile = do_tiles + buffer * kTileCols * kDimV;
      const float* lse2 = row_terms + (buffer * 2) * kTileCols;
      const float* row_dot = row_terms + (buffer * 2 + 1) * kTileCols;
#pragma unroll
      for (int pass = 0; pass < kTileCols / kPassCols; ++pass) {
        const int col0 = pass * kPassCols;
        float s[kPassCols / 8][4];  // S^T, then act'(.) (pointwise)
        float pt[kPassCols / 8][4];
        float dp[kPassCols / 8][4];
        multiply_rows_by_rows_t<E, kDimQk, kPassCols>(s, k_tile, group_row0, q_tile, col0);
        if constexpr (kMode == Mode::kSoftmax) {
#pragma unroll
          for (int n = 0; n < kPassCols / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              pt[n][e] = fast_exp2(s[n][e] * score_scale - lse2[col0 + n * 8 + 2 * t + (e % 2)]);
            }
          }
        } else {
#pragma unroll
          for (int n = 0; n < kPassCols / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) pt[n][e] = s[n][e];
          }
          activate_tile(p.activation, pt, score_scale, s);  // pt := act(.), s := act'(.)
        }
        if (tile_class == TileClass::kPartial) {
#pragma unroll
          for (int n = 0; n < kPassCols / 8; ++n) {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int q_row = i * kTileCols + col0 + n * 8 + 2 * t + (e % 2);
              const int kv_row = kv0 + group_row0 + g + (e / 2) * 8;
              if (!seq.mask.valid(q_row, kv_row)) pt[n][e] = s[n][e] = 0.0f;
            }
          }
        }
        accumulate_x_rows<E, kPassCols, kDimV>(dv, pt, do_tile, col0);
        multiply_rows_by_rows_t<E, kDimV, kPassCols>(dp, v_tile, group_row0, do_tile, col0);
#pragma unroll
        for (int n = 0; n < kPassCols / 8; ++n) {
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            if constexpr (kMode == Mode::kSoftmax) {
              dp[n][e] = pt[n][e] * (dp[n][e] - row_dot[col0 + n * 8 + 2 * t + (e % 2)]);
            } else {
              dp[n][e] = s[n][e] * dp[n][e];
            }
          }
        }
        accumulate_x_rows<E, kPassCols, kDimQk>(dk, dp, q_tile, col0);
#pragma unroll
        for (int n = 0; n < kPassCols / 8; ++n) {
#pragma unroll
          for (int e2 = 0; e2 < 2; ++e2) {
            const int kv_row = group_row0 + g + e2 * 8;
            const int q_col = col0 + n * 8 + 2 * t;
            *reinterpret_cast<std::uint32_t*>(ds_tile + swizzled_offset<kTileCols>(kv_row, q_col)) =
                pack2<E>(dp[n][2 * e2], dp[n][2 * e2 + 1]);
          }
        }
      }
      __syncthreads();  // the dS^T tile is complete
      add_grad_q<E, kDimQk>(p, seq, ds_tile, k_tile, i * kTileCols, group_row0);
    }
    wait_async_copies<0>();

#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = kv0 + group_row0 + g + half * 8;
      if (row >= seq.raw_len_kv) continue;
      auto* k_row = reinterpret_cast<std::uint32_t*>(p.grad_k + (seq.kv_begin + row) * qk_stride +
                                                     seq.head * kDimQk);
      auto* v_row = reinterpret_cast<std::uint32_t*>(p.grad_v + (seq.kv_begin + row) * v_stride +
                                                     seq.head * kDimV);
#pragma unroll
      for (int n = 0; n < kDimQk / 8; ++n)
        k_row[n * 4 + t] =
            pack2<E>(dk[n][2 * half] * grad_k_scale, dk[n][2 * half + 1] * grad_k_scale);
#pragma unroll
      for (int n = 0; n < kDimV / 8; ++n)
        v_row[n * 4 + t] =
            pack2<E>(dv[n][2 * half] * grad_v_scale, dv[n][2 * half + 1] * grad_v_scale);
    }
  }
}

// Softmax row terms: row_terms = [heads][total_q] lse*log2e, then [heads][total_q] D = dO.O
// (fp32). One lane per 16-byte chunk of a row; the kDimV/8 lanes of a row reduce with shuffles.
template <Elem16 E, int kDimV>
__global__ void __launch_bounds__(256)
    attention_row_terms_kernel(const std::uint16_t* out, const std::uint16_t* grad_out,
                               const float* lse, float* row_terms, std::int64_t total_q,
                               int heads) {
  constexpr int kLanesPerRow = kDimV / 8;
  static_assert(kLanesPerRow <= kWarpSize, "a row's lanes must share a warp");
  const std::int64_t total = total_q * heads * kLanesPerRow;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t start = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Every lane runs the same number of rounds: the shuffles need the whole warp.
  const std::int64_t rounds = (total + stride - 1) / stride;
  for (std::int64_t round = 0; round < rounds; ++round) {
    const std::int64_t index = start + round * stride;
    const bool in_range = index < total;
    const std::int64_t row_head = in_range ? index / kLanesPerRow : 0;  // = row * heads + head
    const int chunk = static_cast<int>(index % kLanesPerRow);
    float dot = 0.0f;
    if (in_range) {
      const uint4 o = *reinterpret_cast<const uint4*>(out + row_head * kDimV + chunk * 8);
      const uint4 d = *reinterpret_cast<const uint4*>(grad_out + row_head * kDimV + chunk * 8);
      const std::uint32_t o_words[4] = {o.x, o.y, o.z, o.w};
      const std::uint32_t d_words[4] = {d.x, d.y, d.z, d.w};
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        dot += low_half<E>(o_words[w]) * low_half<E>(d_words[w]) +
               high_half<E>(o_words[w]) * high_half<E>(d_words[w]);
      }
    }
#pragma unroll
    for (int offset = kLanesPerRow / 2; offset > 0; offset /= 2) dot += shfl_xor(dot, offset);
    if (in_range && chunk == 0) {
      const std::int64_t row = row_head / heads;
      const std::int64_t head = row_head % heads;
      row_terms[head * total_q + row] = lse[row_head] * kLog2e;
      row_terms[(heads + head) * total_q + row] = dot;
    }
  }
}

// grad_q = scale * accum, rounded to the element type.
template <Elem16 E>
__global__ void __launch_bounds__(256)
    attention_grad_q_kernel(const float* accum, std::uint16_t* grad_q, std::int64_t count,
                            float scale) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i * 4 < count; i += stride) {
    const float4 value = *reinterpret_cast<const float4*>(accum + i * 4);
    uint2 packed;
    packed.x = pack2<E>(value.x * scale, value.y * scale);
    packed.y = pack2<E>(value.z * scale, value.w * scale);
    *reinterpret_cast<uint2*>(grad_q + i * 4) = packed;
  }
}

}  // namespace parity::gpu_device::attention
