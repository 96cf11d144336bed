// TBE backward chunk and combine kernels: each chunk of sorted positions adds its runs' gradient
// rows and updates the rows whose runs end inside it (in place); the combine kernel finishes the
// runs that cross chunk ends. The parameters, the linearise kernel and the row updates they call
// are in backward_kernels.cuh.
#pragma once

#include "backends/gpu/embedding/backward_kernels.cuh"

namespace parity::gpu_device {

// 128-thread blocks (four warps, each its own chunks).
inline constexpr int kChunkBlockThreads = 128;

// Positions whose grad rows (and, where a run ends there, weight row and row-wise state) one warp
// loads before it adds any: 2 x kWindowScale for rows of one vec per lane, fewer for wider rows.
// Window 2 was the fastest on C2's backward (1, 4 and 8 slower; docs/embedding.md): registers per
// window cost warps per SM, and past 2 more warps hide more latency than a wider window does.
// kWindowScale 2 is the alternative timed beside the default (same results).
template <int kVecsPerLane, int kWindowScale>
inline constexpr int kChunkWindow = kVecsPerLane >= 2 * kWindowScale ? 1 : 2 * kWindowScale / kVecsPerLane;

// Blocks per SM the register budget must allow (6 x 128 threads: <= 80 registers) for rows of
// one vec per lane and windows <= 2; wider rows and windows take what they need. The automatic
// chunk grid is this many blocks per SM (resident at once: one sweep over the sorted array, so
// the warps in flight share grad_output rows in L2; C2 2.29 vs 2.31 ms with 16 per SM).
inline constexpr int kChunkBlocksPerSm = 6;
template <int kVecsPerLane, int kWindow>
inline constexpr int kChunkMinBlocks = kVecsPerLane == 1 && kWindow <= 2 ? kChunkBlocksPerSm : 1;

// Flags of one sorted position, computed lane-parallel and broadcast.
inline constexpr int kPosLive = 1;        // inside a bag (not the sentinel row)
inline constexpr int kPosStartsRun = 2;   // first position of its run inside this chunk
inline constexpr int kPosEndsRun = 4;     // last position of its run inside this chunk
inline constexpr int kPosUpdatesRow = 8;  // run ends here, lies inside the chunk, fused update
inline constexpr int kPosFlagBits = 4;    // dim is packed above the flags

// One sorted position's facts as the chunk kernel stages them in shared memory.
struct alignas(16) PositionRecord {
  std::int64_t row;          // global row (sentinel or -3 past the chunk)
  std::int64_t base;         // first element of the row in weights (and per-element state)
  std::int64_t grad_offset;  // first element of its grad row in grad_output
  float scale;
  int flags;                 // kPos* | dim << kPosFlagBits
};

// Grad row of one occurrence (`low` = its key's low bits: bag or position): its address in
// grad_output, its scale (per-sample weight, 1/L), the dim of its table (columns past it belong to
// the next feature and are never read) and its feature. With the bag in the key there is no
// dependent lookup of the bag between the key and the grad row.
template <typename IndexT>
__device__ inline void occurrence_grad(const BackwardParams<IndexT>& p, std::int64_t low,
                                       std::int64_t* grad_offset, float* scale, int* dim, int* feature) {
  const std::int64_t position = low;  // meaningful only for position keys
  const std::int64_t bag = p.key_holds_bag ? low : static_cast<std::int64_t>(p.bag_of_position[position]);
  // 32-bit division: F*B < 2^32 is checked on the host (a 64-bit one is a ~70-instruction call).
  const auto f = static_cast<int>(static_cast<std::uint32_t>(bag) / static_cast<std::uint32_t>(p.batch_size));
  const std::int64_t b = bag - static_cast<std::int64_t>(f) * p.batch_size;
  float s = !p.key_holds_bag && p.per_sample_weights != nullptr ? p.per_sample_weights[position] : 1.0f;
  if (p.pooling == Pool::kMean) {
    const std::int64_t length = static_cast<std::int64_t>(p.offsets[bag + 1]) - static_cast<std::int64_t>(p.offsets[bag]);
    s = length > 0 ? s / static_cast<float>(length) : s;
  }
  *scale = s;
  *dim = static_cast<int>(p.layout.feature_dim[f]);
  *feature = f;
  *grad_offset = !p.key_holds_bag && p.pooling == Pool::kNone ? position * p.output_cols : b * p.output_cols + p.layout.feature_out_col[f];
}

// One group of kGroupLanes lanes per chunk of C sorted positions: the whole warp for rows wider
// than kWarpSize / 2 vecs, else (narrow rows) the power of two >= the widest row's vecs, so a warp
// works kWarpSize / kGroupLanes chunks side by side instead of idling the lanes past the row.
// Each lane first works out the facts of one position of a kGroupLanes-position block (row, grad
// address and scale, weight address, run start/end) so no address needs a dependent lookup later;
// then the group takes kWindow positions at a time: broadcasts them, issues every grad-row load of
// the window and, for each run that ends in the window and lies inside the chunk, its weight-row
// and row-wise state loads, and only then adds the grads in position order and updates each
// finished run. A run's sum runs over its positions in ascending order whatever kWindow, the group
// width or the grid is, so results are bitwise identical. Runs touching a chunk edge leave their
// piece in a slot for the combine kernel. With several groups per warp every loop runs the same
// trip count in all groups (shuffles and the row-wise reductions need every lane): a group past
// its chunk's end, or past the last chunk, works on invalid positions, which do nothing.
// kPrefetchState (Adagrad / Adam only): a finished run's per-element state is loaded with its
// weight row, before the window's grads are summed, instead of after (one memory latency per
// window instead of two, for more registers held across the sums); same arithmetic and results.
// Long on purpose: one kernel body whose phases share registers and shared memory; split into
// device functions it would hide the data flow the tuning depends on.
template <typename Tag, typename IndexT, int kVecsPerLane, int kWindow, int kGroupLanes, bool kPrefetchState = false>
__global__ void __launch_bounds__(kChunkBlockThreads, (kChunkMinBlocks<kVecsPerLane, kWindow>))
    tbe_backward_chunk_kernel(BackwardParams<IndexT> p) {
  static_assert(kWarpSize % kGroupLanes == 0, "groups tile the warp");
  using Raw = RawVec<Tag>;
  // Weight rows are loaded with the grads only while they fit registers (<= 4 vecs per lane);
  // wider rows are loaded when their update starts.
  constexpr bool kHoldRows = kVecsPerLane <= 4;
  constexpr int kGroupsPerWarp = kWarpSize / kGroupLanes;
  const int lane = lane_id();
  const int group_lane = lane % kGroupLanes;
  const int group_base_lane = lane - group_lane;
  const std::int64_t warps_per_block = kChunkBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const std::uint64_t low_mask = (std::uint64_t{1} << p.low_bits) - 1;
  const auto sentinel = static_cast<std::int64_t>(p.sentinel_row);
  const bool fused = p.update != Update::kDenseGrad;
  const auto* weights = static_cast<const typename Tag::Storage*>(p.weights);
  // The block's position facts, one 32-byte record per lane, read back by every lane with one
  // broadcast 16-byte load per half: ncu showed the scheduler issuing every other cycle (186
  // instructions per position), and the per-position shuffles of 64-bit facts were a good part.
  __shared__ PositionRecord warp_facts[kChunkBlockThreads / kWarpSize][kWarpSize];
  PositionRecord* facts = warp_facts[warp_id()] + group_base_lane;
  for (std::int64_t warp_chunk = (static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id()) * kGroupsPerWarp;
       warp_chunk < p.num_chunks; warp_chunk += total_warps * kGroupsPerWarp) {
    const std::int64_t chunk = warp_chunk + lane / kGroupLanes;
    const bool has_chunk = chunk < p.num_chunks;  // false only in a warp's last groups
    const std::int64_t chunk_start = has_chunk ? chunk * p.chunk_positions : p.num_indices;
    const std::int64_t chunk_end =
        chunk_start + p.chunk_positions < p.num_indices ? chunk_start + p.chunk_positions : p.num_indices;
    const std::int64_t prev_row =
        has_chunk && chunk_start > 0 ? static_cast<std::int64_t>(p.sorted_keys[chunk_start - 1] >> p.low_bits) : -1;
    const std::int64_t next_row = chunk_end < p.num_indices ? static_cast<std::int64_t>(p.sorted_keys[chunk_end] >> p.low_bits) : -1;
    if (has_chunk && group_lane == 0) {  // one thread, so its later writes of the same slots stay ordered after these
      p.slot_rows[chunk * 2] = -1;
      p.slot_rows[chunk * 2 + 1] = -1;
    }
    float4 acc[kVecsPerLane];
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) acc[k] = make_float4(0.f, 0.f, 0.f, 0.f);
    std::int64_t piece_start = chunk_start;
    std::int64_t row_before_block = -2;  // row of the position before this block (-2: chunk start)

    // Full warp: the chunk's own blocks. Groups: ceil(C / kGroupLanes) blocks in every group.
    const std::int64_t blocks_end = kGroupsPerWarp == 1 ? chunk_end : chunk_start + p.chunk_positions;
    for (std::int64_t block = chunk_start; block < blocks_end; block += kGroupLanes) {
      const std::int64_t my_pos = block + group_lane;
      const bool valid = my_pos < chunk_end;
      std::int64_t my_row = -3, my_grad_offset = 0, my_base = 0;
      float my_scale = 0.0f;
      int my_dim = 0;
      if (valid) {
        const std::uint64_t key = p.sorted_keys[my_pos];
        my_row = static_cast<std::int64_t>(key >> p.low_bits);
        if (my_row != sentinel) {
          int feature = 0;
          occurrence_grad(p, static_cast<std::int64_t>(key & low_mask), &my_grad_offset, &my_scale, &my_dim, &feature);
          my_base = p.layout.feature_weights_offset[feature] + (my_row - p.layout.feature_row_base[feature]) * p.layout.feature_row_stride[feature];
        }
      }
      std::int64_t row_after = shfl_down(my_row, 1);
      if (group_lane == kGroupLanes - 1 && my_pos + 1 < chunk_end) {
        row_after = static_cast<std::int64_t>(p.sorted_keys[my_pos + 1] >> p.low_bits);
      }
      std::int64_t row_before = shfl(my_row, group_lane > 0 ? lane - 1 : lane);
      if (group_lane == 0) row_before = row_before_block;
      row_before_block = shfl(my_row, group_base_lane + kGroupLanes - 1);
      const bool live = valid && my_row != sentinel;
      const bool ends = valid && (my_pos + 1 == chunk_end || row_after != my_row);
      const bool crossing = my_row == prev_row || my_row == next_row;
      int my_flags = (live ? kPosLive : 0) | (valid && row_before != my_row ? kPosStartsRun : 0) |
                     (ends ? kPosEndsRun : 0) | (live && ends && fused && !crossing ? kPosUpdatesRow : 0);
      my_flags |= my_dim << kPosFlagBits;
      sync_lanes_of_warp();  // every lane is done reading the previous block's records
      facts[group_lane] = PositionRecord{my_row, my_base, my_grad_offset, my_scale, my_flags};
      sync_lanes_of_warp();
      const std::int64_t left = chunk_end - block;
      const int count = left < kGroupLanes ? (left > 0 ? static_cast<int>(left) : 0) : kGroupLanes;
      const int window_end = kGroupsPerWarp == 1 ? count : kGroupLanes;  // same in every group
      for (int j = 0; j < window_end; j += kWindow) {
        float4 grads[kWindow][kVecsPerLane];
        Raw loaded_w[kWindow][kVecsPerLane];
        float loaded_state[kWindow];
        ElementState<kWindow, kVecsPerLane> element_state;
        float scales[kWindow];
        int flags[kWindow];
#pragma unroll
        for (int u = 0; u < kWindow; ++u) {
          const PositionRecord& record = facts[j + u < kGroupLanes ? j + u : 0];
          flags[u] = j + u < count ? record.flags : 0;
          const std::int64_t row = record.row;
          const std::int64_t base = record.base;
          scales[u] = record.scale;
          const std::int64_t grad_offset = record.grad_offset;
          const int dim = flags[u] >> kPosFlagBits;
#pragma unroll
          for (int k = 0; k < kVecsPerLane; ++k) {
            const int vec = group_lane + k * kGroupLanes;
            grads[u][k] = (flags[u] & kPosLive) && vec * 4 < dim ? load_vec(p.grad_output + grad_offset + vec * 4)
                                                                 : make_float4(0.f, 0.f, 0.f, 0.f);
            if constexpr (kHoldRows) {
              loaded_w[u][k] = (flags[u] & kPosUpdatesRow) && vec * 4 < dim ? load_raw_vec_once<Tag>(weights + base + vec * 4)
                                                                            : zero_raw_vec<Tag>();
            }
          }
          loaded_state[u] = (flags[u] & kPosUpdatesRow) && p.update == Update::kRowwiseAdagrad ? p.state1[row] : 0.0f;
        }
        if constexpr (kPrefetchState) {
          bool updates[kWindow];
          std::int64_t update_bases[kWindow];
          int update_dims[kWindow];
#pragma unroll
          for (int u = 0; u < kWindow; ++u) {
            updates[u] = (flags[u] & kPosUpdatesRow) != 0;
            update_bases[u] = facts[j + u < kGroupLanes ? j + u : 0].base;
            update_dims[u] = flags[u] >> kPosFlagBits;
          }
          load_element_state<IndexT, kVecsPerLane, kWindow, kGroupLanes>(p, updates, update_bases, update_dims,
                                                                         element_state);
        }
        // Sums in position order; a run that ends here and updates its row keeps its sum in
        // grads[u]; runs that touch a chunk edge (or the dense gradient) are written right away.
#pragma unroll
        for (int u = 0; u < kWindow; ++u) {
          if (flags[u] & kPosStartsRun) piece_start = block + j + u;
          if (flags[u] & kPosLive) {
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) fma_vec(acc[k], scales[u], grads[u][k]);
          }
          if (!(flags[u] & kPosEndsRun)) continue;
          if (flags[u] & kPosUpdatesRow) {
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) grads[u][k] = acc[k];
          } else if (flags[u] & kPosLive) {
            const std::int64_t row = facts[j + u < kGroupLanes ? j + u : 0].row;
            const bool crosses_left = row == prev_row;
            if (!crosses_left && row != next_row) {
              write_dense_row<IndexT, kVecsPerLane, kGroupLanes>(p, row, piece_start, acc);
            } else {
              const std::int64_t slot = chunk * 2 + (crosses_left ? 0 : 1);
              float* dst = p.slot_grads + slot * p.max_dim;
#pragma unroll
              for (int k = 0; k < kVecsPerLane; ++k) {
                const int vec = group_lane + k * kGroupLanes;
                if (vec * 4 < p.max_dim) *reinterpret_cast<float4*>(dst + vec * 4) = acc[k];
              }
              if (group_lane == 0) {
                p.slot_rows[slot] = row;
                p.slot_starts[slot] = piece_start;
              }
            }
          }
#pragma unroll
          for (int k = 0; k < kVecsPerLane; ++k) acc[k] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
        if (!fused) continue;
        // The window's row updates side by side (row and weight address read again from the
        // records: fewer registers held while the loads were in flight).
        bool is_update[kWindow];
        int dims[kWindow];
        std::int64_t rows[kWindow], bases[kWindow];
        float4 w[kWindow][kVecsPerLane];
#pragma unroll
        for (int u = 0; u < kWindow; ++u) {
          const PositionRecord& record = facts[j + u < kGroupLanes ? j + u : 0];
          is_update[u] = (flags[u] & kPosUpdatesRow) != 0;
          dims[u] = flags[u] >> kPosFlagBits;
          rows[u] = record.row;
          bases[u] = record.base;
#pragma unroll
          for (int k = 0; k < kVecsPerLane; ++k) {
            const int vec = group_lane + k * kGroupLanes;
            if constexpr (kHoldRows) {
              w[u][k] = raw_to_float4<Tag>(loaded_w[u][k]);
            } else {
              w[u][k] = is_update[u] && vec < dims[u] / 4 ? load_row_vec<Tag>(weights + bases[u] + vec * 4)
                                                          : make_float4(0.f, 0.f, 0.f, 0.f);
            }
          }
        }
        // Unconditional (rows without an update are masked inside): under a branch on lane data the
        // compiler cannot prove uniform, every warp reduction became a collective loop.
        update_loaded_rows<Tag, IndexT, kVecsPerLane, kWindow, kGroupLanes, kPrefetchState>(
            p, is_update, rows, bases, dims, w, loaded_state, grads, element_state);
      }
    }
  }
}

inline constexpr int kCombineBlockThreads = 256;

// The first chunk from `first` on whose head piece is not `row` (num_chunks if none): the end of
// the chunks the run crosses, tested by the whole block kCombineBlockThreads chunks at a time. A
// hot row's run crosses hundreds of chunks (Zipf 1.03: ~700), where a serial walk was one
// dependent load per chunk (set 9's 02: the combine took 75 of the step's 243 us). Every thread of
// the block calls it (it synchronises).
__device__ inline std::int64_t combine_run_end(const std::int64_t* slot_rows, std::int64_t num_chunks,
                                               std::int64_t first, std::int64_t row, int* first_other) {
  for (std::int64_t base = first;; base += kCombineBlockThreads) {
    if (threadIdx.x == 0) *first_other = kCombineBlockThreads;
    __syncthreads();
    const std::int64_t c = base + static_cast<std::int64_t>(threadIdx.x);
    if (c >= num_chunks || slot_rows[c * 2] != row) atomicMin(first_other, static_cast<int>(threadIdx.x));
    __syncthreads();
    const int found = *first_other;
    __syncthreads();  // every thread has read it before thread 0 resets it
    if (found < kCombineBlockThreads) return base + found;
  }
}

// One block per run that starts in chunk c and crosses its end: adds the tail piece of c and the
// head pieces of the following chunks. Strands split the pieces (piece k to strand k % strands),
// then strand sums are added in strand order: a fixed tree for a given max_dim.
template <typename Tag, typename IndexT, int kVecsPerLane>
__global__ void __launch_bounds__(kCombineBlockThreads)
    tbe_backward_combine_kernel(BackwardParams<IndexT> p) {
  extern __shared__ float4 combine_shared[];  // strands x vec_slots
  const int vec_slots = kVecsPerLane * kWarpSize;        // >= max_dim / 4
  const int strands = kCombineBlockThreads / vec_slots > 0 ? kCombineBlockThreads / vec_slots : 1;
  __shared__ int first_other;  // combine_run_end's block-wide result
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t chunk = blockIdx.x; chunk < p.num_chunks; chunk += gridDim.x) {
    const std::int64_t row = p.slot_rows[chunk * 2 + 1];
    if (row < 0) continue;  // uniform across the block
    // Most runs end in the next chunk: one load (the same address for every thread, so the branch
    // is uniform) decides that without the block-wide search.
    std::int64_t last = chunk + 1;
    if (last < p.num_chunks && p.slot_rows[last * 2] == row) {
      last = combine_run_end(p.slot_rows, p.num_chunks, last + 1, row, &first_other);
    }
    const std::int64_t pieces = last - chunk;  // tail of `chunk` + heads of chunk+1 .. last-1
    // Each thread: strand s, vec slots v = tid % vec_slots (+ vec_slots*... when strands == 1).
    const int strand = tid / vec_slots < strands ? tid / vec_slots : strands;
    for (int v = tid % vec_slots; v < vec_slots && strand < strands; v += (strands == 1 ? kCombineBlockThreads : vec_slots)) {
      // Eight loads in flight into four partial sums on long (hot-row) runs; they are added in a
      // fixed order, so the result still depends only on the pieces and `strands`.
      float4 part[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) part[q] = make_float4(0.f, 0.f, 0.f, 0.f);
      auto piece = [&](std::int64_t k) {
        const std::int64_t slot = k == 0 ? chunk * 2 + 1 : (chunk + k) * 2;
        return load_vec(p.slot_grads + slot * p.max_dim + v * 4);
      };
      if (v * 4 < p.max_dim) {
        std::int64_t k = strand;
        for (; k + 7 * strands < pieces; k += 8 * strands) {
          float4 loaded[8];
#pragma unroll
          for (int q = 0; q < 8; ++q) loaded[q] = piece(k + q * strands);
#pragma unroll
          for (int q = 0; q < 8; ++q) fma_vec(part[q % 4], 1.0f, loaded[q]);
        }
        for (; k < pieces; k += strands) fma_vec(part[0], 1.0f, piece(k));
      }
      float4 sum = part[0];
      fma_vec(sum, 1.0f, part[1]);
      fma_vec(part[2], 1.0f, part[3]);
      fma_vec(sum, 1.0f, part[2]);
      combine_shared[strand * vec_slots + v] = sum;
    }
    __syncthreads();
    if (warp_id() == 0) {
      float4 g[kVecsPerLane];
#pragma unroll
      for (int k = 0; k < kVecsPerLane; ++k) {
        const int v = lane_id() + k * kWarpSize;
        g[k] = make_float4(0.f, 0.f, 0.f, 0.f);
        for (int s = 0; s < strands; ++s) fma_vec(g[k], 1.0f, combine_shared[s * vec_slots + v]);
      }
      apply_row_update<Tag, IndexT, kVecsPerLane>(p, row, p.slot_starts[chunk * 2 + 1], g);
    }
    __syncthreads();
  }
}

}  // namespace parity::gpu_device
