// `parity bench tbe` device driver (include/parity/bench/tbe_bench.hpp): buffers, the forward
// check against fp64 before timing, nine timings, the byte models, the results file and the table.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

#include "bench/results_json.hpp"
#include "core/text_format.hpp"
#include "parity/bench/copy.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/tbe_bench.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "parity/embedding/tbe_gpu.hpp"

namespace parity::bench {
namespace {

using namespace parity::embedding;
namespace eg = embedding::gpu;
using parity::gpu::DeviceBuffer;
using nlohmann::json;

constexpr int kCheckedBags = 48;

// Lowest free device memory seen: peak use = free_before - free_min.
struct MemoryWatch {
  std::size_t free_before = 0, free_min = 0, total = 0;
  Status start() {
    PARITY_RETURN_IF_ERROR(parity::gpu::memory_info(&free_before, &total));
    free_min = free_before;
    return Status::ok();
  }
  Status note() {
    std::size_t free_now = 0;
    PARITY_RETURN_IF_ERROR(parity::gpu::memory_info(&free_now, &total));
    free_min = std::min(free_min, free_now);
    return Status::ok();
  }
  double peak_bytes() const { return static_cast<double>(free_before - free_min); }
};

struct Buffers {
  eg::DeviceTbeLayout layout;
  DeviceBuffer weights, state1, state2, indices, offsets, bad, out, grad, ws, bc_ws, sink, per_sample_weights;
  std::int64_t ws_bytes = 0, bc_bytes = 0, out_elements = 0;
  bool has_state1 = false, has_state2 = false;
};

std::size_t at_least_one(std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 1)); }

// The spec's backward choices as the library's options (kernel and row batching: per timing).
eg::BackwardOptions backward_options_of(const TbeBenchSpec& spec) {
  eg::BackwardOptions options;
  options.short_chunks = spec.backward_short_chunks;
  options.small_batch_short_chunks = spec.backward_small_batch_short_chunks;
  options.small_sort_tiles = spec.backward_small_sort_tiles;
  options.sort_histogram_in_linearize = spec.backward_sort_histogram_in_linearize;
  options.prefetch_element_state = spec.backward_prefetch_state;
  options.vendor_sort = spec.backward_vendor_sort;
  options.sort_counts_in_scatter = spec.backward_sort_counts_in_scatter;
  return options;
}

Result<Buffers> allocate(const TbeProblem& problem, const TbeBenchSpec& spec, const SyntheticBatch& batch,
                         const std::vector<std::int64_t>& bad_indices, std::uint64_t seed) {
  const auto& layout = problem.layout;
  Buffers b;
  PARITY_ASSIGN_OR_RETURN(b.layout, eg::DeviceTbeLayout::create(layout));
  PARITY_ASSIGN_OR_RETURN(b.weights, DeviceBuffer::allocate(static_cast<std::size_t>(layout.total_weight_elements()) *
                                                            dtype_size_bytes(problem.weight_dtype)));
  PARITY_RETURN_IF_ERROR(eg::fill_uniform(b.weights.data(), problem.weight_dtype, layout.total_weight_elements(), seed, 0.1f));
  const auto s1 = optimizer_state1_elements(layout, spec.optimizer);
  const auto s2 = optimizer_state2_elements(layout, spec.optimizer);
  b.has_state1 = s1 > 0;
  b.has_state2 = s2 > 0;
  PARITY_ASSIGN_OR_RETURN(b.state1, DeviceBuffer::allocate(at_least_one(s1) * 4));
  PARITY_ASSIGN_OR_RETURN(b.state2, DeviceBuffer::allocate(at_least_one(s2) * 4));
  PARITY_RETURN_IF_ERROR(b.state1.fill_bytes(0));
  PARITY_RETURN_IF_ERROR(b.state2.fill_bytes(0));
  PARITY_ASSIGN_OR_RETURN(b.indices, parity::gpu::upload(pack_indices(batch.indices, problem.index_dtype)));
  PARITY_ASSIGN_OR_RETURN(b.offsets, parity::gpu::upload(pack_indices(batch.offsets, problem.index_dtype)));
  PARITY_ASSIGN_OR_RETURN(b.bad, parity::gpu::upload(pack_indices(bad_indices, problem.index_dtype)));
  if (problem.has_per_sample_weights) {
    PARITY_ASSIGN_OR_RETURN(b.per_sample_weights, parity::gpu::upload(batch.per_sample_weights));
  }
  b.out_elements = problem.output_rows() * problem.output_cols();
  PARITY_ASSIGN_OR_RETURN(b.out, DeviceBuffer::allocate(static_cast<std::size_t>(b.out_elements) *
                                                        dtype_size_bytes(problem.output_dtype)));
  PARITY_ASSIGN_OR_RETURN(b.grad, DeviceBuffer::allocate(static_cast<std::size_t>(b.out_elements) * 4));
  PARITY_RETURN_IF_ERROR(eg::fill_uniform(b.grad.data(), DType::kF32, b.out_elements, seed + 1, 1.0f));
  // Short chunks need more partial slots: the workspace follows the spec's backward options.
  PARITY_ASSIGN_OR_RETURN(b.ws_bytes, eg::tbe_backward_workspace_bytes(problem, backward_options_of(spec)));
  PARITY_ASSIGN_OR_RETURN(b.ws, DeviceBuffer::allocate(at_least_one(b.ws_bytes)));
  b.bc_bytes = eg::bounds_check_workspace_bytes(problem);
  PARITY_ASSIGN_OR_RETURN(b.bc_ws, DeviceBuffer::allocate(static_cast<std::size_t>(b.bc_bytes)));
  PARITY_ASSIGN_OR_RETURN(b.sink, DeviceBuffer::allocate(16));
  return b;
}

const float* psw(Buffers& b) {
  return b.per_sample_weights.as<float>();  // null unless the problem has per-sample weights
}

struct ForwardCheck {
  double max_err = 0, tolerance = 0, worst_ratio = 0;
};

// Forward on sampled bags against fp64 sums of the device's own rows. Per element the bound is
// (L + 3) u32 sum|terms| + u_out |sum| (recursive fp32 summation of L terms, the fp32 -> output
// rounding) plus 3e-8 for fp16's subnormal half-spacing; a per-sample weight's product and the
// mean's division each add one fp32 rounding (L + 5 covers both).
Result<ForwardCheck> check_forward(const TbeProblem& problem, const SyntheticBatch& batch, Buffers& b,
                                   std::uint64_t seed) {
  const auto& layout = problem.layout;
  ForwardCheck check;
  Rng rng(seed + 5);
  const std::size_t w_size = dtype_size_bytes(problem.weight_dtype);
  const std::size_t o_size = dtype_size_bytes(problem.output_dtype);
  for (int sample = 0; sample < kCheckedBags; ++sample) {
    const std::int64_t bag = rng.uniform_int(0, problem.num_bags() - 1);
    const int f = static_cast<int>(bag / problem.batch_size);
    const std::int64_t row_b = bag % problem.batch_size;
    const int dim = layout.feature_dim(f);
    std::vector<double> want(static_cast<std::size_t>(dim), 0.0), abs_sum(want.size(), 0.0);
    std::vector<std::uint8_t> row(static_cast<std::size_t>(dim) * w_size);
    const std::int64_t length = batch.offsets[bag + 1] - batch.offsets[bag];
    const double mean_scale = problem.pooling == PoolingMode::kMean && length > 0 ? 1.0 / static_cast<double>(length) : 1.0;
    for (std::int64_t p = batch.offsets[bag]; p < batch.offsets[bag + 1]; ++p) {
      const std::int64_t element = layout.weights_offset(layout.table_of_feature()[f]) + batch.indices[p] * layout.feature_row_stride(f);
      PARITY_RETURN_IF_ERROR(b.weights.copy_to_host(row.data(), row.size(), static_cast<std::size_t>(element) * w_size));
      const double scale = mean_scale * (problem.has_per_sample_weights ? batch.per_sample_weights[p] : 1.0);
      for (int j = 0; j < dim; ++j) {
        const double v = scale * load_as_double(row, problem.weight_dtype, j);
        want[j] += v;
        abs_sum[j] += std::abs(v);
      }
    }
    std::vector<std::uint8_t> got(static_cast<std::size_t>(dim) * o_size);
    PARITY_RETURN_IF_ERROR(b.out.copy_to_host(
        got.data(), got.size(),
        static_cast<std::size_t>(row_b * problem.output_cols() + layout.output_column_offset(f)) * o_size));
    for (int j = 0; j < dim; ++j) {
      const double err = std::abs(load_as_double(got, problem.output_dtype, j) - want[j]);
      const double tol = static_cast<double>(length + 5) * unit_roundoff(DType::kF32) * abs_sum[j] +
                         unit_roundoff(problem.output_dtype) * std::abs(want[j]) + 3e-8;
      if (err / tol >= check.worst_ratio) check = {err, tol, err / tol};
    }
  }
  return check;
}

struct Timings {
  SampleStats forward, backward, backward_batched, step, bounds, bounds_bad, bounds_writeback_free, index_read,
      index_offsets_read, tiny_read;
  bool has_backward_batched = false;
  bool main_batches_row_updates = false;
  TimingOptions writeback_free;
  std::int64_t index_read_bytes = 0;
  std::int64_t offsets_read_bytes = 0;
  std::int64_t bad_counted = 0;
};

// TbeBenchRequest::variant as the kernels' options.
struct KernelChoice {
  eg::ForwardOptions forward;
  eg::BackwardKernel backward = eg::BackwardKernel::kAuto;
};
Result<KernelChoice> kernel_choice(const std::string& variant) {
  KernelChoice choice;
  // The narrow-row candidates and warp tiles (forced forward kernels; the backward is the rule's:
  // narrow rows up to 128 bytes, warp per chunk past them).
  static const std::pair<const char*, eg::ForwardKernel> kCandidates[] = {
      {"narrow_rows_deep", eg::ForwardKernel::kNarrowRowsDeep},
      {"narrow_rows_light", eg::ForwardKernel::kNarrowRowsLight},
      {"warp_tile_one_hot", eg::ForwardKernel::kWarpTileOneHot},
      {"warp_tile_one_hot_prefetch", eg::ForwardKernel::kWarpTileOneHotPrefetch},
      {"warp_tile_short_bags", eg::ForwardKernel::kWarpTileShortBags},
      {"warp_tile_short_bags_prefetch", eg::ForwardKernel::kWarpTileShortBagsPrefetch},
      {"warp_tile_short_bags_light", eg::ForwardKernel::kWarpTileShortBagsLight},
      {"warp_tile_one_hot_wide_rows", eg::ForwardKernel::kWarpTileOneHotWideRows},
      {"lane_rows", eg::ForwardKernel::kLaneRows},
      {"narrow_rows_split_bags", eg::ForwardKernel::kNarrowRowsSplitBags},
      {"warp_tile_one_hot_eight_passes", eg::ForwardKernel::kWarpTileOneHotEightPasses}};
  // Wide-row candidates (the backward is the warp-per-chunk one).
  static const std::pair<const char*, eg::ForwardKernel> kWideCandidates[] = {
      {"wide_rows_dedup", eg::ForwardKernel::kGroupPerBagDedup},
      {"wide_rows_one_launch", eg::ForwardKernel::kGroupPerBagOneLaunch}};
  const auto* wide = std::find_if(std::begin(kWideCandidates), std::end(kWideCandidates),
                                  [&](const auto& entry) { return variant == entry.first; });
  const auto* candidate = std::find_if(std::begin(kCandidates), std::end(kCandidates),
                                       [&](const auto& entry) { return variant == entry.first; });
  if (candidate != std::end(kCandidates)) {
    choice.forward.kernel = candidate->second;
    choice.backward = eg::BackwardKernel::kAuto;
  } else if (wide != std::end(kWideCandidates)) {
    choice.forward.kernel = wide->second;
    choice.backward = eg::BackwardKernel::kWarpPerChunk;
  } else if (variant == "narrow_rows") {
    choice.forward.kernel = eg::ForwardKernel::kNarrowRows;
    choice.backward = eg::BackwardKernel::kNarrowRows;
  } else if (variant == "wide_rows") {
    choice.forward.kernel = eg::ForwardKernel::kGroupPerBag;
    choice.backward = eg::BackwardKernel::kWarpPerChunk;
  } else if (variant == "fitted_groups") {
    choice.forward.kernel = eg::ForwardKernel::kFittedGroups;
    choice.backward = eg::BackwardKernel::kWarpPerChunk;
  } else if (variant == "auto_feature_major_tiles" || variant == "auto_sample_major_tiles") {
    choice.forward.tile_order =
        variant == "auto_sample_major_tiles" ? eg::TileOrder::kSampleMajor : eg::TileOrder::kFeatureMajor;
  } else if (variant != "auto") {
    return invalid_argument("bench tbe: --variant='", variant, "' is not a forward variant (tbe_forward_variant_names)");
  }
  return choice;
}

// The kernel kAuto runs for `problem`, by its --forward-variant name, so a report says which kernel
// its default figure is (narrow rows split their bags where narrow_rows_split_parts gives >= 2).
std::string auto_forward_kernel_name(const TbeProblem& problem) {
  const eg::ForwardKernel kernel = eg::select_forward_kernel(problem);
  if (kernel == eg::ForwardKernel::kNarrowRows) {
    const auto properties = parity::gpu::device_properties();
    const int sm_count = properties.is_ok() ? properties->sm_count : 0;
    return sm_count > 0 && eg::narrow_rows_split_parts(problem, sm_count) > 1 ? "narrow_rows_split_bags" : "narrow_rows";
  }
  if (kernel == eg::ForwardKernel::kGroupPerBag) return "wide_rows";
  if (kernel == eg::ForwardKernel::kFittedGroups) return "fitted_groups";
  for (const auto& name : tbe_forward_variant_names()) {
    auto choice = kernel_choice(name);
    if (choice.is_ok() && choice->forward.kernel == kernel) return name;
  }
  return "auto";
}

// Every timing, in the order the recorded runs used (each reads the L2 state the previous left).
Result<Timings> time_all(const TbeProblem& problem, const TbeBenchSpec& spec, Buffers& b, const TimingOptions& timing,
                         MemoryWatch& memory, const KernelChoice& kernels) {
  OptimizerParams opt;
  opt.kind = spec.optimizer;
  opt.learning_rate = 0.01f;
  opt.eps = 1e-8f;
  const eg::TrainingState training{b.weights.data(), b.has_state1 ? b.state1.as<float>() : nullptr,
                                   b.has_state2 ? b.state2.as<float>() : nullptr};
  const eg::DeviceBatch device_batch{b.indices.data(), b.offsets.data(), psw(b)};
  Timings t;
  PARITY_ASSIGN_OR_RETURN(t.forward, time_on_device([&](parity::gpu::StreamHandle stream) {
    return eg::tbe_forward(problem, b.layout, b.weights.data(), device_batch, b.out.data(), kernels.forward, stream);
  }, timing));
  // Backward variants (tbe_gpu.hpp BackwardOptions): the default updates rows one at a time; the
  // batched-update kernel is timed beside it when both are asked for. `main` is what the step uses.
  eg::BackwardOptions main_options = backward_options_of(spec);
  main_options.batch_row_updates = !spec.time_row_at_a_time;
  // Atomic SGD is not bitwise reproducible: only when asked for explicitly.
  main_options.kernel = spec.backward_atomic_sgd ? eg::BackwardKernel::kAtomicSgd : kernels.backward;
  main_options.deterministic = !spec.backward_atomic_sgd;
  t.main_batches_row_updates = main_options.batch_row_updates;
  eg::BackwardOptions other_options = backward_options_of(spec);
  other_options.batch_row_updates = true;
  other_options.kernel = kernels.backward;
  auto backward = [&](const eg::BackwardOptions& options, parity::gpu::StreamHandle stream) {
    return eg::tbe_backward_fused(problem, b.layout, opt, training, device_batch, b.grad.as<float>(), b.ws.data(),
                                  b.ws_bytes, options, stream);
  };
  PARITY_ASSIGN_OR_RETURN(t.backward, time_on_device([&](parity::gpu::StreamHandle s) { return backward(main_options, s); },
                                                     timing));
  t.has_backward_batched = spec.time_batched_updates && spec.time_row_at_a_time;
  if (t.has_backward_batched) {
    PARITY_ASSIGN_OR_RETURN(t.backward_batched,
                            time_on_device([&](parity::gpu::StreamHandle s) { return backward(other_options, s); }, timing));
  }
  PARITY_RETURN_IF_ERROR(memory.note());
  PARITY_ASSIGN_OR_RETURN(t.step, time_on_device([&](parity::gpu::StreamHandle stream) {
    PARITY_RETURN_IF_ERROR(
        eg::tbe_forward(problem, b.layout, b.weights.data(), device_batch, b.out.data(), kernels.forward, stream));
    return backward(main_options, stream);
  }, timing));
  // Error-mode bounds check of `checked` (the clean or the bad indices) under `options`.
  auto time_bounds_check = [&](void* checked, const TimingOptions& options) {
    return time_on_device([&](parity::gpu::StreamHandle stream) {
      return eg::bounds_check(problem, b.layout, BoundsCheckMode::kError, checked, b.offsets.data(), b.bc_ws.data(),
                              b.bc_bytes, stream);
    }, options);
  };
  PARITY_ASSIGN_OR_RETURN(t.bounds, time_bounds_check(b.indices.data(), timing));
  PARITY_ASSIGN_OR_RETURN(t.bounds_bad, time_bounds_check(b.bad.data(), timing));
  PARITY_ASSIGN_OR_RETURN(const auto report, eg::read_bounds_check_report(problem, BoundsCheckMode::kError, b.bad.data(),
                                                                          b.offsets.data(), b.bc_ws.data()));
  t.bad_counted = report.bad_indices;
  // The clean-index check again after a flush that leaves the L2 without dirty lines (after the
  // report above: this run rewrites the block slots). The default flush's memset leaves dirty
  // lines to be written back while this short kernel reads: reported beside, not instead.
  t.writeback_free = timing;
  if (t.writeback_free.cache == TimingOptions::CacheMode::kFlushL2) {
    t.writeback_free.cache = TimingOptions::CacheMode::kFlushL2Clean;
  }
  PARITY_ASSIGN_OR_RETURN(t.bounds_writeback_free, time_bounds_check(b.indices.data(), t.writeback_free));
  // Floors for the bounds check under the same flush: one plain vector read of the index array
  // (the bytes the check cannot avoid), and a 16-byte read (launch plus event overhead).
  t.index_read_bytes = problem.num_indices * static_cast<std::int64_t>(dtype_size_bytes(problem.index_dtype)) / 16 * 16;
  PARITY_ASSIGN_OR_RETURN(t.index_read, time_on_device([&](parity::gpu::StreamHandle stream) {
    return read_device_vectors(b.indices.data(), t.index_read_bytes, b.sink.data(), stream);
  }, timing));
  // The floor: the indices and the offsets (F*B+1 of them, as large as the indices for
  // one-hot bags), each read once by the same plain kernel, back to back on the stream.
  t.offsets_read_bytes =
      (problem.num_bags() + 1) * static_cast<std::int64_t>(dtype_size_bytes(problem.index_dtype)) / 16 * 16;
  PARITY_ASSIGN_OR_RETURN(t.index_offsets_read, time_on_device([&](parity::gpu::StreamHandle stream) {
    PARITY_RETURN_IF_ERROR(read_device_vectors(b.indices.data(), t.index_read_bytes, b.sink.data(), stream));
    return read_device_vectors(b.offsets.data(), t.offsets_read_bytes, b.sink.data(), stream);
  }, timing));
  PARITY_ASSIGN_OR_RETURN(t.tiny_read, time_on_device([&](parity::gpu::StreamHandle stream) {
    return read_device_vectors(b.indices.data(), t.index_read_bytes > 0 ? 16 : 0, b.sink.data(), stream);
  }, timing));
  return t;
}

json timed(const SampleStats& stats, double bytes) {
  json j = sample_stats_json(stats);
  j["bytes"] = bytes;
  j["tbps"] = bytes / (stats.median_ms * 1e-3) / 1e12;
  return j;
}

// What the run measured, beside the spec: the byte models and the batch's counts.
struct RunFacts {
  TbeByteModel bytes;
  double fbgemm_forward_bytes = 0;  // FBGEMM's convention: every index's row once, plus the output
  std::int64_t unique_rows = 0;
  std::int64_t planted = 0;
  ForwardCheck check;
  double peak_device_bytes = 0;
  HbmMeasurement copy;  // the copy ceiling, measured in the same call before the TBE buffers exist
  TbeForwardBandwidth forward;
};

json config_json(const TbeBenchRequest& request, const TbeProblem& problem, const RunFacts& facts) {
  const auto& spec = request.spec;
  const auto& layout = problem.layout;
  return {{"name", spec.name},
                   {"tables", layout.num_tables()},
                   {"rows_first_table", layout.tables()[0].num_rows},
                   {"total_rows", layout.total_rows()},
                   {"max_dim", layout.max_dim()},
                   {"row_stride", layout.is_packed() ? "packed" : "aligned"},
                   {"weight_elements", layout.total_weight_elements()},
                   {"total_output_dim", layout.total_output_dim()},
                   {"batch_size", problem.batch_size},
                   {"num_features", layout.num_features()},
                   {"bag_lengths", spec.per_feature.empty() ? spec.bag_lengths.describe() : "per feature"},
                   {"features", tbe_feature_draws_json(spec, layout)},
                   {"pooling", pooling_mode_name(problem.pooling)},
                   {"per_sample_weights", problem.has_per_sample_weights},
                   {"output_dtype", std::string(dtype_name(problem.output_dtype))},
                   {"num_indices", problem.num_indices},
                   {"unique_rows", facts.unique_rows},
                   {"zipf_alpha_max", spec.max_zipf()},
                   {"hot_rows", spec.hot_rows},
                   {"weight_dtype", std::string(dtype_name(problem.weight_dtype))},
                   {"index_dtype", std::string(dtype_name(problem.index_dtype))},
                   {"optimizer", optimizer_kind_name(spec.optimizer)},
                   {"bad_fraction", spec.bad_fraction},
                   {"bad_indices_planted", facts.planted}};
}

json results_json(const TbeBenchRequest& request, const TbeProblem& problem, const Buffers& b, const Timings& t,
                  const RunFacts& facts) {
  const auto& bytes = facts.bytes;
  json doc = results_document("tbe", provenance_json(request.seed));
  doc["config"] = config_json(request, problem, facts);
  doc["cache"] = cache_mode_name(request.timing.cache);
  doc["byte_model"] = {{"forward_bytes", bytes.forward_bytes},
                       {"forward_unique_rows_bytes", bytes.forward_unique_rows_bytes},
                       {"backward_bytes", bytes.backward_bytes},
                       {"bounds_check_bytes", bytes.bounds_check_bytes},
                       {"fbgemm_convention_forward_bytes", facts.fbgemm_forward_bytes}};
  doc["check"] = {{"forward_sampled_bags", kCheckedBags}, {"max_abs_err", facts.check.max_err},
                  {"tolerance", facts.check.tolerance}};
  doc["forward"] = timed(t.forward, bytes.forward_bytes);
  doc["forward"]["fbgemm_convention_tbps"] = facts.fbgemm_forward_bytes / (t.forward.median_ms * 1e-3) / 1e12;
  doc["forward"]["unique_rows_bytes"] = bytes.forward_unique_rows_bytes;
  doc["forward_bandwidth"] = tbe_forward_bandwidth_json(facts.forward, facts.copy);
  doc["backward_fused"] = timed(t.backward, bytes.backward_bytes);
  doc["backward_variant"] = tbe_backward_variant_label(request.spec, t.main_batches_row_updates);
  if (t.has_backward_batched) doc["backward_fused_batched_row_updates"] = timed(t.backward_batched, bytes.backward_bytes);
  doc["step_fwd_bwd_opt"] = timed(t.step, bytes.forward_bytes + bytes.backward_bytes);
  doc["bounds_check_clean"] = timed(t.bounds, bytes.bounds_check_bytes);
  doc["bounds_check_bad"] = timed(t.bounds_bad, bytes.bounds_check_bytes);
  doc["bounds_check_bad"]["ratio_to_clean"] = t.bounds_bad.median_ms / t.bounds.median_ms;
  doc["bounds_check_clean_writeback_free_flush"] = timed(t.bounds_writeback_free, bytes.bounds_check_bytes);
  doc["bounds_check_clean_writeback_free_flush"]["cache"] = cache_mode_name(t.writeback_free.cache);
  doc["bounds_check_floor_index_read"] = timed(t.index_read, static_cast<double>(t.index_read_bytes));
  doc["bounds_check_floor_index_read"]["what"] = "one plain 16-byte-vector read kernel over the index array, same flush";
  doc["bounds_check_floor_index_offsets_read"] =
      timed(t.index_offsets_read, static_cast<double>(t.index_read_bytes + t.offsets_read_bytes));
  doc["bounds_check_floor_index_offsets_read"]["what"] =
      "the plain read kernel over the index array, then over the offsets array, same flush (the target's floor)";
  doc["bounds_check_floor_index_offsets_read"]["clean_check_ratio"] =
      t.index_offsets_read.median_ms > 0 ? t.bounds.median_ms / t.index_offsets_read.median_ms : 0.0;
  doc["bounds_check_floor_tiny_kernel"] = sample_stats_json(t.tiny_read);
  doc["bounds_check_floor_tiny_kernel"]["what"] = "a one-block kernel reading 16 bytes: launch, events and the flush's tail";
  doc["deterministic"] = "always (stable sort, fixed chunking; no separate mode to time)";
  const double n = static_cast<double>(problem.num_indices);
  doc["workspace_bytes"] = b.ws_bytes;
  doc["workspace_bytes_per_index"] = n > 0 ? static_cast<double>(b.ws_bytes) / n : 0.0;
  doc["peak_device_bytes"] = facts.peak_device_bytes;
  return doc;
}

std::string report_text(const TbeBenchRequest& request, const TbeProblem& problem, const Buffers& b, const Timings& t,
                         const RunFacts& facts) {
  const auto& layout = problem.layout;
  const auto& bytes = facts.bytes;
  std::string text = format_text(
      "bench tbe %s: %d tables, %d features, B=%lld, N=%lld, U=%lld, max_dim %d, %s weights, %s output, %s%s "
      "pooling, %s indices, Zipf alpha max %.3g, %s\n",
      request.spec.name.c_str(), layout.num_tables(), layout.num_features(), static_cast<long long>(problem.batch_size),
      static_cast<long long>(problem.num_indices), static_cast<long long>(facts.unique_rows), layout.max_dim(),
      std::string(dtype_name(problem.weight_dtype)).c_str(), std::string(dtype_name(problem.output_dtype)).c_str(),
      problem.has_per_sample_weights ? "weighted " : "", pooling_mode_name(problem.pooling),
      std::string(dtype_name(problem.index_dtype)).c_str(), request.spec.max_zipf(),
      optimizer_kind_name(request.spec.optimizer));
  text += format_text("  check: forward max_abs_err %.3e (tolerance %.3e) on %d sampled bags\n", facts.check.max_err,
                      facts.check.tolerance, kCheckedBags);
  auto line = [&text](const char* what, const SampleStats& s, double line_bytes) {
    text += format_text("  %-26s median %9.4f ms  p10 %9.4f  p90 %9.4f  %7.3f TB/s\n", what, s.median_ms, s.p10_ms,
                        s.p90_ms, line_bytes / (s.median_ms * 1e-3) / 1e12);
  };
  line("forward", t.forward, bytes.forward_bytes);
  text += facts.forward.describe();
  line(t.main_batches_row_updates ? "backward + opt (batched)" : "backward + optimizer", t.backward, bytes.backward_bytes);
  if (t.has_backward_batched) line("backward + opt (batched)", t.backward_batched, bytes.backward_bytes);
  line("fwd + bwd + optimizer", t.step, bytes.forward_bytes + bytes.backward_bytes);
  line("bounds check (clean)", t.bounds, bytes.bounds_check_bytes);
  line("bounds check (bad)", t.bounds_bad, bytes.bounds_check_bytes);
  line("bounds check (flush-clean)", t.bounds_writeback_free, bytes.bounds_check_bytes);
  line("  floor: index read", t.index_read, static_cast<double>(t.index_read_bytes));
  line("  floor: indices + offsets", t.index_offsets_read, static_cast<double>(t.index_read_bytes + t.offsets_read_bytes));
  if (t.index_offsets_read.median_ms > 0) {
    text += format_text("  %-26s %.2fx\n", "  clean check / floor", t.bounds.median_ms / t.index_offsets_read.median_ms);
  }
  text += format_text("  %-26s median %9.4f ms\n", "  floor: tiny kernel", t.tiny_read.median_ms);
  const double n = static_cast<double>(problem.num_indices);
  if (!problem.layout.is_packed())
    text += format_text("  rows padded: weights %.1f%% above packed\n", 100.0 * problem.layout.padding_fraction());
  text += format_text("  workspace %.1f B/index, peak device memory %.2f GB\n",
                      n > 0 ? static_cast<double>(b.ws_bytes) / n : 0.0, facts.peak_device_bytes / 1e9);
  return text;
}

// Each extra forward kernel: run, checked against fp64 on the sampled bags, then timed. A kernel
// that is refused (kUnsupported) or fails the check is recorded as such and not timed.
Result<json> time_forward_variants(const TbeBenchRequest& request, const TbeProblem& problem,
                                   const SyntheticBatch& batch, Buffers& b, const RunFacts& facts,
                                   const std::vector<std::int64_t>& n_per_feature, std::string* text) {
  json variants = json::object();
  const eg::DeviceBatch device_batch{b.indices.data(), b.offsets.data(), psw(b)};
  for (const auto& name : request.forward_variants) {
    PARITY_ASSIGN_OR_RETURN(const KernelChoice kernels, kernel_choice(name));
    auto run = [&](parity::gpu::StreamHandle stream) {
      return eg::tbe_forward(problem, b.layout, b.weights.data(), device_batch, b.out.data(), kernels.forward, stream);
    };
    if (const Status status = run(nullptr); !status.is_ok()) {  // e.g. kUnsupported: said, not fatal
      variants[name] = {{"skipped", status.message()}};
      *text += format_text("  forward %-22s skipped: %s\n", name.c_str(), status.message().c_str());
      continue;
    }
    PARITY_ASSIGN_OR_RETURN(const ForwardCheck check, check_forward(problem, batch, b, request.seed));
    if (check.worst_ratio > 1.0) {  // recorded, not timed; the other kernels still run
      const std::string failure = format_text("max error %.3e > tolerance %.3e", check.max_err, check.tolerance);
      variants[name] = {{"check_failed", failure}};
      *text += format_text("  forward %-22s CHECK FAILED: %s\n", name.c_str(), failure.c_str());
      continue;
    }
    PARITY_ASSIGN_OR_RETURN(const SampleStats stats, time_on_device(run, request.timing));
    const auto bandwidth = evaluate_tbe_forward(problem, request.spec, facts.bytes, n_per_feature, stats.median_ms,
                                                facts.copy.ceiling().median_tbps);
    variants[name] = timed(stats, facts.bytes.forward_bytes);
    variants[name]["max_abs_err"] = check.max_err;
    variants[name]["tolerance"] = check.tolerance;
    variants[name]["forward_bandwidth"] = tbe_forward_bandwidth_json(bandwidth, facts.copy);
    *text += format_text("  forward %-22s median %9.4f ms  %7.3f TB/s every lookup  %5.1f%% of copy (%s, target %.0f%%)\n",
                         name.c_str(), stats.median_ms, bandwidth.every_lookup_tbps, 100 * bandwidth.evaluated_ratio,
                         bandwidth.counts_unique_rows ? "unique rows" : "every lookup",
                         100 * bandwidth.target_fraction);
  }
  return variants;
}

// --forward-only: the --variant kernel and every --forward-variant, each checked and timed; no
// backward, step or bounds check (a short probe).
Result<std::string> forward_only_report(const TbeBenchRequest& request, const TbeProblem& problem,
                                        const SyntheticBatch& batch, Buffers& b, const RunFacts& facts,
                                        const std::vector<std::int64_t>& n_per_feature, const DeviceClocks& clocks_before) {
  TbeBenchRequest forward_request = request;
  forward_request.forward_variants = {request.variant};
  for (const auto& name : request.forward_variants) {
    if (name != request.variant) forward_request.forward_variants.push_back(name);
  }
  json doc = results_document("tbe", provenance_json(request.seed));
  doc["config"] = config_json(request, problem, facts);
  doc["cache"] = cache_mode_name(request.timing.cache);
  doc["forward_only"] = true;
  const std::string auto_kernel = auto_forward_kernel_name(problem);
  doc["forward_auto_kernel"] = auto_kernel;
  std::string text = format_text("bench tbe %s (forward only): B=%lld, N=%lld, U=%lld, max_dim %d, %s weights, copy %.3f TB/s, auto = %s\n",
                                 request.spec.name.c_str(), static_cast<long long>(problem.batch_size),
                                 static_cast<long long>(problem.num_indices), static_cast<long long>(facts.unique_rows),
                                 problem.layout.max_dim(), std::string(dtype_name(problem.weight_dtype)).c_str(),
                                 facts.copy.ceiling().median_tbps, auto_kernel.c_str());
  PARITY_ASSIGN_OR_RETURN(doc["forward_variants"],
                          time_forward_variants(forward_request, problem, batch, b, facts, n_per_feature, &text));
  DeviceClocks clocks_after;
  if (auto c = read_device_clocks(); c.is_ok()) clocks_after = *c;
  PARITY_RETURN_IF_ERROR(finish_results_document(doc, clocks_before, clocks_after, request.out, &text));
  return text;
}

// Bad indices for the bounds-check timing (error mode reads them and changes nothing).
std::vector<std::int64_t> plant_bad_indices(const SyntheticBatch& batch, double fraction, std::uint64_t seed,
                                            std::int64_t* planted) {
  auto bad = batch.indices;
  *planted = 0;
  if (fraction <= 0) return bad;
  Rng rng(seed + 99);
  for (auto& v : bad) {
    if (rng.uniform() < fraction) {
      v = -1;
      ++*planted;
    }
  }
  return bad;
}

}  // namespace

Result<std::string> run_tbe_bench(const TbeBenchRequest& request) {
  const auto& spec = request.spec;
  PARITY_ASSIGN_OR_RETURN(TbeProblem problem, tbe_bench_problem(spec));
  const auto batch = tbe_bench_batch(spec, problem.layout, request.seed);
  problem.num_indices = static_cast<std::int64_t>(batch.indices.size());
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("bench tbe"));
  PARITY_RETURN_IF_ERROR(validate_timing_options(request.timing));
  RunFacts facts;
  std::vector<std::int64_t> n_per_feature, u_per_feature;
  count_per_feature(problem, batch, &n_per_feature, &u_per_feature);
  facts.bytes = tbe_byte_model(problem, spec.optimizer, n_per_feature, u_per_feature);
  for (auto u : u_per_feature) facts.unique_rows += u;
  const auto bad_indices = plant_bad_indices(batch, spec.bad_fraction, request.seed, &facts.planted);
  // The copy ceiling first, while the device is otherwise empty (the same timing options).
  PARITY_ASSIGN_OR_RETURN(facts.copy, measure_hbm_copy(kDefaultHbmTotalBytes, request.timing));
  MemoryWatch memory;
  PARITY_RETURN_IF_ERROR(memory.start());
  PARITY_ASSIGN_OR_RETURN(Buffers b, allocate(problem, spec, batch, bad_indices, request.seed));
  // Check before timing.
  const eg::DeviceBatch device_batch{b.indices.data(), b.offsets.data(), psw(b)};
  PARITY_ASSIGN_OR_RETURN(const KernelChoice kernels, kernel_choice(request.variant));
  PARITY_RETURN_IF_ERROR(eg::tbe_forward(problem, b.layout, b.weights.data(), device_batch, b.out.data(), kernels.forward));
  PARITY_RETURN_IF_ERROR(memory.note());
  PARITY_ASSIGN_OR_RETURN(facts.check, check_forward(problem, batch, b, request.seed));
  if (facts.check.worst_ratio > 1.0) {
    return internal_error("bench tbe: forward check failed: max error ", facts.check.max_err, " > tolerance ",
                          facts.check.tolerance);
  }
  DeviceClocks clocks_before, clocks_after;
  if (auto c = read_device_clocks(); c.is_ok()) clocks_before = *c;
  if (request.forward_only) return forward_only_report(request, problem, batch, b, facts, n_per_feature, clocks_before);
  PARITY_ASSIGN_OR_RETURN(const Timings t, time_all(problem, spec, b, request.timing, memory, kernels));
  if (t.bad_counted != facts.planted) {
    return internal_error("bench tbe: bounds check counted ", t.bad_counted, " bad indices, planted ", facts.planted);
  }
  if (auto c = read_device_clocks(); c.is_ok()) clocks_after = *c;
  for (int f = 0; f < problem.layout.num_features(); ++f) {
    facts.fbgemm_forward_bytes += static_cast<double>(n_per_feature[f]) * problem.layout.feature_dim(f) *
                                  static_cast<double>(dtype_size_bytes(problem.weight_dtype));
  }
  facts.fbgemm_forward_bytes += static_cast<double>(b.out_elements) * static_cast<double>(dtype_size_bytes(problem.output_dtype));
  facts.peak_device_bytes = memory.peak_bytes();
  facts.forward = evaluate_tbe_forward(problem, spec, facts.bytes, n_per_feature, t.forward.median_ms,
                                       facts.copy.ceiling().median_tbps);
  json doc = results_json(request, problem, b, t, facts);
  doc["variant"] = request.variant;
  const std::string auto_kernel = auto_forward_kernel_name(problem);
  doc["forward_auto_kernel"] = auto_kernel;
  std::string text = report_text(request, problem, b, t, facts) + "kernels: " + request.variant +
                     (request.variant == "auto" ? " (forward: " + auto_kernel + ")" : std::string()) + "\n";
  if (!request.forward_variants.empty()) {
    PARITY_ASSIGN_OR_RETURN(doc["forward_variants"],
                            time_forward_variants(request, problem, batch, b, facts, n_per_feature, &text));
  }
  PARITY_RETURN_IF_ERROR(finish_results_document(doc, clocks_before, clocks_after, request.out, &text));
  return text;
}

}  // namespace parity::bench
