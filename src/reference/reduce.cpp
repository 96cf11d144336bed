#include "reference/reduce.hpp"

namespace parity::ref {

double sum(const std::vector<float>& values) {
  double total = 0.0;
  for (float v : values) total += static_cast<double>(v);
  return total;
}

}  // namespace parity::ref
