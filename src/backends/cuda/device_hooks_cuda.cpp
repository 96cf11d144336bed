// The CUDA implementation of the CPU library's device hooks (src/core/device_hooks.hpp).
#include <cuda_runtime.h>

#include "backends/cuda/common/cuda_try.hpp"
#include "backends/cuda/register_backends.hpp"
#include "core/device_hooks.hpp"
#include "parity/embedding/tbe_gpu.hpp"
#include "parity/nn/dense_gpu.hpp"

namespace parity::gpu::detail {
namespace {

using parity::detail::CopyKind;

Result<void*> allocate(std::int64_t size_bytes) {
  void* pointer = nullptr;
  const cudaError_t error = cudaMalloc(&pointer, static_cast<std::size_t>(size_bytes));
  if (error != cudaSuccess) {
    return Status(StatusCode::kOutOfMemory, parity::detail::concat("cudaMalloc of ", size_bytes,
                                                                   " bytes failed: ", cudaGetErrorString(error)));
  }
  return pointer;
}

void release(void* pointer) { cudaFree(pointer); }

Status copy(void* dst, const void* src, std::int64_t size_bytes, CopyKind kind, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  const cudaMemcpyKind cuda_kind = kind == CopyKind::kHostToDevice   ? cudaMemcpyHostToDevice
                                   : kind == CopyKind::kDeviceToHost ? cudaMemcpyDeviceToHost
                                                                     : cudaMemcpyDeviceToDevice;
  PARITY_CUDA_TRY(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(size_bytes), cuda_kind, s));
  if (kind == CopyKind::kDeviceToHost) PARITY_CUDA_TRY(cudaStreamSynchronize(s));
  return Status::ok();
}

Status copy_2d(void* dst, std::int64_t dst_pitch_bytes, const void* src, std::int64_t src_pitch_bytes,
               std::int64_t row_bytes, std::int64_t rows, void* stream) {
  if (rows == 0 || row_bytes == 0) return Status::ok();
  PARITY_CUDA_TRY(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dst_pitch_bytes), src,
                                    static_cast<std::size_t>(src_pitch_bytes), static_cast<std::size_t>(row_bytes),
                                    static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice,
                                    static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status fill_zero(void* pointer, std::int64_t size_bytes, void* stream) {
  if (size_bytes == 0) return Status::ok();
  PARITY_CUDA_TRY(cudaMemsetAsync(pointer, 0, static_cast<std::size_t>(size_bytes), static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status fill_uniform(void* values, DType dtype, std::int64_t count, std::uint64_t seed, float scale, void* stream) {
  return embedding::gpu::fill_uniform(values, dtype, count, seed, scale, stream);
}

Status synchronize(void* stream) {
  PARITY_CUDA_TRY(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Status cast(const void* in, DType in_dtype, void* out, DType out_dtype, std::int64_t count, void* stream) {
  return nn::gpu::cast(count, in, in_dtype, out, out_dtype, stream);
}

Result<std::int64_t> memory_in_use() {
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  PARITY_CUDA_TRY(cudaMemGetInfo(&free_bytes, &total_bytes));
  return static_cast<std::int64_t>(total_bytes - free_bytes);
}

Status memory_info(std::int64_t* free_bytes, std::int64_t* total_bytes) {
  std::size_t free = 0;
  std::size_t total = 0;
  PARITY_CUDA_TRY(cudaMemGetInfo(&free, &total));
  *free_bytes = static_cast<std::int64_t>(free);
  *total_bytes = static_cast<std::int64_t>(total);
  return Status::ok();
}

Status add_split_columns(const void* a, const void* b, DType dtype, std::int64_t rows, std::int64_t left_cols,
                         std::int64_t right_cols, void* left, float* right, void* stream) {
  return nn::gpu::add_split_columns(a, b, dtype, rows, left_cols, right_cols, left, right, stream);
}

Result<void*> event_create() {
  cudaEvent_t event = nullptr;
  PARITY_CUDA_TRY(cudaEventCreate(&event));
  return static_cast<void*>(event);
}

Status event_record(void* event, void* stream) {
  PARITY_CUDA_TRY(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
  return Status::ok();
}

Result<double> event_elapsed_ms(void* start, void* stop) {
  PARITY_CUDA_TRY(cudaEventSynchronize(static_cast<cudaEvent_t>(stop)));
  float elapsed_ms = 0.0f;
  PARITY_CUDA_TRY(cudaEventElapsedTime(&elapsed_ms, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(stop)));
  return static_cast<double>(elapsed_ms);
}

void event_destroy(void* event) {
  if (event != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

Result<void*> stream_create() {
  cudaStream_t stream = nullptr;
  PARITY_CUDA_TRY(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  return static_cast<void*>(stream);
}

void stream_destroy(void* stream) {
  if (stream != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

Status stream_wait_event(void* stream, void* event) {
  PARITY_CUDA_TRY(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
  return Status::ok();
}

}  // namespace

void register_device_hooks() {
  parity::detail::DeviceHooks hooks;
  hooks.allocate = &allocate;
  hooks.release = &release;
  hooks.copy = &copy;
  hooks.copy_2d = &copy_2d;
  hooks.fill_zero = &fill_zero;
  hooks.fill_uniform = &fill_uniform;
  hooks.synchronize = &synchronize;
  hooks.memory_in_use = &memory_in_use;
  hooks.cast = &cast;
  hooks.memory_info = &memory_info;
  hooks.add_split_columns = &add_split_columns;
  hooks.event_create = &event_create;
  hooks.event_record = &event_record;
  hooks.event_elapsed_ms = &event_elapsed_ms;
  hooks.event_destroy = &event_destroy;
  hooks.stream_create = &stream_create;
  hooks.stream_destroy = &stream_destroy;
  hooks.stream_wait_event = &stream_wait_event;
  parity::detail::register_device_hooks(hooks);
}

}  // namespace parity::gpu::detail
