// Buffer: the trainer's storage for parameters, optimiser state and activations on the device the
// run uses. On the CPU it is host memory (64-byte aligned, uninitialised until filled); on a GPU
// it holds a device allocation made through the GPU backend's hooks (src/core/device_hooks.hpp),
// behind the same interface, so the trainer never branches on the device to use a buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::train {

class Buffer {
 public:
  Buffer() = default;
  /// kOutOfMemory naming `what` and the size when the allocation fails; kUnsupported for kGpu
  /// in a build without the GPU backend.
  static Result<Buffer> allocate(DeviceKind device, std::int64_t size_bytes, const char* what);

  DeviceKind device() const { return device_; }
  std::int64_t size_bytes() const { return size_bytes_; }
  void* data() const { return data_.get(); }
  template <typename T>
  T* as() const { return static_cast<T*>(data()); }

  Status copy_from_host(const void* host, std::int64_t size_bytes, std::int64_t offset_bytes = 0);
  Status copy_to_host(void* host, std::int64_t size_bytes, std::int64_t offset_bytes = 0) const;
  Status fill_zero();

 private:
  struct AlignedFree {
    // A constructor rather than a member initialiser: the deleter must be default-constructible
    // while Buffer is still incomplete.
    AlignedFree() : on_device(false) {}
    explicit AlignedFree(bool device) : on_device(device) {}
    bool on_device;
    void operator()(void* pointer) const;
  };
  DeviceKind device_ = DeviceKind::kCpu;
  std::int64_t size_bytes_ = 0;
  std::unique_ptr<void, AlignedFree> data_;
};

}  // namespace parity::train
