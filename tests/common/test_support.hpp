// Shared test helpers: a replayable seed (PARITY_TEST_SEED) printed on failure, and the GPU skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace parity::testing {

// The seed for randomized tests: PARITY_TEST_SEED if set, else `fallback`. Tests wrap their body
// in SCOPED_TRACE(seed_trace(seed)) so a failure prints how to replay it.
inline std::uint64_t test_seed(std::uint64_t fallback) {
  if (const char* env = std::getenv("PARITY_TEST_SEED")) return std::strtoull(env, nullptr, 10);
  return fallback;
}

inline std::string seed_trace(std::uint64_t seed) {
  return "seed=" + std::to_string(seed) + " (replay with PARITY_TEST_SEED=" + std::to_string(seed) + ")";
}

}  // namespace parity::testing

#ifdef PARITY_HAS_CUDA
#include "parity/core/gpu.hpp"
// Use at the top of every GPU test: reported as skipped, never as passed, without a device.
#define PARITY_REQUIRE_GPU()                                           \
  do {                                                                 \
    if (::parity::gpu::device_count() == 0) GTEST_SKIP() << "no CUDA device visible"; \
  } while (0)
#endif
