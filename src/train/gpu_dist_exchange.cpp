// Pooled-embedding exchange plan and runner (see gpu_dist_exchange.hpp).
#include "train/gpu_dist_exchange.hpp"

#include <cstring>

#include "core/device_hooks.hpp"

namespace parity::train::detail {

Result<PooledExchangePlan> make_pooled_exchange_plan(const std::vector<std::int64_t>& feature_dims,
                                                     const std::vector<int>& feature_owner,
                                                     const std::vector<std::int64_t>& rank_rows, int rank) {
  const auto num_ranks = static_cast<int>(rank_rows.size());
  PARITY_CHECK_ARG(num_ranks >= 1, "rank_rows: empty (expected one entry per rank)");
  PARITY_CHECK_ARG(rank >= 0 && rank < num_ranks, "rank: ", rank, " is out of range [0, ", num_ranks, ")");
  PARITY_CHECK_ARG(feature_dims.size() == feature_owner.size(), "feature_owner: ", feature_owner.size(),
                   " entries; expected one per feature (", feature_dims.size(), ")");
  PooledExchangePlan plan;
  plan.rank = rank;
  plan.num_ranks = num_ranks;
  plan.rank_rows = rank_rows;
  plan.row_begin.assign(1, 0);
  for (int r = 0; r < num_ranks; ++r) {
    PARITY_CHECK_ARG(rank_rows[r] >= 0, "rank_rows[", r, "]: ", rank_rows[r], " is negative");
    plan.row_begin.push_back(plan.row_begin.back() + rank_rows[r]);
  }
  const auto ranks = static_cast<std::size_t>(num_ranks);
  plan.owner_width.assign(ranks, 0);
  plan.owner_runs.assign(ranks, {});
  std::int64_t local_column = 0;
  for (std::size_t f = 0; f < feature_dims.size(); ++f) {
    const int owner = feature_owner[f];
    PARITY_CHECK_ARG(owner >= 0 && owner < num_ranks, "feature_owner[", f, "]: ", owner, " is out of range [0, ",
                     num_ranks, ")");
    PARITY_CHECK_ARG(feature_dims[f] >= 1, "feature_dims[", f, "]: ", feature_dims[f], " must be >= 1");
    auto& runs = plan.owner_runs[static_cast<std::size_t>(owner)];
    auto& width = plan.owner_width[static_cast<std::size_t>(owner)];
    // Consecutive features of one owner are adjacent on both sides: one wider run.
    if (!runs.empty() && runs.back().local_column + runs.back().width == local_column) {
      runs.back().width += feature_dims[f];
    } else {
      runs.push_back({width, local_column, feature_dims[f]});
    }
    width += feature_dims[f];
    local_column += feature_dims[f];
  }
  plan.local_width = local_column;
  const std::int64_t my_rows = plan.local_rows(), my_width = plan.owned_width();
  plan.owner_block.assign(1, 0);
  for (std::size_t o = 0; o < ranks; ++o) plan.owner_block.push_back(plan.owner_block.back() + my_rows * plan.owner_width[o]);
  // Forward: rank r's rows of the owned buffer to r; owner o's block of staging from o.
  auto& forward = plan.forward;
  for (std::size_t r = 0; r < ranks; ++r) {
    forward.send_counts.push_back(rank_rows[r] * my_width);
    forward.send_displs.push_back(plan.row_begin[r] * my_width);
    forward.recv_counts.push_back(plan.owner_block[r + 1] - plan.owner_block[r]);
    forward.recv_displs.push_back(plan.owner_block[r]);
  }
  forward.send_capacity = plan.global_rows() * my_width;
  forward.recv_capacity = plan.staging_elements();
  auto& backward = plan.backward;
  backward.send_counts = forward.recv_counts;
  backward.send_displs = forward.recv_displs;
  backward.recv_counts = forward.send_counts;
  backward.recv_displs = forward.send_displs;
  backward.send_capacity = forward.recv_capacity;
  backward.recv_capacity = forward.send_capacity;
  return plan;
}

Status copy_rows_2d(DeviceKind device, void* dst, std::int64_t dst_pitch_bytes, const void* src,
                    std::int64_t src_pitch_bytes, std::int64_t row_bytes, std::int64_t rows, void* stream) {
  if (rows == 0 || row_bytes == 0) return Status::ok();
  if (device == DeviceKind::kGpu) {
    PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("pooled exchange"));
    return hooks->copy_2d(dst, dst_pitch_bytes, src, src_pitch_bytes, row_bytes, rows, stream);
  }
  for (std::int64_t row = 0; row < rows; ++row) {
    std::memcpy(static_cast<char*>(dst) + row * dst_pitch_bytes, static_cast<const char*>(src) + row * src_pitch_bytes,
                static_cast<std::size_t>(row_bytes));
  }
  return Status::ok();
}

Status copy_staging_columns(const PooledExchangePlan& plan, ExchangeDirection direction, DType dtype,
                            DeviceKind device, void* staging, void* local, void* stream) {
  const auto element = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  const std::int64_t rows = plan.local_rows();
  const std::int64_t local_pitch = plan.local_width * element;
  for (int owner = 0; owner < plan.num_ranks; ++owner) {
    const auto o = static_cast<std::size_t>(owner);
    char* block = static_cast<char*>(staging) + plan.owner_block[o] * element;
    const std::int64_t block_pitch = plan.owner_width[o] * element;
    for (const ColumnRun& run : plan.owner_runs[o]) {
      char* in_block = block + run.owner_column * element;
      char* in_local = static_cast<char*>(local) + run.local_column * element;
      const std::int64_t bytes = run.width * element;
      PARITY_RETURN_IF_ERROR(direction == ExchangeDirection::kOwnedToLocal
                                 ? copy_rows_2d(device, in_local, local_pitch, in_block, block_pitch, bytes, rows, stream)
                                 : copy_rows_2d(device, in_block, block_pitch, in_local, local_pitch, bytes, rows, stream));
    }
  }
  return Status::ok();
}

Status run_pooled_exchange(comm::Communicator& comm, const PooledExchangePlan& plan, ExchangeDirection direction,
                           DType dtype, DeviceKind device, void* owned, void* staging, void* local, void* stream) {
  if (plan.is_identity()) return internal_error("pooled exchange: a one-rank plan moves nothing; use the owned buffer");
  if (direction == ExchangeDirection::kOwnedToLocal) {
    PARITY_RETURN_IF_ERROR(comm.all_to_allv(owned, staging, plan.forward, dtype, stream));
    return copy_staging_columns(plan, direction, dtype, device, staging, local, stream);
  }
  PARITY_RETURN_IF_ERROR(copy_staging_columns(plan, direction, dtype, device, staging, local, stream));
  return comm.all_to_allv(staging, owned, plan.backward, dtype, stream);
}

}  // namespace parity::train::detail
