// Host side of the TBE bounds check: offsets pass, (fix mode) repair, indices pass; the report is
// read from per-block slots after a sync, so error mode never needs a device assert.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backends/gpu/embedding/bounds_check_kernels.cuh"
#include "backends/gpu/embedding/launch_common.cuh"

namespace parity::embedding::gpu {
namespace {

using namespace parity::gpu_device;

constexpr int kMaxBoundsBlocks = 1024;

// Same answer for the launch and the report reader. Fix mode: `blocks` for each of its kernels.
// Error mode: one launch of offset_blocks + index_blocks, the roles sharing the blocks by weighted
// tiles, together no more than are resident at once (every block takes an equal contiguous slice,
// so there is no second wave) nor than kMaxBoundsBlocks (the workspace's slots).
struct BoundsGrid {
  int blocks = 1;         // fix mode's kernels
  int offset_blocks = 1;  // error mode's fused kernel: offsets role
  int index_blocks = 1;   //                             indices role
  int slots(BoundsCheckMode mode) const { return mode == BoundsCheckMode::kFix ? blocks : offset_blocks + index_blocks; }
};

Result<BoundsGrid> bounds_check_grid(const TbeProblem& problem) {
  PARITY_ASSIGN_OR_RETURN(const int sm_count, current_sm_count());
  int blocks_per_sm = 0;
  const gpuError_t err = gpuOccupancyMaxActiveBlocksPerMultiprocessor(
      &blocks_per_sm, bounds_check_fused_kernel<std::int64_t>, kBoundsBlockThreads,
      bounds_check_shared_bytes(problem.layout.num_features()));
  if (err != gpuSuccess) return device_error("tbe bounds check: occupancy query failed: ", gpuGetErrorString(err));
  const std::int64_t resident = std::min<std::int64_t>(
      kMaxBoundsBlocks, std::max<std::int64_t>(2, static_cast<std::int64_t>(std::max(blocks_per_sm, 1)) * sm_count));
  // At least a full tile per block: small inputs take fewer, fuller blocks instead of many whose
  // threads hold mostly predicated-off items (C4: 264 blocks with ~2 live items per thread).
  // Roles are balanced by weighted tiles, not bytes (kBoundsOffsetsTileWeight): split by bytes,
  // the offsets blocks of C2 with int32 indices finished last (18.7 -> 24.6 us).
  const std::int64_t entries = problem.num_offsets();
  const std::size_t index_bytes = problem.index_dtype == DType::kI32 ? sizeof(std::int32_t) : sizeof(std::int64_t);
  const std::int64_t offsets_tile_items = bounds_offsets_tile_items(index_bytes);
  const std::int64_t offsets_tiles = std::max<std::int64_t>(1, ceil_div(entries, offsets_tile_items));
  const std::int64_t index_tile_items = bounds_index_tile_items(index_bytes);
  const std::int64_t index_tiles = std::max<std::int64_t>(1, ceil_div(problem.num_indices, index_tile_items));
  BoundsGrid grid;
  grid.blocks = static_cast<int>(std::clamp<std::int64_t>(
      std::max(offsets_tiles, ceil_div(problem.num_indices, offsets_tile_items)), 1, resident));
  if (offsets_tiles + index_tiles <= resident) {
    grid.offset_blocks = static_cast<int>(offsets_tiles);
    grid.index_blocks = static_cast<int>(index_tiles);
  } else {
    const double offsets_work = static_cast<double>(kBoundsOffsetsTileWeight) * static_cast<double>(offsets_tiles);
    const double offsets_share = offsets_work / (offsets_work + static_cast<double>(index_tiles));
    const auto offset_blocks = std::clamp<std::int64_t>(std::llround(offsets_share * static_cast<double>(resident)), 1,
                                                        std::min(offsets_tiles, resident - 1));
    grid.offset_blocks = static_cast<int>(offset_blocks);
    grid.index_blocks = static_cast<int>(std::min(index_tiles, resident - offset_blocks));
  }
  return grid;
}

template <typename IndexT>
Status launch_bounds_check(const TbeProblem& problem, const DeviceTbeLayout& device_layout, BoundsCheckMode mode,
                           void* indices, void* offsets, BoundsSlot* slots, const BoundsGrid& grid,
                           gpuStream_t s) {
  auto* idx = static_cast<IndexT*>(indices);
  auto* off = static_cast<IndexT*>(offsets);
  const auto view = make_layout_view(device_layout, problem.layout);
  // 16-byte index loads need a 16-byte aligned array (slices start on multiples of 512 indices).
  const bool vector_loads = reinterpret_cast<std::uintptr_t>(indices) % 16 == 0;
  const std::size_t shared_bytes = bounds_check_shared_bytes(view.num_features);
  if (mode != BoundsCheckMode::kFix) {
    bounds_check_fused_kernel<IndexT><<<grid.offset_blocks + grid.index_blocks, kBoundsBlockThreads, shared_bytes, s>>>(
        idx, off, view.feature_rows, view.num_features, problem.batch_size, problem.num_bags(), problem.num_indices,
        grid.offset_blocks, vector_loads, slots);
    PARITY_GPU_CHECK_LAUNCH(bounds_check_fused_kernel);
    return Status::ok();
  }
  // Fix mode repairs the offsets before the indices are mapped to features through them.
  const int blocks = grid.blocks;
  bounds_check_offsets_kernel<IndexT><<<blocks, kBoundsBlockThreads, 0, s>>>(off, problem.num_bags(),
                                                                             problem.num_indices, slots);
  PARITY_GPU_CHECK_LAUNCH(bounds_check_offsets_kernel);
  repair_offsets_kernel<IndexT><<<1, kRepairBlockThreads, 0, s>>>(off, problem.num_bags(), problem.num_indices, slots,
                                                                   blocks);
  PARITY_GPU_CHECK_LAUNCH(repair_offsets_kernel);
  bounds_check_indices_kernel<IndexT><<<blocks, kBoundsBlockThreads, shared_bytes, s>>>(
      idx, off, view.feature_rows, view.num_features, problem.batch_size, problem.num_indices, 1, vector_loads, slots);
  PARITY_GPU_CHECK_LAUNCH(bounds_check_indices_kernel);
  return Status::ok();
}

Result<std::vector<std::int64_t>> download_as_int64(const void* device, DType dtype, std::int64_t count,
                                                    gpuStream_t s) {
  std::vector<std::int64_t> values(static_cast<std::size_t>(count));
  if (count == 0) return values;
  gpuError_t err;
  if (dtype == DType::kI32) {
    std::vector<std::int32_t> narrow(static_cast<std::size_t>(count));
    err = gpuMemcpyAsync(narrow.data(), device, sizeof(std::int32_t) * count, gpuMemcpyDeviceToHost, s);
    if (err == gpuSuccess) err = gpuStreamSynchronize(s);
    std::copy(narrow.begin(), narrow.end(), values.begin());
  } else {
    err = gpuMemcpyAsync(values.data(), device, sizeof(std::int64_t) * count, gpuMemcpyDeviceToHost, s);
    if (err == gpuSuccess) err = gpuStreamSynchronize(s);
  }
  if (err != gpuSuccess) return device_error("tbe bounds check: copy to host failed: ", gpuGetErrorString(err));
  return values;
}

}  // namespace

std::int64_t bounds_check_workspace_bytes(const TbeProblem& /*problem*/) {
  return static_cast<std::int64_t>(sizeof(BoundsSlot)) * kMaxBoundsBlocks;
}

Status bounds_check(const TbeProblem& problem, const DeviceTbeLayout& device_layout, BoundsCheckMode mode,
                    void* indices, void* offsets, void* workspace, std::int64_t workspace_bytes, StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("tbe_bounds_check"));
  PARITY_RETURN_IF_ERROR(check_device_layout(device_layout, problem.layout, "tbe_bounds_check"));
  if (mode == BoundsCheckMode::kOff) return Status::ok();
  PARITY_CHECK_ARG(offsets != nullptr, "tbe_bounds_check: offsets is null");
  PARITY_CHECK_ARG(problem.num_indices == 0 || indices != nullptr, "tbe_bounds_check: indices is null");
  PARITY_CHECK_ARG(workspace != nullptr && workspace_bytes >= bounds_check_workspace_bytes(problem),
                   "tbe_bounds_check: workspace_bytes=", workspace_bytes, "; expected >= ",
                   bounds_check_workspace_bytes(problem));
  PARITY_ASSIGN_OR_RETURN(const BoundsGrid grid, bounds_check_grid(problem));
  auto* slots = static_cast<BoundsSlot*>(workspace);
  auto s = static_cast<gpuStream_t>(stream);
  if (problem.index_dtype == DType::kI32) {
    return launch_bounds_check<std::int32_t>(problem, device_layout, mode, indices, offsets, slots, grid, s);
  }
  return launch_bounds_check<std::int64_t>(problem, device_layout, mode, indices, offsets, slots, grid, s);
}

Result<BoundsCheckReport> read_bounds_check_report(const TbeProblem& problem, BoundsCheckMode mode,
                                                   const void* indices, const void* offsets, const void* workspace,
                                                   StreamHandle stream) {
  (void)indices;
  BoundsCheckReport report;
  if (mode == BoundsCheckMode::kOff) return report;
  PARITY_ASSIGN_OR_RETURN(const BoundsGrid grid, bounds_check_grid(problem));
  const int blocks = grid.slots(mode);
  auto s = static_cast<gpuStream_t>(stream);
  std::vector<BoundsSlot> slots(static_cast<std::size_t>(blocks));
  PARITY_GPU_TRY(gpuMemcpyAsync(slots.data(), workspace, sizeof(BoundsSlot) * blocks, gpuMemcpyDeviceToHost, s));
  PARITY_GPU_TRY(gpuStreamSynchronize(s));
  std::int64_t first_index = kNoPosition, first_offset = kNoPosition;
  for (const BoundsSlot& slot : slots) {
    report.bad_indices += slot.bad_indices;
    report.bad_offsets += slot.bad_offsets;
    report.last_offset_fixed = report.last_offset_fixed || slot.last_offset_bad != 0;
    if (slot.first_bad_index_position < first_index) {
      first_index = slot.first_bad_index_position;
      report.first_bad_value = slot.first_bad_index_value;
    }
    if (slot.first_bad_offset_position < first_offset) {
      first_offset = slot.first_bad_offset_position;
      report.first_bad_offset_value = slot.first_bad_offset_value;
    }
  }
  if (first_offset != kNoPosition) {
    report.has_bad_offset = true;
    report.first_bad_offset_position = first_offset;
  }
  if (first_index != kNoPosition) {
    // Error path only: locate the bag on the host from the effective (clamped, monotone) offsets.
    PARITY_ASSIGN_OR_RETURN(auto host_offsets, download_as_int64(offsets, problem.index_dtype, problem.num_offsets(), s));
    const std::int64_t n = problem.num_indices;
    std::int64_t running = 0;
    for (std::int64_t i = 0; i + 1 < problem.num_offsets(); ++i) {
      running = std::max(running, std::clamp<std::int64_t>(host_offsets[i], 0, n));
      host_offsets[i] = running;
    }
    host_offsets.back() = n;
    // Last bag whose start <= position (empty bags before it share the same start).
    const auto it = std::upper_bound(host_offsets.begin(), host_offsets.end() - 1, first_index);
    const std::int64_t bag = static_cast<std::int64_t>(it - host_offsets.begin()) - 1;
    report.has_bad_index = true;
    report.first_bad_position = first_index;
    report.first_bad_feature = static_cast<int>(bag / problem.batch_size);
    report.first_bad_bag = bag % problem.batch_size;
    report.first_bad_table = problem.layout.table_of_feature()[report.first_bad_feature];
    report.first_bad_table_rows = problem.layout.feature_rows(report.first_bad_feature);
  }
  return report;
}

}  // namespace parity::embedding::gpu
