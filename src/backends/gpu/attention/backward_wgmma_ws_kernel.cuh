// Jagged attention backward on Hopper wgmma, warp-specialized ("ws", sm_90a only): the math of
// backward_wgmma_kernel.cuh (S^T, dP^T, dV, dK, dQ on wgmma; a block owns 128 kv rows of one
// (sequence, head), two consumer warpgroups x 64 kv rows keep dK, dV in registers) with FA3's
// producer/consumer schedule (hopper/mainloop_bwd_sm90_tma_gmma_ws.hpp in
// Dao-AILab/flash-attention):
//   - warpgroup 0 is the producer (setmaxnreg 24): thread 0 issues the bulk tensor copies (TMA)
//     of K and V (128 rows, once per kv tile, full/empty mbarrier pair) and of Q and dO (64 rows
//     per q tile) into a ring of kBwdWsStages stages (q_full[s]: one arrival plus the bytes;
//     q_empty[s]: 256 consumer arrivals after the products that read the stage completed); for
//     softmax, warp 1 copies the row terms (lse*log2e, D = dO.O) of the stage with plain loads
//     and arrives on q_full[s] too (32 more arrivals). Consumers never wait on global loads.
//   - warpgroups 1 and 2 are the consumers (setmaxnreg 240): per q tile S^T, dP^T, P^T, dV, dS^T,
//     dK as the lockstep kernel, dS^T into one of two double-buffered shared tiles, then one
//     consumer barrier publishes both warpgroups' dS^T and warpgroup c computes dQ columns
//     [64 c, 64 c + 64) over all 128 kv rows (at d = 64 warpgroup 0 all of them): every dQ
//     element gets one add per kv tile from one thread (the deterministic split of the lockstep
//     kernel, here in every schedule).
// dQ reaches the fp32 workspace one of two ways (GradQStore):
//   kAtomic:    two-float vector atomics from the accumulator registers;
//   kTmaReduce: each thread writes its fragments into a 64 x d fp32 shared tile (128-byte
//               swizzle, 32-column boxes), and one thread per warpgroup issues bulk tensor
//               reduce-adds (cp.reduce.async.bulk.tensor .add.f32) of its boxes; it waits for
//               their completion at the end of each kv tile, so the adds into one element come
//               in kv-tile order (bitwise repeatable with one block per (sequence, head)).
// Rows past a sequence's end inside a TMA box are the next sequence's (zeros past the tensor):
// tiles that contain them are classified partial, so their P^T and dS^T are masked to zero and
// their dQ rows receive exact zeros.
// The pointwise activation is a template parameter (one kernel per activation: no other
// activation's code costs registers), its value and derivative from one exp2 and one reciprocal,
// or (kTanhSigmoid) from one tanh.approx.
// kOverlapKvTiles shortens the gap between a block's kv tiles: the producer prefetches the next kv
// tile's K and V into L2 once it has issued the current tile's last Q load (about two q steps
// ahead), so the next tile's K/V copy reads L2, not HBM; outside the deterministic mode the
// reducer no longer waits at the end of a kv tile for its reduce-adds to complete (the next q
// step's wait for the dQ tile to be read protects the shared tile; the kernel's end waits for
// all); and dK, dV leave through shared memory (the dS^T and dQ tiles, free between kv tiles:
// conflict-free 4-byte stores, then 16-byte coalesced global stores, a quarter of the LSU
// wavefronts of the fragments' scattered 4-byte global stores).
// Head dims: d_qk = d_v = kDim in {64, 128}.
#pragma once

#include "backends/gpu/attention/backward_grad_q_fused.cuh"
#include "backends/gpu/attention/backward_wgmma_kernel.cuh"

namespace parity::gpu_device::attention {

inline constexpr int kBwdWsThreads = 3 * kWarpgroupThreads;  // producer + two consumers
inline constexpr int kBwdWsStages = 2;                       // Q-side ring (Q, dO, row terms)
inline constexpr int kBwdWsProducerRegisters = 24;
inline constexpr int kBwdWsConsumerRegisters = 240;
static_assert(kWarpgroupThreads * (kBwdWsProducerRegisters + 2 * kBwdWsConsumerRegisters) <= 65536,
              "the register file of one SM");
// Named barriers (0 is __syncthreads): both consumers' dS^T tiles written; each consumer's dQ
// shared tile written.
inline constexpr int kBwdWsDsReadyBarrier = 1;
inline constexpr int kBwdWsGradQBarrier0 = 2;
inline constexpr int kGradQBoxColumns = 32;  // fp32 columns per 128-byte swizzled box

enum class GradQStore { kAtomic, kTmaReduce };

// Whether q tile i (64 rows) sees any of the kv tile's 128 rows from kv0: the producer and the
// consumers walk the same list.
__device__ inline bool bwd_q_tile_needed(const SequenceMask& mask, int i, int kv0) {
  return mask.classify(i * kTileCols, (i + 1) * kTileCols, kv0, kv0 + kBwdWgmmaRows) !=
         TileClass::kEmpty;
}

// Under the plain causal mask (plain_causal_mask.hpp) the kv rows up to last_kv_row are all seen
// by the q rows [last_kv_row, end): a q tile inside that range is full for them, known without
// classify (two per step, about a hundred instructions on the consumers' path). Empty otherwise.
struct FullQRows {
  int begin = 0, end = 0;
  __device__ bool covers(int q0) const { return q0 >= begin && q0 + kTileCols <= end; }
};
__device__ inline FullQRows plain_causal_full_q_rows(const SequenceMask& mask, int last_kv_row) {
  FullQRows rows;
  if (!mask.plain_causal()) return rows;
  rows.begin = last_kv_row;
  rows.end = causal_column_seen_end(mask.plain_causal_lengths(), last_kv_row);
  return rows;
}

// The tensor maps (2-D [rows, heads x d] views, 128-byte swizzle): Q and dO boxes of 64 rows,
// K and V boxes of 128 rows (64 16-bit columns each); the fp32 dQ workspace in boxes of 64 rows x
// 32 columns (kTmaReduce only).
struct BackwardTmaMaps {
  TmaMaps qkv;
  CUtensorMap grad_out;
  CUtensorMap grad_q_accum;
};

template <int kDim, GradQStore kStore, bool kFusedGradQ = false>
struct BwdWsLayout {
  static constexpr int kKvTileBytes = kBwdWgmmaRows * kDim * 2;
  static constexpr int kQTileBytes = kTileCols * kDim * 2;
  static constexpr int kDsTileBytes = kWarpgroupRows * kTileCols * 2;  // one warpgroup's dS^T
  static constexpr int kGradQTileBytes = kStore == GradQStore::kTmaReduce ? kTileCols * kDim * 4 : 0;
  static constexpr int kRowTermsBytes = kBwdWsStages * 2 * kTileCols * 4;
  static constexpr int kBarrierBytes = (2 + 2 * kBwdWsStages) * 8;
  static constexpr int kFusedBytes = kFusedGradQ ? 16 : 0;  // the last-block flag
  // K, V; the Q and dO stages; two buffers x two warpgroups' dS^T; the dQ tile; row terms; the
  // mbarriers; the fused conversion's flag; the slack to align the window to 1024 bytes.
  static constexpr int kSharedBytes = 2 * kKvTileBytes + 2 * kBwdWsStages * kQTileBytes +
                                      4 * kDsTileBytes + kGradQTileBytes + kRowTermsBytes +
                                      kBarrierBytes + kFusedBytes + kSharedAlignBytes;
  static_assert(kSharedBytes <= kMaxSharedOptInBytes, "the shared memory of one block");
};

template <int kDim, GradQStore kStore, bool kFusedGradQ = false>
constexpr int backward_wgmma_ws_shared_bytes() {
  return BwdWsLayout<kDim, kStore, kFusedGradQ>::kSharedBytes;
}

// Bulk tensor reduce-add of the shared box at `source` into the 2-D fp32 tensor at (column, row);
// rows past the tensor are dropped. One bulk async-group per commit.
__device__ inline void tma_reduce_add_box(const CUtensorMap* map, unsigned source, int column,
                                          int row) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3}], [%1];"
      ::"l"(reinterpret_cast<std::uint64_t>(map)), "r"(source), "r"(column), "r"(row)
      : "memory");
#endif
}
__device__ inline void bulk_commit_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
// Until at most kPending bulk groups of this thread still read their shared source.
template <int kPending>
__device__ inline void bulk_wait_group_read() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(kPending) : "memory");
#endif
}
// Until every bulk group of this thread completed (its global writes performed).
__device__ inline void bulk_wait_group_all() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#endif
}
// Bulk tensor prefetch of the box at (column, row) of a 2-D tensor map into L2 (no shared memory,
// no barrier); rows past the tensor are ignored.
__device__ inline void tma_prefetch_box_l2(const CUtensorMap* map, int column, int row) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(
                   reinterpret_cast<std::uint64_t>(map)),
               "r"(column), "r"(row)
               : "memory");
#endif
}
// The kRows x kDim tile of head `head` from global row `row` into L2, box by box (tma_load_tile's).
template <int kRows, int kDim>
__device__ inline void tma_prefetch_tile_l2(const CUtensorMap* map, int head, std::int64_t row) {
#pragma unroll
  for (int b = 0; b < kDim / 64; ++b)
    tma_prefetch_box_l2(map, head * kDim + 64 * b, static_cast<int>(row));
}

// opaque (forward_wgmma_kernel.cuh) keeps the epilogue's per-store addresses formed where they
// are used, not hoisted out of the kv loop into registers (which spilled 140-236 bytes at
// d = 128).

// Staged dK / dV epilogue (kOverlapKvTiles): this thread's fragments of one warpgroup's 64 x kDim
// accumulator, scaled and rounded, into a 64-row staging tile (kDim * 2 bytes a row), 16-byte
// chunk c of row r at chunk c ^ (r % 8): a warp's 8 rows x 16 bytes per store hit distinct banks.
template <Elem16 E, int kDim>
__device__ inline void stage_grad_kv_rows(unsigned char* staging, const float (&acc)[kDim / 8][4],
                                          float scale, int consumer_thread) {
  const int lane = consumer_thread % kMmaLanes;
  const int g = lane / 4, t = lane % 4;
  const int row0 = (consumer_thread / kMmaLanes) * 16 + g;  // row0 % 8 == g
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    unsigned char* const row = staging + (row0 + 8 * half) * (kDim * 2) + 4 * t;
#pragma unroll
    for (int n = 0; n < kDim / 8; ++n)
      *reinterpret_cast<std::uint32_t*>(row + ((n ^ g) << 4)) =
          pack2<E>(acc[n][2 * half] * scale, acc[n][2 * half + 1] * scale);
  }
}
// The staging tile's first `rows` rows to global rows out_row0.. (stride elements apart, from
// column `column`), 16 bytes per thread and store: a warp writes two whole 256-byte rows (d = 128).
template <int kDim>
__device__ inline void copy_staged_rows(const unsigned char* staging, std::uint16_t* out,
                                        std::int64_t out_row0, int rows, std::int64_t stride,
                                        int column, int consumer_thread) {
  constexpr int kChunks = kDim * 2 / 16;  // 16-byte chunks a row
#pragma unroll
  for (int k = 0; k < kWarpgroupRows * kChunks / kWarpgroupThreads; ++k) {
    const int index = k * kWarpgroupThreads + consumer_thread;
    const int row = index / kChunks, chunk = index % kChunks;
    if (row >= rows) continue;  // past the sequence: the next sequence's rows
    const uint4 value =
        *reinterpret_cast<const uint4*>(staging + row * (kDim * 2) + ((chunk ^ (row % 8)) << 4));
    *reinterpret_cast<uint4*>(out + (out_row0 + row) * stride + column + chunk * 8) = value;
  }
}

// Writes this thread's dQ fragments (64 q rows x columns [64 c, 64 c + 64)) into the fp32 dQ tile:
// 32-column boxes of 64 rows x 128 bytes, 8 KiB apart, 16-byte chunk k of row r at
// r * 128 + ((k ^ r % 8) * 16) (the tensor map's 128-byte swizzle). Per warp store: 8 rows x 2
// chunks, each chunk of a row in another bank group: two wavefronts, the minimum for 256 bytes.
__device__ inline void store_grad_q_tile(unsigned char* tile, const float (&dq)[8][4], int c) {
  const int lane = mma_lane();
  const int warp = (static_cast<int>(threadIdx.x) / kMmaLanes) % 4;
  const int g = lane / 4, t = lane % 4;
  // Row 16 warp + g (+ 8) has row % 8 = g; column 64 c + 8 n + 2 t lies in box 2 c + n / 4,
  // chunk 2 (n % 4) + t / 2 (disjoint bits), byte 8 (t % 2) of it. So the address is one base
  // plus a constant, but for the swizzle (2 (n % 4)) ^ (t / 2 ^ g) of the chunk: two values stay
  // live across the kv loop (the per-store column/row/box form spilled 80-232 bytes at d = 128).
  unsigned char* const rows = tile + 2 * c * kTileCols * kSwizzleRowBytes +
                              (16 * warp + g) * kSwizzleRowBytes + 8 * (t % 2);
  const int swizzle = ((t / 2) ^ g) << 4;
#pragma unroll
  for (int n = 0; n < 8; ++n) {
    unsigned char* const chunk =
        rows + (n / 4) * kTileCols * kSwizzleRowBytes + ((32 * (n % 4)) ^ swizzle);
#pragma unroll
    for (int half = 0; half < 2; ++half)
      *reinterpret_cast<float2*>(chunk + 8 * half * kSwizzleRowBytes) =
          make_float2(dq[n][2 * half], dq[n][2 * half + 1]);
  }
}

// The producer warpgroup: thread 0 issues the K/V and Q/dO tensor copies, warp 1 (softmax) the
// row terms; both walk the consumers' list of kv tiles and q tiles. `thread`: 0..127.
// kPrefetchNextKv: after a kv tile's last Q load, thread 0 prefetches the block's next kv tile's
// K and V into L2.
template <Mode kMode, int kDim, bool kPrefetchNextKv>
__device__ inline void produce_backward_tiles(const AttentionParams& p,
                                              const ForwardBlock<kDim, kDim>& block,
                                              const BackwardTmaMaps& maps, int thread,
                                              unsigned k_tile, unsigned v_tile, unsigned q_tiles,
                                              unsigned do_tiles, float* row_terms,
                                              unsigned barriers) {
  using Layout = BwdWsLayout<kDim, GradQStore::kAtomic>;
  const bool is_copier = thread == 0;
  const bool is_row_terms_warp = kMode == Mode::kSoftmax && thread / kMmaLanes == 1;
  if (!is_copier && !is_row_terms_warp) return;
  const BlockSequence& seq = block.seq;
  const unsigned kv_full = barriers, kv_empty = barriers + 8;
  const unsigned q_full = barriers + 16, q_empty = q_full + kBwdWsStages * 8;
  const int q_tile_count = (seq.mask.len_q + kTileCols - 1) / kTileCols;
  const int kv_tile_count = (seq.raw_len_kv + kBwdWgmmaRows - 1) / kBwdWgmmaRows;
  if (is_copier) {
    tma_prefetch_map(&maps.qkv.q);
    tma_prefetch_map(&maps.qkv.k);
    tma_prefetch_map(&maps.qkv.v);
    tma_prefetch_map(&maps.grad_out);
  }
  int kv_loads = 0, position = 0;
  for (int tile = block.slot; tile < kv_tile_count; tile += p.grid_tiles) {
    const int kv0 = tile * kBwdWgmmaRows;
    int first = -1;
    for (int i = 0; i < q_tile_count && first < 0; ++i)
      if (bwd_q_tile_needed(seq.mask, i, kv0)) first = i;
    if (first < 0) continue;  // no q row sees this kv tile: dK, dV are zero, nothing to load
    if (is_copier) {
      if (kv_loads > 0) mbarrier_wait(kv_empty, static_cast<unsigned>(kv_loads - 1) & 1u);
      mbarrier_arrive_expect_bytes(kv_full, 2 * Layout::kKvTileBytes);
      const std::int64_t kv_row = seq.kv_begin + kv0;
      tma_load_tile<kBwdWgmmaRows, kDim>(k_tile, &maps.qkv.k, seq.head, kv_row, kv_full);
      tma_load_tile<kBwdWgmmaRows, kDim>(v_tile, &maps.qkv.v, seq.head, kv_row, kv_full);
    }
    ++kv_loads;
    for (int i = first; i < q_tile_count; ++i) {
      if (!bwd_q_tile_needed(seq.mask, i, kv0)) continue;
      const RingSlot slot = ring_slot<kBwdWsStages>(position++);
      if (slot.round > 0) mbarrier_wait(q_empty + slot.stage * 8, (slot.round - 1) & 1u);
      const unsigned full_stage = q_full + slot.stage * 8;
      if (is_copier) {
        mbarrier_arrive_expect_bytes(full_stage, 2 * Layout::kQTileBytes);
        const std::int64_t q_row = seq.q_begin + static_cast<std::int64_t>(i) * kTileCols;
        tma_load_tile<kTileCols, kDim>(q_tiles + slot.stage * Layout::kQTileBytes, &maps.qkv.q,
                                       seq.head, q_row, full_stage);
        tma_load_tile<kTileCols, kDim>(do_tiles + slot.stage * Layout::kQTileBytes,
                                       &maps.grad_out, seq.head, q_row, full_stage);
      } else {
        // 2 x 64 floats, 4 per lane; rows past the sequence read as 0.
        const int lane = thread % kMmaLanes;
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const int which = k / 2;  // 0: lse*log2e, 1: D
          const int row = i * kTileCols + lane + kMmaLanes * (k % 2);
          const float* source = p.row_terms +
                                (static_cast<std::int64_t>(which) * p.heads + seq.head) * p.total_q +
                                seq.q_begin + row;
          row_terms[(slot.stage * 2 + which) * kTileCols + lane + kMmaLanes * (k % 2)] =
              row < seq.mask.len_q ? *source : 0.0f;
        }
        mbarrier_arrive(full_stage);  // release: the stores above are visible to the waiters
      }
    }
    const int next_tile = tile + p.grid_tiles;
    if (kPrefetchNextKv && is_copier && next_tile < kv_tile_count) {
      // Issued about two q steps before the consumers finish this tile: late enough that the
      // streamed q / dO rows do not evict it first, early enough to cover the HBM latency.
      const std::int64_t next_row =
          seq.kv_begin + static_cast<std::int64_t>(next_tile) * kBwdWgmmaRows;
      tma_prefetch_tile_l2<kBwdWgmmaRows, kDim>(&maps.qkv.k, seq.head, next_row);
      tma_prefetch_tile_l2<kBwdWgmmaRows, kDim>(&maps.qkv.v, seq.head, next_row);
    }
  }
}


// Long on purpose, as the other attention kernels: one body whose phases share registers.
template <Elem16 E, Mode kMode, Activation kAct, int kDim, GradQStore kStore,
          bool kTanhSigmoid = false, bool kOverlapKvTiles = false, bool kFusedGradQ = false>
__global__ void __launch_bounds__(kBwdWsThreads, 1)
    attention_backward_wgmma_ws_kernel(const AttentionParams p,
                                       const __grid_constant__ BackwardTmaMaps maps) {
  using Layout = BwdWsLayout<kDim, kStore, kFusedGradQ>;
  static_assert(!kFusedGradQ || kStore == GradQStore::kTmaReduce, "dQ fused into the reduce-adds");
  static_assert(kDim == 64 || kDim == 128, "the wgmma backward takes d_qk = d_v in {64, 128}");
  static_assert(kWarpSize == kMmaLanes, "warpgroups are 4 warps of 32 lanes");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const unsigned base = shared_address(shared_bytes);
  const unsigned k_tile = (base + (kSharedAlignBytes - 1)) & ~unsigned{kSharedAlignBytes - 1};
  const unsigned v_tile = k_tile + Layout::kKvTileBytes;
  const unsigned q_tiles = v_tile + Layout::kKvTileBytes;                   // stages
  const unsigned do_tiles = q_tiles + kBwdWsStages * Layout::kQTileBytes;   // stages
  const unsigned ds_tiles = do_tiles + kBwdWsStages * Layout::kQTileBytes;  // 2 buffers x 2
  const unsigned grad_q_tile = ds_tiles + 4 * Layout::kDsTileBytes;         // kTmaReduce
  const unsigned row_terms_address = grad_q_tile + Layout::kGradQTileBytes;
  const unsigned barriers = row_terms_address + Layout::kRowTermsBytes;
  const unsigned kv_full = barriers, kv_empty = barriers + 8;
  const unsigned q_full = barriers + 16, q_empty = q_full + kBwdWsStages * 8;
  const unsigned fused_address = barriers + Layout::kBarrierBytes;  // kFusedGradQ
  unsigned char* const shared_window = shared_bytes + (k_tile - base);
  auto* const row_terms = reinterpret_cast<float*>(shared_window + (row_terms_address - k_tile));
  constexpr int kConsumerThreads = 2 * kWarpgroupThreads;
  if (threadIdx.x == 0) {
    mbarrier_init(kv_full, 1);
    mbarrier_init(kv_empty, kConsumerThreads);
    for (int s = 0; s < kBwdWsStages; ++s) {
      mbarrier_init(q_full + s * 8, kMode == Mode::kSoftmax ? 1 + kMmaLanes : 1);
      mbarrier_init(q_empty + s * 8, kConsumerThreads);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the only block-wide barrier: the mbarriers are initialised

  const ForwardBlock<kDim, kDim> block(p);  // (sequence, head), slot, strides
  const BlockSequence& seq = block.seq;
  // Broadcast from lane 0 so ptxas sees a warp-uniform role (see the forward_ws kernel).
  const int warpgroup = shfl(static_cast<int>(threadIdx.x) / kWarpgroupThreads, 0);
  if (warpgroup == 0) {
    registers_decrease<kBwdWsProducerRegisters>();
    produce_backward_tiles<kMode, kDim, kOverlapKvTiles>(
        p, block, maps, static_cast<int>(threadIdx.x), k_tile, v_tile, q_tiles, do_tiles, row_terms,
        barriers);
    return;
  }
  registers_increase<kBwdWsConsumerRegisters>();
  const int consumer = warpgroup - 1;  // 0 or 1: kv rows [64 consumer, 64 consumer + 64)
  const int consumer_thread = static_cast<int>(threadIdx.x) - warpgroup * kWarpgroupThreads;
  const int warpgroup_row0 = consumer * kWarpgroupRows;
  const int warp_row0 = warpgroup_row0 + (consumer_thread / kMmaLanes) * 16;
  const unsigned k_rows = k_tile + warpgroup_row0 * kSwizzleRowBytes;
  const unsigned v_rows = v_tile + warpgroup_row0 * kSwizzleRowBytes;
  const float score_scale = kMode == Mode::kSoftmax ? p.alpha * kLog2e : p.alpha;
  const float grad_k_scale = kMode == Mode::kSoftmax ? p.alpha : p.alpha * p.inv_max_seq_len;
  const float grad_v_scale = kMode == Mode::kSoftmax ? 1.0f : p.inv_max_seq_len;
  const int q_tile_count = (seq.mask.len_q + kTileCols - 1) / kTileCols;
  const int kv_tile_count = (seq.raw_len_kv + kBwdWgmmaRows - 1) / kBwdWgmmaRows;
  const bool has_grad_q_columns = consumer < kDim / 64;
  const bool is_reducer = kStore == GradQStore::kTmaReduce && consumer_thread == 0;
  int kv_loads = 0, position = 0, ds_steps = 0;

  for (int tile = block.slot; tile < kv_tile_count; tile += p.grid_tiles) {
    const int kv0 = tile * kBwdWgmmaRows;
    const int group_kv0 = kv0 + warpgroup_row0;
    int first = -1;
    for (int i = 0; i < q_tile_count && first < 0; ++i)
      if (bwd_q_tile_needed(seq.mask, i, kv0)) first = i;
    const FullQRows block_full = plain_causal_full_q_rows(seq.mask, kv0 + kBwdWgmmaRows - 1);
    const FullQRows group_full = plain_causal_full_q_rows(seq.mask, group_kv0 + kWarpgroupRows - 1);
    float dk[kDim / 8][4];
    float dv[kDim / 8][4];
#pragma unroll
    for (int n = 0; n < kDim / 8; ++n) {
      dk[n][0] = dk[n][1] = dk[n][2] = dk[n][3] = 0.0f;
      dv[n][0] = dv[n][1] = dv[n][2] = dv[n][3] = 0.0f;
    }
    if (first >= 0) mbarrier_wait(kv_full, static_cast<unsigned>(kv_loads) & 1u);

    for (int i = first; first >= 0 && i < q_tile_count; ++i) {
      const int q0 = i * kTileCols;
      if (!block_full.covers(q0) && !bwd_q_tile_needed(seq.mask, i, kv0)) continue;
      const RingSlot slot = ring_slot<kBwdWsStages>(position++);
      mbarrier_wait(q_full + slot.stage * 8, slot.round & 1u);
      const unsigned q_address = q_tiles + slot.stage * Layout::kQTileBytes;
      const unsigned do_address = do_tiles + slot.stage * Layout::kQTileBytes;
      const unsigned ds_buffer = ds_tiles + (ds_steps++ % 2) * 2 * Layout::kDsTileBytes;
      unsigned char* const ds_tile_pointer =
          shared_window + (ds_buffer + consumer * Layout::kDsTileBytes - k_tile);
      // Uniform over the warpgroup (wgmma needs all 128 threads).
      const TileClass group_class =
          group_full.covers(q0)
              ? TileClass::kFull
              : seq.mask.classify(q0, q0 + kTileCols, group_kv0, group_kv0 + kWarpgroupRows);
      if (group_class == TileClass::kEmpty) {
        // The other warpgroup's rows see this q tile: its dQ reads zeros for these rows.
#pragma unroll
        for (int k = 0; k < Layout::kDsTileBytes / (16 * kWarpgroupThreads); ++k)
          *reinterpret_cast<uint4*>(ds_tile_pointer + (k * kWarpgroupThreads + consumer_thread) *
                                                          16) = uint4{0, 0, 0, 0};
      } else {
        const float* lse2 = row_terms + (slot.stage * 2) * kTileCols;
        const float* row_dot = row_terms + (slot.stage * 2 + 1) * kTileCols;
        float s[kTileCols / 8][4];   // S^T, then P^T (softmax) or act'(alpha S^T) (pointwise)
        float dp[kTileCols / 8][4];  // dP^T, then dS^T
        std::uint32_t pt_frag[kTileCols / 16][4];
        issue_scores_weights_grad_v<E, kMode, kDim, kTanhSigmoid>(
            s, dp, pt_frag, dv, k_rows, v_rows, q_address, do_address, lse2, kAct, score_scale,
            seq.mask, group_class == TileClass::kPartial, q0, kv0 + warp_row0);
        // dP^T and dV landed: P^T's fragments are free before dS^T needs registers (waiting for
        // dP^T alone left P^T live and spilled at d = 128; the other consumer's products keep
        // the tensor cores busy meanwhile).
        wgmma_wait_group<0>();
        wgmma_fence_operands(dp);
        wgmma_fence_operands(dv);
        wgmma_fence_operands(pt_frag);
        grad_scores<kMode>(dp, s, row_dot);
        std::uint32_t ds_frag[kTileCols / 16][4];
        to_a_fragments<E, kTileCols>(ds_frag, dp);
        issue_accumulate<E, kDim>(dk, ds_frag, q_address);  // dK += dS^T Q
        store_ds_tile(ds_tile_pointer, ds_frag);
        wgmma_wait_group<0>();  // dK: the stage's Q and dO are read
        wgmma_fence_operands(dk);
        wgmma_fence_operands(ds_frag);
      }
      mbarrier_arrive(q_empty + slot.stage * 8);
      // The dQ tile's previous reduce finished reading it before anyone rewrites it below.
      if (is_reducer) bulk_wait_group_read<0>();
      fence_generic_to_async_shared();
      named_barrier_sync(kBwdWsDsReadyBarrier, kConsumerThreads);  // both dS^T tiles written
      if (has_grad_q_columns) {
        float dq[8][4];
        issue_grad_q<E, kDim, kBwdWgmmaRows>(dq, ds_buffer, k_tile, consumer);
        wgmma_wait_group<0>();
        wgmma_fence_operands(dq);
        if constexpr (kStore == GradQStore::kAtomic) {
          add_grad_q_block<kDim>(p, seq, dq, q0, consumer);
        } else {
          unsigned char* const grad_q_pointer = shared_window + (grad_q_tile - k_tile);
          store_grad_q_tile(grad_q_pointer, dq, consumer);
          fence_generic_to_async_shared();
          named_barrier_sync(kBwdWsGradQBarrier0 + consumer, kWarpgroupThreads);
          if (is_reducer) {
#pragma unroll
            for (int b = 0; b < 64 / kGradQBoxColumns; ++b) {
              const int box = consumer * (64 / kGradQBoxColumns) + b;
              tma_reduce_add_box(&maps.grad_q_accum,
                                 grad_q_tile + box * kTileCols * kSwizzleRowBytes,
                                 seq.head * kDim + box * kGradQBoxColumns,
                                 static_cast<int>(seq.q_begin + q0));
            }
            bulk_commit_group();
          }
        }
      }
    }
    if (first >= 0) {
      mbarrier_arrive(kv_empty);  // every product that read K and V was waited for
      ++kv_loads;
    }
    // The adds into one dQ element come in kv-tile order (one block per (sequence, head)); with
    // kOverlapKvTiles only where that order is promised (the deterministic mode).
    if (is_reducer && (!kOverlapKvTiles || p.deterministic)) bulk_wait_group_all();
    if constexpr (kOverlapKvTiles) {
      // Each warpgroup stages its 64 rows of dK then dV over the dS^T and dQ tiles, once the
      // reduce-adds read the dQ tile and both warpgroups' dQ products (which read both dS^T
      // tiles) were waited for.
      if (is_reducer) bulk_wait_group_read<0>();
      named_barrier_sync(kBwdWsDsReadyBarrier, kConsumerThreads);
      constexpr int kStagedBytes = kWarpgroupRows * kDim * 2;  // one warpgroup's dK (or dV)
      static_assert(4 * kStagedBytes <= 4 * Layout::kDsTileBytes + Layout::kGradQTileBytes,
                    "dK and dV of both warpgroups fit the dS^T and dQ tiles");
      unsigned char* const staging =
          shared_window + (ds_tiles - k_tile) + consumer * 2 * kStagedBytes;
      stage_grad_kv_rows<E, kDim>(staging, dk, grad_k_scale, opaque(consumer_thread));
      stage_grad_kv_rows<E, kDim>(staging + kStagedBytes, dv, grad_v_scale,
                                  opaque(consumer_thread));
      named_barrier_sync(kBwdWsGradQBarrier0 + consumer, kWarpgroupThreads);
      const int rows = seq.raw_len_kv - group_kv0;
      const std::int64_t out_row0 = seq.kv_begin + group_kv0;
      copy_staged_rows<kDim>(staging, p.grad_k, out_row0, rows, opaque(block.qk_stride),
                             seq.head * kDim, opaque(consumer_thread));
      copy_staged_rows<kDim>(staging + kStagedBytes, p.grad_v, out_row0, rows,
                             opaque(block.v_stride), seq.head * kDim, opaque(consumer_thread));
      // Both warpgroups read their staging before the next kv tile rewrites the dS^T tiles.
      named_barrier_sync(kBwdWsDsReadyBarrier, kConsumerThreads);
    } else {
      store_grad_kv<E, kDim>(p, block, dk, dv, kv0 + warp_row0, grad_k_scale, grad_v_scale);
    }
  }
  if (is_reducer) bulk_wait_group_all();
  if constexpr (kFusedGradQ) {
    // backward_grad_q_fused.cuh: the block's adds are performed; the pair's last block converts.
    if (is_reducer) fence_async_to_generic_global();
    named_barrier_sync(kBwdWsDsReadyBarrier, kConsumerThreads);
    int* const is_last_block = reinterpret_cast<int*>(shared_window + (fused_address - k_tile));
    if (consumer == 0 && consumer_thread == 0) {
      const ForwardSlot grid_slot = forward_grid_slot(static_cast<std::int64_t>(blockIdx.x),
                                                      p.batch * p.heads, p.grid_tiles,
                                                      p.q_tiles_fastest);
      *is_last_block =
          atomic_add_acq_rel_gpu(p.grad_q_counters + grid_slot.sequence_head, 1) == p.grid_tiles - 1;
    }
    named_barrier_sync(kBwdWsDsReadyBarrier, kConsumerThreads);
    if (*is_last_block) {
      convert_pair_grad_q<E, kDim, kConsumerThreads>(p, seq, grad_k_scale,
                                                     consumer * kWarpgroupThreads + consumer_thread);
    }
  }
#else
  // Not an sm_90a binary: the host never launches this body (can_implement_backward refuses).
  (void)p;
  (void)maps;
#endif
}

}  // namespace parity::gpu_device::attention
