// Shared pieces of results files: a SampleStats object and the document frame every benchmark
// writes (benchmark name, provenance, then its own fields). Rates: see docs/benchmarking.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "parity/bench/stats.hpp"

namespace parity::bench {

/// {"median_ms", "p10_ms", "p90_ms", "min_ms", "max_ms", "mean_ms", "count"}.
nlohmann::json sample_stats_json(const SampleStats& stats);

/// {"benchmark": name, "provenance": provenance}; callers add their fields.
nlohmann::json results_document(const std::string& benchmark, nlohmann::json provenance);

}  // namespace parity::bench
