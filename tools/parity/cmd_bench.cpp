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
  bench::TimingSettings timing;
  std::string out;
};

Status run_bench_hbm(const HbmArgs& args) {
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const std::int64_t total_bytes,
                          bench::parse_hbm_total_bytes("bench hbm", args.bytes_text));
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const bench::TimingOptions options,
                          bench::timing_options_from_settings("bench hbm", args.timing));
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
                  "bytes read + written per copy (e.g. 4GiB, 512MiB, 1e9); far above L2");
  add_timing_flags(hbm, args->timing, TimingFlags::kAll);
  hbm->add_option("--out", args->out, "write the results JSON (with provenance) to FILE");
  hbm->callback([args, &outcome] { outcome.status = run_bench_hbm(*args); });
}

}  // namespace parity::cli
