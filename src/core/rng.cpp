#include "parity/core/rng.hpp"

#include <algorithm>
#include <cmath>

namespace parity {

std::int64_t Rng::zipf_index(std::int64_t num_rows, double alpha) {
  const double u = uniform();
  if (num_rows <= 1) return 0;
  const auto rows = static_cast<double>(num_rows);
  if (alpha == 0.0) return std::min<std::int64_t>(static_cast<std::int64_t>(u * rows), num_rows - 1);
  if (std::abs(alpha - 1.0) < 1e-9) {
    // alpha = 1: the transform's limit is exp(u * ln E).
    const auto r = static_cast<std::int64_t>(std::exp(u * std::log(rows)));
    return std::clamp<std::int64_t>(r - 1, 0, num_rows - 1);
  }
  const double x = (std::pow(rows, 1.0 - alpha) - 1.0) * u + 1.0;
  const auto r = static_cast<std::int64_t>(std::pow(x, 1.0 / (1.0 - alpha)));
  return std::clamp<std::int64_t>(r - 1, 0, num_rows - 1);
}

}  // namespace parity
