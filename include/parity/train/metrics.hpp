// Evaluation metrics of a click model: normalized entropy (NE, torchrec's definition) and the
// exact area under the ROC curve (sorted scores, ties counted half), in fp64.
//
// NE = logloss / entropy of the base rate: [-sum(y log p + (1-y) log(1-p))] / [-(P log p̄ + N
// log(1-p̄))], P positives, N negatives, p̄ = P/(P+N); p clamped to [1e-12, 1-1e-12] as torchrec
// does. NE < 1 beats predicting the base rate. Labels are 0 or 1 (a label > 0.5 counts as positive
// for AUC).
#pragma once

#include <cstdint>
#include <vector>

namespace parity::train {

/// Probability clamp of NE and logloss (torchrec's eta).
inline constexpr double kProbabilityClamp = 1e-12;

/// NaN when empty, when the sizes differ, or when all labels are equal (base entropy 0).
double normalized_entropy(const std::vector<float>& labels,
                          const std::vector<float>& probabilities);
/// Exact AUC: NaN when empty, when the sizes differ, when a class is missing or a score is NaN.
double auc_exact(const std::vector<float>& labels, const std::vector<float>& scores);
/// The same on raw arrays: positives are labels[i] > 0.5.
double auc_exact(const float* labels, const float* scores, std::int64_t n);

/// Accumulates an evaluation pass batch by batch from logits; keeps every (label, logit) for the
/// exact AUC (8 bytes per sample) and fp64 sums for the logloss.
struct MetricsAccumulator {
 public:
  void add(const float* labels, const float* logits, std::int64_t n);
  double ne() const;
  double auc() const;
  double logloss() const;  ///< mean binary cross-entropy (natural log); NaN when empty
  std::int64_t count() const;
  std::int64_t positives() const { return positives_; }
  void reset();

 private:
  std::vector<float> labels_;
  std::vector<float> logits_;
  double loss_sum_ = 0;   // sum of -(y log p + (1-y) log(1-p)), natural log
  double label_sum_ = 0;  // P (soft labels allowed)
  std::int64_t positives_ = 0;
};

}  // namespace parity::train
