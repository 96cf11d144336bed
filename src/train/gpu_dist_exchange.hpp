// The pooled-embedding all-to-alls of the GPU distributed step (internal), as index maths plus a
// runner, so the layouts are testable on the CPU. Exchange units are the model's features; feature
// f lives on rank feature_owner[f]. Buffers (elements of the exchanged dtype, row-major):
//   owned  [G][P_me]  the pooled rows of this rank's features (ascending) for the global batch G,
//                     ranks' rows in rank order (rank r's rows start at row_begin[r]);
//   local  [L_me][P]  this rank's rows, feature f at the spec's column offset (the TBE layout);
//   staging [sum over owners o of L_me·P_o]  what arrives from (forward) or leaves for (backward)
//                     each owner o, one block [L_me][P_o] per owner in rank order.
// Forward: all_to_allv(owned -> staging) needs no packing (rank r's rows are one contiguous block
// of owned), then strided column copies staging -> local. Backward: the transpose (local ->
// staging copies, all_to_allv(staging -> owned)). With one rank the owned buffer *is* the local
// one and nothing is exchanged or copied (is_identity()).
#pragma once

#include <cstdint>
#include <vector>

#include "parity/comm/communicator.hpp"
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::train::detail {

/// A run of columns copied between an owner's staging block and the local buffer (elements).
struct ColumnRun {
  std::int64_t owner_column = 0;  // within the owner's block, [0, P_o)
  std::int64_t local_column = 0;  // within the local row, [0, P)
  std::int64_t width = 0;
};

struct PooledExchangePlan {
  int rank = 0;
  int num_ranks = 1;
  std::vector<std::int64_t> rank_rows;   // L_r
  std::vector<std::int64_t> row_begin;   // first global row of rank r (R + 1 entries)
  std::vector<std::int64_t> owner_width; // P_o
  std::vector<std::int64_t> owner_block; // element offset of owner o's block in staging (R + 1)
  std::vector<std::vector<ColumnRun>> owner_runs;  // per owner: its columns, adjacent ones merged
  std::int64_t local_width = 0;          // P
  comm::AllToAllvLayout forward;         // owned -> staging
  comm::AllToAllvLayout backward;        // staging -> owned

  std::int64_t global_rows() const { return row_begin.back(); }
  std::int64_t local_rows() const { return rank_rows[static_cast<std::size_t>(rank)]; }
  std::int64_t owned_width() const { return owner_width[static_cast<std::size_t>(rank)]; }
  std::int64_t staging_elements() const { return owner_block.back(); }
  /// One rank owning every feature: owned and local are the same buffer, nothing moves.
  bool is_identity() const { return num_ranks == 1; }
};

/// feature_dims[f]: D_f; feature_owner[f] in [0, R); rank_rows: every rank's row count (>= 0).
Result<PooledExchangePlan> make_pooled_exchange_plan(const std::vector<std::int64_t>& feature_dims,
                                                     const std::vector<int>& feature_owner,
                                                     const std::vector<std::int64_t>& rank_rows, int rank);

enum class ExchangeDirection : std::uint8_t { kOwnedToLocal, kLocalToOwned };

/// Rows x row_bytes between pitched buffers on `device` (device hooks' copy_2d on a GPU, memcpy
/// rows on the CPU); asynchronous on `stream` on a GPU.
Status copy_rows_2d(DeviceKind device, void* dst, std::int64_t dst_pitch_bytes, const void* src,
                    std::int64_t src_pitch_bytes, std::int64_t row_bytes, std::int64_t rows, void* stream);

/// The staging <-> local column copies of one direction (kOwnedToLocal: staging -> local).
Status copy_staging_columns(const PooledExchangePlan& plan, ExchangeDirection direction, DType dtype,
                            DeviceKind device, void* staging, void* local, void* stream);

/// The whole exchange on `comm` (buffers of its kind): kOwnedToLocal is the forward
/// (owned -> staging -> local), kLocalToOwned its backward. Identity plans must not get here.
Status run_pooled_exchange(comm::Communicator& comm, const PooledExchangePlan& plan, ExchangeDirection direction,
                           DType dtype, DeviceKind device, void* owned, void* staging, void* local, void* stream);

}  // namespace parity::train::detail
