// The radix sort's digit and tile sizes (kernels.cuh), shared with kernels that write a pass's
// tile counts themselves (the TBE linearise by tile).
#pragma once

#include <cstdint>

namespace parity::gpu_device {

inline constexpr int kRadixMaxDigitBits = 9;
inline constexpr int kRadixMaxDigits = 1 << kRadixMaxDigitBits;
inline constexpr int kRadixBlockThreads = 256;
inline constexpr int kRadixItemsPerThread = 16;
inline constexpr int kRadixTileItems = kRadixBlockThreads * kRadixItemsPerThread;
inline constexpr int kRadixSmallItemsPerThread = 4;
inline constexpr int kRadixSmallTileItems = kRadixBlockThreads * kRadixSmallItemsPerThread;
inline constexpr std::int64_t kRadixSmallTileMaxKeys = std::int64_t{1} << 20;

}  // namespace parity::gpu_device
