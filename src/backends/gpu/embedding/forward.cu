// Host launch of the TBE forward: group per bag (power-of-two or fitted groups, kernels.cuh),
// narrow rows (forward_narrow_kernel.cuh) or a narrow-row candidate (forward_candidates_launch.cuh),
// and the selection rule (select_forward_kernel). Every kernel picks its lane mapping from the
// widest table, so one launch serves mixed dims.
#include <algorithm>
#include <cstdint>

#include "backends/gpu/embedding/forward_candidates_launch.cuh"

namespace parity::embedding::gpu {
namespace {

using namespace parity::gpu_device;

// Every row of every table starts on a 16-byte boundary of a 16-byte aligned buffer: each
// table's offset and each row's length in bytes are multiples of 16.
bool layout_rows_16_byte_aligned(const TbeProblem& problem) {
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  for (int t = 0; t < problem.layout.num_tables(); ++t) {
    if ((problem.layout.weights_offset(t) * element_bytes) % 16 != 0) return false;
    if ((static_cast<std::int64_t>(problem.layout.tables()[t].dim) * element_bytes) % 16 != 0) return false;
  }
  return true;
}

// ... and the weights pointer itself is 16-byte aligned.
bool rows_16_byte_aligned(const TbeProblem& problem, const void* weights) {
  return reinterpret_cast<std::uintptr_t>(weights) % 16 == 0 && layout_rows_16_byte_aligned(problem);
}

bool is_narrow_row_candidate(ForwardKernel kernel) {
  return kernel == ForwardKernel::kNarrowRowsDeep || kernel == ForwardKernel::kNarrowRowsLight ||
         kernel == ForwardKernel::kWarpTileOneHot || kernel == ForwardKernel::kWarpTileOneHotPrefetch ||
         kernel == ForwardKernel::kWarpTileShortBags || kernel == ForwardKernel::kWarpTileShortBagsPrefetch ||
         kernel == ForwardKernel::kWarpTileShortBagsLight;
}

// Candidates dispatched by dispatch_forward_candidate_kernels (16-byte units: 16-bit rows aligned).
bool is_forward_candidate(ForwardKernel kernel) {
  return is_narrow_row_candidate(kernel) || kernel == ForwardKernel::kGroupPerBagDedup;
}

template <typename IndexT>
Status forward_typed(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const void* weights,
                     const DeviceBatch& batch, void* output, ForwardKernel kernel, gpuStream_t stream) {
  PARITY_ASSIGN_OR_RETURN(const int sm_count, current_sm_count());
  ForwardParams<IndexT> params{};
  params.layout = make_layout_view(device_layout, problem.layout);
  params.weights = weights;
  params.indices = static_cast<const IndexT*>(batch.indices);
  params.offsets = static_cast<const IndexT*>(batch.offsets);
  params.per_sample_weights = problem.has_per_sample_weights ? batch.per_sample_weights : nullptr;
  params.output = output;
  params.out_kind = problem.output_dtype == DType::kF16    ? OutKind::kF16
                    : problem.output_dtype == DType::kBF16 ? OutKind::kBF16
                                                            : OutKind::kF32;
  params.pooling = static_cast<Pool>(static_cast<int>(problem.pooling));
  params.batch_size = problem.batch_size;
  params.num_bags = problem.num_bags();
  params.num_indices = problem.num_indices;
  params.output_cols = problem.output_cols();
  const int max_dim = problem.layout.max_dim();
  const bool aligned = rows_16_byte_aligned(problem, weights);
  if (is_forward_candidate(kernel)) {
    if (!aligned) {
      return unsupported("tbe_forward candidates: 16-bit rows must start on 16-byte boundaries");
    }
    switch (problem.weight_dtype) {
      case DType::kF16: return dispatch_forward_candidate_kernels<F16Tag, IndexT>(params, max_dim, kernel, sm_count, stream);
      case DType::kBF16: return dispatch_forward_candidate_kernels<BF16Tag, IndexT>(params, max_dim, kernel, sm_count, stream);
      default: return dispatch_forward_candidate_kernels<F32Tag, IndexT>(params, max_dim, kernel, sm_count, stream);
    }
  }
  // kernel: already resolved by tbe_forward (never kAuto here).
  const FittedGroups fitted = fitted_groups_for(max_dim, dtype_size_bytes(problem.weight_dtype), aligned);
  if (kernel == ForwardKernel::kFittedGroups && fitted.group_lanes == 0) {
    return unsupported("tbe_forward fitted groups: max_dim=", max_dim, " of ", dtype_name(problem.weight_dtype),
                       " is not 3 or 5 x 4, 8 or 16 units of 16 bytes (or 16-bit rows are off 16-byte boundaries)");
  }
  if (kernel == ForwardKernel::kFittedGroups) {
    switch (problem.weight_dtype) {
      case DType::kF16: return dispatch_forward_fitted_kernels<F16Tag, IndexT>(params, fitted, sm_count, stream);
      case DType::kBF16: return dispatch_forward_fitted_kernels<BF16Tag, IndexT>(params, fitted, sm_count, stream);
      default: return dispatch_forward_fitted_kernels<F32Tag, IndexT>(params, fitted, sm_count, stream);
    }
  }
  if (kernel == ForwardKernel::kNarrowRows) {
    switch (problem.weight_dtype) {
      case DType::kF16: return dispatch_forward_narrow_kernels<F16Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
      case DType::kBF16: return dispatch_forward_narrow_kernels<BF16Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
      default: return dispatch_forward_narrow_kernels<F32Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
    }
  }
  switch (problem.weight_dtype) {
    case DType::kF16: return dispatch_forward_kernels<F16Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
    case DType::kBF16: return dispatch_forward_kernels<BF16Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
    default: return dispatch_forward_kernels<F32Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
  }
}

}  // namespace

Status narrow_rows_forward_fits(const TbeProblem& problem) {
  PARITY_RETURN_IF_ERROR(narrow_rows_backward_fits(problem));  // the row-bytes rule
  if (problem.pooling == PoolingMode::kNone) {
    return unsupported("narrow rows: pooling=none writes one output row per index; needs sum or mean");
  }
  if (problem.num_bags() >= (std::int64_t{1} << 32)) {
    return unsupported("narrow rows: num_bags=", problem.num_bags(), " needs < 2^32 (bags are divided in 32 bits)");
  }
  if (problem.num_indices >= (std::int64_t{1} << 31)) {
    return unsupported("narrow rows: num_indices=", problem.num_indices, " needs < 2^31 (positions are 32-bit)");
  }
  return Status::ok();
}

Status fitted_groups_forward_fits(const TbeProblem& problem) {
  const int max_dim = problem.layout.max_dim();
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  if (fitted_groups_for(max_dim, element_bytes, layout_rows_16_byte_aligned(problem)).group_lanes == 0) {
    return unsupported("fitted groups: max_dim=", max_dim, " of ", dtype_name(problem.weight_dtype),
                       " is not 3 or 5 x 4, 8 or 16 units of 16 bytes (or 16-bit rows are off 16-byte boundaries)");
  }
  return Status::ok();
}

Status short_bags_forward_fits(const TbeProblem& problem) {
  PARITY_RETURN_IF_ERROR(narrow_rows_forward_fits(problem));
  if (problem.num_indices > kShortBagMeanIndices * problem.num_bags()) {
    return unsupported("short bags: num_indices=", problem.num_indices, " is above ", kShortBagMeanIndices,
                       " per bag on average (", problem.num_bags(), " bags)");
  }
  if (dtype_size_bytes(problem.weight_dtype) < 4 && !layout_rows_16_byte_aligned(problem)) {
    return unsupported("short bags: 16-bit rows must start on 16-byte boundaries");
  }
  return Status::ok();
}

ForwardKernel select_warp_tile_kernel(const TbeProblem& problem) {
  return problem.num_indices <= problem.num_bags() ? ForwardKernel::kWarpTileOneHot
                                                   : ForwardKernel::kWarpTileShortBagsLight;
}

ForwardKernel select_forward_kernel(const TbeProblem& problem) {
  if (short_bags_forward_fits(problem).is_ok()) return select_warp_tile_kernel(problem);
  if (narrow_rows_forward_fits(problem).is_ok()) return ForwardKernel::kNarrowRows;
  if (fitted_groups_forward_fits(problem).is_ok()) return ForwardKernel::kFittedGroups;
  return ForwardKernel::kGroupPerBag;
}

Status tbe_forward(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const void* weights,
                   const DeviceBatch& batch, void* output, StreamHandle stream) {
  return tbe_forward(problem, device_layout, weights, batch, output, ForwardOptions{}, stream);
}

Status tbe_forward(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const void* weights,
                   const DeviceBatch& batch, void* output, const ForwardOptions& options, StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("tbe_forward"));
  PARITY_RETURN_IF_ERROR(check_device_layout(device_layout, problem.layout, "tbe_forward"));
  if (problem.num_bags() == 0) return Status::ok();
  PARITY_CHECK_ARG(batch.offsets != nullptr, "tbe_forward: offsets is null");
  PARITY_CHECK_ARG(output != nullptr, "tbe_forward: output is null");
  PARITY_CHECK_ARG(problem.num_indices == 0 || (batch.indices != nullptr && weights != nullptr),
                   "tbe_forward: indices or weights is null with num_indices=", problem.num_indices);
  PARITY_CHECK_ARG(!problem.has_per_sample_weights || problem.num_indices == 0 || batch.per_sample_weights != nullptr,
                   "tbe_forward: has_per_sample_weights is set but per_sample_weights is null");
  // Rows are read as 16-byte (fp32) or 8-byte (16-bit) vectors.
  const auto alignment = static_cast<std::uintptr_t>(4 * dtype_size_bytes(problem.weight_dtype));
  PARITY_CHECK_ARG(reinterpret_cast<std::uintptr_t>(weights) % alignment == 0, "tbe_forward: weights pointer is not ",
                   alignment, "-byte aligned");
  ForwardKernel kernel = options.kernel;
  if (kernel == ForwardKernel::kAuto) {
    kernel = select_forward_kernel(problem);
    // 16-bit weights behind a pointer off 16-byte boundaries: the fitted groups' 16-byte loads
    // do not apply; the power-of-two groups give the same sums.
    if (kernel == ForwardKernel::kFittedGroups && !rows_16_byte_aligned(problem, weights)) {
      kernel = ForwardKernel::kGroupPerBag;
    }
    // The same for the warp tiles' 16-bit rows: narrow rows gives the same sums.
    if ((kernel == ForwardKernel::kWarpTileOneHot || kernel == ForwardKernel::kWarpTileShortBagsLight) &&
        dtype_size_bytes(problem.weight_dtype) < 4 && !rows_16_byte_aligned(problem, weights)) {
      kernel = ForwardKernel::kNarrowRows;
    }
  }
  if (kernel == ForwardKernel::kNarrowRows || is_narrow_row_candidate(kernel)) {
    PARITY_RETURN_IF_ERROR(narrow_rows_forward_fits(problem).with_context("tbe_forward"));
  }
  if (kernel == ForwardKernel::kGroupPerBagDedup && problem.pooling == PoolingMode::kNone) {
    return unsupported("tbe_forward dedup: pooling=none writes one output row per index; needs sum or mean");
  }
  auto s = static_cast<gpuStream_t>(stream);
  if (problem.index_dtype == DType::kI32) {
    return forward_typed<std::int32_t>(problem, device_layout, weights, batch, output, kernel, s);
  }
  return forward_typed<std::int64_t>(problem, device_layout, weights, batch, output, kernel, s);
}

}  // namespace parity::embedding::gpu
