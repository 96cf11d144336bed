// Seeded random inputs for tests and benchmarks: normal values, uniform and Zipf-skewed indices.
// One generator (std::mt19937_64) so every run with the same seed sees the same data.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace parity {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed), seed_(seed) {}
  std::uint64_t seed() const { return seed_; }
  double normal(double mean = 0.0, double stddev = 1.0) {
    return std::normal_distribution<double>(mean, stddev)(engine_);
  }
  double uniform(double low = 0.0, double high = 1.0) {
    return std::uniform_real_distribution<double>(low, high)(engine_);
  }
  // Uniform integer in [low, high], inclusive.
  std::int64_t uniform_int(std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(engine_);
  }
  // Zipf-like index in [0, num_rows) with exponent alpha (alpha == 0: uniform), drawn by the
  // inverse power transform of a uniform, the same generator torch_baselines.py uses.
  std::int64_t zipf_index(std::int64_t num_rows, double alpha);
  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
  std::uint64_t seed_;
};

}  // namespace parity
