#include <gtest/gtest.h>

#include "parity/core/dtype.hpp"
#include "parity/core/rng.hpp"
#include "parity/core/status.hpp"

namespace parity {
namespace {

Status needs_positive(int value) {
  PARITY_CHECK_ARG(value > 0, "value=", value, " must be > 0");
  return Status::ok();
}

Result<int> doubled(int value) {
  PARITY_RETURN_IF_ERROR(needs_positive(value));
  return value * 2;
}

Result<int> quadrupled(int value) {
  PARITY_ASSIGN_OR_RETURN(int twice, doubled(value));
  return twice * 2;
}

TEST(Status, CarriesCodeAndMessage) {
  const Status s = needs_positive(-3);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.to_string(), "invalid_argument: value=-3 must be > 0");
  EXPECT_EQ(s.with_context("op").message(), "op: value=-3 must be > 0");
  EXPECT_TRUE(needs_positive(1).is_ok());
}

TEST(Result, PropagatesThroughMacros) {
  EXPECT_EQ(quadrupled(3).value(), 12);
  const auto bad = quadrupled(0);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("value=0"), std::string::npos);
}

TEST(Result, OkStatusWithoutValueIsInternal) {
  Result<int> r{Status::ok()};
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(DType, ParsesAndRejects) {
  EXPECT_EQ(parse_dtype("BF16").value(), DType::kBF16);
  EXPECT_EQ(parse_dtype("float32").value(), DType::kF32);
  const auto bad = parse_dtype("fp8");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("'fp8'"), std::string::npos);
}

TEST(DType, HalfConversionsRoundToNearestEven) {
  // 1 + 2^-8 lies exactly between two bf16 values; ties go to even (1.0).
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f + 1.0f / 256.0f)), 1.0f);
  EXPECT_EQ(bf16_bits_to_float(float_to_bf16_bits(1.0f + 3.0f / 256.0f)), 1.0f + 4.0f / 256.0f);
  for (float v : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(v)), v) << v;
  }
  EXPECT_EQ(fp16_bits_to_float(float_to_fp16_bits(1.0f + 1.0f / 2048.0f)), 1.0f);
}

TEST(Rng, ZipfIsSkewedAndInRange) {
  Rng rng(7);
  const std::int64_t rows = 1000;
  std::int64_t hits_row0 = 0;
  for (int i = 0; i < 20000; ++i) {
    const auto idx = rng.zipf_index(rows, 1.15);
    ASSERT_GE(idx, 0);
    ASSERT_LT(idx, rows);
    hits_row0 += idx == 0;
  }
  // Uniform would give ~20 hits on row 0; alpha=1.15 concentrates far more there.
  EXPECT_GT(hits_row0, 1000);
}

}  // namespace
}  // namespace parity
