// `parity hw list | show NAME | compare A B`: the hardware catalogue, every figure with where it
// came from. Unknown names and bad catalogue files are input errors (exit code 2).
// `parity hw probe`: measures the local GPU's ceilings and writes the calibration file the models
// read, plus a results JSON (parity/bench/hw_probe.hpp); arguments are validated first (exit 2),
// then a CUDA device is required (exit 3).
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/bench/hw_probe.hpp"
#include "parity/hw/catalogue_text.hpp"

namespace parity::cli {
namespace {

struct HwOptions {
  std::string data_dir;  // empty: PARITY_DATA_DIR, else the source tree's data/
  std::string name;
  std::string other_name;
  bool is_json_output = false;
};

void add_probe(CLI::App& hw, Outcome& outcome) {
  auto args = std::make_shared<bench::HwProbeSettings>();
  auto* probe = hw.add_subcommand("probe", "Measure this GPU's ceilings and write its calibration file");
  probe->add_option("--out", args->out, "calibration file (default: <data dir>/calibration/<device>.json)");
  probe->add_option("--results", args->results, "also write a results JSON with provenance to FILE");
  probe->add_option("--bytes", args->copy_total_bytes, "copy size, bytes read + written (e.g. 4GiB)");
  add_timing_flags(probe, args->timing, TimingFlags::kCounts);
  probe->callback([args, &outcome] {
    outcome.status = run_on_cuda_device("hw probe", bench::hw_probe_request_from_settings(*args),
                                        [](const auto& request) { return bench::run_hw_probe(request); });
  });
}

}  // namespace

void add_hw_commands(CLI::App& app, Outcome& outcome) {
  CLI::App& hw = *app.add_subcommand("hw", "Hardware catalogue and the local GPU probe")->require_subcommand(1);
  auto options = std::make_shared<HwOptions>();

  auto* list = hw.add_subcommand("list", "Every catalogue GPU: BF16 peak, HBM, scale-up");
  add_data_dir_option(list, options->data_dir);
  list->callback([options, &outcome] { outcome.status = print_report(hw::catalogue_list_report(options->data_dir)); });

  auto* show = hw.add_subcommand("show", "Every field of one GPU with its provenance");
  show->add_option("name", options->name, "GPU name or alias (e.g. h200, mi350x, h100_sxm)")
      ->required();
  show->add_flag("--json", options->is_json_output, "Print the catalogue entry as JSON");
  add_data_dir_option(show, options->data_dir);
  show->callback([options, &outcome] {
    outcome.status = print_report(hw::hardware_show_report(options->name, options->is_json_output, options->data_dir));
  });

  auto* compare = hw.add_subcommand("compare", "Two GPUs side by side with ratios A/B");
  compare->add_option("a", options->name, "First GPU (numerator of the ratios)")->required();
  compare->add_option("b", options->other_name, "Second GPU (denominator)")->required();
  add_data_dir_option(compare, options->data_dir);
  compare->callback([options, &outcome] {
    outcome.status = print_report(hw::hardware_compare_report(options->name, options->other_name, options->data_dir));
  });
  add_probe(hw, outcome);
}

}  // namespace parity::cli
