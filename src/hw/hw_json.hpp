// JSON-typed halves of the hardware catalogue and calibration readers (private: public headers
// carry no JSON types). Implemented in src/hw/catalogue.cpp and src/hw/calibration.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "parity/core/status.hpp"
#include "parity/hw/calibration.hpp"
#include "parity/hw/hardware_spec.hpp"

namespace parity::hw {

// Parses one catalogue entry; `origin` (usually the file path) prefixes every error message.
Result<HardwareSpec> parse_hardware_spec(const nlohmann::json& json, std::string_view origin);
// The inverse of parse_hardware_spec: parse(to_json(spec)) == spec.
nlohmann::json hardware_spec_to_json(const HardwareSpec& spec);

nlohmann::json calibration_to_json(const Calibration& calibration);
Result<Calibration> parse_calibration(const nlohmann::json& json, std::string_view origin);

}  // namespace parity::hw
