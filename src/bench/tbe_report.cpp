// `bench tbe`'s forward report (include/parity/bench/tbe_bench.hpp): achieved bandwidth under the
// every-lookup and unique-row byte models, the ratio to the copy measured in the same call, and
// issue 13's targets by row size, combined over mixed row sizes; the results-file fragments of
// the features' draws and the forward bandwidth (bench/results_json.hpp).
#include <algorithm>
#include <cstdint>
#include <map>

#include "bench/results_json.hpp"
#include "core/text_format.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/tbe_bench.hpp"

namespace parity::bench {

double tbe_forward_target_fraction(std::int64_t row_bytes) {
  if (row_bytes >= 256) return 0.70;
  if (row_bytes >= 129) return 0.60;
  return 0.50;
}

TbeForwardBandwidth evaluate_tbe_forward(const embedding::TbeProblem& problem,
                                         const TbeBenchSpec& spec,
                                         const embedding::TbeByteModel& bytes,
                                         const std::vector<std::int64_t>& indices_per_feature,
                                         double forward_ms, double copy_tbps) {
  TbeForwardBandwidth r;
  r.every_lookup_tbps = bandwidth_tbps(bytes.forward_bytes, forward_ms);
  r.unique_rows_tbps = bandwidth_tbps(bytes.forward_unique_rows_bytes, forward_ms);
  r.copy_tbps = copy_tbps;
  if (copy_tbps > 0) {
    r.every_lookup_ratio = r.every_lookup_tbps / copy_tbps;
    r.unique_rows_ratio = r.unique_rows_tbps / copy_tbps;
  }
  // Mixed row sizes: were each class exactly at its target, the time would be
  // sum_c bytes_c / (target_c * copy), so the whole run's target is the bytes-weighted harmonic
  // mean 1 / sum_c (share_c / target_c). Row bytes read per lookup weight the classes.
  const auto weight_bytes = static_cast<double>(dtype_size_bytes(problem.weight_dtype));
  double total = 0, time_per_byte = 0;
  for (int f = 0; f < problem.layout.num_features(); ++f) {
    const double row_bytes = problem.layout.feature_dim(f) * weight_bytes;
    const double feature_bytes =
        static_cast<double>(indices_per_feature.at(static_cast<std::size_t>(f))) * row_bytes;
    total += feature_bytes;
    time_per_byte +=
        feature_bytes / tbe_forward_target_fraction(static_cast<std::int64_t>(row_bytes));
  }
  r.target_fraction = total > 0 ? total / time_per_byte : tbe_forward_target_fraction(0);
  r.counts_unique_rows = spec.max_zipf() > 1.05;
  r.evaluated_ratio = r.counts_unique_rows ? r.unique_rows_ratio : r.every_lookup_ratio;
  r.target_met = copy_tbps > 0 && r.evaluated_ratio >= r.target_fraction;
  return r;
}

std::string TbeForwardBandwidth::describe() const {
  std::string text = format_text(
      "  forward bandwidth: every lookup %.3f TB/s (%.1f%% of copy), unique rows %.3f TB/s "
      "(%.1f%%); copy %.3f TB/s "
      "same call\n",
      every_lookup_tbps, 100 * every_lookup_ratio, unique_rows_tbps, 100 * unique_rows_ratio,
      copy_tbps);
  text += format_text("  forward target: >= %.1f%% of copy (%s byte model): %.1f%% -> %s\n",
                      100 * target_fraction,
                      counts_unique_rows ? "unique-row, Zipf alpha > 1.05" : "every-lookup",
                      100 * evaluated_ratio, target_met ? "met" : "NOT met");
  return text;
}

nlohmann::json tbe_feature_draws_json(const TbeBenchSpec& spec, const embedding::TbeLayout& layout) {
  nlohmann::json features = nlohmann::json::array();
  const auto draws = spec.feature_draws();
  for (int f = 0; f < layout.num_features(); ++f) {
    const int t = layout.table_of_feature()[f];
    std::string table = spec.table_names.empty() ? std::string("t") : spec.table_names[t];
    if (spec.table_names.empty()) table += std::to_string(t);  // (not "t" + ...: GCC 12 -Wrestrict)
    features.push_back({{"table", table},
                        {"rows", layout.tables()[t].num_rows},
                        {"dim", layout.tables()[t].dim},
                        {"bag_lengths", draws[f].bag_lengths.describe()},
                        {"zipf_alpha", draws[f].zipf_alpha}});
  }
  return features;
}

nlohmann::json tbe_forward_bandwidth_json(const TbeForwardBandwidth& fwd, const HbmMeasurement& copy) {
  return {{"every_lookup_tbps", fwd.every_lookup_tbps},
          {"unique_rows_tbps", fwd.unique_rows_tbps},
          {"copy_tbps", fwd.copy_tbps},
          {"copy_method", copy.ceiling().method},
          {"copy_total_bytes", copy.total_bytes},
          {"copy_median_ms", copy.ceiling().stats.median_ms},
          {"every_lookup_ratio_to_copy", fwd.every_lookup_ratio},
          {"unique_rows_ratio_to_copy", fwd.unique_rows_ratio},
          {"target_ratio_to_copy", fwd.target_fraction},
          {"evaluated_byte_model", fwd.counts_unique_rows ? "unique_rows" : "every_lookup"},
          {"evaluated_ratio_to_copy", fwd.evaluated_ratio},
          {"target_met", fwd.target_met},
          {"targets", "forward >= 70% of copy for rows >= 256 B, >= 60% for 129-255 B, >= 50% for <= 128 B "
                      "(bytes-weighted harmonic mean over mixed rows); unique-row model when Zipf alpha > 1.05"}};
}

}  // namespace parity::bench
