// The attention op's CPU variant against the fp64 reference (forward and backward, every kind,
// the jagged edge cases of issue 15), its input checks, variant selection and the FLOP model.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "attention/attention_cpu.hpp"
#include "common/test_support.hpp"
#include "parity/attention/attention_op.hpp"
#include "unit/attention_test_util.hpp"

namespace parity::attention {
namespace {

using testing::JaggedCase;
using testing::make_case;

AttentionProblem problem_of(AttentionKind kind, int heads, int dim_qk, int dim_v, std::int64_t max_seq_len) {
  AttentionProblem p;
  p.kind = kind;
  p.heads = heads;
  p.dim_qk = dim_qk;
  p.dim_v = dim_v;
  p.max_seq_len = max_seq_len;
  return p;
}

struct OpOutputs {
  std::vector<std::uint16_t> out, grad_q, grad_k, grad_v;
  std::vector<float> lse;
};

AttentionForwardArgs forward_args(const JaggedCase& c, OpOutputs* o) {
  AttentionForwardArgs a;
  a.q = c.q_bits.data();
  a.k = c.k_bits.data();
  a.v = c.v_bits.data();
  a.q_offsets = c.inputs.q_offsets.data();
  a.kv_offsets = c.problem.cross ? c.inputs.kv_offsets.data() : nullptr;
  a.num_targets = c.problem.has_num_targets ? c.inputs.num_targets.data() : nullptr;
  a.out = o->out.data();
  a.softmax_lse = c.problem.kind == AttentionKind::kSoftmax ? o->lse.data() : nullptr;
  return a;
}

OpOutputs run_cpu(const JaggedCase& c, bool with_backward) {
  const AttentionProblem& p = c.problem;
  OpOutputs o;
  o.out.assign(static_cast<std::size_t>(p.total_q * p.heads * p.dim_v), 0xFFFF);  // NaN sentinels
  o.lse.assign(static_cast<std::size_t>(p.total_q * p.heads), std::numeric_limits<float>::quiet_NaN());
  const ExecutionContext cpu;
  EXPECT_TRUE(attention_forward(p, forward_args(c, &o), cpu).is_ok());
  if (!with_backward) return o;
  o.grad_q.assign(c.q_bits.size(), 0xFFFF);
  o.grad_k.assign(c.k_bits.size(), 0xFFFF);
  o.grad_v.assign(c.v_bits.size(), 0xFFFF);
  AttentionBackwardArgs b;
  b.forward = forward_args(c, &o);
  b.grad_out = c.grad_out_bits.data();
  b.grad_q = o.grad_q.data();
  b.grad_k = o.grad_k.data();
  b.grad_v = o.grad_v.data();
  const Status status = attention_backward(p, b, nullptr, cpu);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return o;
}

// Runs forward and backward on the CPU and compares every output with the fp64 reference.
void expect_cpu_matches_reference(const JaggedCase& c, bool with_backward = true) {
  const AttentionProblem& p = c.problem;
  std::int64_t max_length = testing::max_of(lengths_from_offsets(c.inputs.q_offsets.data(), p.batch));
  if (p.cross) max_length = std::max(max_length, testing::max_of(lengths_from_offsets(c.inputs.kv_offsets.data(), p.batch)));
  if (p.kind == AttentionKind::kSoftmax) max_length = std::min(max_length, p.max_seq_len);
  const testing::ErrorBounds bounds = testing::error_bounds(p, max_length);
  const OpOutputs o = run_cpu(c, with_backward);
  std::vector<double> out, lse;
  ASSERT_TRUE(ref::attention_forward_ref(p, c.inputs, &out, &lse).is_ok());
  testing::expect_close("out", p.dtype, o.out, out, bounds.out);
  for (std::size_t r = 0; r < lse.size(); ++r) {
    if (std::isinf(lse[r])) {
      EXPECT_TRUE(std::isinf(o.lse[r]) && o.lse[r] < 0) << "lse[" << r << "]";
    } else {
      // fp32 lse: the score error d_qk u S plus the log-sum's n u (same K u (1 + 4S) form).
      EXPECT_NEAR(o.lse[r], lse[r], bounds.out + 1e-6 * std::abs(lse[r])) << "lse[" << r << "]";
    }
  }
  if (!with_backward) return;
  std::vector<double> grad_q, grad_k, grad_v;
  ASSERT_TRUE(ref::attention_backward_ref(p, c.inputs, c.grad_out, &grad_q, &grad_k, &grad_v).is_ok());
  testing::expect_close("grad_q", p.dtype, o.grad_q, grad_q, bounds.grad_q);
  testing::expect_close("grad_k", p.dtype, o.grad_k, grad_k, bounds.grad_k);
  testing::expect_close("grad_v", p.dtype, o.grad_v, grad_v, bounds.grad_v);
}

constexpr std::int64_t kTile = cpu::kRowTile;

TEST(AttentionCpu, HstuJaggedLengthsAndTargets) {
  const std::uint64_t seed = parity::testing::test_seed(15101);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  const AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 64, 64, 160);
  // Lengths 0, 1, 127, 129 and the CPU tile +- 1; num_targets 0, 1, longer than the sequence.
  expect_cpu_matches_reference(make_case(p, {0, 1, 127, 129, kTile - 1, kTile + 1}, {}, {3, 0, 1, 20, 200, 5}, seed));
  expect_cpu_matches_reference(make_case(p, {129, 2, kTile}, {}, {}, seed + 1));
}

TEST(AttentionCpu, HstuContextualAndWindow) {
  const std::uint64_t seed = parity::testing::test_seed(15102);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = problem_of(AttentionKind::kHstu, 1, 64, 64, 100);
  p.contextual_len = 10;
  expect_cpu_matches_reference(make_case(p, {40, 5, 0, 90}, {}, {4, 1, 0, 12}, seed));
  p.contextual_len = 0;
  p.max_attn_len = 16;
  expect_cpu_matches_reference(make_case(p, {70, 3}, {}, {}, seed + 1));
  p.min_full_attn_len = 8;
  p.contextual_len = 10;
  expect_cpu_matches_reference(make_case(p, {80, 30}, {}, {5, 2}, seed + 2));
}

TEST(AttentionCpu, HstuMaxSeqLenLongerThanEverySequence) {
  const std::uint64_t seed = parity::testing::test_seed(15103);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  expect_cpu_matches_reference(make_case(problem_of(AttentionKind::kHstu, 2, 64, 64, 1000), {30, 65}, {}, {}, seed));
}

TEST(AttentionCpu, HeadDims64To256AndDifferentQkAndV) {
  const std::uint64_t seed = parity::testing::test_seed(15104);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (int dim : {64, 128, 256}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    expect_cpu_matches_reference(make_case(problem_of(AttentionKind::kHstu, 1, dim, dim, 70), {kTile + 1, 7}, {}, {}, seed));
  }
  expect_cpu_matches_reference(make_case(problem_of(AttentionKind::kHstu, 2, 64, 128, 40), {33, 17}, {}, {2, 1}, seed + 1));
  expect_cpu_matches_reference(make_case(problem_of(AttentionKind::kSoftmax, 2, 128, 64, 40), {33, 17}, {}, {}, seed + 2));
}

TEST(AttentionCpu, SoftmaxCausalNonCausalAndTruncation) {
  const std::uint64_t seed = parity::testing::test_seed(15105);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = problem_of(AttentionKind::kSoftmax, 2, 64, 64, 100);
  expect_cpu_matches_reference(make_case(p, {0, 1, 127, kTile + 1}, {}, {}, seed));  // 127 is cut at 100
  p.causal = false;
  expect_cpu_matches_reference(make_case(p, {129, 5}, {}, {}, seed + 1));
}

TEST(AttentionCpu, GdpaCrossAttentionWithFewKeysEveryActivation) {
  const std::uint64_t seed = parity::testing::test_seed(15106);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  for (auto activation : {PointwiseActivation::kSilu, PointwiseActivation::kGelu, PointwiseActivation::kSigmoid,
                          PointwiseActivation::kRelu}) {
    SCOPED_TRACE(std::string(activation_name(activation)));
    AttentionProblem p = problem_of(AttentionKind::kGdpa, 2, 64, 64, 130);
    p.activation = activation;
    p.causal = false;
    // relu's derivative jumps at 0, where an fp32 and an fp64 score may fall on different sides:
    // its backward is left to the finite-difference-free forward check.
    const bool with_backward = activation != PointwiseActivation::kRelu;
    expect_cpu_matches_reference(make_case(p, {129, 0, 40}, {64, 64, 1}, {}, seed), with_backward);
  }
}

TEST(AttentionCpu, Fp16InputsAndOutputs) {
  const std::uint64_t seed = parity::testing::test_seed(15107);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  AttentionProblem p = problem_of(AttentionKind::kHstu, 2, 64, 64, 80);
  p.dtype = DType::kF16;
  expect_cpu_matches_reference(make_case(p, {65, 10}, {}, {3, 1}, seed));
  p.kind = AttentionKind::kSoftmax;
  expect_cpu_matches_reference(make_case(p, {65, 10}, {}, {}, seed + 1));
}

TEST(AttentionCpu, BackwardIsBitwiseDeterministic) {
  const std::uint64_t seed = parity::testing::test_seed(15108);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  const JaggedCase c = make_case(problem_of(AttentionKind::kHstu, 2, 64, 64, 200), {150, 70}, {}, {5, 1}, seed);
  const OpOutputs first = run_cpu(c, true);
  const OpOutputs second = run_cpu(c, true);
  EXPECT_EQ(first.grad_q, second.grad_q);
  EXPECT_EQ(first.grad_k, second.grad_k);
  EXPECT_EQ(first.grad_v, second.grad_v);
}

// ---- bad input: clear errors naming the parameter and the value ----

void expect_error(const Status& status, StatusCode code, const std::string& fragment) {
  EXPECT_EQ(status.code(), code) << status.to_string();
  EXPECT_NE(status.message().find(fragment), std::string::npos) << status.to_string();
}

TEST(AttentionCpu, RejectsBadOffsetsAndTargets) {
  JaggedCase c = make_case(problem_of(AttentionKind::kHstu, 1, 64, 64, 16), {3, 4, 2}, {}, {1, 1, 1}, 7);
  OpOutputs o = run_cpu(c, false);
  const ExecutionContext cpu;
  auto run = [&](const JaggedCase& k) { return attention_forward(k.problem, forward_args(k, &o), cpu); };
  JaggedCase bad = c;
  bad.inputs.q_offsets = {0, 3, 2, 9};
  expect_error(run(bad), StatusCode::kInvalidArgument, "q_offsets[2]: 2 is below q_offsets[1] = 3");
  bad.inputs.q_offsets = {1, 3, 7, 9};
  expect_error(run(bad), StatusCode::kInvalidArgument, "q_offsets[0]: 1 (must be 0)");
  bad.inputs.q_offsets = {0, 3, 7, 8};
  expect_error(run(bad), StatusCode::kInvalidArgument, "q_offsets[3]: 8 does not match the tensor rows 9");
  bad = c;
  bad.inputs.num_targets = {1, -2, 1};
  expect_error(run(bad), StatusCode::kInvalidArgument, "num_targets[1]: -2 is negative");
  bad = c;
  bad.problem.max_seq_len = 3;
  expect_error(run(bad), StatusCode::kInvalidArgument, "sequence 1 has length 4 > max_seq_len 3");
  bad = c;
  bad.problem.has_num_targets = false;
  AttentionForwardArgs with_targets = forward_args(bad, &o);
  with_targets.num_targets = c.inputs.num_targets.data();
  expect_error(attention_forward(bad.problem, with_targets, cpu), StatusCode::kInvalidArgument,
               "num_targets: given while has_num_targets is false");
  bad = c;
  bad.problem.kind = AttentionKind::kSoftmax;
  bad.problem.has_num_targets = false;
  bad.inputs.num_targets.clear();
  AttentionForwardArgs args = forward_args(bad, &o);
  args.softmax_lse = nullptr;
  expect_error(attention_forward(bad.problem, args, cpu), StatusCode::kInvalidArgument, "softmax_lse: null");
}

TEST(AttentionCpu, ValidateNamesTheParameter) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 128, 64);
  p.batch = 2;
  EXPECT_TRUE(p.validate().is_ok());
  AttentionProblem bad = p;
  bad.dim_qk = 0;
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "dim_qk: 0 is out of range [1, 256]");
  bad = p;
  bad.dim_v = 512;
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "dim_v: 512 is out of range [1, 256]");
  bad = p;
  bad.batch = 0;
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "batch: 0 is out of range");
  bad = p;
  bad.total_kv = 5;
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "total_kv: 5 differs from total_q 0");
  bad = p;
  bad.cross = true;
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "causal: true is not defined for cross-attention");
  bad = p;
  bad.min_full_attn_len = 4;
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "min_full_attn_len: 4 needs a window");
  bad = p;
  bad.dtype = DType::kF32;
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "dtype: ");
  bad = p;
  bad.alpha = std::numeric_limits<float>::infinity();
  expect_error(bad.validate(), StatusCode::kInvalidArgument, "alpha: inf is not finite");
}

TEST(AttentionCpu, GpuContextIsRefusedWithTheReasonInACpuBuild) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 1, 64, 64, 8);
  p.batch = 1;
  ExecutionContext gpu_context;
  gpu_context.device = DeviceKind::kGpu;
  auto choice = select_variant(attention_forward_variants(), p, gpu_context);
  // The unit tests link the CPU library only, so the slot is never installed here.
  ASSERT_FALSE(choice.is_ok());
  EXPECT_NE(choice.status().message().find("attention_forward_gpu: this build has no GPU backend"), std::string::npos)
      << choice.status().to_string();
  EXPECT_NE(choice.status().message().find("attention_forward_cpu_openmp: host code"), std::string::npos);
  EXPECT_NE(choice.status().message().find("attention_forward_gpu_rows128: this build has no GPU backend"),
            std::string::npos)
      << choice.status().to_string();
}

// The default forward is the first variant that can implement: on Hopper the TMA wgmma kernel
// walking the q tiles of a few adjacent blocks per (sequence, head) (K and V stay in L2), then the
// one-block-per-pair walk with the same limits; mma.sync kernels for what the wgmma ones refuse;
// the other wgmma schedules by name only.
TEST(AttentionCpu, ForwardOrderPutsThePairWalkFirst) {
  std::vector<std::string> names;
  for (const auto* variant : attention_forward_variants()) names.emplace_back(variant->name());
  const std::vector<std::string> expected = {"attention_forward_cpu_openmp",
                                             "attention_forward_gpu_wgmma_tma_pair_walk",
                                             "attention_forward_gpu_wgmma_tma_seq",
                                             "attention_forward_gpu_wgmma_ws",
                                             "attention_forward_gpu_wgmma",
                                             "attention_forward_gpu_rows128",
                                             "attention_forward_gpu",
                                             "attention_forward_gpu_wgmma_ws128",
                                             "attention_forward_gpu_wgmma_tma",
                                             "attention_forward_gpu_wgmma_tma64",
                                             "attention_forward_gpu_wgmma_tma_tile_major",
                                             "attention_forward_gpu_wgmma_tma_persistent"};
  EXPECT_EQ(names, expected);
}

// The default backward is the first variant that can implement: on Hopper the warp-specialized
// wgmma backward with dQ by TMA reduce-adds on the pair walk's grid (one block per pair in the
// deterministic mode) with the tanh.approx activation, overlapped kv tiles and the dQ conversion
// fused into the kernel, the same with the separate pass, then without the overlap, then with
// ex2 + rcp, the same on the walking grid, the lockstep wgmma one behind it with the same limits,
// then mma.sync; the ring and atomic-dQ ws ones by name only.
TEST(AttentionCpu, BackwardOrderPutsTheTmaReduceWgmmaFirst) {
  std::vector<std::string> names;
  for (const auto* variant : attention_backward_variants()) names.emplace_back(variant->name());
  const std::vector<std::string> expected = {
      "attention_backward_cpu_openmp",
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh_fused_dq",
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_overlap_tanh",
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk_tanh",
      "attention_backward_gpu_wgmma_ws_dqtma_pair_walk",
      "attention_backward_gpu_wgmma_ws_dqtma",
      "attention_backward_gpu_wgmma",
      "attention_backward_gpu",
      "attention_backward_gpu_wgmma_ring",
      "attention_backward_gpu_wgmma_ws"};
  EXPECT_EQ(names, expected);
}

TEST(AttentionFlops, FollowsTheGrConvention) {
  AttentionProblem p = problem_of(AttentionKind::kHstu, 4, 128, 64, 100);
  // causal: pairs = (10^2 + 20^2) / 2 = 250; f1 = 2*4*128*250, f2 = 2*4*64*250
  const AttentionFlops causal = useful_flops(p, {10, 20});
  EXPECT_DOUBLE_EQ(causal.forward, 2.0 * 4 * 250 * (128 + 64));
  EXPECT_DOUBLE_EQ(causal.backward, 2.0 * 4 * 250 * (3 * 128 + 2 * 64));
  p.kind = AttentionKind::kSoftmax;
  p.max_seq_len = 10;  // softmax truncates 20 to 10: pairs = 50 + 50
  EXPECT_DOUBLE_EQ(useful_flops(p, {10, 20}).forward, 2.0 * 4 * 100 * (128 + 64));
  p.kind = AttentionKind::kGdpa;
  p.causal = false;
  p.cross = true;
  p.max_seq_len = 100;
  // cross: n_q * n_kv = 10 * 64 + 20 * 64
  EXPECT_DOUBLE_EQ(useful_flops(p, {10, 20}, {64, 64}).forward, 2.0 * 4 * 1920 * (128 + 64));
}

TEST(AttentionFlops, MaskedPairsCountWhatTheReferenceMaskKeeps) {
  const std::uint64_t seed = parity::testing::test_seed(15109);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  Rng rng(seed);
  for (int trial = 0; trial < 400; ++trial) {
    AttentionProblem p = problem_of(rng.uniform_int(0, 3) == 0 ? AttentionKind::kSoftmax : AttentionKind::kHstu, 1, 8, 8, 30);
    p.max_seq_len = rng.uniform_int(1, 30);
    p.causal = rng.uniform_int(0, 1) == 1;
    p.contextual_len = static_cast<int>(rng.uniform_int(0, 1) * rng.uniform_int(1, 4));
    p.has_num_targets = rng.uniform_int(0, 1) == 1;
    p.max_attn_len = static_cast<int>(rng.uniform_int(0, 1) * rng.uniform_int(1, 5));
    p.min_full_attn_len = p.max_attn_len > 0 ? static_cast<int>(rng.uniform_int(0, 3)) : 0;
    const std::int64_t n = rng.uniform_int(0, 24);
    const std::int64_t targets = p.has_num_targets ? rng.uniform_int(0, n + 2) : 0;
    std::int64_t want = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) want += ref::attention_mask_ref(p, n, n, targets, i, j) ? 1 : 0;
    }
    ASSERT_EQ(masked_pairs(p, n, n, targets), want)
        << "trial " << trial << ": n " << n << " targets " << targets << " causal " << p.causal << " context "
        << p.contextual_len << " window " << p.max_attn_len << " min_full " << p.min_full_attn_len << " N "
        << p.max_seq_len << " kind " << attention_kind_name(p.kind);
  }
}

}  // namespace
}  // namespace parity::attention
