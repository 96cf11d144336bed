#include "parity/core/parse.hpp"

#include "parity/core/op.hpp"

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(Parse, IntegersMustBeWholeFields) {
  EXPECT_EQ(parse_int64("64", "m").value(), 64);
  EXPECT_EQ(parse_int64("-7", "m").value(), -7);
  for (const char* bad : {"64x", "1e3", "64.5", "", " 64", "64 ", "+64", "0x40", "abc"}) {
    auto r = parse_int64(bad, "m");
    ASSERT_FALSE(r.is_ok()) << "'" << bad << "'";
    EXPECT_NE(r.status().message().find("m:"), std::string::npos) << r.status().message();
  }
}

TEST(Parse, IntegerRangeIsEnforced) {
  EXPECT_FALSE(parse_int64("0", "batch", 1, 100).is_ok());
  EXPECT_FALSE(parse_int64("101", "batch", 1, 100).is_ok());
  EXPECT_TRUE(parse_int64("100", "batch", 1, 100).is_ok());
  EXPECT_FALSE(parse_int64("99999999999999999999", "k").is_ok());
}

TEST(Parse, UnsignedRejectsNegative) {
  EXPECT_EQ(parse_uint64("18446744073709551615", "seed").value(), UINT64_MAX);
  EXPECT_FALSE(parse_uint64("-1", "seed").is_ok());
  EXPECT_FALSE(parse_uint64("18446744073709551616", "seed").is_ok());
}

TEST(Parse, DoublesAreFiniteAndWhole) {
  EXPECT_DOUBLE_EQ(parse_double("1e3", "lr").value(), 1000.0);
  EXPECT_DOUBLE_EQ(parse_double("-0.5", "lr").value(), -0.5);
  for (const char* bad : {"nan", "inf", "1e999", "1.0x", "", "0x1p3", " 1"}) {
    EXPECT_FALSE(parse_double(bad, "lr").is_ok()) << "'" << bad << "'";
  }
}

TEST(Parse, GemmChoiceNamesRoundTripAndBadValuesNameTheParameter) {
  for (GemmChoice choice :
       {GemmChoice::kAuto, GemmChoice::kModel, GemmChoice::kVendorHeuristic, GemmChoice::kMeasured}) {
    EXPECT_EQ(parse_gemm_choice(gemm_choice_name(choice)).value(), choice);
  }
  for (const char* bad : {"", "Model", "heuristic ", "vendor"}) {
    auto r = parse_gemm_choice(bad);
    ASSERT_FALSE(r.is_ok()) << "'" << bad << "'";
    EXPECT_NE(r.status().message().find("gemm_choice:"), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace parity
