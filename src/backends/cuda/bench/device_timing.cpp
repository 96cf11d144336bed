// Device-event timing with the L2 flushed between repetitions (see device_timing.hpp).
// The flush is a cudaMemsetAsync over a scratch buffer of 2 x L2 queued before each repetition's
// start event: it evicts the previous repetition's lines and runs outside the timed region. The
// runs wait behind a held kernel until all are queued (stream_hold.hpp).
#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/common/cuda_try.hpp"
#include "parity/bench/copy.hpp"
#include "parity/bench/attention_bench.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/bench/stream_hold.hpp"

namespace parity::bench {
namespace {

// Owns the event pairs of one timing run; destroyed on every return path.
class EventPairs {
 public:
  ~EventPairs() {
    for (cudaEvent_t event : events_) cudaEventDestroy(event);
  }
  Status create(int pairs) {
    events_.reserve(static_cast<std::size_t>(2 * pairs));
    for (int i = 0; i < 2 * pairs; ++i) {
      cudaEvent_t event = nullptr;
      PARITY_CUDA_TRY(cudaEventCreate(&event));
      events_.push_back(event);
    }
    return Status::ok();
  }
  cudaEvent_t start(int i) const { return events_[static_cast<std::size_t>(2 * i)]; }
  cudaEvent_t stop(int i) const { return events_[static_cast<std::size_t>(2 * i + 1)]; }

 private:
  std::vector<cudaEvent_t> events_;
};

// One hold per thread, made on first use: its pinned allocation costs far more than a short
// timed run, and `gemm measure` calls time_on_device once per repetition.
Result<StreamHold*> thread_stream_hold() {
  thread_local std::optional<StreamHold> hold;
  if (!hold) {
    PARITY_ASSIGN_OR_RETURN(StreamHold created, StreamHold::create());
    hold.emplace(std::move(created));
  }
  return &*hold;
}

}  // namespace

Result<std::int64_t> resolved_flush_bytes(const TimingOptions& options) {
  if (options.cache == TimingOptions::CacheMode::kWarm) return std::int64_t{0};
  if (options.flush_bytes > 0) return options.flush_bytes;
  int device = 0;
  PARITY_CUDA_TRY(cudaGetDevice(&device));
  int l2_bytes = 0;
  PARITY_CUDA_TRY(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  // Twice the L2, so no line of the previous repetition survives whatever the replacement policy.
  return 2 * static_cast<std::int64_t>(l2_bytes > 0 ? l2_bytes : (64 << 20));
}

Result<SampleStats> time_on_device(const std::function<Status(gpu::StreamHandle)>& work,
                                   const TimingOptions& options, gpu::StreamHandle stream) {
  PARITY_RETURN_IF_ERROR(validate_timing_options(options));
  PARITY_CHECK_ARG(static_cast<bool>(work), "time_on_device: work is empty; expected a callable");
  const bool flush = options.cache != TimingOptions::CacheMode::kWarm;
  const bool read_back = options.cache == TimingOptions::CacheMode::kFlushL2Clean;
  gpu::DeviceBuffer scratch;
  if (flush) {
    PARITY_ASSIGN_OR_RETURN(const std::int64_t flush_bytes, resolved_flush_bytes(options));
    // Rounded up to whole 16-byte vectors for the read-back; 16 more bytes hold its sink.
    const std::int64_t rounded = (flush_bytes + 15) / 16 * 16;
    PARITY_ASSIGN_OR_RETURN(scratch, gpu::DeviceBuffer::allocate(static_cast<std::size_t>(rounded + 16)));
  }
  auto cuda_stream = static_cast<cudaStream_t>(stream);
  // Alternate the fill byte so the memset is never a no-op a driver could skip.
  int flush_value = 0;
  auto flush_l2 = [&]() -> Status {
    if (!flush) return Status::ok();
    flush_value ^= 0x5a;
    const std::int64_t flush_bytes = static_cast<std::int64_t>(scratch.size_bytes()) - 16;
    PARITY_CUDA_TRY(cudaMemsetAsync(scratch.data(), flush_value, static_cast<std::size_t>(flush_bytes), cuda_stream));
    if (read_back) {
      auto* bytes = static_cast<unsigned char*>(scratch.data());
      PARITY_RETURN_IF_ERROR(bench::read_device_vectors(bytes, flush_bytes, bytes + flush_bytes, stream));
    }
    return Status::ok();
  };

  // Queues `count` flushed runs, each between its own events; waits once; returns their times.
  // The runs are queued behind a held kernel, kRunsPerHold at a time, and released together: the
  // device never waits on the host between a start and a stop event (a slow enqueue of `work`
  // longer than the flush would otherwise be timed as kernel time).
  constexpr int kRunsPerHold = 32;  // ~200 queued operations, well inside the launch queue
  PARITY_ASSIGN_OR_RETURN(StreamHold * held, thread_stream_hold());
  StreamHold& hold = *held;
  // An early return (a failing `work`) must not leave the stream held until the timeout, nor the
  // hold pointing at a stream its caller may destroy.
  struct FinishOnExit {
    StreamHold& hold;
    ~FinishOnExit() { (void)hold.finish(); }
  } finish_on_exit{hold};
  auto timed_runs = [&](int count, const char* what) -> Result<SampleStats> {
    EventPairs events;
    PARITY_RETURN_IF_ERROR(events.create(count));
    for (int i = 0; i < count; ++i) {
      if (i % kRunsPerHold == 0) PARITY_RETURN_IF_ERROR(hold.hold(stream));
      PARITY_RETURN_IF_ERROR(flush_l2());
      PARITY_CUDA_TRY(cudaEventRecord(events.start(i), cuda_stream));
      const Status status = work(stream);
      if (!status.is_ok()) return status.with_context(std::string("time_on_device: ") + what + " work failed");
      PARITY_CUDA_TRY(cudaEventRecord(events.stop(i), cuda_stream));
      if ((i + 1) % kRunsPerHold == 0 || i + 1 == count) hold.release();
    }
    PARITY_RETURN_IF_ERROR(hold.finish());  // the stream drained: every event is complete
    // Asynchronous faults of `work` surface here rather than in the next unrelated call.
    PARITY_CUDA_TRY(cudaGetLastError());
    std::vector<double> samples_ms;
    samples_ms.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
      float elapsed_ms = 0.0f;
      PARITY_CUDA_TRY(cudaEventElapsedTime(&elapsed_ms, events.start(i), events.stop(i)));
      samples_ms.push_back(static_cast<double>(elapsed_ms));
    }
    return summarize(std::move(samples_ms));
  };

  ResolvedCounts counts{options.warmup_iterations, options.repetitions};
  if (options.warmup_ms > 0.0 || options.rep_ms > 0.0) {
    // Estimate as do_bench does (5 runs, each after a flush), but from the median of the runs
    // timed alone, so the flush's own time does not shrink the counts.
    PARITY_ASSIGN_OR_RETURN(const SampleStats estimate, timed_runs(5, "estimate"));
    counts = resolve_time_based_counts(options, estimate.median_ms);
  }
  for (int i = 0; i < counts.warmup_iterations; ++i) {
    PARITY_RETURN_IF_ERROR(flush_l2());
    const Status status = work(stream);
    if (!status.is_ok()) return status.with_context("time_on_device: warm-up work failed");
  }
  return timed_runs(counts.repetitions, "timed");
}

AttentionBenchDevice gpu_bench_device() {
  AttentionBenchDevice device;
  device.time = [](const std::function<Status(gpu::StreamHandle)>& work, const TimingOptions& options,
                   gpu::StreamHandle stream) { return time_on_device(work, options, stream); };
  device.properties = [](int index) { return gpu::device_properties(index); };
  device.clocks = [](int index) { return read_device_clocks(index); };
  return device;
}

}  // namespace parity::bench
