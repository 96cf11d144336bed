// `parity bench hbm`: device copy bandwidth (bytes read + written), the portable vectorised copy
// kernel and cudaMemcpyAsync in the same run, each checked before it is timed; the faster median
// is the ceiling (parity/bench/hbm.hpp). Arguments are validated first (exit 2), then the device
// is required (exit 3).
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"

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

Status run_bench_hbm(const HbmArgs& args) {
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const std::int64_t total_bytes, copy_bytes_from_flag("bench hbm", args.bytes_text));
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const bench::TimingOptions options,
                          timing_options_from_flags("bench hbm", args.warmup, args.reps, args.cache, args.warmup_ms,
                                                    args.rep_ms, args.flush_bytes));
  PARITY_RETURN_IF_ERROR(require_cuda_device("bench hbm"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(const std::string report, bench::run_hbm_bench(total_bytes, options, args.out));
  std::fputs(report.c_str(), stdout);
#endif
  return Status::ok();
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
