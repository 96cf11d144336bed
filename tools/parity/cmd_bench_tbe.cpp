// `parity bench tbe`: table-batched embeddings on the GPU. Named configurations C1-C7 and BC (the
// recsys memo's §6.4 set, docs/embedding.md) or free shape flags; forward, forward + backward +
// optimiser, backward alone and the bounds check timed separately with device events (L2 flushed,
// median with p10/p90), effective TB/s under the explicit byte models, the forward checked against
// fp64 on sampled bags before timing, peak device memory, JSON with provenance.
// Arguments are validated first (exit 2), then the device is required (exit 3).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/copy.hpp"
#include "parity/bench/results.hpp"
#include "parity/core/rng.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/embedding/tbe_synthetic.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#endif

namespace parity::cli {
namespace {

using namespace parity::embedding;

struct BenchTbeArgs {
  std::string config;
  int tables = 0;
  std::int64_t rows = 0;
  int dim = 0;
  std::int64_t batch = 0;
  int pooling_factor = -1;
  double zipf = -1;
  std::string dtype;
  std::string optimizer = "rowwise_adagrad";
  std::string index_dtype = "int64";
  std::int64_t hot_rows = -1;
  double bad_fraction = -1;
  int warmup = 10;
  int reps = 50;
  std::string cache = "flush";
  std::string backward_variant = "both";
  std::string out;
  std::uint64_t seed = 1;
};

struct BenchSpec {
  std::string name = "custom";
  std::vector<TableSpec> tables;
  std::int64_t batch = 0;
  int pooling_factor = 20;
  bool vary_bag_sizes = false;
  std::vector<int> pooling_per_table;  // C3: multi-hot sizes per table (else pooling_factor)
  double zipf = 0;
  std::int64_t hot_rows = 0;
  DType weight_dtype = DType::kF32;
  DType index_dtype = DType::kI64;
  bool time_batched_updates = true;   // backward variants timed (--backward-variant)
  bool time_row_at_a_time = true;
  OptimizerKind optimizer = OptimizerKind::kRowwiseAdagrad;
  double bad_fraction = 0;
};

std::vector<TableSpec> uniform_tables(int count, std::int64_t rows, int dim) {
  return std::vector<TableSpec>(static_cast<std::size_t>(count), TableSpec{rows, dim});
}

// DLRMv2 (Criteo 1TB) table sizes and multi-hot sizes, largest capped at 4M rows (recsys memo §3.2).
const std::int64_t kDlrmV2Rows[26] = {40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63, 40000000, 3067956,
                                      405282, 10, 2209, 11938, 155, 4, 976, 14, 40000000, 40000000, 40000000,
                                      590152, 12973, 108, 36};
const int kDlrmV2Hot[26] = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};

Result<BenchSpec> spec_from_args(const BenchTbeArgs& args) {
  BenchSpec spec;
  const std::string& c = args.config;
  if (c.empty()) {
    PARITY_CHECK_ARG(args.tables > 0 && args.rows > 0 && args.dim > 0 && args.batch > 0,
                     "bench tbe: give --config C1..C7|BC or all of --tables --rows --dim --batch (got --tables=",
                     args.tables, " --rows=", args.rows, " --dim=", args.dim, " --batch=", args.batch, ")");
  } else if (c == "C1") {
    spec.tables = uniform_tables(32, 100000, 128);
    spec.batch = 512;
  } else if (c == "C2" || c == "BC") {
    spec.tables = uniform_tables(32, 1000000, 128);
    spec.batch = 8192;
    if (c == "BC") spec.bad_fraction = 0.001;
  } else if (c == "C3") {
    for (int t = 0; t < 26; ++t) {
      spec.tables.push_back({std::min<std::int64_t>(kDlrmV2Rows[t], 4000000), 128});
      spec.pooling_per_table.push_back(kDlrmV2Hot[t]);
    }
    spec.batch = 8192;
  } else if (c == "C4") {
    spec.tables = uniform_tables(26, 4000000, 128);
    spec.batch = 16384;
    spec.pooling_factor = 1;
  } else if (c == "C5") {
    Rng rng(args.seed);
    for (int t = 0; t < 32; ++t) spec.tables.push_back({1000000, static_cast<int>((rng.uniform_int(64, 192) + 3) / 4 * 4)});
    spec.batch = 8192;
  } else if (c == "C6") {
    spec.tables = uniform_tables(32, 1000000, 128);
    spec.batch = 8192;
    spec.hot_rows = 1;
  } else if (c == "C7") {
    for (int t = 0; t < 32; ++t) spec.tables.push_back({1000000, t % 2 == 0 ? 16 : 32});
    spec.batch = 65536;
    spec.pooling_factor = 5;
    spec.vary_bag_sizes = true;
  } else {
    return invalid_argument("bench tbe: --config='", c, "' is not one of C1, C2, C3, C4, C5, C6, C7, BC");
  }
  if (!c.empty()) spec.name = c;
  // Free flags override a named configuration's fields.
  if (args.tables > 0 || args.rows > 0 || args.dim > 0) {
    const int count = args.tables > 0 ? args.tables : static_cast<int>(spec.tables.size());
    const std::int64_t rows = args.rows > 0 ? args.rows : (spec.tables.empty() ? 0 : spec.tables[0].num_rows);
    const int dim = args.dim > 0 ? args.dim : (spec.tables.empty() ? 0 : spec.tables[0].dim);
    spec.tables = uniform_tables(count, rows, dim);
    spec.pooling_per_table.clear();
  }
  if (args.batch > 0) spec.batch = args.batch;
  if (args.pooling_factor >= 0) spec.pooling_factor = args.pooling_factor;
  if (args.zipf >= 0) spec.zipf = args.zipf;
  if (args.hot_rows >= 0) spec.hot_rows = args.hot_rows;
  if (args.bad_fraction >= 0) spec.bad_fraction = args.bad_fraction;
  PARITY_CHECK_ARG(args.zipf < 0 || args.zipf == 0 || args.zipf > 1.0, "bench tbe: --zipf=", args.zipf,
                   " must be 0 (uniform) or > 1");
  PARITY_CHECK_ARG(spec.bad_fraction >= 0 && spec.bad_fraction <= 1, "bench tbe: --bad-fraction=", spec.bad_fraction,
                   " must be in [0, 1]");
  if (!args.dtype.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec.weight_dtype, parse_dtype(args.dtype));
  }
  PARITY_ASSIGN_OR_RETURN(spec.index_dtype, parse_dtype(args.index_dtype));
  PARITY_ASSIGN_OR_RETURN(spec.optimizer, parse_optimizer_kind(args.optimizer));
  const std::string& v = args.backward_variant;
  PARITY_CHECK_ARG(v == "both" || v == "batched" || v == "row", "bench tbe: --backward-variant='", v,
                   "' is not one of both, batched, row");
  spec.time_batched_updates = v != "row";
  spec.time_row_at_a_time = v != "batched";
  return spec;
}

Result<TbeProblem> problem_for(const BenchSpec& spec) {
  PARITY_ASSIGN_OR_RETURN(TbeLayout layout, TbeLayout::create(spec.tables));
  TbeProblem problem{layout};
  problem.batch_size = spec.batch;
  problem.weight_dtype = spec.weight_dtype;
  problem.output_dtype = spec.weight_dtype;
  problem.index_dtype = spec.index_dtype;
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("bench tbe"));
  return problem;
}

[[maybe_unused]] SyntheticBatch batch_for(const BenchSpec& spec, const TbeLayout& layout, std::uint64_t seed) {
  SyntheticBatchOptions options;
  options.batch_size = spec.batch;
  options.pooling_factor = spec.pooling_factor;
  options.vary_bag_sizes = spec.vary_bag_sizes;
  options.zipf_alpha = spec.zipf;
  options.hot_rows = spec.hot_rows;
  options.seed = seed;
  if (spec.pooling_per_table.empty()) return make_synthetic_batch(layout, options);
  // Per-table multi-hot sizes: one single-table layout per feature, concatenated feature-major.
  SyntheticBatch batch;
  batch.offsets.push_back(0);
  for (int t = 0; t < layout.num_tables(); ++t) {
    auto single = TbeLayout::create({layout.tables()[t]});
    options.pooling_factor = spec.pooling_per_table[t];
    options.seed = seed + static_cast<std::uint64_t>(t);
    const auto part = make_synthetic_batch(*single, options);
    const std::int64_t base = batch.offsets.back();
    batch.indices.insert(batch.indices.end(), part.indices.begin(), part.indices.end());
    for (std::size_t i = 1; i < part.offsets.size(); ++i) batch.offsets.push_back(base + part.offsets[i]);
  }
  return batch;
}

#ifdef PARITY_HAS_CUDA
namespace eg = embedding::gpu;

nlohmann::json timed(const bench::SampleStats& stats, double bytes) {
  nlohmann::json j = bench::sample_stats_json(stats);
  j["bytes"] = bytes;
  j["tbps"] = bytes / (stats.median_ms * 1e-3) / 1e12;
  return j;
}

Status run_bench(const BenchTbeArgs& args, const BenchSpec& spec, TbeProblem problem) {
  const auto batch = batch_for(spec, problem.layout, args.seed);
  problem.num_indices = static_cast<std::int64_t>(batch.indices.size());
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("bench tbe"));
  PARITY_ASSIGN_OR_RETURN(const bench::TimingOptions timing,
                          timing_options_from_flags("bench tbe", args.warmup, args.reps, args.cache));
  std::vector<std::int64_t> n_per_feature, u_per_feature;
  count_per_feature(problem, batch, &n_per_feature, &u_per_feature);
  const TbeByteModel bytes = tbe_byte_model(problem, spec.optimizer, n_per_feature, u_per_feature);
  // Bad indices for the bounds-check timing (error mode reads them and changes nothing).
  auto bad_indices = batch.indices;
  std::int64_t planted = 0;
  if (spec.bad_fraction > 0) {
    Rng rng(args.seed + 99);
    for (auto& v : bad_indices) {
      if (rng.uniform() < spec.bad_fraction) {
        v = -1;
        ++planted;
      }
    }
  }
  std::size_t free_before = 0, total = 0;
  PARITY_RETURN_IF_ERROR(parity::gpu::memory_info(&free_before, &total));
  std::size_t free_min = free_before;
  auto note_memory = [&]() -> Status {
    std::size_t free_now = 0;
    PARITY_RETURN_IF_ERROR(parity::gpu::memory_info(&free_now, &total));
    free_min = std::min(free_min, free_now);
    return Status::ok();
  };
  const auto& layout = problem.layout;
  PARITY_ASSIGN_OR_RETURN(auto device_layout, eg::DeviceTbeLayout::create(layout));
  PARITY_ASSIGN_OR_RETURN(auto weights, parity::gpu::DeviceBuffer::allocate(
                                            static_cast<std::size_t>(layout.total_weight_elements()) *
                                            dtype_size_bytes(problem.weight_dtype)));
  PARITY_RETURN_IF_ERROR(eg::fill_uniform(weights.data(), problem.weight_dtype, layout.total_weight_elements(), args.seed, 0.1f));
  const auto s1 = optimizer_state1_elements(layout, spec.optimizer);
  const auto s2 = optimizer_state2_elements(layout, spec.optimizer);
  PARITY_ASSIGN_OR_RETURN(auto state1, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(std::max<std::int64_t>(s1, 1)) * 4));
  PARITY_ASSIGN_OR_RETURN(auto state2, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(std::max<std::int64_t>(s2, 1)) * 4));
  PARITY_RETURN_IF_ERROR(state1.fill_bytes(0));
  PARITY_RETURN_IF_ERROR(state2.fill_bytes(0));
  PARITY_ASSIGN_OR_RETURN(auto indices, parity::gpu::upload(pack_indices(batch.indices, problem.index_dtype)));
  PARITY_ASSIGN_OR_RETURN(auto offsets, parity::gpu::upload(pack_indices(batch.offsets, problem.index_dtype)));
  PARITY_ASSIGN_OR_RETURN(auto bad, parity::gpu::upload(pack_indices(bad_indices, problem.index_dtype)));
  const std::int64_t out_elements = problem.output_rows() * problem.output_cols();
  PARITY_ASSIGN_OR_RETURN(auto out, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(out_elements) *
                                                                        dtype_size_bytes(problem.output_dtype)));
  PARITY_ASSIGN_OR_RETURN(auto grad, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(out_elements) * 4));
  PARITY_RETURN_IF_ERROR(eg::fill_uniform(grad.data(), DType::kF32, out_elements, args.seed + 1, 1.0f));
  PARITY_ASSIGN_OR_RETURN(const std::int64_t ws_bytes, eg::tbe_backward_workspace_bytes(problem));
  PARITY_ASSIGN_OR_RETURN(auto ws, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(std::max<std::int64_t>(ws_bytes, 1))));
  const std::int64_t bc_bytes = eg::bounds_check_workspace_bytes(problem);
  PARITY_ASSIGN_OR_RETURN(auto bc_ws, parity::gpu::DeviceBuffer::allocate(static_cast<std::size_t>(bc_bytes)));
  const eg::DeviceBatch device_batch{indices.data(), offsets.data(), nullptr};

  // Check before timing: forward on sampled bags against fp64 sums of the device's own rows.
  PARITY_RETURN_IF_ERROR(eg::tbe_forward(problem, device_layout, weights.data(), device_batch, out.data()));
  PARITY_RETURN_IF_ERROR(note_memory());
  double max_err = 0, max_tol = 0, worst_ratio = 0;
  {
    Rng rng(args.seed + 5);
    const std::size_t w_size = dtype_size_bytes(problem.weight_dtype);
    for (int sample = 0; sample < 48; ++sample) {
      const std::int64_t bag = rng.uniform_int(0, problem.num_bags() - 1);
      const int f = static_cast<int>(bag / problem.batch_size);
      const std::int64_t b = bag % problem.batch_size;
      const int dim = layout.feature_dim(f);
      std::vector<double> want(static_cast<std::size_t>(dim), 0.0), abs_sum(want.size(), 0.0);
      std::vector<std::uint8_t> row(static_cast<std::size_t>(dim) * w_size);
      for (std::int64_t p = batch.offsets[bag]; p < batch.offsets[bag + 1]; ++p) {
        const std::int64_t element = layout.weights_offset(layout.table_of_feature()[f]) + batch.indices[p] * dim;
        PARITY_RETURN_IF_ERROR(weights.copy_to_host(row.data(), row.size(), static_cast<std::size_t>(element) * w_size));
        for (int j = 0; j < dim; ++j) {
          const double v = load_as_double(row, problem.weight_dtype, j);
          want[j] += v;
          abs_sum[j] += std::abs(v);
        }
      }
      const std::size_t o_size = dtype_size_bytes(problem.output_dtype);
      std::vector<std::uint8_t> got(static_cast<std::size_t>(dim) * o_size);
      PARITY_RETURN_IF_ERROR(out.copy_to_host(
          got.data(), got.size(), static_cast<std::size_t>(b * problem.output_cols() + layout.output_column_offset(f)) * o_size));
      const std::int64_t length = batch.offsets[bag + 1] - batch.offsets[bag];
      for (int j = 0; j < dim; ++j) {
        const double err = std::abs(load_as_double(got, problem.output_dtype, j) - want[j]);
        // (L + 3) u32 sum|terms| + u_out |sum| (+ fp16 subnormal half-spacing).
        const double tol = (length + 3) * unit_roundoff(DType::kF32) * abs_sum[j] +
                           unit_roundoff(problem.output_dtype) * std::abs(want[j]) + 3e-8;
        if (err / tol >= worst_ratio) {
          worst_ratio = err / tol;
          max_err = err;
          max_tol = tol;
        }
      }
    }
  }
  if (worst_ratio > 1.0) return internal_error("bench tbe: forward check failed: max error ", max_err, " > tolerance ", max_tol);

  OptimizerParams opt;
  opt.kind = spec.optimizer;
  opt.learning_rate = 0.01f;
  opt.eps = 1e-8f;
  const eg::TrainingState training{weights.data(), s1 ? state1.as<float>() : nullptr, s2 ? state2.as<float>() : nullptr};
  bench::DeviceClocks clocks_before;
  if (auto c = bench::read_device_clocks(); c.is_ok()) clocks_before = *c;
  PARITY_ASSIGN_OR_RETURN(const auto forward_stats, bench::time_on_device([&](parity::gpu::StreamHandle stream) {
    return eg::tbe_forward(problem, device_layout, weights.data(), device_batch, out.data(), stream);
  }, timing));
  // Backward variants (tbe_gpu.hpp BackwardOptions): the default updates rows one at a time; the
  // batched-update kernel is timed beside it when both are asked for. `main` is what the step uses.
  eg::BackwardOptions main_options;
  main_options.batch_row_updates = !spec.time_row_at_a_time;
  eg::BackwardOptions other_options;
  other_options.batch_row_updates = true;
  PARITY_ASSIGN_OR_RETURN(const auto backward_stats, bench::time_on_device([&](parity::gpu::StreamHandle stream) {
    return eg::tbe_backward_fused(problem, device_layout, opt, training, device_batch, grad.as<float>(), ws.data(), ws_bytes,
                                  main_options, stream);
  }, timing));
  bench::SampleStats backward_batched_stats{};
  if (spec.time_batched_updates && spec.time_row_at_a_time) {
    PARITY_ASSIGN_OR_RETURN(backward_batched_stats, bench::time_on_device([&](parity::gpu::StreamHandle stream) {
      return eg::tbe_backward_fused(problem, device_layout, opt, training, device_batch, grad.as<float>(), ws.data(),
                                    ws_bytes, other_options, stream);
    }, timing));
  }
  PARITY_RETURN_IF_ERROR(note_memory());
  PARITY_ASSIGN_OR_RETURN(const auto step_stats, bench::time_on_device([&](parity::gpu::StreamHandle stream) {
    PARITY_RETURN_IF_ERROR(eg::tbe_forward(problem, device_layout, weights.data(), device_batch, out.data(), stream));
    return eg::tbe_backward_fused(problem, device_layout, opt, training, device_batch, grad.as<float>(), ws.data(), ws_bytes,
                                  main_options, stream);
  }, timing));
  // Error-mode bounds check of `checked` (the clean or the bad indices) under `options`.
  auto time_bounds_check = [&](void* checked, const bench::TimingOptions& options) {
    return bench::time_on_device([&](parity::gpu::StreamHandle stream) {
      return eg::bounds_check(problem, device_layout, BoundsCheckMode::kError, checked, offsets.data(), bc_ws.data(),
                              bc_bytes, stream);
    }, options);
  };
  PARITY_ASSIGN_OR_RETURN(const auto bounds_stats, time_bounds_check(indices.data(), timing));
  PARITY_ASSIGN_OR_RETURN(const auto bounds_bad_stats, time_bounds_check(bad.data(), timing));
  PARITY_ASSIGN_OR_RETURN(const auto report, eg::read_bounds_check_report(problem, BoundsCheckMode::kError, bad.data(),
                                                                          offsets.data(), bc_ws.data()));
  if (report.bad_indices != planted) {
    return internal_error("bench tbe: bounds check counted ", report.bad_indices, " bad indices, planted ", planted);
  }
  // The clean-index check again after a flush that leaves the L2 without dirty lines (after the
  // report above: this run rewrites the block slots). The default flush's memset leaves ~60 MB
  // to be written back while this ~20 us kernel reads: reported beside, not instead.
  bench::TimingOptions writeback_free = timing;
  if (writeback_free.cache == bench::TimingOptions::CacheMode::kFlushL2) {
    writeback_free.cache = bench::TimingOptions::CacheMode::kFlushL2Clean;
  }
  PARITY_ASSIGN_OR_RETURN(const auto bounds_writeback_free_stats, time_bounds_check(indices.data(), writeback_free));
  // Floors for the bounds check under the same flush: one plain vector read of the index array
  // (the bytes the check cannot avoid), and a 16-byte read (launch plus event overhead).
  PARITY_ASSIGN_OR_RETURN(auto sink, parity::gpu::DeviceBuffer::allocate(16));
  const std::int64_t index_read_bytes =
      problem.num_indices * static_cast<std::int64_t>(dtype_size_bytes(problem.index_dtype)) / 16 * 16;
  PARITY_ASSIGN_OR_RETURN(const auto index_read_stats, bench::time_on_device([&](parity::gpu::StreamHandle stream) {
    return bench::read_device_vectors(indices.data(), index_read_bytes, sink.data(), stream);
  }, timing));
  PARITY_ASSIGN_OR_RETURN(const auto tiny_read_stats, bench::time_on_device([&](parity::gpu::StreamHandle stream) {
    return bench::read_device_vectors(indices.data(), index_read_bytes > 0 ? 16 : 0, sink.data(), stream);
  }, timing));
  bench::DeviceClocks clocks_after;
  if (auto c = bench::read_device_clocks(); c.is_ok()) clocks_after = *c;

  const double n = static_cast<double>(problem.num_indices);
  double fbgemm_fwd_bytes = 0;
  for (int f = 0; f < layout.num_features(); ++f) {
    fbgemm_fwd_bytes += static_cast<double>(n_per_feature[f]) * layout.feature_dim(f) * dtype_size_bytes(problem.weight_dtype);
  }
  fbgemm_fwd_bytes += static_cast<double>(out_elements) * dtype_size_bytes(problem.output_dtype);
  ProcessArgs process_args;
  nlohmann::json doc = bench::results_document("tbe", bench::provenance_json(process_args.argc(), process_args.argv(), args.seed));
  std::int64_t total_unique = 0;
  for (auto u : u_per_feature) total_unique += u;
  doc["config"] = {{"name", spec.name},
                   {"tables", layout.num_tables()},
                   {"rows_first_table", layout.tables()[0].num_rows},
                   {"total_rows", layout.total_rows()},
                   {"max_dim", layout.max_dim()},
                   {"total_output_dim", layout.total_output_dim()},
                   {"batch_size", problem.batch_size},
                   {"pooling_factor", spec.pooling_factor},
                   {"num_indices", problem.num_indices},
                   {"unique_rows", total_unique},
                   {"zipf_alpha", spec.zipf},
                   {"hot_rows", spec.hot_rows},
                   {"weight_dtype", std::string(dtype_name(problem.weight_dtype))},
                   {"index_dtype", std::string(dtype_name(problem.index_dtype))},
                   {"optimizer", optimizer_kind_name(spec.optimizer)},
                   {"bad_fraction", spec.bad_fraction},
                   {"bad_indices_planted", planted}};
  doc["cache"] = bench::cache_mode_name(timing.cache);
  doc["byte_model"] = {{"forward_bytes", bytes.forward_bytes},
                       {"forward_unique_rows_bytes", bytes.forward_unique_rows_bytes},
                       {"backward_bytes", bytes.backward_bytes},
                       {"bounds_check_bytes", bytes.bounds_check_bytes},
                       {"fbgemm_convention_forward_bytes", fbgemm_fwd_bytes}};
  doc["check"] = {{"forward_sampled_bags", 48}, {"max_abs_err", max_err}, {"tolerance", max_tol}};
  doc["forward"] = timed(forward_stats, bytes.forward_bytes);
  doc["forward"]["fbgemm_convention_tbps"] = fbgemm_fwd_bytes / (forward_stats.median_ms * 1e-3) / 1e12;
  doc["backward_fused"] = timed(backward_stats, bytes.backward_bytes);
  doc["backward_variant"] = main_options.batch_row_updates ? "batched_row_updates" : "row_at_a_time";
  if (spec.time_batched_updates && spec.time_row_at_a_time) {
    doc["backward_fused_batched_row_updates"] = timed(backward_batched_stats, bytes.backward_bytes);
  }
  doc["step_fwd_bwd_opt"] = timed(step_stats, bytes.forward_bytes + bytes.backward_bytes);
  doc["bounds_check_clean"] = timed(bounds_stats, bytes.bounds_check_bytes);
  doc["bounds_check_bad"] = timed(bounds_bad_stats, bytes.bounds_check_bytes);
  doc["bounds_check_bad"]["ratio_to_clean"] = bounds_bad_stats.median_ms / bounds_stats.median_ms;
  doc["bounds_check_clean_writeback_free_flush"] = timed(bounds_writeback_free_stats, bytes.bounds_check_bytes);
  doc["bounds_check_clean_writeback_free_flush"]["cache"] = bench::cache_mode_name(writeback_free.cache);
  doc["bounds_check_floor_index_read"] = timed(index_read_stats, static_cast<double>(index_read_bytes));
  doc["bounds_check_floor_index_read"]["what"] = "one plain 16-byte-vector read kernel over the index array, same flush";
  doc["bounds_check_floor_tiny_kernel"] = bench::sample_stats_json(tiny_read_stats);
  doc["bounds_check_floor_tiny_kernel"]["what"] = "a one-block kernel reading 16 bytes: launch, events and the flush's tail";
  doc["deterministic"] = "always (stable sort, fixed chunking; no separate mode to time)";
  doc["workspace_bytes"] = ws_bytes;
  doc["workspace_bytes_per_index"] = n > 0 ? static_cast<double>(ws_bytes) / n : 0.0;
  doc["peak_device_bytes"] = static_cast<double>(free_before - free_min);
  std::printf("bench tbe %s: %d tables, B=%lld, N=%lld, U=%lld, max_dim %d, %s weights, %s\n", spec.name.c_str(),
              layout.num_tables(), static_cast<long long>(problem.batch_size), static_cast<long long>(problem.num_indices),
              static_cast<long long>(total_unique), layout.max_dim(), std::string(dtype_name(problem.weight_dtype)).c_str(),
              optimizer_kind_name(spec.optimizer));
  std::printf("  check: forward max_abs_err %.3e (tolerance %.3e) on 48 sampled bags\n", max_err, max_tol);
  auto line = [](const char* what, const bench::SampleStats& s, double b) {
    std::printf("  %-26s median %9.4f ms  p10 %9.4f  p90 %9.4f  %7.3f TB/s\n", what, s.median_ms, s.p10_ms, s.p90_ms,
                b / (s.median_ms * 1e-3) / 1e12);
  };
  line("forward", forward_stats, bytes.forward_bytes);
  line(main_options.batch_row_updates ? "backward + opt (batched)" : "backward + optimizer", backward_stats,
       bytes.backward_bytes);
  if (spec.time_batched_updates && spec.time_row_at_a_time) {
    line("backward + opt (batched)", backward_batched_stats, bytes.backward_bytes);
  }
  line("fwd + bwd + optimizer", step_stats, bytes.forward_bytes + bytes.backward_bytes);
  line("bounds check (clean)", bounds_stats, bytes.bounds_check_bytes);
  line("bounds check (bad)", bounds_bad_stats, bytes.bounds_check_bytes);
  line("bounds check (flush-clean)", bounds_writeback_free_stats, bytes.bounds_check_bytes);
  line("  floor: index read", index_read_stats, static_cast<double>(index_read_bytes));
  std::printf("  %-26s median %9.4f ms\n", "  floor: tiny kernel", tiny_read_stats.median_ms);
  std::printf("  workspace %.1f B/index, peak device memory %.2f GB\n", n > 0 ? ws_bytes / n : 0.0,
              static_cast<double>(free_before - free_min) / 1e9);
  return finish_results_document(doc, clocks_before, clocks_after, args.out);
}
#endif

Status bench_tbe(const BenchTbeArgs& args) {
  PARITY_ASSIGN_OR_RETURN(const BenchSpec spec, spec_from_args(args));
  PARITY_ASSIGN_OR_RETURN(TbeProblem problem, problem_for(spec));
  // Timing flags are checked here too, so a bad flag exits 2 even without a device.
  PARITY_RETURN_IF_ERROR(timing_options_from_flags("bench tbe", args.warmup, args.reps, args.cache).status());
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench tbe"));
#ifdef PARITY_HAS_CUDA
  return run_bench(args, spec, std::move(problem));
#else
  return Status::ok();
#endif
}

}  // namespace

void add_bench_tbe_command(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<BenchTbeArgs>();
  auto* cmd = bench.add_subcommand("tbe", "Table-batched embeddings: forward, fwd+bwd+optimizer, bounds check (GPU)");
  cmd->add_option("--config", args->config, "Named configuration: C1..C7 or BC (docs/embedding.md)");
  cmd->add_option("--tables", args->tables, "Number of tables (one feature each)");
  cmd->add_option("--rows", args->rows, "Rows per table");
  cmd->add_option("--dim", args->dim, "Embedding dim (multiple of 4, <= 2048)");
  cmd->add_option("--batch", args->batch, "Batch size B");
  cmd->add_option("--pooling-factor", args->pooling_factor, "Indices per bag L");
  cmd->add_option("--zipf", args->zipf, "Zipf exponent of the row distribution (0 = uniform)");
  cmd->add_option("--hot-rows", args->hot_rows, "Draw every index from this many rows per table (C6)");
  cmd->add_option("--bad-fraction", args->bad_fraction, "Fraction of bad indices for the bounds-check timing");
  cmd->add_option("--dtype", args->dtype, "Weight and output dtype: fp32, fp16, bf16");
  cmd->add_option("--index-dtype", args->index_dtype, "int32 or int64");
  cmd->add_option("--optimizer", args->optimizer, "sgd, rowwise_adagrad, adagrad, adam");
  cmd->add_option("--warmup", args->warmup, "Untimed repetitions");
  cmd->add_option("--reps", args->reps, "Timed repetitions");
  cmd->add_option("--cache", args->cache,
                  "flush (memset of 2 x L2 between repetitions, as do_bench), flush-clean (then read back: no "
                  "dirty lines left) or warm");
  cmd->add_option("--backward-variant", args->backward_variant,
                  "Backward kernels timed: both (default), batched (row updates queued), row (one at a time)");
  cmd->add_option("--seed", args->seed, "Seed of the synthetic batch and weights");
  cmd->add_option("--out", args->out, "Write the results JSON here");
  cmd->callback([args, &outcome] { outcome.status = bench_tbe(*args); });
}

}  // namespace parity::cli
