// Host side of the stream hold (see kernels.cuh and parity/bench/stream_hold.hpp).
#include <utility>

#include "backends/gpu/hold/kernels.cuh"
#include "parity/bench/stream_hold.hpp"

namespace parity::bench {
namespace {

// ~2.5 s at Hopper/CDNA clocks: far above any enqueue, short enough that a missing release is a
// slow benchmark rather than a hung one.
constexpr long long kHoldTimeoutCycles = 5'000'000'000LL;

}  // namespace

Result<StreamHold> StreamHold::create() {
  StreamHold hold;
  void* host = nullptr;
  PARITY_GPU_TRY(gpuHostAllocMapped(&host, sizeof(int)));
  hold.flag_ = static_cast<int*>(host);
  *hold.flag_ = 1;  // released: nothing is held yet
  void* device = nullptr;
  PARITY_GPU_TRY(gpuHostGetDevicePointer(&device, host, 0));
  hold.device_flag_ = static_cast<int*>(device);
  return Result<StreamHold>(std::move(hold));
}

StreamHold::StreamHold(StreamHold&& other) noexcept
    : flag_(std::exchange(other.flag_, nullptr)),
      device_flag_(std::exchange(other.device_flag_, nullptr)),
      stream_(std::exchange(other.stream_, nullptr)),
      is_queued_(std::exchange(other.is_queued_, false)) {}

StreamHold& StreamHold::operator=(StreamHold&& other) noexcept {
  if (this != &other) {
    free_flag();
    flag_ = std::exchange(other.flag_, nullptr);
    device_flag_ = std::exchange(other.device_flag_, nullptr);
    stream_ = std::exchange(other.stream_, nullptr);
    is_queued_ = std::exchange(other.is_queued_, false);
  }
  return *this;
}

StreamHold::~StreamHold() { free_flag(); }

void StreamHold::free_flag() {
  if (flag_ == nullptr) return;
  // A queued kernel may still be reading the flag: wait for its stream before the memory goes.
  (void)finish();
  (void)gpuFreeHost(flag_);
  flag_ = nullptr;
}

Status StreamHold::hold(gpu::StreamHandle stream) {
  PARITY_CHECK_ARG(flag_ != nullptr, "StreamHold::hold: not created (use StreamHold::create)");
  // The previous hold must be released before this one is queued, or both would wait on one flag
  // (the previous kernel may not have started yet: it would see the new 0 and wait too).
  PARITY_RETURN_IF_ERROR(finish());
  *reinterpret_cast<volatile int*>(flag_) = 0;
  gpu_device::hold_until_released_kernel<<<1, 1, 0, static_cast<gpuStream_t>(stream)>>>(
      device_flag_, kHoldTimeoutCycles);
  stream_ = stream;
  is_queued_ = true;
  PARITY_GPU_CHECK_LAUNCH(hold_until_released_kernel);
  return Status::ok();
}

Status StreamHold::finish() {
  release();
  if (!is_queued_) return Status::ok();
  is_queued_ = false;
  PARITY_GPU_TRY(gpuStreamSynchronize(static_cast<gpuStream_t>(stream_)));
  return Status::ok();
}

void StreamHold::release() {
  if (flag_ != nullptr) *reinterpret_cast<volatile int*>(flag_) = 1;
}

}  // namespace parity::bench
