// Fused dReLU on the CPU (OpenBLAS GEMM with the kDRelu epilogue): equal to the separate pass
// within the derived bound of tests/common/fused_drelu_check.hpp; odd widths exercise the mask's
// 128-bit column padding.
#include <gtest/gtest.h>

#include "common/fused_drelu_check.hpp"
#include "common/test_support.hpp"

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

}  // namespace
}  // namespace parity
