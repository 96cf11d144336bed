// fp64 reference for the block reduction: a plain loop.
#pragma once
#include <vector>
namespace parity::ref {
double sum(const std::vector<float>& values);
}  // namespace parity::ref
