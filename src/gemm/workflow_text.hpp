// Private helpers shared by the GEMM workflow files (src/gemm/workflow*.cpp, eval_report.cpp).
#pragma once

#include <string>

namespace parity::gemm {

/// `value` with `digits` decimals (std::fixed).
std::string fixed(double value, int digits);

}  // namespace parity::gemm
