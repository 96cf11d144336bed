// The named TBE bench configurations as data, their overrides and the synthetic batch they build.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "bench/results_json.hpp"
#include "parity/bench/tbe_bench.hpp"

namespace parity::bench {
namespace {

TEST(TbeBenchSpec, NamedConfigurationsHaveTheirShapes) {
  auto c2 = tbe_bench_spec("C2", {}, 1);
  ASSERT_TRUE(c2.is_ok()) << c2.status().to_string();
  EXPECT_EQ(c2->tables.size(), 32u);
  EXPECT_EQ(c2->tables[0].num_rows, 1000000);
  EXPECT_EQ(c2->tables[0].dim, 128);
  EXPECT_EQ(c2->batch, 8192);
  EXPECT_EQ(c2->bag_lengths.describe(), "fixed 20");
  EXPECT_EQ(c2->bad_fraction, 0.0);
  auto bc = tbe_bench_spec("BC", {}, 1);
  ASSERT_TRUE(bc.is_ok());
  EXPECT_EQ(bc->bad_fraction, 0.001);
  auto c3 = tbe_bench_spec("C3", {}, 1);
  ASSERT_TRUE(c3.is_ok());
  EXPECT_EQ(c3->tables.size(), 26u);
  EXPECT_EQ(c3->per_feature.size(), 26u);
  EXPECT_EQ(c3->tables[0].num_rows, 4000000);  // DLRMv2's 40M capped at 4M
  auto c5 = tbe_bench_spec("C5", {}, 3);
  ASSERT_TRUE(c5.is_ok());
  for (const auto& t : c5->tables) {
    EXPECT_GE(t.dim, 64);
    EXPECT_LE(t.dim, 192);
    EXPECT_EQ(t.dim % 4, 0);
  }
  for (const auto& name : tbe_bench_config_names()) EXPECT_TRUE(tbe_bench_spec(name, {}, 1).is_ok()) << name;
}

TEST(TbeBenchSpec, OverridesAndErrorsNameTheFlag) {
  TbeBenchOverrides o;
  o.batch = "64";
  o.backward_variant = "row";
  auto spec = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(spec.is_ok());
  EXPECT_EQ(spec->batch, 64);
  EXPECT_FALSE(spec->time_batched_updates);
  EXPECT_FALSE(spec->backward_atomic_sgd);
  // atomic_sgd: the one backward timed is the atomic SGD kernel (not the batched-update window).
  o.backward_variant = "atomic_sgd";
  auto atomic = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(atomic.is_ok());
  EXPECT_TRUE(atomic->backward_atomic_sgd);
  EXPECT_FALSE(atomic->time_batched_updates);
  o.backward_variant = "short_chunks";
  auto short_chunks = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(short_chunks.is_ok());
  EXPECT_TRUE(short_chunks->backward_short_chunks);
  EXPECT_FALSE(short_chunks->backward_atomic_sgd);
  o.backward_variant = "long_chunks";
  auto long_chunks = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(long_chunks.is_ok());
  EXPECT_FALSE(long_chunks->backward_short_chunks);
  EXPECT_TRUE(long_chunks->backward_small_sort_tiles);
  o.backward_variant = "large_sort_tiles";
  auto large_tiles = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(large_tiles.is_ok());
  EXPECT_FALSE(large_tiles->backward_small_sort_tiles);
  EXPECT_FALSE(large_tiles->backward_small_batch_short_chunks);
  o.backward_variant = "small_batch_short_chunks";
  auto small_batch = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(small_batch.is_ok());
  EXPECT_TRUE(small_batch->backward_small_batch_short_chunks);
  EXPECT_FALSE(small_batch->backward_vendor_sort);
  o.backward_variant = "vendor_sort";
  auto vendor_sort = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(vendor_sort.is_ok());
  EXPECT_TRUE(vendor_sort->backward_vendor_sort);
  EXPECT_EQ(tbe_backward_variant_label(*vendor_sort, false), "vendor_sort");
  EXPECT_EQ(tbe_backward_variant_label(*large_tiles, true), "large_sort_tiles");
  EXPECT_EQ(tbe_backward_variant_label(*small_batch, true), "small_batch_short_chunks");
  EXPECT_TRUE(vendor_sort->backward_small_sort_tiles);
  EXPECT_FALSE(vendor_sort->backward_atomic_sgd);
  EXPECT_FALSE(vendor_sort->backward_sort_counts_in_scatter);
  o.backward_variant = "sort_counts_in_scatter";
  auto counts_in_scatter = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(counts_in_scatter.is_ok());
  EXPECT_TRUE(counts_in_scatter->backward_sort_counts_in_scatter);
  EXPECT_FALSE(counts_in_scatter->backward_vendor_sort);
  EXPECT_EQ(tbe_backward_variant_label(*counts_in_scatter, false), "sort_counts_in_scatter");
  for (const auto& name : tbe_backward_variant_names()) {
    o.backward_variant = name;
    EXPECT_TRUE(tbe_bench_spec("C1", o, 1).is_ok()) << name;
  }
  o.backward_variant = "atomic";
  auto misspelt = tbe_bench_spec("C1", o, 1);
  ASSERT_FALSE(misspelt.is_ok());
  EXPECT_NE(misspelt.status().message().find("--backward-variant='atomic'"), std::string::npos)
      << misspelt.status().message();
  auto unknown = tbe_bench_spec("C9", {}, 1);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("--config='C9'"), std::string::npos);
  TbeBenchOverrides bad;
  bad.zipf = "-0.5";
  auto zipf = tbe_bench_spec("C1", bad, 1);
  ASSERT_FALSE(zipf.is_ok());
  EXPECT_NE(zipf.status().message().find("--zipf='-0.5'"), std::string::npos);
  EXPECT_FALSE(tbe_bench_spec("", {}, 1).is_ok());  // a free configuration needs its shape
}

TEST(TbeBenchSpec, MultiHotBatchConcatenatesFeatures) {
  TbeBenchOverrides o;
  o.batch = "16";
  auto spec = tbe_bench_spec("C3", o, 1);
  ASSERT_TRUE(spec.is_ok());
  auto problem = tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok()) << problem.status().to_string();
  const auto batch = tbe_bench_batch(*spec, problem->layout, 1);
  ASSERT_EQ(batch.offsets.size(), 26u * 16u + 1u);
  std::int64_t expected = 0;
  for (const auto& draw : spec->per_feature) expected += draw.bag_lengths.min_length * 16;
  EXPECT_EQ(batch.offsets.back(), expected);
  EXPECT_EQ(static_cast<std::int64_t>(batch.indices.size()), expected);
}

TEST(TbeBenchSpec, DevelopmentConfigurationsFollowIssue13) {
  using embedding::BagLengthKind;
  using embedding::OptimizerKind;
  using embedding::PoolingMode;
  auto d1 = tbe_bench_spec("D1", {}, 1);
  ASSERT_TRUE(d1.is_ok());
  EXPECT_EQ(d1->tables.size(), 40u);
  EXPECT_EQ(d1->tables[0].dim, 64);
  EXPECT_EQ(d1->bag_lengths.kind, BagLengthKind::kOneHot);
  EXPECT_EQ(d1->weight_dtype, DType::kBF16);
  auto d2 = tbe_bench_spec("D2", {}, 1);
  ASSERT_TRUE(d2.is_ok());
  EXPECT_EQ(d2->bag_lengths.describe(), "uniform 0..10");
  EXPECT_EQ(d2->tables[1].dim, 32);
  auto d3 = tbe_bench_spec("D3", {}, 1);
  ASSERT_TRUE(d3.is_ok());
  EXPECT_TRUE(d3->weighted);
  EXPECT_EQ(d3->optimizer, OptimizerKind::kSgd);
  EXPECT_EQ(d3->zipf, 1.05);
  EXPECT_EQ(d3->weight_dtype, DType::kF16);
  auto d4 = tbe_bench_spec("D4", {}, 1);
  ASSERT_TRUE(d4.is_ok());
  EXPECT_EQ(d4->optimizer, OptimizerKind::kAdam);
  auto d5 = tbe_bench_spec("D5", {}, 1);
  ASSERT_TRUE(d5.is_ok());
  EXPECT_EQ(d5->pooling, PoolingMode::kMean);
  auto d6 = tbe_bench_spec("D6", {}, 1);
  ASSERT_TRUE(d6.is_ok());
  EXPECT_EQ(d6->index_dtype, DType::kI32);
  EXPECT_EQ(d6->zipf, 1.3);
  auto d7 = tbe_bench_spec("D7", {}, 1);
  ASSERT_TRUE(d7.is_ok());
  EXPECT_EQ(d7->zipf, 0.8);
  EXPECT_EQ(d7->tables[0].num_rows, 10000000);
  for (const auto& name : tbe_bench_config_names()) {
    auto spec = tbe_bench_spec(name, {}, 1);
    ASSERT_TRUE(spec.is_ok()) << name;
    auto problem = tbe_bench_problem(*spec);
    EXPECT_TRUE(problem.is_ok()) << name << ": " << problem.status().to_string();
  }
}

TEST(TbeBenchSpec, ListsDtypesPoolingAndWeightsParseStrictly) {
  TbeBenchOverrides o;
  o.tables = "6";
  o.rows = "1000,500";
  o.dim = "16,32,64";
  o.batch = "8";
  o.bag_lengths = "one-hot";
  o.zipf = "0.8";
  o.weighted = true;
  o.weight_dtype = "bf16";
  o.output_dtype = "fp32";
  o.index_dtype = "int32";
  o.optimizer = "rowwise-adagrad";
  auto spec = tbe_bench_spec("", o, 1);
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  ASSERT_EQ(spec->tables.size(), 6u);
  EXPECT_EQ(spec->tables[3].num_rows, 500);
  EXPECT_EQ(spec->tables[4].dim, 32);
  EXPECT_EQ(spec->weight_dtype, DType::kBF16);
  EXPECT_EQ(spec->output_dtype, DType::kF32);
  EXPECT_EQ(spec->index_dtype, DType::kI32);
  EXPECT_EQ(spec->optimizer, embedding::OptimizerKind::kRowwiseAdagrad);
  auto problem = tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok()) << problem.status().to_string();
  EXPECT_TRUE(problem->has_per_sample_weights);
  const auto batch = tbe_bench_batch(*spec, problem->layout, 1);
  EXPECT_EQ(batch.indices.size(), 6u * 8u);  // one-hot
  EXPECT_EQ(batch.per_sample_weights.size(), batch.indices.size());
  // Without --tables, the longest list gives the count.
  TbeBenchOverrides lists;
  lists.rows = "100";
  lists.dim = "16,32,64";
  lists.batch = "4";
  auto three = tbe_bench_spec("", lists, 1);
  ASSERT_TRUE(three.is_ok()) << three.status().to_string();
  EXPECT_EQ(three->tables.size(), 3u);

  struct Case {
    const char* what;
    void (*set)(TbeBenchOverrides&);
    const char* needle;
  };
  const Case cases[] = {
      {"dim 64x", [](TbeBenchOverrides& b) { b.dim = "64x"; }, "--dim='64x'"},
      {"rows list", [](TbeBenchOverrides& b) { b.rows = "10,,20"; }, "--rows='10,,20'"},
      {"rows 4 into 6", [](TbeBenchOverrides& b) { b.rows = "1,2,3,4"; }, "--rows lists 4 values"},
      {"batch", [](TbeBenchOverrides& b) { b.batch = "0"; }, "--batch"},
      {"zipf", [](TbeBenchOverrides& b) { b.zipf = "1.0x"; }, "--zipf='1.0x'"},
      {"pooling", [](TbeBenchOverrides& b) { b.pooling = "max"; }, "--pooling='max'"},
      {"mean+weights", [](TbeBenchOverrides& b) { b.pooling = "mean"; }, "--weighted"},
      {"weights dtype", [](TbeBenchOverrides& b) { b.weight_dtype = "int8"; }, "--weights-dtype='int8'"},
      {"output dtype", [](TbeBenchOverrides& b) { b.output_dtype = "fp64"; }, "--output-dtype='fp64'"},
      {"index dtype", [](TbeBenchOverrides& b) { b.index_dtype = "i16"; }, "--index-dtype='i16'"},
      {"optimizer", [](TbeBenchOverrides& b) { b.optimizer = "lamb"; }, "--optimizer='lamb'"},
      {"bag length", [](TbeBenchOverrides& b) { b.bag_lengths = "5..1"; }, "--pooling-factor='5..1'"},
      {"bad fraction", [](TbeBenchOverrides& b) { b.bad_fraction = "2"; }, "--bad-fraction='2'"},
      {"hot rows", [](TbeBenchOverrides& b) { b.hot_rows = "-3"; }, "--hot-rows"},
  };
  for (const auto& c : cases) {
    TbeBenchOverrides bad = o;
    c.set(bad);
    auto result = tbe_bench_spec("", bad, 1);
    ASSERT_FALSE(result.is_ok()) << c.what;
    EXPECT_NE(result.status().message().find(c.needle), std::string::npos) << c.what << ": " << result.status().message();
  }
}

// Row-size classes, and a mixed layout's target as the bytes-weighted harmonic mean.
TEST(TbeBenchReport, TargetsByRowBytesAndBothByteModels) {
  EXPECT_EQ(tbe_forward_target_fraction(512), 0.70);
  EXPECT_EQ(tbe_forward_target_fraction(256), 0.70);
  EXPECT_EQ(tbe_forward_target_fraction(255), 0.60);
  EXPECT_EQ(tbe_forward_target_fraction(129), 0.60);
  EXPECT_EQ(tbe_forward_target_fraction(128), 0.50);
  EXPECT_EQ(tbe_forward_target_fraction(32), 0.50);
  TbeBenchOverrides o;
  o.rows = "1000";
  o.dim = "32,128";  // fp32 rows of 128 B (target 0.5) and 512 B (target 0.7)
  o.batch = "4";
  o.zipf = "1.2";
  auto spec = tbe_bench_spec("", o, 1);
  ASSERT_TRUE(spec.is_ok());
  auto problem = tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok());
  problem->num_indices = 200;
  embedding::TbeByteModel bytes;
  bytes.forward_bytes = 2e9;
  bytes.forward_unique_rows_bytes = 1e9;
  // 100 lookups each: 12800 B of 128-B rows, 51200 B of 512-B rows.
  const auto fwd = evaluate_tbe_forward(*problem, *spec, bytes, {100, 100}, 1.0, 4.0);
  EXPECT_DOUBLE_EQ(fwd.every_lookup_tbps, 2.0);
  EXPECT_DOUBLE_EQ(fwd.unique_rows_tbps, 1.0);
  EXPECT_DOUBLE_EQ(fwd.every_lookup_ratio, 0.5);
  EXPECT_DOUBLE_EQ(fwd.unique_rows_ratio, 0.25);
  EXPECT_NEAR(fwd.target_fraction, 64000.0 / (12800.0 / 0.5 + 51200.0 / 0.7), 1e-12);
  EXPECT_TRUE(fwd.counts_unique_rows);  // alpha 1.2 > 1.05
  EXPECT_FALSE(fwd.target_met);         // 25% < ~64%
  EXPECT_NE(fwd.describe().find("NOT met"), std::string::npos);
  const auto no_copy = evaluate_tbe_forward(*problem, *spec, bytes, {100, 100}, 1.0, 0.0);
  EXPECT_FALSE(no_copy.target_met);
}

// Every named configuration's CPU half at a small batch: the batch has the spec's bag lengths
// per feature, indices inside their tables, and weights exactly when the spec is weighted.
TEST(TbeBenchSpec, EveryConfigurationBuildsItsBatch) {
  TbeBenchOverrides o;
  o.batch = "16";
  for (const auto& name : tbe_bench_config_names()) {
    auto spec = tbe_bench_spec(name, o, 1);
    ASSERT_TRUE(spec.is_ok()) << name;
    auto problem = tbe_bench_problem(*spec);
    ASSERT_TRUE(problem.is_ok()) << name << ": " << problem.status().to_string();
    const auto batch = tbe_bench_batch(*spec, problem->layout, 1);
    const auto draws = spec->feature_draws();
    ASSERT_EQ(batch.offsets.size(), static_cast<std::size_t>(problem->layout.num_features()) * 16 + 1) << name;
    for (int f = 0; f < problem->layout.num_features(); ++f) {
      for (std::int64_t b = 0; b < 16; ++b) {
        const std::size_t bag = static_cast<std::size_t>(f) * 16 + static_cast<std::size_t>(b);
        const std::int64_t length = batch.offsets[bag + 1] - batch.offsets[bag];
        ASSERT_GE(length, draws[f].bag_lengths.min_length) << name << " feature " << f;
        ASSERT_LE(length, draws[f].bag_lengths.max_length) << name << " feature " << f;
        for (std::int64_t p = batch.offsets[bag]; p < batch.offsets[bag + 1]; ++p) {
          ASSERT_GE(batch.indices[static_cast<std::size_t>(p)], 0) << name;
          ASSERT_LT(batch.indices[static_cast<std::size_t>(p)], problem->layout.feature_rows(f)) << name;
        }
      }
    }
    EXPECT_EQ(batch.per_sample_weights.size(), spec->weighted ? batch.indices.size() : 0u) << name;
  }
}

// --forward-variant: a comma list of known kernel names, each once; errors name the flag, the
// list and the entry.
TEST(TbeBenchSpec, ForwardVariantListParsesStrictly) {
  const auto both = parse_tbe_forward_variants("warp_tile_one_hot,narrow_rows");
  ASSERT_TRUE(both.is_ok()) << both.status().to_string();
  EXPECT_EQ(*both, (std::vector<std::string>{"warp_tile_one_hot", "narrow_rows"}));
  const auto every = tbe_forward_variant_names();
  std::string all;
  for (const auto& name : every) all += (all.empty() ? "" : ",") + name;
  ASSERT_TRUE(parse_tbe_forward_variants(all).is_ok());
  EXPECT_EQ(parse_tbe_forward_variants(all)->size(), every.size());
  for (const auto& [list, needle] : {std::pair<std::string, std::string>{"fast", "'fast' is not one of auto"},
                                     {"narrow_rows,", "'' is not one of"},
                                     {"", "'' is not one of"},
                                     {"auto,auto", "'auto' is named twice"},
                                     {"narrow_rows, auto", "' auto' is not one of"}}) {
    const auto parsed = parse_tbe_forward_variants(list);
    ASSERT_FALSE(parsed.is_ok()) << list;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << list;
    EXPECT_NE(parsed.status().message().find("--forward-variant='" + list + "'"), std::string::npos)
        << parsed.status().message();
    EXPECT_NE(parsed.status().message().find(needle), std::string::npos) << parsed.status().message();
  }
}

// The results-file fragments `bench tbe` writes: one entry per feature (t<N> without layout
// names), and the forward bandwidth with the evaluated byte model and the copy it is compared to.
TEST(TbeBenchSpec, ResultsFragmentsNameFeaturesAndTheEvaluatedModel) {
  auto spec = tbe_bench_spec("C1", {}, 1);
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  auto problem = tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok()) << problem.status().to_string();
  const nlohmann::json features = tbe_feature_draws_json(*spec, problem->layout);
  ASSERT_EQ(features.size(), static_cast<std::size_t>(problem->layout.num_features()));
  EXPECT_EQ(features[0]["table"], "t0");
  EXPECT_EQ(features[0]["rows"], problem->layout.tables()[0].num_rows);
  EXPECT_EQ(features[0]["dim"], problem->layout.tables()[0].dim);

  TbeForwardBandwidth forward;
  forward.every_lookup_tbps = 2.0;
  forward.copy_tbps = 4.0;
  forward.every_lookup_ratio = 0.5;
  forward.evaluated_ratio = 0.5;
  forward.target_fraction = 0.7;
  HbmMeasurement copy;
  copy.total_bytes = 1024;
  copy.kernel.method = "copy_kernel_vectorized_16B";
  copy.kernel.median_tbps = 4.0;
  copy.kernel.stats.median_ms = 0.25;
  const nlohmann::json bandwidth = tbe_forward_bandwidth_json(forward, copy);
  EXPECT_EQ(bandwidth["evaluated_byte_model"], "every_lookup");
  EXPECT_EQ(bandwidth["copy_method"], "copy_kernel_vectorized_16B");
  EXPECT_EQ(bandwidth["copy_total_bytes"], 1024);
  EXPECT_DOUBLE_EQ(bandwidth["copy_median_ms"].get<double>(), 0.25);
  EXPECT_EQ(bandwidth["target_met"], false);
}

}  // namespace
}  // namespace parity::bench
