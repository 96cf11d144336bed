// Seeded synthetic TBE batches for tests, `parity tbe check` and `parity bench tbe`: uniform or
// Zipf-skewed indices (any alpha >= 0, exact discrete pmf, hot rows scattered over the table by a
// fixed bijection), bag lengths fixed / uniform lo..hi / one-hot per feature, empty bags,
// optional per-sample weights, and packing to the problem's dtypes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/core/rng.hpp"
#include "parity/embedding/tbe.hpp"

namespace parity::embedding {

/// Exact Zipf ranks: P(k) = k^-alpha / sum_{j=1..n} j^-alpha for k in [1, n], any alpha > 0 (alpha
/// = 0 is uniform), n up to 2^53, O(1) memory and expected O(1) time per draw. Rejection-inversion
/// (W. Hörmann and G. Derflinger, "Rejection-inversion to generate variates from monotone discrete
/// distributions", ACM TOMACS 6(3):169-184, 1996), written from the paper's construction.
class ZipfSampler {
 public:
  /// kInvalidArgument naming rows / alpha when rows < 1, alpha < 0 or not finite, rows > 2^53.
  static Result<ZipfSampler> create(std::int64_t rows, double alpha);
  /// A rank in [1, rows]; rank 1 is the most frequent.
  std::int64_t draw_rank(Rng& rng) const;
  std::int64_t rows() const { return rows_; }
  double alpha() const { return alpha_; }

 private:
  double hat_integral(double x) const;          // H(x) = integral_1^x t^-alpha dt
  double hat_integral_inverse(double y) const;  // H^-1
  double hat(double x) const;                   // h(x) = x^-alpha
  std::int64_t rows_ = 1;
  double alpha_ = 0;
  double integral_first_ = 0;  // H(1.5) - h(1): the left end of the inverted range
  double integral_last_ = 0;   // H(rows + 0.5): the right end
  double squeeze_ = 0;         // 2 - H^-1(H(2.5) - h(2)): |k - x| <= this accepts without a test
};

/// How many indices a bag holds. kFixed: exactly min_length; kUniform: uniform in
/// [min_length, max_length]; kOneHot: exactly 1.
enum class BagLengthKind : std::uint8_t { kFixed, kUniform, kOneHot };
struct BagLengthDistribution {
  BagLengthKind kind = BagLengthKind::kFixed;
  int min_length = 1;
  int max_length = 1;
  static BagLengthDistribution fixed(int length) { return {BagLengthKind::kFixed, length, length}; }
  static BagLengthDistribution uniform(int low, int high) { return {BagLengthKind::kUniform, low, high}; }
  static BagLengthDistribution one_hot() { return {BagLengthKind::kOneHot, 1, 1}; }
  double mean() const { return 0.5 * (min_length + max_length); }
  /// "fixed 20", "uniform 0..10", "one-hot".
  std::string describe() const;
  /// kInvalidArgument naming `what` and the lengths (0 <= min <= max <= 1e6).
  Status validate(const std::string& what) const;
};
/// "20" (fixed), "0..10" (uniform), "one-hot"; errors name `what` and the text.
Result<BagLengthDistribution> parse_bag_length_distribution(const std::string& text, const std::string& what);

/// Per-feature draw: the bag lengths and the Zipf exponent of one feature.
struct FeatureDraw {
  BagLengthDistribution bag_lengths;
  double zipf_alpha = 0;  // 0 = uniform rows
};

struct SyntheticBatchOptions {
  std::int64_t batch_size = 1;
  int pooling_factor = 1;         // L: mean bag size
  bool vary_bag_sizes = false;    // sizes uniform in [0, 2L] instead of exactly L
  double empty_bag_fraction = 0;  // this fraction of bags is forced empty
  double zipf_alpha = 0;          // 0 = uniform rows
  std::int64_t hot_rows = 0;      // > 0: every index drawn from rows [0, hot_rows) of its table
  bool weighted = false;
  std::uint64_t seed = 1;
  /// One entry per feature: replaces pooling_factor / vary_bag_sizes / zipf_alpha for it. Empty:
  /// every feature uses those three.
  std::vector<FeatureDraw> per_feature;
};

struct SyntheticBatch {
  std::vector<std::int64_t> indices;
  std::vector<std::int64_t> offsets;  // F*B+1, feature-major
  std::vector<float> per_sample_weights;
};

/// kInvalidArgument naming the field: batch_size < 0, a bad length distribution, alpha < 0 or not
/// finite, per_feature of the wrong size, fractions outside [0, 1].
Status validate_synthetic_options(const TbeLayout& layout, const SyntheticBatchOptions& options);
/// The batch; options must pass validate_synthetic_options (invalid ones are clamped, not trusted).
SyntheticBatch make_synthetic_batch(const TbeLayout& layout, const SyntheticBatchOptions& options);

/// Where Zipf rank k (1-based) of `feature` lands in a table of `rows` rows: a fixed bijection of
/// [0, rows) (multiplicative hash plus a per-feature shift), so hot rows are spread, not at 0.
std::int64_t scatter_rank(std::int64_t rank, std::int64_t rows, int feature);

/// Bytes of `values` as int32 or int64 (the problem's index dtype).
std::vector<std::uint8_t> pack_indices(const std::vector<std::int64_t>& values, DType index_dtype);
/// All weights of the layout, normal(0, 1) scaled by 1/sqrt(D), in `dtype`; `as_double` gets the
/// stored values (after rounding) for the fp64 reference when non-null.
std::vector<std::uint8_t> make_weights(const TbeLayout& layout, DType dtype, std::uint64_t seed,
                                       std::vector<double>* as_double = nullptr);
/// Stored element i of a weights/output buffer of `dtype` as double.
double load_as_double(const std::vector<std::uint8_t>& bytes, DType dtype, std::int64_t i);
/// Per-feature index counts and unique-row counts (for the byte models).
void count_per_feature(const TbeProblem& problem, const SyntheticBatch& batch,
                       std::vector<std::int64_t>* indices_per_feature,
                       std::vector<std::int64_t>* unique_rows_per_feature);

}  // namespace parity::embedding
