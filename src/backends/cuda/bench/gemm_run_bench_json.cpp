// The `bench gemm-run` results file (include/parity/bench/gemm_run_bench.hpp).
#include "bench/results_json.hpp"
#include "parity/bench/gemm_run_bench.hpp"

namespace parity::bench {
namespace {

nlohmann::json result_json(const GemmRunBenchResult& r) {
  const auto& p = r.item.problem;
  nlohmann::json row = {{"model", r.item.model},
                        {"layer", r.item.layer},
                        {"pass", r.item.pass},
                        {"problem", p.shape.describe()},
                        {"run_epilogue", gemm::run_epilogue_name(p.epilogue)},
                        {"flop_count", p.shape.flop_count()}};
  if (!r.error.empty()) {
    row["error"] = r.error;
    return row;
  }
  const double ratio = r.oracle_median_ms > 0.0 ? r.oracle_median_ms / r.run.median_ms : 0.0;
  row.update({{"configuration", r.configuration},
              {"create_ms", r.create_ms},
              {"run", sample_stats_json(r.run)},
              {"heuristic_configuration", r.heuristic_configuration},
              {"heuristic", sample_stats_json(r.heuristic)},
              {"oracle_problem", r.oracle_problem},
              {"oracle_configuration", r.oracle_configuration},
              {"oracle_median_ms", r.oracle_median_ms},
              {"oracle_over_chosen", ratio},
              {"host_run_us", r.host_run_us},
              {"host_bare_us", r.host_bare_us},
              {"host_overhead_us", r.host_run_us - r.host_bare_us}});
  return row;
}

}  // namespace

Status write_gemm_run_bench_json(const std::vector<GemmRunBenchResult>& results, const GemmRunBenchMethod& method,
                                 const GemmRunBenchOptions& options, const DeviceClocks& clocks_before,
                                 const DeviceClocks& clocks_after, const std::string& path) {
  nlohmann::json document = results_document("gemm_run", provenance_json(0));
  document["method"] = {
      {"batch", method.batch},
      {"dtype", gemm::gemm_dtype_name(method.dtype)},
      {"cache", cache_mode_name(options.timing.cache)},
      {"warmup_iterations", options.timing.warmup_iterations},
      {"repetitions", options.timing.repetitions},
      {"oracle", options.measure_oracle ? "gemm measure (epilogue as the provider times it)" : "off"},
      {"host_calls", options.host_calls},
      {"host_samples", options.host_samples},
      {"hardware", options.hardware}};
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : results) rows.push_back(result_json(r));
  document["results"] = std::move(rows);
  document["clocks_before"] = clocks_json(clocks_before);
  document["clocks_after"] = clocks_json(clocks_after);
  return write_json_file(path, document);
}

}  // namespace parity::bench
