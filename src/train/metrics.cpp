// NE and exact AUC in fp64. AUC sorts the samples by score once and walks the groups of equal
// scores: a positive scores 1 for every negative below it and 1/2 for every tied negative.
#include "parity/train/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace parity::train {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double clamp_probability(double p) {
  return std::clamp(p, kProbabilityClamp, 1.0 - kProbabilityClamp);
}

// -(P log p̄ + N log(1 - p̄)) for label sum P of n samples; 0 when all labels are equal.
double base_rate_entropy(double label_sum, double n) {
  if (n <= 0) return 0;
  const double p = label_sum / n;
  if (p <= 0 || p >= 1) return 0;
  const double clamped = clamp_probability(p);
  return -(label_sum * std::log(clamped) + (n - label_sum) * std::log(1.0 - clamped));
}

// The logit whose sigmoid is 1 - kProbabilityClamp: clamping logits there clamps p as NE does.
const double kMaxLogit = std::log((1.0 - kProbabilityClamp) / kProbabilityClamp);

// -(y log σ(z) + (1-y) log(1-σ(z))) = softplus(z) - y z, stable for any z.
double logloss_from_logit(double label, double logit) {
  const double z = std::clamp(logit, -kMaxLogit, kMaxLogit);
  const double softplus = std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
  return softplus - label * z;
}

}  // namespace

double normalized_entropy(const std::vector<float>& labels,
                          const std::vector<float>& probabilities) {
  if (labels.empty() || labels.size() != probabilities.size()) return kNaN;
  double loss_sum = 0;
  double label_sum = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const double y = labels[i];
    const double p = clamp_probability(probabilities[i]);
    loss_sum -= y * std::log(p) + (1.0 - y) * std::log(1.0 - p);
    label_sum += y;
  }
  const double entropy = base_rate_entropy(label_sum, static_cast<double>(labels.size()));
  return entropy > 0 ? loss_sum / entropy : kNaN;
}

double auc_exact(const float* labels, const float* scores, std::int64_t n) {
  if (n <= 0) return kNaN;
  // Sorted by value as (score, label) pairs: contiguous, so sorting 10^8 samples stays
  // cache-friendly.
  struct ScoredLabel {
    float score;
    bool is_positive;
  };
  std::vector<ScoredLabel> samples(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    if (std::isnan(scores[i])) return kNaN;  // NaN has no order: the AUC is undefined
    samples[i] = {scores[i], labels[i] > 0.5f};
  }
  std::sort(samples.begin(), samples.end(),
            [](const ScoredLabel& a, const ScoredLabel& b) { return a.score < b.score; });
  // Twice the count of correctly ordered (positive, negative) pairs, ties counted once: exact in
  // int64 up to ~3e9 samples (2 P N < 2^63).
  std::int64_t twice_correct_pairs = 0;
  std::int64_t negatives_below = 0;
  std::int64_t positives = 0;
  for (std::int64_t start = 0; start < n;) {
    std::int64_t end = start;
    std::int64_t group_positives = 0;
    while (end < n && samples[end].score == samples[start].score) {
      group_positives += samples[end].is_positive ? 1 : 0;
      ++end;
    }
    const std::int64_t group_negatives = (end - start) - group_positives;
    twice_correct_pairs +=
        2 * group_positives * negatives_below + group_positives * group_negatives;
    negatives_below += group_negatives;
    positives += group_positives;
    start = end;
  }
  const std::int64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) return kNaN;
  return static_cast<double>(twice_correct_pairs) /
         (2.0 * static_cast<double>(positives) * static_cast<double>(negatives));
}

double auc_exact(const std::vector<float>& labels, const std::vector<float>& scores) {
  if (labels.size() != scores.size()) return kNaN;
  return auc_exact(labels.data(), scores.data(), static_cast<std::int64_t>(labels.size()));
}

void MetricsAccumulator::add(const float* labels, const float* logits, std::int64_t n) {
  if (n <= 0) return;
  labels_.insert(labels_.end(), labels, labels + n);
  logits_.insert(logits_.end(), logits, logits + n);
  for (std::int64_t i = 0; i < n; ++i) {
    loss_sum_ += logloss_from_logit(labels[i], logits[i]);
    label_sum_ += labels[i];
    positives_ += labels[i] > 0.5f ? 1 : 0;
  }
}

double MetricsAccumulator::ne() const {
  const double entropy = base_rate_entropy(label_sum_, static_cast<double>(count()));
  return entropy > 0 ? loss_sum_ / entropy : kNaN;
}

double MetricsAccumulator::auc() const { return auc_exact(labels_, logits_); }

double MetricsAccumulator::logloss() const {
  return count() > 0 ? loss_sum_ / static_cast<double>(count()) : kNaN;
}

std::int64_t MetricsAccumulator::count() const { return static_cast<std::int64_t>(labels_.size()); }

void MetricsAccumulator::reset() {
  labels_.clear();
  logits_.clear();
  loss_sum_ = 0;
  label_sum_ = 0;
  positives_ = 0;
}

}  // namespace parity::train
