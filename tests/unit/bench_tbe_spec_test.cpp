// The named TBE bench configurations as data, their overrides and the synthetic batch they build.
#include <gtest/gtest.h>

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
  EXPECT_EQ(c2->pooling_factor, 20);
  EXPECT_EQ(c2->bad_fraction, 0.0);
  auto bc = tbe_bench_spec("BC", {}, 1);
  ASSERT_TRUE(bc.is_ok());
  EXPECT_EQ(bc->bad_fraction, 0.001);
  auto c3 = tbe_bench_spec("C3", {}, 1);
  ASSERT_TRUE(c3.is_ok());
  EXPECT_EQ(c3->tables.size(), 26u);
  EXPECT_EQ(c3->pooling_per_table.size(), 26u);
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
  o.batch = 64;
  o.backward_variant = "row";
  auto spec = tbe_bench_spec("C1", o, 1);
  ASSERT_TRUE(spec.is_ok());
  EXPECT_EQ(spec->batch, 64);
  EXPECT_FALSE(spec->time_batched_updates);
  auto unknown = tbe_bench_spec("C9", {}, 1);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("--config='C9'"), std::string::npos);
  TbeBenchOverrides bad;
  bad.zipf = 0.5;
  auto zipf = tbe_bench_spec("C1", bad, 1);
  ASSERT_FALSE(zipf.is_ok());
  EXPECT_NE(zipf.status().message().find("--zipf=0.5"), std::string::npos);
  EXPECT_FALSE(tbe_bench_spec("", {}, 1).is_ok());  // a free configuration needs its shape
}

TEST(TbeBenchSpec, MultiHotBatchConcatenatesFeatures) {
  TbeBenchOverrides o;
  o.batch = 16;
  auto spec = tbe_bench_spec("C3", o, 1);
  ASSERT_TRUE(spec.is_ok());
  auto problem = tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok()) << problem.status().to_string();
  const auto batch = tbe_bench_batch(*spec, problem->layout, 1);
  ASSERT_EQ(batch.offsets.size(), 26u * 16u + 1u);
  std::int64_t expected = 0;
  for (int hot : spec->pooling_per_table) expected += hot * 16;
  EXPECT_EQ(batch.offsets.back(), expected);
  EXPECT_EQ(static_cast<std::int64_t>(batch.indices.size()), expected);
}

}  // namespace
}  // namespace parity::bench
