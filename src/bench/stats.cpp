// Summary statistics of repeated timings (see include/parity/bench/stats.hpp for the convention).
#include "parity/bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

namespace parity::bench {

double sorted_quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

Result<SampleStats> summarize(std::vector<double> samples_ms) {
  PARITY_CHECK_ARG(!samples_ms.empty(), "summarize: samples_ms is empty; expected at least one timing");
  for (std::size_t i = 0; i < samples_ms.size(); ++i) {
    PARITY_CHECK_ARG(std::isfinite(samples_ms[i]) && samples_ms[i] >= 0.0, "summarize: samples_ms[", i,
                     "]=", samples_ms[i], " must be finite and >= 0");
  }
  std::sort(samples_ms.begin(), samples_ms.end());
  SampleStats stats;
  stats.count = static_cast<int>(samples_ms.size());
  stats.min_ms = samples_ms.front();
  stats.max_ms = samples_ms.back();
  stats.median_ms = sorted_quantile(samples_ms, 0.5);
  stats.p10_ms = sorted_quantile(samples_ms, 0.1);
  stats.p90_ms = sorted_quantile(samples_ms, 0.9);
  stats.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) /
                  static_cast<double>(samples_ms.size());
  return stats;
}

}  // namespace parity::bench
