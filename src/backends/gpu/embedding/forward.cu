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

// Table t's offset and its row length (dim) or, with `by_stride`, its row stride in bytes are
// multiples of 16.
bool table_16_byte_multiples(const TbeProblem& problem, int t, bool by_stride) {
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  const int row_elements = by_stride ? problem.layout.row_stride(t) : problem.layout.tables()[t].dim;
  return (problem.layout.weights_offset(t) * element_bytes) % 16 == 0 &&
         (static_cast<std::int64_t>(row_elements) * element_bytes) % 16 == 0;
}

bool every_table_16_byte_multiples(const TbeProblem& problem, bool by_stride) {
  for (int t = 0; t < problem.layout.num_tables(); ++t) {
    if (!table_16_byte_multiples(problem, t, by_stride)) return false;
  }
  return true;
}

// Every row of every table starts on a 16-byte boundary of a 16-byte aligned buffer: each
// table's offset and each row's length in bytes are multiples of 16.
bool layout_rows_16_byte_aligned(const TbeProblem& problem) { return every_table_16_byte_multiples(problem, false); }

// ... and the weights pointer itself is 16-byte aligned.
bool rows_16_byte_aligned(const TbeProblem& problem, const void* weights) {
  return reinterpret_cast<std::uintptr_t>(weights) % 16 == 0 && layout_rows_16_byte_aligned(problem);
}

// Every row can be read as whole 16-byte pieces: each table's offset and row stride in bytes are
// multiples of 16, so a row off 16-byte boundaries in a padded layout (D=28 bf16 at a 32-element
// stride) ends its last piece in its own padding. The warp tiles read such rows so and store only
// the row's vectors: one 16-byte load a piece instead of two 8-byte ones (run 77: fp16 D=156 L=8
// 212 -> 149 us, D=44 L=4 158 -> 138 us against the packed rows' 8-byte pieces).
bool layout_rows_16_byte_pieces(const TbeProblem& problem) { return every_table_16_byte_multiples(problem, true); }

bool rows_16_byte_pieces(const TbeProblem& problem, const void* weights) {
  return reinterpret_cast<std::uintptr_t>(weights) % 16 == 0 && layout_rows_16_byte_pieces(problem);
}

bool is_warp_tile(ForwardKernel kernel) {
  return kernel == ForwardKernel::kWarpTileOneHot || kernel == ForwardKernel::kWarpTileOneHotEightPasses ||
         kernel == ForwardKernel::kWarpTileOneHotPrefetch ||
         kernel == ForwardKernel::kWarpTileShortBags || kernel == ForwardKernel::kWarpTileShortBagsPrefetch ||
         kernel == ForwardKernel::kWarpTileShortBagsLight;
}

bool is_narrow_row_candidate(ForwardKernel kernel) {
  return kernel == ForwardKernel::kNarrowRowsDeep || kernel == ForwardKernel::kNarrowRowsLight ||
         kernel == ForwardKernel::kLaneRows || is_warp_tile(kernel);
}

// Table t's rows start on 16-byte boundaries (its offset and row length in bytes are multiples of
// 16; the weights pointer is checked beside).
bool table_rows_16_byte_aligned(const TbeProblem& problem, int t) { return table_16_byte_multiples(problem, t, false); }

// A feature's row-width class for the group-per-bag launches: its row's fitted split where one
// applies, else the power-of-two group its row needs (log2 of its vecs, at least a quarter warp),
// and whether its 16-bit rows can be read as 16-byte pairs. Features of one class share a launch
// mapping; a narrower class in a wider class's launch leaves lanes idle (D=64 fp16 in a D=512
// fp16 launch: 7 of 8 pair slots).
int feature_width_class(const TbeProblem& problem, int feature, bool pointer_aligned) {
  const int t = problem.layout.table_of_feature()[feature];
  const int dim = problem.layout.tables()[t].dim;
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  const bool aligned = pointer_aligned && table_rows_16_byte_aligned(problem, t);
  const FittedGroups fitted = fitted_groups_for(dim, element_bytes, aligned);
  if (fitted.group_lanes != 0) return 1000 + 10 * fitted.group_lanes + fitted.units_per_lane;
  int log2_vecs = 0;
  while ((1 << log2_vecs) < std::max(dim / 4, kWarpSize / 4)) ++log2_vecs;
  return log2_vecs + (aligned && element_bytes < 4 ? 100 : 0);
}

// The group-per-bag kernels (power-of-two or fitted groups), one launch per contiguous run of
// features of one width class, each sized to its own widest row and alignment. Bags are
// feature-major, so a run is the bag range [first * B, end * B). The runs' mean bag length is
// taken as the batch's (the short-bag choice inside a launch).
template <typename Tag, typename IndexT>
Status forward_width_runs(const TbeProblem& problem, const ForwardParams<IndexT>& params, bool pointer_aligned,
                          int sm_count, gpuStream_t stream) {
  const int num_features = problem.layout.num_features();
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  int first = 0;
  while (first < num_features) {
    const int width_class = feature_width_class(problem, first, pointer_aligned);
    int end = first;
    int max_dim = 0;
    bool aligned = pointer_aligned;
    while (end < num_features && feature_width_class(problem, end, pointer_aligned) == width_class) {
      const int t = problem.layout.table_of_feature()[end];
      max_dim = std::max(max_dim, problem.layout.tables()[t].dim);
      aligned = aligned && table_rows_16_byte_aligned(problem, t);
      ++end;
    }
    ForwardParams<IndexT> run = params;
    run.bag_begin = static_cast<std::int64_t>(first) * problem.batch_size;
    run.num_bags = static_cast<std::int64_t>(end) * problem.batch_size;
    run.num_indices = static_cast<std::int64_t>(static_cast<double>(problem.num_indices) *
                                                static_cast<double>(end - first) / num_features);
    const FittedGroups fitted = fitted_groups_for(max_dim, element_bytes, aligned);
    const Status launched = fitted.group_lanes != 0
                                ? dispatch_forward_fitted_kernels<Tag, IndexT>(run, fitted, sm_count, stream)
                                : dispatch_forward_kernels<Tag, IndexT>(run, max_dim, aligned, sm_count, stream);
    PARITY_RETURN_IF_ERROR(launched);
    first = end;
  }
  return Status::ok();
}

// More than one width class among the features: the runs pay (one launch would be sized to the widest).
bool has_several_width_classes(const TbeProblem& problem, bool pointer_aligned) {
  for (int f = 1; f < problem.layout.num_features(); ++f) {
    if (feature_width_class(problem, f, pointer_aligned) != feature_width_class(problem, 0, pointer_aligned)) return true;
  }
  return false;
}

// Candidates dispatched by dispatch_forward_candidate_kernels (16-byte units; 8-byte for the one-hot
// and light short-bag tiles on 16-bit rows off 16-byte boundaries).
bool is_forward_candidate(ForwardKernel kernel) {
  return is_narrow_row_candidate(kernel) || kernel == ForwardKernel::kGroupPerBagDedup ||
         kernel == ForwardKernel::kWarpTileOneHotWideRows;
}

template <typename IndexT>
Status forward_typed(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const void* weights,
                     const DeviceBatch& batch, void* output, ForwardKernel kernel, bool sample_major_tiles,
                     gpuStream_t stream) {
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
  params.sample_major_tiles = sample_major_tiles ? 1 : 0;
  const int max_dim = problem.layout.max_dim();
  const bool aligned = rows_16_byte_aligned(problem, weights);
  if (is_forward_candidate(kernel)) {
    // The warp tiles mask their stores per vector, so they take 16-byte pieces wherever the
    // layout's strides allow; the other candidates need rows of whole pieces.
    const bool tile_aligned = is_warp_tile(kernel) || kernel == ForwardKernel::kWarpTileOneHotWideRows
                                  ? rows_16_byte_pieces(problem, weights)
                                  : aligned;
    switch (problem.weight_dtype) {
      case DType::kF16:
        return dispatch_forward_candidate_kernels<F16Tag, IndexT>(params, max_dim, kernel, tile_aligned, sm_count, stream);
      case DType::kBF16:
        return dispatch_forward_candidate_kernels<BF16Tag, IndexT>(params, max_dim, kernel, tile_aligned, sm_count, stream);
      default: return dispatch_forward_candidate_kernels<F32Tag, IndexT>(params, max_dim, kernel, tile_aligned, sm_count, stream);
    }
  }
  // kernel: already resolved by tbe_forward (never kAuto here).
  const FittedGroups fitted = fitted_groups_for(max_dim, dtype_size_bytes(problem.weight_dtype), aligned);
  if (kernel == ForwardKernel::kFittedGroups && fitted.group_lanes == 0) {
    return unsupported("tbe_forward fitted groups: max_dim=", max_dim, " of ", dtype_name(problem.weight_dtype),
                       " is not 3 or 5 x 4, 8 or 16 units of 16 bytes (or 16-bit rows are off 16-byte boundaries)");
  }
  const bool pointer_aligned = reinterpret_cast<std::uintptr_t>(weights) % 16 == 0;
  if ((kernel == ForwardKernel::kGroupPerBag || kernel == ForwardKernel::kFittedGroups) &&
      problem.pooling != PoolingMode::kNone && has_several_width_classes(problem, pointer_aligned)) {
    switch (problem.weight_dtype) {
      case DType::kF16: return forward_width_runs<F16Tag, IndexT>(problem, params, pointer_aligned, sm_count, stream);
      case DType::kBF16: return forward_width_runs<BF16Tag, IndexT>(problem, params, pointer_aligned, sm_count, stream);
      default: return forward_width_runs<F32Tag, IndexT>(problem, params, pointer_aligned, sm_count, stream);
    }
  }
  if (kernel == ForwardKernel::kFittedGroups) {
    switch (problem.weight_dtype) {
      case DType::kF16: return dispatch_forward_fitted_kernels<F16Tag, IndexT>(params, fitted, sm_count, stream);
      case DType::kBF16: return dispatch_forward_fitted_kernels<BF16Tag, IndexT>(params, fitted, sm_count, stream);
      default: return dispatch_forward_fitted_kernels<F32Tag, IndexT>(params, fitted, sm_count, stream);
    }
  }
  // The narrow rows mask their stores per vector too: 16-byte pieces wherever the strides allow.
  const bool pieces = rows_16_byte_pieces(problem, weights);
  if (kernel == ForwardKernel::kNarrowRowsSplitBags) {
    switch (problem.weight_dtype) {
      case DType::kF16: return dispatch_forward_split_bags_kernels<F16Tag, IndexT>(params, max_dim, pieces, sm_count, stream);
      case DType::kBF16: return dispatch_forward_split_bags_kernels<BF16Tag, IndexT>(params, max_dim, pieces, sm_count, stream);
      default: return dispatch_forward_split_bags_kernels<F32Tag, IndexT>(params, max_dim, pieces, sm_count, stream);
    }
  }
  if (kernel == ForwardKernel::kNarrowRows) {
    switch (problem.weight_dtype) {
      case DType::kF16: return dispatch_forward_narrow_kernels<F16Tag, IndexT>(params, max_dim, pieces, sm_count, stream);
      case DType::kBF16: return dispatch_forward_narrow_kernels<BF16Tag, IndexT>(params, max_dim, pieces, sm_count, stream);
      default: return dispatch_forward_narrow_kernels<F32Tag, IndexT>(params, max_dim, pieces, sm_count, stream);
    }
  }
  switch (problem.weight_dtype) {
    case DType::kF16: return dispatch_forward_kernels<F16Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
    case DType::kBF16: return dispatch_forward_kernels<BF16Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
    default: return dispatch_forward_kernels<F32Tag, IndexT>(params, max_dim, aligned, sm_count, stream);
  }
}

}  // namespace

namespace {
// The narrow-rows and warp-tile rules past the row bytes: pooling and 32-bit bag and position maths.
Status pooled_32_bit_fits(const TbeProblem& problem, const char* rule) {
  if (problem.pooling == PoolingMode::kNone) {
    return unsupported(rule, ": pooling=none writes one output row per index; needs sum or mean");
  }
  if (problem.num_bags() >= (std::int64_t{1} << 32)) {
    return unsupported(rule, ": num_bags=", problem.num_bags(), " needs < 2^32 (bags are divided in 32 bits)");
  }
  if (problem.num_indices >= (std::int64_t{1} << 31)) {
    return unsupported(rule, ": num_indices=", problem.num_indices, " needs < 2^31 (positions are 32-bit)");
  }
  return Status::ok();
}
}  // namespace

Status warp_tile_forward_fits(const TbeProblem& problem) {
  const std::int64_t row_bytes =
      static_cast<std::int64_t>(problem.layout.max_dim()) * dtype_size_bytes(problem.weight_dtype);
  if (row_bytes > kWarpTileMaxBytes) {
    return unsupported("warp tiles: widest row ", row_bytes, " bytes (max_dim=", problem.layout.max_dim(), " of ",
                       dtype_name(problem.weight_dtype), "); needs <= ", kWarpTileMaxBytes);
  }
  return pooled_32_bit_fits(problem, "warp tiles");
}

namespace {
// The wide one-hot tiles' rule: pooled, 32-bit bag and position maths, and the widest row within
// four 16-byte pieces per lane (the launch checks the pieces again with the rows' alignment).
Status wide_one_hot_tiles_fit(const TbeProblem& problem) {
  const std::int64_t row_bytes =
      static_cast<std::int64_t>(problem.layout.max_dim()) * dtype_size_bytes(problem.weight_dtype);
  if (row_bytes > kWarpTileWideMaxBytes) {
    return unsupported("wide one-hot tiles: widest row ", row_bytes, " bytes (max_dim=", problem.layout.max_dim(),
                       " of ", dtype_name(problem.weight_dtype), "); needs <= ", kWarpTileWideMaxBytes);
  }
  return pooled_32_bit_fits(problem, "wide one-hot tiles");
}
}  // namespace

namespace {
// Every feature's output columns (and the output row) start and end on 32-byte sectors.
bool output_sectors_whole(const TbeProblem& problem) {
  constexpr std::int64_t kSectorBytes = 32;
  const auto out_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.output_dtype));
  if ((problem.output_cols() * out_bytes) % kSectorBytes != 0) return false;
  for (int f = 0; f < problem.layout.num_features(); ++f) {
    if ((problem.layout.output_column_offset(f) * out_bytes) % kSectorBytes != 0) return false;
    if ((static_cast<std::int64_t>(problem.layout.feature_dim(f)) * out_bytes) % kSectorBytes != 0) return false;
  }
  return true;
}
}  // namespace

namespace {
// The first feature whose dim differs from feature 0's; -1 where every feature has one dim.
int first_feature_of_another_dim(const TbeLayout& layout) {
  for (int f = 1; f < layout.num_features(); ++f) {
    if (layout.feature_dim(f) != layout.feature_dim(0)) return f;
  }
  return -1;
}
}  // namespace

bool sample_major_tiles_pay(const TbeProblem& problem) {
  if (problem.layout.num_features() < 2 || first_feature_of_another_dim(problem.layout) >= 0) return false;
  // On whole sectors only one-hot batches gained (run 77: one-hot D=32 bf16 0.91x the time; short
  // bags of fp32 D=32 rows, D4, 1.17x).
  return !output_sectors_whole(problem) || problem.num_indices <= problem.num_bags();
}

Status narrow_rows_forward_fits(const TbeProblem& problem) {
  PARITY_RETURN_IF_ERROR(narrow_rows_backward_fits(problem));  // the row-bytes rule
  return pooled_32_bit_fits(problem, "narrow rows");
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
  PARITY_RETURN_IF_ERROR(warp_tile_forward_fits(problem));
  if (problem.num_indices > kShortBagMeanIndices * problem.num_bags()) {
    return unsupported("short bags: num_indices=", problem.num_indices, " is above ", kShortBagMeanIndices,
                       " per bag on average (", problem.num_bags(), " bags)");
  }
  return Status::ok();
}

namespace {
// 16-bit rows off 16-byte boundaries are read as 8-byte pieces: four per lane cover half the
// wide tiles' reach.
Status wide_tiles_reach_off_boundary(const TbeProblem& problem, const char* rule) {
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  const std::int64_t row_bytes = static_cast<std::int64_t>(problem.layout.max_dim()) * element_bytes;
  if (element_bytes < 4 && !layout_rows_16_byte_pieces(problem) && row_bytes > kWarpTileWideMaxBytes / 2) {
    return unsupported(rule, ": widest row ", row_bytes, " bytes of 16-bit rows off 16-byte boundaries; needs <= ",
                       kWarpTileWideMaxBytes / 2);
  }
  return Status::ok();
}
}  // namespace

Status wide_one_hot_forward_fits(const TbeProblem& problem) {
  PARITY_RETURN_IF_ERROR(wide_one_hot_tiles_fit(problem));
  if (problem.num_indices > problem.num_bags()) {
    return unsupported("wide one-hot tiles: num_indices=", problem.num_indices, " is above one per bag (",
                       problem.num_bags(), " bags)");
  }
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  const std::int64_t row_bytes = static_cast<std::int64_t>(problem.layout.max_dim()) * element_bytes;
  if (row_bytes <= kNarrowRowMaxBytes) {
    return unsupported("wide one-hot tiles: widest row ", row_bytes, " bytes is narrow (<= ", kNarrowRowMaxBytes,
                       "); the one-hot tiles take it");
  }
  return wide_tiles_reach_off_boundary(problem, "wide one-hot tiles");
}

namespace {
// The wide tiles' reach for rows past kNarrowRowMaxBytes (narrow rows have their own kernels).
Status wide_tiles_fit_past_narrow(const TbeProblem& problem, const char* rule) {
  PARITY_RETURN_IF_ERROR(wide_one_hot_tiles_fit(problem));
  const auto element_bytes = static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  const std::int64_t row_bytes = static_cast<std::int64_t>(problem.layout.max_dim()) * element_bytes;
  if (row_bytes <= kNarrowRowMaxBytes) {
    return unsupported(rule, ": widest row ", row_bytes, " bytes is narrow (<= ", kNarrowRowMaxBytes,
                       "); the narrow-row kernels take it");
  }
  return Status::ok();
}
}  // namespace

Status mixed_wide_short_bags_forward_fits(const TbeProblem& problem) {
  PARITY_RETURN_IF_ERROR(wide_tiles_fit_past_narrow(problem, "mixed-width short bags"));
  if (first_feature_of_another_dim(problem.layout) < 0) {
    return unsupported("mixed-width short bags: every feature has dim ", problem.layout.feature_dim(0));
  }
  if (problem.num_bags() < kMixedWideShortBagsMinBags) {
    return unsupported("mixed-width short bags: ", problem.num_bags(), " bags; needs >= ", kMixedWideShortBagsMinBags);
  }
  if (problem.num_indices > kMixedWideShortBagsMeanIndices * problem.num_bags()) {
    return unsupported("mixed-width short bags: num_indices=", problem.num_indices, " is above ",
                       kMixedWideShortBagsMeanIndices, " per bag on average (", problem.num_bags(), " bags)");
  }
  return wide_tiles_reach_off_boundary(problem, "mixed-width short bags");
}

namespace {
// The short-bags rule, and more than kFp32ShortBagsMinMeanIndices indices per bag on average: the
// light short-bag tiles' four rows in flight per lane no longer cover a bag in one pass.
Status short_bags_past_one_light_pass(const TbeProblem& problem, const char* rule) {
  PARITY_RETURN_IF_ERROR(short_bags_forward_fits(problem));
  if (problem.num_indices <= kFp32ShortBagsMinMeanIndices * problem.num_bags()) {
    return unsupported(rule, ": num_indices=", problem.num_indices, " is at most ", kFp32ShortBagsMinMeanIndices,
                       " per bag on average (", problem.num_bags(), " bags); the light short-bag tiles read that in one pass");
  }
  return Status::ok();
}
}  // namespace

Status fp32_short_bags_forward_fits(const TbeProblem& problem) {
  if (problem.weight_dtype != DType::kF32) {
    return unsupported("fp32 short bags: weights are ", dtype_name(problem.weight_dtype), ", not fp32");
  }
  PARITY_RETURN_IF_ERROR(short_bags_past_one_light_pass(problem, "fp32 short bags"));
  return wide_one_hot_tiles_fit(problem);
}

Status mixed_16_bit_short_bags_forward_fits(const TbeProblem& problem) {
  const char* rule = "mixed 16-bit short bags";
  if (problem.weight_dtype == DType::kF32) return unsupported(rule, ": weights are fp32 (the fp32 short-bags rule)");
  if (first_feature_of_another_dim(problem.layout) < 0) {
    return unsupported(rule, ": every feature has dim ", problem.layout.feature_dim(0));
  }
  PARITY_RETURN_IF_ERROR(short_bags_past_one_light_pass(problem, rule));
  return wide_tiles_fit_past_narrow(problem, rule);
}

Status many_bags_forward_fits(const TbeProblem& problem) {
  PARITY_RETURN_IF_ERROR(wide_tiles_fit_past_narrow(problem, "many bags"));
  if (fitted_groups_forward_fits(problem).is_ok()) {
    return unsupported("many bags: max_dim=", problem.layout.max_dim(), " fits the fitted groups, which take it");
  }
  if (problem.max_bag_length_hint < 1 || problem.max_bag_length_hint > kManyBagsMaxBagLength) {
    return unsupported("many bags: max_bag_length_hint=", problem.max_bag_length_hint, "; needs a known bound in [1, ",
                       kManyBagsMaxBagLength, "] (the tiles walk a bag's tail serially)");
  }
  const bool short_bound = problem.max_bag_length_hint <= kManyShortBagsMaxBagLength;
  const std::int64_t min_bags = short_bound ? kManyShortBagsMinBags : kManyBagsMinBags;
  if (problem.num_bags() < min_bags) {
    return unsupported("many bags: ", problem.num_bags(), " bags of at most ", problem.max_bag_length_hint,
                       " rows; needs >= ", min_bags, short_bound ? "" : " (bags past 16 rows)");
  }
  return wide_tiles_reach_off_boundary(problem, "many bags");
}

Status one_hot_16_bit_tiles_forward_fits(const TbeProblem& problem) {
  const char* rule = "one-hot 16-bit tiles";
  if (problem.weight_dtype == DType::kF32 || problem.output_dtype == DType::kF32) {
    return unsupported(rule, ": weights ", dtype_name(problem.weight_dtype), ", output ",
                       dtype_name(problem.output_dtype), "; needs 16-bit both");
  }
  if (problem.num_indices > problem.num_bags()) {
    return unsupported(rule, ": num_indices=", problem.num_indices, " is above one per bag (", problem.num_bags(),
                       " bags)");
  }
  const int dim = problem.layout.feature_dim(0);
  if (const int other = first_feature_of_another_dim(problem.layout); other >= 0) {
    return unsupported(rule, ": features of dims ", dim, " and ", problem.layout.feature_dim(other));
  }
  const std::int64_t row_bytes = static_cast<std::int64_t>(dim) * dtype_size_bytes(problem.weight_dtype);
  if (row_bytes <= kNarrowRowMaxBytes || row_bytes > kWarpTileMaxBytes) {
    return unsupported(rule, ": row ", row_bytes, " bytes (dim=", dim, "); needs ", kNarrowRowMaxBytes + 1, "-",
                       kWarpTileMaxBytes);
  }
  if (!layout_rows_16_byte_pieces(problem)) {
    return unsupported(rule, ": rows of ", row_bytes, " bytes off 16-byte boundaries (a table offset or row stride)");
  }
  return pooled_32_bit_fits(problem, rule);
}

ForwardKernel select_warp_tile_kernel(const TbeProblem& problem) {
  if (mixed_wide_short_bags_forward_fits(problem).is_ok()) return ForwardKernel::kWarpTileOneHotWideRows;
  if (one_hot_16_bit_tiles_forward_fits(problem).is_ok()) return ForwardKernel::kWarpTileOneHot;
  if (many_bags_forward_fits(problem).is_ok()) return ForwardKernel::kWarpTileOneHotWideRows;
  if (wide_one_hot_forward_fits(problem).is_ok()) return ForwardKernel::kWarpTileOneHotWideRows;
  if (fp32_short_bags_forward_fits(problem).is_ok()) return ForwardKernel::kWarpTileOneHotWideRows;
  if (mixed_16_bit_short_bags_forward_fits(problem).is_ok()) return ForwardKernel::kWarpTileOneHotWideRows;
  return problem.num_indices <= problem.num_bags() ? ForwardKernel::kWarpTileOneHot
                                                   : ForwardKernel::kWarpTileShortBagsLight;
}

int narrow_rows_split_parts(const TbeProblem& problem, int sm_count) {
  if (!narrow_rows_forward_fits(problem).is_ok()) return 1;
  // The piece width as the launch takes it for a 16-byte aligned weights pointer (every DeviceBuffer).
  const int piece_vecs = problem.weight_dtype != DType::kF32 && layout_rows_16_byte_pieces(problem) ? 2 : 1;
  const int row_lanes_log2 = detail::narrow_row_lanes_log2(problem.layout.max_dim(), piece_vecs);
  return detail::split_bag_parts(problem.num_bags(), problem.num_indices, row_lanes_log2, sm_count);
}

ForwardKernel select_forward_kernel(const TbeProblem& problem) {
  if (mixed_wide_short_bags_forward_fits(problem).is_ok() || wide_one_hot_forward_fits(problem).is_ok() ||
      short_bags_forward_fits(problem).is_ok() || many_bags_forward_fits(problem).is_ok()) {
    return select_warp_tile_kernel(problem);
  }
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
    // The warp tiles kAuto selects (one-hot, light short bags) read 16-bit rows off 16-byte
    // boundaries as two 8-byte pieces per lane, so they need no fallback. The wide one-hot tiles
    // read such rows as 8-byte pieces too, but only up to half their 16-byte reach.
    const std::int64_t row_bytes =
        static_cast<std::int64_t>(problem.layout.max_dim()) * dtype_size_bytes(problem.weight_dtype);
    if (kernel == ForwardKernel::kWarpTileOneHotWideRows && !rows_16_byte_pieces(problem, weights) &&
        problem.weight_dtype != DType::kF32 && row_bytes > kWarpTileWideMaxBytes / 2) {
      kernel = ForwardKernel::kGroupPerBag;
    }
    // Too few bags to fill the GPU with a group per bag: a team of groups per bag.
    if (kernel == ForwardKernel::kNarrowRows) {
      PARITY_ASSIGN_OR_RETURN(const int sm_count, current_sm_count());
      if (narrow_rows_split_parts(problem, sm_count) > 1) kernel = ForwardKernel::kNarrowRowsSplitBags;
    }
  }
  if (kernel == ForwardKernel::kWarpTileOneHotWideRows) {
    PARITY_RETURN_IF_ERROR(wide_one_hot_tiles_fit(problem).with_context("tbe_forward"));
  } else if (is_warp_tile(kernel)) {
    PARITY_RETURN_IF_ERROR(warp_tile_forward_fits(problem).with_context("tbe_forward"));
  } else if (kernel == ForwardKernel::kNarrowRows || kernel == ForwardKernel::kNarrowRowsSplitBags ||
             is_narrow_row_candidate(kernel)) {
    PARITY_RETURN_IF_ERROR(narrow_rows_forward_fits(problem).with_context("tbe_forward"));
  }
  if (kernel == ForwardKernel::kGroupPerBagDedup && problem.pooling == PoolingMode::kNone) {
    return unsupported("tbe_forward dedup: pooling=none writes one output row per index; needs sum or mean");
  }
  auto s = static_cast<gpuStream_t>(stream);
  const bool sample_major = options.tile_order == TileOrder::kSampleMajor ||
                            (options.tile_order == TileOrder::kAuto && sample_major_tiles_pay(problem));
  if (problem.index_dtype == DType::kI32) {
    return forward_typed<std::int32_t>(problem, device_layout, weights, batch, output, kernel, sample_major, s);
  }
  return forward_typed<std::int64_t>(problem, device_layout, weights, batch, output, kernel, sample_major, s);
}

}  // namespace parity::embedding::gpu
