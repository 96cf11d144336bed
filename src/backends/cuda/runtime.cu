// NVIDIA implementation of the host runtime facade in parity/core/gpu.hpp.
#include <cuda_runtime.h>

#include <utility>

#include "parity/core/gpu.hpp"
#include "backends/cuda/register_backends.hpp"
#include "backends/cuda/common/cuda_try.hpp"

namespace parity::gpu::detail {
namespace {
const bool kBackendsRegistered = [] {
  register_backends();
  return true;
}();
}  // namespace
}  // namespace parity::gpu::detail

namespace parity::gpu {

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

Result<DeviceProperties> device_properties(int device_index) {
  const int count = device_count();
  PARITY_CHECK_ARG(device_index >= 0 && device_index < count, "device_index=", device_index,
                   " is out of range (", count, " CUDA devices visible)");
  cudaDeviceProp prop{};
  PARITY_CUDA_TRY(cudaGetDeviceProperties(&prop, device_index));
  DeviceProperties out;
  out.device_index = device_index;
  out.name = prop.name;
  out.compute_capability_major = prop.major;
  out.compute_capability_minor = prop.minor;
  out.sm_count = prop.multiProcessorCount;
  out.warp_size = prop.warpSize;
  out.l2_bytes = prop.l2CacheSize;
  out.total_memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  out.shared_memory_per_block_optin_bytes = static_cast<std::int64_t>(prop.sharedMemPerBlockOptin);
  out.memory_bus_width_bits = prop.memoryBusWidth;
  int clock_khz = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device_index) == cudaSuccess) {
    out.max_sm_clock_mhz = clock_khz / 1000;
  }
  int mem_clock_khz = 0;
  if (cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device_index) == cudaSuccess) {
    out.max_memory_clock_mhz = mem_clock_khz / 1000;
  }
  cudaGetLastError();
  PARITY_CUDA_TRY(cudaDriverGetVersion(&out.driver_version));
  PARITY_CUDA_TRY(cudaRuntimeGetVersion(&out.runtime_version));
  return out;
}

Result<DeviceBuffer> DeviceBuffer::allocate(std::size_t size_bytes) {
  DeviceBuffer buffer;
  if (size_bytes == 0) return std::move(buffer);
  const cudaError_t error = cudaMalloc(&buffer.data_, size_bytes);
  if (error == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    return Status(StatusCode::kOutOfMemory,
                  ::parity::detail::concat("cudaMalloc of ", size_bytes, " bytes failed: out of device memory"));
  }
  PARITY_CUDA_TRY(error);
  buffer.size_bytes_ = size_bytes;
  return std::move(buffer);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_bytes_(std::exchange(other.size_bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    size_bytes_ = std::exchange(other.size_bytes_, 0);
  }
  return *this;
}

Status DeviceBuffer::copy_from_host(const void* host, std::size_t size_bytes, std::size_t offset_bytes) {
  PARITY_CHECK_ARG(offset_bytes + size_bytes <= size_bytes_, "copy_from_host: ", size_bytes,
                   " bytes at offset ", offset_bytes, " exceed the buffer of ", size_bytes_, " bytes");
  if (size_bytes == 0) return Status::ok();
  PARITY_CUDA_TRY(cudaMemcpy(static_cast<char*>(data_) + offset_bytes, host, size_bytes, cudaMemcpyHostToDevice));
  return Status::ok();
}

Status DeviceBuffer::copy_to_host(void* host, std::size_t size_bytes, std::size_t offset_bytes) const {
  PARITY_CHECK_ARG(offset_bytes + size_bytes <= size_bytes_, "copy_to_host: ", size_bytes,
                   " bytes at offset ", offset_bytes, " exceed the buffer of ", size_bytes_, " bytes");
  if (size_bytes == 0) return Status::ok();
  PARITY_CUDA_TRY(cudaMemcpy(host, static_cast<const char*>(data_) + offset_bytes, size_bytes, cudaMemcpyDeviceToHost));
  return Status::ok();
}

Status DeviceBuffer::fill_bytes(int byte_value) {
  if (size_bytes_ == 0) return Status::ok();
  PARITY_CUDA_TRY(cudaMemset(data_, byte_value, size_bytes_));
  return Status::ok();
}

Status synchronize() {
  PARITY_CUDA_TRY(cudaDeviceSynchronize());
  return Status::ok();
}

Status memory_info(std::size_t* free_bytes, std::size_t* total_bytes) {
  PARITY_CUDA_TRY(cudaMemGetInfo(free_bytes, total_bytes));
  return Status::ok();
}

Result<EventTimer> EventTimer::create() {
  EventTimer timer;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  PARITY_CUDA_TRY(cudaEventCreate(&start));
  timer.start_event_ = start;
  PARITY_CUDA_TRY(cudaEventCreate(&stop));
  timer.stop_event_ = stop;
  return std::move(timer);
}

EventTimer::~EventTimer() {
  if (start_event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(start_event_));
  if (stop_event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(stop_event_));
}

EventTimer::EventTimer(EventTimer&& other) noexcept
    : start_event_(std::exchange(other.start_event_, nullptr)),
      stop_event_(std::exchange(other.stop_event_, nullptr)) {}

EventTimer& EventTimer::operator=(EventTimer&& other) noexcept {
  if (this != &other) {
    this->~EventTimer();
    start_event_ = std::exchange(other.start_event_, nullptr);
    stop_event_ = std::exchange(other.stop_event_, nullptr);
  }
  return *this;
}

Status EventTimer::start(StreamHandle stream) {
  PARITY_CUDA_TRY(cudaEventRecord(static_cast<cudaEvent_t>(start_event_), static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status EventTimer::stop(StreamHandle stream) {
  PARITY_CUDA_TRY(cudaEventRecord(static_cast<cudaEvent_t>(stop_event_), static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Result<double> EventTimer::elapsed_ms() const {
  PARITY_CUDA_TRY(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_event_)));
  float ms = 0.0f;
  PARITY_CUDA_TRY(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_event_),
                                       static_cast<cudaEvent_t>(stop_event_)));
  return static_cast<double>(ms);
}

}  // namespace parity::gpu
