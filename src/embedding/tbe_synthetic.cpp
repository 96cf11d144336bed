// Synthetic TBE batches (see tbe_synthetic.hpp).
#include "parity/embedding/tbe_synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "parity/core/parse.hpp"

namespace parity::embedding {
namespace {

constexpr std::int64_t kMaxZipfRows = std::int64_t{1} << 53;  // ranks exact in a double
constexpr int kMaxBagLength = 1000000;
constexpr double kPaddingSentinel = 1024.0;  // exact in fp16 and bf16, far above any weight

// log1p(t) / t and expm1(t) / t, both -> 1 as t -> 0: H and H^-1 stay accurate for alpha near 1.
double log1p_over(double t) { return std::abs(t) > 1e-8 ? std::log1p(t) / t : 1.0 - t / 2.0; }
double expm1_over(double t) { return std::abs(t) > 1e-8 ? std::expm1(t) / t : 1.0 + t / 2.0; }

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// (a * b) mod m for a < m <= 2^53, b < 2^20, without overflow: b split into 10-bit halves.
std::int64_t mul_mod(std::int64_t a, std::int64_t b, std::int64_t m) {
  const std::int64_t high = (a * (b >> 10)) % m;
  return ((high << 10) % m + a * (b & 1023)) % m;
}

}  // namespace

Result<ZipfSampler> ZipfSampler::create(std::int64_t rows, double alpha) {
  PARITY_CHECK_ARG(rows >= 1 && rows <= kMaxZipfRows, "zipf: rows=", rows, " is out of range [1, 2^53]");
  PARITY_CHECK_ARG(std::isfinite(alpha) && alpha >= 0, "zipf: alpha=", alpha, " must be a finite value >= 0");
  ZipfSampler sampler;
  sampler.rows_ = rows;
  sampler.alpha_ = alpha;
  if (alpha > 0) {
    sampler.integral_first_ = sampler.hat_integral(1.5) - 1.0;
    sampler.integral_last_ = sampler.hat_integral(static_cast<double>(rows) + 0.5);
    sampler.squeeze_ = 2.0 - sampler.hat_integral_inverse(sampler.hat_integral(2.5) - sampler.hat(2.0));
  }
  return sampler;
}

double ZipfSampler::hat(double x) const { return std::exp(-alpha_ * std::log(x)); }

// H(x) = (x^(1-alpha) - 1) / (1 - alpha) = log(x) * expm1((1-alpha) log x) / ((1-alpha) log x).
double ZipfSampler::hat_integral(double x) const {
  const double log_x = std::log(x);
  return log_x * expm1_over((1.0 - alpha_) * log_x);
}

// Solves H(x) = y: log x = log1p((1-alpha) y) / (1-alpha) = y * log1p(t) / t, t = (1-alpha) y.
double ZipfSampler::hat_integral_inverse(double y) const {
  const double t = std::max((1.0 - alpha_) * y, -1.0 + 1e-16);  // t > -1 on the sampled range
  return std::exp(y * log1p_over(t));
}

// Rejection-inversion (Hörmann & Derflinger 1996). The hat h(x) = x^-alpha is convex, so the
// area under it over [k - 1/2, k + 1/2] is at least h(k): draw u uniformly over the area from
// H(1.5) - h(1) to H(n + 1/2), invert to x, round to k, and accept when u lies in the top h(k)
// of k's strip, [H(k + 1/2) - h(k), H(k + 1/2)]. Accepted u for k span exactly h(k), so P(k) is
// proportional to k^-alpha. The squeeze accepts without evaluating H when x is near k.
std::int64_t ZipfSampler::draw_rank(Rng& rng) const {
  if (rows_ == 1) return 1;
  if (alpha_ == 0) return rng.uniform_int(1, rows_);
  while (true) {
    const double u = integral_last_ + rng.uniform() * (integral_first_ - integral_last_);
    const double x = hat_integral_inverse(u);
    const auto k = std::clamp<std::int64_t>(static_cast<std::int64_t>(x + 0.5), 1, rows_);
    const auto k_real = static_cast<double>(k);
    if (k_real - x <= squeeze_ || u >= hat_integral(k_real + 0.5) - hat(k_real)) return k;
  }
}

std::string BagLengthDistribution::describe() const {
  switch (kind) {
    case BagLengthKind::kFixed: return "fixed " + std::to_string(min_length);
    case BagLengthKind::kUniform: return "uniform " + std::to_string(min_length) + ".." + std::to_string(max_length);
    case BagLengthKind::kOneHot: return "one-hot";
  }
  return "?";
}

Status BagLengthDistribution::validate(const std::string& what) const {
  PARITY_CHECK_ARG(min_length >= 0 && max_length <= kMaxBagLength && min_length <= max_length, what, ": bag lengths ",
                   describe(), " must satisfy 0 <= low <= high <= ", kMaxBagLength);
  PARITY_CHECK_ARG(kind != BagLengthKind::kFixed || min_length == max_length, what, ": fixed length needs low == high");
  PARITY_CHECK_ARG(kind != BagLengthKind::kOneHot || (min_length == 1 && max_length == 1), what,
                   ": one-hot bags hold exactly 1 index");
  return Status::ok();
}

Result<BagLengthDistribution> parse_bag_length_distribution(const std::string& text, const std::string& what) {
  if (text == "one-hot") return BagLengthDistribution::one_hot();
  const auto dots = text.find("..");
  BagLengthDistribution lengths;
  if (dots == std::string::npos) {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t fixed, parse_int64(text, what, 0, kMaxBagLength));
    lengths = BagLengthDistribution::fixed(static_cast<int>(fixed));
  } else {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t low, parse_int64(text.substr(0, dots), what, 0, kMaxBagLength));
    PARITY_ASSIGN_OR_RETURN(const std::int64_t high, parse_int64(text.substr(dots + 2), what, 0, kMaxBagLength));
    lengths = BagLengthDistribution::uniform(static_cast<int>(low), static_cast<int>(high));
  }
  PARITY_RETURN_IF_ERROR(lengths.validate(what + "='" + text + "'"));
  return lengths;
}

std::int64_t scatter_rank(std::int64_t rank, std::int64_t rows, int feature) {
  // Multiplication by a prime that does not divide `rows` permutes [0, rows); the shift moves
  // rank 1 off row 0 and apart between features.
  std::int64_t multiplier = 1;
  for (const std::int64_t prime : {1000003, 999983}) {
    if (rows % prime != 0) {
      multiplier = prime;
      break;
    }
  }
  const auto shift = static_cast<std::int64_t>(splitmix64(static_cast<std::uint64_t>(feature)) %
                                               static_cast<std::uint64_t>(rows));
  return (mul_mod((rank - 1) % rows, multiplier % rows, rows) + shift) % rows;
}

Status validate_synthetic_options(const TbeLayout& layout, const SyntheticBatchOptions& options) {
  PARITY_CHECK_ARG(options.batch_size >= 0, "synthetic batch: batch_size=", options.batch_size, " must be >= 0");
  PARITY_CHECK_ARG(options.empty_bag_fraction >= 0 && options.empty_bag_fraction <= 1,
                   "synthetic batch: empty_bag_fraction=", options.empty_bag_fraction, " must be in [0, 1]");
  PARITY_CHECK_ARG(options.hot_rows >= 0, "synthetic batch: hot_rows=", options.hot_rows, " must be >= 0");
  PARITY_CHECK_ARG(options.pooling_factor >= 0 && options.pooling_factor <= kMaxBagLength / 2,
                   "synthetic batch: pooling_factor=", options.pooling_factor, " is out of range [0, ",
                   kMaxBagLength / 2, "]");
  PARITY_CHECK_ARG(options.per_feature.empty() ||
                       options.per_feature.size() == static_cast<std::size_t>(layout.num_features()),
                   "synthetic batch: per_feature has ", options.per_feature.size(), " entries; the layout has ",
                   layout.num_features(), " features");
  for (std::size_t f = 0; f < options.per_feature.size(); ++f) {
    PARITY_RETURN_IF_ERROR(options.per_feature[f].bag_lengths.validate("synthetic batch: feature " + std::to_string(f)));
  }
  for (int f = 0; f < layout.num_features(); ++f) {
    const double alpha = options.per_feature.empty() ? options.zipf_alpha : options.per_feature[f].zipf_alpha;
    PARITY_RETURN_IF_ERROR(ZipfSampler::create(layout.feature_rows(f), alpha).status().with_context(
        "synthetic batch: feature " + std::to_string(f)));
  }
  return Status::ok();
}

SyntheticBatch make_synthetic_batch(const TbeLayout& layout, const SyntheticBatchOptions& options) {
  Rng rng(options.seed);
  SyntheticBatch batch;
  batch.offsets.push_back(0);
  for (int f = 0; f < layout.num_features(); ++f) {
    const std::int64_t rows = layout.feature_rows(f);
    FeatureDraw draw{options.vary_bag_sizes ? BagLengthDistribution::uniform(0, 2 * options.pooling_factor)
                                            : BagLengthDistribution::fixed(options.pooling_factor),
                     options.zipf_alpha};
    if (!options.per_feature.empty()) draw = options.per_feature[f];
    auto sampler = ZipfSampler::create(rows, std::max(0.0, draw.zipf_alpha));
    if (!sampler) sampler = ZipfSampler::create(1, 0.0);  // not validated: degrade to row 0, never crash
    for (std::int64_t b = 0; b < options.batch_size; ++b) {
      std::int64_t length = draw.bag_lengths.min_length;
      if (draw.bag_lengths.kind == BagLengthKind::kUniform) {
        length = rng.uniform_int(draw.bag_lengths.min_length, std::max(draw.bag_lengths.min_length,
                                                                       draw.bag_lengths.max_length));
      }
      if (options.empty_bag_fraction > 0 && rng.uniform() < options.empty_bag_fraction) length = 0;
      for (std::int64_t k = 0; k < length; ++k) {
        std::int64_t row;
        if (options.hot_rows > 0) {
          row = rng.uniform_int(0, std::min(options.hot_rows, rows) - 1);
        } else if (draw.zipf_alpha > 0) {
          row = scatter_rank(sampler->draw_rank(rng), rows, f);
        } else {
          row = rng.uniform_int(0, rows - 1);
        }
        batch.indices.push_back(row);
        if (options.weighted) batch.per_sample_weights.push_back(static_cast<float>(rng.uniform(0.5, 1.5)));
      }
      batch.offsets.push_back(static_cast<std::int64_t>(batch.indices.size()));
    }
  }
  return batch;
}

std::vector<std::uint8_t> pack_indices(const std::vector<std::int64_t>& values, DType index_dtype) {
  std::vector<std::uint8_t> bytes(values.size() * dtype_size_bytes(index_dtype));
  if (index_dtype == DType::kI32) {
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto v = static_cast<std::int32_t>(values[i]);
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    }
  } else if (!values.empty()) {
    std::memcpy(bytes.data(), values.data(), bytes.size());
  }
  return bytes;
}

double load_as_double(const std::vector<std::uint8_t>& bytes, DType dtype, std::int64_t i) {
  if (dtype == DType::kF32) {
    float v;
    std::memcpy(&v, bytes.data() + 4 * i, 4);
    return v;
  }
  std::uint16_t bits;
  std::memcpy(&bits, bytes.data() + 2 * i, 2);
  return dtype == DType::kF16 ? fp16_bits_to_float(bits) : bf16_bits_to_float(bits);
}

std::vector<std::uint8_t> make_weights(const TbeLayout& layout, DType dtype, std::uint64_t seed,
                                       std::vector<double>* as_double) {
  Rng rng(seed);
  const std::int64_t total = layout.total_weight_elements();
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(total) * dtype_size_bytes(dtype));
  if (as_double != nullptr) as_double->resize(static_cast<std::size_t>(total));
  for (int t = 0; t < layout.num_tables(); ++t) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(layout.tables()[t].dim));
    const std::int64_t begin = layout.weights_offset(t);
    const std::int64_t end = layout.weights_offset(t + 1);
    const std::int64_t dim = layout.tables()[t].dim, stride = layout.row_stride(t);
    for (std::int64_t i = begin; i < end; ++i) {
      // Padding (past dim in a padded row, or before the next table's aligned start) holds a
      // value no lookup may see: a kernel that reads it fails the reference comparison.
      const bool padding = (i - begin) % stride >= dim || (i - begin) / stride >= layout.tables()[t].num_rows;
      const double normal = rng.normal();
      const auto v = static_cast<float>(padding ? kPaddingSentinel : normal * scale);
      if (dtype == DType::kF32) {
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      } else {
        const std::uint16_t bits = dtype == DType::kF16 ? float_to_fp16_bits(v) : float_to_bf16_bits(v);
        std::memcpy(bytes.data() + 2 * i, &bits, 2);
      }
      if (as_double != nullptr) (*as_double)[i] = load_as_double(bytes, dtype, i);
    }
  }
  return bytes;
}

void count_per_feature(const TbeProblem& problem, const SyntheticBatch& batch,
                       std::vector<std::int64_t>* indices_per_feature,
                       std::vector<std::int64_t>* unique_rows_per_feature) {
  const int num_features = problem.layout.num_features();
  indices_per_feature->assign(num_features, 0);
  unique_rows_per_feature->assign(num_features, 0);
  for (int f = 0; f < num_features; ++f) {
    const std::int64_t begin = batch.offsets[f * problem.batch_size];
    const std::int64_t end = batch.offsets[(f + 1) * problem.batch_size];
    std::unordered_set<std::int64_t> unique(batch.indices.begin() + begin, batch.indices.begin() + end);
    (*indices_per_feature)[f] = end - begin;
    (*unique_rows_per_feature)[f] = static_cast<std::int64_t>(unique.size());
  }
}

}  // namespace parity::embedding
