// Text tables of the hardware catalogue (parity/hw/catalogue_text.hpp).
#include "parity/hw/catalogue_text.hpp"

#include <cmath>
#include <iomanip>
#include <sstream>

#include "parity/hw/catalogue.hpp"

namespace parity::hw {
namespace {

std::string with_unit(double value, std::string_view unit) {
  std::string text = format_catalogue_value(value);
  if (!unit.empty()) text += std::string(" ") + std::string(unit);
  return text;
}

std::string pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string describe_provenance(const Provenance& provenance) {
  std::string text = "[";
  text.append(provenance_kind_name(provenance.kind)).append(" ").append(provenance.date).append("] ");
  text += provenance.source;
  if (!provenance.note.empty()) text += " (note: " + provenance.note + ")";
  return text;
}

}  // namespace

std::string format_catalogue_value(double value) {
  if (value == std::round(value)) return std::to_string(static_cast<long long>(std::round(value)));
  std::ostringstream out;
  out << std::fixed << std::setprecision(std::fabs(value) >= 100.0 ? 1 : 2) << value;
  std::string text = out.str();
  while (!text.empty() && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

std::string catalogue_table_text(const std::vector<HardwareSpec>& catalogue) {
  std::ostringstream out;
  out << pad("name", 8) << pad("vendor", 8) << pad("arch", 11) << pad("BF16 TFLOP/s", 14) << pad("HBM GB", 8)
      << pad("HBM TB/s", 10) << "scale-up GB/s per GPU\n";
  for (const HardwareSpec& spec : catalogue) {
    out << pad(spec.name, 8) << pad(std::string(vendor_name(spec.vendor)), 8) << pad(spec.architecture, 11)
        << pad(format_catalogue_value(spec.dense_bf16_tflops.value), 14)
        << pad(format_catalogue_value(spec.hbm_capacity_gb.value), 8)
        << pad(format_catalogue_value(spec.hbm_bandwidth_tbps.value), 10)
        << format_catalogue_value(spec.scale_up_per_gpu_gbps.value) << " ("
        << scale_up_topology_name(spec.scale_up_topology) << ", "
        << format_catalogue_value(spec.scale_up_domain_gpus.value) << " GPUs)\n";
  }
  return out.str();
}

std::string hardware_spec_text(const HardwareSpec& spec) {
  std::ostringstream out;
  out << spec.name << ": " << spec.display_name << " (" << vendor_name(spec.vendor) << ", " << spec.architecture
      << ")\n";
  if (!spec.aliases.empty()) {
    out << "aliases:";
    for (const std::string& alias : spec.aliases) out << " " << alias;
    out << "\n";
  }
  out << "\n";
  for (const QuantityField& field : hardware_quantity_fields()) {
    const Quantity& quantity = spec.*field.member;
    out << pad(std::string(field.label), 28) << pad(with_unit(quantity.value, field.unit), 16)
        << describe_provenance(quantity.provenance) << "\n";
  }
  out << pad("Scale-up topology", 28) << scale_up_topology_name(spec.scale_up_topology) << "\n";
  out << pad("Dense BF16 FLOP/clk per SM", 28)
      << pad(format_catalogue_value(dense_bf16_flops_per_clock_per_sm(spec)), 16)
      << "[derived] dense_bf16_tflops / (sm_count x peak_rate_clock_mhz)\n";
  out << "\nMatrix instructions (m x n x k, input dtype; n is the largest for variable-N ones):\n";
  for (const MatrixInstructionShape& shape : spec.matrix_instructions) {
    std::ostringstream dims;
    dims << shape.m << "x" << shape.n << "x" << shape.k << " " << shape.dtype;
    out << "  " << pad(shape.instruction, 36) << pad(dims.str(), 16) << describe_provenance(shape.provenance)
        << "\n";
  }
  return out.str();
}

std::string hardware_compare_text(const HardwareSpec& a, const HardwareSpec& b) {
  constexpr std::size_t kLabelWidth = 28;
  constexpr std::size_t kValueWidth = 16;
  std::ostringstream out;
  out << pad("", kLabelWidth) << pad(a.name, kValueWidth) << pad(b.name, kValueWidth) << a.name << "/" << b.name
      << "\n";
  for (const QuantityField& field : hardware_quantity_fields()) {
    const double value_a = (a.*field.member).value;
    const double value_b = (b.*field.member).value;
    std::ostringstream ratio;
    ratio << std::fixed << std::setprecision(2) << value_a / value_b << "\u00d7";
    out << pad(std::string(field.label), kLabelWidth) << pad(with_unit(value_a, field.unit), kValueWidth)
        << pad(with_unit(value_b, field.unit), kValueWidth) << ratio.str() << "\n";
  }
  out << pad("Scale-up topology", kLabelWidth)
      << pad(std::string(scale_up_topology_name(a.scale_up_topology)), kValueWidth)
      << scale_up_topology_name(b.scale_up_topology) << "\n";
  out << "\nWhere each figure comes from: parity hw show NAME\n";
  return out.str();
}

namespace {

std::optional<std::filesystem::path> data_dir_of(const std::string& data_dir) {
  if (data_dir.empty()) return std::nullopt;
  return std::filesystem::path(data_dir);
}

}  // namespace

Result<std::string> catalogue_list_report(const std::string& data_dir) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue,
                          load_catalogue(catalogue_dir(data_dir_of(data_dir))));
  return catalogue_table_text(catalogue);
}

Result<std::string> hardware_show_report(std::string_view name, bool is_json, const std::string& data_dir) {
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec spec, find_hardware(name, data_dir_of(data_dir)));
  return is_json ? hardware_spec_json_text(spec) : hardware_spec_text(spec);
}

Result<std::string> hardware_compare_report(std::string_view a_name, std::string_view b_name,
                                            const std::string& data_dir) {
  PARITY_ASSIGN_OR_RETURN(const std::vector<HardwareSpec> catalogue,
                          load_catalogue(catalogue_dir(data_dir_of(data_dir))));
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec a, find_hardware(a_name, catalogue));
  PARITY_ASSIGN_OR_RETURN(const HardwareSpec b, find_hardware(b_name, catalogue));
  return hardware_compare_text(a, b);
}

}  // namespace parity::hw
