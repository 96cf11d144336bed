// `parity bench attention`'s CPU side: the named configurations, the overrides and their errors,
// and the drawn jagged inputs (ranges, offsets, seeding).
#include <gtest/gtest.h>

#include <cmath>

#include "common/test_support.hpp"
#include "parity/bench/attention_bench.hpp"

namespace parity::bench {
namespace {

using attention::AttentionKind;

TEST(AttentionBench, ForwardVariantNamesAreChecked) {
  EXPECT_TRUE(check_attention_forward_variants({}).is_ok());
  EXPECT_TRUE(
      check_attention_forward_variants({"attention_forward_gpu", "attention_forward_gpu_rows128"}).is_ok());
  const Status unknown = check_attention_forward_variants({"attention_forward_gpu", "rows128"});
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("forward variant: 'rows128' is not one of attention_forward_cpu_openmp, "
                                   "attention_forward_gpu_wgmma_tma_pair_walk, "
                                   "attention_forward_gpu_wgmma_tma_seq, attention_forward_gpu_wgmma_ws, "
                                   "attention_forward_gpu_wgmma, attention_forward_gpu_rows128, "
                                   "attention_forward_gpu"),
            std::string::npos)
      << unknown.to_string();
}

TEST(AttentionBench, BackwardVariantNamesAreChecked) {
  EXPECT_TRUE(check_attention_backward_variants({}).is_ok());
  EXPECT_TRUE(
      check_attention_backward_variants({"attention_backward_gpu", "attention_backward_gpu_wgmma"}).is_ok());
  const Status unknown = check_attention_backward_variants({"attention_backward_gpu", "wgmma"});
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unknown.message().find("backward variant: 'wgmma' is not one of attention_backward_cpu_openmp, "
                                   "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq, "
                                   "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh, "
                                   "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh, "
                                   "attention_backward_gpu_wgmma_ws_dqtma_pair_walk, "
                                   "attention_backward_gpu_wgmma_ws_dqtma, attention_backward_gpu_wgmma, "
                                   "attention_backward_gpu, attention_backward_gpu_wgmma_ring, "
                                   "attention_backward_gpu_wgmma_ws"),
            std::string::npos)
      << unknown.to_string();
}

TEST(AttentionBench, NamedConfigurationsFollowTheMemo) {
  for (const auto& name : attention_bench_config_names()) {
    auto cases = attention_bench_cases(name, {});
    ASSERT_TRUE(cases.is_ok()) << name << ": " << cases.status().to_string();
    EXPECT_FALSE(cases->empty()) << name;
  }
  auto h1 = attention_bench_cases("H1", {});
  ASSERT_TRUE(h1.is_ok());
  ASSERT_EQ(h1->size(), 5u);
  EXPECT_EQ(h1->front().problem.max_seq_len, 256);
  EXPECT_EQ(h1->back().problem.max_seq_len, 4096);
  EXPECT_EQ(h1->back().problem.batch, 512);
  EXPECT_EQ(h1->back().problem.heads, 4);
  EXPECT_EQ(h1->back().problem.dim_qk, 128);
  EXPECT_EQ(h1->back().max_targets, 20);
  EXPECT_TRUE(h1->back().problem.causal);
  auto targets = attention_bench_cases("targets", {});
  ASSERT_TRUE(targets.is_ok());
  ASSERT_EQ(targets->size(), 4u);
  EXPECT_EQ((*targets)[0].problem.kind, AttentionKind::kHstu);
  EXPECT_EQ((*targets)[3].problem.kind, AttentionKind::kSoftmax);
  EXPECT_EQ((*targets)[3].problem.max_seq_len, 4096);
  auto h2 = attention_bench_cases("H2", {});
  ASSERT_TRUE(h2.is_ok());
  EXPECT_EQ((*h2)[2].problem.max_attn_len, 256);
  EXPECT_EQ((*h2)[2].problem.min_full_attn_len, 32);
}

TEST(AttentionBench, OverridesAndTheirErrors) {
  AttentionBenchOverrides o;
  o.seq_lens = {1024};
  o.dim_qk = 64;
  o.dim_v = 256;
  auto cases = attention_bench_cases("J1", o);
  ASSERT_TRUE(cases.is_ok()) << cases.status().to_string();
  ASSERT_EQ(cases->size(), 1u);
  EXPECT_EQ(cases->front().problem.max_seq_len, 1024);
  EXPECT_EQ(cases->front().problem.dim_qk, 64);
  EXPECT_EQ(cases->front().problem.dim_v, 256);

  auto unknown = attention_bench_cases("H9", {});
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("--config: 'H9' is not one of H1, H2, J1, G1, targets"), std::string::npos);
  auto free_without_kind = attention_bench_cases("", {});
  ASSERT_FALSE(free_without_kind.is_ok());
  EXPECT_NE(free_without_kind.status().message().find("--kind"), std::string::npos);
  AttentionBenchOverrides bad;
  bad.dtype = "fp32";
  EXPECT_EQ(attention_bench_cases("H1", bad).status().code(), StatusCode::kInvalidArgument);
  bad = {};
  bad.max_targets = 5;
  auto softmax_targets = attention_bench_cases("J1", bad);
  ASSERT_FALSE(softmax_targets.is_ok());
  EXPECT_NE(softmax_targets.status().message().find("--max-targets: 5"), std::string::npos);
  bad = {};
  bad.dim_qk = 300;
  auto wide = attention_bench_cases("H1", bad);
  ASSERT_FALSE(wide.is_ok());
  EXPECT_NE(wide.status().message().find("dim_qk: 300 is out of range"), std::string::npos);
}

TEST(AttentionBench, InputsAreJaggedInTheRequestedRanges) {
  const std::uint64_t seed = parity::testing::test_seed(15201);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  auto cases = attention_bench_cases("targets", {});
  ASSERT_TRUE(cases.is_ok());
  const AttentionBenchCase& c = cases->front();  // HSTU N=2048, targets U[1, 20]
  auto in = attention_bench_inputs(c, seed);
  ASSERT_TRUE(in.is_ok()) << in.status().to_string();
  const std::int64_t n = c.problem.max_seq_len;
  const auto low = static_cast<std::int64_t>(std::ceil(0.9 * static_cast<double>(n)));
  ASSERT_EQ(in->q_lengths.size(), 512u);
  ASSERT_EQ(in->num_targets.size(), 512u);
  for (std::size_t b = 0; b < in->q_lengths.size(); ++b) {
    EXPECT_GE(in->q_lengths[b], low);
    EXPECT_LT(in->q_lengths[b], n);
    EXPECT_EQ(in->q_offsets[b + 1] - in->q_offsets[b], in->q_lengths[b]);
    EXPECT_GE(in->num_targets[b], 1);
    EXPECT_LE(in->num_targets[b], 20);
  }
  EXPECT_EQ(in->problem.total_q, in->q_offsets.back());
  EXPECT_TRUE(in->problem.has_num_targets);
  auto again = attention_bench_inputs(c, seed);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->q_lengths, in->q_lengths);
  EXPECT_EQ(again->num_targets, in->num_targets);
}

TEST(AttentionBench, G1CrossAttentionHasSixtyFourKeysPerSequence) {
  auto cases = attention_bench_cases("G1", {});
  ASSERT_TRUE(cases.is_ok());
  const AttentionBenchCase* cross = nullptr;
  for (const auto& c : *cases) {
    if (c.problem.cross) cross = &c;
  }
  ASSERT_NE(cross, nullptr);
  auto in = attention_bench_inputs(*cross, 3);
  ASSERT_TRUE(in.is_ok()) << in.status().to_string();
  EXPECT_EQ(in->problem.total_kv, 64 * in->problem.batch);
  EXPECT_FALSE(in->problem.causal);
  EXPECT_EQ(in->kv_offsets.back(), in->problem.total_kv);
}

TEST(AttentionBench, RequestIsValidatedBeforeAnyDevice) {
  AttentionBenchRequest request;
  EXPECT_TRUE(validate_attention_bench_request(request).is_ok());
  request.checked_rows = 0;
  EXPECT_EQ(validate_attention_bench_request(request).message(), "bench attention: --check-rows=0 must be >= 1");
  request.checked_rows = 1;
  request.backward_variants = {"no_such_backward"};
  EXPECT_NE(validate_attention_bench_request(request).message().find("'no_such_backward'"), std::string::npos);
  request.backward_variants.clear();
  request.timing.repetitions = 0;
  EXPECT_EQ(validate_attention_bench_request(request).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace parity::bench
