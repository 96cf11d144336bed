// `parity bench hstu-layer` (hstu_layer_bench.hpp): drawn jagged batch and weights, host-timed
// forward and backward of the HSTU layer, JSON with provenance.
#include "parity/bench/hstu_layer_bench.hpp"

#include <chrono>
#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "bench/results_json.hpp"
#include "parity/bench/stats.hpp"

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

LayerTensors draw_tensors(const HstuLayerBenchRequest& request, attention::HstuLayerProblem& problem) {
  std::mt19937_64 rng(request.seed);
  LayerTensors t;
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
  const std::int64_t tokens = problem.total_tokens;
  const std::int64_t sizes[8] = {d, d, w * d, w, hv, hv, d * hv, d};
  const float uvqk_scale = std::sqrt(3.0F / static_cast<float>(d)), out_scale = std::sqrt(3.0F / static_cast<float>(hv));
  const float scales[8] = {0.1F, 0.1F, uvqk_scale, 0.1F, 0.1F, 0.1F, out_scale, 0.1F};
  for (int i = 0; i < 8; ++i) {
    const float centre = (i == 0 || i == 4) ? 1.0F : 0.0F;  // layer-norm gains around 1
    t.weights[i] = uniform(rng, sizes[i], centre - scales[i], centre + scales[i]);
    t.grads[i].assign(static_cast<std::size_t>(sizes[i]), 0.0F);
  }
  t.x = uniform(rng, tokens * d, -1.0F, 1.0F);
  t.grad_y = uniform(rng, tokens * d, -1.0F, 1.0F);
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

Result<std::string> run_hstu_layer_bench(const HstuLayerBenchRequest& request) {
  PARITY_RETURN_IF_ERROR(validate_hstu_layer_bench_request(request));
  attention::HstuLayerProblem problem = request.problem;
  LayerTensors t = draw_tensors(request, problem);
  ExecutionContext context;
  context.device = request.device;
  const attention::HstuLayerForwardArgs layer_forward = forward_args(t);
  const attention::HstuLayerBackwardArgs layer_backward = backward_args(t);
  const auto forward = [&] { return attention::hstu_layer_forward(problem, layer_forward, context); };
  const auto backward = [&] { return attention::hstu_layer_backward(problem, layer_backward, context); };
  PARITY_ASSIGN_OR_RETURN(const SampleStats forward_stats, time_pass(request, forward));
  PARITY_ASSIGN_OR_RETURN(const SampleStats backward_stats, time_pass(request, backward));
  const attention::HstuLayerFlops flops = attention::hstu_layer_flops(problem, t.lengths);
  std::ostringstream text;
  text << "hstu layer on " << device_kind_name(request.device) << ": B=" << problem.batch << " N=" << problem.max_seq_len
       << " T=" << problem.total_tokens << " D=" << problem.model_dim << " H=" << problem.heads
       << " d_qk=" << problem.dim_qk << " d_v=" << problem.dim_v << "\n"
       << "  forward  median " << forward_stats.median_ms << " ms  " << flops.forward / (forward_stats.median_ms * 1e9)
       << " TFLOP/s\n"
       << "  backward median " << backward_stats.median_ms << " ms  " << flops.backward / (backward_stats.median_ms * 1e9)
       << " TFLOP/s\n"
       << "  saved activations " << attention::hstu_layer_saved_bytes(problem) << " bytes\n";
  if (!request.out.empty()) {
    json document = results_document("hstu_layer", provenance_json(request.seed));
    document["device_kind"] = device_kind_name(request.device);
    document["problem"] = {{"batch", problem.batch}, {"total_tokens", problem.total_tokens},
                           {"max_seq_len", problem.max_seq_len}, {"model_dim", problem.model_dim},
                           {"heads", problem.heads}, {"dim_qk", problem.dim_qk}, {"dim_v", problem.dim_v},
                           {"max_targets", request.max_targets}, {"contextual_len", problem.contextual_len},
                           {"max_attn_len", problem.max_attn_len}, {"dtype", dtype_name(problem.dtype)}};
    document["method"] = {{"timer", "host steady_clock around each pass"}, {"warmup", request.warmup},
                          {"repetitions", request.repetitions}, {"min_length_fraction", request.min_length_fraction}};
    document["forward"] = stats_json(forward_stats, flops.forward);
    document["backward"] = stats_json(backward_stats, flops.backward);
    document["flops"] = {{"forward", flops.forward}, {"backward", flops.backward}};
    document["saved_bytes"] = attention::hstu_layer_saved_bytes(problem);
    PARITY_RETURN_IF_ERROR(write_json_file(request.out, document));
    text << "  wrote " << request.out << "\n";
  }
  return text.str();
}

}  // namespace parity::bench
