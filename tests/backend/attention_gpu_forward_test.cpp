// GPU jagged attention forward kernels against the fp64 reference: through the op's GPU slots
// (forward and the op's backward) on every mask case, jagged lengths 0/1/127/129 and tile +- 1,
// head dims, both 16-bit dtypes, GDPA cross attention and guard bands; the 128-row and Hopper
// wgmma forward variants by name on the same cases; and the reasons the kernels give for what
// they do not run, and bad arguments. The backward variants: attention_gpu_backward_test.cpp.
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
using gpu_testing::upload;
using testing::JaggedCase;
using testing::make_case;

TEST(AttentionGpu, HstuJaggedLengthsAndTargets) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15201);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    const AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 64, 200, dtype);
    // Lengths 0, 1, 127, 129, the tile +- 1 and 2 tiles + 1; num_targets 0, 1, longer than the
    // sequence.
    expect_gpu_matches_reference(
        make_case(p, {0, 1, 127, 129, kTile - 1, kTile + 1, kTile, 2 * kTile + 1}, {},
                  {3, 0, 1, 20, 200, 5, 64, 0}, seed));
    expect_gpu_matches_reference(make_case(p, {129, 2, kTile}, {}, {}, seed + 1));
  }
}

TEST(AttentionGpu, HstuContextualWindowAndNonCausal) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15202);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 64, 300);
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {40, 5, 0, 290, 9}, {}, {4, 1, 0, 12, 3}, seed));
  p.contextual_len = 0;
  p.max_attn_len = 16;  // windows narrower and wider than a tile
  expect_gpu_matches_reference(make_case(p, {270, 3}, {}, {}, seed + 1));
  p.max_attn_len = 100;
  p.min_full_attn_len = 8;
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {280, 30}, {}, {5, 2}, seed + 2));
  p = problem_of(AttentionKind::kHstu, 2, 64, 300);
  p.causal = false;
  expect_gpu_matches_reference(make_case(p, {200, 7, 64}, {}, {3, 1, 0}, seed + 3));
}

TEST(AttentionGpu, HstuMaxSeqLenLongerThanEverySequence) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15203);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  expect_gpu_matches_reference(
      make_case(problem_of(AttentionKind::kHstu, 2, 64, 1000), {30, 65}, {}, {}, seed));
}

TEST(AttentionGpu, HeadDims64128And256AndMixed) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15204);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (int dim : {64, 128, 256}) {
    for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " " + std::string(attention_kind_name(kind)));
      const AttentionProblem p = problem_of(kind, 2, dim, 160);
      // d = 256 has a forward only (can_implement_backward says why).
      expect_gpu_matches_reference(make_case(p, {kTile + 1, 7, 150}, {}, {}, seed), dim != 256);
    }
  }
  // d_qk != d_v (64 and 128 either way).
  for (int dim_v : {128, 64}) {
    const int dim_qk = 192 - dim_v;
    for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
      SCOPED_TRACE("d_qk " + std::to_string(dim_qk) + " d_v " + std::to_string(dim_v) + " " +
                   std::string(attention_kind_name(kind)));
      const AttentionProblem p = problem_of(kind, 2, dim_qk, 160, DType::kBF16, dim_v);
      expect_gpu_matches_reference(make_case(p, {kTile + 1, 33}, {}, {}, seed + 1));
    }
  }
}

TEST(AttentionGpu, SoftmaxCausalNonCausalAndTruncation) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15205);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    SCOPED_TRACE(std::string(dtype_name(dtype)));
    AttentionProblem p = problem_of(AttentionKind::kSoftmax, 2, 64, 100, dtype);
    expect_gpu_matches_reference(
        make_case(p, {0, 1, 127, kTile + 1, kTile - 1, 230}, {}, {}, seed));  // cut at 100
    p.causal = false;
    expect_gpu_matches_reference(make_case(p, {129, 5, 64}, {}, {}, seed + 1));
  }
}

TEST(AttentionGpu, GdpaCrossAttentionWithFewKeysEveryActivation) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15206);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu,
                          PointwiseActivation::kSigmoid, PointwiseActivation::kRelu}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = problem_of(AttentionKind::kGdpa, 2, 64, 130);
    p.activation = activation;
    p.causal = false;
    // relu's derivative jumps at 0, where an fp32 and an fp64 score may fall on different sides.
    const bool with_backward = activation != PointwiseActivation::kRelu;
    expect_gpu_matches_reference(make_case(p, {129, 0, 40, 3}, {64, 64, 1, 0}, {}, seed),
                                 with_backward);
    // Self-attention GDPA with the causal mask.
    p.causal = true;
    expect_gpu_matches_reference(make_case(p, {100, 65}, {}, {}, seed + 1), with_backward);
  }
}

// ---- the 128-row forward kernels by name: attention_forward_gpu_rows128 (mma.sync) and
// attention_forward_gpu_wgmma (Hopper wgmma, sm_90a), forward only ----
// Same bounds as the 64-row kernel: they make the same roundings (weights to the element type
// before the P V product, fp32 sums), only in another order and tile shape; the wgmma kernel's
// SiLU and sigmoid add the tanh.approx term (Magnitudes::out_activation). The wgmma kernel
// takes d_qk = d_v only, and is skipped where it cannot run (no GPU, not sm_90a: the reason is
// printed).

constexpr const char* kRows128 = "attention_forward_gpu_rows128";
constexpr const char* kWgmma = "attention_forward_gpu_wgmma";
constexpr const char* kWgmmaWs = "attention_forward_gpu_wgmma_ws";  // warp-specialized
constexpr const char* kWgmmaWs128 = "attention_forward_gpu_wgmma_ws128";  // 128-key S tiles
constexpr const char* kWgmmaTma = "attention_forward_gpu_wgmma_tma";      // + TMA loads
constexpr const char* kWgmmaTma64 = "attention_forward_gpu_wgmma_tma64";  // TMA, 64-key tiles
// kWgmmaTma with one block per (sequence, head): every multi-tile sequence walks its q tiles.
constexpr const char* kWgmmaTmaSeq = "attention_forward_gpu_wgmma_tma_seq";
// kWgmmaTma with the q tiles of a (sequence, head) adjacent in the grid, heaviest first.
constexpr const char* kWgmmaTmaTileMajor = "attention_forward_gpu_wgmma_tma_tile_major";
// kWgmmaTma on a resident grid (a block per SM) walking every q tile in that order.
constexpr const char* kWgmmaTmaPersistent = "attention_forward_gpu_wgmma_tma_persistent";
// kWgmmaTma with a few adjacent blocks per (sequence, head), each walking every k-th q tile.
constexpr const char* kWgmmaTmaPairWalk = "attention_forward_gpu_wgmma_tma_pair_walk";

// The test-name suffix of a forward variant (the probe scripts filter on it: */wgmma_tma_seq).
std::string variant_suffix(const std::string& name) {
  const std::string prefix = "attention_forward_gpu_";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

class AttentionGpuRows128 : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    PARITY_REQUIRE_GPU();
    if (!equal_dims_only()) return;
    AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 128, 300);
    p.batch = 2;
    p.total_q = p.total_kv = 100;
    const Status runnable = gpu::can_implement_forward(p, gpu::ForwardKernel::kWgmma);
    if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  }
  const char* variant() const { return GetParam(); }
  // The wgmma kernels (round 2 and warp-specialized): sm_90a, d_qk = d_v.
  bool equal_dims_only() const { return std::string(GetParam()) != kRows128; }
};

INSTANTIATE_TEST_SUITE_P(ForwardVariants, AttentionGpuRows128,
                         ::testing::Values(kRows128, kWgmma, kWgmmaWs, kWgmmaWs128, kWgmmaTma,
                                           kWgmmaTma64, kWgmmaTmaSeq, kWgmmaTmaTileMajor,
                                           kWgmmaTmaPersistent, kWgmmaTmaPairWalk),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return variant_suffix(param_info.param);
                         });

TEST_P(AttentionGpuRows128, HstuLengthsTargetsAndDtypes) {
  const std::uint64_t seed = parity::testing::test_seed(15211);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      const AttentionProblem p = problem_of(AttentionKind::kHstu, 2, dim, 300, dtype);
      // Lengths 0, 1, 127, 129, both tiles +- 1, 2 q tiles + 1; targets 0, 1, longer than the
      // sequence.
      expect_gpu_matches_reference(
          make_case(p, {0, 1, 127, 129, kTile128 - 1, kTile128 + 1, kTile128, 2 * kTile128 + 1,
                        kTile - 1, kTile + 1},
                    {}, {3, 0, 1, 20, 300, 5, 64, 0, 2, 1}, seed),
          false, variant());
      expect_gpu_matches_reference(make_case(p, {257, 2, kTile128, kTile, 300}, {}, {}, seed + 1),
                                   false, variant());
    }
  }
}

TEST_P(AttentionGpuRows128, ContextualWindowNonCausalAndLongN) {
  const std::uint64_t seed = parity::testing::test_seed(15212);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 128, 300);
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {40, 5, 0, 290, 9}, {}, {4, 1, 0, 12, 3}, seed), false,
                               variant());
  p.contextual_len = 0;
  p.max_attn_len = 16;  // windows narrower than a half tile, and wider than a q tile
  expect_gpu_matches_reference(make_case(p, {270, 3}, {}, {}, seed + 1), false, variant());
  p.max_attn_len = 150;
  p.min_full_attn_len = 8;
  p.contextual_len = 10;
  expect_gpu_matches_reference(make_case(p, {280, 30}, {}, {5, 2}, seed + 2), false, variant());
  p = problem_of(AttentionKind::kHstu, 2, 64, 300);
  p.causal = false;
  expect_gpu_matches_reference(make_case(p, {200, 7, 64}, {}, {3, 1, 0}, seed + 3), false,
                               variant());
  // N longer than every sequence (the 1/N scale).
  expect_gpu_matches_reference(
      make_case(problem_of(AttentionKind::kHstu, 2, 64, 1000), {30, 130}, {}, {}, seed + 4), false,
      variant());
}

TEST_P(AttentionGpuRows128, SoftmaxAndHeadDims) {
  const std::uint64_t seed = parity::testing::test_seed(15213);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (DType dtype : {DType::kBF16, DType::kF16}) {
    for (int dim : {64, 128}) {
      SCOPED_TRACE(std::string(dtype_name(dtype)) + " d " + std::to_string(dim));
      AttentionProblem p = problem_of(AttentionKind::kSoftmax, 2, dim, 200, dtype);
      expect_gpu_matches_reference(  // cut at 200
          make_case(p, {0, 1, 127, kTile128 + 1, kTile128 - 1, 330, kTile - 1, kTile, kTile + 1},
                    {}, {}, seed),
          false, variant());
      p.causal = false;
      expect_gpu_matches_reference(make_case(p, {129, 5, 64}, {}, {}, seed + 1), false, variant());
      // A negative alpha: the wgmma kernel folds only a positive score scale into the exp2.
      p.alpha = -1.0f / std::sqrt(static_cast<float>(dim));
      expect_gpu_matches_reference(make_case(p, {129, 5}, {}, {}, seed + 3), false, variant());
    }
  }
  for (int dim_qk : {64, 128}) {
    for (int dim_v : {64, 128}) {
      if (dim_qk != dim_v && equal_dims_only()) continue;
      for (AttentionKind kind : {AttentionKind::kHstu, AttentionKind::kSoftmax}) {
        SCOPED_TRACE("d_qk " + std::to_string(dim_qk) + " d_v " + std::to_string(dim_v) + " " +
                     std::string(attention_kind_name(kind)));
        const AttentionProblem p = problem_of(kind, 2, dim_qk, 300, DType::kBF16, dim_v);
        expect_gpu_matches_reference(make_case(p, {kTile128 + 1, 33, 290}, {}, {}, seed + 2),
                                     false, variant());
      }
    }
  }
}

TEST_P(AttentionGpuRows128, GdpaCrossAttentionEveryActivation) {
  const std::uint64_t seed = parity::testing::test_seed(15214);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu,
                          PointwiseActivation::kSigmoid, PointwiseActivation::kRelu}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = problem_of(AttentionKind::kGdpa, 2, 64, 260);
    p.activation = activation;
    p.causal = false;
    expect_gpu_matches_reference(make_case(p, {257, 0, 40, 3}, {64, 64, 1, 0}, {}, seed), false,
                                 variant());
  }
}

// The TMA forward schedules with enough (sequence, head) pairs that blocks walk several q tiles,
// one test per variant so that a schedule that does not finish is named by its test:
// - tma_seq (one block per pair): B x H = 280 >= 2 blocks per SM on a 132-SM H200 (fewer SMs
//   too), so each block walks every q tile of its sequence;
// - tma_tile_major: one block per q tile, the slots of one pair adjacent (empty slots of short
//   sequences between busy ones);
// - tma_persistent: 840 items over one block per SM, so each block's q tiles come from several
//   sequences, empty items skipped, the next Q loaded for another sequence;
// - tma_pair_walk (the default on sm_90a): the tile-major grid with the slots pair_walk_slots picks (here few: the
//   pairs' K and V are small), each block walking every slots-th q tile.
// Lengths 0, 1, 129, 130, 200, 257, 300 (up to 3 q tiles), HSTU causal, d = 64; a softmax problem
// whose sequences outgrow N (q tiles past the truncation: the tile slots' strides); and lengths
// U[0.9 N, N) at N = 600, d = 128 (5 q tiles each, the bench's shape at a size the fp64 reference
// checks in seconds).
class AttentionGpuTmaSchedules : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(TmaSchedules, AttentionGpuTmaSchedules,
                         ::testing::Values(kWgmmaTmaSeq, kWgmmaTmaTileMajor, kWgmmaTmaPersistent,
                                           kWgmmaTmaPairWalk),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return variant_suffix(param_info.param);
                         });

TEST_P(AttentionGpuTmaSchedules, WalkTheQTilesOfManySequences) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = parity::testing::test_seed(15215);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  const AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 64, 300);
  AttentionProblem probe = p;  // batch and totals as the fixture's probe: the kernel's limits only
  probe.batch = 2;
  probe.total_q = probe.total_kv = 100;
  const Status runnable = gpu::can_implement_forward(probe, gpu::ForwardKernel::kWgmmaTmaSeq);
  if (!runnable.is_ok()) GTEST_SKIP() << runnable.to_string();
  const char* variant = GetParam();
  const std::int64_t cycle[] = {129, 300, 0, 257, 1, 200, 130};
  std::vector<std::int64_t> lengths;
  for (int b = 0; b < 70; ++b) lengths.push_back(cycle[b % 7]);
  const AttentionProblem softmax = problem_of(AttentionKind::kSoftmax, 4, 128, 200);
  expect_gpu_matches_reference(make_case(p, lengths, {}, {}, seed), false, variant);
  expect_gpu_matches_reference(make_case(softmax, lengths, {}, {}, seed + 1), false, variant);
  // The bench's length distribution, num_targets U[1, 20]: 48 pairs of 5 q tiles.
  const AttentionProblem near_n = problem_of(AttentionKind::kHstu, 2, 128, 600);
  std::vector<std::int64_t> long_lengths;
  std::vector<int> targets;
  for (int b = 0; b < 24; ++b) {
    long_lengths.push_back(540 + (b * 37) % 60);
    targets.push_back(1 + (b * 7) % 20);
  }
  expect_gpu_matches_reference(make_case(near_n, long_lengths, {}, targets, seed + 2), false,
                               variant);
}

TEST(AttentionGpu, Rows128RefusesWithReasons) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 2048);
  p.batch = 2;
  p.total_q = p.total_kv = 100;
  EXPECT_TRUE(gpu::can_implement_forward(p, gpu::ForwardKernel::kRows64).is_ok());
  AttentionProblem wide = p;
  wide.dim_qk = wide.dim_v = 256;
  EXPECT_TRUE(gpu::can_implement_forward(wide, gpu::ForwardKernel::kRows64).is_ok());
  // Built for NVIDIA here (a HIP build refuses every problem, naming the warp width).
  expect_error(gpu::can_implement_forward(wide, gpu::ForwardKernel::kRows128),
               StatusCode::kUnsupported, "d_qk=256");
  EXPECT_TRUE(gpu::can_implement_forward(p, gpu::ForwardKernel::kRows128).is_ok());
  AttentionProblem f32 = p;
  f32.dtype = DType::kF32;
  expect_error(gpu::can_implement_forward(f32, gpu::ForwardKernel::kRows128),
               StatusCode::kInvalidArgument, "dtype: fp32");
  // The wgmma kernel: head dims first (no device needed), then the device and binary.
  expect_error(gpu::can_implement_forward(wide, gpu::ForwardKernel::kWgmma),
               StatusCode::kUnsupported, "d_qk=256");
  AttentionProblem mixed = p;
  mixed.dim_v = 64;
  expect_error(gpu::can_implement_forward(mixed, gpu::ForwardKernel::kWgmma),
               StatusCode::kUnsupported, "d_v=64");
  expect_error(gpu::can_implement_forward(f32, gpu::ForwardKernel::kWgmma),
               StatusCode::kInvalidArgument, "dtype: fp32");
  // The warp-specialized one has the same limits.
  expect_error(gpu::can_implement_forward(wide, gpu::ForwardKernel::kWgmmaWs),
               StatusCode::kUnsupported, "d_qk=256");
  expect_error(gpu::can_implement_forward(mixed, gpu::ForwardKernel::kWgmmaWs),
               StatusCode::kUnsupported, "d_v=64");
}

// ---- what the kernels do not run, and bad arguments ----

TEST(AttentionGpu, CanImplementGivesReasons) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 2048);
  p.batch = 2;
  p.total_q = p.total_kv = 100;
  EXPECT_TRUE(gpu::can_implement(p).is_ok());
  EXPECT_TRUE(gpu::can_implement_backward(p).is_ok());
  AttentionProblem wide = p;
  wide.dim_qk = wide.dim_v = 256;
  EXPECT_TRUE(gpu::can_implement(wide).is_ok());
  expect_error(gpu::can_implement_backward(wide), StatusCode::kUnsupported, "d_qk=256");
  AttentionProblem mixed = p;
  mixed.dim_v = 64;
  EXPECT_TRUE(gpu::can_implement_backward(mixed).is_ok());
  AttentionProblem wide_mixed = wide;
  wide_mixed.dim_v = 128;
  expect_error(gpu::can_implement(wide_mixed), StatusCode::kUnsupported, "d_v=128");
  AttentionProblem f32 = p;
  f32.dtype = DType::kF32;
  EXPECT_FALSE(gpu::can_implement(f32).is_ok());
  // Softmax needs the row terms; the pointwise kinds only the dQ accumulator.
  AttentionProblem softmax = p;
  softmax.kind = AttentionKind::kSoftmax;
  EXPECT_GT(gpu::backward_workspace_bytes(softmax), gpu::backward_workspace_bytes(p));
  EXPECT_GE(gpu::backward_workspace_bytes(p), static_cast<std::size_t>(100 * 4 * 128 * 4));
}

TEST(AttentionGpu, RejectsMisalignedAndMissingPointers) {
  PARITY_REQUIRE_GPU();
  const JaggedCase c =
      make_case(problem_of(AttentionKind::kSoftmax, 1, 64, 64), {10, 20}, {}, {}, 5);
  const auto q = upload(c.q_bits, 64), offsets = upload(c.inputs.q_offsets);
  AttentionForwardArgs a;
  a.q = q.as<std::uint8_t>() + 2;  // misaligned
  a.k = a.v = a.out = q.data();
  a.q_offsets = offsets.as<std::int64_t>();
  a.softmax_lse = reinterpret_cast<float*>(q.data());
  expect_error(gpu::forward(c.problem, a, nullptr), StatusCode::kInvalidArgument, "q: ");
  a.q = q.data();
  a.softmax_lse = nullptr;
  expect_error(gpu::forward(c.problem, a, nullptr), StatusCode::kInvalidArgument, "softmax_lse");
}
}  // namespace
}  // namespace parity::attention
