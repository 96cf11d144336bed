// Jagged attention forward on Hopper wgmma, warp-specialized ("ws", sm_90a only): the round-2
// kernel's math (forward_wgmma_kernel.cuh: per kv tile S = Q K^T, P = act or online softmax,
// O += P V, the intra-warpgroup overlap of S_j with P_{j-1} V_{j-1}) with FA3's schedule
// (hopper/ in Dao-AILab/flash-attention):
//   - warpgroup 0 is the producer: it copies K and V tiles (cp.async into the 128-byte swizzle)
//     through a ring of WsConfig::kStages stages guarded by mbarriers: full[s] (128 arrivals:
//     every producer thread after its copies of the tile landed and were fenced to the async
//     proxy) and empty[s] (256 arrivals: every consumer thread after its wgmma reads of the stage
//     completed). The consumers never share a block barrier per step.
//   - warpgroups 1 and 2 are the consumers, 64 q rows each (each copies its own Q rows); they
//     ping-pong through two named barriers: a consumer issues its GEMMs of step j only after the
//     other one issued its GEMMs, so one warpgroup's activation or softmax runs while the other's
//     products occupy the tensor cores.
//   - setmaxnreg moves registers from the producer (kProducerRegisters) to the consumers
//     (kConsumerRegisters): 128 x 40 + 256 x 232 = 64512, exactly the block's launch registers
//     (384 x 168; WsConfig).
// kKeys is the S tile width: 64 (attention_forward_gpu_wgmma_ws: m64n64k16 for S, 5 stages) or
// 128 (attention_forward_gpu_wgmma_ws128: m64n128k16 for S and k = 128 for P V, half the steps
// and so half the barrier, mbarrier and commit overhead per key; at d = 128 only 3 stages fit).
// kLoad = TileLoad::kTma (attention_forward_gpu_wgmma_tma, _tma64, _tma_seq): one producer thread
// issues bulk tensor copies instead, full[s] takes one arrival plus the tile's bytes, each
// consumer's Q arrives the same way on its own mbarrier, and the split is 24 / 240 registers.
// The cp.async producer lags kProducerLag tiles behind its copies before it waits for them
// (cp.async groups are per thread: one group per tile), so kProducerLag + 1 tiles stream in
// while it waits; the ring holds them plus the consumers' tiles j - 1 (P V pending) and j.
// Every consumer waits full[s] for every tile in the block's range, even one its rows cannot
// see: an empty[s] arrival must belong to the phase of that tile, and a consumer that ran ahead
// would complete an earlier phase alone.
#pragma once

#include <cuda.h>  // CUtensorMap

#include <type_traits>

#include "backends/gpu/attention/forward_wgmma_kernel.cuh"
#include "backends/gpu/attention/forward_wgmma_walk.cuh"

namespace parity::gpu_device::attention {

inline constexpr int kWsThreads = 3 * kWarpgroupThreads;  // producer + two consumers
inline constexpr int kWsMaxStages = 5;
inline constexpr int kWsMaxProducerLag = 2;
inline constexpr int kMaxSharedOptInBytes = 232448;  // sm_90: 227 KiB of dynamic shared memory
// Registers per thread the block launches with (__launch_bounds__(kWsThreads, 1): the register
// file over 384 threads, rounded down to the allocation unit of 8; ptxas -v: 168), 64512 in all.
// setmaxnreg moves registers only within the block's pool (PTX ISA: setmaxnreg.inc blocks until
// the CTA's pool has them): a split needing more than the launch registers, such as the 32 / 240
// one (65536) that the persistent walk once had, makes every block wait forever.
inline constexpr int kWsLaunchRegisters = 65536 / kWsThreads / 8 * 8;
// Named barrier ids (0 is __syncthreads): the consumers' schedule barriers, then one per
// consumer warpgroup for its Q tile.
inline constexpr int kScheduleBarrier0 = 1;
inline constexpr int kQBarrier0 = 3;

// How the K and V tiles (and Q) reach shared memory.
enum class TileLoad {
  kCpAsync,  // every producer thread copies 16-byte chunks; each consumer copies its Q rows
  kTma,      // one producer thread issues bulk tensor copies (TMA) completing on the full
             // mbarrier by byte count; one thread per consumer does the same for its Q rows
};

// The tensor maps of the TMA kernels (2-D [rows, heads x d] views of q, k, v, 64-column boxes,
// 128-byte swizzle; src/backends/cuda/common/tensor_map.hpp): Q boxes of kWarpgroupRows rows,
// K and V boxes of kKeys rows. Unused (zero) for cp.async.
struct TmaMaps {
  CUtensorMap q;
  CUtensorMap k;
  CUtensorMap v;
};

// The ring and register split of the kernel with S tiles of kKeys keys (64: "ws", 128: "ws128").
// The ring takes as many K+V stages as fit beside Q (at most kWsMaxStages; d = 128 with 128-key
// tiles: 3), and the producer lags stages - 3 tiles (at most kWsMaxProducerLag).
template <int kDim, int kKeys, TileLoad kLoad = TileLoad::kCpAsync>
struct WsConfig {
  static constexpr int kQBytes = kWgmmaRows * kDim * 2;
  static constexpr int kTileBytes = kKeys * kDim * 2;  // one of K or V
  static constexpr int kBarrierBytes = 2 * 8;          // full and empty mbarriers of a stage
  static constexpr int kFitStages =
      (kMaxSharedOptInBytes - kQBytes - kSharedAlignBytes) / (2 * kTileBytes + kBarrierBytes);
  static constexpr int kStages = kFitStages < kWsMaxStages ? kFitStages : kWsMaxStages;
  // cp.async only (a TMA producer never waits for its own copies).
  static constexpr int kProducerLag =
      kStages - 3 < kWsMaxProducerLag ? kStages - 3 : kWsMaxProducerLag;
  // cp.async copies keep the producer's address arithmetic in registers: 40 of them, 56 for
  // 128 x 128 tiles (ptxas -v: 12 bytes spilled at 40, none at 56; the consumers need at most
  // 224 there, and 232 at d = 64, where 224 spills).
  // A TMA producer is one thread with a few addresses: 24 (FA3's split, 24/240).
  static constexpr bool kTma = kLoad == TileLoad::kTma;
  static constexpr bool kWideTiles = kKeys == 128 && kDim == 128;
  static constexpr int kProducerRegisters = kTma ? 24 : kWideTiles ? 56 : 40;
  static constexpr int kConsumerRegisters = kTma ? 240 : kWideTiles ? 224 : 232;
  static constexpr int kQBarrierBytes = 2 * 8;  // TMA: one Q mbarrier per consumer
  static constexpr int kSharedBytes = kQBytes + kStages * (2 * kTileBytes + kBarrierBytes) +
                                      (kTma ? kQBarrierBytes : 0) + kSharedAlignBytes;
  static_assert(kWarpgroupThreads * (kProducerRegisters + 2 * kConsumerRegisters) <=
                    kWsThreads * kWsLaunchRegisters,
                "the registers the block was launched with (setmaxnreg's pool)");
  static_assert(kProducerLag >= 0, "the ring holds the lagging tiles plus the consumers' two");
  static_assert(kSharedBytes <= kMaxSharedOptInBytes, "the shared memory of one block");
};

template <int kDim, int kKeys = kTileCols, TileLoad kLoad = TileLoad::kCpAsync>
constexpr int forward_wgmma_ws_shared_bytes() {
  return WsConfig<kDim, kKeys, kLoad>::kSharedBytes;
}

__device__ inline void mbarrier_init(unsigned barrier, unsigned count) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(barrier), "r"(count) : "memory");
#endif
}
// Makes the initialised mbarriers visible to the async proxy (the TMA unit completes on them).
__device__ inline void fence_mbarrier_init() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
__device__ inline void mbarrier_arrive(unsigned barrier) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("{\n.reg .b64 state;\nmbarrier.arrive.shared::cta.b64 state, [%0];\n}" ::"r"(barrier)
               : "memory");
#endif
}
// Returns once the phase of `barrier` with parity `parity` completed. try_wait is given a
// suspend-time hint (CUTLASS's, 10^7 ns): the thread sleeps until the phase completes or the hint
// runs out instead of retrying after the system's short default, which made the TMA producer's
// wait for a free stage a two-instruction spin (ncu: 9% of all instructions the forward issued)
// on the scheduler it shares with two consumer warps.
__device__ inline void mbarrier_wait(unsigned barrier, unsigned parity) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr unsigned kSuspendTimeHintNs = 10000000;
  unsigned done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(barrier), "r"(parity), "n"(kSuspendTimeHintNs)
        : "memory");
  } while (done == 0);
#endif
}
__device__ inline void named_barrier_sync(int id, int threads) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
#endif
}
__device__ inline void named_barrier_arrive(int id, int threads) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
#endif
}
// One arrival that also tells the barrier to expect `bytes` more of asynchronous copies in this
// phase: the phase completes once every arrival and every byte came.
__device__ inline void mbarrier_arrive_expect_bytes(unsigned barrier, unsigned bytes) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(barrier), "r"(bytes)
               : "memory");
#endif
}
// Bulk tensor copy of the box at (column, row) of a 2-D tensor map to shared memory; its bytes
// complete on `barrier`.
__device__ inline void tma_load_box(unsigned destination, const CUtensorMap* map, int column, int row,
                                    unsigned barrier) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(destination),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(column), "r"(row), "r"(barrier)
      : "memory");
#endif
}
__device__ inline void tma_prefetch_map(const CUtensorMap* map) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
#endif
}
// A tile of kRows rows x kDim columns of head `head` starting at global row `row`, column block
// by column block (one 64-column box each, kRows x 128 bytes apart: the layout of wgmma.cuh).
template <int kRows, int kDim>
__device__ inline void tma_load_tile(unsigned tile_address, const CUtensorMap* map, int head,
                                     std::int64_t row, unsigned barrier) {
#pragma unroll
  for (int b = 0; b < kDim / 64; ++b)
    tma_load_box(tile_address + b * kRows * kSwizzleRowBytes, map, head * kDim + 64 * b,
                 static_cast<int>(row), barrier);
}

template <int kRegisters>
__device__ inline void registers_decrease() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
#endif
}
template <int kRegisters>
__device__ inline void registers_increase() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
#endif
}

// Ring position of the n-th tile through a ring of kStages (n counts across q tiles).
struct RingSlot {
  unsigned stage;
  unsigned round;  // how many times the ring wrapped before this tile
};
template <int kStages>
__device__ inline RingSlot ring_slot(int n) {
  return {static_cast<unsigned>(n % kStages), static_cast<unsigned>(n / kStages)};
}
// The consumers' walk through the ring: stage and phase parity kept as counters, not derived
// from a tile count per step (n % 3 and n / 3 took a wide multiply and five more instructions).
template <int kStages>
struct RingCursor {
  unsigned stage = 0;
  unsigned parity = 0;  // of the ring's round: the phase of the stage's mbarriers to wait for
  __device__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      parity ^= 1u;
    }
  }
};

// The producer warpgroup's loop: every q tile of this block, every kv tile in its range, in the
// consumers' order. `thread` is 0..127.
template <int kDim, int kKeys>
__device__ inline void produce_kv_tiles(const AttentionParams& p, const ForwardBlock<kDim, kDim>& block,
                                        int thread, unsigned k_tiles, unsigned v_tiles,
                                        unsigned full, unsigned empty) {
  using Config = WsConfig<kDim, kKeys>;
  constexpr unsigned kTileBytes = Config::kTileBytes;
  const BlockSequence& seq = block.seq;
  const int kv_tile_count = (seq.mask.len_kv + kKeys - 1) / kKeys;
  const int q_tile_count = (seq.raw_len_q + kWgmmaRows - 1) / kWgmmaRows;
  int filled = 0, published = 0;
  // Publishes the oldest unpublished tile once at most kPending newer groups are in flight.
  const auto publish = [&](auto pending_constant) {
    wait_async_copies<decltype(pending_constant)::value>();
    fence_generic_to_async_shared();
    mbarrier_arrive(full + ring_slot<Config::kStages>(published).stage * 8);
    ++published;
  };
  for (int tile = p.grid_tiles - 1 - block.slot; tile < q_tile_count; tile += p.grid_tiles) {
    const int q0 = tile * kWgmmaRows;
    int first = -1, last = -1;
    reachable_tiles(seq.mask, q0, q0 + kWgmmaRows, kKeys, kv_tile_count, first, last);
    for (int j = first; first >= 0 && j <= last; ++j) {
      const RingSlot slot = ring_slot<Config::kStages>(filled);
      // The stage's previous tile (round - 1) was released by both consumers.
      if (slot.round > 0) mbarrier_wait(empty + slot.stage * 8, (slot.round - 1) & 1);
      const int kv_row0 = j * kKeys;
      copy_rows_swizzled<kKeys, kDim, kWarpgroupThreads>(k_tiles + slot.stage * kTileBytes, thread,
                                                         block.k_base, block.qk_stride, kv_row0,
                                                         seq.mask.len_kv);
      copy_rows_swizzled<kKeys, kDim, kWarpgroupThreads>(v_tiles + slot.stage * kTileBytes, thread,
                                                         block.v_base, block.v_stride, kv_row0,
                                                         seq.mask.len_kv);
      commit_async_copies();
      ++filled;
      if (filled - published > Config::kProducerLag)
        publish(std::integral_constant<int, Config::kProducerLag>{});
    }
  }
  while (published < filled) publish(std::integral_constant<int, 0>{});
}

// The TMA producer: one thread walks the same tiles; per tile it waits for the stage to be
// released, arms full[s] with the tile's bytes and issues the K and V boxes. Rows past the
// sequence's end are the next sequence's (zeros past the tensor): the mask hides them.
template <int kDim, int kKeys, bool kPersistent>
__device__ inline void produce_kv_tiles_tma(const AttentionParams& p,
                                            const ForwardBlock<kDim, kDim>& block,
                                            const TmaMaps& maps, unsigned k_tiles,
                                            unsigned v_tiles, unsigned full, unsigned empty) {
  using Config = WsConfig<kDim, kKeys, TileLoad::kTma>;
  constexpr unsigned kTileBytes = Config::kTileBytes;
  tma_prefetch_map(&maps.k);
  tma_prefetch_map(&maps.v);
  int filled = 0;
  for (QTile t = first_q_tile<kPersistent>(p, block); t.valid(); next_q_tile<kPersistent>(p, t)) {
    const BlockSequence& seq = t.seq;
    const int kv_tile_count = (seq.mask.len_kv + kKeys - 1) / kKeys;
    const int q0 = t.tile * kWgmmaRows;
    int first = -1, last = -1;
    reachable_tiles(seq.mask, q0, q0 + kWgmmaRows, kKeys, kv_tile_count, first, last);
    for (int j = first; first >= 0 && j <= last; ++j) {
      const RingSlot slot = ring_slot<Config::kStages>(filled++);
      if (slot.round > 0) mbarrier_wait(empty + slot.stage * 8, (slot.round - 1) & 1);
      const unsigned full_stage = full + slot.stage * 8;
      mbarrier_arrive_expect_bytes(full_stage, 2 * kTileBytes);
      const std::int64_t kv_row = seq.kv_begin + static_cast<std::int64_t>(j) * kKeys;
      tma_load_tile<kKeys, kDim>(k_tiles + slot.stage * kTileBytes, &maps.k, seq.head, kv_row,
                                 full_stage);
      tma_load_tile<kKeys, kDim>(v_tiles + slot.stage * kTileBytes, &maps.v, seq.head, kv_row,
                                 full_stage);
    }
  }
}

// Long on purpose, as the other forwards: the consumer phases share registers.
template <Elem16 E, Mode kMode, int kDim, int kKeys = kTileCols,
          TileLoad kLoad = TileLoad::kCpAsync, bool kPersistent = false>
__global__ void __launch_bounds__(kWsThreads, 1)
    attention_forward_wgmma_ws_kernel(const AttentionParams p, const __grid_constant__ TmaMaps maps) {
  using Config = WsConfig<kDim, kKeys, kLoad>;
  static_assert(!kPersistent || kLoad == TileLoad::kTma, "the persistent walk loads with TMA");
  // The persistent producer also walks the item list (QTile) in the TMA split's 24 registers
  // (32-bit item arithmetic, forward_schedule.hpp; ptxas -v: no spills).
  constexpr int kProducerRegisters = Config::kProducerRegisters;
  constexpr int kConsumerRegisters = Config::kConsumerRegisters;
  static_assert(kDim == 64 || kDim == 128, "the wgmma forward takes d_qk = d_v in {64, 128}");
  static_assert(kWarpSize == kMmaLanes, "warpgroups are 4 warps of 32 lanes");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const unsigned q_tile =
      (shared_address(shared_bytes) + (kSharedAlignBytes - 1)) & ~unsigned{kSharedAlignBytes - 1};
  constexpr int kStages = Config::kStages;
  constexpr unsigned kTileBytes = Config::kTileBytes;
  const unsigned k_tiles = q_tile + Config::kQBytes;        // kStages x kTileBytes
  const unsigned v_tiles = k_tiles + kStages * kTileBytes;  // kStages x kTileBytes
  const unsigned full = v_tiles + kStages * kTileBytes;     // kStages mbarriers
  const unsigned empty = full + kStages * 8;                // kStages mbarriers
  const unsigned q_full = empty + kStages * 8;              // TMA: 2 mbarriers
  constexpr int kConsumerThreads = 2 * kWarpgroupThreads;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full + s * 8, Config::kTma ? 1 : kWarpgroupThreads);
      mbarrier_init(empty + s * 8, kConsumerThreads);
    }
    if constexpr (Config::kTma) {
      mbarrier_init(q_full, 1);
      mbarrier_init(q_full + 8, 1);
      fence_mbarrier_init();
    }
  }
  __syncthreads();  // the only block-wide barrier: the mbarriers are initialised

  const ForwardBlock<kDim, kDim> block(p);
  // Broadcast from lane 0: ptxas then knows the role branch is warp-uniform (a threadIdx-derived
  // branch around wgmma makes it serialize every wgmma, C7518).
  const int warpgroup = shfl(static_cast<int>(threadIdx.x) / kWarpgroupThreads, 0);
  if (warpgroup == 0) {
    registers_decrease<kProducerRegisters>();
    if constexpr (Config::kTma) {
      if (threadIdx.x == 0)
        produce_kv_tiles_tma<kDim, kKeys, kPersistent>(p, block, maps, k_tiles, v_tiles, full,
                                                       empty);
    } else {
      produce_kv_tiles<kDim, kKeys>(p, block, static_cast<int>(threadIdx.x), k_tiles, v_tiles,
                                    full, empty);
    }
    return;
  }
  registers_increase<kConsumerRegisters>();
  const int consumer = warpgroup - 1;  // 0 or 1
  const int consumer_thread = static_cast<int>(threadIdx.x) - warpgroup * kWarpgroupThreads;
  const int warpgroup_row0 = consumer * kWarpgroupRows;
  const int warp_row0 = warpgroup_row0 + (consumer_thread / kMmaLanes) * 16;
  const unsigned q_rows_address = q_tile + warpgroup_row0 * kSwizzleRowBytes;
  const float score_scale = kMode == Mode::kSoftmax ? p.alpha * kLog2e : p.alpha;
  const std::int64_t row_stride = static_cast<std::int64_t>(p.heads) * kDim;  // of q, k, v, out
  const int own_schedule = kScheduleBarrier0 + consumer;
  const int other_schedule = kScheduleBarrier0 + (1 - consumer);
  // Consumer 1 goes first: its schedule barrier starts with one arrival (its own), matched by
  // one extra sync at the end, so both barriers end balanced.
  if (consumer == 1) named_barrier_arrive(own_schedule, kConsumerThreads);
  RingCursor<kStages> ring;
  const bool silu = opaque(static_cast<int>(p.activation == Activation::kSilu)) != 0;
  // TMA: this warpgroup's Q rows of q tile `tile`, issued by one thread once every warp of the
  // warpgroup is past its products that read the previous Q (the named barrier); the next tile's
  // Q is issued before the current tile's epilogue, so its load overlaps the stores.
  const unsigned q_barrier = q_full + consumer * 8;
  int q_loads = 0;  // Q tiles this consumer waited for (the parity of its Q mbarrier)
  const auto issue_q_tma = [&](const QTile& t) {
    named_barrier_sync(kQBarrier0 + consumer, kWarpgroupThreads);
    if (consumer_thread != 0) return;
    mbarrier_arrive_expect_bytes(q_barrier, kWarpgroupRows * kDim * 2);
    // Q column blocks are kWgmmaRows rows tall: this warpgroup's rows sit inside each.
#pragma unroll
    for (int b = 0; b < kDim / 64; ++b)
      tma_load_box(q_rows_address + b * kWgmmaRows * kSwizzleRowBytes, &maps.q,
                   t.seq.head * kDim + 64 * b,
                   static_cast<int>(t.seq.q_begin + t.tile * kWgmmaRows + warpgroup_row0),
                   q_barrier);
  };
  QTile t = first_q_tile<kPersistent>(p, block);
  if constexpr (Config::kTma) {
    if (t.valid()) issue_q_tma(t);
  }

  while (t.valid()) {
    const BlockSequence& seq = t.seq;
    const int kv_tile_count = (seq.mask.len_kv + kKeys - 1) / kKeys;
    const int q0 = t.tile * kWgmmaRows;
    int first = -1, last = -1;
    reachable_tiles(seq.mask, q0, q0 + kWgmmaRows, kKeys, kv_tile_count, first, last);
    if constexpr (Config::kTma) {
      mbarrier_wait(q_barrier, static_cast<unsigned>(q_loads++) & 1);
    } else {
      // This warpgroup's Q rows: its previous products that read them were waited for by every
      // warp before the barrier; the copy lands, is fenced and published before the first S.
      named_barrier_sync(kQBarrier0 + consumer, kWarpgroupThreads);
      copy_rows_swizzled<kWarpgroupRows, kDim, kWarpgroupThreads, kWgmmaRows>(
          q_rows_address, consumer_thread, block.q_base, row_stride, q0 + warpgroup_row0,
          seq.mask.len_q);
      commit_async_copies();
      wait_async_copies<0>();
      fence_generic_to_async_shared();
      named_barrier_sync(kQBarrier0 + consumer, kWarpgroupThreads);
    }

    float o[kDim / 8][4];
#pragma unroll
    for (int n = 0; n < kDim / 8; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    float row_max[2] = {-INFINITY, -INFINITY};
    float row_sum[2] = {0.0f, 0.0f};
    const int group_q0 = q0 + warpgroup_row0;
    const int warp_q0 = q0 + warp_row0;
    // Under the plain causal mask the kv tiles wholly left of the group's first row's columns
    // (plain_causal_mask.hpp) are full for every stored row, so those steps need no classify:
    // about a hundred instructions per step in the SASS, on the path to the next GEMM issue.
    const int stored_end = min(group_q0 + kWarpgroupRows, seq.raw_len_q);
    const int full_cols = seq.mask.plain_causal() && stored_end <= seq.mask.len_q
                              ? causal_row_columns(seq.mask.plain_causal_lengths(), group_q0).below
                              : 0;

    // As the round-2 kernel; each step also syncs this consumer's schedule barrier before its
    // GEMMs and arrives on the other's after them (exactly once per step, skipped tiles too, so
    // the two consumers' counts match), and releases a stage once no product reads it.
    std::uint32_t p_frag[kKeys / 16][4];
    bool pending = false;  // p_frag holds P_{j-1}, its P V product not yet issued
    unsigned pending_stage = 0;
    for (int j = first; first >= 0 && j <= last; ++j) {
      const RingCursor<kStages> slot = ring;
      ring.advance();
      mbarrier_wait(full + slot.stage * 8, slot.parity);
      const int col0 = j * kKeys;
      // Uniform over the warpgroup (wgmma needs all 128 threads). Rows past the sequence's rows
      // in the tensors are never stored (their weights need no mask: the scores are finite, TMA
      // and cp.async read the next sequence's rows or zeros), so the classes count the stored
      // rows only: the last q tile's kv tiles are then full, not partial, and a warpgroup with
      // no stored row skips the tile. Rows past a softmax truncation are stored (as zeros) and
      // stay masked (classify hides rows at or past len_q).
      const TileClass group_class =
          col0 + kKeys <= full_cols ? TileClass::kFull
                                    : seq.mask.classify(group_q0, stored_end, col0, col0 + kKeys);
      named_barrier_sync(own_schedule, kConsumerThreads);
      // Each wgmma issue and its wait sit in one branch: ptxas cannot correlate two tests of
      // `pending` and would serialize every wgmma (C7514) if a path seemed to skip the wait.
      if (group_class == TileClass::kEmpty) {
        if (pending) {
          issue_accumulate<E, kDim, kKeys>(o, p_frag, v_tiles + pending_stage * kTileBytes);
          named_barrier_arrive(other_schedule, kConsumerThreads);
          wait_accumulate<kDim, kKeys>(o, p_frag);
          mbarrier_arrive(empty + pending_stage * 8);
          pending = false;
        } else {
          named_barrier_arrive(other_schedule, kConsumerThreads);
        }
        mbarrier_arrive(empty + slot.stage * 8);
        continue;
      }
      float s[kKeys / 8][4];
      issue_scores<E, kDim, kKeys>(s, q_rows_address, k_tiles + slot.stage * kTileBytes);
      if (pending) {
        issue_accumulate<E, kDim, kKeys>(o, p_frag, v_tiles + pending_stage * kTileBytes);
        named_barrier_arrive(other_schedule, kConsumerThreads);
        wgmma_wait_group<1>();  // S_j landed; the P V product may still run
      } else {
        named_barrier_arrive(other_schedule, kConsumerThreads);
        wgmma_wait_group<0>();
      }
      wgmma_fence_operands(s);
      const bool masked = group_class == TileClass::kPartial && warp_q0 < seq.raw_len_q &&
                          seq.mask.classify(warp_q0, min(warp_q0 + 16, seq.raw_len_q), col0,
                                            col0 + kKeys) != TileClass::kFull;
      float correction[2];
      tile_weights<kMode>(s, p.activation, silu, seq.mask, score_scale, masked, warp_q0, col0,
                          row_max, row_sum, correction);
      wait_accumulate<kDim, kKeys>(o, p_frag);
      if (pending) mbarrier_arrive(empty + pending_stage * 8);
      if constexpr (kMode == Mode::kSoftmax) rescale_rows<kDim>(o, correction);
      to_a_fragments<E, kKeys>(p_frag, s);
      pending = true;
      pending_stage = slot.stage;
    }
    if (pending) {
      issue_accumulate<E, kDim, kKeys>(o, p_frag, v_tiles + pending_stage * kTileBytes);
      wait_accumulate<kDim, kKeys>(o, p_frag);
      mbarrier_arrive(empty + pending_stage * 8);
    }

    // The next tile's Q loads under this tile's stores (the persistent walk's next tile may be
    // of another sequence: this_seq keeps this one's).
    const BlockSequence this_seq = seq;
    next_q_tile<kPersistent>(p, t);
    if constexpr (Config::kTma) {
      if (t.valid()) issue_q_tma(t);
    }
    store_row_block<E, kMode, kDim>(p, this_seq, row_stride, warp_q0, o, row_max, row_sum);
  }
  if (consumer == 1) named_barrier_sync(own_schedule, kConsumerThreads);
#else
  // Not an sm_90a binary (see attention_forward_wgmma_kernel): the static shared marker.
  __shared__ volatile int not_sm90a_marker;
  if (threadIdx.x == 0 && p.batch < 0) not_sm90a_marker = 0;
#endif
}

}  // namespace parity::gpu_device::attention
