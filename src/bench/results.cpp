#include "bench/results_json.hpp"

#include <utility>

namespace parity::bench {

nlohmann::json sample_stats_json(const SampleStats& stats) {
  return {{"median_ms", stats.median_ms}, {"p10_ms", stats.p10_ms}, {"p90_ms", stats.p90_ms},
          {"min_ms", stats.min_ms},       {"max_ms", stats.max_ms}, {"mean_ms", stats.mean_ms},
          {"count", stats.count}};
}

nlohmann::json results_document(const std::string& benchmark, nlohmann::json provenance) {
  return {{"benchmark", benchmark}, {"provenance", std::move(provenance)}};
}

}  // namespace parity::bench
