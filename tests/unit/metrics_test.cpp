// NE and exact AUC against hand-computed cases and an fp64 brute force over all pairs.
#include "parity/train/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/test_support.hpp"

namespace parity::train {
namespace {

// AUC by definition: over every (positive, negative) pair, 1 if the positive scores higher, 1/2 on
// a tie; fp64 and O(n^2), sharing nothing with auc_exact.
double brute_force_auc(const std::vector<float>& labels, const std::vector<float>& scores) {
  double correct = 0, pairs = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] != 1.0f) continue;
    for (std::size_t j = 0; j < labels.size(); ++j) {
      if (labels[j] != 0.0f) continue;
      pairs += 1;
      if (scores[i] > scores[j]) correct += 1;
      if (scores[i] == scores[j]) correct += 0.5;
    }
  }
  return correct / pairs;
}

TEST(MetricsTest, AucHandComputed) {
  // Perfect ranking, reversed ranking, all tied.
  EXPECT_EQ(auc_exact({0, 0, 1, 1}, {0.1f, 0.2f, 0.3f, 0.4f}), 1.0);
  EXPECT_EQ(auc_exact({1, 1, 0, 0}, {0.1f, 0.2f, 0.3f, 0.4f}), 0.0);
  EXPECT_EQ(auc_exact({1, 0, 1, 0}, {0.5f, 0.5f, 0.5f, 0.5f}), 0.5);
  // Pairs (p, n): (0.8, 0.3) 1, (0.8, 0.9) 0, (0.3 tie 0.3) 1/2, (0.3, 0.9) 0 -> 1.5 / 4.
  EXPECT_EQ(auc_exact({1, 0, 1, 0}, {0.8f, 0.3f, 0.3f, 0.9f}), 0.375);
}

TEST(MetricsTest, AucUndefinedCases) {
  EXPECT_TRUE(std::isnan(auc_exact(std::vector<float>{}, std::vector<float>{})));
  EXPECT_TRUE(std::isnan(auc_exact({1, 1}, {0.1f, 0.2f})));
  EXPECT_TRUE(std::isnan(auc_exact({0, 1}, {0.1f})));
  EXPECT_TRUE(std::isnan(auc_exact({0, 1}, {0.1f, std::nanf("")})));
}

TEST(MetricsTest, AucMatchesBruteForceOnRandomData) {
  const std::uint64_t seed = testing::test_seed(14);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 engine(seed);
  for (const int n : {2, 3, 17, 500, 2000}) {
    std::vector<float> labels(n), scores(n);
    std::bernoulli_distribution label(0.3);
    std::uniform_int_distribution<int> coarse(0, 9);  // many ties
    std::normal_distribution<float> fine(0, 1);
    for (int i = 0; i < n; ++i) {
      labels[i] = label(engine) ? 1.0f : 0.0f;
      scores[i] = (i % 2 == 0) ? static_cast<float>(coarse(engine)) : fine(engine);
    }
    labels[0] = 1;
    labels[1] = 0;
    // Both sides count the same pairs exactly (integers and halves below 2^53): equal, not near.
    EXPECT_EQ(auc_exact(labels, scores), brute_force_auc(labels, scores)) << "n=" << n;
  }
}

TEST(MetricsTest, NeHandComputed) {
  // Base rate 1/2: entropy per sample ln 2. Predicting 1/2 everywhere gives NE 1.
  EXPECT_NEAR(normalized_entropy({1, 0}, {0.5f, 0.5f}), 1.0, 1e-12);
  // Labels {1,0,0,0}, p = {0.5, 0.25, 0.25, 0.25}: logloss sum = ln 2 + 3 ln(4/3);
  // base rate 1/4: entropy sum = -(ln 0.25 + 3 ln 0.75).
  const double expected =
      (std::log(2.0) + 3 * std::log(4.0 / 3.0)) / -(std::log(0.25) + 3 * std::log(0.75));
  // fp32 inputs 0.25/0.5 are exact; the only error is fp64 rounding of a few logs (< 1e-15).
  EXPECT_NEAR(normalized_entropy({1, 0, 0, 0}, {0.5f, 0.25f, 0.25f, 0.25f}), expected, 1e-14);
  // Predicting the base rate itself gives exactly NE 1 (numerator and denominator agree).
  EXPECT_NEAR(normalized_entropy({1, 0, 0, 0}, {0.25f, 0.25f, 0.25f, 0.25f}), 1.0, 1e-14);
  // Clamped: a confident wrong prediction costs -ln(1e-12), not infinity.
  EXPECT_TRUE(std::isfinite(normalized_entropy({1, 0}, {0.0f, 1.0f})));
  EXPECT_TRUE(std::isnan(normalized_entropy({1, 1}, {0.5f, 0.5f})));
  EXPECT_TRUE(std::isnan(normalized_entropy({}, {})));
}

TEST(MetricsTest, AccumulatorMatchesDirectFunctions) {
  const std::uint64_t seed = testing::test_seed(7);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 engine(seed);
  std::normal_distribution<float> logit(0, 2);
  std::bernoulli_distribution label(0.25);
  std::vector<float> labels(3000), logits(3000), probabilities(3000);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    labels[i] = label(engine) ? 1.0f : 0.0f;
    logits[i] = logit(engine);
    probabilities[i] = static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(logits[i]))));
  }
  MetricsAccumulator accumulator;
  for (std::size_t at = 0; at < labels.size(); at += 1000)
    accumulator.add(&labels[at], &logits[at], 1000);
  EXPECT_EQ(accumulator.count(), 3000);
  EXPECT_EQ(accumulator.auc(), auc_exact(labels, logits));
  // The accumulator works from logits in fp64; the direct NE sees the probabilities rounded to
  // fp32, a relative error of at most 2^-24 per term in p, i.e. |d log p| <= 2^-24 / min(p, 1-p)
  // with min(p, 1-p) >= sigmoid(-|z|max) ~ 1e-4 for |z| <= 9 (4.5 sigma): bound 2^-24 * 1e4 ~ 6e-4
  // per term; the average is far smaller, so 1e-3 relative is a safe, derived bound.
  EXPECT_NEAR(accumulator.ne(), normalized_entropy(labels, probabilities), 1e-3 * accumulator.ne());
  EXPECT_NEAR(
      accumulator.logloss() * 3000,
      accumulator.ne() *
          -[&] {
            double p = 0;
            for (const float y : labels) p += y;
            p /= 3000;
            return 3000 * (p * std::log(p) + (1 - p) * std::log(1 - p));
          }(),
      1e-9);
  accumulator.reset();
  EXPECT_EQ(accumulator.count(), 0);
  EXPECT_TRUE(std::isnan(accumulator.ne()));
}

}  // namespace
}  // namespace parity::train
