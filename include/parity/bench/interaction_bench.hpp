// `parity bench interaction` as a library call: the dot interaction alone on the GPU, every GPU
// variant of the forward and of the backward that takes the shape (the fast kernels and the
// general ones), each checked against fp64 on the first samples, then timed with device events
// (L2 flushed, median with p10/p90). Effective bandwidth from the byte model: forward reads
// B x V x D activations and writes B x stride; backward reads the activations and B x (D + P) of
// the gradient and writes B x D (dtype) plus B x F x D fp32. JSON with provenance.
#pragma once

#include <cstdint>
#include <string>

#include "parity/bench/attention_bench.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/core/dtype.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

// The same parity_gpu functions as the attention bench (timing, properties, clocks).
using InteractionBenchDevice = AttentionBenchDevice;

struct InteractionBenchRequest {
  std::int64_t batch = 65536;
  int num_embeddings = 26;  // F: dlrm-kaggle
  int dim = 128;            // D
  DType dtype = DType::kBF16;
  std::int64_t output_stride = -1;  // -1: width padded to 8 columns as the trainer does; 0: packed
  TimingOptions timing;
  int checked_samples = 4;  // samples checked against fp64 before anything is timed
  std::uint64_t seed = 1;
  std::string out;  // results JSON (empty: none)
};

/// Validates the request (kInvalidArgument naming the field); CPU code, before any device.
Status validate_interaction_bench_request(const InteractionBenchRequest& request);

/// `parity bench interaction` as a command line or a binding gives it (the dtype as text).
struct InteractionBenchSettings {
  InteractionBenchRequest request;  // dtype and timing from the fields below
  std::string dtype = "bf16";       // bf16 or fp32
  TimingSettings timing;
};
/// The checked request (CPU, before any device); errors name "bench interaction" and the flag.
Result<InteractionBenchRequest> interaction_bench_request_from_settings(const InteractionBenchSettings& settings);

/// Runs every applicable GPU variant on device 0; returns the printed report. kInternal when a
/// check fails (that variant is not timed); kUnsupported without a GPU backend.
Result<std::string> run_interaction_bench(const InteractionBenchRequest& request,
                                          const InteractionBenchDevice& device);

}  // namespace parity::bench
