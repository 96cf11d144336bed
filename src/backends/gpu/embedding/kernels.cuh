// Table-batched embedding kernels, one source for CUDA and HIP (lane count kWarpSize = 32 or 64).
//
// Legend: F features, B batch, bag = f*B + b, N indices, D dim of a feature's table, "vec" = 4
// consecutive elements (16 B in fp32, 8 B in fp16/bf16); a lane owns vecs lane, lane+G, ...
//
// Forward (group per bag): a group of G lanes (G = kWarpSize, /2 or /4 for narrow rows, so
// several bags share a warp) walks its bag: each lane loads one index (and weight) of a chunk of G,
// indices are broadcast by shuffles, and every lane loads its vecs of kUnroll rows before adding
// any (several rows in flight). Accumulation in fp32 registers; mean scales by 1/L (L = 0 -> 0).
//
// Backward: keys (global_row << pos_bits | position) sorted by the row bits (stable) group equal
// rows; the sorted array is cut into fixed chunks of C positions, one warp per chunk. A run that
// lies inside one chunk is summed in registers and updated right there (one update per unique
// row). A run crossing chunk edges leaves one partial per chunk in the workspace (head slot: the
// piece continuing a run from the previous chunk; tail slot: a run starting here and going on);
// a second kernel gives the run's start chunk one block that adds its pieces in chunk order and
// applies the update. No global atomics; the order of every sum depends only on the sorted input
// and C, so results are bitwise identical across runs and grid sizes.
//
// Bounds check: threads map flatly onto offsets and indices (no idle lanes on short bags);
// a position's feature comes from a binary search over the F+1 feature-boundary offsets staged
// in shared memory; counts and the lowest bad position are tree-reduced per block into that
// block's slot (no global atomics at all); the host sums the slots after the next sync.
#pragma once

#include <type_traits>

#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device {

// ---- element types (16-bit weights are kept as raw bits: no vendor half headers needed) ----
struct F32Tag {
  using Storage = float;
};
struct F16Tag {
  using Storage = std::uint16_t;
};
struct BF16Tag {
  using Storage = std::uint16_t;
};

__device__ inline float bits_to_float(std::uint32_t u) { return __uint_as_float(u); }

__device__ inline float bf16_to_float(std::uint16_t bits) { return bits_to_float(std::uint32_t{bits} << 16); }

__device__ inline std::uint16_t float_to_bf16(float value) {
  std::uint32_t u = __float_as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

// Branch-free (selects only), so a row's loads are not held back behind per-element branches.
__device__ inline float fp16_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  const float subnormal = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // mantissa * 2^-24, exact
  const std::uint32_t normal_bits = ((exponent + 112u) << 23) | (mantissa << 13);
  const std::uint32_t inf_nan_bits = 0x7f800000u | (mantissa << 13);
  std::uint32_t bits = exponent == 0x1fu ? inf_nan_bits : normal_bits;
  bits = exponent == 0 ? __float_as_uint(subnormal) : bits;
  return bits_to_float(sign | bits);
}

__device__ inline std::uint16_t float_to_fp16(float value) {
  const std::uint32_t x = __float_as_uint(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504
  if (ax < 0x38800000u) {  // below 2^-14: subnormal half, round(|x| * 2^24) to nearest even
    const float scaled = bits_to_float(ax) * 16777216.0f;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(rintf(scaled)));
  }
  std::uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
  const std::uint32_t rest = ax & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

__device__ inline float4 load_vec(const float* p) { return *reinterpret_cast<const float4*>(p); }

// A vec as stored: float4 (fp32) or four 16-bit values in a uint2. Loading raw and converting later
// lets a lane issue all of its rows' loads before the first conversion waits on one.
template <typename Tag>
struct RawVecOf {
  using Type = uint2;
};
template <>
struct RawVecOf<F32Tag> {
  using Type = float4;
};
template <typename Tag>
using RawVec = typename RawVecOf<Tag>::Type;

template <typename Tag>
__device__ inline RawVec<Tag> zero_raw_vec() {
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    return make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
    return make_uint2(0u, 0u);  // +0 in fp16 and bf16
  }
}

template <typename Tag>
__device__ inline RawVec<Tag> load_raw_vec(const typename Tag::Storage* p) {
  return *reinterpret_cast<const RawVec<Tag>*>(p);
}

template <typename Tag>
__device__ inline float4 raw_to_float4(RawVec<Tag> raw) {
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    return raw;
  } else {
    const auto lo0 = static_cast<std::uint16_t>(raw.x & 0xffffu), hi0 = static_cast<std::uint16_t>(raw.x >> 16);
    const auto lo1 = static_cast<std::uint16_t>(raw.y & 0xffffu), hi1 = static_cast<std::uint16_t>(raw.y >> 16);
    if constexpr (std::is_same_v<Tag, F16Tag>) {
      return make_float4(fp16_to_float(lo0), fp16_to_float(hi0), fp16_to_float(lo1), fp16_to_float(hi1));
    } else {
      return make_float4(bf16_to_float(lo0), bf16_to_float(hi0), bf16_to_float(lo1), bf16_to_float(hi1));
    }
  }
}

template <typename Tag>
__device__ inline float4 load_row_vec(const typename Tag::Storage* p) {
  return raw_to_float4<Tag>(load_raw_vec<Tag>(p));
}

template <typename Tag>
__device__ inline void store_row_vec(typename Tag::Storage* p, float4 v) {
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    *reinterpret_cast<float4*>(p) = v;
  } else {
    auto cvt = [](float x) -> std::uint32_t {
      if constexpr (std::is_same_v<Tag, F16Tag>) {
        return float_to_fp16(x);
      } else {
        return float_to_bf16(x);
      }
    };
    uint2 raw;
    raw.x = cvt(v.x) | (cvt(v.y) << 16);
    raw.y = cvt(v.z) | (cvt(v.w) << 16);
    *reinterpret_cast<uint2*>(p) = raw;
  }
}

// Output dtype is a run-time choice (one branch per bag, not per element).
enum class OutKind : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

__device__ inline void store_out_vec(void* out, std::int64_t element, OutKind kind, float4 v) {
  switch (kind) {
    case OutKind::kF32: store_row_vec<F32Tag>(static_cast<float*>(out) + element, v); break;
    case OutKind::kF16: store_row_vec<F16Tag>(static_cast<std::uint16_t*>(out) + element, v); break;
    case OutKind::kBF16: store_row_vec<BF16Tag>(static_cast<std::uint16_t*>(out) + element, v); break;
  }
}

__device__ inline void fma_vec(float4& acc, float w, float4 v) {
  acc.x += w * v.x;
  acc.y += w * v.y;
  acc.z += w * v.z;
  acc.w += w * v.w;
}

// Per-feature arrays of the layout (int64 each, F entries; out_col has F+1) and per-table arrays
// (T entries; table_row_base has T+1) in one device buffer.
struct LayoutView {
  const std::int64_t* feature_weights_offset;
  const std::int64_t* feature_row_base;
  const std::int64_t* feature_rows;
  const std::int64_t* feature_dim;
  const std::int64_t* feature_out_col;
  const std::int64_t* table_row_base;
  const std::int64_t* table_weights_offset;
  const std::int64_t* table_dim;
  int num_features;
  int num_tables;
};

enum class Pool : int { kSum = 0, kMean = 1, kNone = 2 };

template <typename IndexT>
struct ForwardParams {
  LayoutView layout;
  const void* weights;
  const IndexT* indices;
  const IndexT* offsets;
  const float* per_sample_weights;  // may be null
  void* output;
  OutKind out_kind;
  Pool pooling;
  std::int64_t batch_size;
  std::int64_t num_bags;
  std::int64_t num_indices;  // host-side dispatch only (mean bag length)
  std::int64_t output_cols;
};

inline constexpr int kForwardBlockThreads = 256;

template <typename Tag, typename IndexT, int kGroupLanes, int kVecsPerLane>
__global__ void __launch_bounds__(kForwardBlockThreads)
    tbe_forward_group_per_bag_kernel(ForwardParams<IndexT> p) {
  static_assert(kWarpSize % kGroupLanes == 0, "groups tile the warp");
  using Storage = typename Tag::Storage;
  // Rows in flight per lane: enough loads outstanding to cover memory latency, bounded registers.
  constexpr int kUnrollWanted = 8 / kVecsPerLane > 0 ? 8 / kVecsPerLane : 1;
  constexpr int kUnroll = kUnrollWanted < kGroupLanes ? kUnrollWanted : kGroupLanes;
  constexpr int kGroupsPerWarp = kWarpSize / kGroupLanes;
  const int lane = lane_id();
  const int group_lane = lane % kGroupLanes;
  const int group_base_lane = lane - group_lane;
  const std::int64_t warps_per_block = kForwardBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const auto* weights = static_cast<const Storage*>(p.weights);

  for (std::int64_t warp_global = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id();
       warp_global * kGroupsPerWarp < p.num_bags; warp_global += total_warps) {
    const std::int64_t bag = warp_global * kGroupsPerWarp + lane / kGroupLanes;
    const bool active = bag < p.num_bags;
    std::int64_t start = 0, end = 0, weights_offset = 0, out_col = 0, b = 0;
    int dim = 0;
    if (active) {
      const auto f = static_cast<int>(bag / p.batch_size);
      b = bag - static_cast<std::int64_t>(f) * p.batch_size;
      start = static_cast<std::int64_t>(p.offsets[bag]);
      end = static_cast<std::int64_t>(p.offsets[bag + 1]);
      end = end > start ? end : start;  // a decreasing pair reads as empty, never negative
      weights_offset = p.layout.feature_weights_offset[f];
      out_col = p.layout.feature_out_col[f];
      dim = static_cast<int>(p.layout.feature_dim[f]);
    }
    const int vecs = dim / 4;
    const std::int64_t length = end - start;
    const std::int64_t warp_max_length = warp_reduce_max(length);
    float4 acc[kVecsPerLane];
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) acc[k] = make_float4(0.f, 0.f, 0.f, 0.f);

    for (std::int64_t chunk = 0; chunk < warp_max_length; chunk += kGroupLanes) {
      const std::int64_t my_position = start + chunk + group_lane;
      std::int64_t my_index = 0;
      float my_weight = 1.0f;
      if (my_position < end) {
        my_index = static_cast<std::int64_t>(p.indices[my_position]);
        if (p.per_sample_weights != nullptr) my_weight = p.per_sample_weights[my_position];
      }
      const std::int64_t in_chunk = length - chunk;  // this group's rows left (may be <= 0)
      const std::int64_t warp_in_chunk = warp_reduce_max(in_chunk < kGroupLanes ? in_chunk : kGroupLanes);
      for (int j = 0; j < warp_in_chunk; j += kUnroll) {
        RawVec<Tag> rows[kUnroll][kVecsPerLane];  // all loads issued before any conversion
        float row_weight[kUnroll];
        std::int64_t row_position[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int src = group_base_lane + ((j + u) < kGroupLanes ? (j + u) : 0);
          const std::int64_t index = shfl(my_index, src);
          row_weight[u] = shfl(my_weight, src);
          const bool live = (j + u) < in_chunk && (j + u) < kGroupLanes;
          row_weight[u] = live ? row_weight[u] : 0.0f;
          row_position[u] = start + chunk + j + u;
          const Storage* row = weights + weights_offset + index * dim;
#pragma unroll
          for (int k = 0; k < kVecsPerLane; ++k) {
            const int vec = group_lane + k * kGroupLanes;
            rows[u][k] = (live && vec < vecs) ? load_raw_vec<Tag>(row + vec * 4) : zero_raw_vec<Tag>();
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (p.pooling == Pool::kNone) {
            const bool live = (j + u) < in_chunk && (j + u) < kGroupLanes;
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) {
              const int vec = group_lane + k * kGroupLanes;
              if (live && vec < vecs) {
                float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
                fma_vec(v, row_weight[u], raw_to_float4<Tag>(rows[u][k]));
                store_out_vec(p.output, row_position[u] * p.output_cols + vec * 4, p.out_kind, v);
              }
            }
          } else {
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) fma_vec(acc[k], row_weight[u], raw_to_float4<Tag>(rows[u][k]));
          }
        }
      }
    }
    if (!active || p.pooling == Pool::kNone) continue;
    const float scale = (p.pooling == Pool::kMean && length > 0) ? 1.0f / static_cast<float>(length) : 1.0f;
#pragma unroll
    for (int k = 0; k < kVecsPerLane; ++k) {
      const int vec = group_lane + k * kGroupLanes;
      if (vec < vecs) {
        float4 v = acc[k];
        v.x *= scale;
        v.y *= scale;
        v.z *= scale;
        v.w *= scale;
        store_out_vec(p.output, b * p.output_cols + out_col + vec * 4, p.out_kind, v);
      }
    }
  }
}

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

// ---------------------------------------------------------------------------------------------
// Bounds check
// ---------------------------------------------------------------------------------------------

inline constexpr int kBoundsBlockThreads = 512;
inline constexpr int kBoundsItemsPerThread = 16;
inline constexpr std::int64_t kBoundsTileItems = std::int64_t{kBoundsBlockThreads} * kBoundsItemsPerThread;
inline constexpr int kBoundsMaxSharedBoundaries = 4096;
// Per-block slot: counts and the lowest bad position with its value, for indices and offsets.
struct BoundsSlot {
  std::int64_t bad_indices;
  std::int64_t first_bad_index_position;  // INT64_MAX when none
  std::int64_t first_bad_index_value;
  std::int64_t bad_offsets;
  std::int64_t first_bad_offset_position;
  std::int64_t first_bad_offset_value;
  std::int64_t last_offset_bad;
  std::int64_t reserved;
};

inline constexpr std::int64_t kNoPosition = 0x7fffffffffffffffLL;

// Block reduction of (count, lowest position, its value); thread 0 gets the result.
__device__ inline void block_reduce_first_bad(std::int64_t& count, std::int64_t& position, std::int64_t& value,
                                              std::int64_t* scratch /* 3 * warps */) {
  count = warp_reduce_sum(count);
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const std::int64_t other_position = shfl_xor(position, offset);
    const std::int64_t other_value = shfl_xor(value, offset);
    if (other_position < position) {
      position = other_position;
      value = other_value;
    }
  }
  const int warps = static_cast<int>(blockDim.x) / kWarpSize;
  if (lane_id() == 0) {
    scratch[warp_id()] = count;
    scratch[warps + warp_id()] = position;
    scratch[2 * warps + warp_id()] = value;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < warps; ++w) {
      count += scratch[w];
      if (scratch[warps + w] < position) {
        position = scratch[warps + w];
        value = scratch[2 * warps + w];
      }
    }
  }
  __syncthreads();
}

template <typename IndexT>
__global__ void __launch_bounds__(kBoundsBlockThreads)
    bounds_check_offsets_kernel(const IndexT* __restrict__ offsets, std::int64_t num_bags, std::int64_t num_indices,
                                BoundsSlot* __restrict__ slots) {
  __shared__ std::int64_t scratch[3 * kBoundsBlockThreads / kWarpSize];
  __shared__ int last_bad;
  if (threadIdx.x == 0) last_bad = 0;
  __syncthreads();
  std::int64_t count = 0, position = kNoPosition, value = 0;
  // Tiles of kBoundsItemsPerThread x block positions: every load of a tile is issued before the
  // first check, so a thread keeps that many loads in flight instead of one.
  const std::int64_t entries = num_bags + 1;
  const std::int64_t tile_stride = static_cast<std::int64_t>(gridDim.x) * kBoundsTileItems;
  for (std::int64_t tile_start = static_cast<std::int64_t>(blockIdx.x) * kBoundsTileItems; tile_start < entries;
       tile_start += tile_stride) {
    std::int64_t current[kBoundsItemsPerThread], previous[kBoundsItemsPerThread];
#pragma unroll
    for (int r = 0; r < kBoundsItemsPerThread; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      current[r] = i < entries ? static_cast<std::int64_t>(offsets[i]) : 0;
      previous[r] = i > 0 && i < entries ? static_cast<std::int64_t>(offsets[i - 1]) : 0;
    }
#pragma unroll
    for (int r = 0; r < kBoundsItemsPerThread; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      if (i >= entries) continue;
      const std::int64_t o = current[r];
      const bool bad = o < 0 || o > num_indices || (i > 0 && o < previous[r]) || (i == num_bags && o != num_indices);
      if (i == num_bags && o != num_indices) last_bad = 1;  // one thread sees the last entry
      if (bad) {
        ++count;
        if (i < position) {
          position = i;
          value = o;
        }
      }
    }
  }
  block_reduce_first_bad(count, position, value, scratch);  // also orders last_bad's write
  if (threadIdx.x == 0) {
    slots[blockIdx.x].bad_offsets = count;
    slots[blockIdx.x].first_bad_offset_position = position;
    slots[blockIdx.x].first_bad_offset_value = value;
    slots[blockIdx.x].last_offset_bad = last_bad;
  }
}

// Fix mode only, one block: offsets := running max of clamp(offsets, 0, N), last := N. Returns at
// once when no block saw a bad offset (the common case costs one tiny launch).
inline constexpr int kRepairBlockThreads = 1024;

template <typename IndexT>
__global__ void __launch_bounds__(kRepairBlockThreads)
    repair_offsets_kernel(IndexT* __restrict__ offsets, std::int64_t num_bags, std::int64_t num_indices,
                          const BoundsSlot* __restrict__ slots, int num_slots) {
  __shared__ std::int64_t chunk_max[kRepairBlockThreads];
  __shared__ int any_bad;
  if (threadIdx.x == 0) any_bad = 0;
  __syncthreads();
  for (int s = threadIdx.x; s < num_slots; s += kRepairBlockThreads) {
    if (slots[s].bad_offsets > 0) any_bad = 1;  // benign same-value race in shared memory
  }
  __syncthreads();
  if (!any_bad) return;
  const std::int64_t per_thread = (num_bags + kRepairBlockThreads - 1) / kRepairBlockThreads;
  const std::int64_t begin = per_thread * threadIdx.x;
  const std::int64_t end = begin + per_thread < num_bags ? begin + per_thread : num_bags;
  auto clamp_offset = [&](std::int64_t o) { return o < 0 ? 0 : (o > num_indices ? num_indices : o); };
  std::int64_t local = 0;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t c = clamp_offset(static_cast<std::int64_t>(offsets[i]));
    local = c > local ? c : local;
  }
  chunk_max[threadIdx.x] = local;
  __syncthreads();
  for (int stride = 1; stride < kRepairBlockThreads; stride *= 2) {
    const std::int64_t other = threadIdx.x >= static_cast<unsigned>(stride) ? chunk_max[threadIdx.x - stride] : 0;
    __syncthreads();
    if (other > chunk_max[threadIdx.x]) chunk_max[threadIdx.x] = other;
    __syncthreads();
  }
  std::int64_t running = threadIdx.x > 0 ? chunk_max[threadIdx.x - 1] : 0;
  for (std::int64_t i = begin; i < end; ++i) {
    const std::int64_t c = clamp_offset(static_cast<std::int64_t>(offsets[i]));
    running = c > running ? c : running;
    offsets[i] = static_cast<IndexT>(running);
  }
  if (threadIdx.x == 0) offsets[num_bags] = static_cast<IndexT>(num_indices);
}

template <typename IndexT>
__global__ void __launch_bounds__(kBoundsBlockThreads)
    bounds_check_indices_kernel(IndexT* __restrict__ indices, const IndexT* __restrict__ offsets,
                                const std::int64_t* __restrict__ feature_rows, int num_features,
                                std::int64_t batch_size, std::int64_t num_indices, int fix,
                                BoundsSlot* __restrict__ slots) {
  __shared__ std::int64_t boundaries[kBoundsMaxSharedBoundaries + 1];
  __shared__ std::int64_t scratch[3 * kBoundsBlockThreads / kWarpSize];
  const bool staged = num_features <= kBoundsMaxSharedBoundaries;
  auto clamp_offset = [&](std::int64_t o) { return o < 0 ? 0 : (o > num_indices ? num_indices : o); };
  if (staged) {
    for (int f = threadIdx.x; f < num_features; f += kBoundsBlockThreads) {
      boundaries[f] = clamp_offset(static_cast<std::int64_t>(offsets[static_cast<std::int64_t>(f) * batch_size]));
    }
    __syncthreads();
    if (threadIdx.x == 0) {  // running max: boundaries of a monotone view of the offsets
      for (int f = 1; f < num_features; ++f) {
        if (boundaries[f] < boundaries[f - 1]) boundaries[f] = boundaries[f - 1];
      }
      boundaries[num_features] = num_indices;
    }
    __syncthreads();
  }
  auto boundary = [&](int f) -> std::int64_t {
    if (staged) return boundaries[f];
    return f == num_features ? num_indices
                             : clamp_offset(static_cast<std::int64_t>(offsets[static_cast<std::int64_t>(f) * batch_size]));
  };
  std::int64_t count = 0, position = kNoPosition, value = 0;
  int feature = 0;
  std::int64_t feature_lo = boundary(0), feature_hi = boundary(1 < num_features ? 1 : num_features);
  std::int64_t rows = feature_rows[0];
  const std::int64_t tile_stride = static_cast<std::int64_t>(gridDim.x) * kBoundsTileItems;
  for (std::int64_t tile_start = static_cast<std::int64_t>(blockIdx.x) * kBoundsTileItems; tile_start < num_indices;
       tile_start += tile_stride) {
    std::int64_t loaded[kBoundsItemsPerThread];  // all loads of the tile in flight at once
#pragma unroll
    for (int r = 0; r < kBoundsItemsPerThread; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      loaded[r] = i < num_indices ? static_cast<std::int64_t>(indices[i]) : 0;
    }
#pragma unroll
    for (int r = 0; r < kBoundsItemsPerThread; ++r) {
      const std::int64_t i = tile_start + static_cast<std::int64_t>(r) * kBoundsBlockThreads + threadIdx.x;
      if (i >= num_indices) continue;
      if (i < feature_lo || i >= feature_hi) {
        // Largest f with boundary(f) <= i, by binary search; positions before boundary(0) are in no bag.
        int lo = 0, hi = num_features;
        while (lo < hi) {
          const int mid = (lo + hi) / 2;
          if (boundary(mid + 1) <= i) {
            lo = mid + 1;
          } else {
            hi = mid;
          }
        }
        feature = lo;
        feature_lo = boundary(feature);
        feature_hi = boundary(feature + 1);
        rows = feature_rows[feature < num_features ? feature : num_features - 1];
        if (i < feature_lo) continue;
      }
      const std::int64_t idx = loaded[r];
      if (idx >= 0 && idx < rows) continue;
      ++count;
      if (i < position) {
        position = i;
        value = idx;
      }
      if (fix) indices[i] = 0;
    }
  }
  block_reduce_first_bad(count, position, value, scratch);
  if (threadIdx.x == 0) {
    slots[blockIdx.x].bad_indices = count;
    slots[blockIdx.x].first_bad_index_position = position;
    slots[blockIdx.x].first_bad_index_value = value;
  }
}

}  // namespace parity::gpu_device
