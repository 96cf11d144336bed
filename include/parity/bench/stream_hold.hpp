// Holds a GPU stream until the host has queued everything behind it (nvbench's blocking kernel):
// queue hold(), then the timed launches with their events, then release(); the device starts
// them back to back, so host-side enqueue time never lands inside a timed interval.
// Implemented in src/backends/gpu/hold/launch.cu (parity_gpu; also compiled by the HIP check).
#pragma once

#include "parity/core/gpu.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

class StreamHold {
 public:
  /// A released hold with its pinned, device-mapped flags.
  static Result<StreamHold> create();
  StreamHold(StreamHold&& other) noexcept;
  StreamHold& operator=(StreamHold&& other) noexcept;
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;
  /// Releases (a kernel still waiting exits), waits for its stream, frees the flag.
  ~StreamHold();

  /// Queues the waiting kernel on `stream`. An earlier hold is released and its stream (this one
  /// or another) drained first: one flag, one waiting kernel. The kernel gives up after ~2.5 s of
  /// SM clock.
  Status hold(gpu::StreamHandle stream);
  /// Lets the waiting kernel exit; what was queued behind it then runs.
  void release();
  /// Releases and waits for the held stream to drain; afterwards the hold refers to no stream
  /// (one that is destroyed later is never touched again).
  Status finish();

 private:
  StreamHold() = default;
  void free_flag();
  int* flag_ = nullptr;         // pinned host memory: 0 holds, 1 releases
  int* device_flag_ = nullptr;  // the same int as the device sees it
  gpu::StreamHandle stream_ = nullptr;
  bool is_queued_ = false;
};

}  // namespace parity::bench
