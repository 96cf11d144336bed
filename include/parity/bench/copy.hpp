// The portable device copy used for the memory-bandwidth ceiling, and the fill/compare kernels
// that check it bit for bit. Implemented in src/backends/gpu/copy/launch.cu (parity_gpu; also
// compiled by the HIP check), so this header stays free of JSON and CUDA headers.
#pragma once

#include <cstdint>

#include "parity/core/gpu.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

/// The portable copy kernel: dst[0, size_bytes) = src[0, size_bytes); both 16-byte aligned.
Status copy_device_vectorized(void* dst, const void* src, std::int64_t size_bytes,
                              gpu::StreamHandle stream = nullptr);
/// Reads data[0, size_bytes) (16-byte aligned, a multiple of 16) and nothing else observable; the
/// L2 flush that must leave clean lines uses it. `sink` is 4 bytes of device scratch.
Status read_device_vectors(const void* data, std::int64_t size_bytes, void* sink,
                           gpu::StreamHandle stream = nullptr);
/// Fills size_bytes (a multiple of 4) with a hashed word pattern derived from seed.
Status fill_word_pattern(void* data, std::int64_t size_bytes, std::uint32_t seed,
                         gpu::StreamHandle stream = nullptr);
/// Number of differing bytes between two device ranges (synchronises the stream).
Result<std::int64_t> count_mismatched_bytes(const void* a, const void* b, std::int64_t size_bytes,
                                            gpu::StreamHandle stream = nullptr);

}  // namespace parity::bench
