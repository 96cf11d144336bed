#include "commands.hpp"

namespace parity::cli {

void add_bench_gemm_command(CLI::App& /*bench*/, Outcome& /*outcome*/) {}

}  // namespace parity::cli
