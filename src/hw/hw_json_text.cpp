// hardware_spec_json_text (include/parity/hw/catalogue.hpp): the JSON-free public form.
#include "hw/hw_json.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::hw {

std::string hardware_spec_json_text(const HardwareSpec& spec) { return hardware_spec_to_json(spec).dump(2) + "\n"; }

}  // namespace parity::hw
