// `parity bench hbm`: device copy bandwidth (bytes read + written), the portable vectorised copy
// kernel and cudaMemcpyAsync in the same run, each checked before it is timed; the faster median
// is the ceiling. Arguments are validated first (exit 2), then the device is required (exit 3).
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/provenance.hpp"
#include "parity/bench/results.hpp"

namespace parity::cli {
namespace {

struct HbmArgs {
  std::string bytes_text = std::to_string(bench::kDefaultHbmTotalBytes);
  int warmup = 10;
  int reps = 50;
  double warmup_ms = 0.0;
  double rep_ms = 0.0;
  std::string flush_bytes = "0";
  std::string cache = "flush";
  std::string out;
};

#ifdef PARITY_HAS_CUDA
void print_hbm_table(const bench::HbmMeasurement& m) {
  std::printf("bench hbm: %.3f GB moved per copy (%.3f GB read + %.3f GB written), cache=%s%s, warmup=%d, reps=%d\n",
              static_cast<double>(m.total_bytes) / 1e9, static_cast<double>(m.copy_bytes) / 1e9,
              static_cast<double>(m.copy_bytes) / 1e9, bench::cache_mode_name(m.options.cache),
              m.flush_bytes > 0 ? (" (" + std::to_string(m.flush_bytes >> 20) + " MiB scratch)").c_str() : "",
              m.options.warmup_iterations, m.options.repetitions);
  std::printf("check: both copies equal the source bit for bit (%lld bytes compared each)\n",
              static_cast<long long>(m.copy_bytes));
  std::printf("%-28s %10s %10s %10s %10s %6s %10s %18s\n", "method", "median_ms", "p10_ms", "p90_ms", "min_ms",
              "count", "TB/s", "TB/s p90..p10 time");
  for (const bench::CopyTiming* t : {&m.kernel, &m.runtime_copy}) {
    std::printf("%-28s %10.4f %10.4f %10.4f %10.4f %6d %10.3f %8.3f..%-8.3f\n", t->method.c_str(),
                t->stats.median_ms, t->stats.p10_ms, t->stats.p90_ms, t->stats.min_ms, t->stats.count,
                t->median_tbps, t->p90_ms_tbps, t->p10_ms_tbps);
  }
  std::printf("ceiling: %.3f TB/s (%s, median)\n", m.ceiling().median_tbps, m.ceiling().method.c_str());
}
#endif

Status run_bench_hbm(const HbmArgs& args) {
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const std::int64_t total_bytes, copy_bytes_from_flag("bench hbm", args.bytes_text));
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const bench::TimingOptions options,
                          timing_options_from_flags("bench hbm", args.warmup, args.reps, args.cache, args.warmup_ms,
                                                    args.rep_ms, args.flush_bytes));
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench hbm"));
#ifdef PARITY_HAS_CUDA
  ProcessArgs process_args;
  nlohmann::json document =
      bench::results_document("hbm_copy", bench::provenance_json(process_args.argc(), process_args.argv(), 0));
  PARITY_ASSIGN_OR_RETURN(const auto clocks_before, bench::read_device_clocks());
  PARITY_ASSIGN_OR_RETURN(const bench::HbmMeasurement measurement, bench::measure_hbm_copy(total_bytes, options));
  PARITY_ASSIGN_OR_RETURN(const auto clocks_after, bench::read_device_clocks());
  print_hbm_table(measurement);
  std::printf("clocks: SM %d -> %d MHz, memory %d -> %d MHz (%s)\n", clocks_before.sm_clock_mhz,
              clocks_after.sm_clock_mhz, clocks_before.memory_clock_mhz, clocks_after.memory_clock_mhz,
              clocks_after.source.c_str());
  document.update(bench::hbm_measurement_json(measurement));
  return finish_results_document(document, clocks_before, clocks_after, args.out);
#else
  return internal_error("bench hbm: unreachable without CUDA");
#endif
}

}  // namespace

void add_bench_commands(CLI::App& bench, Outcome& outcome) {
  auto args = std::make_shared<HbmArgs>();
  auto* hbm = bench.add_subcommand("hbm", "Device memory bandwidth: D2D copy, bytes read + written, L2 flushed");
  hbm->add_option("--bytes", args->bytes_text,
                  "bytes read + written per copy (e.g. 4GiB, 512MiB, 1e9); far above L2")
      ->capture_default_str();
  hbm->add_option("--warmup", args->warmup, "untimed iterations before timing")->capture_default_str();
  hbm->add_option("--reps", args->reps, "timed repetitions (each timed alone)")->capture_default_str();
  add_time_based_flags(hbm, args->warmup_ms, args->rep_ms, args->flush_bytes);
  hbm->add_option("--cache", args->cache, "flush: L2 flushed before each repetition; warm: not flushed")
      ->capture_default_str();
  hbm->add_option("--out", args->out, "write the results JSON (with provenance) to FILE");
  hbm->callback([args, &outcome] { outcome.status = run_bench_hbm(*args); });
}

}  // namespace parity::cli
