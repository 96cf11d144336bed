// Jagged attention forward (HSTU / GDPA pointwise and softmax), flash-style, on tensor cores.
//
// Legend: a block owns one (sequence, head) and a tile of kTileRows = 64 q rows; its 4 mma groups
// (32 lanes each) own 16 q rows apiece. It streams the kv tiles (kTileCols = 64 keys) that the
// mask can reach through double-buffered shared memory (cp.async), computes S = Q K^T for its 16
// rows in registers (16 x 64 fp32), applies the activation or the online softmax, and accumulates
// O += P V (16 x kDimV fp32 in registers). Nothing of size N^2 is ever stored. Tiles the mask
// fully hides are skipped; only tiles it partly hides evaluate the mask per element.
// Schedule: block b takes tile slot b / (batch*heads) counted from the last tile, so the tiles
// with the most keys under a causal mask start first; a block strides by grid_tiles so sequences
// longer than the grid still get every tile.
#pragma once

#include "backends/gpu/attention/params.cuh"
#include "backends/gpu/attention/tensor_core.cuh"

namespace parity::gpu_device::attention {

__device__ inline float fast_exp2(float x) {
#if defined(PARITY_ATTENTION_SM80)
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

template <int kDimQk, int kDimV>
constexpr int forward_shared_bytes() {
  return (kTileRows * kDimQk + 2 * kTileCols * (kDimQk + kDimV)) * 2;
}

// The first and last kv tile of [0, len_kv) that the mask lets rows [q0, q1) see; first = -1 if
// none. Scans from both ends and stops at the first tile that is not empty (classify costs tens
// of instructions, and a full scan is 64 calls per q tile at N = 4096, while the tensor cores
// wait). Under a causal mask without contextual rows a valid pair (i, j) has j <= i (ids are
// non-decreasing in position and a pair needs i == j or id(i) > id(j)), so no tile past the one
// holding row min(q1, len_q) - 1 is scanned.
__device__ inline void reachable_tiles(const SequenceMask& mask, int q0, int q1, int tile,
                                       int count, int& first, int& last) {
  int scan_end = count;
  if (mask.causal && !mask.cross && mask.contextual == 0)
    scan_end = min(count, max(0, (min(q1, mask.len_q) - 1) / tile + 1));
  first = -1;
  last = -1;
  for (int j = 0; j < scan_end; ++j) {
    if (mask.classify(q0, q1, j * tile, (j + 1) * tile) != TileClass::kEmpty) {
      first = j;
      break;
    }
  }
  if (first < 0) return;
  for (int j = scan_end - 1; j >= first; --j) {
    if (mask.classify(q0, q1, j * tile, (j + 1) * tile) != TileClass::kEmpty) {
      last = j;
      break;
    }
  }
}

// Masks a partial tile of scores (16 x 8 kN) in place: entries (row, col) the mask hides become
// `hidden`.
template <int kN>
__device__ inline void mask_scores(float (&s)[kN][4], const SequenceMask& mask, int row0, int col0,
                                   float hidden) {
  const int g = mma_lane() / 4;
  const int t = mma_lane() % 4;
  if (mask.plain_causal()) {
    // Per row two bounds relative to this lane's first column, so each score compares them with
    // a constant (n * 8 + e % 2): the general rule below maps both positions to ids per score.
    const PlainCausalLengths lengths = mask.plain_causal_lengths();
    int below[2], self[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const CausalRowColumns r = causal_row_columns(lengths, row0 + g + half * 8);
      below[half] = r.below - col0 - 2 * t;
      self[half] = r.self < 0 ? -1 : r.self - col0 - 2 * t;  // -1 matches no column offset
    }
#pragma unroll
    for (int n = 0; n < kN; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int offset = n * 8 + (e % 2);
        if (!(offset < below[e / 2] || offset == self[e / 2])) s[n][e] = hidden;
      }
    return;
  }
#pragma unroll
  for (int n = 0; n < kN; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + g + (e / 2) * 8;
      const int col = col0 + n * 8 + 2 * t + (e % 2);
      if (!mask.valid(row, col)) s[n][e] = hidden;
    }
  }
}

// Online softmax over one tile of 16 x 8 kN scores, the part that needs no accumulator: turns s
// into P (exp2 domain), updates the running max and sums, and gives the factor `correction` by
// which the accumulator rows must be rescaled (rescale_rows; the wgmma kernel does it once its
// P V product in flight has landed). A positive `scale` is folded in (callers that scaled the
// scores pass 1): the max is taken on the unscaled scores (rounding is monotonic, so
// max(s) * scale = max(s * scale)) and each weight is exp2(fma(s, scale, -max)), one FFMA and
// one ex2 per score. row_max is in the scaled domain; hidden scores are -inf and weigh 0.
template <int kN>
__device__ inline void online_softmax_weights(float (&s)[kN][4], float scale, float (&row_max)[2],
                                              float (&row_sum)[2], float (&correction)[2]) {
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float tile_max = -INFINITY;
#pragma unroll
    for (int n = 0; n < kN; ++n)
      tile_max = fmaxf(tile_max, fmaxf(s[n][2 * half], s[n][2 * half + 1]));
    tile_max = fmaxf(tile_max, shfl_xor(tile_max, 1));  // the 4 lanes of a row
    tile_max = fmaxf(tile_max, shfl_xor(tile_max, 2));
    const float new_max = fmaxf(row_max[half], tile_max * scale);
    const float safe_max = new_max == -INFINITY ? 0.0f : new_max;  // a row hidden so far stays at 0
    correction[half] = fast_exp2(row_max[half] - safe_max);
    row_max[half] = new_max;
    float sum = 0.0f;
#pragma unroll
    for (int n = 0; n < kN; ++n) {
      s[n][2 * half] = fast_exp2(fmaf(s[n][2 * half], scale, -safe_max));
      s[n][2 * half + 1] = fast_exp2(fmaf(s[n][2 * half + 1], scale, -safe_max));
      sum += s[n][2 * half] + s[n][2 * half + 1];
    }
    row_sum[half] = row_sum[half] * correction[half] + sum;
  }
}

// o's two rows (g and g + 8) times correction[0] and correction[1].
template <int kDimV>
__device__ inline void rescale_rows(float (&o)[kDimV / 8][4], const float (&correction)[2]) {
#pragma unroll
  for (int n = 0; n < kDimV / 8; ++n) {
    o[n][0] *= correction[0];
    o[n][1] *= correction[0];
    o[n][2] *= correction[1];
    o[n][3] *= correction[1];
  }
}

// Online softmax over one tile of 16 x 8 kN scores: rescales o and the running sums, turns s into P
// (exp2 domain).
template <int kDimV, int kN>
__device__ inline void online_softmax_step(float (&s)[kN][4], float (&o)[kDimV / 8][4],
                                           float (&row_max)[2], float (&row_sum)[2]) {
  float correction[2];
  online_softmax_weights(s, 1.0f, row_max, row_sum, correction);  // s already scaled
  rescale_rows<kDimV>(o, correction);
}

// Epilogue of one 16-row block (this lane's rows row0 + g and row0 + g + 8, g = lane / 4): scale
// (1/N, or 1/sum and the LSE for softmax), round to the element type, store the rows this
// sequence owns.
template <Elem16 E, Mode kMode, int kDimV>
__device__ inline void store_row_block(const AttentionParams& p, const BlockSequence& seq,
                                       std::int64_t v_stride, int row0,
                                       const float (&o)[kDimV / 8][4], const float (&row_max)[2],
                                       const float (&row_sum)[2]) {
  const int g = mma_lane() / 4;
  const int t = mma_lane() % 4;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    float row_scale = p.inv_max_seq_len;
    const int row = row0 + g + half * 8;
    if constexpr (kMode == Mode::kSoftmax) {
      float sum = row_sum[half];
      sum += shfl_xor(sum, 1);
      sum += shfl_xor(sum, 2);
      row_scale = sum > 0.0f ? 1.0f / sum : 0.0f;
      if (t == 0 && row < seq.raw_len_q) {
        p.lse[(seq.q_begin + row) * p.heads + seq.head] =
            sum > 0.0f ? (row_max[half] + log2f(sum)) * kLn2 : -INFINITY;
      }
    }
    if (row >= seq.raw_len_q) continue;
    auto* out_row = reinterpret_cast<std::uint32_t*>(p.out + (seq.q_begin + row) * v_stride +
                                                     seq.head * kDimV);
#pragma unroll
    for (int n = 0; n < kDimV / 8; ++n) {
      out_row[n * 4 + t] = pack2<E>(o[n][2 * half] * row_scale, o[n][2 * half + 1] * row_scale);
    }
  }
}

// Long on purpose: one kernel body whose phases share registers and shared memory; split into
// device functions it would hide the data flow the tuning depends on.
template <Elem16 E, Mode kMode, int kDimQk, int kDimV>
__global__ void __launch_bounds__(kThreads) attention_forward_kernel(const AttentionParams p) {
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  auto* q_tile = reinterpret_cast<std::uint16_t*>(shared_bytes);  // kTileRows x kDimQk
  std::uint16_t* k_tiles = q_tile + kTileRows * kDimQk;           // 2 x kTileCols x kDimQk
  std::uint16_t* v_tiles = k_tiles + 2 * kTileCols * kDimQk;      // 2 x kTileCols x kDimV

  const ForwardBlock<kDimQk, kDimV> block(p);
  const BlockSequence& seq = block.seq;
  const int slot = block.slot;
  const int group_row0 = (static_cast<int>(threadIdx.x) / kMmaLanes) * 16;
  const std::int64_t qk_stride = block.qk_stride;
  const std::int64_t v_stride = block.v_stride;
  const std::uint16_t* q_base = block.q_base;
  const std::uint16_t* k_base = block.k_base;
  const std::uint16_t* v_base = block.v_base;
  const float score_scale = kMode == Mode::kSoftmax ? p.alpha * kLog2e : p.alpha;
  const int kv_tile_count = (seq.mask.len_kv + kTileCols - 1) / kTileCols;
  const int q_tile_count = (seq.raw_len_q + kTileRows - 1) / kTileRows;

  for (int tile = p.grid_tiles - 1 - slot; tile < q_tile_count; tile += p.grid_tiles) {
    const int q0 = tile * kTileRows;
    int first = -1, last = -1;
    reachable_tiles(seq.mask, q0, q0 + kTileRows, kTileCols, kv_tile_count, first, last);
    __syncthreads();  // the previous tile's shared-memory reads are done
    load_tile_async<kTileRows, kDimQk, kThreads>(q_tile, q_base, qk_stride, q0, seq.mask.len_q);
    if (first >= 0) {
      load_tile_async<kTileCols, kDimQk, kThreads>(k_tiles, k_base, qk_stride, first * kTileCols,
                                                   seq.mask.len_kv);
      load_tile_async<kTileCols, kDimV, kThreads>(v_tiles, v_base, v_stride, first * kTileCols,
                                                  seq.mask.len_kv);
    }
    commit_async_copies();

    float o[kDimV / 8][4];
#pragma unroll
    for (int n = 0; n < kDimV / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.0f, 0.0f};

    for (int j = first; first >= 0 && j <= last; ++j) {
      const int buffer = (j - first) & 1;
      if (j < last) {  // prefetch the next kv tile into the other buffer
        load_tile_async<kTileCols, kDimQk, kThreads>(k_tiles + (buffer ^ 1) * kTileCols * kDimQk,
                                                     k_base, qk_stride, (j + 1) * kTileCols,
                                                     seq.mask.len_kv);
        load_tile_async<kTileCols, kDimV, kThreads>(v_tiles + (buffer ^ 1) * kTileCols * kDimV,
                                                    v_base, v_stride, (j + 1) * kTileCols,
                                                    seq.mask.len_kv);
      }
      commit_async_copies();
      wait_async_copies<1>();
      __syncthreads();
      const TileClass tile_class =
          seq.mask.classify(q0, q0 + kTileRows, j * kTileCols, (j + 1) * kTileCols);
      if (tile_class != TileClass::kEmpty) {
        float s[kTileCols / 8][4];
        multiply_rows_by_rows_t<E, kDimQk, kTileCols>(s, q_tile, group_row0,
                                                      k_tiles + buffer * kTileCols * kDimQk, 0);
        if constexpr (kMode == Mode::kSoftmax) {
#pragma unroll
          for (int n = 0; n < kTileCols / 8; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e) s[n][e] *= score_scale;
          if (tile_class == TileClass::kPartial)
            mask_scores(s, seq.mask, q0 + group_row0, j * kTileCols, -INFINITY);
          online_softmax_step<kDimV>(s, o, row_max, row_sum);
        } else {
          activate_tile(p.activation, s, score_scale);
          if (tile_class == TileClass::kPartial)
            mask_scores(s, seq.mask, q0 + group_row0, j * kTileCols, 0.0f);
        }
        accumulate_x_rows<E, kTileCols, kDimV>(o, s, v_tiles + buffer * kTileCols * kDimV, 0);
      }
      __syncthreads();  // this buffer is refilled two steps later
    }
    wait_async_copies<0>();

    store_row_block<E, kMode, kDimV>(p, seq, v_stride, q0 + group_row0, o, row_max, row_sum);
  }
}

}  // namespace parity::gpu_device::attention
