// TBE backward kernels: linearise, chunk (runs updated in place), combine; see kernels.cuh.
#pragma once

#include "backends/gpu/embedding/kernels.cuh"

namespace parity::gpu_device {

// ---------------------------------------------------------------------------------------------
// Backward
// ---------------------------------------------------------------------------------------------

enum class Update : int { kDenseGrad = -1, kSgd = 0, kRowwiseAdagrad = 1, kAdagrad = 2, kAdam = 3 };
enum class Decay : int { kNone = 0, kL2 = 1, kDecoupled = 2 };

template <typename IndexT>
struct BackwardParams {
  LayoutView layout;
  const IndexT* indices;
  const IndexT* offsets;
  const float* per_sample_weights;
  const float* grad_output;
  std::int64_t batch_size;
  std::int64_t num_bags;
  std::int64_t num_indices;
  std::int64_t output_cols;
  Pool pooling;
  int pos_bits;
  std::uint64_t sentinel_row;  // total_rows: marks positions outside every bag
  // sort output and chunking
  const std::uint64_t* sorted_keys;
  std::uint32_t* bag_of_position;
  std::int64_t chunk_positions;  // C
  std::int64_t num_chunks;
  int max_dim;
  float* slot_grads;             // num_chunks * 2 * max_dim
  std::int64_t* slot_rows;       // num_chunks * 2 (-1 = unused)
  std::int64_t* slot_starts;     // num_chunks * 2: sorted position where the piece starts
  // update
  Update update;
  void* weights;
  float* state1;
  float* state2;
  float learning_rate, eps, weight_decay, max_norm, beta1, beta2, bias_correction1, bias_correction2;
  Decay decay;
  std::int64_t* dense_rows;  // plain backward: row at each sorted position (or -1)
  float* dense_grads;        // plain backward: N x max_dim
  bool batch_row_updates;    // host-side launch choice (BackwardOptions::batch_row_updates)
};

inline constexpr int kLinearizeBlockThreads = 256;
inline constexpr int kLinearizeGroupLanes = 8;

// Writes key = (global_row << pos_bits) | position and the bag of every position; positions
// outside every bag (before offsets[0] or after offsets[F*B]) get the sentinel row.
template <typename IndexT>
__global__ void __launch_bounds__(kLinearizeBlockThreads)
    tbe_linearize_kernel(BackwardParams<IndexT> p, std::uint64_t* __restrict__ keys) {
  const std::int64_t group = (static_cast<std::int64_t>(blockIdx.x) * kLinearizeBlockThreads + threadIdx.x) /
                             kLinearizeGroupLanes;
  const int group_lane = static_cast<int>(threadIdx.x) % kLinearizeGroupLanes;
  const std::int64_t total_groups = static_cast<std::int64_t>(gridDim.x) * kLinearizeBlockThreads / kLinearizeGroupLanes;
  for (std::int64_t bag = group; bag < p.num_bags; bag += total_groups) {
    const auto f = static_cast<int>(bag / p.batch_size);
    const std::int64_t start = static_cast<std::int64_t>(p.offsets[bag]);
    std::int64_t end = static_cast<std::int64_t>(p.offsets[bag + 1]);
    end = end > start ? end : start;
    const std::uint64_t base = static_cast<std::uint64_t>(p.layout.feature_row_base[f]);
    for (std::int64_t pos = start + group_lane; pos < end; pos += kLinearizeGroupLanes) {
      const std::uint64_t row = base + static_cast<std::uint64_t>(static_cast<std::int64_t>(p.indices[pos]));
      keys[pos] = (row << p.pos_bits) | static_cast<std::uint64_t>(pos);
      p.bag_of_position[pos] = static_cast<std::uint32_t>(bag);
    }
    // Uncovered head and tail (offsets are trusted after the bounds check; this keeps keys defined).
    std::int64_t lo = 0, hi = 0;
    if (bag == 0) hi = start;
    if (bag == p.num_bags - 1) {
      lo = end;
      hi = p.num_indices;
    }
    for (std::int64_t pos = lo + group_lane; pos < hi; pos += kLinearizeGroupLanes) {
      keys[pos] = (p.sentinel_row << p.pos_bits) | static_cast<std::uint64_t>(pos);
      p.bag_of_position[pos] = 0;
    }
  }
}

// The fused update of up to kBatch rows by one warp: lane owns vecs lane + k*kWarpSize; g[q] is
// row q's summed gradient (entries q >= count are ignored). Every row's weights (and row-wise
// state) are loaded before the first row is updated, so kBatch HBM round trips overlap instead of
// following one another; the arithmetic of each row is the same for any kBatch (rows are
// distinct, so the order of their updates does not matter). Writes the dense gradient instead
// when p.update == kDenseGrad.
// Not inlined: it is reached from several places, and one copy per call site multiplied code size
// and compile time; it runs once per kBatch unique rows, so the call is cheap.
template <typename Tag, typename IndexT, int kVecsPerLane, int kBatch>
__device__ __noinline__ void apply_row_updates(const BackwardParams<IndexT>& p, const std::int64_t (&global_rows)[kBatch],
                                               const std::int64_t (&sorted_positions)[kBatch],
                                               float4 (&g)[kBatch][kVecsPerLane], int count) {
  const int lane = lane_id();
  if (p.update == Update::kDenseGrad) {
#pragma unroll
    for (int q = 0; q < kBatch; ++q) {
      if (q >= count) continue;
      if (lane == 0) p.dense_rows[sorted_positions[q]] = global_rows[q];
#pragma unroll
      for (int k = 0; k < kVecsPerLane; ++k) {
        const int vec = lane + k * kWarpSize;
        if (vec * 4 < p.max_dim) {
          *reinterpret_cast<float4*>(p.dense_grads + sorted_positions[q] * p.max_dim + vec * 4) = g[q][k];
        }
      }
    }
    return;
  }
  using Storage = typename Tag::Storage;
  Storage* rows_weights[kBatch];
  int dims[kBatch];
  std::int64_t bases[kBatch];
  float4 w[kBatch][kVecsPerLane];
  float rowwise_state[kBatch];
#pragma unroll
  for (int q = 0; q < kBatch; ++q) {
    const bool live = q < count;
    const std::int64_t global_row = live ? global_rows[q] : p.layout.table_row_base[0];
    // Table of the row: binary search over the per-table row bases (uniform across the warp).
    int lo = 0, hi = p.layout.num_tables - 1;
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (p.layout.table_row_base[mid] <= global_row) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    const int t = lo;
    dims[q] = static_cast<int>(p.layout.table_dim[t]);
    bases[q] = p.layout.table_weights_offset[t] + (global_row - p.layout.table_row_base[t]) * dims[q];
    rows_weights[q] = static_cast<Storage*>(p.weights) + bases[q];
    const int vecs = live ? dims[q] / 4 : 0;
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) {
      const int vec = lane + k * kWarpSize;
      w[q][k] = vec < vecs ? load_row_vec<Tag>(rows_weights[q] + vec * 4) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    rowwise_state[q] = live && p.update == Update::kRowwiseAdagrad ? p.state1[global_row] : 0.0f;
  }
  const float lr = p.learning_rate;
#pragma unroll
  for (int q = 0; q < kBatch; ++q) {
    if (q >= count) continue;
    const std::int64_t global_row = global_rows[q];
    const int dim = dims[q];
    const int vecs = dim / 4;
    switch (p.update) {
      case Update::kSgd:
#pragma unroll
        for (int k = 0; k < kVecsPerLane; ++k) fma_vec(w[q][k], -lr, g[q][k]);
        break;
      case Update::kRowwiseAdagrad: {
        float sum_sq = 0.0f;
#pragma unroll
        for (int k = 0; k < kVecsPerLane; ++k) {
          if (p.decay == Decay::kL2) fma_vec(g[q][k], p.weight_decay, w[q][k]);
          sum_sq += g[q][k].x * g[q][k].x + g[q][k].y * g[q][k].y + g[q][k].z * g[q][k].z + g[q][k].w * g[q][k].w;
        }
        sum_sq = warp_reduce_sum(sum_sq);
        const float m = rowwise_state[q] + sum_sq / static_cast<float>(dim);
        if (lane == 0) p.state1[global_row] = m;
        const float mult = lr / (sqrtf(m) + p.eps);
        float corr = 1.0f;
        if (p.decay == Decay::kL2) corr = 1.0f - mult * p.weight_decay;
        if (p.decay == Decay::kDecoupled) corr = 1.0f - lr * p.weight_decay;
        float norm_sq = 0.0f;
#pragma unroll
        for (int k = 0; k < kVecsPerLane; ++k) {
          float4& wk = w[q][k];
          const float4 gk = g[q][k];
          wk.x = corr * wk.x - mult * gk.x;
          wk.y = corr * wk.y - mult * gk.y;
          wk.z = corr * wk.z - mult * gk.z;
          wk.w = corr * wk.w - mult * gk.w;
          norm_sq += wk.x * wk.x + wk.y * wk.y + wk.z * wk.z + wk.w * wk.w;
        }
        if (p.max_norm > 0.0f) {
          norm_sq = warp_reduce_sum(norm_sq);
          if (sqrtf(norm_sq) > p.max_norm) {
            const float scale = p.max_norm / sqrtf(norm_sq);
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) {
              w[q][k].x *= scale;
              w[q][k].y *= scale;
              w[q][k].z *= scale;
              w[q][k].w *= scale;
            }
          }
        }
        break;
      }
      case Update::kAdagrad:
      case Update::kAdam: {
        float* m_row = p.state1 + bases[q];
        float* v_row = p.state2 != nullptr ? p.state2 + bases[q] : nullptr;
#pragma unroll
        for (int k = 0; k < kVecsPerLane; ++k) {
          const int vec = lane + k * kWarpSize;
          if (vec >= vecs) continue;
          float4 m = load_vec(m_row + vec * 4);
          float* wk = &w[q][k].x;
          float* gk = &g[q][k].x;
          float* mk = &m.x;
          if (p.update == Update::kAdagrad) {
            for (int e = 0; e < 4; ++e) {
              mk[e] += gk[e] * gk[e];
              wk[e] -= lr * gk[e] / (sqrtf(mk[e]) + p.eps);
            }
          } else {
            float4 v = load_vec(v_row + vec * 4);
            float* vk = &v.x;
            for (int e = 0; e < 4; ++e) {
              mk[e] = p.beta1 * mk[e] + (1.0f - p.beta1) * gk[e];
              vk[e] = p.beta2 * vk[e] + (1.0f - p.beta2) * gk[e] * gk[e];
              wk[e] -= lr * ((mk[e] / p.bias_correction1) / (sqrtf(vk[e] / p.bias_correction2) + p.eps) +
                             p.weight_decay * wk[e]);
            }
            *reinterpret_cast<float4*>(v_row + vec * 4) = v;
          }
          *reinterpret_cast<float4*>(m_row + vec * 4) = m;
        }
        break;
      }
      default: break;
    }
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) {
      const int vec = lane + k * kWarpSize;
      if (vec < vecs) store_row_vec<Tag>(rows_weights[q] + vec * 4, w[q][k]);
    }
  }
}

// Rows queued per warp before their update: 4 where a row is <= 2 vecs per lane (bounded
// registers and stack for wide rows, which move enough bytes per row already).
template <int kVecsPerLane>
inline constexpr int kUpdateBatchRows = kVecsPerLane <= 2 ? 4 : 1;

// 128-thread blocks: the batched-update kernel needs ~157 registers (D <= 128), and a 256-thread
// block of that fits only once per SM (8 warps); 128-thread blocks fit three times (12 warps).
inline constexpr int kChunkBlockThreads = 128;

// Grad row of one occurrence: its address in grad_output, its scale (per-sample weight, 1/L) and
// the dim of its table (columns past it belong to the next feature and are never read).
template <typename IndexT>
__device__ inline void occurrence_grad(const BackwardParams<IndexT>& p, std::int64_t position,
                                       std::int64_t* grad_offset, float* scale, int* dim) {
  const std::int64_t bag = p.bag_of_position[position];
  const auto f = static_cast<int>(bag / p.batch_size);
  const std::int64_t b = bag - static_cast<std::int64_t>(f) * p.batch_size;
  float s = p.per_sample_weights != nullptr ? p.per_sample_weights[position] : 1.0f;
  if (p.pooling == Pool::kMean) {
    const std::int64_t length = static_cast<std::int64_t>(p.offsets[bag + 1]) - static_cast<std::int64_t>(p.offsets[bag]);
    s = length > 0 ? s / static_cast<float>(length) : s;
  }
  *scale = s;
  *dim = static_cast<int>(p.layout.feature_dim[f]);
  *grad_offset = p.pooling == Pool::kNone ? position * p.output_cols : b * p.output_cols + p.layout.feature_out_col[f];
}

// kBatch = rows whose update is queued and applied together (1: each row updated as its run ends).
template <typename Tag, typename IndexT, int kVecsPerLane, int kBatch>
__global__ void __launch_bounds__(kChunkBlockThreads)
    tbe_backward_chunk_kernel(BackwardParams<IndexT> p) {
  // Grad rows in flight per lane: 4 vecs' worth, bounded registers for wide rows.
  constexpr int kUnroll = kVecsPerLane >= 4 ? 1 : 4 / kVecsPerLane;
  const int lane = lane_id();
  const std::int64_t warps_per_block = kChunkBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const std::uint64_t pos_mask = (std::uint64_t{1} << p.pos_bits) - 1;
  for (std::int64_t chunk = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id(); chunk < p.num_chunks;
       chunk += total_warps) {
    const std::int64_t chunk_start = chunk * p.chunk_positions;
    const std::int64_t chunk_end =
        chunk_start + p.chunk_positions < p.num_indices ? chunk_start + p.chunk_positions : p.num_indices;
    const std::int64_t prev_row = chunk_start > 0 ? static_cast<std::int64_t>(p.sorted_keys[chunk_start - 1] >> p.pos_bits) : -1;
    const std::int64_t next_row = chunk_end < p.num_indices ? static_cast<std::int64_t>(p.sorted_keys[chunk_end] >> p.pos_bits) : -1;
    if (lane == 0) {  // one thread, so its later writes of the same slots stay ordered after these
      p.slot_rows[chunk * 2] = -1;
      p.slot_rows[chunk * 2 + 1] = -1;
    }
    float4 acc[kVecsPerLane];
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) acc[k] = make_float4(0.f, 0.f, 0.f, 0.f);
    std::int64_t current_row = -1, piece_start = chunk_start;
    // Runs that end inside the chunk wait here until kBatch of them can be updated together.
    std::int64_t queued_rows[kBatch], queued_starts[kBatch];
    float4 queued_grads[kBatch][kVecsPerLane];
    int queued = 0;

    auto flush = [&](std::int64_t piece_end) {
      if (current_row < 0 || current_row == static_cast<std::int64_t>(p.sentinel_row)) return;
      const bool crosses_left = piece_start == chunk_start && current_row == prev_row;
      const bool crosses_right = piece_end == chunk_end && current_row == next_row;
      if (!crosses_left && !crosses_right) {
#pragma unroll
        for (int q = 0; q < kBatch; ++q) {  // constant indices keep the queue out of dynamic addressing
          if (q == queued) {
            queued_rows[q] = current_row;
            queued_starts[q] = piece_start;
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) queued_grads[q][k] = acc[k];
          }
        }
        if (++queued == kBatch) {
          apply_row_updates<Tag, IndexT, kVecsPerLane, kBatch>(p, queued_rows, queued_starts, queued_grads, queued);
          queued = 0;
        }
        return;
      }
      const std::int64_t slot = chunk * 2 + (crosses_left ? 0 : 1);
      float* dst = p.slot_grads + slot * p.max_dim;
#pragma unroll
      for (int k = 0; k < kVecsPerLane; ++k) {
        const int vec = lane + k * kWarpSize;
        if (vec * 4 < p.max_dim) *reinterpret_cast<float4*>(dst + vec * 4) = acc[k];
      }
      if (lane == 0) {
        p.slot_rows[slot] = current_row;
        p.slot_starts[slot] = piece_start;
      }
    };

    for (std::int64_t sub = chunk_start; sub < chunk_end; sub += kWarpSize) {
      // Each lane prepares one occurrence of this sub-block; shuffles hand them to the warp.
      const std::int64_t my_pos = sub + lane;
      std::int64_t my_row = -1, my_grad_offset = 0;
      float my_scale = 0.0f;
      int my_dim = 0;
      if (my_pos < chunk_end) {
        const std::uint64_t key = p.sorted_keys[my_pos];
        my_row = static_cast<std::int64_t>(key >> p.pos_bits);
        if (my_row != static_cast<std::int64_t>(p.sentinel_row)) {
          occurrence_grad(p, static_cast<std::int64_t>(key & pos_mask), &my_grad_offset, &my_scale, &my_dim);
        }
      }
      const std::int64_t count = chunk_end - sub < kWarpSize ? chunk_end - sub : kWarpSize;
      for (int j = 0; j < count; j += kUnroll) {
        float4 rows[kUnroll][kVecsPerLane];
        std::int64_t row_id[kUnroll];
        float row_scale[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int src = (j + u) < kWarpSize ? j + u : 0;
          row_id[u] = shfl(my_row, src);
          row_scale[u] = shfl(my_scale, src);
          const std::int64_t grad_offset = shfl(my_grad_offset, src);
          const int dim = shfl(my_dim, src);
          const bool live = (j + u) < count && row_id[u] != static_cast<std::int64_t>(p.sentinel_row);
#pragma unroll
          for (int k = 0; k < kVecsPerLane; ++k) {
            const int vec = lane + k * kWarpSize;
            rows[u][k] = (live && vec * 4 < dim) ? load_vec(p.grad_output + grad_offset + vec * 4)
                                                 : make_float4(0.f, 0.f, 0.f, 0.f);
          }
        }
        // A guard rather than `break`, so the loop unrolls and rows[][] stays in registers.
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (j + u < count) {
            if (row_id[u] != current_row) {
              flush(sub + j + u);
              current_row = row_id[u];
              piece_start = sub + j + u;
#pragma unroll
              for (int k = 0; k < kVecsPerLane; ++k) acc[k] = make_float4(0.f, 0.f, 0.f, 0.f);
            }
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) fma_vec(acc[k], row_scale[u], rows[u][k]);
          }
        }
      }
    }
    flush(chunk_end);
    if (queued > 0) {
      apply_row_updates<Tag, IndexT, kVecsPerLane, kBatch>(p, queued_rows, queued_starts, queued_grads, queued);
    }
  }
}

inline constexpr int kCombineBlockThreads = 256;

// One block per run that starts in chunk c and crosses its end: adds the tail piece of c and the
// head pieces of the following chunks. Strands split the pieces (piece k to strand k % strands),
// then strand sums are added in strand order: a fixed tree for a given max_dim.
template <typename Tag, typename IndexT, int kVecsPerLane>
__global__ void __launch_bounds__(kCombineBlockThreads)
    tbe_backward_combine_kernel(BackwardParams<IndexT> p) {
  extern __shared__ float4 combine_shared[];  // strands x vec_slots
  const int vec_slots = kVecsPerLane * kWarpSize;        // >= max_dim / 4
  const int strands = kCombineBlockThreads / vec_slots > 0 ? kCombineBlockThreads / vec_slots : 1;
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t chunk = blockIdx.x; chunk < p.num_chunks; chunk += gridDim.x) {
    const std::int64_t row = p.slot_rows[chunk * 2 + 1];
    if (row < 0) continue;  // uniform across the block
    std::int64_t last = chunk + 1;
    while (last < p.num_chunks && p.slot_rows[last * 2] == row) ++last;
    const std::int64_t pieces = last - chunk;  // tail of `chunk` + heads of chunk+1 .. last-1
    // Each thread: strand s, vec slots v = tid % vec_slots (+ vec_slots*... when strands == 1).
    const int strand = tid / vec_slots < strands ? tid / vec_slots : strands;
    for (int v = tid % vec_slots; v < vec_slots && strand < strands; v += (strands == 1 ? kCombineBlockThreads : vec_slots)) {
      // Four independent partial sums keep four loads in flight on long (hot-row) runs; they are
      // added in a fixed order, so the result still depends only on the pieces and `strands`.
      float4 part[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) part[q] = make_float4(0.f, 0.f, 0.f, 0.f);
      auto piece = [&](std::int64_t k) {
        const std::int64_t slot = k == 0 ? chunk * 2 + 1 : (chunk + k) * 2;
        return load_vec(p.slot_grads + slot * p.max_dim + v * 4);
      };
      if (v * 4 < p.max_dim) {
        std::int64_t k = strand;
        for (; k + 3 * strands < pieces; k += 4 * strands) {
          float4 loaded[4];
#pragma unroll
          for (int q = 0; q < 4; ++q) loaded[q] = piece(k + q * strands);
#pragma unroll
          for (int q = 0; q < 4; ++q) fma_vec(part[q], 1.0f, loaded[q]);
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
      const std::int64_t rows[1] = {row};
      const std::int64_t starts[1] = {p.slot_starts[chunk * 2 + 1]};
      float4 grads[1][kVecsPerLane];
#pragma unroll
      for (int k = 0; k < kVecsPerLane; ++k) grads[0][k] = g[k];
      apply_row_updates<Tag, IndexT, kVecsPerLane, 1>(p, rows, starts, grads, 1);
    }
    __syncthreads();
  }
}

}  // namespace parity::gpu_device
