// `parity bench attention` as a library call: jagged attention (HSTU, softmax / jagged flash
// attention, GDPA) on the GPU. Named configurations H1, H2, J1, G1 (research memo sec. 6.4) and
// `targets` (issue 15's target shapes), or one free shape; jagged inputs drawn with a seed
// (lengths U[fraction*N, N), num_targets U[1, max]); forward, backward and the deterministic
// backward timed with device events (L2 flushed, median with p10/p90); useful TFLOP/s by the GR
// convention (attention.hpp, useful_flops), tokens/s, device memory; the forward checked against
// the fp64 reference on sampled rows before anything is timed; JSON with provenance.
//
// The specs, inputs and the run are CPU-library code: device memory through the device hooks,
// the kernels through the op's GPU slots, and the timing through the functions the caller (the
// CLI, linked with parity_gpu) hands in as AttentionBenchDevice.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parity/attention/attention.hpp"
#include "parity/bench/device_timing.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/status.hpp"

namespace parity::bench {

/// One timed shape. `problem` holds kind, activation, heads, dims, N, masks, dtype; batch sets
/// the number of sequences, and the totals come from the drawn lengths.
struct AttentionBenchCase {
  std::string config;  // H1, H2, J1, G1, targets, custom
  std::string label;   // "H1 N=2048", ...
  attention::AttentionProblem problem;
  double min_length_fraction = 0.9;  // q lengths U[ceil(fraction * N), N)
  int max_targets = 0;               // num_targets U[1, max_targets]; 0 = no targets
  std::int64_t kv_length = 0;        // cross-attention: keys per sequence (G1: 64); 0 = self
  bool time_backward = true;
};

/// Overrides of a named configuration, or a free one (kind required then). Zero / negative /
/// empty = keep the configuration's value.
struct AttentionBenchOverrides {
  std::string kind;        // hstu, softmax (jfa), gdpa
  std::string activation;  // silu, gelu, relu, sigmoid
  std::int64_t batch = 0;
  int heads = 0;
  int dim_qk = 0;
  int dim_v = 0;                      // 0 = dim_qk
  std::vector<std::int64_t> seq_lens;  // N values (one case each)
  std::string dtype;                   // bf16, fp16
  int max_targets = -1;
  int contextual_len = -1;
  int max_attn_len = -1;
  int min_full_attn_len = -1;
  std::int64_t kv_length = -1;
  double min_length_fraction = -1;
  std::string causal;  // "", "true", "false"
  bool forward_only = false;
};

/// The names attention_bench_cases knows, in order.
std::vector<std::string> attention_bench_config_names();
/// The cases of a named configuration (empty `config`: one free configuration from the
/// overrides) with the overrides applied, each problem validated; kInvalidArgument naming the
/// flag otherwise.
Result<std::vector<AttentionBenchCase>> attention_bench_cases(const std::string& config,
                                                              const AttentionBenchOverrides& overrides);

/// Host copies of one drawn jagged batch: the problem with batch and totals set, lengths,
/// offsets [B+1] and num_targets [B] (empty without targets).
struct AttentionBenchInputs {
  attention::AttentionProblem problem;
  std::vector<std::int64_t> q_lengths, kv_lengths, q_offsets, kv_offsets;
  std::vector<std::int32_t> num_targets;
};
Result<AttentionBenchInputs> attention_bench_inputs(const AttentionBenchCase& bench_case, std::uint64_t seed);

/// parity_gpu functions the run needs, handed in by a caller that links it (the CPU library
/// cannot): bench::time_on_device, gpu::device_properties, bench::read_device_clocks.
struct AttentionBenchDevice {
  std::function<Result<SampleStats>(const std::function<Status(gpu::StreamHandle)>&, const TimingOptions&,
                                    gpu::StreamHandle)>
      time;
  std::function<Result<gpu::DeviceProperties>(int)> properties;
  std::function<Result<DeviceClocks>(int)> clocks;
};
/// The device functions above from parity_gpu (defined there: link it to call this).
AttentionBenchDevice gpu_bench_device();

struct AttentionBenchRequest {
  std::vector<AttentionBenchCase> cases;
  TimingOptions timing;
  std::uint64_t seed = 1;
  int checked_rows = 8;  // rows per case checked against fp64 before timing
  std::string out;       // results JSON with provenance (empty: none)
  // Forward variants (attention_forward_variants() names, e.g. attention_forward_gpu_rows128)
  // checked and timed one after another beside the op's own choice; empty: the choice only.
  std::vector<std::string> forward_variants;
  // Backward variants (attention_backward_variants() names, e.g. attention_backward_gpu) timed
  // one after another beside the op's own choice; empty: the choice only.
  std::vector<std::string> backward_variants;
};

/// ok when every name is a forward variant of the attention op (attention_forward_variants());
/// kInvalidArgument naming the first unknown one and listing the known ones otherwise.
Status check_attention_forward_variants(const std::vector<std::string>& names);
/// The same for backward variants (attention_backward_variants()).
Status check_attention_backward_variants(const std::vector<std::string>& names);

/// The checked rows (>= 1), the timing and the variant names; kInvalidArgument naming the flag
/// ("bench attention: --check-rows=0 must be >= 1"). CPU code, before any device.
Status validate_attention_bench_request(const AttentionBenchRequest& request);

/// `parity bench attention` as a command line or a binding gives it.
struct AttentionBenchSettings {
  AttentionBenchRequest request;  // seed, checked rows, out, variants; cases and timing from below
  std::string config;             // a named configuration (empty: the overrides' free shape)
  AttentionBenchOverrides overrides;
  TimingSettings timing;
};
/// The checked request (cases, timing, validate_attention_bench_request); CPU code, before any device.
Result<AttentionBenchRequest> attention_bench_request_from_settings(const AttentionBenchSettings& settings);

/// Runs every case on device 0; returns the printed report. kInternal when a forward check fails
/// (nothing wrong is timed); kUnsupported when this build has no GPU backend.
Result<std::string> run_attention_bench(const AttentionBenchRequest& request, const AttentionBenchDevice& device);

}  // namespace parity::bench
