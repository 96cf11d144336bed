// `parity hw list | show NAME | compare A B`: the hardware catalogue, every figure with where it
// came from. Unknown names and bad catalogue files are input errors (exit code 2).
// `parity hw probe`: measures the local GPU's ceilings and writes the calibration file the models
// read, plus a results JSON (parity/bench/hw_probe.hpp); arguments are validated first (exit 2),
// then a CUDA device is required (exit 3).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/hw_probe.hpp"
#include "parity/hw/catalogue.hpp"
#include "parity/hw/catalogue_text.hpp"

namespace parity::cli {
namespace {

using hw::HardwareSpec;

struct HwOptions {
  std::string data_dir;  // empty: PARITY_DATA_DIR, else the source tree's data/
  std::string name;
  std::string other_name;
  bool is_json_output = false;
};

std::optional<std::filesystem::path> data_dir_of(const HwOptions& options) {
  if (options.data_dir.empty()) return std::nullopt;
  return std::filesystem::path(options.data_dir);
}

Status run_list(const HwOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue,
                          hw::load_catalogue(hw::catalogue_dir(data_dir_of(options))));
  std::cout << hw::catalogue_table_text(catalogue);
  return Status::ok();
}

Status run_show(const HwOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec spec, hw::find_hardware(options.name, data_dir_of(options)));
  std::cout << (options.is_json_output ? hw::hardware_spec_json_text(spec) : hw::hardware_spec_text(spec));
  return Status::ok();
}

Status run_compare(const HwOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue,
                          hw::load_catalogue(hw::catalogue_dir(data_dir_of(options))));
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec a, hw::find_hardware(options.name, catalogue));
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec b, hw::find_hardware(options.other_name, catalogue));
  std::cout << hw::hardware_compare_text(a, b);
  return Status::ok();
}

struct ProbeArgs {
  bench::HwProbeRequest request;
  std::string bytes_text = std::to_string(bench::kDefaultHbmTotalBytes);
  bench::TimingSettings timing{.warmup = 10, .reps = 30};
};

Status run_probe(const ProbeArgs& args) {
  bench::HwProbeRequest request = args.request;
  PARITY_ASSIGN_OR_RETURN(request.copy_total_bytes, bench::parse_hbm_total_bytes("hw probe", args.bytes_text));
  PARITY_ASSIGN_OR_RETURN(request.timing, bench::timing_options_from_settings("hw probe", args.timing));
  return run_on_cuda_device("hw probe", [&] { return bench::run_hw_probe(request); });
}

void add_probe(CLI::App& hw, Outcome& outcome) {
  auto args = std::make_shared<ProbeArgs>();
  auto* probe = hw.add_subcommand("probe", "Measure this GPU's ceilings and write its calibration file");
  probe->add_option("--out", args->request.out, "calibration file (default: <data dir>/calibration/<device>.json)");
  probe->add_option("--results", args->request.results, "also write a results JSON with provenance to FILE");
  probe->add_option("--bytes", args->bytes_text, "copy size, bytes read + written (e.g. 4GiB)");
  add_timing_flags(probe, args->timing, TimingFlags::kCounts);
  probe->callback([args, &outcome] { outcome.status = run_probe(*args); });
}

}  // namespace

void add_hw_commands(CLI::App& app, Outcome& outcome) {
  CLI::App& hw = *app.add_subcommand("hw", "Hardware catalogue and the local GPU probe")->require_subcommand(1);
  auto options = std::make_shared<HwOptions>();

  auto* list = hw.add_subcommand("list", "Every catalogue GPU: BF16 peak, HBM, scale-up");
  add_data_dir_option(list, options->data_dir);
  list->callback([options, &outcome] { outcome.status = run_list(*options); });

  auto* show = hw.add_subcommand("show", "Every field of one GPU with its provenance");
  show->add_option("name", options->name, "GPU name or alias (e.g. h200, mi350x, h100_sxm)")
      ->required();
  show->add_flag("--json", options->is_json_output, "Print the catalogue entry as JSON");
  add_data_dir_option(show, options->data_dir);
  show->callback([options, &outcome] { outcome.status = run_show(*options); });

  auto* compare = hw.add_subcommand("compare", "Two GPUs side by side with ratios A/B");
  compare->add_option("a", options->name, "First GPU (numerator of the ratios)")->required();
  compare->add_option("b", options->other_name, "Second GPU (denominator)")->required();
  add_data_dir_option(compare, options->data_dir);
  compare->callback([options, &outcome] { outcome.status = run_compare(*options); });
  add_probe(hw, outcome);
}

}  // namespace parity::cli
