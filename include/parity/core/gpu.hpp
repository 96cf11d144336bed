// Host-side view of the GPU runtime, free of CUDA/HIP headers: device discovery, owned device
// buffers, streams as opaque handles. Implemented in src/backends/gpu/common/runtime.cu; only
// code built with PARITY_HAS_CUDA links it (the CPU library never calls into it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "parity/core/status.hpp"

namespace parity::gpu {

// cudaStream_t / hipStream_t behind a void*; nullptr is the default stream.
using StreamHandle = void*;

struct DeviceProperties {
  int device_index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  int sm_count = 0;
  int warp_size = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t total_memory_bytes = 0;
  std::int64_t shared_memory_per_block_optin_bytes = 0;
  int max_sm_clock_mhz = 0;      // from the runtime's attribute (0 if unavailable)
  int max_memory_clock_mhz = 0;  // likewise
  int memory_bus_width_bits = 0;
  int driver_version = 0;   // e.g. 13000
  int runtime_version = 0;  // e.g. 13000
};

// Number of usable devices; 0 (not an error) when there is no device or no driver.
int device_count();
Result<DeviceProperties> device_properties(int device_index = 0);

// An owned device allocation (cudaMalloc; never managed memory).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  static Result<DeviceBuffer> allocate(std::size_t size_bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() const { return data_; }
  template <typename T>
  T* as() const { return static_cast<T*>(data_); }
  std::size_t size_bytes() const { return size_bytes_; }

  Status copy_from_host(const void* host, std::size_t size_bytes, std::size_t offset_bytes = 0);
  Status copy_to_host(void* host, std::size_t size_bytes, std::size_t offset_bytes = 0) const;
  Status fill_bytes(int byte_value);

 private:
  void* data_ = nullptr;
  std::size_t size_bytes_ = 0;
};

template <typename T>
Result<DeviceBuffer> upload(const std::vector<T>& host) {
  auto buffer = DeviceBuffer::allocate(host.size() * sizeof(T));
  if (!buffer.is_ok()) return buffer.status();
  if (!host.empty()) PARITY_RETURN_IF_ERROR(buffer->copy_from_host(host.data(), host.size() * sizeof(T)));
  return buffer;
}

template <typename T>
Result<std::vector<T>> download(const DeviceBuffer& buffer, std::size_t count) {
  std::vector<T> host(count);
  if (count > 0) PARITY_RETURN_IF_ERROR(buffer.copy_to_host(host.data(), count * sizeof(T)));
  return host;
}

Status synchronize();
// Current free/total device memory, for peak-memory reports.
Status memory_info(std::size_t* free_bytes, std::size_t* total_bytes);

// Device-event timer on a stream: start(), stop(), elapsed_ms() after stop's event completes.
class EventTimer {
 public:
  static Result<EventTimer> create();
  ~EventTimer();
  EventTimer(EventTimer&& other) noexcept;
  EventTimer& operator=(EventTimer&& other) noexcept;
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  Status start(StreamHandle stream = nullptr);
  Status stop(StreamHandle stream = nullptr);
  Result<double> elapsed_ms() const;

 private:
  EventTimer() = default;
  void* start_event_ = nullptr;
  void* stop_event_ = nullptr;
};

// Portable block reduction (the probe's kernel and the proof of the portability path):
// sum of `count` floats, per-block tree in shared memory + warp shuffles, one partial per block,
// then a second pass. Result in fp64 accumulation order-independent enough for the tests' bound.
Result<double> reduce_sum(const DeviceBuffer& values, std::int64_t count, StreamHandle stream = nullptr);

}  // namespace parity::gpu
