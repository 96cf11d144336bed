// Buffer: aligned host memory on the CPU (zero-filled in parallel: first touch spreads the pages),
// a device allocation through the GPU backend's hooks on the GPU.
#include "parity/train/buffer.hpp"

#include "core/device_hooks.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace parity::train {

void Buffer::AlignedFree::operator()(void* pointer) const {
  if (on_device) {
    if (const auto* hooks = parity::detail::device_hooks()) hooks->release(pointer);
    return;
  }
  std::free(pointer);
}

Result<Buffer> Buffer::allocate(DeviceKind device, std::int64_t size_bytes, const char* what) {
  PARITY_CHECK_ARG(size_bytes >= 0, "buffer '", what, "': size_bytes=", size_bytes, " is negative");
  if (device == DeviceKind::kGpu) {
    PARITY_ASSIGN_OR_RETURN(const auto* hooks, parity::detail::require_device_hooks("buffer"));
    Buffer buffer;
    buffer.device_ = device;
    buffer.size_bytes_ = size_bytes;
    auto pointer = hooks->allocate(std::max<std::int64_t>(size_bytes, 1));
    if (!pointer.is_ok()) return pointer.status().with_context(std::string("buffer '") + what + "'");
    buffer.data_ = std::unique_ptr<void, AlignedFree>(*pointer, AlignedFree{true});
    return buffer;
  }
  Buffer buffer;
  buffer.device_ = device;
  buffer.size_bytes_ = size_bytes;
  constexpr std::size_t kAlignment = 64;
  // aligned_alloc needs a multiple of the alignment; round up (at least one line).
  const std::size_t rounded = (static_cast<std::size_t>(size_bytes) + kAlignment) / kAlignment * kAlignment;
  void* pointer = std::aligned_alloc(kAlignment, rounded);
  if (pointer == nullptr) {
    return Status(StatusCode::kOutOfMemory,
                  detail::concat("buffer '", what, "': cannot allocate ", size_bytes, " bytes"));
  }
  buffer.data_.reset(pointer);
  return buffer;
}

Status Buffer::copy_from_host(const void* host, std::int64_t size_bytes, std::int64_t offset_bytes) {
  PARITY_CHECK_ARG(offset_bytes >= 0 && size_bytes >= 0 && offset_bytes + size_bytes <= size_bytes_,
                   "buffer: copy of ", size_bytes, " bytes at ", offset_bytes, " exceeds its ",
                   size_bytes_, " bytes");
  if (size_bytes == 0) return Status::ok();
  if (device_ == DeviceKind::kGpu) {
    return parity::detail::device_hooks()->copy(static_cast<char*>(data()) + offset_bytes, host, size_bytes,
                                                parity::detail::CopyKind::kHostToDevice, nullptr);
  }
  std::memcpy(static_cast<char*>(data()) + offset_bytes, host, size_bytes);
  return Status::ok();
}

Status Buffer::copy_to_host(void* host, std::int64_t size_bytes, std::int64_t offset_bytes) const {
  PARITY_CHECK_ARG(offset_bytes >= 0 && size_bytes >= 0 && offset_bytes + size_bytes <= size_bytes_,
                   "buffer: copy of ", size_bytes, " bytes at ", offset_bytes, " exceeds its ",
                   size_bytes_, " bytes");
  if (size_bytes == 0) return Status::ok();
  if (device_ == DeviceKind::kGpu) {
    return parity::detail::device_hooks()->copy(host, static_cast<const char*>(data()) + offset_bytes, size_bytes,
                                                parity::detail::CopyKind::kDeviceToHost, nullptr);
  }
  std::memcpy(host, static_cast<const char*>(data()) + offset_bytes, size_bytes);
  return Status::ok();
}

Status Buffer::fill_zero() {
  if (device_ == DeviceKind::kGpu) return parity::detail::device_hooks()->fill_zero(data(), size_bytes_, nullptr);
  auto* bytes = static_cast<unsigned char*>(data());
  const std::int64_t chunk = std::int64_t{1} << 20;
  const std::int64_t chunks = (size_bytes_ + chunk - 1) / chunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::int64_t begin = c * chunk;
    const std::int64_t length = std::min(chunk, size_bytes_ - begin);
    std::memset(bytes + begin, 0, static_cast<std::size_t>(length));
  }
  return Status::ok();
}

}  // namespace parity::train
