// `parity bench tbe` as a library call: table-batched embeddings on the GPU. Named configurations
// C1-C7 and BC (the recsys memo's §6.4 set), D1-D7 (issue 13's development set; docs/embedding.md,
// a table in src/bench/tbe_configs.cpp), a table-layout file (src/bench/tbe_layout.cpp) or free
// shapes; forward, forward + backward + optimiser, backward alone and the bounds check
// timed separately with device events (L2 flushed, median with p10/p90), effective TB/s under the
// explicit byte models, the forward checked against fp64 on sampled bags before timing, peak
// device memory, the copy bandwidth measured in the same call and the forward targets, JSON with
// provenance. The spec and the batch are CPU code; the run is parity_gpu.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/bench/device_timing.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"
#include "parity/embedding/tbe.hpp"
#include "parity/embedding/tbe_synthetic.hpp"

namespace parity::bench {

struct TbeBenchSpec {
  std::string name = "custom";
  std::vector<embedding::TableSpec> tables;
  std::vector<std::string> table_names;  // layout file names; empty: t0, t1, ...
  std::vector<int> table_of_feature;     // empty: one feature per table
  std::int64_t batch = 0;
  embedding::BagLengthDistribution bag_lengths = embedding::BagLengthDistribution::fixed(20);
  double zipf = 0;                                  // every feature's alpha unless per_feature
  std::vector<embedding::FeatureDraw> per_feature;  // C3, layout files: lengths and alpha per feature
  std::int64_t hot_rows = 0;
  DType weight_dtype = DType::kF32;
  DType output_dtype = DType::kF32;
  DType index_dtype = DType::kI64;
  embedding::PoolingMode pooling = embedding::PoolingMode::kSum;
  bool weighted = false;  // per-sample weights (sum pooling only)
  /// Rows at embedding::aligned_row_stride (the default), or packed (--row-stride packed).
  bool aligned_row_strides = true;
  bool time_batched_updates = true;  // backward variants timed
  bool time_row_at_a_time = true;
  /// --backward-variant atomic_sgd: the backward (and the step's) is BackwardKernel::kAtomicSgd
  /// with deterministic=false (SGD, any weights dtype; otherwise the run stops with the rule's reason).
  bool backward_atomic_sgd = false;
  /// --backward-variant short_chunks: the backward (and the step's) with BackwardOptions::short_chunks.
  bool backward_short_chunks = true;
  /// BackwardOptions::prefetch_element_state (Adagrad / Adam): on unless --backward-variant
  /// no_prefetch_state (prefetch_state names the default explicitly).
  bool backward_prefetch_state = true;
  /// BackwardOptions::small_sort_tiles: on unless --backward-variant large_sort_tiles.
  bool backward_small_sort_tiles = true;
  /// BackwardOptions::sort_histogram_in_linearize: on unless --backward-variant separate_sort_histogram.
  bool backward_sort_histogram_in_linearize = true;
  /// BackwardOptions::small_batch_short_chunks: off unless --backward-variant small_batch_short_chunks.
  bool backward_small_batch_short_chunks = false;
  /// BackwardOptions::vendor_sort: off unless --backward-variant vendor_sort.
  bool backward_vendor_sort = false;
  /// BackwardOptions::sort_counts_in_scatter: off unless --backward-variant sort_counts_in_scatter.
  bool backward_sort_counts_in_scatter = false;
  embedding::OptimizerKind optimizer = embedding::OptimizerKind::kRowwiseAdagrad;
  double bad_fraction = 0;
  /// Each feature's draw (per_feature, or bag_lengths and zipf for all).
  std::vector<embedding::FeatureDraw> feature_draws() const;
  /// The largest Zipf alpha of any feature (the unique-row byte model counts above 1.05).
  double max_zipf() const;
};

/// Flags that override a named configuration (or define a free one), as the user typed them;
/// empty = keep the configuration's value. Parsed strictly by tbe_bench_spec, errors name the flag.
struct TbeBenchOverrides {
  std::string tables;          // --tables N
  std::string rows;            // --rows "1000000" or a list "1000000,500000" (cycled over tables)
  std::string dim;             // --dim "128" or a list "16,32,64" (cycled over tables)
  std::string batch;           // --batch
  std::string bag_lengths;     // --pooling-factor "20", "0..10" (uniform), "one-hot"
  std::string zipf;            // --zipf alpha >= 0
  std::string hot_rows;        // --hot-rows
  std::string bad_fraction;    // --bad-fraction
  std::string pooling;         // --pooling sum|mean
  bool weighted = false;       // --weighted
  std::string weight_dtype;    // --weights-dtype fp32|fp16|bf16
  std::string output_dtype;    // --output-dtype fp32|fp16|bf16 (default: the weights dtype)
  std::string index_dtype;     // --index-dtype int32|int64
  std::string optimizer;       // --optimizer sgd|adagrad|rowwise-adagrad|adam
  std::string backward_variant = "both";  // one of tbe_backward_variant_names
  std::string row_stride;      // --row-stride aligned|packed
  std::string layout_file;     // --layout FILE (docs/embedding.md, "Table-layout files")
};

/// The names tbe_bench_spec knows, in order (C1..C7, BC, D1..D7).
std::vector<std::string> tbe_bench_config_names();
/// A named configuration, a layout file or a free one from the overrides, with the overrides
/// applied; kInvalidArgument naming the flag and the value for an unknown name or a bad value.
/// `seed` draws C5's dims.
Result<TbeBenchSpec> tbe_bench_spec(const std::string& config, const TbeBenchOverrides& overrides,
                                    std::uint64_t seed);
/// A spec from a table-layout JSON document (`source` names it in errors: a path). Errors name
/// the table or feature, the field and the value.
Result<TbeBenchSpec> tbe_bench_spec_from_layout_json(const std::string& text, const std::string& source);
/// Reads the file and calls tbe_bench_spec_from_layout_json.
Result<TbeBenchSpec> read_tbe_layout_file(const std::string& path);
/// The problem of a spec (num_indices still 0: set from the batch).
Result<embedding::TbeProblem> tbe_bench_problem(const TbeBenchSpec& spec);
/// The synthetic batch of a spec (per-feature lengths and alphas; weights when spec.weighted).
embedding::SyntheticBatch tbe_bench_batch(const TbeBenchSpec& spec, const embedding::TbeLayout& layout,
                                          std::uint64_t seed);

/// The forward bandwidth target of issue 13 for rows of `row_bytes` (D x weight bytes): 0.70 for
/// >= 256 B, 0.60 for 129-255 B, 0.50 for <= 128 B (the 32-128 B class, extended below 32 B).
double tbe_forward_target_fraction(std::int64_t row_bytes);

/// Achieved forward bandwidth under both byte models, against the copy measured in the same call.
struct TbeForwardBandwidth {
  double every_lookup_tbps = 0;     // byte model: every lookup's row read
  double unique_rows_tbps = 0;      // byte model: each unique row read once
  double copy_tbps = 0;             // the device copy (read + write) in the same call
  double every_lookup_ratio = 0;    // to the copy
  double unique_rows_ratio = 0;
  double target_fraction = 0;       // bytes-weighted harmonic mean of the per-row-size targets
  bool counts_unique_rows = false;  // max Zipf alpha > 1.05: the unique-row figure is evaluated
  double evaluated_ratio = 0;
  bool target_met = false;
  /// Two lines for the text report.
  std::string describe() const;
};
TbeForwardBandwidth evaluate_tbe_forward(const embedding::TbeProblem& problem, const TbeBenchSpec& spec,
                                         const embedding::TbeByteModel& bytes,
                                         const std::vector<std::int64_t>& indices_per_feature,
                                         double forward_ms, double copy_tbps);

struct TbeBenchRequest {
  TbeBenchSpec spec;
  TimingOptions timing;
  std::uint64_t seed = 1;
  std::string out;  // results JSON with provenance (empty: none)
  /// Kernels (embedding/tbe_gpu.hpp): auto (the narrow-row rule, then fitted groups), narrow_rows,
  /// wide_rows (the power-of-two group-per-bag forward and warp-per-chunk backward for every
  /// shape), or fitted_groups (the fitted group-per-bag forward, warp-per-chunk backward).
  std::string variant = "auto";
  /// Forward kernels timed in addition, each checked first (`--forward-variant a,b`; names from
  /// tbe_forward_variant_names): JSON `forward_variants`, one text line each.
  std::vector<std::string> forward_variants;
  /// Time only forwards (`--forward-only`): `variant` and `forward_variants`, no backward, step or
  /// bounds check; JSON `forward_variants` holds them all.
  bool forward_only = false;
};
/// The --backward-variant names: both, batched, row, atomic_sgd, short_chunks, long_chunks,
/// prefetch_state, no_prefetch_state, large_sort_tiles, small_batch_short_chunks,
/// separate_sort_histogram, vendor_sort, sort_counts_in_scatter (one run times one).
const std::vector<std::string>& tbe_backward_variant_names();
/// The results file's name for the backward the step timed: the option the spec changes, else
/// batched_row_updates or row_at_a_time (main_batches_row_updates).
std::string tbe_backward_variant_label(const TbeBenchSpec& spec, bool main_batches_row_updates);
/// Every forward kernel the bench can force: auto, narrow_rows, wide_rows, fitted_groups and the
/// narrow-row candidates (narrow_rows_deep, narrow_rows_light, warp_tile_one_hot,
/// warp_tile_one_hot_prefetch, warp_tile_short_bags, warp_tile_short_bags_prefetch,
/// warp_tile_short_bags_light) and wide_rows_dedup (embedding/tbe_gpu.hpp ForwardKernel).
const std::vector<std::string>& tbe_forward_variant_names();
/// A comma-separated list of those names (no empty entries, no repeats), or kInvalidArgument
/// naming the flag and the entry.
Result<std::vector<std::string>> parse_tbe_forward_variants(const std::string& list);
/// `parity bench tbe` as a command line or a binding gives it.
struct TbeBenchSettings {
  TbeBenchRequest request;  // seed, out, variant, forward_only; spec and timing from the fields below
  std::string config;       // a name of tbe_bench_config_names (empty: a layout file or free shapes)
  TbeBenchOverrides overrides;
  TimingSettings timing;
  std::string forward_variants;  // comma-separated (parse_tbe_forward_variants)
};
/// The checked request (CPU, before any device): the spec and its problem, the timing, the forward
/// variants; kInvalidArgument naming the flag.
Result<TbeBenchRequest> tbe_bench_request_from_settings(const TbeBenchSettings& settings);
/// "a, b, c": the forward variant names for a help text.
std::string tbe_forward_variant_list_text();
/// Runs the whole benchmark on device 0 (parity_gpu); returns the printed report. kInternal when
/// the forward check or the bounds-check count fails (nothing wrong is timed).
Result<std::string> run_tbe_bench(const TbeBenchRequest& request);

}  // namespace parity::bench
