// `parity hw list | show NAME | compare A B`: the hardware catalogue, every figure with where it
// came from. Unknown names and bad catalogue files are input errors (exit code 2).
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::cli {
namespace {

using hw::HardwareSpec;
using hw::Quantity;
using hw::QuantityField;

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

// Short human form: whole numbers without decimals, otherwise at most 2 decimals (1 above 100).
std::string format_value(double value) {
  if (value == std::round(value)) return std::to_string(static_cast<long long>(std::round(value)));
  std::ostringstream out;
  out << std::fixed << std::setprecision(std::fabs(value) >= 100.0 ? 1 : 2) << value;
  std::string text = out.str();
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

std::string with_unit(double value, std::string_view unit) {
  std::string text = format_value(value);
  if (!unit.empty()) text += std::string(" ") + std::string(unit);
  return text;
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string describe_provenance(const hw::Provenance& provenance) {
  std::string text = std::string("[") + std::string(hw::provenance_kind_name(provenance.kind)) +
                     " " + provenance.date + "] " + provenance.source;
  if (!provenance.note.empty()) text += " (note: " + provenance.note + ")";
  return text;
}

Status run_list(const HwOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue,
                          hw::load_catalogue(hw::catalogue_dir(data_dir_of(options))));
  std::cout << pad("name", 8) << pad("vendor", 8) << pad("arch", 11) << pad("BF16 TFLOP/s", 14)
            << pad("HBM GB", 8) << pad("HBM TB/s", 10) << "scale-up GB/s per GPU\n";
  for (const HardwareSpec& spec : catalogue) {
    std::cout << pad(spec.name, 8) << pad(std::string(hw::vendor_name(spec.vendor)), 8)
              << pad(spec.architecture, 11) << pad(format_value(spec.dense_bf16_tflops.value), 14)
              << pad(format_value(spec.hbm_capacity_gb.value), 8)
              << pad(format_value(spec.hbm_bandwidth_tbps.value), 10)
              << format_value(spec.scale_up_per_gpu_gbps.value) << " ("
              << hw::scale_up_topology_name(spec.scale_up_topology) << ", "
              << format_value(spec.scale_up_domain_gpus.value) << " GPUs)\n";
  }
  return Status::ok();
}

Status run_show(const HwOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec spec,
                          hw::find_hardware(options.name, data_dir_of(options)));
  if (options.is_json_output) {
    std::cout << hw::hardware_spec_json_text(spec);
    return Status::ok();
  }
  std::cout << spec.name << ": " << spec.display_name << " (" << hw::vendor_name(spec.vendor)
            << ", " << spec.architecture << ")\n";
  if (!spec.aliases.empty()) {
    std::cout << "aliases:";
    for (const std::string& alias : spec.aliases) std::cout << " " << alias;
    std::cout << "\n";
  }
  std::cout << "\n";
  for (const QuantityField& field : hw::hardware_quantity_fields()) {
    const Quantity& quantity = spec.*field.member;
    std::cout << pad(std::string(field.label), 28) << pad(with_unit(quantity.value, field.unit), 16)
              << describe_provenance(quantity.provenance) << "\n";
  }
  std::cout << pad("Scale-up topology", 28) << hw::scale_up_topology_name(spec.scale_up_topology)
            << "\n";
  std::cout << pad("Dense BF16 FLOP/clk per SM", 28)
            << pad(format_value(hw::dense_bf16_flops_per_clock_per_sm(spec)), 16)
            << "[derived] dense_bf16_tflops / (sm_count x peak_rate_clock_mhz)\n";
  std::cout
      << "\nMatrix instructions (m x n x k, input dtype; n is the largest for variable-N ones):\n";
  for (const hw::MatrixInstructionShape& shape : spec.matrix_instructions) {
    std::ostringstream dims;
    dims << shape.m << "x" << shape.n << "x" << shape.k << " " << shape.dtype;
    std::cout << "  " << pad(shape.instruction, 36) << pad(dims.str(), 16)
              << describe_provenance(shape.provenance) << "\n";
  }
  return Status::ok();
}

Status run_compare(const HwOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue,
                          hw::load_catalogue(hw::catalogue_dir(data_dir_of(options))));
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec a, hw::find_hardware(options.name, catalogue));
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec b, hw::find_hardware(options.other_name, catalogue));
  constexpr std::size_t kLabelWidth = 28;
  constexpr std::size_t kValueWidth = 16;
  std::cout << pad("", kLabelWidth) << pad(a.name, kValueWidth) << pad(b.name, kValueWidth)
            << a.name << "/" << b.name << "\n";
  for (const QuantityField& field : hw::hardware_quantity_fields()) {
    const double value_a = (a.*field.member).value;
    const double value_b = (b.*field.member).value;
    std::ostringstream ratio;
    ratio << std::fixed << std::setprecision(2) << value_a / value_b
          << "\u00d7";  // catalogue values are > 0
    std::cout << pad(std::string(field.label), kLabelWidth)
              << pad(with_unit(value_a, field.unit), kValueWidth)
              << pad(with_unit(value_b, field.unit), kValueWidth) << ratio.str() << "\n";
  }
  std::cout << pad("Scale-up topology", kLabelWidth)
            << pad(std::string(hw::scale_up_topology_name(a.scale_up_topology)), kValueWidth)
            << hw::scale_up_topology_name(b.scale_up_topology) << "\n";
  std::cout << "\nWhere each figure comes from: parity hw show NAME\n";
  return Status::ok();
}

void add_data_dir_option(CLI::App& command, HwOptions& options) {
  command.add_option("--data-dir", options.data_dir,
                     "Data directory holding hardware/*.json (default: $PARITY_DATA_DIR, else the "
                     "source tree's data/)");
}

}  // namespace

void add_hw_commands(CLI::App& hw, Outcome& outcome) {
  auto options = std::make_shared<HwOptions>();

  auto* list = hw.add_subcommand("list", "Every catalogue GPU: BF16 peak, HBM, scale-up");
  add_data_dir_option(*list, *options);
  list->callback([options, &outcome] { outcome.status = run_list(*options); });

  auto* show = hw.add_subcommand("show", "Every field of one GPU with its provenance");
  show->add_option("name", options->name, "GPU name or alias (e.g. h200, mi350x, h100_sxm)")
      ->required();
  show->add_flag("--json", options->is_json_output, "Print the catalogue entry as JSON");
  add_data_dir_option(*show, *options);
  show->callback([options, &outcome] { outcome.status = run_show(*options); });

  auto* compare = hw.add_subcommand("compare", "Two GPUs side by side with ratios A/B");
  compare->add_option("a", options->name, "First GPU (numerator of the ratios)")->required();
  compare->add_option("b", options->other_name, "Second GPU (denominator)")->required();
  add_data_dir_option(*compare, *options);
  compare->callback([options, &outcome] { outcome.status = run_compare(*options); });
}

}  // namespace parity::cli
