// GPU jagged attention backward kernels against the fp64 reference: the deterministic backward
// (bitwise repeatable, and the wgmma one on the edge cases), each backward variant by name on
// every mask case, jagged lengths around both kv tiles, both 16-bit dtypes and GDPA cross
// attention, the wgmma backward on many sequences, and the reasons it refuses problems. The
// forward: attention_gpu_forward_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "backend/attention_gpu_common.hpp"
#include "backends/gpu/attention/attention_launch.hpp"
#include "common/test_support.hpp"

namespace parity::attention {
namespace {

using gpu_testing::expect_error;
using gpu_testing::expect_gpu_matches_reference;
using gpu_testing::kTile;
using gpu_testing::kTile128;
using gpu_testing::problem_of;
using gpu_testing::backward_variant_named;
using gpu_testing::GpuOutputs;
using gpu_testing::run_gpu;
using testing::JaggedCase;
using testing::make_case;

// Each backward that takes the deterministic mode (mma.sync; wgmma where it runs), by name.
TEST(AttentionGpu, DeterministicBackwardIsBitwiseRepeatable) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15207);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (const char* variant :
       {"attention_backward_gpu", "attention_backward_gpu_wgmma", "attention_backward_gpu_wgmma_ws",
        "attention_backward_gpu_wgmma_ws_dqtma", "attention_backward_gpu_wgmma_ws_dqtma_pair_walk",
        "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh",
        "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh",
        "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq"}) {
    for (int dim : {64, 128}) {
      for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
        SCOPED_TRACE(std::string(variant) + " d " + std::to_string(dim) + " " +
                     std::string(attention_kind_name(kind)));
        const JaggedCase c =
            make_case(problem_of(kind, 2, dim, 400), {390, 70, 200}, {}, {}, seed);
        AttentionProblem deterministic = c.problem;
        deterministic.deterministic = true;
        ExecutionContext gpu_context;
        gpu_context.device = DeviceKind::kGpu;
        const auto runnable = backward_variant_named(variant, deterministic, gpu_context);
        if (!runnable.is_ok()) {  // the wgmma backward off sm_90a; any other refusal is a defect
          EXPECT_EQ(runnable.status().code(), StatusCode::kUnsupported) << runnable.status().to_string();
          std::printf("skipped %s: %s\n", variant, runnable.status().to_string().c_str());
          continue;
        }
        const GpuOutputs first = run_gpu(c, true, true, nullptr, variant);
        const GpuOutputs second = run_gpu(c, true, true, nullptr, variant);
        EXPECT_EQ(first.grad_q, second.grad_q);
        EXPECT_EQ(first.grad_k, second.grad_k);
        EXPECT_EQ(first.grad_v, second.grad_v);
        // dK and dV do not depend on the mode (no cross-block sums); dQ differs only in the
        // order of the fp32 sums, both within the reference bounds (checked below and by the
        // other tests).
        const GpuOutputs atomic = run_gpu(c, true, false, nullptr, variant);
        EXPECT_EQ(first.grad_k, atomic.grad_k);
        EXPECT_EQ(first.grad_v, atomic.grad_v);
      }
    }
  }
}

// The wgmma backwards with dQ split by columns (every schedule of the warp-specialized ones).
constexpr const char* kWgmmaBackwards[] = {
    "attention_backward_gpu_wgmma", "attention_backward_gpu_wgmma_ws",
    "attention_backward_gpu_wgmma_ws_dqtma", "attention_backward_gpu_wgmma_ws_dqtma_pair_walk",
    "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh",
    "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh",
    "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq"};

// The deterministic wgmma backwards against the fp64 reference on the edge cases (the lockstep
// kernel's dQ path differs from its atomic mode's: both warpgroups' dS^T, split by columns).
TEST(AttentionGpu, DeterministicWgmmaBackwardMatchesReference) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15208);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem probe = problem_of(AttentionKind::kHstu, 2, 128, 300);
  probe.batch = 2;
  probe.total_q = probe.total_kv = 100;
  const Status runnable = gpu::can_implement_backward(probe, gpu::BackwardKernel::kWgmma);
  if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  for (const char* variant : kWgmmaBackwards) {
    for (int dim : {64, 128}) {
      for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
        SCOPED_TRACE(std::string(variant) + " d " + std::to_string(dim) + " " +
                     std::string(attention_kind_name(kind)));
        AttentionProblem p = problem_of(kind, 2, dim, 300);
        p.deterministic = true;
        expect_gpu_matches_reference(
            make_case(p, {0, 1, 127, 129, 63, 65, 128, 257, 300}, {}, {}, seed), true, nullptr,
            variant);
        p.max_attn_len = 40;  // a window: kv tiles whose one half is hidden from a q tile
        p.contextual_len = 5;
        expect_gpu_matches_reference(make_case(p, {290, 70}, {}, {}, seed + 1), true, nullptr,
                                     variant);
      }
    }
  }
}

// ---- the backward kernels by name: attention_backward_gpu (mma.sync, 64 kv rows a block) and
// attention_backward_gpu_wgmma (Hopper wgmma, sm_90a, 128 kv rows a block) ----
// Same bounds as above: both round P and dS to the element type before the products and sum in
// fp32, in another order and tile shape. The wgmma backward takes d_qk = d_v in {64, 128} and is
// skipped where it cannot run (no GPU, not sm_90a: the reason is printed). The forward is the
// op's choice. Lengths straddle both kernels' kv tiles (64 and 128) and the q tile (64).

constexpr const char* kBackwardMma = "attention_backward_gpu";
constexpr const char* kBackwardWgmma = "attention_backward_gpu_wgmma";
constexpr const char* kBackwardWgmmaWs = "attention_backward_gpu_wgmma_ws";
constexpr const char* kBackwardWgmmaWsDqTma = "attention_backward_gpu_wgmma_ws_dqtma";
constexpr const char* kBackwardWgmmaWsDqTmaPairWalk = "attention_backward_gpu_wgmma_ws_dqtma_pair_walk";
// SiLU / sigmoid through tanh.approx: the reference bounds add its error
// (attention_gpu_common.cpp).
constexpr const char* kBackwardWgmmaWsDqTmaPairWalkTanh =
    "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh";
// The same with the next kv tile's K/V prefetched into L2, no dQ wait between kv tiles and dK / dV
// through shared memory.
constexpr const char* kBackwardWgmmaWsDqTmaPairWalkOverlapTanh =
    "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh";
// The same converting dQ to 16 bits in the kernel (each (sequence, head)'s last block converts its
// rows), no separate pass; the default: every edge case below also checks that rows no kv tile
// reaches get zeros.
constexpr const char* kBackwardWgmmaWsDqTmaPairWalkOverlapTanhFusedDq =
    "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq";

class AttentionGpuBackward : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    PARITY_REQUIRE_GPU();
    if (std::string(GetParam()) == kBackwardMma) return;
    AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 128, 300);
    p.batch = 2;
    p.total_q = p.total_kv = 100;
    const Status runnable = gpu::can_implement_backward(p, gpu::BackwardKernel::kWgmma);
    if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  }
  void expect_matches(const JaggedCase& c) const {
    expect_gpu_matches_reference(c, true, nullptr, GetParam());
  }
};

INSTANTIATE_TEST_SUITE_P(BackwardVariants, AttentionGpuBackward,
                         ::testing::Values(kBackwardMma, kBackwardWgmma, kBackwardWgmmaWs,
                                           kBackwardWgmmaWsDqTma, kBackwardWgmmaWsDqTmaPairWalk,
                                           kBackwardWgmmaWsDqTmaPairWalkTanh,
                                           kBackwardWgmmaWsDqTmaPairWalkOverlapTanh,
                                           kBackwardWgmmaWsDqTmaPairWalkOverlapTanhFusedDq),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           const std::string name = param_info.param;
                           if (name == kBackwardMma) return std::string("mma_sync");
                           return name.substr(std::string("attention_backward_gpu_").size());
                         });

TEST_P(AttentionGpuBackward, HstuLengthsTargetsAndDtypes) {
  const std::uint64_t seed = parity::testing::test_seed(15221);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      const AttentionProblem p = problem_of(AttentionKind::kHstu, 2, dim, 300, dtype);
      // Lengths 0, 1, 127, 129, both kv tiles +- 1, 2 tiles + 1; targets 0, 1, longer than the
      // sequence.
      expect_matches(make_case(p,
                               {0, 1, 127, 129, kTile128 - 1, kTile128 + 1, kTile128,
                                2 * kTile128 + 1, kTile - 1, kTile + 1},
                               {}, {3, 0, 1, 20, 300, 5, 64, 0, 2, 1}, seed));
      expect_matches(make_case(p, {257, 2, kTile128, kTile, 300}, {}, {}, seed + 1));
    }
  }
}

TEST_P(AttentionGpuBackward, ContextualWindowNonCausalAndLongN) {
  const std::uint64_t seed = parity::testing::test_seed(15222);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (int dim : {64, 128}) {
    SCOPED_TRACE("d " + std::to_string(dim));
    AttentionProblem p = problem_of(AttentionKind::kHstu, 2, dim, 300);
    p.contextual_len = 10;
    expect_matches(make_case(p, {40, 5, 0, 290, 9}, {}, {4, 1, 0, 12, 3}, seed));
    p.contextual_len = 0;
    p.max_attn_len = 16;  // windows narrower than a q tile, and wider than a kv tile
    expect_matches(make_case(p, {270, 3}, {}, {}, seed + 1));
    p.max_attn_len = 150;
    p.min_full_attn_len = 8;
    p.contextual_len = 10;
    expect_matches(make_case(p, {280, 30}, {}, {5, 2}, seed + 2));
    p = problem_of(AttentionKind::kHstu, 2, dim, 300);
    p.causal = false;
    expect_matches(make_case(p, {200, 7, 64}, {}, {3, 1, 0}, seed + 3));
    // N longer than every sequence (the 1/N scale).
    expect_matches(
        make_case(problem_of(AttentionKind::kHstu, 2, dim, 1000), {30, 130}, {}, {}, seed + 4));
  }
}

TEST_P(AttentionGpuBackward, SoftmaxCausalNonCausalAndTruncation) {
  const std::uint64_t seed = parity::testing::test_seed(15223);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      AttentionProblem p = problem_of(AttentionKind::kSoftmax, 2, dim, 200, dtype);
      expect_matches(  // cut at 200: kv rows past the cut get zero gradients
          make_case(p, {0, 1, 127, kTile128 + 1, kTile128 - 1, 330, kTile - 1, kTile, kTile + 1},
                    {}, {}, seed));
      p.causal = false;
      expect_matches(make_case(p, {129, 5, 64}, {}, {}, seed + 1));
      p.causal = true;  // with targets
      expect_matches(make_case(p, {150, 40, 1}, {}, {7, 0, 1}, seed + 2));
    }
  }
}

TEST_P(AttentionGpuBackward, GdpaCrossAttentionActivations) {
  const std::uint64_t seed = parity::testing::test_seed(15224);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  // relu's derivative jumps at 0, where an fp32 and an fp64 score may fall on different sides.
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu,
                          PointwiseActivation::kSigmoid}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = problem_of(AttentionKind::kGdpa, 2, 64, 260);
    p.activation = activation;
    p.causal = false;
    expect_matches(make_case(p, {257, 0, 40, 3}, {64, 129, 1, 0}, {}, seed));
  }
}

// 70 sequences x 4 heads = 280 (sequence, head) pairs fill an H200's 132 SMs twice, so the default
// (not deterministic) wgmma backward takes the walking schedule there; on smaller devices it still
// runs, one block per kv tile. Either way against the fp64 reference.
TEST(AttentionGpu, WgmmaBackwardOnManySequences) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15216);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (const AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
    const AttentionProblem p = problem_of(kind, 4, 64, 300);
    AttentionProblem probe = p;
    probe.batch = 2;
    probe.total_q = probe.total_kv = 100;
    const Status runnable = gpu::can_implement_backward(probe, gpu::BackwardKernel::kWgmma);
    if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
    const std::int64_t cycle[] = {129, 300, 0, 257, 1, 200, 130};
    std::vector<std::int64_t> lengths;
    for (int b = 0; b < 70; ++b) lengths.push_back(cycle[b % 7]);
    for (const char* variant : kWgmmaBackwards) {
      SCOPED_TRACE(variant);
      expect_gpu_matches_reference(make_case(p, lengths, {}, {}, seed), true, nullptr, variant);
    }
  }
}

// The fused dQ conversion changes neither the adds nor their rounding: in the deterministic mode
// (adds in kv-tile order) its outputs equal the overlapped kernel's with the separate pass, bit for
// bit, on mask cases whose q rows get no add, one or many (every row of a pair is converted).
TEST(AttentionGpu, FusedDqConversionIsBitwiseTheSeparatePass) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15209);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  constexpr const char* kSeparate = "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh";
  constexpr const char* kFused =
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq";
  for (int dim : {64, 128}) {
    for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
      SCOPED_TRACE("d " + std::to_string(dim) + " " + std::string(attention_kind_name(kind)));
      AttentionProblem p = problem_of(kind, 2, dim, 300);
      p.deterministic = true;
      std::vector<JaggedCase> cases;
      cases.push_back(make_case(p, {0, 1, 127, 129, 63, 65, 128, 257, 300, 330}, {},
                                {0, 1, 3, 0, 64, 5, 0, 20, 300, 2}, seed));
      p.max_attn_len = 40;
      p.contextual_len = 5;
      cases.push_back(make_case(p, {290, 70, 1}, {}, {}, seed + 1));
      ExecutionContext gpu_context;
      gpu_context.device = DeviceKind::kGpu;
      // Asked with a case's problem (batch and totals set): only a device without the kernel skips.
      const auto runnable = backward_variant_named(kFused, cases.front().problem, gpu_context);
      if (!runnable.is_ok()) {
        ASSERT_EQ(runnable.status().code(), StatusCode::kUnsupported) << runnable.status().to_string();
        GTEST_SKIP() << runnable.status().to_string();
      }
      for (const JaggedCase& c : cases) {
        const GpuOutputs separate = run_gpu(c, true, true, nullptr, kSeparate);
        const GpuOutputs fused = run_gpu(c, true, true, nullptr, kFused);
        EXPECT_EQ(separate.grad_q, fused.grad_q);
        EXPECT_EQ(separate.grad_k, fused.grad_k);
        EXPECT_EQ(separate.grad_v, fused.grad_v);
      }
    }
  }
}

TEST(AttentionGpu, WgmmaBackwardRefusesWithReasons) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 2048);
  p.batch = 2;
  p.total_q = p.total_kv = 100;
  // Head dims and mode first (no device needed), then the device and binary.
  AttentionProblem mixed = p;
  mixed.dim_v = 64;
  EXPECT_TRUE(gpu::can_implement_backward(mixed, gpu::BackwardKernel::kMmaSync).is_ok());
  for (const auto kernel : {gpu::BackwardKernel::kWgmma, gpu::BackwardKernel::kWgmmaWs,
                            gpu::BackwardKernel::kWgmmaWsTmaReduce,
                            gpu::BackwardKernel::kWgmmaWsTmaReducePairWalk,
                            gpu::BackwardKernel::kWgmmaWsTmaReducePairWalkOverlapTanh,
                            gpu::BackwardKernel::kWgmmaWsTmaReducePairWalkOverlapTanhFusedGradQ}) {
    expect_error(gpu::can_implement_backward(mixed, kernel), StatusCode::kUnsupported, "d_v=64");
  }
  AttentionProblem wide = p;
  wide.dim_qk = wide.dim_v = 256;
  expect_error(gpu::can_implement_backward(wide, gpu::BackwardKernel::kWgmma),
               StatusCode::kUnsupported, "d_qk=256");
  // The ring schedule is disabled (wrong dV on some masks): it refuses every problem.
  expect_error(gpu::can_implement_backward(p, gpu::BackwardKernel::kWgmmaRing),
               StatusCode::kUnsupported, "disabled");
  // Deterministic mode: the lockstep schedule has it.
  AttentionProblem deterministic = p;
  deterministic.deterministic = true;
  EXPECT_TRUE(gpu::can_implement_backward(deterministic, gpu::BackwardKernel::kMmaSync).is_ok());
  const Status lockstep = gpu::can_implement_backward(deterministic, gpu::BackwardKernel::kWgmma);
  EXPECT_EQ(lockstep.message().find("deterministic"), std::string::npos) << lockstep.to_string();
}
}  // namespace
}  // namespace parity::attention
