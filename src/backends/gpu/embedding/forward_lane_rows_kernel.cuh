// TBE forward, lane rows (candidate ForwardKernel::kLaneRows): narrow rows (at most 128 bytes of
// 16-byte pieces), a lane owns whole rows.
//
// Purpose: on D=16/32 16-bit rows (32-64 bytes) one-hot or short bags, the tiles and narrow-rows
// kernels spend a group of lanes on each row, each lane one 16-byte piece, and a warp has a few
// dozen rows in flight at most. Here a warp takes a tile of kBagsPerLane x kWarpSize bags; lane l
// owns bags l, l + W, l + 2W, ... of the tile (their offsets load coalesced across the warp), and
// at each position step loads the next row of each of its bags whole (kRowPieces 16-byte loads
// each), so a warp has kBagsPerLane x kWarpSize rows in flight per step. Each lane sizes its loads
// to its own bag's row (mixed dims in one launch; no per-width-class launches). A lane writes its
// bag's output row whole (full 32-byte sectors).
// Per bag the rows are added in position order in fp32 (w * row), then scaled by 1/L for mean
// pooling: the same order as the other forward kernels. Pooling none is not handled here.
// Limits: rows of at most kRowPieces 16-byte pieces on 16-byte boundaries; N < 2^31 and F*B < 2^32
// (the narrow-rows rule and the launch's checks, on the host).
#pragma once

#include "backends/gpu/embedding/forward_tile_kernel.cuh"

namespace parity::gpu_device {

template <typename Tag, typename IndexT, int kPieceVecs, int kRowPieces, int kBagsPerLane, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kForwardBlockThreads, kMinBlocksPerSm)
    tbe_forward_lane_rows_kernel(ForwardParams<IndexT> p) {
  using Storage = typename Tag::Storage;
  using Piece = NarrowPiece<Tag, kPieceVecs>;
  constexpr int kPieceElements = 4 * kPieceVecs;
  constexpr std::int64_t kTileBags = std::int64_t{kBagsPerLane} * kWarpSize;
  const int lane = lane_id();
  const std::int64_t warps_per_block = kForwardBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const auto* weights = static_cast<const Storage*>(p.weights);
  const auto batch_size = static_cast<std::uint32_t>(p.batch_size);

  for (std::int64_t tile = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id();
       tile * kTileBags < p.num_bags; tile += total_warps) {
    // This lane's bags: offsets (coalesced), row table, dim, output element.
    bool live[kBagsPerLane];
    std::uint32_t start[kBagsPerLane];
    int length[kBagsPerLane];
    int dim[kBagsPerLane], row_stride[kBagsPerLane];
    const Storage* table[kBagsPerLane];
    std::int64_t out[kBagsPerLane];
    int max_length = 0;
#pragma unroll
    for (int j = 0; j < kBagsPerLane; ++j) {
      const std::int64_t bag = tile * kTileBags + j * kWarpSize + lane;
      live[j] = bag < p.num_bags;
      const auto first = live[j] ? static_cast<std::int64_t>(p.offsets[bag]) : 0;
      const auto last = live[j] ? static_cast<std::int64_t>(p.offsets[bag + 1]) : 0;
      start[j] = static_cast<std::uint32_t>(first);
      length[j] = last > first ? static_cast<int>(last - first) : 0;  // a decreasing pair reads as empty
      max_length = max_length > length[j] ? max_length : length[j];
      dim[j] = 0;
      row_stride[j] = 0;
      table[j] = weights;
      out[j] = 0;
      if (live[j]) {
        const auto f = static_cast<int>(static_cast<std::uint32_t>(bag) / batch_size);
        const auto b = static_cast<std::int64_t>(static_cast<std::uint32_t>(bag) -
                                                 static_cast<std::uint32_t>(f) * batch_size);
        dim[j] = static_cast<int>(p.layout.feature_dim[f]);
        row_stride[j] = static_cast<int>(p.layout.feature_row_stride[f]);
        table[j] = weights + p.layout.feature_weights_offset[f];
        out[j] = b * p.output_cols + p.layout.feature_out_col[f];
      }
    }
    float4 acc[kBagsPerLane][kRowPieces][kPieceVecs];
#pragma unroll
    for (int j = 0; j < kBagsPerLane; ++j) {
#pragma unroll
      for (int k = 0; k < kRowPieces; ++k) {
#pragma unroll
        for (int v = 0; v < kPieceVecs; ++v) acc[j][k][v] = make_float4(0.f, 0.f, 0.f, 0.f);
      }
    }
    // One position step: every bag's next row loaded whole before any is added.
    for (int step = 0; step < max_length; ++step) {
      Piece rows[kBagsPerLane][kRowPieces];
      float row_weight[kBagsPerLane];
#pragma unroll
      for (int j = 0; j < kBagsPerLane; ++j) {
        const bool has_row = step < length[j];
        const std::uint32_t position = start[j] + static_cast<std::uint32_t>(step);
        const Storage* row =
            has_row ? table[j] + static_cast<std::int64_t>(p.indices[position]) * row_stride[j] : nullptr;
        row_weight[j] = !has_row ? 0.0f : (p.per_sample_weights != nullptr ? p.per_sample_weights[position] : 1.0f);
#pragma unroll
        for (int k = 0; k < kRowPieces; ++k) {
          const int element = k * kPieceElements;
          rows[j][k] = (row != nullptr && element < dim[j]) ? *reinterpret_cast<const Piece*>(row + element)
                                                            : zero_narrow_piece<Tag, kPieceVecs>();
        }
      }
#pragma unroll
      for (int j = 0; j < kBagsPerLane; ++j) {
#pragma unroll
        for (int k = 0; k < kRowPieces; ++k) add_narrow_piece<Tag, kPieceVecs>(acc[j][k], row_weight[j], rows[j][k]);
      }
    }
#pragma unroll
    for (int j = 0; j < kBagsPerLane; ++j) {
      if (!live[j]) continue;
      const float scale =
          (p.pooling == Pool::kMean && length[j] > 0) ? 1.0f / static_cast<float>(length[j]) : 1.0f;
#pragma unroll
      for (int k = 0; k < kRowPieces; ++k) {
        const int element = k * kPieceElements;
        if (element < dim[j]) store_scaled_piece<kPieceVecs, true>(p.output, out[j] + element, p.out_kind, scale, acc[j][k], dim[j] - element);
      }
    }
  }
}

}  // namespace parity::gpu_device
