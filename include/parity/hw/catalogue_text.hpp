// The hardware catalogue as text tables, every figure with where it came from: what `parity hw
// list | show | compare` print, for any caller (a notebook, a report).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/hw/hardware_spec.hpp"

namespace parity::hw {

/// Short human form of a catalogue value: whole numbers without decimals, otherwise at most 2
/// decimals (1 at or above 100), trailing zeros dropped ("1.5", "4800", "989.4").
std::string format_catalogue_value(double value);

/// One line per GPU: name, vendor, arch, BF16 TFLOP/s, HBM GB, HBM TB/s, scale-up GB/s per GPU.
std::string catalogue_table_text(const std::vector<HardwareSpec>& catalogue);

/// Every field of one GPU with its provenance, the derived FLOP/clk per SM, the matrix instructions.
std::string hardware_spec_text(const HardwareSpec& spec);

/// Two GPUs side by side with the ratio a/b of every field (catalogue values are > 0).
std::string hardware_compare_text(const HardwareSpec& a, const HardwareSpec& b);

// What `parity hw list | show | compare` print, the catalogue read from `data_dir` (empty:
// resolve_data_dir's order). Errors: a bad catalogue file, an unknown name (kNotFound).
Result<std::string> catalogue_list_report(const std::string& data_dir);
/// `is_json`: the entry as catalogue JSON (hardware_spec_json_text), else hardware_spec_text.
Result<std::string> hardware_show_report(std::string_view name, bool is_json, const std::string& data_dir);
Result<std::string> hardware_compare_report(std::string_view a_name, std::string_view b_name,
                                            const std::string& data_dir);

}  // namespace parity::hw
