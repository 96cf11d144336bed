#include "commands.hpp"

namespace parity::cli {

void add_tbe_commands(CLI::App& /*tbe*/, Outcome& /*outcome*/) {}

}  // namespace parity::cli
