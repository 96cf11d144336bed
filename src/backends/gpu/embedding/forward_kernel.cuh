// TBE forward kernel (group per bag); see kernels.cuh for the legend.
#pragma once

#include "backends/gpu/embedding/kernels.cuh"

namespace parity::gpu_device {

constexpr int floor_power_of_two(int n) {
  int p = 1;
  while (2 * p <= n) p *= 2;
  return p;
}

// The lowest lane set in `lanes` (0 when none), removed from it.
__device__ inline int pop_lowest_lane(LaneMask& lanes) {
  const int lane = lanes != 0 ? popcount((lanes & (~lanes + 1)) - 1) : 0;
  lanes &= lanes - 1;
  return lane;
}

// kPaired (16-bit weights, every row 16-byte aligned): a lane's vecs come in adjacent pairs read
// with one 16-byte load, so a 16-bit row needs half the lanes and half the load instructions of
// the 8-byte-per-lane layout (fp16 C2 was instruction-bound at 2.1 TB/s with 8-byte loads). The
// per-element summation order is the same in both layouts, so results are bitwise identical.
//
// kBytesInFlightPerLane: the row bytes a lane loads before adding any (128 by default; the fitted
// groups, whose lanes all carry data, take 256 so a lane with 3-5 vecs still has rows in flight).
//
// kDedupRows (whole-warp groups, sum and mean pooling only): a chunk's positions that repeat a row
// are read once. Each lane compares its index with the chunk's others (shuffles); the first lane of
// each distinct row (its leader) carries the sum of the repeats' per-sample weights (their count
// when unweighted), and only the leaders' rows are loaded and added, in first-occurrence order.
// Under heavy skew a bag repeats its hot rows (Zipf 1.3, L = 30: about half the positions), and
// each repeat is a 1 KB read from the L2 that the warp would otherwise wait on. The sum differs
// from the position-order sum by rounding only (w1 r + w2 r becomes (w1 + w2) r).
// Long on purpose: one kernel body whose phases share registers and shared memory; split into
// device functions it would hide the data flow the tuning depends on.
template <typename Tag, typename IndexT, int kGroupLanes, int kVecsPerLane, bool kPaired = false,
          int kBytesInFlightPerLane = 128, bool kDedupRows = false>
__global__ void __launch_bounds__(kForwardBlockThreads)
    tbe_forward_group_per_bag_kernel(ForwardParams<IndexT> p) {
  static_assert(kWarpSize % kGroupLanes == 0, "groups tile the warp");
  static_assert(!kDedupRows || kGroupLanes == kWarpSize, "deduplication compacts a whole warp's chunk");
  static_assert(!kPaired || (kVecsPerLane % 2 == 0 && !std::is_same_v<Tag, F32Tag>),
                "pairs are two 8-byte vecs of 16-bit weights");
  using Storage = typename Tag::Storage;
  // Rows in flight per lane: enough bytes outstanding to cover memory latency (8 x 16 B per lane),
  // bounded registers. A 16-bit vec is 8 B, so 16-bit rows need twice the rows in flight for the
  // same bytes: with 8, fp16 C2 ran at 1.4 TB/s against fp32's 3.5 (latency-bound, not bandwidth).
  constexpr int kRowsForBytes =
      kBytesInFlightPerLane / (4 * static_cast<int>(sizeof(typename Tag::Storage)) * kVecsPerLane);
  // A power of two, so the unrolled steps tile a chunk of kGroupLanes rows without a ragged step.
  // (Every 128-byte configuration's count already is one.)
  constexpr int kUnrollWanted = floor_power_of_two(kRowsForBytes > 0 ? kRowsForBytes : 1);
  constexpr int kUnroll = kUnrollWanted < kGroupLanes ? kUnrollWanted : kGroupLanes;
  constexpr int kGroupsPerWarp = kWarpSize / kGroupLanes;
  const int lane = lane_id();
  const int group_lane = lane % kGroupLanes;
  // The k-th vec this lane owns within a row.
  auto vec_of = [&](int k) {
    return kPaired ? 2 * (group_lane + (k / 2) * kGroupLanes) + (k % 2) : group_lane + k * kGroupLanes;
  };
  const int group_base_lane = lane - group_lane;
  const std::int64_t warps_per_block = kForwardBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const auto* weights = static_cast<const Storage*>(p.weights);

  for (std::int64_t warp_global = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id();
       p.bag_begin + warp_global * kGroupsPerWarp < p.num_bags; warp_global += total_warps) {
    const std::int64_t bag = p.bag_begin + warp_global * kGroupsPerWarp + lane / kGroupLanes;
    const bool active = bag < p.num_bags;
    std::int64_t start = 0, end = 0, weights_offset = 0, out_col = 0, b = 0;
    int dim = 0, row_stride = 0;
    if (active) {
      const auto f = static_cast<int>(bag / p.batch_size);
      b = bag - static_cast<std::int64_t>(f) * p.batch_size;
      start = static_cast<std::int64_t>(p.offsets[bag]);
      end = static_cast<std::int64_t>(p.offsets[bag + 1]);
      end = end > start ? end : start;  // a decreasing pair reads as empty, never negative
      weights_offset = p.layout.feature_weights_offset[f];
      out_col = p.layout.feature_out_col[f];
      dim = static_cast<int>(p.layout.feature_dim[f]);
      row_stride = static_cast<int>(p.layout.feature_row_stride[f]);
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
      // kDedupRows: the chunk's distinct rows, whose leader lanes are the set bits of `leaders`
      // (warp-uniform: the group is the warp). The plain kernel's expressions are kept as they were
      // (constant-folded ternaries): restructured around a shared row count, its code for C2 took
      // 117 registers instead of 98 and ran 22% slower.
      LaneMask leaders = 0;
      std::int64_t distinct_rows = 0;
      if constexpr (kDedupRows) {
        const bool my_live = group_lane < in_chunk;
        bool leader = my_live;
        float repeats_weight = my_weight;
        for (int other_lane = 0; other_lane < kGroupLanes; ++other_lane) {
          const std::int64_t other_index = shfl(my_index, other_lane);
          const float other_weight = shfl(my_weight, other_lane);
          if (my_live && other_lane < in_chunk && other_index == my_index) {
            if (other_lane < group_lane) leader = false;
            if (other_lane > group_lane) repeats_weight += other_weight;
          }
        }
        my_weight = repeats_weight;  // read by the leader's shuffle only
        leaders = ballot(leader);
        distinct_rows = popcount(leaders);
      }
      const std::int64_t warp_in_chunk =
          warp_reduce_max(kDedupRows ? distinct_rows : (in_chunk < kGroupLanes ? in_chunk : kGroupLanes));
      for (int j = 0; j < warp_in_chunk; j += kUnroll) {
        RawVec<Tag> rows[kUnroll][kVecsPerLane];  // all loads issued before any conversion
        float row_weight[kUnroll];
        std::int64_t row_position[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          const int src = kDedupRows ? pop_lowest_lane(leaders) : group_base_lane + ((j + u) < kGroupLanes ? (j + u) : 0);
          const std::int64_t index = shfl(my_index, src);
          row_weight[u] = shfl(my_weight, src);
          const bool live = (j + u) < (kDedupRows ? distinct_rows : in_chunk) && (j + u) < kGroupLanes;
          row_weight[u] = live ? row_weight[u] : 0.0f;
          row_position[u] = start + chunk + j + u;
          const Storage* row = weights + weights_offset + index * row_stride;
          if constexpr (kPaired) {
#pragma unroll
            for (int k = 0; k < kVecsPerLane; k += 2) {
              const int vec = vec_of(k);
              if (live && vec + 1 < vecs) {
                const uint4 both = *reinterpret_cast<const uint4*>(row + vec * 4);
                rows[u][k] = make_uint2(both.x, both.y);
                rows[u][k + 1] = make_uint2(both.z, both.w);
              } else {
                rows[u][k] = (live && vec < vecs) ? load_raw_vec<Tag>(row + vec * 4) : zero_raw_vec<Tag>();
                rows[u][k + 1] = zero_raw_vec<Tag>();
              }
            }
          } else {
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) {
              const int vec = vec_of(k);
              rows[u][k] = (live && vec < vecs) ? load_raw_vec<Tag>(row + vec * 4) : zero_raw_vec<Tag>();
            }
          }
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
          if (p.pooling == Pool::kNone) {
            const bool live = (j + u) < in_chunk && (j + u) < kGroupLanes;
#pragma unroll
            for (int k = 0; k < kVecsPerLane; ++k) {
              const int vec = vec_of(k);
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
      const int vec = vec_of(k);
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

}  // namespace parity::gpu_device
