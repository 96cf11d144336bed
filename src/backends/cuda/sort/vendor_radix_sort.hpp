// The vendor's radix sort of 64-bit keys (CUB's DeviceRadixSort on NVIDIA), the alternative to the
// portable one in backends/gpu/sort for the TBE backward (BackwardOptions::vendor_sort). Internal to
// parity_gpu; built only with CUDA.
#pragma once

#include <cstdint>

#include "parity/core/status.hpp"

namespace parity::gpu_sort {

/// Scratch the vendor sort needs for `count` keys sorted by the bits [begin_bit, end_bit) on the
/// current device, in bytes (its own query; the keys' two buffers are the caller's).
Result<std::int64_t> vendor_radix_sort_scratch_bytes(std::int64_t count, int begin_bit, int end_bit);

/// Sorts keys_a[0:count) stably by the bits [begin_bit, end_bit), keys_b being the other buffer;
/// returns the buffer that holds the result. scratch: at least vendor_radix_sort_scratch_bytes.
Result<std::uint64_t*> vendor_radix_sort_keys(std::uint64_t* keys_a, std::uint64_t* keys_b, std::int64_t count,
                                              int begin_bit, int end_bit, void* scratch,
                                              std::int64_t scratch_bytes, void* stream);

}  // namespace parity::gpu_sort
