// Memory-bandwidth measurement: the portable copy kernel and cudaMemcpyAsync (device to device)
// on the same buffers, each checked bit for bit before it is timed.
#include <cuda_runtime.h>

#include "backends/cuda/common/cuda_try.hpp"
#include "parity/bench/copy.hpp"
#include "parity/bench/hbm.hpp"

namespace parity::bench {
namespace {

constexpr std::uint32_t kPatternSeed = 0x5eed1234u;

Status check_copy(const char* method, const gpu::DeviceBuffer& src, gpu::DeviceBuffer& dst,
                  std::int64_t copy_bytes, const std::function<Status()>& copy, std::int64_t* mismatched) {
  PARITY_RETURN_IF_ERROR(dst.fill_bytes(0));
  PARITY_RETURN_IF_ERROR(copy());
  PARITY_ASSIGN_OR_RETURN(const std::int64_t differing, count_mismatched_bytes(dst.data(), src.data(), copy_bytes));
  *mismatched += differing;
  if (differing != 0) {
    return internal_error("measure_hbm_copy: ", method, " copy is wrong: ", differing, " of ", copy_bytes,
                          " bytes differ from the source");
  }
  return Status::ok();
}

}  // namespace

Result<HbmMeasurement> measure_hbm_copy(std::int64_t total_bytes, const TimingOptions& options) {
  PARITY_RETURN_IF_ERROR(validate_hbm_total_bytes(total_bytes));
  PARITY_RETURN_IF_ERROR(validate_timing_options(options));
  if (gpu::device_count() == 0) return unsupported("measure_hbm_copy: no CUDA device visible");
  HbmMeasurement measurement;
  measurement.total_bytes = total_bytes;
  measurement.copy_bytes = total_bytes / 2;
  measurement.options = options;
  PARITY_ASSIGN_OR_RETURN(measurement.flush_bytes, resolved_flush_bytes(options));
  const std::int64_t copy_bytes = measurement.copy_bytes;
  // Round the pattern up to whole words; the buffers are sized for it, the copies use copy_bytes.
  const std::int64_t pattern_bytes = (copy_bytes + 3) / 4 * 4;

  std::size_t free_bytes = 0;
  std::size_t device_total_bytes = 0;
  PARITY_RETURN_IF_ERROR(gpu::memory_info(&free_bytes, &device_total_bytes));
  const std::int64_t needed_bytes = 2 * pattern_bytes + measurement.flush_bytes;
  PARITY_CHECK_ARG(needed_bytes <= static_cast<std::int64_t>(free_bytes), "bytes=", total_bytes, " needs ",
                   needed_bytes, " bytes of device memory (source, destination, L2 flush scratch); ",
                   free_bytes, " are free");

  PARITY_ASSIGN_OR_RETURN(auto src, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(pattern_bytes)));
  PARITY_ASSIGN_OR_RETURN(auto dst, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(pattern_bytes)));
  PARITY_RETURN_IF_ERROR(fill_word_pattern(src.data(), pattern_bytes, kPatternSeed));

  auto kernel_copy = [&](gpu::StreamHandle stream) {
    return copy_device_vectorized(dst.data(), src.data(), copy_bytes, stream);
  };
  auto runtime_copy = [&](gpu::StreamHandle stream) -> Status {
    PARITY_CUDA_TRY(cudaMemcpyAsync(dst.data(), src.data(), static_cast<std::size_t>(copy_bytes),
                                    cudaMemcpyDeviceToDevice, static_cast<cudaStream_t>(stream)));
    return Status::ok();
  };
  PARITY_RETURN_IF_ERROR(check_copy("copy_kernel_vectorized_16B", src, dst, copy_bytes,
                                    [&] { return kernel_copy(nullptr); }, &measurement.verified_mismatched_bytes));
  PARITY_RETURN_IF_ERROR(check_copy("cudaMemcpyAsync_d2d", src, dst, copy_bytes,
                                    [&] { return runtime_copy(nullptr); }, &measurement.verified_mismatched_bytes));

  PARITY_ASSIGN_OR_RETURN(const SampleStats kernel_stats, time_on_device(kernel_copy, options));
  PARITY_ASSIGN_OR_RETURN(const SampleStats runtime_stats, time_on_device(runtime_copy, options));
  measurement.kernel = make_copy_timing("copy_kernel_vectorized_16B", kernel_stats, total_bytes);
  measurement.runtime_copy = make_copy_timing("cudaMemcpyAsync_d2d", runtime_stats, total_bytes);
  return measurement;
}

}  // namespace parity::bench
