// TBE forward for narrow rows (widest table's row <= 128 bytes); legend in kernels.cuh.
//
// A row is cut into pieces of kPieceVecs vecs: 16 bytes (one fp32 vec, or two 16-bit vecs when
// every 16-bit row can be read as 16-byte pieces: its table's offset and row stride are 16-byte
// multiples, so a padded row's last piece may end in its own padding and stores only the row's
// vectors) or 8 bytes (16-bit rows that cannot). A group of
// row_lanes lanes (the power of two >= the widest table's pieces; a launch argument, so one kernel
// serves every width) holds one bag, lane i of the group piece i, and a warp holds
// kWarpSize / row_lanes groups side by side: at D = 16 fp32 a warp pools 8 bags at once instead of
// leaving 28 of 32 lanes idle. Each group takes kBagsPerGroup bags together and issues the loads of
// kRowsPerBag rows of each before adding any, so a lane has kBagsPerGroup * kRowsPerBag independent
// row loads in flight; bags with L <= kRowsPerBag (one-hot, L = 2) finish in one pass, with no
// shuffles and no warp-wide loop bound (lanes of a group read the same offsets and indices, which
// the memory system serves with one transaction per group).
//
// Bags: warp w owns bags [w * bags_per_warp, (w + 1) * bags_per_warp); the group's i-th bag is
// w * bags_per_warp + i * groups_per_warp + group, so at each i the warp's groups read adjacent
// offsets. Per bag the rows are added in position order in fp32 (w * row), then scaled by 1/L for
// mean pooling, as in the group-per-bag kernel. Pooling none is not handled here.
#pragma once

#include "backends/gpu/embedding/kernels.cuh"

namespace parity::gpu_device {

// A piece as stored: one raw vec, or two 16-bit vecs in one 16-byte load.
template <typename Tag, int kPieceVecs>
struct NarrowPieceOf {
  using Type = RawVec<Tag>;
};
template <typename Tag>
struct NarrowPieceOf<Tag, 2> {
  using Type = uint4;
};
template <typename Tag, int kPieceVecs>
using NarrowPiece = typename NarrowPieceOf<Tag, kPieceVecs>::Type;

template <typename Tag, int kPieceVecs>
__device__ inline NarrowPiece<Tag, kPieceVecs> zero_narrow_piece() {
  if constexpr (kPieceVecs == 2) {
    return make_uint4(0u, 0u, 0u, 0u);
  } else {
    return zero_raw_vec<Tag>();
  }
}

// acc[v] += weight * (vec v of the piece), v < kPieceVecs.
template <typename Tag, int kPieceVecs>
__device__ inline void add_narrow_piece(float4 (&acc)[kPieceVecs], float weight,
                                        NarrowPiece<Tag, kPieceVecs> raw) {
  if constexpr (kPieceVecs == 2) {
    fma_vec(acc[0], weight, raw_to_float4<Tag>(make_uint2(raw.x, raw.y)));
    fma_vec(acc[1], weight, raw_to_float4<Tag>(make_uint2(raw.z, raw.w)));
  } else {
    fma_vec(acc[0], weight, raw_to_float4<Tag>(raw));
  }
}

__device__ inline float4 scaled_vec(float4 v, float scale) {
  return make_float4(v.x * scale, v.y * scale, v.z * scale, v.w * scale);
}

// A bag's output piece: acc scaled by `scale` (1/L for mean pooling, else 1), stored as out_kind
// (kStreaming: store_output's); only its first `elements_left` / 4 vectors (all where the row goes
// on past it): a 16-byte piece of a padded 16-bit row may end in the padding (its last 4
// elements), which is never stored.
template <int kPieceVecs, bool kStreaming = false>
__device__ inline void store_scaled_piece(void* out, std::int64_t element, OutKind kind, float scale,
                                          const float4 (&acc)[kPieceVecs], int elements_left) {
  if constexpr (kPieceVecs == 2) {
    if (store_16_bit_pair<kStreaming>(out, element, kind, scaled_vec(acc[0], scale), scaled_vec(acc[1], scale),
                                      elements_left)) {
      return;
    }
  }
#pragma unroll
  for (int v = 0; v < kPieceVecs; ++v) {
    if (4 * v < elements_left) store_out_vec<kStreaming>(out, element + 4 * v, kind, scaled_vec(acc[v], scale));
  }
}

// Launch bounds ask for kMinBlocksPerSm blocks per SM (2 by default: <= 128 registers): the row
// loads in flight per lane are what hides memory latency here, so registers go to them, not to
// more warps. (The probe's candidates trade the two: 4 x 4 rows at 2 blocks, 2 x 2 at 4.)
// Long on purpose: one kernel body whose phases share registers and shared memory; split into
// device functions it would hide the data flow the tuning depends on.
template <typename Tag, typename IndexT, int kPieceVecs, int kBagsPerGroup, int kRowsPerBag, int kMinBlocksPerSm = 2>
__global__ void __launch_bounds__(kForwardBlockThreads, kMinBlocksPerSm)
    tbe_forward_narrow_rows_kernel(ForwardParams<IndexT> p, int row_lanes_log2) {
  static_assert(kPieceVecs == 1 || (kPieceVecs == 2 && !std::is_same_v<Tag, F32Tag>),
                "two-vec pieces are 16 bytes of 16-bit weights");
  using Storage = typename Tag::Storage;
  using Piece = NarrowPiece<Tag, kPieceVecs>;
  constexpr int kPieceElements = 4 * kPieceVecs;
  const int groups_per_warp = kWarpSize >> row_lanes_log2;
  const int lane = lane_id();
  const int group = lane >> row_lanes_log2;
  const int piece_element = (lane & ((1 << row_lanes_log2) - 1)) * kPieceElements;
  const std::int64_t bags_per_warp = static_cast<std::int64_t>(groups_per_warp) * kBagsPerGroup;
  const std::int64_t warps_per_block = kForwardBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const auto* weights = static_cast<const Storage*>(p.weights);
  // F*B < 2^32 (checked on the host): bags are divided in 32 bits.
  const auto batch_size = static_cast<std::uint32_t>(p.batch_size);

  for (std::int64_t warp_global =
           static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id();
       warp_global * bags_per_warp < p.num_bags; warp_global += total_warps) {
    const std::int64_t first_bag = warp_global * bags_per_warp + group;
    // Per bag: its first position, length, and this lane's piece of the table's row 0 with the
    // row stride (0: no piece here, or no bag, so nothing is loaded or stored). Positions in
    // 32 bits (N < 2^31, checked on the host): registers are what limits the bags in flight.
    int start[kBagsPerGroup];
    int length[kBagsPerGroup];
    const Storage* table_piece[kBagsPerGroup];
    int row_stride[kBagsPerGroup];  // 0: no piece here, or no bag
    int max_length = 0;
#pragma unroll
    for (int i = 0; i < kBagsPerGroup; ++i) {
      const std::int64_t bag = first_bag + static_cast<std::int64_t>(i) * groups_per_warp;
      start[i] = 0;
      length[i] = 0;
      row_stride[i] = 0;
      table_piece[i] = weights;
      if (bag < p.num_bags) {
        const auto f = static_cast<int>(static_cast<std::uint32_t>(bag) / batch_size);
        const auto s = static_cast<int>(p.offsets[bag]);
        const auto e = static_cast<int>(p.offsets[bag + 1]);
        start[i] = s;
        length[i] = e > s ? e - s : 0;  // a decreasing pair reads as empty, never negative
        const int table_dim = static_cast<int>(p.layout.feature_dim[f]);
        row_stride[i] = piece_element < table_dim ? static_cast<int>(p.layout.feature_row_stride[f]) : 0;
        table_piece[i] = weights + p.layout.feature_weights_offset[f] + piece_element;
        max_length = length[i] > max_length ? length[i] : max_length;
      }
    }
    float4 acc[kBagsPerGroup][kPieceVecs];
#pragma unroll
    for (int i = 0; i < kBagsPerGroup; ++i) {
#pragma unroll
      for (int v = 0; v < kPieceVecs; ++v) acc[i][v] = make_float4(0.f, 0.f, 0.f, 0.f);
    }

    for (int j = 0; j < max_length; j += kRowsPerBag) {
      Piece rows[kBagsPerGroup][kRowsPerBag];  // every load issued before any conversion
      float row_weight[kBagsPerGroup][kRowsPerBag];
#pragma unroll
      for (int i = 0; i < kBagsPerGroup; ++i) {
#pragma unroll
        for (int u = 0; u < kRowsPerBag; ++u) {
          const bool live = j + u < length[i];
          const auto position = static_cast<std::uint32_t>(start[i]) +
                                static_cast<std::uint32_t>(j + u);  // no overflow
          const std::int64_t index = live ? static_cast<std::int64_t>(p.indices[position]) : 0;
          row_weight[i][u] =
              !live ? 0.0f
                    : (p.per_sample_weights != nullptr ? p.per_sample_weights[position] : 1.0f);
          rows[i][u] = live && row_stride[i] > 0
                           ? *reinterpret_cast<const Piece*>(table_piece[i] + index * row_stride[i])
                           : zero_narrow_piece<Tag, kPieceVecs>();
        }
      }
#pragma unroll
      for (int i = 0; i < kBagsPerGroup; ++i) {
#pragma unroll
        for (int u = 0; u < kRowsPerBag; ++u)
          add_narrow_piece<Tag, kPieceVecs>(acc[i], row_weight[i][u], rows[i][u]);
      }
    }

#pragma unroll
    for (int i = 0; i < kBagsPerGroup; ++i) {
      if (row_stride[i] == 0) continue;
      const std::int64_t bag = first_bag + static_cast<std::int64_t>(i) * groups_per_warp;
      const auto f = static_cast<int>(static_cast<std::uint32_t>(bag) / batch_size);
      const std::int64_t b = bag - static_cast<std::int64_t>(f) * p.batch_size;
      const std::int64_t out_element =
          b * p.output_cols + p.layout.feature_out_col[f] + piece_element;
      const float scale =
          (p.pooling == Pool::kMean && length[i] > 0) ? 1.0f / static_cast<float>(length[i]) : 1.0f;
      store_scaled_piece<kPieceVecs>(p.output, out_element, p.out_kind, scale, acc[i],
                                     static_cast<int>(p.layout.feature_dim[f]) - piece_element);
    }
  }
}

}  // namespace parity::gpu_device
