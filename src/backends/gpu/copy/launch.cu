// Host launch for the copy, fill and compare kernels (see kernels.cuh): argument checks, grid
// maths (one wave of resident blocks, grid-stride beyond it), post-launch checks.
#include <algorithm>
#include <cstdint>

#include "backends/gpu/copy/kernels.cuh"
#include "parity/bench/copy.hpp"

namespace parity::bench {
namespace {

constexpr int kBlockThreads = 256;
constexpr int kCopyUnroll = 4;
// 8 blocks of 256 threads fill an SM's 2048 thread slots (Hopper, CDNA); more blocks would only
// queue, fewer would leave latency uncovered.
constexpr int kBlocksPerSm = 8;

Result<int> resident_block_limit() {
  int device = 0;
  int sm_count = 0;
  PARITY_GPU_TRY(gpuGetDevice(&device));
  PARITY_GPU_TRY(gpuDeviceGetAttribute(&sm_count, gpuDevAttrMultiProcessorCount, device));
  return std::max(1, sm_count) * kBlocksPerSm;
}

int grid_for(std::int64_t work_items, std::int64_t items_per_block, int block_limit) {
  const std::int64_t wanted = (work_items + items_per_block - 1) / items_per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, block_limit)));
}

bool is_aligned_16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

}  // namespace

Status copy_device_vectorized(void* dst, const void* src, std::int64_t size_bytes, gpu::StreamHandle stream) {
  PARITY_CHECK_ARG(size_bytes >= 0, "copy_device_vectorized: size_bytes=", size_bytes, " must be >= 0");
  if (size_bytes == 0) return Status::ok();
  PARITY_CHECK_ARG(dst != nullptr && src != nullptr, "copy_device_vectorized: null pointer (dst=", dst,
                   ", src=", src, ")");
  PARITY_CHECK_ARG(is_aligned_16(dst) && is_aligned_16(src), "copy_device_vectorized: dst=", dst, " and src=", src,
                   " must be 16-byte aligned");
  PARITY_ASSIGN_OR_RETURN(const int block_limit, resident_block_limit());
  const std::int64_t vector_count = size_bytes / 16;
  const auto tail_bytes = static_cast<int>(size_bytes % 16);
  const int blocks = grid_for(vector_count, std::int64_t{kBlockThreads} * kCopyUnroll, block_limit);
  const auto* src_bytes = static_cast<const unsigned char*>(src);
  auto* dst_bytes = static_cast<unsigned char*>(dst);
  gpu_device::copy_vectorized_grid_stride_kernel<kBlockThreads, kCopyUnroll>
      <<<blocks, kBlockThreads, 0, static_cast<gpuStream_t>(stream)>>>(
          static_cast<const uint4*>(src), static_cast<uint4*>(dst), vector_count, src_bytes + vector_count * 16,
          dst_bytes + vector_count * 16, tail_bytes);
  PARITY_GPU_CHECK_LAUNCH(copy_vectorized_grid_stride_kernel);
  return Status::ok();
}

Status read_device_vectors(const void* data, std::int64_t size_bytes, void* sink, gpu::StreamHandle stream) {
  PARITY_CHECK_ARG(size_bytes >= 0 && size_bytes % 16 == 0, "read_device_vectors: size_bytes=", size_bytes,
                   " must be a non-negative multiple of 16");
  if (size_bytes == 0) return Status::ok();
  PARITY_CHECK_ARG(data != nullptr && sink != nullptr && is_aligned_16(data), "read_device_vectors: data=", data,
                   " (16-byte aligned) and sink=", sink, " must be device pointers");
  PARITY_ASSIGN_OR_RETURN(const int block_limit, resident_block_limit());
  const std::int64_t vector_count = size_bytes / 16;
  const int blocks = grid_for(vector_count, static_cast<std::int64_t>(kBlockThreads) * kCopyUnroll, block_limit);
  // The sink is written only if a thread's XOR equals the constant (rare, and harmless: its value
  // is never read); the possibility keeps the loads from being removed.
  gpu_device::read_vectors_kernel<kBlockThreads, kCopyUnroll><<<blocks, kBlockThreads, 0, static_cast<gpuStream_t>(stream)>>>(
      static_cast<const uint4*>(data), vector_count, 0x9e3779b9u, static_cast<unsigned int*>(sink));
  PARITY_GPU_CHECK_LAUNCH(read_vectors_kernel);
  return Status::ok();
}

Status fill_word_pattern(void* data, std::int64_t size_bytes, std::uint32_t seed, gpu::StreamHandle stream) {
  PARITY_CHECK_ARG(size_bytes >= 0 && size_bytes % 4 == 0, "fill_word_pattern: size_bytes=", size_bytes,
                   " must be a non-negative multiple of 4");
  if (size_bytes == 0) return Status::ok();
  PARITY_CHECK_ARG(data != nullptr, "fill_word_pattern: data is null");
  PARITY_ASSIGN_OR_RETURN(const int block_limit, resident_block_limit());
  const std::int64_t word_count = size_bytes / 4;
  const int blocks = grid_for(word_count, kBlockThreads, block_limit);
  gpu_device::fill_word_pattern_kernel<kBlockThreads>
      <<<blocks, kBlockThreads, 0, static_cast<gpuStream_t>(stream)>>>(static_cast<unsigned int*>(data),
                                                                         word_count, seed);
  PARITY_GPU_CHECK_LAUNCH(fill_word_pattern_kernel);
  return Status::ok();
}

Result<std::int64_t> count_mismatched_bytes(const void* a, const void* b, std::int64_t size_bytes,
                                            gpu::StreamHandle stream) {
  PARITY_CHECK_ARG(size_bytes >= 0, "count_mismatched_bytes: size_bytes=", size_bytes, " must be >= 0");
  if (size_bytes == 0) return std::int64_t{0};
  PARITY_CHECK_ARG(is_aligned_16(a) && is_aligned_16(b), "count_mismatched_bytes: a=", a, " and b=", b,
                   " must be 16-byte aligned");
  PARITY_ASSIGN_OR_RETURN(const int block_limit, resident_block_limit());
  PARITY_ASSIGN_OR_RETURN(auto counter, gpu::DeviceBuffer::allocate(sizeof(unsigned long long)));
  auto s = static_cast<gpuStream_t>(stream);
  PARITY_GPU_TRY(gpuMemsetAsync(counter.data(), 0, sizeof(unsigned long long), s));
  const int blocks = grid_for(size_bytes / 16 + 1, kBlockThreads, block_limit);
  gpu_device::count_mismatched_bytes_kernel<kBlockThreads><<<blocks, kBlockThreads, 0, s>>>(
      static_cast<const unsigned char*>(a), static_cast<const unsigned char*>(b), size_bytes,
      counter.as<unsigned long long>());
  PARITY_GPU_CHECK_LAUNCH(count_mismatched_bytes_kernel);
  unsigned long long mismatches = 0;
  PARITY_GPU_TRY(gpuMemcpyAsync(&mismatches, counter.data(), sizeof(mismatches), gpuMemcpyDeviceToHost, s));
  PARITY_GPU_TRY(gpuStreamSynchronize(s));
  return static_cast<std::int64_t>(mismatches);
}

}  // namespace parity::bench
