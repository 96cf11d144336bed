// `parity bench hbm` driver (include/parity/bench/hbm.hpp): the copy measurement, its table and
// its results file.
#include <cstdio>

#include "bench/results_json.hpp"
#include "core/text_format.hpp"
#include "parity/bench/hbm.hpp"

namespace parity::bench {
namespace {


std::string hbm_table(const HbmMeasurement& m) {
  const std::string scratch = m.flush_bytes > 0 ? " (" + std::to_string(m.flush_bytes >> 20) + " MiB scratch)" : "";
  std::string text = format_text("bench hbm: %.3f GB moved per copy (%.3f GB read + %.3f GB written), cache=%s%s, warmup=%d, "
                          "reps=%d\n",
                          static_cast<double>(m.total_bytes) / 1e9, static_cast<double>(m.copy_bytes) / 1e9,
                          static_cast<double>(m.copy_bytes) / 1e9, cache_mode_name(m.options.cache), scratch.c_str(),
                          m.options.warmup_iterations, m.options.repetitions);
  text += format_text("check: both copies equal the source bit for bit (%lld bytes compared each)\n",
               static_cast<long long>(m.copy_bytes));
  text += format_text("%-28s %10s %10s %10s %10s %6s %10s %18s\n", "method", "median_ms", "p10_ms", "p90_ms", "min_ms",
               "count", "TB/s", "TB/s p90..p10 time");
  for (const CopyTiming* t : {&m.kernel, &m.runtime_copy}) {
    text += format_text("%-28s %10.4f %10.4f %10.4f %10.4f %6d %10.3f %8.3f..%-8.3f\n", t->method.c_str(), t->stats.median_ms,
                 t->stats.p10_ms, t->stats.p90_ms, t->stats.min_ms, t->stats.count, t->median_tbps, t->p90_ms_tbps,
                 t->p10_ms_tbps);
  }
  return text + format_text("ceiling: %.3f TB/s (%s, median)\n", m.ceiling().median_tbps, m.ceiling().method.c_str());
}

}  // namespace

Result<std::string> run_hbm_bench(std::int64_t total_bytes, const TimingOptions& options, const std::string& out) {
  nlohmann::json document = results_document("hbm_copy", provenance_json(0));
  PARITY_ASSIGN_OR_RETURN(const auto clocks_before, read_device_clocks());
  PARITY_ASSIGN_OR_RETURN(const HbmMeasurement measurement, measure_hbm_copy(total_bytes, options));
  PARITY_ASSIGN_OR_RETURN(const auto clocks_after, read_device_clocks());
  std::string text = hbm_table(measurement);
  text += format_text("clocks: SM %d -> %d MHz, memory %d -> %d MHz (%s)\n", clocks_before.sm_clock_mhz,
               clocks_after.sm_clock_mhz, clocks_before.memory_clock_mhz, clocks_after.memory_clock_mhz,
               clocks_after.source.c_str());
  document.update(hbm_measurement_json(measurement));
  PARITY_RETURN_IF_ERROR(finish_results_document(document, clocks_before, clocks_after, out, &text));
  return text;
}

}  // namespace parity::bench
