// The synthetic generator's exact Zipf sampler, its scatter bijection, bag-length distributions
// and option validation. Frequencies are compared with the normalised 1/k^alpha pmf.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

#include "common/test_support.hpp"
#include "parity/embedding/tbe_synthetic.hpp"

namespace parity::embedding {
namespace {

// sum_{k=1..n} k^-alpha: direct below 10^4 terms; above, the first M - 1 terms plus
// Euler-Maclaurin for the rest (integral, endpoint half-sum and the B2 term). The next term is
// alpha (alpha+1) (alpha+2) M^(-alpha-3) / 720 < 1e-11 for M = 1000: far below the tolerances.
double zipf_normaliser(std::int64_t n, double alpha) {
  constexpr std::int64_t kDirect = 10000;
  if (n <= kDirect) {
    double sum = 0;
    for (std::int64_t k = n; k >= 1; --k) sum += std::pow(static_cast<double>(k), -alpha);
    return sum;
  }
  constexpr double kM = 1000;
  double sum = 0;
  for (int k = 999; k >= 1; --k) sum += std::pow(k, -alpha);
  const auto nd = static_cast<double>(n);
  const auto f = [&](double x) { return std::pow(x, -alpha); };
  const auto df = [&](double x) { return -alpha * std::pow(x, -alpha - 1); };
  const double integral = std::abs(alpha - 1) < 1e-12
                              ? std::log(nd / kM)
                              : (std::pow(nd, 1 - alpha) - std::pow(kM, 1 - alpha)) / (1 - alpha);
  return sum + integral + (f(kM) + f(nd)) / 2 + (df(nd) - df(kM)) / 12;
}

struct RankCounts {
  std::vector<std::int64_t> top;  // counts of ranks 1..top.size()
  std::int64_t band = 0;          // count of ranks in (top.size(), kBandEnd]
};
constexpr int kTopRanks = 10;
constexpr std::int64_t kBandEnd = 100;

RankCounts draw_counts(const ZipfSampler& sampler, int samples, std::uint64_t seed) {
  Rng rng(seed);
  RankCounts counts{std::vector<std::int64_t>(kTopRanks, 0), 0};
  for (int i = 0; i < samples; ++i) {
    const std::int64_t k = sampler.draw_rank(rng);
    EXPECT_GE(k, 1);
    EXPECT_LE(k, sampler.rows());
    if (k <= kTopRanks)
      ++counts.top[static_cast<std::size_t>(k - 1)];
    else if (k <= kBandEnd)
      ++counts.band;
  }
  return counts;
}

// Each count is Binomial(S, p); it must lie within 5 standard deviations sqrt(S p (1 - p)) of S p
// (two-sided normal tail 5.7e-7 per check, 5 alphas x 2 sizes x 11 checks: < 1e-4 per run), plus
// 1 count for the normal approximation's continuity correction. Returns the failing checks.
int binomial_misses(const RankCounts& counts, std::int64_t rows, double alpha, int samples,
                    bool report) {
  const double norm = zipf_normaliser(rows, alpha);
  int misses = 0;
  auto check = [&](double count, double p, const std::string& what) {
    const double sigma = std::sqrt(samples * p * (1 - p));
    const bool ok = std::abs(count - samples * p) <= 5 * sigma + 1;
    if (!ok) ++misses;
    if (!ok && report) {
      ADD_FAILURE() << "rows " << rows << " alpha " << alpha << " " << what << ": count " << count
                    << ", expected " << samples * p << " +- " << 5 * sigma + 1;
    }
  };
  for (int k = 1; k <= kTopRanks; ++k) {
    check(static_cast<double>(counts.top[static_cast<std::size_t>(k - 1)]),
          std::pow(k, -alpha) / norm, "rank " + std::to_string(k));
  }
  double band_p = 0;
  for (std::int64_t k = kBandEnd; k > kTopRanks; --k)
    band_p += std::pow(static_cast<double>(k), -alpha) / norm;
  check(static_cast<double>(counts.band), band_p, "ranks 11..100");
  return misses;
}

TEST(ZipfSampler, TopRankFrequenciesMatchTheNormalisedPmf) {
  const std::uint64_t seed = testing::test_seed(20261201);
  SCOPED_TRACE(testing::seed_trace(seed));
  constexpr int kSamples = 200000;
  for (const std::int64_t rows : {std::int64_t{1000}, std::int64_t{1000000000}}) {
    for (const double alpha : {0.5, 0.8, 1.0, 1.05, 1.3}) {
      auto sampler = ZipfSampler::create(rows, alpha);
      ASSERT_TRUE(sampler.is_ok()) << sampler.status().to_string();
      const RankCounts counts = draw_counts(*sampler, kSamples, seed);
      EXPECT_EQ(binomial_misses(counts, rows, alpha, kSamples, true), 0);
    }
  }
}

// The check has power: counts drawn with alpha are rejected against the pmf of alpha + 0.1.
TEST(ZipfSampler, TheFrequencyCheckRejectsAWrongExponent) {
  const std::uint64_t seed = testing::test_seed(7);
  SCOPED_TRACE(testing::seed_trace(seed));
  constexpr int kSamples = 200000;
  for (const double alpha : {0.5, 1.0, 1.3}) {
    auto sampler = ZipfSampler::create(1000, alpha);
    ASSERT_TRUE(sampler.is_ok());
    const RankCounts counts = draw_counts(*sampler, kSamples, seed);
    EXPECT_GT(binomial_misses(counts, 1000, alpha + 0.1, kSamples, false), 0) << "alpha " << alpha;
  }
}

// Steep exponents stay exact and terminate: P(1) = 1 / zeta(alpha) for a large table
// (zeta(3) = 1.2020569..., zeta(20) = 1 + 9.5e-7...), within 5 binomial sigmas + 1.
TEST(ZipfSampler, SteepExponentsPutTheRightMassOnRankOne) {
  const std::uint64_t seed = testing::test_seed(11);
  SCOPED_TRACE(testing::seed_trace(seed));
  constexpr int kSamples = 100000;
  for (const auto& [alpha, zeta] : {std::pair{3.0, 1.2020569031595942}, std::pair{20.0, 1.0000009539620338},
                                    std::pair{100.0, 1.0}}) {
    auto sampler = ZipfSampler::create(1000000000, alpha);
    ASSERT_TRUE(sampler.is_ok());
    Rng rng(seed);
    int ones = 0;
    for (int i = 0; i < kSamples; ++i) ones += sampler->draw_rank(rng) == 1 ? 1 : 0;
    const double p = 1.0 / zeta;
    EXPECT_NEAR(ones, kSamples * p, 5 * std::sqrt(kSamples * p * (1 - p)) + 1) << "alpha " << alpha;
  }
}

TEST(ZipfSampler, UniformOneRowAndBadArguments) {
  Rng rng(3);
  auto one = ZipfSampler::create(1, 1.3);
  ASSERT_TRUE(one.is_ok());
  auto uniform = ZipfSampler::create(5, 0.0);
  ASSERT_TRUE(uniform.is_ok());
  std::set<std::int64_t> seen;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(one->draw_rank(rng), 1);
    seen.insert(uniform->draw_rank(rng));
  }
  EXPECT_EQ(seen, (std::set<std::int64_t>{1, 2, 3, 4, 5}));
  for (const auto& [rows, alpha, needle] :
       {std::tuple{std::int64_t{0}, 1.0, "rows=0"},
        std::tuple{std::int64_t{10}, -0.5, "alpha=-0.5"},
        std::tuple{std::int64_t{10}, std::nan(""), "alpha=nan"}}) {
    auto bad = ZipfSampler::create(rows, alpha);
    ASSERT_FALSE(bad.is_ok());
    EXPECT_NE(bad.status().message().find(needle), std::string::npos) << bad.status().message();
  }
}

TEST(TbeSyntheticScatter, IsABijectionThatMovesTheHottestRow) {
  for (const std::int64_t rows :
       {std::int64_t{1}, std::int64_t{7}, std::int64_t{1000}, std::int64_t{1000003}}) {
    for (int feature : {0, 3}) {
      // 1000003 is the first multiplier's prime itself: the second multiplier takes over.
      std::vector<bool> hit(static_cast<std::size_t>(rows), false);
      std::int64_t distinct = 0;
      for (std::int64_t rank = 1; rank <= rows; ++rank) {
        const std::int64_t row = scatter_rank(rank, rows, feature);
        ASSERT_GE(row, 0);
        ASSERT_LT(row, rows);
        if (!hit[static_cast<std::size_t>(row)]) ++distinct;
        hit[static_cast<std::size_t>(row)] = true;
      }
      EXPECT_EQ(distinct, rows) << "rows " << rows;
    }
  }
  // The top ranks of a large table are neither at row 0 nor adjacent.
  const std::int64_t rows = 1000000000;
  EXPECT_NE(scatter_rank(1, rows, 0), 0);
  EXPECT_GT(std::abs(scatter_rank(2, rows, 0) - scatter_rank(1, rows, 0)), 1000);
  EXPECT_NE(scatter_rank(1, rows, 0), scatter_rank(1, rows, 1));
}

TEST(TbeSyntheticBagLengths, FixedUniformOneHotPerFeature) {
  auto layout = TbeLayout::create({{1000, 8}, {50, 16}, {200000, 4}});
  ASSERT_TRUE(layout.is_ok());
  SyntheticBatchOptions options;
  options.batch_size = 400;
  options.per_feature = {{BagLengthDistribution::fixed(7), 0.0},
                         {BagLengthDistribution::uniform(2, 5), 0.8},
                         {BagLengthDistribution::one_hot(), 1.0}};
  ASSERT_TRUE(validate_synthetic_options(*layout, options).is_ok());
  const SyntheticBatch batch = make_synthetic_batch(*layout, options);
  ASSERT_EQ(batch.offsets.size(), 3u * 400u + 1u);
  std::set<std::int64_t> uniform_lengths;
  for (int f = 0; f < 3; ++f) {
    for (std::int64_t b = 0; b < 400; ++b) {
      const std::size_t bag = static_cast<std::size_t>(f * 400 + b);
      const std::int64_t length = batch.offsets[bag + 1] - batch.offsets[bag];
      if (f == 1) {
        uniform_lengths.insert(length);
      } else {
        EXPECT_EQ(length, f == 0 ? 7 : 1) << "feature " << f;
      }
      for (std::int64_t p = batch.offsets[bag]; p < batch.offsets[bag + 1]; ++p) {
        ASSERT_GE(batch.indices[static_cast<std::size_t>(p)], 0);
        ASSERT_LT(batch.indices[static_cast<std::size_t>(p)], layout->feature_rows(f));
      }
    }
  }
  EXPECT_EQ(uniform_lengths, (std::set<std::int64_t>{2, 3, 4, 5}));
}

TEST(TbeSyntheticBagLengths, ParseAndValidateNameTheFieldAndValue) {
  auto fixed = parse_bag_length_distribution("20", "--pooling-factor");
  ASSERT_TRUE(fixed.is_ok());
  EXPECT_EQ(fixed->describe(), "fixed 20");
  auto uniform = parse_bag_length_distribution("0..10", "--pooling-factor");
  ASSERT_TRUE(uniform.is_ok());
  EXPECT_EQ(uniform->describe(), "uniform 0..10");
  EXPECT_DOUBLE_EQ(uniform->mean(), 5.0);
  auto one_hot = parse_bag_length_distribution("one-hot", "--pooling-factor");
  ASSERT_TRUE(one_hot.is_ok());
  EXPECT_EQ(one_hot->kind, BagLengthKind::kOneHot);
  for (const char* text : {"20x", "-1", "5..2", "..", "1..", "one_hot", ""}) {
    auto bad = parse_bag_length_distribution(text, "--pooling-factor");
    ASSERT_FALSE(bad.is_ok()) << text;
    EXPECT_NE(bad.status().message().find("--pooling-factor"), std::string::npos)
        << bad.status().message();
  }
  auto layout = TbeLayout::create({{10, 4}});
  ASSERT_TRUE(layout.is_ok());
  SyntheticBatchOptions options;
  options.zipf_alpha = -1;
  EXPECT_NE(validate_synthetic_options(*layout, options).message().find("alpha=-1"),
            std::string::npos);
  options.zipf_alpha = 0;
  options.per_feature = {{}, {}};
  EXPECT_NE(validate_synthetic_options(*layout, options).message().find("per_feature has 2"),
            std::string::npos);
}

}  // namespace
}  // namespace parity::embedding
