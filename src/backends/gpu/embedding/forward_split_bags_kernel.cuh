// TBE forward for narrow rows with split bags (ForwardKernel::kNarrowRowsSplitBags); legend in
// kernels.cuh, pieces as in forward_narrow_kernel.cuh.
//
// Purpose: the narrow-rows kernel gives a bag to one group of row_lanes lanes, so a batch with few
// bags (test set 4's 00: 6144 bags of 45 rows at D = 16 fp32, 384 warps of work on a GPU that
// holds 2112 at its 2 blocks per SM) leaves most warp slots empty and each group walks its bags'
// rows one pass after another: latency-bound. Here a team of `parts` groups (a power of two, at most a warp) shares one bag:
// part k of the team takes the bag's positions k, k + parts, k + 2 * parts, ... (the team's index
// loads are contiguous), kRowsPerPass of them in flight per lane, and adds them in that order in
// fp32 (w * row). The parts' sums are then combined by an xor butterfly over the part bits of the
// lane id: at every level both partners add the same two values (a + b == b + a in IEEE), so every
// part ends with the same bits, and the order is fixed by `parts` alone (deterministic for one
// device: parts follows the SM count, tbe_gpu.hpp narrow_rows_split_parts). Part 0 scales by 1/L
// for mean pooling and stores. Teams honour p.bag_begin. Pooling none is not handled here.
#pragma once

#include "backends/gpu/embedding/forward_narrow_kernel.cuh"

namespace parity::gpu_device {

// kRowsPerPass rows of one 16-byte (or 8-byte) piece in flight per lane; kBlockThreads x
// kMinBlocksPerSm threads per SM at <= 64 registers (ptxas -v sm_90a: 56-64, no spills): with one
// bag per team the accumulators are one piece, not kBagsPerGroup of them.
template <typename Tag, typename IndexT, int kPieceVecs, int kRowsPerPass, int kBlockThreads, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kBlockThreads, kMinBlocksPerSm)
    tbe_forward_narrow_split_bags_kernel(ForwardParams<IndexT> p, int row_lanes_log2, int parts_log2) {
  static_assert(kPieceVecs == 1 || (kPieceVecs == 2 && !std::is_same_v<Tag, F32Tag>),
                "two-vec pieces are 16 bytes of 16-bit weights");
  using Storage = typename Tag::Storage;
  using Piece = NarrowPiece<Tag, kPieceVecs>;
  constexpr int kPieceElements = 4 * kPieceVecs;
  const int team_lanes_log2 = row_lanes_log2 + parts_log2;
  const int teams_per_warp = kWarpSize >> team_lanes_log2;
  const int parts = 1 << parts_log2;
  const int lane = lane_id();
  const int team = lane >> team_lanes_log2;
  const int part = (lane >> row_lanes_log2) & (parts - 1);
  const int piece_element = (lane & ((1 << row_lanes_log2) - 1)) * kPieceElements;
  const std::int64_t warps_per_block = kBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const auto* weights = static_cast<const Storage*>(p.weights);
  const auto batch_size = static_cast<std::uint32_t>(p.batch_size);  // F*B < 2^32 (host check)

  // The loop bound is warp-uniform: every lane reaches the shuffles below.
  for (std::int64_t warp_global = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id();
       p.bag_begin + warp_global * teams_per_warp < p.num_bags; warp_global += total_warps) {
    const std::int64_t bag = p.bag_begin + warp_global * teams_per_warp + team;
    int start = 0;
    int length = 0;
    int row_stride = 0;  // 0: no piece of a row here, or no bag: nothing loaded or stored
    int feature = 0;
    const Storage* table_piece = weights;
    if (bag < p.num_bags) {
      feature = static_cast<int>(static_cast<std::uint32_t>(bag) / batch_size);
      start = static_cast<int>(p.offsets[bag]);
      const auto end = static_cast<int>(p.offsets[bag + 1]);
      length = end > start ? end - start : 0;  // a decreasing pair reads as empty
      const int table_dim = static_cast<int>(p.layout.feature_dim[feature]);
      row_stride = piece_element < table_dim ? static_cast<int>(p.layout.feature_row_stride[feature]) : 0;
      table_piece = weights + p.layout.feature_weights_offset[feature] + piece_element;
    }
    float4 acc[kPieceVecs];
#pragma unroll
    for (int v = 0; v < kPieceVecs; ++v) acc[v] = make_float4(0.f, 0.f, 0.f, 0.f);

    for (int j = part; j < length; j += kRowsPerPass * parts) {
      Piece rows[kRowsPerPass];  // every load issued before any conversion
      float row_weight[kRowsPerPass];
#pragma unroll
      for (int u = 0; u < kRowsPerPass; ++u) {
        const int q = j + u * parts;  // < length + kRowsPerPass * parts: no overflow (N < 2^31)
        const bool live = q < length;
        const auto position = static_cast<std::uint32_t>(start) + static_cast<std::uint32_t>(q);
        const std::int64_t index = live ? static_cast<std::int64_t>(p.indices[position]) : 0;
        row_weight[u] = !live ? 0.0f : (p.per_sample_weights != nullptr ? p.per_sample_weights[position] : 1.0f);
        rows[u] = live && row_stride > 0 ? *reinterpret_cast<const Piece*>(table_piece + index * row_stride)
                                  : zero_narrow_piece<Tag, kPieceVecs>();
      }
#pragma unroll
      for (int u = 0; u < kRowsPerPass; ++u) add_narrow_piece<Tag, kPieceVecs>(acc, row_weight[u], rows[u]);
    }

    for (int mask = 1 << row_lanes_log2; mask < (1 << team_lanes_log2); mask <<= 1) {
#pragma unroll
      for (int v = 0; v < kPieceVecs; ++v) {
        acc[v].x += shfl_xor(acc[v].x, mask);
        acc[v].y += shfl_xor(acc[v].y, mask);
        acc[v].z += shfl_xor(acc[v].z, mask);
        acc[v].w += shfl_xor(acc[v].w, mask);
      }
    }

    if (part == 0 && row_stride > 0) {
      const std::int64_t b = bag - static_cast<std::int64_t>(feature) * p.batch_size;
      const std::int64_t out_element = b * p.output_cols + p.layout.feature_out_col[feature] + piece_element;
      const float scale = (p.pooling == Pool::kMean && length > 0) ? 1.0f / static_cast<float>(length) : 1.0f;
      store_scaled_piece<kPieceVecs>(p.output, out_element, p.out_kind, scale, acc,
                                     static_cast<int>(p.layout.feature_dim[feature]) - piece_element);
    }
  }
}

}  // namespace parity::gpu_device
