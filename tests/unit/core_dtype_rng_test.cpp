// dtype: names, parsing, unit roundoff and the host fp16/bf16 conversions, checked exhaustively
// over every 16-bit pattern and against an independent nearest-value rule on random floats.
// Rng: determinism per seed, ranges, and distributions against their analytic moments with
// tolerances derived from the sample size.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/rng.hpp"

namespace parity {
namespace {

constexpr DType kAllDtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64,
                                DType::kI32, DType::kI64, DType::kU8};

TEST(DType, NamesParseBackAndSizesMatchTheCTypes) {
  for (const DType t : kAllDtypes) {
    const auto parsed = parse_dtype(dtype_name(t));
    ASSERT_TRUE(parsed.is_ok()) << dtype_name(t);
    EXPECT_EQ(*parsed, t);
  }
  EXPECT_EQ(dtype_size_bytes(DType::kF32), sizeof(float));
  EXPECT_EQ(dtype_size_bytes(DType::kF64), sizeof(double));
  EXPECT_EQ(dtype_size_bytes(DType::kI32), sizeof(std::int32_t));
  EXPECT_EQ(dtype_size_bytes(DType::kI64), sizeof(std::int64_t));
  EXPECT_EQ(dtype_size_bytes(DType::kU8), 1u);
  EXPECT_EQ(dtype_size_bytes(DType::kF16), 2u);
  EXPECT_EQ(dtype_size_bytes(DType::kBF16), 2u);
  EXPECT_EQ(*parse_dtype("BFloat16"), DType::kBF16);
  EXPECT_EQ(*parse_dtype("half"), DType::kF16);
  for (const char* bad : {"", "fp8", "bf16 ", "int", "f3"}) {
    const auto result = parse_dtype(bad);
    ASSERT_FALSE(result.is_ok()) << bad;
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("dtype"), std::string::npos);
  }
}

// u = half the spacing of representable values just above 1.0, derived from the conversions
// themselves (fp16 / bf16) and from the C++ types (fp32 / fp64).
TEST(DType, UnitRoundoffIsHalfTheUlpAtOne) {
  EXPECT_EQ(unit_roundoff(DType::kF32), std::numeric_limits<float>::epsilon() / 2);
  EXPECT_EQ(unit_roundoff(DType::kF64), std::numeric_limits<double>::epsilon() / 2);
  const std::uint16_t fp16_one = float_to_fp16_bits(1.0f);
  EXPECT_EQ(unit_roundoff(DType::kF16),
            (fp16_bits_to_float(static_cast<std::uint16_t>(fp16_one + 1)) - 1.0) / 2);
  const std::uint16_t bf16_one = float_to_bf16_bits(1.0f);
  EXPECT_EQ(unit_roundoff(DType::kBF16),
            (bf16_bits_to_float(static_cast<std::uint16_t>(bf16_one + 1)) - 1.0) / 2);
  EXPECT_EQ(unit_roundoff(DType::kI32), 0.0);
}

bool is_nan_fp16(std::uint16_t bits) { return (bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0; }
bool is_nan_bf16(std::uint16_t bits) { return (bits & 0x7F80) == 0x7F80 && (bits & 0x7F) != 0; }

TEST(DType, EveryHalfPatternRoundTripsThroughFloat) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    const float f16 = fp16_bits_to_float(bits);
    if (is_nan_fp16(bits)) {
      EXPECT_TRUE(std::isnan(f16)) << b;
      EXPECT_TRUE(is_nan_fp16(float_to_fp16_bits(f16))) << b;
    } else {
      ASSERT_EQ(float_to_fp16_bits(f16), bits) << "fp16 pattern " << b << " = " << f16;
    }
    const float bf = bf16_bits_to_float(bits);
    if (is_nan_bf16(bits)) {
      EXPECT_TRUE(std::isnan(bf)) << b;
      EXPECT_TRUE(is_nan_bf16(float_to_bf16_bits(bf))) << b;
    } else {
      ASSERT_EQ(float_to_bf16_bits(bf), bits) << "bf16 pattern " << b << " = " << bf;
    }
  }
  // Known values: the largest finite fp16, its overflow to infinity, the smallest subnormal.
  EXPECT_EQ(fp16_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00);  // halfway to 2^16 rounds to even: infinity
  EXPECT_EQ(float_to_fp16_bits(65519.0f), 0x7BFF);
  EXPECT_EQ(fp16_bits_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000);
}

// Round to nearest, ties to even, checked against the neighbouring representable values: the
// result is at least as close as both neighbours, and on a tie its last bit is 0.
template <typename ToBits, typename FromBits>
void expect_nearest_even(float x, ToBits to_bits, FromBits from_bits, double max_finite) {
  const std::uint16_t bits = to_bits(x);
  const double got = from_bits(bits);
  if (std::fabs(static_cast<double>(x)) > max_finite) return;  // overflow: checked separately
  ASSERT_TRUE(std::isfinite(got)) << x;
  const double error = std::fabs(got - x);
  for (const int step : {-1, 1}) {
    const auto neighbour_bits = static_cast<std::uint16_t>(bits + step);
    const double neighbour = from_bits(neighbour_bits);
    // Stepping past zero or into inf/NaN leaves the same-sign finite range: no competitor there.
    if (!std::isfinite(neighbour) || std::signbit(neighbour) != std::signbit(got)) continue;
    const double neighbour_error = std::fabs(neighbour - x);
    ASSERT_LE(error, neighbour_error) << "x=" << x << " got " << got << " neighbour " << neighbour;
    if (error == neighbour_error) {
      EXPECT_EQ(bits & 1, 0) << "tie not to even: x=" << x;
    }
  }
}

TEST(DType, ConversionsRoundToNearestEven) {
  const std::uint64_t seed = testing::test_seed(20261201);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 engine(seed);
  const double kMaxFiniteBf16 = bf16_bits_to_float(0x7F7F);
  // Random bit patterns cover every exponent; a second set of ties (a float halfway between two
  // neighbours) exercises the even rule, which random floats almost never hit.
  for (int i = 0; i < 200000; ++i) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(engine()));
    if (std::isnan(x)) continue;
    expect_nearest_even(x, float_to_fp16_bits, fp16_bits_to_float, 65504.0);
    expect_nearest_even(x, float_to_bf16_bits, bf16_bits_to_float, kMaxFiniteBf16);
  }
  for (std::uint32_t b = 0x0001; b < 0x7BFF; b += 7) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double midpoint =
        (fp16_bits_to_float(bits) + fp16_bits_to_float(static_cast<std::uint16_t>(bits + 1))) / 2;
    expect_nearest_even(static_cast<float>(midpoint), float_to_fp16_bits, fp16_bits_to_float,
                        65504.0);
  }
  for (std::uint32_t b = 0x0001; b < 0x7F7F; b += 7) {
    const auto bits = static_cast<std::uint16_t>(b);
    const double midpoint = (static_cast<double>(bf16_bits_to_float(bits)) +
                             bf16_bits_to_float(static_cast<std::uint16_t>(bits + 1))) /
                            2;
    expect_nearest_even(static_cast<float>(midpoint), float_to_bf16_bits, bf16_bits_to_float,
                        kMaxFiniteBf16);
  }
}

TEST(Rng, SameSeedSameSequenceOtherSeedOther) {
  Rng a(7), b(7), c(8);
  EXPECT_EQ(a.seed(), 7u);
  int differences = 0;
  for (int i = 0; i < 100; ++i) {
    const double x = a.normal();
    EXPECT_EQ(x, b.normal());
    differences += x != c.normal() ? 1 : 0;
  }
  EXPECT_GT(differences, 90);
}

// Sample mean within 5 standard errors (sigma / sqrt(n)) of the true mean: a false failure has
// probability below 1e-6 for a fixed seed, and the seed is fixed.
TEST(Rng, UniformAndNormalMatchTheirMoments) {
  const std::uint64_t seed = testing::test_seed(99);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  constexpr int kSamples = 200000;
  const double n = kSamples;
  double sum = 0, sum_sq = 0, uniform_sum = 0;
  bool low_hit = false, high_hit = false;
  for (int i = 0; i < kSamples; ++i) {
    const double x = rng.normal(3.0, 2.0);
    sum += x;
    sum_sq += (x - 3.0) * (x - 3.0);
    const double u = rng.uniform(-1.0, 5.0);
    ASSERT_GE(u, -1.0);
    ASSERT_LT(u, 5.0);
    uniform_sum += u;
    const std::int64_t k = rng.uniform_int(-2, 2);
    ASSERT_GE(k, -2);
    ASSERT_LE(k, 2);
    low_hit |= k == -2;
    high_hit |= k == 2;
  }
  EXPECT_TRUE(low_hit && high_hit) << "uniform_int is inclusive at both ends";
  EXPECT_NEAR(sum / n, 3.0, 5 * 2.0 / std::sqrt(n));
  // Variance estimate: standard error of s^2 is sigma^2 sqrt(2 / n) for a normal sample.
  EXPECT_NEAR(sum_sq / n, 4.0, 5 * 4.0 * std::sqrt(2.0 / n));
  // Uniform on [-1, 5): mean 2, sigma 6 / sqrt(12).
  EXPECT_NEAR(uniform_sum / n, 2.0, 5 * (6.0 / std::sqrt(12.0)) / std::sqrt(n));
}

// zipf_index draws y with density ~ y^-alpha on [1, rows] and returns floor(y) - 1, so
// P(index = i) = (F(i + 2) - F(i + 1)) with F(y) = (1 - y^(1-alpha)) / (1 - rows^(1-alpha)).
// Counts are binomial: each is checked within 5 of its standard deviations.
TEST(Rng, ZipfIndexFollowsThePowerLaw) {
  const std::uint64_t seed = testing::test_seed(1234);
  SCOPED_TRACE(testing::seed_trace(seed));
  constexpr std::int64_t kRows = 1000;
  constexpr int kSamples = 200000;
  for (const double alpha : {0.5, 1.2}) {
    Rng rng(seed);
    std::vector<int> counts(kRows, 0);
    for (int i = 0; i < kSamples; ++i) {
      const std::int64_t index = rng.zipf_index(kRows, alpha);
      ASSERT_GE(index, 0);
      ASSERT_LT(index, kRows);
      ++counts[static_cast<std::size_t>(index)];
    }
    const auto cdf = [&](double y) {
      return (1.0 - std::pow(y, 1.0 - alpha)) /
             (1.0 - std::pow(static_cast<double>(kRows), 1.0 - alpha));
    };
    for (const int i : {0, 1, 2, 10, 100}) {
      const double p = cdf(i + 2.0) - cdf(i + 1.0);
      const double expected = p * kSamples;
      const double sigma = std::sqrt(kSamples * p * (1 - p));
      EXPECT_NEAR(counts[static_cast<std::size_t>(i)], expected, 5 * sigma)
          << "alpha " << alpha << " index " << i;
    }
  }
  Rng rng(seed);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(rng.zipf_index(1, 1.0), 0);
    const std::int64_t uniform = rng.zipf_index(10, 0.0);
    EXPECT_GE(uniform, 0);
    EXPECT_LT(uniform, 10);
    const std::int64_t harmonic = rng.zipf_index(10, 1.0);
    EXPECT_GE(harmonic, 0);
    EXPECT_LT(harmonic, 10);
  }
}

}  // namespace
}  // namespace parity
