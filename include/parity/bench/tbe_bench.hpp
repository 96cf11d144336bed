// `parity bench tbe` as a library call: table-batched embeddings on the GPU. Named configurations
// C1-C7 and BC (the recsys memo's §6.4 set, docs/embedding.md; a table in src/bench/tbe_configs.cpp)
// or free shapes; forward, forward + backward + optimiser, backward alone and the bounds check
// timed separately with device events (L2 flushed, median with p10/p90), effective TB/s under the
// explicit byte models, the forward checked against fp64 on sampled bags before timing, peak
// device memory, JSON with provenance. The spec and the batch are CPU code; the run is parity_gpu.
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
  std::int64_t batch = 0;
  int pooling_factor = 20;
  bool vary_bag_sizes = false;
  std::vector<int> pooling_per_table;  // C3: multi-hot sizes per table (else pooling_factor)
  double zipf = 0;
  std::int64_t hot_rows = 0;
  DType weight_dtype = DType::kF32;
  DType index_dtype = DType::kI64;
  bool time_batched_updates = true;  // backward variants timed
  bool time_row_at_a_time = true;
  embedding::OptimizerKind optimizer = embedding::OptimizerKind::kRowwiseAdagrad;
  double bad_fraction = 0;
};

/// Fields that override a named configuration (or define a free one); negative / zero / empty =
/// keep the configuration's value.
struct TbeBenchOverrides {
  int tables = 0;
  std::int64_t rows = 0;
  int dim = 0;
  std::int64_t batch = 0;
  int pooling_factor = -1;
  double zipf = -1;
  std::int64_t hot_rows = -1;
  double bad_fraction = -1;
  std::string weight_dtype;                   // fp32, fp16, bf16
  std::string index_dtype = "int64";          // int32, int64
  std::string optimizer = "rowwise_adagrad";  // sgd, rowwise_adagrad, adagrad, adam
  std::string backward_variant = "both";      // both, batched (row updates queued), row
};

/// The names tbe_bench_spec knows, in order (C1..C7, BC).
std::vector<std::string> tbe_bench_config_names();
/// A named configuration (empty `config`: a free one from the overrides) with the overrides
/// applied; kInvalidArgument naming the flag for an unknown name or a bad value. `seed` draws C5's
/// dims.
Result<TbeBenchSpec> tbe_bench_spec(const std::string& config, const TbeBenchOverrides& overrides,
                                    std::uint64_t seed);
/// The problem of a spec (num_indices still 0: set from the batch).
Result<embedding::TbeProblem> tbe_bench_problem(const TbeBenchSpec& spec);
/// The synthetic batch (per-table multi-hot sizes concatenated feature-major for C3).
embedding::SyntheticBatch tbe_bench_batch(const TbeBenchSpec& spec, const embedding::TbeLayout& layout,
                                          std::uint64_t seed);

struct TbeBenchRequest {
  TbeBenchSpec spec;
  TimingOptions timing;
  std::uint64_t seed = 1;
  std::string out;  // results JSON with provenance (empty: none)
  /// Kernels (embedding/tbe_gpu.hpp): auto (the narrow-row rule), narrow_rows, or wide_rows (the
  /// group-per-bag forward and warp-per-chunk backward for every shape).
  std::string variant = "auto";
};
/// Runs the whole benchmark on device 0 (parity_gpu); returns the printed report. kInternal when
/// the forward check or the bounds-check count fails (nothing wrong is timed).
Result<std::string> run_tbe_bench(const TbeBenchRequest& request);

}  // namespace parity::bench
