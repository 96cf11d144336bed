// The step-time model's kernel terms against hand-computed cases (docs/planner.md, "Step-time
// model"): the TBE byte model with the radix sort's traffic, per-bag and fixed costs; the dot
// interaction's fast and general kernels; the MLPs' GEMMs and passes; the bias-gradient epilogue;
// the TF32 GEMM factors per operand layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "unit/plan_test_support.hpp"

namespace parity::plan {
namespace {

using testing::bare_calibration;
using testing::hand_model;
using testing::make_context;

constexpr double kH200BytesPerUs = 4.8e6;  // the catalogue's 4.8 TB/s

TEST(PlanStepModel, SortPassesFollowTheRowBits) {
  PlannerModel model =
      hand_model();  // 1000 rows: 10 bits (the key also holds row 1000) -> 2 passes
  EXPECT_EQ(tbe_sort_passes(model), 2);
  model.tables[0].rows = 511;  // 9 bits: one pass
  EXPECT_EQ(tbe_sort_passes(model), 1);
  model.tables[0].rows = 512;  // holding 512 takes 10 bits
  EXPECT_EQ(tbe_sort_passes(model), 2);
  EXPECT_EQ(tbe_sort_passes(testing::dlrm_v2_like_model()), 4);  // 204M rows: 28 bits
  // Key written by the linearise kernel, 2 reads + 1 write per pass, read by the chunk kernel.
  EXPECT_DOUBLE_EQ(tbe_sort_bytes_per_lookup(3), 8.0 + 3 * 24.0 + 8.0);
}

// The hand model's one table (1000 x 16, 2 ids per sample, row-wise Adagrad) on one H200 at batch
// 10 in TF32 (fp32 tables and pooled output). Byte model: forward 20 rows x 64 B + 10 bags x 64 B
// + 20 indices x 8 B + 11 offsets x 8 B = 2168 B; backward 20 x 8 (indices) + 20 x 64 (gradient
// rows) + 2 x 20 unique rows (1000 (1 - e^-0.02) = 19.8 -> 20) x (64 + 4) = 4160 B, plus the sort's
// 20 x (16 + 2 passes x 24) = 1280 B.
TEST(PlanStepModel, TbeTermsHandComputed) {
  PlannerCalibration calibration = bare_calibration();
  calibration.tbe_forward_efficiency.value = 0.5;
  calibration.tbe_backward_efficiency.value = 0.25;
  calibration.tbe_forward_bag_ns.value = 100.0;
  calibration.tbe_forward_fixed_us.value = 20.0;
  calibration.tbe_backward_bag_ns.value = 50.0;
  calibration.tbe_backward_fixed_us.value = 70.0;
  auto owned = make_context("h200", 1, 0, hand_model(), &calibration);
  Plan plan;
  plan.config = {10, 10, Checkpointing::kNone, Precision::kTf32};
  plan.tables = {{"t0", ShardingType::kTableWise, {{0, 0, 1000, 0, 16}}}};
  ASSERT_TRUE(
      predict_plan(owned.context.machine, owned.context.model, calibration, *owned.pricer, plan)
          .is_ok());
  const double forward_us = 2168.0 / (kH200BytesPerUs * 0.5) + 10 * 100.0 * 1e-3 + 20.0;
  const double backward_us = (4160.0 + 1280.0) / (kH200BytesPerUs * 0.25) + 10 * 50.0 * 1e-3 + 70.0;
  EXPECT_NEAR(plan.prediction.step.tbe_forward_us, forward_us, 1e-9 * forward_us);
  EXPECT_NEAR(plan.prediction.step.tbe_backward_us, backward_us, 1e-9 * backward_us);
}

// The dot interaction's fast variants (the hand model: 2 vectors of 16, 1 pair, output padded to
// 24; well inside 48 KiB and 32 vectors) move their HBM bytes in the storage type: forward reads
// 2 x 16 and writes 24 values; backward reads 32 + the output gradient's 17, writes 16 in the
// activation type and 16 fp32 pooled-gradient values. Their FMAs (one 4 x 4 Gram tile over 16,
// and G Z: 2 x 2 x 16) are far below the byte time here. Batch 1000 at 0.5 of 4.8 TB/s, a launch
// each.
TEST(PlanStepModel, DotInteractionFastVariantsHandComputed) {
  PlannerCalibration calibration = bare_calibration();
  calibration.interaction_fast_efficiency.value = 0.5;         // fp32 activations
  calibration.interaction_fast_efficiency_16bit.value = 0.25;  // bf16 activations
  calibration.kernel_launch_us.value = 4.0;
  auto owned = make_context("h200", 1, 0, hand_model(), &calibration);
  const PlannerContext& c = owned.context;
  const double flops_per_us = owned.pricer->fp32_flops_per_us() * GemmPricer::kSimtFp32Efficiency;
  for (const auto& [precision, s, efficiency] :
       {std::tuple{Precision::kBf16, 2.0, 0.25}, std::tuple{Precision::kTf32, 4.0, 0.5}}) {
    const auto costs = config_costs(c.machine, c.model, calibration, *owned.pricer,
                                    {1000, 1000, Checkpointing::kNone, precision});
    ASSERT_TRUE(costs.is_ok()) << costs.status().to_string();
    const double forward = std::max((32.0 + 24.0) * s * 1000 / (kH200BytesPerUs * efficiency),
                                    512.0 * 1000 / flops_per_us);
    const double backward =
        std::max(((32.0 + 17.0 + 16.0) * s + 16.0 * 4.0) * 1000 / (kH200BytesPerUs * efficiency),
                 128.0 * 1000 / flops_per_us);
    EXPECT_NEAR(costs->interaction_us, forward + backward + 2 * 4.0, 1e-9 * costs->interaction_us)
        << precision_name(precision);
    const auto full = config_costs(c.machine, c.model, calibration, *owned.pricer,
                                   {1000, 1000, Checkpointing::kFull, precision});
    ASSERT_TRUE(full.is_ok());
    EXPECT_NEAR(full->interaction_us - costs->interaction_us, forward + 4.0,
                1e-9 * forward);  // the recompute
  }
}

// More than 32 vectors: the backward runs the general kernel, its traffic counted in fp32 elements
// (it stages fp32) over interaction_efficiency: 41 vectors of 16 (40 tables), 820 pairs: reads
// 41 x 16 and 16 + 820, writes 41 x 16.
TEST(PlanStepModel, DotInteractionGeneralBackwardHandComputed) {
  PlannerModel model = hand_model();
  model.tables.clear();
  for (int t = 0; t < 40; ++t) model.tables.push_back({"t" + std::to_string(t), 1000, 16, 1.0, 1});
  PlannerCalibration calibration = bare_calibration();
  calibration.interaction_efficiency.value = 0.25;
  calibration.interaction_fast_efficiency.value = 0.5;
  calibration.interaction_fast_efficiency_16bit.value = 0.5;
  calibration.kernel_launch_us.value = 4.0;
  auto owned = make_context("h200", 1, 0, model, &calibration);
  const PlannerContext& c = owned.context;
  const auto costs = config_costs(c.machine, c.model, calibration, *owned.pricer,
                                  {1000, 1000, Checkpointing::kNone, Precision::kBf16});
  ASSERT_TRUE(costs.is_ok()) << costs.status().to_string();
  const double flops_per_us = owned.pricer->fp32_flops_per_us() * GemmPricer::kSimtFp32Efficiency;
  // Forward: the Gram tiles (11 row blocks: 66 tiles of 4 x 4 over 16); output 16 + 820 -> 840.
  const double forward = std::max((41.0 * 16 + 840) * 2.0 * 1000 / (kH200BytesPerUs * 0.5),
                                  2.0 * 16 * 16 * 66 * 1000 / flops_per_us);
  const double backward = 4.0 * (2 * 41.0 * 16 + 16 + 820) * 1000 / (kH200BytesPerUs * 0.25);
  EXPECT_NEAR(costs->interaction_us, forward + backward + 2 * 4.0, 1e-9 * costs->interaction_us);
}

// The hand model's MLPs in bf16, term by term (batch 1000, element-wise at 0.5 of 4.8 TB/s, 4 us
// launches, bias gradient 0.5 ns per sample): bottom 4 -> 16 (input padded to 8; no data gradient),
// top 24 (the dot output 17 padded) -> 8 -> 1. Each ReLU layer: forward GEMM TN with the bias
// epilogue, ReLU derivative pass (3 x out x 2 bytes), weight gradient NT into fp32, data gradient
// NN, and the bias gradient. The logit (8 -> 1) streams its [1000, 8] operand: forward and data
// gradient in bf16 (2 bytes per element), the weight gradient on fp32 copies (cuBLASLt has no bf16
// kernel for its fp32 bias gradient at width 1: cast read 2 + write 4, fp32 pass 4), two launches.
TEST(PlanStepModel, MlpTermsHandComputed) {
  PlannerCalibration calibration = bare_calibration();
  calibration.elementwise_efficiency.value = 0.5;
  calibration.kernel_launch_us.value = 4.0;
  calibration.bias_gradient_ns_per_sample.value = 0.5;
  auto owned = make_context("h200", 1, 0, hand_model(), &calibration);
  const PlannerContext& c = owned.context;
  const auto costs = config_costs(c.machine, c.model, calibration, *owned.pricer,
                                  {1000, 1000, Checkpointing::kNone, Precision::kBf16});
  ASSERT_TRUE(costs.is_ok()) << costs.status().to_string();
  GemmPricer& pricer = *owned.pricer;
  using gemm::Epilogue;
  using gemm::GemmLayout;
  const auto gemm_us = [&pricer](std::int64_t m, std::int64_t n, std::int64_t k, GemmLayout layout,
                                 DType c_dtype, Epilogue epilogue) {
    return pricer.time_us({m, n, k, 1, DType::kBF16, c_dtype, layout, epilogue});
  };
  const auto stream_us = [](double bytes_per_sample, int launches) {
    return bytes_per_sample * 1000 / (kH200BytesPerUs * 0.5) + 4.0 * launches;
  };
  const double bias_gradient_us = 0.5 * 1000 * 1e-3;
  const double bottom = gemm_us(16, 1000, 8, GemmLayout::kTN, DType::kBF16, Epilogue::kBias) +
                        stream_us(3 * 16 * 2.0, 1) +
                        gemm_us(8, 16, 1000, GemmLayout::kNT, DType::kF32, Epilogue::kNone) +
                        bias_gradient_us;
  const double top = gemm_us(8, 1000, 24, GemmLayout::kTN, DType::kBF16, Epilogue::kBias) +
                     stream_us(3 * 8 * 2.0, 1) +
                     gemm_us(24, 8, 1000, GemmLayout::kNT, DType::kF32, Epilogue::kNone) +
                     gemm_us(24, 1000, 8, GemmLayout::kNN, DType::kBF16, Epilogue::kNone) +
                     bias_gradient_us;
  const double logit = stream_us(8 * 2.0, 1) + stream_us(8 * 10.0, 2) + stream_us(8 * 2.0, 1) +
                       bias_gradient_us;
  EXPECT_NEAR(costs->mlp_us, bottom + top + logit, 1e-9 * costs->mlp_us);
}

// The bias-gradient epilogue costs in proportion to the batch (its GEMM's reduction length), once
// per layer with a bias: the hand model's three MLP layers (bottom 16, top 8 and 1); dlrm-v2's eight
// MLP layers and its three cross layers' up projections. No per-launch part: at any batch the
// added time is exactly ns_per_sample x batch x layers.
TEST(PlanStepModel, BiasGradientCostGrowsWithTheBatch) {
  for (const auto& [model, mlp_layers, cross_layers] :
       {std::tuple{hand_model(), 3, 0}, std::tuple{testing::dlrm_v2_like_model(), 8, 3}}) {
    for (const std::int64_t batch : {1024, 4096, 65536}) {
      PlannerCalibration calibration = bare_calibration();
      auto owned = make_context("h200", 1, 0, model, &calibration);
      const PlannerContext& c = owned.context;
      const TrainConfig config{batch, batch, Checkpointing::kNone, Precision::kBf16};
      const auto base = config_costs(c.machine, c.model, calibration, *owned.pricer, config);
      calibration.bias_gradient_ns_per_sample.value = 0.5;
      const auto with = config_costs(c.machine, c.model, calibration, *owned.pricer, config);
      ASSERT_TRUE(base.is_ok() && with.is_ok());
      const double per_layer_us = 0.5e-3 * static_cast<double>(batch);
      EXPECT_NEAR(with->mlp_us - base->mlp_us, per_layer_us * mlp_layers, 1e-9 * with->mlp_us)
          << model.name << " batch " << batch;
      EXPECT_NEAR(with->interaction_us - base->interaction_us, per_layer_us * cross_layers,
                  1e-9 * with->interaction_us)
          << model.name << " batch " << batch;
    }
  }
}

// The TF32 factors scale the GEMM model's TF32 GEMMs by operand layout: forward (TN), data
// gradient (NN), weight gradient (NT). bf16 is unchanged by any of them; the time is linear and
// separable in the three; and checkpointing, which recomputes forwards only, doubles what the TN
// factor adds while the NN and NT factors add the same as without it.
TEST(PlanStepModel, Tf32FactorsScaleTheirLayoutsOnly) {
  PlannerCalibration calibration = bare_calibration();
  auto owned = make_context("h200", 1, 0, testing::dlrm_v2_like_model(), &calibration);
  const PlannerContext& c = owned.context;
  const auto dense_us = [&](double tn, double nn, double nt, Precision precision,
                            Checkpointing checkpointing) {
    calibration.tf32_tn_gemm_time_factor.value = tn;
    calibration.tf32_nn_gemm_time_factor.value = nn;
    calibration.tf32_nt_gemm_time_factor.value = nt;
    const auto costs = config_costs(c.machine, c.model, calibration, *owned.pricer,
                                    {8192, 8192, checkpointing, precision});
    EXPECT_TRUE(costs.is_ok());
    return costs.is_ok() ? costs->mlp_us + costs->interaction_us : 0.0;
  };
  const auto none = Checkpointing::kNone, full = Checkpointing::kFull;
  EXPECT_DOUBLE_EQ(dense_us(1, 1, 1, Precision::kBf16, none), dense_us(2, 3, 4, Precision::kBf16, none));
  const double base = dense_us(1, 1, 1, Precision::kTf32, none);
  const double tn = dense_us(2, 1, 1, Precision::kTf32, none) - base;
  const double nn = dense_us(1, 2, 1, Precision::kTf32, none) - base;
  const double nt = dense_us(1, 1, 2, Precision::kTf32, none) - base;
  EXPECT_GT(tn, 0.0);
  EXPECT_GT(nn, 0.0);
  EXPECT_GT(nt, 0.0);
  EXPECT_NEAR(dense_us(2, 2, 2, Precision::kTf32, none) - base, tn + nn + nt, 1e-9 * base);
  EXPECT_NEAR(dense_us(3, 1, 1, Precision::kTf32, none) - base, 2 * tn, 1e-9 * base);  // linear
  const double base_full = dense_us(1, 1, 1, Precision::kTf32, full);
  EXPECT_NEAR(dense_us(2, 1, 1, Precision::kTf32, full) - base_full, 2 * tn, 1e-9 * base_full);
  EXPECT_NEAR(dense_us(1, 2, 1, Precision::kTf32, full) - base_full, nn, 1e-9 * base_full);
  EXPECT_NEAR(dense_us(1, 1, 2, Precision::kTf32, full) - base_full, nt, 1e-9 * base_full);
}

}  // namespace
}  // namespace parity::plan
