// The named TBE benchmark configurations (recsys memo §6.4 and issue 13's development set,
// docs/embedding.md) and the CPU half of `bench tbe`: flags parsed strictly into a spec, problem
// and synthetic batch (include/parity/bench/tbe_bench.hpp).
#include <algorithm>
#include <array>

#include "parity/bench/tbe_bench.hpp"
#include "parity/core/parse.hpp"
#include "parity/core/rng.hpp"

namespace parity::bench {
namespace {

using embedding::BagLengthDistribution;
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
bool named_c_config(const std::string& name, std::uint64_t seed, TbeBenchSpec* spec) {
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
      spec->per_feature.push_back({BagLengthDistribution::fixed(kDlrmV2Hot[t]), 0.0});
    }
    spec->batch = 8192;
  } else if (name == "C4") {
    spec->tables = uniform_tables(26, 4000000, 128);
    spec->batch = 16384;
    spec->bag_lengths = BagLengthDistribution::fixed(1);
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
    spec->bag_lengths = BagLengthDistribution::uniform(0, 10);
  } else {
    return false;
  }
  return true;
}

// Issue 13's development configurations (its table, in order; D2 is C7's shape).
bool named_d_config(const std::string& name, TbeBenchSpec* spec) {
  using embedding::OptimizerKind;
  if (name == "D1") {
    spec->tables = uniform_tables(40, 1000000, 64);
    spec->batch = 32768;
    spec->bag_lengths = BagLengthDistribution::one_hot();
    spec->weight_dtype = DType::kBF16;
  } else if (name == "D2") {
    named_c_config("C7", 0, spec);  // the same shape, listed again as the row
  } else if (name == "D3") {
    spec->tables = uniform_tables(24, 500000, 160);
    spec->batch = 8192;
    spec->bag_lengths = BagLengthDistribution::fixed(8);
    spec->weight_dtype = DType::kF16;
    spec->zipf = 1.05;
    spec->weighted = true;
    spec->optimizer = OptimizerKind::kSgd;
  } else if (name == "D4") {
    spec->tables = uniform_tables(64, 200000, 32);
    spec->batch = 65536;
    spec->bag_lengths = BagLengthDistribution::fixed(4);
    spec->zipf = 1.15;
    spec->optimizer = OptimizerKind::kAdam;
  } else if (name == "D5") {
    spec->tables = uniform_tables(16, 2000000, 96);
    spec->batch = 16384;
    spec->bag_lengths = BagLengthDistribution::fixed(12);
    spec->pooling = embedding::PoolingMode::kMean;
  } else if (name == "D6") {
    spec->tables = uniform_tables(8, 5000000, 256);
    spec->batch = 8192;
    spec->bag_lengths = BagLengthDistribution::fixed(30);
    spec->index_dtype = DType::kI32;
    spec->zipf = 1.3;
  } else if (name == "D7") {
    spec->tables = uniform_tables(4, 10000000, 128);
    spec->batch = 2048;
    spec->bag_lengths = BagLengthDistribution::fixed(200);
    spec->zipf = 0.8;
  } else {
    return false;
  }
  spec->output_dtype = spec->weight_dtype;
  return true;
}

constexpr const char* kConfigList = "C1, C2, C3, C4, C5, C6, C7, BC, D1, D2, D3, D4, D5, D6, D7";

// "128" or "16,32,64": every entry an integer in [low, high]; errors name the flag and the text.
Result<std::vector<std::int64_t>> parse_list(const std::string& text, const std::string& flag, std::int64_t low,
                                             std::int64_t high) {
  std::vector<std::int64_t> values;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    auto value = parse_int64(item, flag + "='" + text + "' entry", low, high);
    if (!value) return value.status();
    values.push_back(*value);
    if (comma == std::string::npos) return values;
    begin = comma + 1;
  }
}

Result<DType> parse_float_dtype(const std::string& text, const std::string& flag) {
  auto dtype = parse_dtype(text);
  PARITY_CHECK_ARG(dtype.is_ok() && (*dtype == DType::kF32 || *dtype == DType::kF16 || *dtype == DType::kBF16),
                   "bench tbe: ", flag, "='", text, "' is not one of fp32, fp16, bf16");
  return *dtype;
}

// --tables / --rows / --dim: lists cycle over the tables (their length must divide the count).
Status apply_shape(const TbeBenchOverrides& o, TbeBenchSpec* spec) {
  std::vector<std::int64_t> rows, dims;
  if (!o.rows.empty()) {
    PARITY_ASSIGN_OR_RETURN(rows, parse_list(o.rows, "bench tbe: --rows", 1, std::int64_t{1} << 40));
  }
  if (!o.dim.empty()) {
    PARITY_ASSIGN_OR_RETURN(dims, parse_list(o.dim, "bench tbe: --dim", 1, 1 << 20));
  }
  std::int64_t count = static_cast<std::int64_t>(spec->tables.size());
  if (!o.tables.empty()) {
    PARITY_ASSIGN_OR_RETURN(count, parse_int64(o.tables, "bench tbe: --tables", 1, 100000));
  } else {
    count = std::max({count, static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(dims.size())});
  }
  for (const auto& [flag, list] : {std::pair{"--rows", &rows}, std::pair{"--dim", &dims}}) {
    PARITY_CHECK_ARG(list->empty() || count % static_cast<std::int64_t>(list->size()) == 0, "bench tbe: ", flag,
                     " lists ", list->size(), " values, which does not divide the ", count, " tables");
  }
  PARITY_CHECK_ARG(count > 0 && (!rows.empty() || !spec->tables.empty()) && (!dims.empty() || !spec->tables.empty()),
                   "bench tbe: give --config, --layout or all of --tables --rows --dim --batch (got --tables='",
                   o.tables, "' --rows='", o.rows, "' --dim='", o.dim, "' --batch='", o.batch, "')");
  std::vector<embedding::TableSpec> tables;
  for (std::int64_t t = 0; t < count; ++t) {
    const auto& old = spec->tables.empty() ? embedding::TableSpec{} : spec->tables[static_cast<std::size_t>(t) % spec->tables.size()];
    tables.push_back({rows.empty() ? old.num_rows : rows[static_cast<std::size_t>(t) % rows.size()],
                      static_cast<int>(dims.empty() ? old.dim : dims[static_cast<std::size_t>(t) % dims.size()])});
  }
  spec->tables = std::move(tables);
  spec->table_names.clear();
  spec->table_of_feature.clear();
  spec->per_feature.clear();
  return Status::ok();
}

Status apply_draws(const TbeBenchOverrides& o, TbeBenchSpec* spec) {
  if (!o.bag_lengths.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec->bag_lengths,
                            embedding::parse_bag_length_distribution(o.bag_lengths, "bench tbe: --pooling-factor"));
    for (auto& draw : spec->per_feature) draw.bag_lengths = spec->bag_lengths;
  }
  if (!o.zipf.empty()) {
    auto zipf = parse_double(o.zipf, "bench tbe: --zipf");
    PARITY_CHECK_ARG(zipf.is_ok() && *zipf >= 0, "bench tbe: --zipf='", o.zipf, "' must be a number >= 0 (0 = uniform)");
    spec->zipf = *zipf;
    for (auto& draw : spec->per_feature) draw.zipf_alpha = spec->zipf;
  }
  if (!o.hot_rows.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec->hot_rows, parse_int64(o.hot_rows, "bench tbe: --hot-rows", 0));
  }
  if (!o.bad_fraction.empty()) {
    auto fraction = parse_double(o.bad_fraction, "bench tbe: --bad-fraction");
    PARITY_CHECK_ARG(fraction.is_ok() && *fraction >= 0 && *fraction <= 1, "bench tbe: --bad-fraction='",
                     o.bad_fraction, "' must be in [0, 1]");
    spec->bad_fraction = *fraction;
  }
  return Status::ok();
}

Status apply_types(const TbeBenchOverrides& o, TbeBenchSpec* spec) {
  if (!o.weight_dtype.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec->weight_dtype, parse_float_dtype(o.weight_dtype, "--weights-dtype"));
    spec->output_dtype = spec->weight_dtype;
  }
  if (!o.output_dtype.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec->output_dtype, parse_float_dtype(o.output_dtype, "--output-dtype"));
  }
  if (!o.index_dtype.empty()) {
    PARITY_CHECK_ARG(o.index_dtype == "int32" || o.index_dtype == "int64", "bench tbe: --index-dtype='", o.index_dtype,
                     "' is not one of int32, int64");
    spec->index_dtype = o.index_dtype == "int32" ? DType::kI32 : DType::kI64;
  }
  if (!o.optimizer.empty()) {
    std::string name = o.optimizer;
    std::replace(name.begin(), name.end(), '-', '_');  // rowwise-adagrad as rowwise_adagrad
    auto kind = embedding::parse_optimizer_kind(name);
    PARITY_CHECK_ARG(kind.is_ok(), "bench tbe: --optimizer='", o.optimizer,
                     "' is not one of sgd, adagrad, rowwise-adagrad, adam");
    spec->optimizer = *kind;
  }
  if (!o.pooling.empty()) {
    PARITY_CHECK_ARG(o.pooling == "sum" || o.pooling == "mean", "bench tbe: --pooling='", o.pooling,
                     "' is not one of sum, mean");
    spec->pooling = o.pooling == "sum" ? embedding::PoolingMode::kSum : embedding::PoolingMode::kMean;
  }
  if (o.weighted) spec->weighted = true;
  if (!o.row_stride.empty()) {
    PARITY_CHECK_ARG(o.row_stride == "aligned" || o.row_stride == "packed", "bench tbe: --row-stride='", o.row_stride,
                     "' is not one of aligned, packed");
    spec->aligned_row_strides = o.row_stride == "aligned";
  }
  PARITY_CHECK_ARG(!spec->weighted || spec->pooling == embedding::PoolingMode::kSum,
                   "bench tbe: --weighted (per-sample weights) needs --pooling=sum; got pooling=",
                   embedding::pooling_mode_name(spec->pooling));
  const std::string& v = o.backward_variant;
  const auto& backward_names = tbe_backward_variant_names();
  if (std::find(backward_names.begin(), backward_names.end(), v) == backward_names.end()) {
    std::string expected;
    for (const auto& name : backward_names) expected += (expected.empty() ? "" : ", ") + name;
    return invalid_argument("bench tbe: --backward-variant='", v, "' is not one of ", expected);
  }
  spec->backward_atomic_sgd = v == "atomic_sgd";
  spec->backward_small_sort_tiles = v != "large_sort_tiles";
  spec->backward_sort_histogram_in_linearize = v != "separate_sort_histogram";
  spec->backward_small_batch_short_chunks = v == "small_batch_short_chunks";
  spec->backward_vendor_sort = v == "vendor_sort";
  spec->backward_sort_counts_in_scatter = v == "sort_counts_in_scatter";
  spec->backward_prefetch_state = v != "no_prefetch_state";
  spec->backward_short_chunks = v != "long_chunks";
  spec->time_batched_updates = v == "both" || v == "batched";
  spec->time_row_at_a_time = v != "batched";
  return Status::ok();
}

}  // namespace

std::vector<embedding::FeatureDraw> TbeBenchSpec::feature_draws() const {
  if (!per_feature.empty()) return per_feature;
  const std::size_t features = table_of_feature.empty() ? tables.size() : table_of_feature.size();
  return std::vector<embedding::FeatureDraw>(features, embedding::FeatureDraw{bag_lengths, zipf});
}

double TbeBenchSpec::max_zipf() const {
  double alpha = 0;
  for (const auto& draw : feature_draws()) alpha = std::max(alpha, draw.zipf_alpha);
  return alpha;
}

const std::vector<std::string>& tbe_backward_variant_names() {
  static const std::vector<std::string> names = {"both",          "batched",        "row",
                                                 "atomic_sgd",    "short_chunks",   "long_chunks",
                                                 "prefetch_state", "no_prefetch_state", "large_sort_tiles",
                                                 "small_batch_short_chunks", "separate_sort_histogram",
                                                 "vendor_sort", "sort_counts_in_scatter"};
  return names;
}

std::string tbe_backward_variant_label(const TbeBenchSpec& spec, bool main_batches_row_updates) {
  if (spec.backward_atomic_sgd) return "atomic_sgd";
  if (!spec.backward_prefetch_state) return "no_prefetch_state";
  if (!spec.backward_small_sort_tiles) return "large_sort_tiles";
  if (!spec.backward_sort_histogram_in_linearize) return "separate_sort_histogram";
  if (spec.backward_small_batch_short_chunks) return "small_batch_short_chunks";
  if (spec.backward_vendor_sort) return "vendor_sort";
  if (spec.backward_sort_counts_in_scatter) return "sort_counts_in_scatter";
  if (!spec.backward_short_chunks) return "long_chunks";
  return main_batches_row_updates ? "batched_row_updates" : "row_at_a_time";
}

const std::vector<std::string>& tbe_forward_variant_names() {
  static const std::vector<std::string> names = {
      "auto",           "narrow_rows",       "wide_rows",         "fitted_groups",
      "narrow_rows_deep", "narrow_rows_light", "warp_tile_one_hot", "warp_tile_one_hot_prefetch",
      "warp_tile_short_bags", "warp_tile_short_bags_prefetch", "warp_tile_short_bags_light",
      "wide_rows_dedup", "wide_rows_one_launch", "warp_tile_one_hot_wide_rows", "lane_rows",
      "narrow_rows_split_bags", "warp_tile_one_hot_eight_passes", "auto_feature_major_tiles", "auto_sample_major_tiles"};
  return names;
}

std::string tbe_forward_variant_list_text() {
  std::string text;
  for (const auto& name : tbe_forward_variant_names()) text += (text.empty() ? "" : ", ") + name;
  return text;
}

Result<std::vector<std::string>> parse_tbe_forward_variants(const std::string& list) {
  std::vector<std::string> variants;
  std::size_t begin = 0;
  while (begin <= list.size()) {
    const std::size_t comma = std::min(list.find(',', begin), list.size());
    const std::string name = list.substr(begin, comma - begin);
    const auto& known = tbe_forward_variant_names();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      return invalid_argument("bench tbe: --forward-variant='", list, "': '", name, "' is not one of ",
                              tbe_forward_variant_list_text());
    }
    PARITY_CHECK_ARG(std::find(variants.begin(), variants.end(), name) == variants.end(),
                     "bench tbe: --forward-variant='", list, "': '", name, "' is named twice");
    variants.push_back(name);
    begin = comma + 1;
  }
  return variants;
}

std::vector<std::string> tbe_bench_config_names() {
  return {"C1", "C2", "C3", "C4", "C5", "C6", "C7", "BC", "D1", "D2", "D3", "D4", "D5", "D6", "D7"};
}

Result<TbeBenchSpec> tbe_bench_spec(const std::string& config, const TbeBenchOverrides& overrides,
                                    std::uint64_t seed) {
  const auto& o = overrides;
  TbeBenchSpec spec;
  if (!o.layout_file.empty()) {
    PARITY_CHECK_ARG(config.empty(), "bench tbe: give --config or --layout, not both (got --config='", config,
                     "' --layout='", o.layout_file, "')");
    for (const auto& [flag, value] : {std::pair{"--tables", &o.tables}, std::pair{"--rows", &o.rows},
                                      std::pair{"--dim", &o.dim}, std::pair{"--pooling-factor", &o.bag_lengths}}) {
      PARITY_CHECK_ARG(value->empty(), "bench tbe: ", flag, "='", *value, "' conflicts with --layout (the file gives it)");
    }
    PARITY_ASSIGN_OR_RETURN(spec, read_tbe_layout_file(o.layout_file));
  } else if (config.empty()) {
    PARITY_CHECK_ARG(!o.rows.empty() && !o.dim.empty() && !o.batch.empty(),
                     "bench tbe: give --config C1..C7|BC|D1..D7, --layout FILE or all of --tables --rows --dim --batch "
                     "(got --tables='", o.tables, "' --rows='", o.rows, "' --dim='", o.dim, "' --batch='", o.batch, "')");
  } else if (named_c_config(config, seed, &spec) || named_d_config(config, &spec)) {
    spec.name = config;
  } else {
    return invalid_argument("bench tbe: --config='", config, "' is not one of ", kConfigList);
  }
  if (!o.tables.empty() || !o.rows.empty() || !o.dim.empty()) PARITY_RETURN_IF_ERROR(apply_shape(o, &spec));
  if (!o.batch.empty()) {
    PARITY_ASSIGN_OR_RETURN(spec.batch, parse_int64(o.batch, "bench tbe: --batch", 1, std::int64_t{1} << 30));
  }
  PARITY_CHECK_ARG(spec.batch > 0, "bench tbe: the batch size is not set; give --batch");
  PARITY_RETURN_IF_ERROR(apply_draws(o, &spec));
  PARITY_RETURN_IF_ERROR(apply_types(o, &spec));
  return spec;
}

Result<embedding::TbeProblem> tbe_bench_problem(const TbeBenchSpec& spec) {
  const auto tables =
      spec.aligned_row_strides ? embedding::with_aligned_row_strides(spec.tables, spec.weight_dtype) : spec.tables;
  PARITY_ASSIGN_OR_RETURN(embedding::TbeLayout layout, embedding::TbeLayout::create(tables, spec.table_of_feature));
  embedding::TbeProblem problem{layout};
  problem.batch_size = spec.batch;
  problem.weight_dtype = spec.weight_dtype;
  problem.output_dtype = spec.output_dtype;
  problem.index_dtype = spec.index_dtype;
  problem.pooling = spec.pooling;
  problem.has_per_sample_weights = spec.weighted;
  for (const auto& draw : spec.feature_draws()) {  // the layout's lengths bound every bag it draws
    problem.max_bag_length_hint = std::max<std::int64_t>(problem.max_bag_length_hint, draw.bag_lengths.max_length);
  }
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("bench tbe"));
  embedding::SyntheticBatchOptions options;
  options.batch_size = spec.batch;
  options.hot_rows = spec.hot_rows;
  options.per_feature = spec.feature_draws();
  PARITY_RETURN_IF_ERROR(embedding::validate_synthetic_options(layout, options).with_context("bench tbe"));
  return problem;
}

embedding::SyntheticBatch tbe_bench_batch(const TbeBenchSpec& spec, const embedding::TbeLayout& layout,
                                          std::uint64_t seed) {
  embedding::SyntheticBatchOptions options;
  options.batch_size = spec.batch;
  options.hot_rows = spec.hot_rows;
  options.weighted = spec.weighted;
  options.seed = seed;
  options.per_feature = spec.feature_draws();
  return embedding::make_synthetic_batch(layout, options);
}

}  // namespace parity::bench
