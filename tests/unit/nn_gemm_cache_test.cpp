// The GEMM plan cache of the nn ops (src/nn/gemm_cache.hpp): one plan per exact problem, the output
// type included (the HSTU layer runs a bf16-output and an fp32-output GEMM of the same shape).
#include <gtest/gtest.h>

#include "nn/gemm_cache.hpp"

namespace parity::nn::detail {
namespace {

TEST(NnGemmCache, OutputTypeIsPartOfThePlan) {
  const ExecutionContext cpu;
  gemm::GemmRunProblem bf16_out = linear_data_grad_gemm(40, 16, 24, DType::kBF16, MathMode::kFp32);
  gemm::GemmRunProblem fp32_out = bf16_out;
  fp32_out.shape.c_dtype = DType::kF32;
  const auto first = gemm_cache().get(bf16_out, cpu);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  const auto second = gemm_cache().get(fp32_out, cpu);
  ASSERT_TRUE(second.is_ok()) << second.status().to_string();
  EXPECT_NE(*first, *second);
  EXPECT_EQ((*first)->problem().shape.c_dtype, DType::kBF16);
  EXPECT_EQ((*second)->problem().shape.c_dtype, DType::kF32);
  const auto again = gemm_cache().get(fp32_out, cpu);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(*again, *second);  // the same problem reuses its plan
}

}  // namespace
}  // namespace parity::nn::detail
