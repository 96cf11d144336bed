#include "commands.hpp"

namespace parity::cli {

void add_bench_tbe_command(CLI::App& /*bench*/, Outcome& /*outcome*/) {}

}  // namespace parity::cli
