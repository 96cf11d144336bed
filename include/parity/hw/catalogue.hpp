// The hardware catalogue: one JSON file per GPU under <data dir>/hardware/ (schema in
// docs/hardware.md). The loader is strict: a number without provenance, an unknown key, a
// non-positive bandwidth/capacity/count, a missing field or a wrong type is an error naming the
// file, the key and the value, so a typo never silently becomes a model input.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/hw/hardware_spec.hpp"

namespace parity::hw {

inline constexpr int kHardwareSchemaVersion = 1;

// The data directory, in this order: `explicit_dir` if given, else the PARITY_DATA_DIR
// environment variable if set and non-empty, else the installed data <prefix>/share/parity when the
// running executable sits in <prefix>/bin (cmake --install), else the source tree's data/ (a build
// tree).
std::filesystem::path resolve_data_dir(const std::optional<std::filesystem::path>& explicit_dir);
// <data dir>/hardware, the data directory resolved as above.
std::filesystem::path catalogue_dir(const std::optional<std::filesystem::path>& data_dir);

// The entry as catalogue JSON text (2-space indent), the format load_hardware_spec_file reads.
// The JSON-typed parse/serialise pair is private to the library (src/hw/hw_json.hpp).
std::string hardware_spec_json_text(const HardwareSpec& spec);

// The same from JSON text (what load_hardware_spec_file reads). Never throws.
Result<HardwareSpec> parse_hardware_spec_text(std::string_view text, std::string_view origin);
Result<HardwareSpec> load_hardware_spec_file(const std::filesystem::path& path);
// Every *.json in `hardware_dir`, sorted by vendor then name. Rejects an empty or missing
// directory and two entries claiming the same name or alias.
Result<std::vector<HardwareSpec>> load_catalogue(const std::filesystem::path& hardware_dir);

// Canonical lookup key: lower case, '-' and ' ' read as '_' ("H100-SXM" -> "h100_sxm").
std::string normalize_hardware_name(std::string_view name);
// Looks `name` up by name or alias in `catalogue`; kNotFound lists the known names.
Result<HardwareSpec> find_hardware(std::string_view name,
                                   const std::vector<HardwareSpec>& catalogue);
// Loads the catalogue from catalogue_dir(data_dir), then looks `name` up as above.
Result<HardwareSpec> find_hardware(
    std::string_view name, const std::optional<std::filesystem::path>& data_dir = std::nullopt);
// The catalogue entry of a device by its runtime name ("NVIDIA H100 80GB HBM3", "NVIDIA H200",
// "AMD Instinct MI300X"): the name as given, then without its vendor word. kNotFound names the
// device and says how to describe it (a catalogue file, or a hardware name given explicitly).
Result<HardwareSpec> find_hardware_for_device(
    std::string_view runtime_name, const std::optional<std::filesystem::path>& data_dir = std::nullopt);

}  // namespace parity::hw
