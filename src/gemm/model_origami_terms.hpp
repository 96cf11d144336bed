// Constants and small helpers of the Origami port shared by its translation units
// (model_origami.cpp: launch geometry, tile latency; model_origami_select.cpp,
// model_origami_bounds.hpp and model_origami_runs.cpp: the pruned selection). Internal header.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "model_origami.hpp"

namespace parity::gemm::origami_terms {

using U64 = std::uint64_t;
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Bounds are scaled down by this so that one equal to the exact prediction in exact arithmetic
// (an L2-bound run) stays below it after the two computations' different rounding.
inline constexpr double kRoundingMargin = 1.0 - 1e-12;
inline U64 div_up(U64 a, U64 b) { return b == 0 ? 0 : (a + b - 1) / b; }

// Origami's tile-latency constants, in cycles (heuristics.hpp heuristic_defaults_t of the
// revision that produced the published rankings; docs/gemm_model.md).
inline constexpr double kPrologueWeight = 1.5, kEpilogueWeight = 2.0;  // WEIGHT_PROLOGUE / _EPILOGUE
inline constexpr double kLoopCyclesPerIter = 500.0;                    // WEIGHT_LOOP_OVERHEAD
inline constexpr double kWorkgroupSetupCycles = 1.0;
inline constexpr double kKPaddingPenalty = 50000.0;   // x (K mod MT_K) / K, a structural mismatch
inline constexpr double kOccupancyDecay = 0.95;
inline constexpr int kMaxOccupancy = 8;       // prologue / epilogue amortisation per resident WG
inline constexpr double kDramLatencyCycles = 200.0;
inline constexpr double kL2LineBytes = 128.0;  // operand rows move in whole lines
// kOccupancyDecay^occupancy without a pow call for the usual occupancies.
inline double occupancy_decay(U64 occupancy) {
  static const auto kPowers = [] {
    std::array<double, 17> powers{};
    powers[0] = 1.0;
    for (std::size_t i = 1; i < powers.size(); ++i) powers[i] = powers[i - 1] * kOccupancyDecay;
    return powers;
  }();
  return occupancy < kPowers.size() ? kPowers[occupancy] : std::pow(kOccupancyDecay, static_cast<double>(occupancy));
}

// What prepare() multiplies the MFMA cycles by for the input type: fp32 inputs run as bf16
// passes (3 on gfx950 without native TF32, counted x6; x2 elsewhere).
inline double input_type_factor(const DeviceParams& device, DType a_dtype) {
  if (a_dtype != DType::kF32) return 1.0;
  return device.arch == "gfx950" ? 6.0 : 2.0;
}

inline double element_bytes_of(const GemmProblem& problem) {
  return static_cast<double>(dtype_size_bytes(problem.a_dtype));
}

// Origami rejects (latency = max) tiles smaller than a small batched problem, and temporal
// operands where its short circuit wants a non-temporal one (both operands are temporal here):
// K and MT_K whole 128-byte rows, M <= 2 MT_M and N / M > 5, or N <= 2 MT_N and M / N > 5.
inline bool is_rejected(const OrigamiContext& x, double element_bytes) {
  if (x.m <= 256 && x.n <= 256 && x.k < 1024 && x.batch != 1 && (x.tile_m < x.m || x.tile_n < x.n)) return true;
  const U64 bits = static_cast<U64>(element_bytes * 8.0);
  if (x.k * bits % 1024 == 0 && x.tile_k * bits % 1024 == 0) {
    if (x.m <= x.tile_m * 2 && x.n / x.m > 5) return true;
    if (x.n <= x.tile_n * 2 && x.m / x.n > 5) return true;
  }
  return false;
}

}  // namespace parity::gemm::origami_terms

namespace parity::gemm {

// One tile's cycles and the total (OrigamiModel::cycles), split for explain().
struct OrigamiModel::Cycles {
  double compute = 0, memory_excess = 0, loop = 0, epilogue = 0, reduce = 0, tile = 0, total = 0;
  double reduction_kernel = 0;
  bool l2_bound = false;
};

}  // namespace parity::gemm
