// parity._core: the hardware catalogue as plain Python values (python/parity/hw.py wraps them in
// dataclasses). Every quantity travels with its unit, label and provenance.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "convert.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::python {
namespace {

std::optional<std::filesystem::path> data_dir_of(const std::optional<std::string>& data_dir) {
  if (!data_dir) return std::nullopt;
  return std::filesystem::path(*data_dir);
}

nb::dict provenance_dict(const hw::Provenance& provenance) {
  nb::dict out;
  out["kind"] = std::string(hw::provenance_kind_name(provenance.kind));
  out["source"] = provenance.source;
  out["date"] = provenance.date;
  out["note"] = provenance.note;
  return out;
}

nb::dict spec_dict(const hw::HardwareSpec& spec) {
  nb::dict out;
  out["name"] = spec.name;
  out["aliases"] = spec.aliases;
  out["display_name"] = spec.display_name;
  out["vendor"] = std::string(hw::vendor_name(spec.vendor));
  out["architecture"] = spec.architecture;
  out["scale_up_topology"] = std::string(hw::scale_up_topology_name(spec.scale_up_topology));
  nb::dict quantities;
  for (const hw::QuantityField& field : hw::hardware_quantity_fields()) {
    const hw::Quantity& quantity = spec.*(field.member);
    nb::dict entry;
    entry["value"] = quantity.value;
    entry["unit"] = std::string(field.unit);
    entry["label"] = std::string(field.label);
    entry["provenance"] = provenance_dict(quantity.provenance);
    quantities[nb::str(field.key.data(), field.key.size())] = entry;
  }
  out["quantities"] = quantities;
  nb::list instructions;
  for (const hw::MatrixInstructionShape& shape : spec.matrix_instructions) {
    nb::dict entry;
    entry["m"] = shape.m;
    entry["n"] = shape.n;
    entry["k"] = shape.k;
    entry["dtype"] = shape.dtype;
    entry["instruction"] = shape.instruction;
    entry["provenance"] = provenance_dict(shape.provenance);
    instructions.append(entry);
  }
  out["matrix_instructions"] = instructions;
  out["json"] = hw::hardware_spec_json_text(spec);
  return out;
}

}  // namespace

void bind_hw(nb::module_& module) {
  module.def(
      "hw_catalogue",
      [](const std::optional<std::string>& data_dir) {
        const auto specs = value_or_raise(hw::load_catalogue(hw::catalogue_dir(data_dir_of(data_dir))));
        nb::list out;
        for (const auto& spec : specs) out.append(spec_dict(spec));
        return out;
      },
      nb::arg("data_dir").none() = nb::none(),
      "Every catalogue entry (sorted by vendor, then name) as a dict; data_dir=None resolves the data "
      "directory as the library does.");
  module.def(
      "hw_find",
      [](const std::string& name, const std::optional<std::string>& data_dir) {
        return spec_dict(value_or_raise(hw::find_hardware(name, data_dir_of(data_dir))));
      },
      nb::arg("name"), nb::arg("data_dir").none() = nb::none(),
      "One catalogue entry by name or alias (ValueError listing the known names otherwise).");
  module.def(
      "hw_quantity_keys",
      [] {
        std::vector<std::string> keys;
        for (const hw::QuantityField& field : hw::hardware_quantity_fields()) keys.emplace_back(field.key);
        return keys;
      },
      "The numeric fields of a catalogue entry, in declaration order.");
}

}  // namespace parity::python
