// `parity bench hstu-layer` (hstu_layer_bench.hpp): drawn jagged batch and weights, forward and
// backward of the HSTU layer timed on the host (CPU) or by device events with the L2 flushed
// (GPU: bf16 activations drawn on the device), JSON with provenance.
#include "parity/bench/hstu_layer_bench.hpp"

#include <chrono>
#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "bench/results_json.hpp"
#include "core/device_hooks.hpp"
#include "parity/bench/stats.hpp"
#include "parity/train/buffer.hpp"

namespace parity::bench {
namespace {

using nlohmann::json;

struct LayerTensors {
  std::vector<std::int64_t> lengths, offsets;
  std::vector<std::int32_t> num_targets;
  std::vector<float> x, y, grad_y, grad_x, saved;
  std::vector<float> weights[8], grads[8];  // in HstuLayerWeights' field order
};

std::vector<float> uniform(std::mt19937_64& rng, std::int64_t count, float low, float high) {
  std::uniform_real_distribution<float> draw(low, high);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& value : values) value = draw(rng);
  return values;
}

// Lengths U[ceil(fraction N), N], num_targets U[1, max], then the weights (layer-norm gains
// around 1, projections scaled to keep p and y O(1)) from one generator.
void draw_batch_and_weights(const HstuLayerBenchRequest& request, attention::HstuLayerProblem& problem,
                            std::mt19937_64& rng, LayerTensors& t) {
  const std::int64_t n = problem.max_seq_len;
  const auto shortest = std::min<std::int64_t>(n, static_cast<std::int64_t>(std::ceil(request.min_length_fraction * static_cast<double>(n))));
  std::uniform_int_distribution<std::int64_t> length(shortest, n);
  t.offsets.push_back(0);
  for (std::int64_t b = 0; b < problem.batch; ++b) {
    t.lengths.push_back(length(rng));
    t.offsets.push_back(t.offsets.back() + t.lengths.back());
  }
  problem.total_tokens = t.offsets.back();
  problem.has_num_targets = request.max_targets > 0;
  if (problem.has_num_targets) {
    std::uniform_int_distribution<std::int32_t> targets(1, request.max_targets);
    for (std::int64_t b = 0; b < problem.batch; ++b) t.num_targets.push_back(targets(rng));
  }
  const std::int64_t d = problem.model_dim, w = problem.uvqk_width(), hv = problem.attention_width();
  const std::int64_t sizes[8] = {d, d, w * d, w, hv, hv, d * hv, d};
  const float uvqk_scale = std::sqrt(3.0F / static_cast<float>(d)), out_scale = std::sqrt(3.0F / static_cast<float>(hv));
  const float scales[8] = {0.1F, 0.1F, uvqk_scale, 0.1F, 0.1F, 0.1F, out_scale, 0.1F};
  for (int i = 0; i < 8; ++i) {
    const float centre = (i == 0 || i == 4) ? 1.0F : 0.0F;  // layer-norm gains around 1
    t.weights[i] = uniform(rng, sizes[i], centre - scales[i], centre + scales[i]);
    t.grads[i].assign(static_cast<std::size_t>(sizes[i]), 0.0F);
  }
}

LayerTensors draw_tensors(const HstuLayerBenchRequest& request, attention::HstuLayerProblem& problem) {
  std::mt19937_64 rng(request.seed);
  LayerTensors t;
  draw_batch_and_weights(request, problem, rng, t);
  const std::int64_t elements = problem.total_tokens * problem.model_dim;
  t.x = uniform(rng, elements, -1.0F, 1.0F);
  t.grad_y = uniform(rng, elements, -1.0F, 1.0F);
  t.y.assign(t.x.size(), 0.0F);
  t.grad_x.assign(t.x.size(), 0.0F);
  t.saved.assign(static_cast<std::size_t>(attention::hstu_layer_saved_bytes(problem) / sizeof(float)), 0.0F);
  return t;
}

attention::HstuLayerForwardArgs forward_args(LayerTensors& t) {
  attention::HstuLayerForwardArgs args;
  args.x = t.x.data();
  args.seq_offsets = t.offsets.data();
  args.num_targets = t.num_targets.empty() ? nullptr : t.num_targets.data();
  args.weights = {t.weights[0].data(), t.weights[1].data(), t.weights[2].data(), t.weights[3].data(),
                  t.weights[4].data(), t.weights[5].data(), t.weights[6].data(), t.weights[7].data()};
  args.y = t.y.data();
  args.saved = t.saved.data();
  return args;
}

attention::HstuLayerBackwardArgs backward_args(LayerTensors& t) {
  attention::HstuLayerBackwardArgs args;
  args.forward = forward_args(t);
  args.grad_y = t.grad_y.data();
  args.grad_x = t.grad_x.data();
  args.grads = {t.grads[0].data(), t.grads[1].data(), t.grads[2].data(), t.grads[3].data(),
                t.grads[4].data(), t.grads[5].data(), t.grads[6].data(), t.grads[7].data()};
  return args;
}

template <typename Pass>
Result<SampleStats> time_pass(const HstuLayerBenchRequest& request, Pass&& pass) {
  for (int i = 0; i < request.warmup; ++i) PARITY_RETURN_IF_ERROR(pass());
  std::vector<double> samples_ms;
  for (int i = 0; i < request.repetitions; ++i) {
    const auto start = std::chrono::steady_clock::now();
    PARITY_RETURN_IF_ERROR(pass());
    samples_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return summarize(std::move(samples_ms));
}

json stats_json(const SampleStats& s, double flops) {
  return {{"median_ms", s.median_ms}, {"p10_ms", s.p10_ms}, {"p90_ms", s.p90_ms}, {"count", s.count},
          {"tflops", flops / (s.median_ms * 1e9)}};
}


// The GPU run: the batch and weights drawn on the host as for the CPU, x and grad_y (bf16) on the
// device; every buffer the layer touches allocated once; device-event medians, L2 flushed.
struct GpuRun {
  std::vector<train::Buffer> buffers;  // x, grad_y, y, grad_x, saved, workspace, offsets, targets, 8 weights, 8 grads
  attention::HstuLayerForwardArgs forward;
  attention::HstuLayerBackwardArgs backward;
  std::int64_t allocated_bytes = 0;
};

Result<train::Buffer> gpu_buffer(GpuRun& run, std::int64_t bytes, const char* what) {
  run.allocated_bytes += bytes;
  return train::Buffer::allocate(DeviceKind::kGpu, std::max<std::int64_t>(bytes, 16), what);
}

Result<GpuRun> prepare_gpu(const HstuLayerBenchRequest& request, const attention::HstuLayerProblem& problem,
                           LayerTensors& t, const parity::detail::DeviceHooks& hooks) {
  GpuRun run;
  const std::int64_t rows_bytes = problem.total_tokens * problem.model_dim * 2;
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  PARITY_ASSIGN_OR_RETURN(const std::int64_t workspace_bytes, attention::hstu_layer_workspace_bytes(problem, context));
  const std::pair<std::int64_t, const char*> sizes[] = {
      {rows_bytes, "x"}, {rows_bytes, "grad_y"}, {rows_bytes, "y"}, {rows_bytes, "grad_x"},
      {attention::hstu_layer_saved_bytes(problem), "saved activations"}, {workspace_bytes, "workspace"},
      {static_cast<std::int64_t>(t.offsets.size()) * 8, "seq_offsets"},
      {static_cast<std::int64_t>(t.num_targets.size()) * 4, "num_targets"}};
  for (const auto& [bytes, what] : sizes) {
    PARITY_ASSIGN_OR_RETURN(train::Buffer buffer, gpu_buffer(run, bytes, what));
    run.buffers.push_back(std::move(buffer));
  }
  for (int i = 0; i < 16; ++i) {
    const std::vector<float>& host = i < 8 ? t.weights[i] : t.grads[i - 8];
    const auto bytes = static_cast<std::int64_t>(host.size() * sizeof(float));
    PARITY_ASSIGN_OR_RETURN(train::Buffer buffer, gpu_buffer(run, bytes, i < 8 ? "weights" : "gradients"));
    PARITY_RETURN_IF_ERROR(buffer.copy_from_host(host.data(), bytes));
    run.buffers.push_back(std::move(buffer));
  }
  auto& b = run.buffers;
  const std::int64_t elements = problem.total_tokens * problem.model_dim;
  PARITY_RETURN_IF_ERROR(hooks.fill_uniform(b[0].data(), DType::kBF16, elements, request.seed + 1, 1.0F, nullptr));
  PARITY_RETURN_IF_ERROR(hooks.fill_uniform(b[1].data(), DType::kBF16, elements, request.seed + 2, 1.0F, nullptr));
  PARITY_RETURN_IF_ERROR(b[6].copy_from_host(t.offsets.data(), static_cast<std::int64_t>(t.offsets.size()) * 8));
  if (!t.num_targets.empty()) {
    PARITY_RETURN_IF_ERROR(b[7].copy_from_host(t.num_targets.data(), static_cast<std::int64_t>(t.num_targets.size()) * 4));
  }
  PARITY_RETURN_IF_ERROR(hooks.synchronize(nullptr));
  auto& f = run.forward;
  f.x = b[0].data();
  f.seq_offsets = b[6].as<std::int64_t>();
  f.num_targets = t.num_targets.empty() ? nullptr : b[7].as<std::int32_t>();
  f.host_seq_offsets = t.offsets.data();
  f.host_num_targets = t.num_targets.empty() ? nullptr : t.num_targets.data();
  f.weights = {b[8].as<float>(), b[9].as<float>(), b[10].as<float>(), b[11].as<float>(),
               b[12].as<float>(), b[13].as<float>(), b[14].as<float>(), b[15].as<float>()};
  f.y = b[2].data();
  f.saved = b[4].data();
  f.workspace = b[5].data();
  f.workspace_bytes = workspace_bytes;
  run.backward.forward = f;
  run.backward.grad_y = b[1].data();
  run.backward.grad_x = b[3].data();
  run.backward.grads = {b[16].as<float>(), b[17].as<float>(), b[18].as<float>(), b[19].as<float>(),
                        b[20].as<float>(), b[21].as<float>(), b[22].as<float>(), b[23].as<float>()};
  return run;
}

struct PassTimes {
  SampleStats forward, backward;
  std::int64_t allocated_bytes = 0, workspace_bytes = 0, device_in_use_bytes = 0;
};

Result<PassTimes> time_on_gpu(const HstuLayerBenchRequest& request, const attention::HstuLayerProblem& problem,
                              LayerTensors& t, const AttentionBenchDevice& device) {
  ExecutionContext gpu_context;
  gpu_context.device = DeviceKind::kGpu;
  // The variants' reasons first (a CPU-only build, an unsupported shape), before any allocation.
  PARITY_RETURN_IF_ERROR(attention::hstu_layer_workspace_bytes(problem, gpu_context).status().with_context("bench hstu-layer"));
  PARITY_ASSIGN_OR_RETURN(const parity::detail::DeviceHooks* hooks, parity::detail::require_device_hooks("bench hstu-layer"));
  if (!device.time) return unsupported("bench hstu-layer: no device timing was handed in");
  PARITY_ASSIGN_OR_RETURN(GpuRun run, prepare_gpu(request, problem, t, *hooks));
  TimingOptions timing;
  timing.warmup_iterations = request.warmup;
  timing.repetitions = request.repetitions;
  const auto on = [](gpu::StreamHandle stream) { return ExecutionContext{DeviceKind::kGpu, stream, false}; };
  PassTimes times;
  PARITY_ASSIGN_OR_RETURN(times.forward, device.time([&](gpu::StreamHandle stream) {
    return attention::hstu_layer_forward(problem, run.forward, on(stream));
  }, timing, nullptr));
  PARITY_ASSIGN_OR_RETURN(times.backward, device.time([&](gpu::StreamHandle stream) {
    return attention::hstu_layer_backward(problem, run.backward, on(stream));
  }, timing, nullptr));
  PARITY_ASSIGN_OR_RETURN(times.device_in_use_bytes, hooks->memory_in_use());
  times.allocated_bytes = run.allocated_bytes;
  times.workspace_bytes = run.forward.workspace_bytes;
  return times;
}

}  // namespace

Status validate_hstu_layer_bench_request(const HstuLayerBenchRequest& request) {
  PARITY_CHECK_ARG(request.min_length_fraction > 0.0 && request.min_length_fraction <= 1.0,
                   "bench hstu-layer: --min-length-fraction=", request.min_length_fraction, ": must be in (0, 1]");
  PARITY_CHECK_ARG(request.repetitions >= 1, "bench hstu-layer: --reps=", request.repetitions, ": must be >= 1");
  PARITY_CHECK_ARG(request.warmup >= 0, "bench hstu-layer: --warmup=", request.warmup, ": must be >= 0");
  PARITY_CHECK_ARG(request.max_targets >= 0, "bench hstu-layer: --max-targets=", request.max_targets, ": must be >= 0");
  attention::HstuLayerProblem problem = request.problem;
  problem.has_num_targets = request.max_targets > 0;
  return problem.validate();
}

Result<std::string> run_hstu_layer_bench(const HstuLayerBenchRequest& request, const AttentionBenchDevice& device) {
  PARITY_RETURN_IF_ERROR(validate_hstu_layer_bench_request(request));
  attention::HstuLayerProblem problem = request.problem;
  if (request.device == DeviceKind::kGpu) problem.dtype = DType::kBF16;  // the GPU variant's activations
  PassTimes times;
  LayerTensors t;
  if (request.device == DeviceKind::kGpu) {
    std::mt19937_64 rng(request.seed);
    draw_batch_and_weights(request, problem, rng, t);
    PARITY_ASSIGN_OR_RETURN(times, time_on_gpu(request, problem, t, device));
  } else {
    t = draw_tensors(request, problem);
    ExecutionContext context;
    context.device = request.device;
    const attention::HstuLayerForwardArgs layer_forward = forward_args(t);
    const attention::HstuLayerBackwardArgs layer_backward = backward_args(t);
    const auto forward = [&] { return attention::hstu_layer_forward(problem, layer_forward, context); };
    const auto backward = [&] { return attention::hstu_layer_backward(problem, layer_backward, context); };
    PARITY_ASSIGN_OR_RETURN(times.forward, time_pass(request, forward));
    PARITY_ASSIGN_OR_RETURN(times.backward, time_pass(request, backward));
  }
  const SampleStats& forward_stats = times.forward;
  const SampleStats& backward_stats = times.backward;
  const attention::HstuLayerFlops flops = attention::hstu_layer_flops(problem, t.lengths);
  std::ostringstream text;
  text << "hstu layer on " << device_kind_name(request.device) << ": B=" << problem.batch << " N=" << problem.max_seq_len
       << " T=" << problem.total_tokens << " D=" << problem.model_dim << " H=" << problem.heads
       << " d_qk=" << problem.dim_qk << " d_v=" << problem.dim_v << "\n"
       << "  forward  median " << forward_stats.median_ms << " ms  " << flops.forward / (forward_stats.median_ms * 1e9)
       << " TFLOP/s\n"
       << "  backward median " << backward_stats.median_ms << " ms  " << flops.backward / (backward_stats.median_ms * 1e9)
       << " TFLOP/s\n"
       << "  saved activations " << attention::hstu_layer_saved_bytes(problem) << " bytes";
  if (request.device == DeviceKind::kGpu) {
    text << ", workspace " << times.workspace_bytes << " bytes, all buffers " << times.allocated_bytes
         << " bytes, device memory in use " << times.device_in_use_bytes << " bytes";
  }
  text << "\n";
  if (!request.out.empty()) {
    json document = results_document("hstu_layer", provenance_json(request.seed));
    document["device_kind"] = device_kind_name(request.device);
    document["problem"] = {{"batch", problem.batch}, {"total_tokens", problem.total_tokens},
                           {"max_seq_len", problem.max_seq_len}, {"model_dim", problem.model_dim},
                           {"heads", problem.heads}, {"dim_qk", problem.dim_qk}, {"dim_v", problem.dim_v},
                           {"max_targets", request.max_targets}, {"contextual_len", problem.contextual_len},
                           {"max_attn_len", problem.max_attn_len}, {"dtype", dtype_name(problem.dtype)}};
    document["method"] = {{"timer", request.device == DeviceKind::kGpu ? "device events, L2 flushed before each pass"
                                                                         : "host steady_clock around each pass"},
                          {"statistic", "median"}, {"warmup", request.warmup},
                          {"repetitions", request.repetitions}, {"min_length_fraction", request.min_length_fraction}};
    document["forward"] = stats_json(forward_stats, flops.forward);
    document["backward"] = stats_json(backward_stats, flops.backward);
    document["flops"] = {{"forward", flops.forward}, {"backward", flops.backward}};
    document["saved_bytes"] = attention::hstu_layer_saved_bytes(problem);
    if (request.device == DeviceKind::kGpu) {
      document["workspace_bytes"] = times.workspace_bytes;
      document["allocated_bytes"] = times.allocated_bytes;
      document["device_memory_in_use_bytes"] = times.device_in_use_bytes;
      if (device.properties) {
        PARITY_ASSIGN_OR_RETURN(const gpu::DeviceProperties d, device.properties(0));
        document["provenance"]["device"] = {{"name", d.name}, {"sm_count", d.sm_count}, {"l2_bytes", d.l2_bytes},
                                            {"max_sm_clock_mhz", d.max_sm_clock_mhz},
                                            {"driver_version", d.driver_version},
                                            {"runtime_version", d.runtime_version}};
      }
      if (device.clocks) {
        const Result<DeviceClocks> c = device.clocks(0);
        if (c.is_ok()) {
          document["clocks_after"] = {{"sm_clock_mhz", c->sm_clock_mhz}, {"memory_clock_mhz", c->memory_clock_mhz},
                                      {"max_sm_clock_mhz", c->max_sm_clock_mhz}};
        }
      }
    }
    PARITY_RETURN_IF_ERROR(write_json_file(request.out, document));
    text << "  wrote " << request.out << "\n";
  }
  return text.str();
}

}  // namespace parity::bench
