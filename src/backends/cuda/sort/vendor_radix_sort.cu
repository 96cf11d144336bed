// CUB's DeviceRadixSort behind the vendor_radix_sort_* entry points (vendor_radix_sort.hpp): the
// double-buffer form, so the caller's two key buffers are the ping-pong pair and the scratch holds
// only CUB's histograms and look-back state.
#include "backends/cuda/sort/vendor_radix_sort.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

namespace parity::gpu_sort {
namespace {

Status check_range(std::int64_t count, int begin_bit, int end_bit) {
  PARITY_CHECK_ARG(count >= 0 && count < (std::int64_t{1} << 31), "vendor radix sort: count=", count,
                   "; expected [0, 2^31)");
  PARITY_CHECK_ARG(begin_bit >= 0 && begin_bit <= end_bit && end_bit <= 64, "vendor radix sort: bits [", begin_bit,
                   ", ", end_bit, ") are not a range inside [0, 64)");
  return Status::ok();
}

}  // namespace

Result<std::int64_t> vendor_radix_sort_scratch_bytes(std::int64_t count, int begin_bit, int end_bit) {
  PARITY_RETURN_IF_ERROR(check_range(count, begin_bit, end_bit));
  if (count <= 1) return std::int64_t{0};
  cub::DoubleBuffer<std::uint64_t> keys(nullptr, nullptr);
  std::size_t bytes = 0;
  const cudaError_t error = cub::DeviceRadixSort::SortKeys(nullptr, bytes, keys, static_cast<int>(count), begin_bit,
                                                           end_bit);
  if (error != cudaSuccess) {
    return device_error("vendor radix sort: CUB's scratch query failed: ", cudaGetErrorString(error));
  }
  return static_cast<std::int64_t>(bytes);
}

Result<std::uint64_t*> vendor_radix_sort_keys(std::uint64_t* keys_a, std::uint64_t* keys_b, std::int64_t count,
                                              int begin_bit, int end_bit, void* scratch,
                                              std::int64_t scratch_bytes, void* stream) {
  PARITY_RETURN_IF_ERROR(check_range(count, begin_bit, end_bit));
  if (count <= 1 || begin_bit == end_bit) return keys_a;
  PARITY_ASSIGN_OR_RETURN(const std::int64_t needed_bytes, vendor_radix_sort_scratch_bytes(count, begin_bit, end_bit));
  PARITY_CHECK_ARG(scratch != nullptr && scratch_bytes >= needed_bytes, "vendor radix sort: scratch_bytes=",
                   scratch_bytes, "; expected >= ", needed_bytes);
  cub::DoubleBuffer<std::uint64_t> keys(keys_a, keys_b);
  auto bytes = static_cast<std::size_t>(scratch_bytes);
  const cudaError_t error = cub::DeviceRadixSort::SortKeys(scratch, bytes, keys, static_cast<int>(count), begin_bit,
                                                           end_bit, static_cast<cudaStream_t>(stream));
  if (error != cudaSuccess) {
    return device_error("vendor radix sort: CUB's SortKeys failed: ", cudaGetErrorString(error));
  }
  return keys.Current();
}

}  // namespace parity::gpu_sort
