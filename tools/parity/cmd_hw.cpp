#include "commands.hpp"

namespace parity::cli {

void add_hw_commands(CLI::App& /*hw*/, Outcome& /*outcome*/) {}

}  // namespace parity::cli
