// `parity hw probe`: measures the local GPU's ceilings and writes the calibration file the models
// read, plus a results JSON (parity/bench/hw_probe.hpp). Arguments are validated first (exit 2),
// then a CUDA device is required (exit 3).
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/hw_probe.hpp"

namespace parity::cli {
namespace {

struct ProbeArgs {
  bench::HwProbeRequest request;
  std::string bytes_text = std::to_string(bench::kDefaultHbmTotalBytes);
  bench::TimingSettings timing{.warmup = 10, .reps = 30};
};

Status run_probe(const ProbeArgs& args) {
  bench::HwProbeRequest request = args.request;
  PARITY_ASSIGN_OR_RETURN(request.copy_total_bytes, bench::parse_hbm_total_bytes("hw probe", args.bytes_text));
  PARITY_ASSIGN_OR_RETURN(request.timing, bench::timing_options_from_settings("hw probe", args.timing));
  PARITY_RETURN_IF_ERROR(require_cuda_device("hw probe"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(const std::string report, bench::run_hw_probe(request));
  std::fputs(report.c_str(), stdout);
#endif
  return Status::ok();
}

}  // namespace

void add_probe_command(CLI::App& hw, Outcome& outcome) {
  auto args = std::make_shared<ProbeArgs>();
  auto* probe = hw.add_subcommand("probe", "Measure this GPU's ceilings and write its calibration file");
  probe->add_option("--out", args->request.out, "calibration file (default: <data dir>/calibration/<device>.json)");
  probe->add_option("--results", args->request.results, "also write a results JSON with provenance to FILE");
  probe->add_option("--bytes", args->bytes_text, "copy size, bytes read + written (e.g. 4GiB)");
  add_timing_flags(probe, args->timing, TimingFlags::kCounts);
  probe->callback([args, &outcome] { outcome.status = run_probe(*args); });
}

}  // namespace parity::cli
