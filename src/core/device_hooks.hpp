// Internal: the few device-memory operations the CPU library needs for GPU runs (the trainer's
// buffers, its input staging and concatenations). parity_gpu installs them at start-up
// (src/backends/cuda/register_backends.cpp); in a CPU-only build device_hooks() is null and callers
// answer kUnsupported. Keeps every CUDA/HIP symbol out of the CPU library.
#pragma once

#include <cstdint>

#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"

namespace parity::detail {

enum class CopyKind : std::uint8_t { kHostToDevice, kDeviceToHost, kDeviceToDevice };

struct DeviceHooks {
  Result<void*> (*allocate)(std::int64_t size_bytes) = nullptr;
  void (*release)(void* pointer) = nullptr;
  // Asynchronous on `stream` except device-to-host, which returns when the bytes are on the host.
  Status (*copy)(void* dst, const void* src, std::int64_t size_bytes, CopyKind kind, void* stream) = nullptr;
  // rows x row_bytes from src (pitch src_pitch_bytes) to dst (pitch dst_pitch_bytes), device to device.
  Status (*copy_2d)(void* dst, std::int64_t dst_pitch_bytes, const void* src, std::int64_t src_pitch_bytes,
                    std::int64_t row_bytes, std::int64_t rows, void* stream) = nullptr;
  Status (*fill_zero)(void* pointer, std::int64_t size_bytes, void* stream) = nullptr;
  // Seeded uniform values in [-scale, scale) on the device (for tables too large to fill on the host).
  Status (*fill_uniform)(void* values, DType dtype, std::int64_t count, std::uint64_t seed, float scale,
                         void* stream) = nullptr;
  Status (*synchronize)(void* stream) = nullptr;
  // out[i] = in[i] converted between fp32, fp16 and bf16 (round to nearest even), on the device.
  Status (*cast)(const void* in, DType in_dtype, void* out, DType out_dtype, std::int64_t count, void* stream) = nullptr;
  // Bytes of device memory in use (total minus free), for peak-memory reports.
  Result<std::int64_t> (*memory_in_use)() = nullptr;
  // Free and total device memory (the trainer refuses a model that does not fit).
  Status (*memory_info)(std::int64_t* free_bytes, std::int64_t* total_bytes) = nullptr;
  // The DCNv2 input gradient: a + b (rows x (left_cols + right_cols), dtype) split by columns into
  // left (rows x left_cols, dtype: the bottom MLP's output gradient) and right (rows x right_cols,
  // fp32: the TBE backward's input).
  Status (*add_split_columns)(const void* a, const void* b, DType dtype, std::int64_t rows, std::int64_t left_cols,
                              std::int64_t right_cols, void* left, float* right, void* stream) = nullptr;
  // Device events for phase timings (step breakdowns): create, record on `stream`, the time
  // between two recorded events (waits for `stop`), destroy.
  Result<void*> (*event_create)() = nullptr;
  Status (*event_record)(void* event, void* stream) = nullptr;
  Result<double> (*event_elapsed_ms)(void* start, void* stop) = nullptr;
  void (*event_destroy)(void* event) = nullptr;
  // A stream that does not synchronise with the default stream (collectives overlapping compute),
  // its destruction, and `stream` waiting for `event` recorded on another stream.
  Result<void*> (*stream_create)() = nullptr;
  void (*stream_destroy)(void* stream) = nullptr;
  Status (*stream_wait_event)(void* stream, void* event) = nullptr;
};

void register_device_hooks(const DeviceHooks& hooks);
// Null when no GPU backend is linked.
const DeviceHooks* device_hooks();
// device_hooks(), or kUnsupported naming `what` when this build has no GPU backend.
Result<const DeviceHooks*> require_device_hooks(const char* what);

}  // namespace parity::detail
