// TBE forward, warp tiles of bags (rows of at most a warp of 16-byte pieces, or two 8-byte pieces per
// lane for 16-bit rows off 16-byte boundaries: 512 bytes on 32 lanes; the wide one-hot tiles four
// pieces per lane, up to 2 KB; one-hot and short bags); legend in kernels.cuh.
//
// Purpose: on one-hot and short bags the narrow-rows kernel spends most of a bag's time on two
// dependent round trips (offsets, then the index) before the row load, each group re-reads the
// same offsets and index per lane, and its group width follows the widest table, so a narrower
// table's rows leave lanes idle (C7: D=16 beside D=32). Here a warp takes a tile of kWarpSize bags:
//   1. lane-per-bag phase: lane l reads bag l's two offsets (coalesced: the warp's offsets are
//      contiguous; one-hot tiles read position l's index beside them, the usual one-hot layout),
//      the indices of its first kLeadRows positions (and their per-sample weights),
//      and works out its row pointers, output element, and scale (32-bit position arithmetic);
//   2. piece phase: the group width W is the tile's own widest row in 16-byte pieces rounded up to
//      a power of two (bags of a feature are contiguous, so a tile nearly always holds one
//      feature); the warp covers kWarpSize / W bags per pass in W passes, lane i of a group piece i
//      of the row (with kLanePieces = 2, pieces i and i + W: 8-byte pieces of 16-bit rows off
//      16-byte boundaries, so a lane still moves 16 bytes of each row and a 512-byte row fits). Row pointers come by shuffle from the bag's lane; kPassesInFlight passes of
//      kLeadRows rows each are loaded before any is added (one memory round trip for all);
//   3. a tile holding a bag longer than kLeadRows instead walks every bag from position 0 in
//      position order, a few passes at a time with kTailRows rows each per step, the group's lanes
//      reading the same index (one transaction per group); its lead rows are not reused.
// Output is written with streaming stores (read by the next op, not by this one).
// Per bag the rows are added in position order in fp32 (w * row), then scaled by 1/L for mean
// pooling: the same order as the other forward kernels. Pooling none is not handled here.
// Limits: rows of at most kWarpSize x kLanePieces pieces,
// N < 2^31 and F*B < 2^32 (the narrow-rows rule and the launch's checks, on the host).
#pragma once

#include "backends/gpu/embedding/forward_narrow_kernel.cuh"

namespace parity::gpu_device {

inline constexpr int kWarpLog2 = kWarpSize == 64 ? 6 : 5;
static_assert((1 << kWarpLog2) == kWarpSize, "kWarpLog2 is log2 of the lane count");

// kLeadRows: positions whose indices the lane-per-bag phase loads (1 for one-hot).
// kPassesInFlight: passes whose lead rows are loaded together (kPassesInFlight * kLeadRows 16-byte
// loads in flight per lane). kPrefetchNext: software-pipelined tiles (see below).
// kWeightsAtAdd: a row's per-sample weight is shuffled from its bag's lane when the row is added,
// not held beside the row from its load on (kPassesInFlight * kLeadRows fewer live registers, what
// lets the prefetching short-bag tiles carry the next tile's four indices without spilling).
// Long on purpose: one kernel body whose phases share registers; split into device functions it
// would hide the data flow the tuning depends on.
// kLanePieces: pieces of each row per lane, a group's width W apart (lane i: pieces i, i + W, ...).
template <typename Tag, typename IndexT, int kPieceVecs, int kLeadRows, int kPassesInFlight, int kTailRows,
          int kMinBlocksPerSm, bool kPrefetchNext, bool kWeightsAtAdd = false, int kLanePieces = 1>
__global__ void __launch_bounds__(kForwardBlockThreads, kMinBlocksPerSm)
    tbe_forward_warp_tile_kernel(ForwardParams<IndexT> p) {
  using Storage = typename Tag::Storage;
  using Piece = NarrowPiece<Tag, kPieceVecs>;
  constexpr int kPieceElements = 4 * kPieceVecs;
  const int lane = lane_id();
  const std::int64_t warps_per_block = kForwardBlockThreads / kWarpSize;
  const std::int64_t total_warps = static_cast<std::int64_t>(gridDim.x) * warps_per_block;
  const auto* weights = static_cast<const Storage*>(p.weights);
  const auto batch_size = static_cast<std::uint32_t>(p.batch_size);

  // The bag at tile position q (tile t holds q in [32 t, 32 t + 32)): q itself (feature-major),
  // or sample q / F's feature q % F (sample-major, ForwardParams::sample_major_tiles): a bijection
  // of [0, F*B), so liveness stays q < num_bags. F*B < 2^32 (pooled_32_bit_fits).
  const auto features = static_cast<std::uint32_t>(p.layout.num_features);
  auto bag_at = [&](std::int64_t q) -> std::int64_t {
    if (p.sample_major_tiles == 0 || q >= p.num_bags) return q;
    const auto position = static_cast<std::uint32_t>(q);
    return static_cast<std::int64_t>(position % features) * p.batch_size + position / features;
  };
  // This lane's bag of tile t: its offsets, then the indices and weights of its lead positions.
  auto load_offsets = [&](std::int64_t t, int& start, int& end) {
    const std::int64_t bag = bag_at(t * kWarpSize + lane);
    start = bag < p.num_bags ? static_cast<int>(p.offsets[bag]) : 0;
    end = bag < p.num_bags ? static_cast<int>(p.offsets[bag + 1]) : 0;
  };
  auto load_lead = [&](int start, int end, std::int64_t (&index)[kLeadRows], float (&weight)[kLeadRows]) {
#pragma unroll
    for (int u = 0; u < kLeadRows; ++u) {
      const bool live = u < end - start;  // a decreasing pair reads as empty
      const auto position = static_cast<std::uint32_t>(start) + static_cast<std::uint32_t>(u);
      index[u] = live ? static_cast<std::int64_t>(p.indices[position]) : 0;
      weight[u] = !live ? 0.0f : (p.per_sample_weights != nullptr ? p.per_sample_weights[position] : 1.0f);
    }
  };
  // kPrefetchNext: the next tile's offsets load while this tile's rows do, and its lead indices
  // as soon as this tile's row loads are issued, so a tile waits on about one round trip (its
  // rows), not three (offsets, indices, rows).
  const std::int64_t first_tile = static_cast<std::int64_t>(blockIdx.x) * warps_per_block + warp_id();
  int next_start = 0, next_end = 0;
  std::int64_t next_index[kLeadRows] = {};
  float next_weight[kLeadRows] = {};
  if constexpr (kPrefetchNext) {
    load_offsets(first_tile, next_start, next_end);
    load_lead(next_start, next_end, next_index, next_weight);
  }

  for (std::int64_t tile = first_tile; tile * kWarpSize < p.num_bags; tile += total_warps) {
    // ---- 1. lane-per-bag: this lane's bag ----
    int start = 0, end = 0;
    std::int64_t index[kLeadRows];
    float weight[kLeadRows];
    if constexpr (kPrefetchNext) {
      start = next_start;
      end = next_end;
#pragma unroll
      for (int u = 0; u < kLeadRows; ++u) {
        index[u] = next_index[u];
        weight[u] = next_weight[u];
      }
      load_offsets(tile + total_warps, next_start, next_end);
    } else if constexpr (kLeadRows == 1) {
      // One-hot batches hold bag b's only index at position b: read it beside the offsets (one
      // dependent round trip fewer); a bag that starts elsewhere loads its own.
      const std::int64_t bag = bag_at(tile * kWarpSize + lane);
      const bool guess_live = bag < p.num_indices;
      const std::int64_t guess_index = guess_live ? static_cast<std::int64_t>(p.indices[bag]) : 0;
      const float guess_weight =
          guess_live && p.per_sample_weights != nullptr ? p.per_sample_weights[bag] : 1.0f;
      load_offsets(tile, start, end);
      if (start == bag && end > start) {
        index[0] = guess_index;
        weight[0] = guess_weight;
      } else {
        load_lead(start, end, index, weight);
      }
    } else {
      load_offsets(tile, start, end);
      load_lead(start, end, index, weight);
    }
    const std::int64_t my_bag = bag_at(tile * kWarpSize + lane);
    const int my_start = start;
    const int my_length = end > start ? end - start : 0;
    int my_dim = 0, my_row_stride = 0;
    const Storage* my_table = weights;
    std::int64_t my_out = 0;
    if (my_bag < p.num_bags) {
      const auto f = static_cast<int>(static_cast<std::uint32_t>(my_bag) / batch_size);
      const auto b = static_cast<std::int64_t>(static_cast<std::uint32_t>(my_bag) -
                                               static_cast<std::uint32_t>(f) * batch_size);
      my_dim = static_cast<int>(p.layout.feature_dim[f]);
      my_row_stride = static_cast<int>(p.layout.feature_row_stride[f]);
      my_table = weights + p.layout.feature_weights_offset[f];
      my_out = b * p.output_cols + p.layout.feature_out_col[f];
    }
    const Storage* my_rows[kLeadRows];
    float my_weight[kLeadRows];
#pragma unroll
    for (int u = 0; u < kLeadRows; ++u) {
      my_weight[u] = weight[u];
      my_rows[u] = u < my_length ? my_table + index[u] * my_row_stride : nullptr;
    }
    const bool tile_has_tail = warp_reduce_max(my_length) > kLeadRows;  // warp-uniform
    // The tile's group width: its widest row's pieces over kLanePieces, rounded up to a power of
    // two (warp-uniform).
    const int tile_pieces = (warp_reduce_max(my_dim) + kPieceElements - 1) / kPieceElements;
    int row_lanes_log2 = 0;
    while ((1 << row_lanes_log2) * kLanePieces < tile_pieces) ++row_lanes_log2;
    const int passes = 1 << row_lanes_log2;  // passes x (kWarpSize / passes) bags = the tile
    const int piece_element = (lane & (passes - 1)) * kPieceElements;
    const int lane_piece_stride = passes * kPieceElements;  // elements between a lane's pieces
    // The bag (a lane of the tile) this lane's group works on in pass q.
    auto source_lane = [&](int q) { return (q << (kWarpLog2 - row_lanes_log2)) + (lane >> row_lanes_log2); };

    if (!tile_has_tail) {
      // ---- 2. piece phase: kPassesInFlight passes of lead rows loaded at once ----
      for (int pass0 = 0; pass0 < passes; pass0 += kPassesInFlight) {
        Piece rows[kPassesInFlight][kLeadRows][kLanePieces];
        float row_weight[kWeightsAtAdd ? 1 : kPassesInFlight][kWeightsAtAdd ? 1 : kLeadRows];
#pragma unroll
        for (int q = 0; q < kPassesInFlight; ++q) {
          const bool pass_live = pass0 + q < passes;  // fewer passes than in flight: narrow tiles
          const int src = source_lane(pass_live ? pass0 + q : 0);
          const int dim = shfl(my_dim, src);
#pragma unroll
          for (int u = 0; u < kLeadRows; ++u) {
            const auto row =
                reinterpret_cast<const Storage*>(shfl(reinterpret_cast<unsigned long long>(my_rows[u]), src));
            if constexpr (!kWeightsAtAdd) row_weight[q][u] = shfl(my_weight[u], src);
#pragma unroll
            for (int k = 0; k < kLanePieces; ++k) {
              const int element = piece_element + k * lane_piece_stride;
              rows[q][u][k] = (pass_live && row != nullptr && element < dim)
                                  ? *reinterpret_cast<const Piece*>(row + element)
                                  : zero_narrow_piece<Tag, kPieceVecs>();
            }
          }
        }
        if constexpr (kPrefetchNext) {
          if (pass0 == 0) load_lead(next_start, next_end, next_index, next_weight);
        }
#pragma unroll
        for (int q = 0; q < kPassesInFlight; ++q) {
          const bool pass_live = pass0 + q < passes;
          const int src = source_lane(pass_live ? pass0 + q : 0);
          const int dim = shfl(my_dim, src);
          const int length = shfl(my_length, src);
          const std::int64_t out = shfl(my_out, src);
          float4 acc[kLanePieces][kPieceVecs];
#pragma unroll
          for (int k = 0; k < kLanePieces; ++k) {
#pragma unroll
            for (int v = 0; v < kPieceVecs; ++v) acc[k][v] = make_float4(0.f, 0.f, 0.f, 0.f);
          }
#pragma unroll
          for (int u = 0; u < kLeadRows; ++u) {
            float w;
            if constexpr (kWeightsAtAdd) {
              w = shfl(my_weight[u], src);
            } else {
              w = row_weight[q][u];
            }
#pragma unroll
            for (int k = 0; k < kLanePieces; ++k) add_narrow_piece<Tag, kPieceVecs>(acc[k], w, rows[q][u][k]);
          }
          if (pass_live && tile * kWarpSize + src < p.num_bags) {
            const float scale = (p.pooling == Pool::kMean && length > 0) ? 1.0f / static_cast<float>(length) : 1.0f;
#pragma unroll
            for (int k = 0; k < kLanePieces; ++k) {
              const int element = piece_element + k * lane_piece_stride;
              if (element < dim) store_scaled_piece<kPieceVecs, true>(p.output, out + element, p.out_kind, scale, acc[k], dim - element);
            }
          }
        }
      }
      continue;
    }

    // ---- 3. a tile with a bag longer than kLeadRows: kTailPasses passes at a time walk their
    // bags from position 0, kTailRows rows each per step (the group's lanes read the same index) ----
    // One pass at a time in one-hot tiles (their registers go to the fast path's eight passes).
    constexpr int kTailPasses = kLeadRows == 1 ? 1 : (8 / kTailRows > 0 ? 8 / kTailRows : 1);
    if constexpr (kPrefetchNext) load_lead(next_start, next_end, next_index, next_weight);
    for (int pass0 = 0; pass0 < passes; pass0 += kTailPasses) {
      int dim[kTailPasses], row_stride[kTailPasses], length[kTailPasses], start[kTailPasses];
      const Storage* table[kTailPasses];
      float4 acc[kTailPasses][kLanePieces][kPieceVecs];
      int steps = 0;
#pragma unroll
      for (int q = 0; q < kTailPasses; ++q) {
        const bool pass_live = pass0 + q < passes;
        const int src = source_lane(pass_live ? pass0 + q : 0);
        dim[q] = shfl(my_dim, src);
        row_stride[q] = shfl(my_row_stride, src);
        length[q] = pass_live ? shfl(my_length, src) : 0;
        start[q] = shfl(my_start, src);
        table[q] = reinterpret_cast<const Storage*>(shfl(reinterpret_cast<unsigned long long>(my_table), src));
        steps = length[q] > steps ? length[q] : steps;
#pragma unroll
        for (int k = 0; k < kLanePieces; ++k) {
#pragma unroll
          for (int v = 0; v < kPieceVecs; ++v) acc[q][k][v] = make_float4(0.f, 0.f, 0.f, 0.f);
        }
      }
      for (int j = 0; j < steps; j += kTailRows) {  // per lane: no shuffles inside
        Piece tail[kTailPasses][kTailRows][kLanePieces];
        float tail_weight[kTailPasses][kTailRows];
#pragma unroll
        for (int q = 0; q < kTailPasses; ++q) {
#pragma unroll
          for (int u = 0; u < kTailRows; ++u) {
            const bool live = j + u < length[q];
            const auto position = static_cast<std::uint32_t>(start[q]) + static_cast<std::uint32_t>(j + u);
            const std::int64_t index = live ? static_cast<std::int64_t>(p.indices[position]) : 0;
            tail_weight[q][u] =
                !live ? 0.0f : (p.per_sample_weights != nullptr ? p.per_sample_weights[position] : 1.0f);
#pragma unroll
            for (int k = 0; k < kLanePieces; ++k) {
              const int element = piece_element + k * lane_piece_stride;
              tail[q][u][k] = live && element < dim[q]
                                  ? *reinterpret_cast<const Piece*>(table[q] + index * row_stride[q] + element)
                                  : zero_narrow_piece<Tag, kPieceVecs>();
            }
          }
        }
#pragma unroll
        for (int q = 0; q < kTailPasses; ++q) {
#pragma unroll
          for (int u = 0; u < kTailRows; ++u) {
#pragma unroll
            for (int k = 0; k < kLanePieces; ++k) {
              add_narrow_piece<Tag, kPieceVecs>(acc[q][k], tail_weight[q][u], tail[q][u][k]);
            }
          }
        }
      }
#pragma unroll
      for (int q = 0; q < kTailPasses; ++q) {
        const bool pass_live = pass0 + q < passes;
        const int src = source_lane(pass_live ? pass0 + q : 0);
        const std::int64_t out = shfl(my_out, src);
        if (pass_live && tile * kWarpSize + src < p.num_bags) {
          const float scale =
              (p.pooling == Pool::kMean && length[q] > 0) ? 1.0f / static_cast<float>(length[q]) : 1.0f;
#pragma unroll
          for (int k = 0; k < kLanePieces; ++k) {
            const int element = piece_element + k * lane_piece_stride;
            if (element < dim[q]) {
              store_scaled_piece<kPieceVecs, true>(p.output, out + element, p.out_kind, scale, acc[q][k], dim[q] - element);
            }
          }
        }
      }
    }
  }
}

}  // namespace parity::gpu_device
