#include "commands.hpp"

namespace parity::cli {

void add_bench_commands(CLI::App& /*bench*/, Outcome& /*outcome*/) {}

}  // namespace parity::cli
