// Host launch of the TBE backward: linearise -> radix sort of (row, position) keys by the row bits
// -> chunk kernel (runs inside a chunk updated in place, crossing runs leave partials) -> combine
// kernel (one block per crossing run, pieces added in chunk order). See kernels.cuh.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/gpu/embedding/backward_atomic_kernel.cuh"
#include "backends/gpu/embedding/backward_chunk.cuh"
#include "backends/gpu/embedding/linearize_tiles_kernel.cuh"
#include "backends/gpu/sort/radix_sort.hpp"
#if defined(PARITY_GPU_CUDA)
#include "backends/cuda/sort/vendor_radix_sort.hpp"
#endif

namespace parity::embedding::gpu {
namespace {

using namespace parity::gpu_device;

struct BackwardPlan {
  bool key_holds_bag = false;
  int low_bits = 1;  // bag bits (key_holds_bag) or position bits below the row in a sort key
  int row_bits = 1;  // holds total_rows itself (the sentinel row)
  std::int64_t chunk_positions = 0;  // embedding::tbe_backward_chunk_positions
  std::int64_t num_chunks = 0;
  std::int64_t keys_a = 0, keys_b = 0, bag_of = 0, sort_scratch = 0, sort_scratch_bytes = 0, slot_grads = 0,
               slot_rows = 0, slot_starts = 0, total_bytes = 0;
};

int bits_to_hold(std::int64_t value) {
  int bits = 1;
  while (bits < 63 && (std::int64_t{1} << bits) <= value) ++bits;
  return bits;
}

BackwardChunkLength chunk_length(const BackwardOptions& options) {
  if (!options.short_chunks) return BackwardChunkLength::kLong;
  return options.small_batch_short_chunks ? BackwardChunkLength::kShort : BackwardChunkLength::kShortPerIndexPartials;
}

// The scratch of the sort the options name: the portable one's tile counts or the vendor's own.
Result<std::int64_t> sort_scratch_bytes(std::int64_t count, int begin_bit, int end_bit, const BackwardOptions& options) {
  if (!options.vendor_sort) return gpu_sort::radix_sort_scratch_bytes(count, options.sort_counts_in_scatter);
#if defined(PARITY_GPU_CUDA)
  return gpu_sort::vendor_radix_sort_scratch_bytes(count, begin_bit, end_bit);
#else
  (void)begin_bit;
  (void)end_bit;
  return unsupported("tbe_backward: vendor_sort=true; the vendor radix sort is built only for CUDA (CUB)");
#endif
}

Result<BackwardPlan> plan_backward(const TbeProblem& problem, BackwardChunkLength chunk_length,
                                   const BackwardOptions& options) {
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("tbe_backward"));
  const std::int64_t n = problem.num_indices;
  PARITY_CHECK_ARG(n < (std::int64_t{1} << 32), "tbe_backward: num_indices=", n, "; expected < 2^32 on the GPU");
  PARITY_CHECK_ARG(problem.num_bags() < (std::int64_t{1} << 32), "tbe_backward: num_bags=", problem.num_bags(),
                   "; expected < 2^32 on the GPU");
  BackwardPlan plan;
  // A grad row is found from the bag alone unless each position has its own weight or output
  // row: then the key carries the bag (no 4-byte bag lookup per position, no bag array).
  plan.key_holds_bag = !problem.has_per_sample_weights && problem.pooling != PoolingMode::kNone;
  plan.low_bits = plan.key_holds_bag ? bits_to_hold(problem.num_bags() > 0 ? problem.num_bags() - 1 : 0)
                                     : bits_to_hold(n > 0 ? n - 1 : 0);
  plan.row_bits = bits_to_hold(problem.layout.total_rows());
  if (plan.low_bits + plan.row_bits > 64) {
    return unsupported("tbe_backward: a global row (", plan.row_bits, " bits) and a ",
                       plan.key_holds_bag ? "bag (" : "position (", plan.low_bits,
                       " bits) do not fit one 64-bit sort key");
  }
  const int max_dim = problem.layout.max_dim();
  plan.chunk_positions = tbe_backward_chunk_positions(n, max_dim, chunk_length);
  plan.num_chunks = ceil_div(n, plan.chunk_positions);
  auto align = [](std::int64_t bytes) { return (bytes + 255) / 256 * 256; };
  std::int64_t at = 0;
  plan.keys_a = at;
  at += align(8 * n);
  plan.keys_b = at;
  at += align(8 * n);
  plan.bag_of = at;
  if (!plan.key_holds_bag) at += align(4 * n);
  plan.sort_scratch = at;
  PARITY_ASSIGN_OR_RETURN(const std::int64_t scratch_bytes,
                          sort_scratch_bytes(n, plan.low_bits, plan.low_bits + plan.row_bits, options));
  plan.sort_scratch_bytes = scratch_bytes;
  at += align(scratch_bytes);
  plan.slot_grads = at;
  at += align(plan.num_chunks * 2 * max_dim * 4);
  plan.slot_rows = at;
  at += align(plan.num_chunks * 2 * 8);
  plan.slot_starts = at;
  at += align(plan.num_chunks * 2 * 8);
  plan.total_bytes = at;
  return plan;
}

struct UpdateArgs {
  Update update = Update::kDenseGrad;
  const OptimizerParams* optimizer = nullptr;
  TrainingState state;
  std::int64_t* dense_rows = nullptr;
  float* dense_grads = nullptr;
};

// The batch's part of the parameters, shared by the sorted and the atomic paths.
template <typename IndexT>
BackwardParams<IndexT> batch_params(const TbeProblem& problem, const DeviceTbeLayout& device_layout,
                                    const DeviceBatch& batch, const float* grad_output) {
  BackwardParams<IndexT> p{};
  p.layout = make_layout_view(device_layout, problem.layout);
  p.indices = static_cast<const IndexT*>(batch.indices);
  p.offsets = static_cast<const IndexT*>(batch.offsets);
  p.per_sample_weights = problem.has_per_sample_weights ? batch.per_sample_weights : nullptr;
  p.grad_output = grad_output;
  p.batch_size = problem.batch_size;
  p.num_bags = problem.num_bags();
  p.num_indices = problem.num_indices;
  p.output_cols = problem.output_cols();
  p.pooling = static_cast<Pool>(static_cast<int>(problem.pooling));
  p.max_dim = problem.layout.max_dim();
  return p;
}

// The keys in position order, by bag (tbe_linearize_kernel) or, counting the sort's first digit
// per tile on the way, by sort tile (tbe_linearize_tiles_kernel). kGroupLanes lanes per bag: the
// power of two >= the mean bag length, at most kLinearizeMaxGroupLanes.
template <typename IndexT>
Status launch_linearize(const BackwardParams<IndexT>& p, std::uint64_t* keys, const gpu_sort::RadixFirstPass& first,
                        bool count_first_digit, std::int64_t grid_cap, gpuStream_t stream) {
  auto launch = [&](auto group_lanes) {
    constexpr int kGroupLanes = decltype(group_lanes)::value;
    if (count_first_digit) {
      const auto blocks = static_cast<unsigned>(first.num_tiles);
      if (first.tile_keys == kRadixSmallTileItems) {
        tbe_linearize_tiles_kernel<IndexT, kRadixSmallItemsPerThread, kGroupLanes>
            <<<blocks, kLinearizeBlockThreads, 0, stream>>>(p, keys, first.digit_bits, first.num_tiles, first.tile_counts);
      } else {
        tbe_linearize_tiles_kernel<IndexT, kRadixItemsPerThread, kGroupLanes>
            <<<blocks, kLinearizeBlockThreads, 0, stream>>>(p, keys, first.digit_bits, first.num_tiles, first.tile_counts);
      }
      PARITY_GPU_CHECK_LAUNCH(tbe_linearize_tiles_kernel);
      return Status::ok();
    }
    constexpr int kGroupsPerBlock = kLinearizeBlockThreads / kGroupLanes;
    const std::int64_t blocks = std::min(ceil_div(p.num_bags, kGroupsPerBlock), grid_cap);
    tbe_linearize_kernel<IndexT, kGroupLanes><<<static_cast<unsigned>(blocks), kLinearizeBlockThreads, 0, stream>>>(p, keys);
    PARITY_GPU_CHECK_LAUNCH(tbe_linearize_kernel);
    return Status::ok();
  };
  const std::int64_t mean_bag_length = ceil_div(p.num_indices, p.num_bags);
  if (mean_bag_length <= 1) return launch(std::integral_constant<int, 1>{});
  if (mean_bag_length <= 2) return launch(std::integral_constant<int, 2>{});
  if (mean_bag_length <= 4) return launch(std::integral_constant<int, 4>{});
  return launch(std::integral_constant<int, kLinearizeMaxGroupLanes>{});
}

// The keys sorted by the sort the options name (sort_scratch_bytes sized its scratch).
Result<std::uint64_t*> sort_keys(std::uint64_t* keys_a, std::uint64_t* keys_b, std::int64_t count, int begin_bit,
                                 int end_bit, void* scratch, std::int64_t scratch_bytes,
                                 const BackwardOptions& options, bool first_counts_given, gpuStream_t stream) {
  if (!options.vendor_sort) {
    return gpu_sort::radix_sort_keys(keys_a, keys_b, count, begin_bit, end_bit, scratch, stream,
                                     options.small_sort_tiles, first_counts_given, options.sort_counts_in_scatter);
  }
#if defined(PARITY_GPU_CUDA)
  return gpu_sort::vendor_radix_sort_keys(keys_a, keys_b, count, begin_bit, end_bit, scratch, scratch_bytes, stream);
#else
  (void)scratch_bytes;
  return unsupported("tbe_backward: vendor_sort=true; the vendor radix sort is built only for CUDA (CUB)");
#endif
}

template <typename IndexT>
Status backward_typed(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const BackwardPlan& plan,
                      const UpdateArgs& update, const DeviceBatch& batch, const float* grad_output, void* workspace,
                      const BackwardOptions& options, bool is_narrow, gpuStream_t stream) {
  PARITY_ASSIGN_OR_RETURN(const int sm_count, current_sm_count());
  auto* ws = static_cast<char*>(workspace);
  BackwardParams<IndexT> p = batch_params<IndexT>(problem, device_layout, batch, grad_output);
  p.low_bits = plan.low_bits;
  p.key_holds_bag = plan.key_holds_bag;
  p.sentinel_row = static_cast<std::uint64_t>(problem.layout.total_rows());
  p.bag_of_position = reinterpret_cast<std::uint32_t*>(ws + plan.bag_of);
  p.chunk_positions = plan.chunk_positions;
  p.num_chunks = plan.num_chunks;
  p.slot_grads = reinterpret_cast<float*>(ws + plan.slot_grads);
  p.slot_rows = reinterpret_cast<std::int64_t*>(ws + plan.slot_rows);
  p.slot_starts = reinterpret_cast<std::int64_t*>(ws + plan.slot_starts);
  p.update = update.update;
  p.weights = update.state.weights;
  p.state1 = update.state.state1;
  p.state2 = update.state.state2;
  p.dense_rows = update.dense_rows;
  p.dense_grads = update.dense_grads;
  p.batch_row_updates = options.batch_row_updates;
  p.prefetch_element_state = options.prefetch_element_state;
  if (update.optimizer != nullptr) {
    const OptimizerParams& o = *update.optimizer;
    p.learning_rate = o.learning_rate;
    p.eps = o.eps;
    p.weight_decay = o.weight_decay;
    p.max_norm = o.max_norm;
    p.beta1 = o.beta1;
    p.beta2 = o.beta2;
    p.bias_correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(o.beta1), static_cast<double>(o.step)));
    p.bias_correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(o.beta2), static_cast<double>(o.step)));
    p.decay = static_cast<Decay>(static_cast<int>(o.weight_decay_mode));
  }
  const std::int64_t grid_cap =
      options.max_grid_blocks > 0 ? options.max_grid_blocks : static_cast<std::int64_t>(sm_count) * 16;
  const std::int64_t chunk_grid_cap =
      options.max_grid_blocks > 0 ? options.max_grid_blocks : static_cast<std::int64_t>(sm_count) * kChunkBlocksPerSm;

  auto* keys_a = reinterpret_cast<std::uint64_t*>(ws + plan.keys_a);
  auto* keys_b = reinterpret_cast<std::uint64_t*>(ws + plan.keys_b);
  const int begin_bit = plan.low_bits;
  const int end_bit = plan.low_bits + plan.row_bits;
  const gpu_sort::RadixFirstPass first_pass =
      gpu_sort::radix_sort_first_pass(p.num_indices, begin_bit, end_bit, ws + plan.sort_scratch, options.small_sort_tiles);
  // The vendor sort counts its own digits: the keys are written by bag for it.
  const bool count_in_linearize = options.sort_histogram_in_linearize && !options.vendor_sort && p.num_indices > 1;
  PARITY_RETURN_IF_ERROR(launch_linearize(p, keys_a, first_pass, count_in_linearize, grid_cap, stream));
  PARITY_ASSIGN_OR_RETURN(const std::uint64_t* sorted,
                          sort_keys(keys_a, keys_b, p.num_indices, begin_bit, end_bit, ws + plan.sort_scratch,
                                    plan.sort_scratch_bytes, options, count_in_linearize, stream));
  p.sorted_keys = sorted;
  if (update.update == Update::kDenseGrad) {
    PARITY_GPU_TRY(gpuMemsetAsync(update.dense_rows, 0xff, sizeof(std::int64_t) * p.num_indices, stream));
  }
  switch (problem.weight_dtype) {
    case DType::kF16: return dispatch_backward_chunks<F16Tag>(p, is_narrow, chunk_grid_cap, stream);
    case DType::kBF16: return dispatch_backward_chunks<BF16Tag>(p, is_narrow, chunk_grid_cap, stream);
    default: return dispatch_backward_chunks<F32Tag>(p, is_narrow, chunk_grid_cap, stream);
  }
}

// kGroupLanes lanes per bag: the power of two >= the widest row's vecs, at most a warp.
template <typename Tag, typename IndexT>
Status launch_atomic_sgd(const BackwardParams<IndexT>& p, int sm_count, gpuStream_t stream) {
  const int vecs = p.max_dim / 4;
  auto launch = [&](auto group_lanes) {
    constexpr int kGroupLanes = decltype(group_lanes)::value;
    constexpr int kGroupsPerBlock = kAtomicSgdBlockThreads / kGroupLanes;
    // Resident blocks only (8 of 256 threads per SM); the bag loop strides over the rest.
    const std::int64_t blocks = std::min<std::int64_t>(ceil_div(p.num_bags, kGroupsPerBlock), std::int64_t{8} * sm_count);
    tbe_backward_atomic_sgd_kernel<Tag, IndexT, kGroupLanes>
        <<<static_cast<unsigned>(blocks), kAtomicSgdBlockThreads, 0, stream>>>(p);
    PARITY_GPU_CHECK_LAUNCH(tbe_backward_atomic_sgd_kernel);
    return Status::ok();
  };
  if (vecs <= 1) return launch(std::integral_constant<int, 1>{});
  if (vecs <= 2) return launch(std::integral_constant<int, 2>{});
  if (vecs <= 4) return launch(std::integral_constant<int, 4>{});
  if (vecs <= 8) return launch(std::integral_constant<int, 8>{});
  if (vecs <= 16) return launch(std::integral_constant<int, 16>{});
  return launch(std::integral_constant<int, kWarpSize>{});
}

// The atomic adds' alignment: a 16-byte vec in fp32, an 8-byte one in fp16 / bf16.
std::uintptr_t atomic_sgd_weights_alignment(DType weight_dtype) { return weight_dtype == DType::kF32 ? 16 : 8; }

// BackwardKernel::kAtomicSgd: no sort, no workspace; one launch (backward_atomic_kernel.cuh).
Status run_atomic_sgd(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const UpdateArgs& update,
                      const DeviceBatch& batch, const float* grad_output, const BackwardOptions& options,
                      StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("tbe_backward"));
  PARITY_RETURN_IF_ERROR(check_device_layout(device_layout, problem.layout, "tbe_backward"));
  if (update.update != Update::kSgd) {
    return unsupported("tbe_backward atomic sgd: applies SGD only (the plain backward and the other optimisers need "
                       "each row's summed gradient)");
  }
  PARITY_RETURN_IF_ERROR(atomic_sgd_backward_fits(problem, *update.optimizer, options).with_context("tbe_backward"));
  if (problem.num_indices == 0 || problem.num_bags() == 0) return Status::ok();
  PARITY_CHECK_ARG(batch.indices != nullptr && batch.offsets != nullptr && grad_output != nullptr,
                   "tbe_backward: indices, offsets or grad_output is null");
  PARITY_CHECK_ARG(!problem.has_per_sample_weights || batch.per_sample_weights != nullptr,
                   "tbe_backward: has_per_sample_weights is set but per_sample_weights is null");
  const std::uintptr_t alignment = atomic_sgd_weights_alignment(problem.weight_dtype);
  PARITY_CHECK_ARG(reinterpret_cast<std::uintptr_t>(update.state.weights) % alignment == 0,
                   "tbe_backward atomic sgd: weights pointer is not ", alignment, "-byte aligned");
  PARITY_ASSIGN_OR_RETURN(const int sm_count, current_sm_count());
  auto s = static_cast<gpuStream_t>(stream);
  auto launch = [&](auto index_type) {
    auto p = batch_params<decltype(index_type)>(problem, device_layout, batch, grad_output);
    p.update = Update::kSgd;
    p.weights = update.state.weights;
    p.learning_rate = update.optimizer->learning_rate;
    switch (problem.weight_dtype) {
      case DType::kF16: return launch_atomic_sgd<F16Tag>(p, sm_count, s);
      case DType::kBF16: return launch_atomic_sgd<BF16Tag>(p, sm_count, s);
      default: return launch_atomic_sgd<F32Tag>(p, sm_count, s);
    }
  };
  return problem.index_dtype == DType::kI32 ? launch(std::int32_t{}) : launch(std::int64_t{});
}

// kAuto with deterministic=false: SGD on fp32 weights needs no sort (one launch instead of
// linearise + radix passes + chunk + combine; test set 2's 00: 0.070 ms step against 0.152), so
// it takes the atomic path wherever atomic_sgd_backward_fits and the weights are 16-byte aligned.
// Not on 16-bit weights: each occurrence rounds to the row's precision, so a hot row's updates
// smaller than half an ulp of the weight vanish one by one where their fp32 sum would not; a
// caller who accepts that forces kAtomicSgd.
bool auto_takes_atomic_sgd(const TbeProblem& problem, const UpdateArgs& update, const BackwardOptions& options) {
  return options.kernel == BackwardKernel::kAuto && update.update == Update::kSgd && update.optimizer != nullptr &&
         problem.weight_dtype == DType::kF32 &&
         reinterpret_cast<std::uintptr_t>(update.state.weights) % 16 == 0 &&
         atomic_sgd_backward_fits(problem, *update.optimizer, options).is_ok();
}

Status run_backward(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const UpdateArgs& update,
                    const DeviceBatch& batch, const float* grad_output, void* workspace,
                    std::int64_t workspace_bytes, const BackwardOptions& options, StreamHandle stream) {
  if (options.kernel == BackwardKernel::kAtomicSgd || auto_takes_atomic_sgd(problem, update, options)) {
    return run_atomic_sgd(problem, device_layout, update, batch, grad_output, options, stream);
  }
  PARITY_ASSIGN_OR_RETURN(const BackwardPlan plan, plan_backward(problem, chunk_length(options), options));
  PARITY_RETURN_IF_ERROR(check_device_layout(device_layout, problem.layout, "tbe_backward"));
  if (problem.num_indices == 0 || problem.num_bags() == 0) return Status::ok();
  PARITY_CHECK_ARG(workspace != nullptr && workspace_bytes >= plan.total_bytes, "tbe_backward: workspace_bytes=",
                   workspace_bytes, "; expected >= ", plan.total_bytes, " (tbe_backward_workspace_bytes with the options)");
  PARITY_CHECK_ARG(batch.indices != nullptr && batch.offsets != nullptr && grad_output != nullptr,
                   "tbe_backward: indices, offsets or grad_output is null");
  PARITY_CHECK_ARG(!problem.has_per_sample_weights || batch.per_sample_weights != nullptr,
                   "tbe_backward: has_per_sample_weights is set but per_sample_weights is null");
  PARITY_CHECK_ARG(options.max_grid_blocks >= 0, "tbe_backward: max_grid_blocks=", options.max_grid_blocks,
                   "; expected >= 0 (0 = automatic)");
  bool is_narrow = false;
  switch (options.kernel) {
    case BackwardKernel::kAuto: is_narrow = narrow_rows_backward_fits(problem).is_ok(); break;
    case BackwardKernel::kNarrowRows:
      PARITY_RETURN_IF_ERROR(narrow_rows_backward_fits(problem).with_context("tbe_backward"));
      is_narrow = true;
      break;
    case BackwardKernel::kWarpPerChunk: break;
    case BackwardKernel::kAtomicSgd: break;  // taken above
  }
  auto s = static_cast<gpuStream_t>(stream);
  if (problem.index_dtype == DType::kI32) {
    return backward_typed<std::int32_t>(problem, device_layout, plan, update, batch, grad_output, workspace, options,
                                        is_narrow, s);
  }
  return backward_typed<std::int64_t>(problem, device_layout, plan, update, batch, grad_output, workspace, options,
                                      is_narrow, s);
}

}  // namespace

Status narrow_rows_backward_fits(const TbeProblem& problem) {
  const std::int64_t row_bytes =
      static_cast<std::int64_t>(problem.layout.max_dim()) * static_cast<std::int64_t>(dtype_size_bytes(problem.weight_dtype));
  if (row_bytes > kNarrowRowMaxBytes) {
    return unsupported("narrow rows: the widest row is ", row_bytes, " bytes (max_dim=", problem.layout.max_dim(), " ",
                       dtype_name(problem.weight_dtype), "); needs <= ", kNarrowRowMaxBytes);
  }
  return Status::ok();
}

Status atomic_sgd_backward_fits(const TbeProblem& problem, const OptimizerParams& optimizer,
                                const BackwardOptions& options) {
  if (optimizer.kind != OptimizerKind::kSgd) {
    return unsupported("atomic sgd: optimizer=", optimizer_kind_name(optimizer.kind),
                       "; needs sgd (the only update linear in the gradient)");
  }
  if (problem.pooling == PoolingMode::kNone) {
    return unsupported("atomic sgd: pooling=none; needs sum or mean (one grad_output row per bag)");
  }
  if (options.deterministic) {
    return unsupported("atomic sgd: deterministic=true; repeated rows take their adds in arrival order "
                       "(needs deterministic=false)");
  }
  return Status::ok();
}

Result<std::int64_t> tbe_backward_workspace_bytes(const TbeProblem& problem) {
  return tbe_backward_workspace_bytes(problem, BackwardOptions{});
}

Result<std::int64_t> tbe_backward_workspace_bytes(const TbeProblem& problem, const BackwardOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const BackwardPlan plan, plan_backward(problem, chunk_length(options), options));
  return plan.total_bytes;
}

Status tbe_backward_fused(const TbeProblem& problem, const DeviceTbeLayout& device_layout,
                          const OptimizerParams& optimizer, const TrainingState& state, const DeviceBatch& batch,
                          const float* grad_output, void* workspace, std::int64_t workspace_bytes,
                          const BackwardOptions& options, StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(optimizer.validate());
  PARITY_CHECK_ARG(state.weights != nullptr, "tbe_backward_fused: weights is null");
  PARITY_CHECK_ARG(optimizer.kind == OptimizerKind::kSgd || state.state1 != nullptr, "tbe_backward_fused: optimizer=",
                   optimizer_kind_name(optimizer.kind), " needs state1");
  PARITY_CHECK_ARG(optimizer.kind != OptimizerKind::kAdam || state.state2 != nullptr,
                   "tbe_backward_fused: optimizer=adam needs state2");
  UpdateArgs update;
  update.update = static_cast<Update>(static_cast<int>(optimizer.kind));
  update.optimizer = &optimizer;
  update.state = state;
  return run_backward(problem, device_layout, update, batch, grad_output, workspace, workspace_bytes, options, stream);
}

Status tbe_backward_dense(const TbeProblem& problem, const DeviceTbeLayout& device_layout, const DeviceBatch& batch,
                          const float* grad_output, std::int64_t* row_at_position, float* grads, void* workspace,
                          std::int64_t workspace_bytes, const BackwardOptions& options, StreamHandle stream) {
  PARITY_CHECK_ARG(row_at_position != nullptr && grads != nullptr, "tbe_backward_dense: null output");
  UpdateArgs update;
  update.update = Update::kDenseGrad;
  update.dense_rows = row_at_position;
  update.dense_grads = grads;
  return run_backward(problem, device_layout, update, batch, grad_output, workspace, workspace_bytes, options, stream);
}

}  // namespace parity::embedding::gpu
