// The named TBE benchmark configurations (recsys memo §6.4, docs/embedding.md) and the CPU half of
// `bench tbe`: spec, problem and synthetic batch (include/parity/bench/tbe_bench.hpp).
#include <algorithm>
#include <array>

#include "parity/bench/tbe_bench.hpp"
#include "parity/core/rng.hpp"

namespace parity::bench {
namespace {

using embedding::TableSpec;

std::vector<TableSpec> uniform_tables(int count, std::int64_t rows, int dim) {
  return std::vector<TableSpec>(static_cast<std::size_t>(count), TableSpec{rows, dim});
}

// DLRMv2 (Criteo 1TB) table sizes and multi-hot sizes, largest capped at 4M rows (recsys memo §3.2).
constexpr std::array<std::int64_t, 26> kDlrmV2Rows = {
    40000000, 39060, 17295, 7424, 20265, 3,        7122,     1543,     63,     40000000, 3067956, 405282, 10,
    2209,     11938, 155,   4,    976,   14,       40000000, 40000000, 40000000, 590152, 12973,   108,    36};
constexpr std::array<int, 26> kDlrmV2Hot = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};

// The configuration `name`, or false when there is none by that name.
bool named_config(const std::string& name, std::uint64_t seed, TbeBenchSpec* spec) {
  if (name == "C1") {
    spec->tables = uniform_tables(32, 100000, 128);
    spec->batch = 512;
  } else if (name == "C2" || name == "BC") {  // BC: C2 with 0.1% bad indices planted
    spec->tables = uniform_tables(32, 1000000, 128);
    spec->batch = 8192;
    if (name == "BC") spec->bad_fraction = 0.001;
  } else if (name == "C3") {
    for (std::size_t t = 0; t < kDlrmV2Rows.size(); ++t) {
      spec->tables.push_back({std::min<std::int64_t>(kDlrmV2Rows[t], 4000000), 128});
      spec->pooling_per_table.push_back(kDlrmV2Hot[t]);
    }
    spec->batch = 8192;
  } else if (name == "C4") {
    spec->tables = uniform_tables(26, 4000000, 128);
    spec->batch = 16384;
    spec->pooling_factor = 1;
  } else if (name == "C5") {  // mixed dims in [64, 192], multiples of 4
    Rng rng(seed);
    for (int t = 0; t < 32; ++t) {
      spec->tables.push_back({1000000, static_cast<int>((rng.uniform_int(64, 192) + 3) / 4 * 4)});
    }
    spec->batch = 8192;
  } else if (name == "C6") {
    spec->tables = uniform_tables(32, 1000000, 128);
    spec->batch = 8192;
    spec->hot_rows = 1;
  } else if (name == "C7") {
    for (int t = 0; t < 32; ++t) spec->tables.push_back({1000000, t % 2 == 0 ? 16 : 32});
    spec->batch = 65536;
    spec->pooling_factor = 5;
    spec->vary_bag_sizes = true;
  } else {
    return false;
  }
  spec->name = name;
  return true;
}

Status apply_overrides(const TbeBenchOverrides& o, TbeBenchSpec* spec) {
  if (o.tables > 0 || o.rows > 0 || o.dim > 0) {
    const int count = o.tables > 0 ? o.tables : static_cast<int>(spec->tables.size());
    const std::int64_t rows = o.rows > 0 ? o.rows : (spec->tables.empty() ? 0 : spec->tables[0].num_rows);
    const int dim = o.dim > 0 ? o.dim : (spec->tables.empty() ? 0 : spec->tables[0].dim);
    spec->tables = uniform_tables(count, rows, dim);
    spec->pooling_per_table.clear();
  }
  if (o.batch > 0) spec->batch = o.batch;
  if (o.pooling_factor >= 0) spec->pooling_factor = o.pooling_factor;
  if (o.zipf >= 0) spec->zipf = o.zipf;
  if (o.hot_rows >= 0) spec->hot_rows = o.hot_rows;
  if (o.bad_fraction >= 0) spec->bad_fraction = o.bad_fraction;
  PARITY_CHECK_ARG(o.zipf < 0 || o.zipf == 0 || o.zipf > 1.0, "bench tbe: --zipf=", o.zipf,
                   " must be 0 (uniform) or > 1");
  PARITY_CHECK_ARG(spec->bad_fraction >= 0 && spec->bad_fraction <= 1, "bench tbe: --bad-fraction=",
                   spec->bad_fraction, " must be in [0, 1]");
  if (!o.weight_dtype.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec->weight_dtype, parse_dtype(o.weight_dtype));
  }
  PARITY_ASSIGN_OR_RETURN(spec->index_dtype, parse_dtype(o.index_dtype));
  PARITY_ASSIGN_OR_RETURN(spec->optimizer, embedding::parse_optimizer_kind(o.optimizer));
  const std::string& v = o.backward_variant;
  PARITY_CHECK_ARG(v == "both" || v == "batched" || v == "row", "bench tbe: --backward-variant='", v,
                   "' is not one of both, batched, row");
  spec->time_batched_updates = v != "row";
  spec->time_row_at_a_time = v != "batched";
  return Status::ok();
}

}  // namespace

std::vector<std::string> tbe_bench_config_names() { return {"C1", "C2", "C3", "C4", "C5", "C6", "C7", "BC"}; }

Result<TbeBenchSpec> tbe_bench_spec(const std::string& config, const TbeBenchOverrides& overrides,
                                    std::uint64_t seed) {
  TbeBenchSpec spec;
  if (config.empty()) {
    const auto& o = overrides;
    PARITY_CHECK_ARG(o.tables > 0 && o.rows > 0 && o.dim > 0 && o.batch > 0,
                     "bench tbe: give --config C1..C7|BC or all of --tables --rows --dim --batch (got --tables=",
                     o.tables, " --rows=", o.rows, " --dim=", o.dim, " --batch=", o.batch, ")");
  } else if (!named_config(config, seed, &spec)) {
    return invalid_argument("bench tbe: --config='", config, "' is not one of C1, C2, C3, C4, C5, C6, C7, BC");
  }
  PARITY_RETURN_IF_ERROR(apply_overrides(overrides, &spec));
  return spec;
}

Result<embedding::TbeProblem> tbe_bench_problem(const TbeBenchSpec& spec) {
  PARITY_ASSIGN_OR_RETURN(embedding::TbeLayout layout, embedding::TbeLayout::create(spec.tables));
  embedding::TbeProblem problem{layout};
  problem.batch_size = spec.batch;
  problem.weight_dtype = spec.weight_dtype;
  problem.output_dtype = spec.weight_dtype;
  problem.index_dtype = spec.index_dtype;
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("bench tbe"));
  return problem;
}

embedding::SyntheticBatch tbe_bench_batch(const TbeBenchSpec& spec, const embedding::TbeLayout& layout,
                                          std::uint64_t seed) {
  embedding::SyntheticBatchOptions options;
  options.batch_size = spec.batch;
  options.pooling_factor = spec.pooling_factor;
  options.vary_bag_sizes = spec.vary_bag_sizes;
  options.zipf_alpha = spec.zipf;
  options.hot_rows = spec.hot_rows;
  options.seed = seed;
  if (spec.pooling_per_table.empty()) return embedding::make_synthetic_batch(layout, options);
  // Per-table multi-hot sizes: one single-table layout per feature, concatenated feature-major.
  embedding::SyntheticBatch batch;
  batch.offsets.push_back(0);
  for (int t = 0; t < layout.num_tables(); ++t) {
    auto single = embedding::TbeLayout::create({layout.tables()[t]});
    options.pooling_factor = spec.pooling_per_table[t];
    options.seed = seed + static_cast<std::uint64_t>(t);
    const auto part = embedding::make_synthetic_batch(*single, options);
    const std::int64_t base = batch.offsets.back();
    batch.indices.insert(batch.indices.end(), part.indices.begin(), part.indices.end());
    for (std::size_t i = 1; i < part.offsets.size(); ++i) batch.offsets.push_back(base + part.offsets[i]);
  }
  return batch;
}

}  // namespace parity::bench
