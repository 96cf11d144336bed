#include "commands.hpp"

namespace parity::cli {

void add_probe_command(CLI::App& /*hw*/, Outcome& /*outcome*/) {}

}  // namespace parity::cli
