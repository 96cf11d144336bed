// Synthetic click data with a planted logistic model. Every sample is drawn from a counter-based
// stream (seed, split, chunk), so the output is the same for any thread count.
//
// Planted model: raw score z = sum_j w_j x_j + sum_t sum_{k<L_t} h_t(id_tk) / sqrt(L_t), with
// x_j = log(1 + max(0, floor(exp(mu_j + sigma_j n)) - 1)) (log-normal counts, many zeros) and
// h_t(id) a hidden per-row weight, uniform with unit variance, hashed from (seed, t, id) so huge
// tables need no storage. label ~ Bernoulli(sigmoid(bias + scale * z)); scale and bias are
// calibrated on a separate sample so the expected AUC is planted_auc_target and the mean
// probability is positive_rate_target.
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <mutex>

#include "binary_format.hpp"
#include "parity/train/metrics.hpp"

namespace parity::data {
namespace {

constexpr std::int64_t kChunkSamples = 16384;
constexpr std::int64_t kCalibrationSamples = 100000;
constexpr std::int64_t kMaxAucSamplesFromTrain = 10'000'000;
constexpr double kMaxPlantedAuc = 0.80;
constexpr int kLog1pTableSize = 4096;

std::uint64_t mix64(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// splitmix64: fast, and every (seed, stream) pair gives an independent-looking sequence.
class StreamRng {
 public:
  StreamRng(std::uint64_t seed, std::uint64_t stream)
      : state_(mix64(seed ^ mix64(stream + 0x9e3779b97f4a7c15ULL))) {}
  std::uint64_t next() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mix64(state_);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double
  normal() {  // Box-Muller: two values per log/sqrt/sincos, the second kept for the next call
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform()));
    const double angle = 6.283185307179586 * uniform();
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

// Index in [0, num_rows) by the inverse power transform of a uniform u (P(rank r) ~ r^-alpha;
// alpha 0 uniform, alpha 1 the log limit), row 0 the most frequent. Tables of at most
// kAliasMaxRows rows sample the same rank distribution with an alias table (one 64-bit draw, no
// transcendental functions): P(rank <= r) = P(T(u) < r + 2) = cdf_bound(r + 2).
class ZipfSampler {
 public:
  static constexpr std::int64_t kAliasMaxRows = std::int64_t{1} << 16;

  ZipfSampler(std::int64_t num_rows, double alpha) : num_rows_(num_rows), alpha_(alpha) {
    const auto rows = static_cast<double>(num_rows);
    log_rows_ = std::log(rows);
    if (!is_uniform() && !is_log_limit()) {
      span_ = std::pow(rows, 1.0 - alpha) - 1.0;
      inverse_exponent_ = 1.0 / (1.0 - alpha);
    }
    if (num_rows <= kAliasMaxRows) build_alias();
  }
  std::int64_t sample(StreamRng& rng) const {
    if (!alias_.empty()) {
      const std::uint64_t bits = rng.next();
      const auto bucket =
          static_cast<std::int64_t>(((bits >> 32) * static_cast<std::uint64_t>(num_rows_)) >> 32);
      const double fraction = static_cast<double>(bits & 0xffffffffULL) * 0x1.0p-32;
      return fraction < keep_[bucket] ? bucket : alias_[bucket];
    }
    const double u = rng.uniform();
    double rank_plus_one;
    if (is_uniform()) {
      rank_plus_one = 1.0 + u * static_cast<double>(num_rows_);
    } else if (is_log_limit()) {
      rank_plus_one = std::exp(u * log_rows_);
    } else {
      rank_plus_one = std::exp(inverse_exponent_ * std::log1p(span_ * u));
    }
    return std::clamp<std::int64_t>(static_cast<std::int64_t>(rank_plus_one) - 1, 0, num_rows_ - 1);
  }

 private:
  bool is_uniform() const { return alpha_ == 0.0; }
  bool is_log_limit() const { return std::abs(alpha_ - 1.0) < 1e-9; }
  // P(T(u) < t) for the transform T above: the u below which T stays under t, in [0, 1].
  double cdf_bound(double t) const {
    double u;
    if (is_uniform()) {
      u = (t - 1.0) / static_cast<double>(num_rows_);
    } else if (is_log_limit()) {
      u = std::log(t) / log_rows_;
    } else {
      u = (std::pow(t, 1.0 - alpha_) - 1.0) / span_;  // also right for alpha > 1 (span < 0)
    }
    return std::clamp(u, 0.0, 1.0);
  }
  // Vose's alias method over the ranks' probabilities.
  void build_alias() {
    const std::int64_t n = num_rows_;
    std::vector<double> scaled(static_cast<std::size_t>(n));
    double below = 0;
    for (std::int64_t r = 0; r < n; ++r) {
      const double upto = r == n - 1 ? 1.0 : cdf_bound(static_cast<double>(r) + 2.0);
      scaled[r] = (upto - below) * static_cast<double>(n);
      below = upto;
    }
    keep_.assign(static_cast<std::size_t>(n), 1.0);
    alias_.assign(static_cast<std::size_t>(n), 0);
    std::vector<std::int64_t> small, large;
    for (std::int64_t r = 0; r < n; ++r) (scaled[r] < 1.0 ? small : large).push_back(r);
    while (!small.empty() && !large.empty()) {
      const std::int64_t s = small.back(), l = large.back();
      small.pop_back();
      keep_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1.0 - scaled[s];
      if (scaled[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (const std::int64_t r : small) alias_[r] = r;  // rounding leftovers keep themselves
    for (const std::int64_t r : large) alias_[r] = r;
  }

  std::int64_t num_rows_;
  double alpha_;
  double log_rows_ = 0;
  double span_ = 0;
  double inverse_exponent_ = 0;
  std::vector<double> keep_;         // alias method: keep the bucket's own rank below this
  std::vector<std::int64_t> alias_;  // else take this rank
};

struct PlantedModel {
  std::uint64_t seed = 0;
  std::vector<double> dense_mu, dense_sigma, dense_weight;
  std::vector<ZipfSampler> zipf;
  std::vector<double> table_norm;   // 1 / sqrt(L_t)
  std::vector<double> log1p_table;  // log(1 + x) for the common small counts
  double scale = 1, bias = 0;

  double hidden_weight(std::size_t table, std::int64_t id) const {
    const std::uint64_t h = mix64(
        seed ^ mix64((static_cast<std::uint64_t>(table) << 40) ^ static_cast<std::uint64_t>(id)));
    return (static_cast<double>(h >> 11) * 0x1.0p-53 * 2.0 - 1.0) *
           1.7320508075688772;  // U(-√3, √3)
  }
};

PlantedModel make_model(const DatasetSchema& schema, const SyntheticOptions& options) {
  PlantedModel model;
  model.seed = mix64(options.seed ^ 0x5eedULL);
  StreamRng rng(options.seed, 0xdeadbeefULL);
  // Dense weights give the dense part about the variance of the sparse part (T units).
  const double dense_gain =
      std::sqrt(static_cast<double>(schema.tables.size()) / std::max(1, schema.num_dense));
  for (int j = 0; j < schema.num_dense; ++j) {
    model.dense_mu.push_back(4.0 * rng.uniform());
    model.dense_sigma.push_back(0.5 + 1.5 * rng.uniform());
    model.dense_weight.push_back(rng.normal() * dense_gain / model.dense_sigma.back());
  }
  for (int x = 0; x < kLog1pTableSize; ++x)
    model.log1p_table.push_back(std::log1p(static_cast<double>(x)));
  for (const TableSchema& table : schema.tables) {
    model.zipf.emplace_back(table.num_rows, options.zipf_alpha);
    model.table_norm.push_back(1.0 / std::sqrt(static_cast<double>(table.ids_per_sample)));
  }
  return model;
}

// Samples of one chunk in the file layout, with their raw planted scores.
struct Chunk {
  std::vector<float> dense;
  std::vector<std::uint8_t> labels;
  std::vector<std::vector<std::int64_t>> ids;
  std::vector<double> raw_scores;
};

// Draws `count` samples' features and raw scores; generate_split draws the labels from them.
void draw_features(const DatasetSchema& schema, const PlantedModel& model, StreamRng& rng,
                   std::int64_t count, Chunk* chunk) {
  const int num_dense = schema.num_dense;
  chunk->dense.resize(static_cast<std::size_t>(count * num_dense));
  chunk->ids.resize(schema.tables.size());
  for (std::size_t t = 0; t < schema.tables.size(); ++t) {
    chunk->ids[t].resize(static_cast<std::size_t>(count * schema.tables[t].ids_per_sample));
  }
  chunk->raw_scores.assign(static_cast<std::size_t>(count), 0.0);
  for (std::int64_t i = 0; i < count; ++i) {
    double z = 0;
    for (int j = 0; j < num_dense; ++j) {
      const double counts =
          std::floor(std::exp(model.dense_mu[j] + model.dense_sigma[j] * rng.normal())) - 1.0;
      const double x = counts < kLog1pTableSize
                           ? model.log1p_table[static_cast<std::size_t>(std::max(0.0, counts))]
                           : std::log1p(std::min(counts, 1e30));
      chunk->dense[i * num_dense + j] = static_cast<float>(x);
      z += model.dense_weight[j] * static_cast<float>(x);
    }
    for (std::size_t t = 0; t < schema.tables.size(); ++t) {
      const int ids_per_sample = schema.tables[t].ids_per_sample;
      double table_sum = 0;
      for (int k = 0; k < ids_per_sample; ++k) {
        const std::int64_t id = model.zipf[t].sample(rng);
        chunk->ids[t][i * ids_per_sample + k] = id;
        table_sum += model.hidden_weight(t, id);
      }
      z += table_sum * model.table_norm[t];
    }
    chunk->raw_scores[i] = z;
  }
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Bias giving mean sigmoid(bias + scale z) = rate: Newton steps kept inside a bisection bracket
// (the mean rises with the bias), so it converges in a few passes and never diverges.
double solve_bias(const std::vector<double>& sorted_z, double scale, double rate) {
  double low = -60, high = 60, bias = 0;
  const auto n = static_cast<double>(sorted_z.size());
  for (int iteration = 0; iteration < 100; ++iteration) {
    double sum = 0, slope = 0;
    for (const double z : sorted_z) {
      const double p = sigmoid(bias + scale * z);
      sum += p;
      slope += p * (1 - p);
    }
    const double excess = sum / n - rate;
    if (std::abs(excess) < 1e-12) break;
    (excess < 0 ? low : high) = bias;
    const double newton = slope > 0 ? bias - excess * n / slope : 0.5 * (low + high);
    bias = newton > low && newton < high ? newton : 0.5 * (low + high);
    if (high - low < 1e-12) break;
  }
  return bias;
}

// Expected AUC when labels are Bernoulli(p_i): sum over ordered pairs z_i > z_j of p_i (1 - p_j),
// ties half, over the expected positive-negative pair count sum p * sum(1-p) - sum p(1-p).
double expected_auc(const std::vector<double>& sorted_z, double scale, double bias) {
  double negatives_below = 0, correct = 0, sum_p = 0, sum_q = 0, sum_pq = 0;
  for (std::size_t start = 0; start < sorted_z.size();) {
    std::size_t end = start;
    double group_p = 0, group_q = 0, group_pq = 0;
    while (end < sorted_z.size() && sorted_z[end] == sorted_z[start]) {
      const double p = sigmoid(bias + scale * sorted_z[end]);
      group_p += p;
      group_q += 1 - p;
      group_pq += p * (1 - p);
      ++end;
    }
    correct += group_p * negatives_below + 0.5 * (group_p * group_q - group_pq);
    negatives_below += group_q;
    sum_p += group_p;
    sum_q += group_q;
    sum_pq += group_pq;
    start = end;
  }
  const double pairs = sum_p * sum_q - sum_pq;
  return pairs > 0 ? correct / pairs : 0.5;
}

Status calibrate(const DatasetSchema& schema, const SyntheticOptions& options,
                 PlantedModel* model) {
  StreamRng rng(options.seed, 0xca11b7a7eULL);
  Chunk chunk;
  draw_features(schema, *model, rng, kCalibrationSamples, &chunk);
  std::vector<double> z = std::move(chunk.raw_scores);
  std::sort(z.begin(), z.end());
  const auto auc_at = [&](double scale) {
    return expected_auc(z, scale, solve_bias(z, scale, options.positive_rate_target));
  };
  double low = 0, high = 1.0 / 64;
  while (auc_at(high) < options.planted_auc_target) {
    low = high;
    high *= 2;
    if (high > 1e6) {
      return invalid_argument(
          "planted_auc_target: ", options.planted_auc_target,
          " is not reachable with this schema (the planted score takes too few distinct "
          "values; at most ",
          auc_at(high), ")");
    }
  }
  while (high - low > 1e-5 * high) {  // the AUC moves by far less than its sampling noise here
    const double mid = 0.5 * (low + high);
    (auc_at(mid) < options.planted_auc_target ? low : high) = mid;
  }
  model->scale = 0.5 * (low + high);
  model->bias = solve_bias(z, model->scale, options.positive_rate_target);
  return Status::ok();
}

Status validate_options(const SyntheticOptions& options) {
  PARITY_CHECK_ARG(options.train_samples >= 0, "train_samples: ", options.train_samples,
                   " is negative");
  PARITY_CHECK_ARG(options.eval_samples >= 0, "eval_samples: ", options.eval_samples,
                   " is negative");
  PARITY_CHECK_ARG(options.train_samples + options.eval_samples > 0,
                   "samples: train and eval are both 0");
  PARITY_CHECK_ARG(
      std::isfinite(options.zipf_alpha) && options.zipf_alpha >= 0 && options.zipf_alpha <= 100,
      "zipf_alpha: ", options.zipf_alpha, " is out of range [0, 100]");
  PARITY_CHECK_ARG(options.planted_auc_target > 0.5 && options.planted_auc_target <= kMaxPlantedAuc,
                   "planted_auc_target: ", options.planted_auc_target, " is out of range (0.5, ",
                   kMaxPlantedAuc, "]");
  PARITY_CHECK_ARG(options.positive_rate_target > 0 && options.positive_rate_target < 1,
                   "positive_rate_target: ", options.positive_rate_target,
                   " is out of range (0, 1)");
  PARITY_CHECK_ARG(options.num_threads >= 0, "num_threads: ", options.num_threads, " is negative");
  return Status::ok();
}

struct SplitResult {
  std::int64_t positives = 0;
  std::vector<float> labels, logits;  // kept for the planted AUC
};

Status generate_split(const DatasetSchema& schema, const SyntheticOptions& options,
                      const PlantedModel& model, const std::string& dir, const std::string& split,
                      std::int64_t num_samples, std::int64_t keep_for_auc, SplitResult* result) {
  PARITY_ASSIGN_OR_RETURN(SplitWriter writer, SplitWriter::create(dir, split, schema));
  const std::int64_t num_chunks = (num_samples + kChunkSamples - 1) / kChunkSamples;
  const std::uint64_t split_stream = split == "train" ? 1 : 2;
  result->labels.assign(static_cast<std::size_t>(keep_for_auc), 0.0f);
  result->logits.assign(static_cast<std::size_t>(keep_for_auc), 0.0f);
  std::atomic<std::int64_t> positives{0};
  std::mutex error_mutex;
  Status first_error;
  const int threads = options.num_threads > 0 ? options.num_threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
  {
    Chunk chunk;
    std::vector<const std::int64_t*> id_pointers(schema.tables.size());
#pragma omp for schedule(dynamic)
    for (std::int64_t c = 0; c < num_chunks; ++c) {
      const std::int64_t first = c * kChunkSamples;
      const std::int64_t count = std::min(kChunkSamples, num_samples - first);
      StreamRng rng(options.seed, (split_stream << 48) ^ static_cast<std::uint64_t>(c));
      draw_features(schema, model, rng, count, &chunk);
      chunk.labels.resize(static_cast<std::size_t>(count));
      std::int64_t chunk_positives = 0;
      for (std::int64_t i = 0; i < count; ++i) {
        const double logit = model.bias + model.scale * chunk.raw_scores[i];
        chunk.labels[i] = rng.uniform() < sigmoid(logit) ? 1 : 0;
        chunk_positives += chunk.labels[i];
        if (first + i < keep_for_auc) {
          result->labels[first + i] = chunk.labels[i];
          result->logits[first + i] = static_cast<float>(logit);
        }
      }
      positives += chunk_positives;
      for (std::size_t t = 0; t < schema.tables.size(); ++t) id_pointers[t] = chunk.ids[t].data();
      const Status written =
          writer.write(first, count, chunk.dense.data(), chunk.labels.data(), id_pointers);
      if (!written.is_ok()) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (first_error.is_ok()) first_error = written;
      }
    }
  }
  PARITY_RETURN_IF_ERROR(first_error);
  result->positives = positives.load();
  return writer.finish(num_samples);
}

}  // namespace

Result<SyntheticReport> generate_synthetic(const DatasetSchema& schema,
                                           const SyntheticOptions& options,
                                           const std::string& out_dir) {
  PARITY_RETURN_IF_ERROR(schema.validate());
  PARITY_RETURN_IF_ERROR(validate_options(options));
  PlantedModel model = make_model(schema, options);
  PARITY_RETURN_IF_ERROR(calibrate(schema, options, &model));
  std::error_code ignored;
  std::filesystem::remove(out_dir + "/manifest.json",
                          ignored);  // the directory is incomplete until the end
  const bool auc_on_eval = options.eval_samples > 0;
  SplitResult train, eval;
  PARITY_RETURN_IF_ERROR(generate_split(
      schema, options, model, out_dir, "train", options.train_samples,
      auc_on_eval ? 0 : std::min(options.train_samples, kMaxAucSamplesFromTrain), &train));
  PARITY_RETURN_IF_ERROR(generate_split(schema, options, model, out_dir, "eval",
                                        options.eval_samples, options.eval_samples, &eval));
  const SplitResult& scored = auc_on_eval ? eval : train;
  SyntheticReport report;
  report.planted_auc = train::auc_exact(scored.labels, scored.logits);
  report.positive_rate = static_cast<double>(train.positives + eval.positives) /
                         static_cast<double>(options.train_samples + options.eval_samples);
  report.planted_scale = model.scale;
  report.planted_bias = model.bias;
  report.bytes_written = bytes_per_sample(schema) * (options.train_samples + options.eval_samples);

  DatasetInfo info;
  info.schema = schema;
  info.train_samples = options.train_samples;
  info.eval_samples = options.eval_samples;
  info.source = "synthetic";
  info.seed = options.seed;
  info.planted_auc = report.planted_auc;
  info.positive_rate = report.positive_rate;
  info.details = {{"zipf_alpha", options.zipf_alpha},
                  {"planted_auc_target", options.planted_auc_target},
                  {"positive_rate_target", options.positive_rate_target},
                  {"planted_scale", model.scale},
                  {"planted_bias", model.bias}};
  PARITY_RETURN_IF_ERROR(write_manifest(out_dir, info));
  return report;
}

}  // namespace parity::data
