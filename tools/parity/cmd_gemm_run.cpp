#include "commands.hpp"

namespace parity::cli {

void add_gemm_run_commands(CLI::App& /*gemm*/, Outcome& /*outcome*/) {}

}  // namespace parity::cli
