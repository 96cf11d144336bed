// TBE backward kernels: the parameters, the linearise kernel and the row updates (SGD, row-wise
// Adagrad, Adagrad, Adam with their decays) that the chunk kernels (backward_chunk_kernels.cuh)
// and the atomic SGD kernel call; see kernels.cuh.
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
  int low_bits;                // bits of the key below the row: the bag, or the position
  bool key_holds_bag;          // low bits = bag (no per-sample weights, pooling sum/mean)
  std::uint64_t sentinel_row;  // total_rows: marks positions outside every bag
  // sort output and chunking
  const std::uint64_t* sorted_keys;
  std::uint32_t* bag_of_position;  // position keys only
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
  bool prefetch_element_state;  // host-side launch choice (BackwardOptions::prefetch_element_state)
};

inline constexpr int kLinearizeBlockThreads = 256;
inline constexpr int kLinearizeMaxGroupLanes = 8;

// Key of position `pos` of bag `bag` whose global row is `row`; position keys record the bag beside
// them. Shared by both linearise kernels so their keys are the same.
template <typename IndexT>
__device__ inline std::uint64_t linearized_key(const BackwardParams<IndexT>& p, std::uint64_t row, std::int64_t bag,
                                               std::int64_t pos) {
  if (p.key_holds_bag) return (row << p.low_bits) | static_cast<std::uint64_t>(bag);
  p.bag_of_position[pos] = static_cast<std::uint32_t>(bag);
  return (row << p.low_bits) | static_cast<std::uint64_t>(pos);
}

// Key of a position outside every bag: the sentinel row (never read past the row: no low part).
template <typename IndexT>
__device__ inline std::uint64_t outside_bag_key(const BackwardParams<IndexT>& p, std::int64_t pos) {
  if (!p.key_holds_bag) p.bag_of_position[pos] = 0;
  return p.sentinel_row << p.low_bits;
}

// Writes key = (global_row << low_bits) | low, low = the bag (key_holds_bag) or the position with
// the bag of every position stored beside it; positions outside every bag (before offsets[0] or
// after offsets[F*B]) get the sentinel row. Keys are written in position order and the sort is
// stable, so within a row both kinds keep position order (bags are contiguous position ranges).
// kGroupLanes lanes per bag: the power of two >= the mean bag length, at most 8 (a one-hot batch
// with 8 lanes per bag left 7 of 8 lanes idle). Bags < 2^32 (plan_backward): 32-bit division.
template <typename IndexT, int kGroupLanes>
__global__ void __launch_bounds__(kLinearizeBlockThreads)
    tbe_linearize_kernel(BackwardParams<IndexT> p, std::uint64_t* __restrict__ keys) {
  const std::int64_t group = (static_cast<std::int64_t>(blockIdx.x) * kLinearizeBlockThreads + threadIdx.x) /
                             kGroupLanes;
  const int group_lane = static_cast<int>(threadIdx.x) % kGroupLanes;
  const std::int64_t total_groups = static_cast<std::int64_t>(gridDim.x) * kLinearizeBlockThreads / kGroupLanes;
  const auto batch_size = static_cast<std::uint32_t>(p.batch_size);
  for (std::int64_t bag = group; bag < p.num_bags; bag += total_groups) {
    const auto f = static_cast<int>(static_cast<std::uint32_t>(bag) / batch_size);
    const std::int64_t start = static_cast<std::int64_t>(p.offsets[bag]);
    std::int64_t end = static_cast<std::int64_t>(p.offsets[bag + 1]);
    end = end > start ? end : start;
    const std::uint64_t base = static_cast<std::uint64_t>(p.layout.feature_row_base[f]);
    for (std::int64_t pos = start + group_lane; pos < end; pos += kGroupLanes) {
      const std::uint64_t row = base + static_cast<std::uint64_t>(static_cast<std::int64_t>(p.indices[pos]));
      keys[pos] = linearized_key(p, row, bag, pos);
    }
    // Uncovered head and tail (offsets are trusted after the bounds check; this keeps keys defined).
    std::int64_t lo = 0, hi = 0;
    if (bag == 0) hi = start;
    if (bag == p.num_bags - 1) {
      lo = end;
      hi = p.num_indices;
    }
    for (std::int64_t pos = lo + group_lane; pos < hi; pos += kGroupLanes) keys[pos] = outside_bag_key(p, pos);
  }
}

// Dense-gradient "update": the run's summed gradient at the sorted position where it starts.
template <typename IndexT, int kVecsPerLane, int kGroupLanes>
__device__ inline void write_dense_row(const BackwardParams<IndexT>& p, std::int64_t global_row,
                                       std::int64_t sorted_position, const float4 (&g)[kVecsPerLane]) {
  const int group_lane = lane_id() % kGroupLanes;
  if (group_lane == 0) p.dense_rows[sorted_position] = global_row;
#pragma unroll
  for (int k = 0; k < kVecsPerLane; ++k) {
    const int vec = group_lane + k * kGroupLanes;
    if (vec * 4 < p.max_dim) *reinterpret_cast<float4*>(p.dense_grads + sorted_position * p.max_dim + vec * 4) = g[k];
  }
}

// Weight rows are read once and written once per step: evict-first loads and stores (CUDA) keep
// them from pushing grad_output rows (read up to L times each) out of L2. Measured on C2: 2.307
// -> 2.288 ms backward.
template <typename Tag>
__device__ inline RawVec<Tag> load_raw_vec_once(const typename Tag::Storage* ptr) {
  return load_read_once(reinterpret_cast<const RawVec<Tag>*>(ptr));
}

template <typename Tag>
__device__ inline void store_row_vec_once(typename Tag::Storage* ptr, float4 v) {
#if defined(PARITY_GPU_CUDA)
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    __stcs(reinterpret_cast<float4*>(ptr), v);
    return;
  }
#endif
  store_row_vec<Tag>(ptr, v);
}

// Row-wise Adagrad pieces, shared by every caller so a row's arithmetic is the same wherever it
// is updated: this lane's part of the gradient's sum of squares (after L2 decay folds w into g),
// then the step given the row's new state m (returns this lane's part of the new row's norm^2).
template <typename IndexT, int kVecsPerLane>
__device__ inline float rowwise_lane_sum_sq(const BackwardParams<IndexT>& p, float4 (&g)[kVecsPerLane],
                                            const float4 (&w)[kVecsPerLane]) {
  float sum_sq = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecsPerLane; ++k) {
    if (p.decay == Decay::kL2) fma_vec(g[k], p.weight_decay, w[k]);
    sum_sq += g[k].x * g[k].x + g[k].y * g[k].y + g[k].z * g[k].z + g[k].w * g[k].w;
  }
  return sum_sq;
}

template <typename IndexT, int kVecsPerLane>
__device__ inline float rowwise_lane_step(const BackwardParams<IndexT>& p, float m, float4 (&w)[kVecsPerLane],
                                          const float4 (&g)[kVecsPerLane]) {
  const float lr = p.learning_rate;
  // Fast reciprocal (<= 2 ulp): the IEEE division and square root were ~30 of the ~180
  // instructions per position of a scheduler-bound kernel; far inside the derived tolerance.
  const float mult = fast_divide(lr, fast_sqrt(m) + p.eps);
  float corr = 1.0f;
  if (p.decay == Decay::kL2) corr = 1.0f - mult * p.weight_decay;
  if (p.decay == Decay::kDecoupled) corr = 1.0f - lr * p.weight_decay;
  float norm_sq = 0.0f;
#pragma unroll
  for (int k = 0; k < kVecsPerLane; ++k) {
    float4& wk = w[k];
    const float4 gk = g[k];
    wk.x = corr * wk.x - mult * gk.x;
    wk.y = corr * wk.y - mult * gk.y;
    wk.z = corr * wk.z - mult * gk.z;
    wk.w = corr * wk.w - mult * gk.w;
    if (p.max_norm > 0.0f) norm_sq += wk.x * wk.x + wk.y * wk.y + wk.z * wk.z + wk.w * wk.w;
  }
  return norm_sq;
}

// Per-element optimiser state (Adagrad: m; Adam: m and v) of up to kRows rows, as one lane holds it.
template <int kRows, int kVecsPerLane>
struct ElementState {
  float4 m[kRows][kVecsPerLane];
  float4 v[kRows][kVecsPerLane];
};

// Loads the lane's part of the per-element state of the rows with is_update[q] (zeros elsewhere).
// Every load is issued before any is used, so the rows cost one memory latency, not one each.
template <typename IndexT, int kVecsPerLane, int kRows, int kGroupLanes>
__device__ inline void load_element_state(const BackwardParams<IndexT>& p, const bool (&is_update)[kRows],
                                          const std::int64_t (&bases)[kRows], const int (&dims)[kRows],
                                          ElementState<kRows, kVecsPerLane>& state) {
  const int group_lane = lane_id() % kGroupLanes;
  const bool is_adam = p.update == Update::kAdam;
#pragma unroll
  for (int q = 0; q < kRows; ++q) {
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) {
      const int vec = group_lane + k * kGroupLanes;
      const bool live = is_update[q] && vec < dims[q] / 4;
      state.m[q][k] = live ? load_vec(p.state1 + bases[q] + vec * 4) : make_float4(0.f, 0.f, 0.f, 0.f);
      state.v[q][k] = live && is_adam ? load_vec(p.state2 + bases[q] + vec * 4) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
}

// Adagrad / Adam step of up to kRows rows (per-element state at bases[q], already loaded into
// `state`); stores the new state. Same arithmetic per element wherever the state was loaded.
// Reciprocals of the bias corrections and the hardware division and square root (<= 2 ulp, as
// row-wise Adagrad): Adam's IEEE sequences (two divisions and a square root per element) took
// more instructions than the rest of its step; the error is far inside the derived tolerance.
template <typename IndexT, int kVecsPerLane, int kRows, int kGroupLanes>
__device__ inline void step_rows_with_element_state(const BackwardParams<IndexT>& p, const bool (&is_update)[kRows],
                                                    const std::int64_t (&bases)[kRows], const int (&dims)[kRows],
                                                    float4 (&w)[kRows][kVecsPerLane], float4 (&g)[kRows][kVecsPerLane],
                                                    ElementState<kRows, kVecsPerLane>& state) {
  const int group_lane = lane_id() % kGroupLanes;
  const float lr = p.learning_rate;
  const bool is_adam = p.update == Update::kAdam;
  const float inv_bias_correction1 = is_adam ? 1.0f / p.bias_correction1 : 0.0f;
  const float inv_bias_correction2 = is_adam ? 1.0f / p.bias_correction2 : 0.0f;
#pragma unroll
  for (int q = 0; q < kRows; ++q) {
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) {
      const int vec = group_lane + k * kGroupLanes;
      if (!is_update[q] || vec >= dims[q] / 4) continue;
      float* wk = &w[q][k].x;
      float* gk = &g[q][k].x;
      float* mk = &state.m[q][k].x;
      if (!is_adam) {
        for (int e = 0; e < 4; ++e) {
          mk[e] += gk[e] * gk[e];
          wk[e] -= fast_divide(lr * gk[e], fast_sqrt(mk[e]) + p.eps);
        }
      } else {
        float* vk = &state.v[q][k].x;
        for (int e = 0; e < 4; ++e) {
          mk[e] = p.beta1 * mk[e] + (1.0f - p.beta1) * gk[e];
          vk[e] = p.beta2 * vk[e] + (1.0f - p.beta2) * gk[e] * gk[e];
          wk[e] -= lr * (fast_divide(mk[e] * inv_bias_correction1, fast_sqrt(vk[e] * inv_bias_correction2) + p.eps) +
                         p.weight_decay * wk[e]);
        }
        *reinterpret_cast<float4*>(p.state2 + bases[q] + vec * 4) = state.v[q][k];
      }
      *reinterpret_cast<float4*>(p.state1 + bases[q] + vec * 4) = state.m[q][k];
    }
  }
}

// The fused optimiser update of up to kRows rows by one group of kGroupLanes lanes (rows with
// is_update[q] false are left alone; every lane of the warp must call it, since row-wise Adagrad
// reduces across the group with shuffles): group lane l owns vecs l + k*kGroupLanes; w[q] holds row q's weights (already loaded),
// rowwise_state[q] its row-wise Adagrad state, g[q] its summed gradient; bases[q] is the row's
// first element in weights (and in per-element state). Stores weights and state. Row-wise Adagrad
// runs the rows side by side (their warp reductions interleaved, so kRows rows cost about one
// reduction's latency); the arithmetic of each row is the same for any kRows.
// kStateLoaded: `element_state` already holds the rows' Adagrad/Adam state (the chunk kernel's
// prefetch); otherwise it is scratch, loaded here.
template <typename Tag, typename IndexT, int kVecsPerLane, int kRows, int kGroupLanes, bool kStateLoaded = false>
__device__ inline void update_loaded_rows(const BackwardParams<IndexT>& p, const bool (&is_update)[kRows],
                                          const std::int64_t (&global_rows)[kRows],
                                          const std::int64_t (&bases)[kRows], const int (&dims)[kRows],
                                          float4 (&w)[kRows][kVecsPerLane], const float (&rowwise_state)[kRows],
                                          float4 (&g)[kRows][kVecsPerLane],
                                          ElementState<kRows, kVecsPerLane>& element_state) {
  const int group_lane = lane_id() % kGroupLanes;
  const float lr = p.learning_rate;
  if (p.update == Update::kRowwiseAdagrad) {
    float sum_sq[kRows], m[kRows], norm_sq[kRows];
#pragma unroll
    for (int q = 0; q < kRows; ++q) sum_sq[q] = rowwise_lane_sum_sq<IndexT, kVecsPerLane>(p, g[q], w[q]);
#pragma unroll
    for (int offset = kGroupLanes / 2; offset > 0; offset /= 2) {
#pragma unroll
      for (int q = 0; q < kRows; ++q) sum_sq[q] += shfl_xor(sum_sq[q], offset);
    }
#pragma unroll
    for (int q = 0; q < kRows; ++q) {
      m[q] = rowwise_state[q] + fast_divide(sum_sq[q], static_cast<float>(dims[q] > 0 ? dims[q] : 1));
      norm_sq[q] = rowwise_lane_step<IndexT, kVecsPerLane>(p, m[q], w[q], g[q]);
    }
    if (p.max_norm > 0.0f) {
#pragma unroll
      for (int offset = kGroupLanes / 2; offset > 0; offset /= 2) {
#pragma unroll
        for (int q = 0; q < kRows; ++q) norm_sq[q] += shfl_xor(norm_sq[q], offset);
      }
#pragma unroll
      for (int q = 0; q < kRows; ++q) {
        if (sqrtf(norm_sq[q]) > p.max_norm) {
          const float scale = p.max_norm / sqrtf(norm_sq[q]);
#pragma unroll
          for (int k = 0; k < kVecsPerLane; ++k) {
            w[q][k].x *= scale;
            w[q][k].y *= scale;
            w[q][k].z *= scale;
            w[q][k].w *= scale;
          }
        }
      }
    }
#pragma unroll
    for (int q = 0; q < kRows; ++q) {
      if (is_update[q] && group_lane == 0) p.state1[global_rows[q]] = m[q];
    }
  } else if (p.update == Update::kSgd) {
#pragma unroll
    for (int q = 0; q < kRows; ++q) {
#pragma unroll
      for (int k = 0; k < kVecsPerLane; ++k) fma_vec(w[q][k], -lr, g[q][k]);
    }
  } else if (p.update == Update::kAdagrad || p.update == Update::kAdam) {
    if constexpr (!kStateLoaded) {
      load_element_state<IndexT, kVecsPerLane, kRows, kGroupLanes>(p, is_update, bases, dims, element_state);
    }
    step_rows_with_element_state<IndexT, kVecsPerLane, kRows, kGroupLanes>(p, is_update, bases, dims, w, g,
                                                                           element_state);
  }
#pragma unroll
  for (int q = 0; q < kRows; ++q) {
    if (!is_update[q]) continue;
    auto* row_weights = static_cast<typename Tag::Storage*>(p.weights) + bases[q];
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) {
      const int vec = group_lane + k * kGroupLanes;
      if (vec < dims[q] / 4) store_row_vec_once<Tag>(row_weights + vec * 4, w[q][k]);
    }
  }
}

// Update of one row known only by its global row (the combine kernel): table by binary search
// over the per-table row bases, then load, update, store; or the dense gradient.
template <typename Tag, typename IndexT, int kVecsPerLane>
__device__ inline void apply_row_update(const BackwardParams<IndexT>& p, std::int64_t global_row,
                                        std::int64_t sorted_position, float4 (&g)[kVecsPerLane]) {
  if (p.update == Update::kDenseGrad) {
    write_dense_row<IndexT, kVecsPerLane, kWarpSize>(p, global_row, sorted_position, g);
    return;
  }
  int lo = 0, hi = p.layout.num_tables - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (p.layout.table_row_base[mid] <= global_row) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  const int dim = static_cast<int>(p.layout.table_dim[lo]);
  const std::int64_t base = p.layout.table_weights_offset[lo] + (global_row - p.layout.table_row_base[lo]) * p.layout.table_row_stride[lo];
  const auto* row_weights = static_cast<const typename Tag::Storage*>(p.weights) + base;
  float4 w[kVecsPerLane];
#pragma unroll
  for (int k = 0; k < kVecsPerLane; ++k) {
    const int vec = lane_id() + k * kWarpSize;
    w[k] = vec < dim / 4 ? load_row_vec<Tag>(row_weights + vec * 4) : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  const bool is_update[1] = {true};
  const std::int64_t rows[1] = {global_row}, bases[1] = {base};
  const int dims[1] = {dim};
  const float rowwise_state[1] = {p.update == Update::kRowwiseAdagrad ? p.state1[global_row] : 0.0f};
  float4 ws[1][kVecsPerLane], gs[1][kVecsPerLane];
#pragma unroll
  for (int k = 0; k < kVecsPerLane; ++k) {
    ws[0][k] = w[k];
    gs[0][k] = g[k];
  }
  ElementState<1, kVecsPerLane> element_state;
  update_loaded_rows<Tag, IndexT, kVecsPerLane, 1, kWarpSize>(p, is_update, rows, bases, dims, ws, rowwise_state, gs,
                                                              element_state);
}

}  // namespace parity::gpu_device
