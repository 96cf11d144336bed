// `parity bench interaction` (include/parity/bench/interaction_bench.hpp): device inputs, the
// fp64 check of each variant on the first samples, the timings, the report and the results file.
#include "parity/bench/interaction_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "bench/results_json.hpp"
#include "core/device_hooks.hpp"
#include "parity/nn/interaction.hpp"
#include "parity/train/buffer.hpp"
#include "reference/dlrm_dense.hpp"

namespace parity::bench {
namespace {

using nlohmann::json;
using nn::DotInteractionProblem;
using train::Buffer;

DotInteractionProblem problem_of(const InteractionBenchRequest& r) {
  DotInteractionProblem p{r.batch, r.num_embeddings, r.dim, r.dtype, r.output_stride};
  if (r.output_stride < 0) p.output_stride = (p.output_dim() + 7) / 8 * 8;
  return p;
}

std::int64_t row_stride(const DotInteractionProblem& p) {
  return p.output_stride == 0 ? p.output_dim() : p.output_stride;
}

struct Tensors {
  Buffer bottom, embeddings, output, grad_output, grad_bottom, grad_embeddings;
};

// Host values of the first `samples` rows of each input and the fp64 results and error bounds.
struct Expected {
  std::int64_t samples = 0;
  std::vector<double> output, output_bound, grad_bottom, grad_bottom_bound, grad_embeddings,
      grad_embeddings_bound;
};

Result<std::vector<double>> download_values(const Buffer& buffer, DType dtype, std::int64_t count) {
  const std::int64_t element = static_cast<std::int64_t>(dtype_size_bytes(dtype));
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(count * element));
  PARITY_RETURN_IF_ERROR(buffer.copy_to_host(bytes.data(), count * element));
  std::vector<double> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kF32) {
      float v;
      std::memcpy(&v, &bytes[i * 4], 4);
      values[i] = v;
    } else {
      std::uint16_t bits;
      std::memcpy(&bits, &bytes[i * 2], 2);
      values[i] = dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
    }
  }
  return values;
}

std::vector<double> absolute(std::vector<double> values) {
  for (double& v : values) v = std::abs(v);
  return values;
}

Result<Expected> expected_results(const DotInteractionProblem& p, const Tensors& t,
                                  std::int64_t samples) {
  const int features = static_cast<int>(p.num_embeddings), dim = static_cast<int>(p.dim);
  const std::int64_t width = p.output_dim(), stride = row_stride(p);
  PARITY_ASSIGN_OR_RETURN(const auto bottom, download_values(t.bottom, p.dtype, samples * dim));
  PARITY_ASSIGN_OR_RETURN(const auto embeddings,
                          download_values(t.embeddings, p.dtype, samples * features * dim));
  PARITY_ASSIGN_OR_RETURN(const auto grad_strided,
                          download_values(t.grad_output, p.dtype, samples * stride));
  std::vector<double> grad;  // the reference takes rows without padding columns
  for (std::int64_t b = 0; b < samples; ++b) {
    grad.insert(grad.end(), grad_strided.begin() + b * stride,
                grad_strided.begin() + b * stride + width);
  }
  Expected e;
  e.samples = samples;
  e.output = ref::interaction_dot_forward(samples, features, dim, bottom, embeddings);
  e.output_bound =
      ref::interaction_dot_forward(samples, features, dim, absolute(bottom), absolute(embeddings));
  ref::interaction_dot_backward(samples, features, dim, bottom, embeddings, grad, &e.grad_bottom,
                                &e.grad_embeddings);
  ref::interaction_dot_backward(samples, features, dim, absolute(bottom), absolute(embeddings),
                                absolute(grad), &e.grad_bottom_bound, &e.grad_embeddings_bound);
  return e;
}

// |got - want| <= gamma_n (1 + u_out) sum|terms| + u_out |want| (fp32 sums of n terms, then one
// rounding to the output type); returns the largest ratio of error to bound (<= 1 passes).
double worst_error_ratio(const std::vector<double>& got, const std::vector<double>& want,
                         const std::vector<double>& bound, int terms, double u_out) {
  const double u = unit_roundoff(DType::kF32);
  const double gamma = terms * u / (1.0 - terms * u) * (1.0 + u_out);
  double worst = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double allowed = gamma * bound[i] + u_out * std::abs(want[i]) + 1e-30;
    worst = std::max(worst, std::abs(got[i] - want[i]) / allowed);
  }
  return worst;
}

Result<double> check_forward(const DotInteractionProblem& p, const Tensors& t, const Expected& e) {
  const std::int64_t width = p.output_dim(), stride = row_stride(p);
  PARITY_ASSIGN_OR_RETURN(const auto strided,
                          download_values(t.output, p.dtype, e.samples * stride));
  std::vector<double> got;
  for (std::int64_t b = 0; b < e.samples; ++b) {
    got.insert(got.end(), strided.begin() + b * stride, strided.begin() + b * stride + width);
  }
  return worst_error_ratio(got, e.output, e.output_bound, static_cast<int>(p.dim),
                           unit_roundoff(p.dtype));
}

Result<double> check_backward(const DotInteractionProblem& p, const Tensors& t, const Expected& e) {
  const int terms = static_cast<int>(p.num_embeddings) + 2;  // V products and the pass-through
  PARITY_ASSIGN_OR_RETURN(const auto grad_bottom,
                          download_values(t.grad_bottom, p.dtype, e.samples * p.dim));
  PARITY_ASSIGN_OR_RETURN(
      const auto grad_embeddings,
      download_values(t.grad_embeddings, DType::kF32, e.samples * p.num_embeddings * p.dim));
  return std::max(
      worst_error_ratio(grad_bottom, e.grad_bottom, e.grad_bottom_bound, terms,
                        unit_roundoff(p.dtype)),
      worst_error_ratio(grad_embeddings, e.grad_embeddings, e.grad_embeddings_bound, terms, 0.0));
}

Result<Tensors> make_tensors(const DotInteractionProblem& p,
                             const parity::detail::DeviceHooks& hooks, std::uint64_t seed) {
  const std::int64_t element = static_cast<std::int64_t>(dtype_size_bytes(p.dtype));
  const std::int64_t bottom = p.batch_size * p.dim, embeddings = bottom * p.num_embeddings;
  const std::int64_t output = p.batch_size * row_stride(p);
  Tensors t;
  PARITY_ASSIGN_OR_RETURN(t.bottom, Buffer::allocate(DeviceKind::kGpu, bottom * element, "bottom"));
  PARITY_ASSIGN_OR_RETURN(t.embeddings,
                          Buffer::allocate(DeviceKind::kGpu, embeddings * element, "embeddings"));
  PARITY_ASSIGN_OR_RETURN(t.output, Buffer::allocate(DeviceKind::kGpu, output * element, "output"));
  PARITY_ASSIGN_OR_RETURN(t.grad_output,
                          Buffer::allocate(DeviceKind::kGpu, output * element, "grad_output"));
  PARITY_ASSIGN_OR_RETURN(t.grad_bottom,
                          Buffer::allocate(DeviceKind::kGpu, bottom * element, "grad_bottom"));
  PARITY_ASSIGN_OR_RETURN(t.grad_embeddings,
                          Buffer::allocate(DeviceKind::kGpu, embeddings * 4, "grad_embeddings"));
  // Values U[-1, 1), each tensor its own stream of the seed.
  PARITY_RETURN_IF_ERROR(
      hooks.fill_uniform(t.bottom.data(), p.dtype, bottom, seed + 1, 1.0f, nullptr));
  PARITY_RETURN_IF_ERROR(
      hooks.fill_uniform(t.embeddings.data(), p.dtype, embeddings, seed + 2, 1.0f, nullptr));
  PARITY_RETURN_IF_ERROR(
      hooks.fill_uniform(t.grad_output.data(), p.dtype, output, seed + 3, 1.0f, nullptr));
  PARITY_RETURN_IF_ERROR(hooks.synchronize(nullptr));
  return t;
}

json clocks_or_null(const InteractionBenchDevice& device) {
  if (!device.clocks) return nullptr;
  const Result<DeviceClocks> c = device.clocks(0);
  if (!c.is_ok()) return json{{"error", c.status().to_string()}};
  return json{{"sm_clock_mhz", c->sm_clock_mhz},
              {"memory_clock_mhz", c->memory_clock_mhz},
              {"source", c->source}};
}

// One variant: run once, check, time; appends its report line and returns its JSON row.
template <typename Variant, typename Args, typename Check>
Result<json> measure(const char* pass, const Variant& variant, const DotInteractionProblem& p,
                     const Args& args, double bytes, const InteractionBenchRequest& request,
                     const InteractionBenchDevice& device, const parity::detail::DeviceHooks& hooks,
                     Check check, std::string* text) {
  json row{{"pass", pass}, {"variant", std::string(variant.name())}, {"bytes", bytes}};
  char line[256];
  const ExecutionContext context{DeviceKind::kGpu, nullptr, false};
  const Status applies = variant.can_implement(p, context);
  if (!applies.is_ok()) {
    row["skipped"] = applies.message();
    std::snprintf(line, sizeof line, "%-8s %-48s skipped: %s\n", pass,
                  row["variant"].get<std::string>().c_str(), applies.message().c_str());
    *text += line;
    return row;
  }
  PARITY_RETURN_IF_ERROR(variant.run(p, args, nullptr, context));
  PARITY_RETURN_IF_ERROR(hooks.synchronize(nullptr));
  PARITY_ASSIGN_OR_RETURN(const double worst_ratio, check());
  if (!(worst_ratio <= 1.0)) {
    return internal_error("bench interaction: ", variant.name(), " differs from fp64 by ",
                          worst_ratio,
                          " times the derived bound on the first samples; nothing timed");
  }
  PARITY_ASSIGN_OR_RETURN(
      const SampleStats stats,
      device.time(
          [&](gpu::StreamHandle stream) {
            return variant.run(p, args, nullptr, ExecutionContext{DeviceKind::kGpu, stream, false});
          },
          request.timing, nullptr));
  const double gbps = bytes / (stats.median_ms * 1e-3) / 1e9;
  row["check_worst_error_over_bound"] = worst_ratio;
  row["stats"] = sample_stats_json(stats);
  row["effective_gbps"] = gbps;
  std::snprintf(line, sizeof line,
                "%-8s %-48s %8.3f ms (p10 %.3f, p90 %.3f) %7.0f GB/s  error/bound %.2f\n", pass,
                row["variant"].get<std::string>().c_str(), stats.median_ms, stats.p10_ms,
                stats.p90_ms, gbps, worst_ratio);
  *text += line;
  return row;
}

}  // namespace

Status validate_interaction_bench_request(const InteractionBenchRequest& request) {
  PARITY_RETURN_IF_ERROR(problem_of(request).validate().with_context("bench interaction"));
  const DotInteractionProblem p = problem_of(request);
  PARITY_CHECK_ARG(request.output_stride >= -1,
                   "bench interaction: --stride=", request.output_stride,
                   " must be -1 (padded to 8), 0 (packed) or >= the width");
  PARITY_CHECK_ARG(p.output_stride == 0 || p.output_stride >= p.output_dim(),
                   "bench interaction: --stride=", p.output_stride, " is below the output width ",
                   p.output_dim());
  PARITY_CHECK_ARG(request.checked_samples >= 1,
                   "bench interaction: --check-samples=", request.checked_samples, " must be >= 1");
  return validate_timing_options(request.timing);
}

Result<std::string> run_interaction_bench(const InteractionBenchRequest& request,
                                          const InteractionBenchDevice& device) {
  PARITY_RETURN_IF_ERROR(validate_interaction_bench_request(request));
  PARITY_ASSIGN_OR_RETURN(const parity::detail::DeviceHooks* hooks,
                          parity::detail::require_device_hooks("bench interaction"));
  if (!device.time || !device.properties)
    return unsupported("bench interaction: no device timing was handed in");
  const DotInteractionProblem p = problem_of(request);
  PARITY_ASSIGN_OR_RETURN(const Tensors t, make_tensors(p, *hooks, request.seed));
  PARITY_ASSIGN_OR_RETURN(
      const Expected expected,
      expected_results(p, t, std::min<std::int64_t>(request.checked_samples, p.batch_size)));
  PARITY_ASSIGN_OR_RETURN(const gpu::DeviceProperties properties, device.properties(0));
  const double element = static_cast<double>(dtype_size_bytes(p.dtype));
  const double batch = static_cast<double>(p.batch_size);
  const double activations = batch * static_cast<double>((p.num_embeddings + 1) * p.dim) * element;
  const double forward_bytes = activations + batch * static_cast<double>(row_stride(p)) * element;
  const double backward_bytes = activations +
                                batch * static_cast<double>(p.output_dim() + p.dim) * element +
                                batch * static_cast<double>(p.num_embeddings * p.dim) * 4.0;

  json document = results_document("interaction", provenance_json(request.seed));
  document["problem"] = json{{"batch", p.batch_size},
                             {"num_embeddings", p.num_embeddings},
                             {"dim", p.dim},
                             {"dtype", std::string(dtype_name(p.dtype))},
                             {"output_stride", row_stride(p)},
                             {"checked_samples", expected.samples}};
  document["timing"] = json{{"warmup_iterations", request.timing.warmup_iterations},
                            {"repetitions", request.timing.repetitions},
                            {"cache", cache_mode_name(request.timing.cache)},
                            {"statistic", "median"}};
  document["byte_model"] =
      "forward: B*V*D*e read + B*stride*e written; backward: B*V*D*e + B*(D+P)*e read, "
      "B*D*e + B*F*D*4 written (e = activation bytes, V = F + 1, P = V(V-1)/2)";
  document["clocks_before"] = clocks_or_null(device);
  std::string text =
      "dot interaction on " + properties.name + ": B=" + std::to_string(p.batch_size) +
      " F=" + std::to_string(p.num_embeddings) + " D=" + std::to_string(p.dim) + " " +
      std::string(dtype_name(p.dtype)) + " stride " + std::to_string(row_stride(p)) +
      " (median of " + std::to_string(request.timing.repetitions) + ", " +
      cache_mode_name(request.timing.cache) + ")\n";
  json rows = json::array();
  const nn::DotInteractionForwardArgs forward_args{t.bottom.data(), t.embeddings.data(),
                                                   t.output.data()};
  for (const auto* variant : nn::dot_interaction_forward_variants()) {
    PARITY_ASSIGN_OR_RETURN(
        json row, measure(
                      "forward", *variant, p, forward_args, forward_bytes, request, device, *hooks,
                      [&] { return check_forward(p, t, expected); }, &text));
    rows.push_back(std::move(row));
  }
  const nn::DotInteractionBackwardArgs backward_args{t.bottom.data(), t.embeddings.data(),
                                                     t.grad_output.data(), t.grad_bottom.data(),
                                                     t.grad_embeddings.as<float>()};
  for (const auto* variant : nn::dot_interaction_backward_variants()) {
    PARITY_ASSIGN_OR_RETURN(
        json row, measure(
                      "backward", *variant, p, backward_args, backward_bytes, request, device,
                      *hooks, [&] { return check_backward(p, t, expected); }, &text));
    rows.push_back(std::move(row));
  }
  document["variants"] = std::move(rows);
  document["clocks_after"] = clocks_or_null(device);
  if (!request.out.empty()) {
    PARITY_RETURN_IF_ERROR(write_json_file(request.out, document));
    text += "wrote " + request.out + "\n";
  }
  return text;
}

}  // namespace parity::bench
