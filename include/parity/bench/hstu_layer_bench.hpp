// `parity bench hstu-layer` as a library call: the HSTU layer (attention/hstu_layer.hpp) forward
// and backward on a drawn jagged batch (lengths U[ceil(fraction N), N), num_targets U[1, max]),
// weights drawn with the same seed; medians of host wall-clock repetitions after a warm-up; FLOPs
// by hstu_layer_flops (the projections plus the attention's useful FLOPs); JSON with provenance.
// CPU: fp32, host wall clock. GPU: bf16 activations (x and grad_y drawn on the device), the
// device timing handed in (device events, L2 flushed), workspace and device memory reported.
#pragma once

#include <cstdint>
#include <string>

#include "parity/attention/hstu_layer.hpp"
#include "parity/bench/attention_bench.hpp"  // AttentionBenchDevice: the GPU timing
#include "parity/core/op.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

struct HstuLayerBenchRequest {
  attention::HstuLayerProblem problem;  // batch, model_dim, heads, dims, N (max_seq_len), masks
  double min_length_fraction = 0.9;     // lengths U[ceil(fraction * N), N]
  int max_targets = 0;                  // num_targets U[1, max_targets]; 0 = none
  int warmup = 1;
  int repetitions = 5;
  std::uint64_t seed = 1;
  DeviceKind device = DeviceKind::kCpu;
  std::string out;  // results JSON with provenance (empty: none)
};

/// kInvalidArgument naming the field (fraction in (0, 1], repetitions >= 1, warmup >= 0,
/// max_targets >= 0) or the problem's own message; CPU code, before anything runs.
Status validate_hstu_layer_bench_request(const HstuLayerBenchRequest& request);

/// Draws the batch and the weights, runs the forward and the backward once unchecked (warm-up)
/// and `repetitions` times timed, writes `out` and returns the printed summary.
/// `device`: the GPU timing (gpu_bench_device()); unused on the CPU.
Result<std::string> run_hstu_layer_bench(const HstuLayerBenchRequest& request,
                                         const AttentionBenchDevice& device = {});

}  // namespace parity::bench
