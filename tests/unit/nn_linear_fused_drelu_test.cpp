// Fused dReLU on the CPU (OpenBLAS GEMM with the kDRelu epilogue): equal to the separate pass
// within the derived bound of tests/common/fused_drelu_check.hpp (odd widths exercise the mask's
// 128-bit column padding), and the model trains identically with it.
#include <gtest/gtest.h>

#include "common/fused_drelu_check.hpp"
#include "common/test_support.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/step_bench.hpp"
#include "train/dlrm_model.hpp"

namespace parity {
namespace {

TEST(NnLinearFusedDrelu, CpuMatchesTheSeparatePass) {
  const std::uint64_t seed = testing::test_seed(20261201);
  SCOPED_TRACE(testing::seed_trace(seed));
  ExecutionContext context;
  context.device = DeviceKind::kCpu;
  for (const auto& c : {testing::FusedDreluCase{64, 13, 32, 16}, testing::FusedDreluCase{7, 5, 130, 3},
                        testing::FusedDreluCase{33, 40, 1, 9}}) {
    SCOPED_TRACE(testing::seed_trace(seed) + " shape " + std::to_string(c.batch) + "x" + std::to_string(c.in) + "x" +
                 std::to_string(c.hidden) + "x" + std::to_string(c.out));
    testing::expect_fused_drelu_matches_unfused(c, context, seed);
  }
}

TEST(NnLinearFusedDrelu, ForwardMaskNeedsReluWithBias) {
  ExecutionContext context;
  float x[4] = {1, 2, 3, 4}, w[4] = {1, 0, 0, 1}, y[4] = {};
  unsigned char mask[64] = {};
  const nn::LinearProblem problem{2, 2, 2, nn::Activation::kNone, nn::BiasMode::kNone, DType::kF32};
  const auto status = nn::linear_forward(problem, {x, w, nullptr, y, mask}, context);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("aux"), std::string::npos) << status.message();
}

// The model's wiring of the fused path (which mask each layer hands on, which layer skips its
// pass): on the CPU both paths run the same sgemm panels and mask the same fp32 values, so a few
// training steps of `tiny` (dot and dcnv2) give bitwise-equal losses.
TEST(NnLinearFusedDrelu, TinyTrainsIdenticallyWithAndWithoutFusion) {
  for (const auto interaction : {model::InteractionKind::kDot, model::InteractionKind::kDcnV2}) {
    model::ModelSpec spec = model::load_spec("tiny").value();
    spec.interaction = interaction;
    spec.cross_rank = 4;
    train::StepBenchOptions batch_options;
    batch_options.batch_size = 64;
    const data::Batch batch = train::synthetic_step_batch(spec, batch_options);
    std::vector<double> losses[2];
    for (int fused = 0; fused < 2; ++fused) {
      ExecutionContext context;
      auto model = train::detail::DlrmModel::create(spec, batch.batch_size, context);
      ASSERT_TRUE(model.is_ok()) << model.status().to_string();
      ASSERT_TRUE(model->set_fused_drelu(fused == 1).is_ok());
      ASSERT_TRUE(model->initialize(3).is_ok());
      for (std::int64_t step = 0; step < 4; ++step) {
        const auto loss = model->train_step(batch, step);
        ASSERT_TRUE(loss.is_ok()) << loss.status().to_string();
        losses[fused].push_back(*loss);
      }
    }
    EXPECT_EQ(losses[0], losses[1]);
  }
}

}  // namespace
}  // namespace parity
