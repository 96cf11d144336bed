// `parity bench attention` (include/parity/bench/attention_bench.hpp): the inputs on the device,
// the sampled fp64 check, the timings, the report and the results file. The configurations and
// the drawn inputs are in attention_bench_cases.cpp.
#include "parity/bench/attention_bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "bench/results_json.hpp"
#include "core/device_hooks.hpp"
#include "parity/attention/attention_op.hpp"
#include "parity/train/buffer.hpp"
#include "reference/attention_ref.hpp"

namespace parity::bench {
namespace {

using attention::AttentionKind;
using attention::AttentionProblem;
using nlohmann::json;

json stats_json_or_null(const Result<SampleStats>& stats) {
  return stats.is_ok() ? sample_stats_json(stats.value()) : json(nullptr);
}

double tflops(double flops, const Result<SampleStats>& stats) {
  return stats.is_ok() && stats->median_ms > 0 ? flops / stats->median_ms / 1e9 : 0.0;
}


using train::Buffer;

struct DeviceTensors {
  Buffer q, k, v, out, lse, grad_out, grad_q, grad_k, grad_v, q_offsets, kv_offsets, num_targets;
  std::int64_t allocated_bytes = 0;
};

Result<Buffer> device_buffer(std::int64_t bytes, const char* what, std::int64_t* total) {
  *total += bytes;
  return Buffer::allocate(DeviceKind::kGpu, std::max<std::int64_t>(bytes, 1), what);
}

Result<DeviceTensors> upload_inputs(const AttentionBenchInputs& in, const parity::detail::DeviceHooks& hooks,
                                    std::uint64_t seed) {
  const AttentionProblem& p = in.problem;
  const std::int64_t element = static_cast<std::int64_t>(dtype_size_bytes(p.dtype));
  const std::int64_t q_elements = p.total_q * p.heads * p.dim_qk;
  const std::int64_t k_elements = p.total_kv * p.heads * p.dim_qk;
  const std::int64_t v_elements = p.total_kv * p.heads * p.dim_v;
  const std::int64_t out_elements = p.total_q * p.heads * p.dim_v;
  DeviceTensors t;
  std::int64_t* total = &t.allocated_bytes;
  PARITY_ASSIGN_OR_RETURN(t.q, device_buffer(q_elements * element, "q", total));
  PARITY_ASSIGN_OR_RETURN(t.k, device_buffer(k_elements * element, "k", total));
  PARITY_ASSIGN_OR_RETURN(t.v, device_buffer(v_elements * element, "v", total));
  PARITY_ASSIGN_OR_RETURN(t.out, device_buffer(out_elements * element, "out", total));
  PARITY_ASSIGN_OR_RETURN(t.lse, device_buffer(p.total_q * p.heads * 4, "softmax_lse", total));
  PARITY_ASSIGN_OR_RETURN(t.grad_out, device_buffer(out_elements * element, "grad_out", total));
  PARITY_ASSIGN_OR_RETURN(t.grad_q, device_buffer(q_elements * element, "grad_q", total));
  PARITY_ASSIGN_OR_RETURN(t.grad_k, device_buffer(k_elements * element, "grad_k", total));
  PARITY_ASSIGN_OR_RETURN(t.grad_v, device_buffer(v_elements * element, "grad_v", total));
  const auto offsets_bytes = static_cast<std::int64_t>(in.q_offsets.size() * sizeof(std::int64_t));
  PARITY_ASSIGN_OR_RETURN(t.q_offsets, device_buffer(offsets_bytes, "q_offsets", total));
  PARITY_RETURN_IF_ERROR(t.q_offsets.copy_from_host(in.q_offsets.data(), offsets_bytes));
  if (p.cross) {
    PARITY_ASSIGN_OR_RETURN(t.kv_offsets, device_buffer(offsets_bytes, "kv_offsets", total));
    PARITY_RETURN_IF_ERROR(t.kv_offsets.copy_from_host(in.kv_offsets.data(), offsets_bytes));
  }
  if (!in.num_targets.empty()) {
    const auto bytes = static_cast<std::int64_t>(in.num_targets.size() * sizeof(std::int32_t));
    PARITY_ASSIGN_OR_RETURN(t.num_targets, device_buffer(bytes, "num_targets", total));
    PARITY_RETURN_IF_ERROR(t.num_targets.copy_from_host(in.num_targets.data(), bytes));
  }
  // Values U[-1, 1), as the tests draw them; each tensor its own stream of the seed.
  PARITY_RETURN_IF_ERROR(hooks.fill_uniform(t.q.data(), p.dtype, q_elements, seed + 1, 1.0f, nullptr));
  PARITY_RETURN_IF_ERROR(hooks.fill_uniform(t.k.data(), p.dtype, k_elements, seed + 2, 1.0f, nullptr));
  PARITY_RETURN_IF_ERROR(hooks.fill_uniform(t.v.data(), p.dtype, v_elements, seed + 3, 1.0f, nullptr));
  PARITY_RETURN_IF_ERROR(hooks.fill_uniform(t.grad_out.data(), p.dtype, out_elements, seed + 4, 1.0f, nullptr));
  PARITY_RETURN_IF_ERROR(hooks.synchronize(nullptr));
  return t;
}

attention::AttentionForwardArgs forward_args(const AttentionProblem& p, const DeviceTensors& t) {
  attention::AttentionForwardArgs a;
  a.q = t.q.data();
  a.k = t.k.data();
  a.v = t.v.data();
  a.q_offsets = t.q_offsets.as<std::int64_t>();
  a.kv_offsets = p.cross ? t.kv_offsets.as<std::int64_t>() : nullptr;
  a.num_targets = p.has_num_targets ? t.num_targets.as<std::int32_t>() : nullptr;
  a.out = t.out.data();
  a.softmax_lse = p.kind == AttentionKind::kSoftmax ? t.lse.as<float>() : nullptr;
  return a;
}

double element_to_double(DType dtype, std::uint16_t bits) {
  return dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

// `rows` rows of `buffer` starting at row `first`, each `row_elements` 16-bit elements, as fp64.
Result<std::vector<double>> download_rows(const Buffer& buffer, DType dtype, std::int64_t first, std::int64_t rows,
                                          std::int64_t row_elements) {
  std::vector<std::uint16_t> bits(static_cast<std::size_t>(rows * row_elements));
  const std::int64_t bytes = rows * row_elements * 2;
  if (bytes > 0) PARITY_RETURN_IF_ERROR(buffer.copy_to_host(bits.data(), bytes, first * row_elements * 2));
  std::vector<double> values(bits.size());
  for (std::size_t i = 0; i < bits.size(); ++i) values[i] = element_to_double(dtype, bits[i]);
  return values;
}

struct CheckResult {
  std::int64_t rows = 0;
  double max_abs_error = 0;
  double nmse = 0;  // sum (got - ref)^2 / sum ref^2
};

// The forward's rows at a few positions of the first and the last sequence against fp64. Each
// sequence is copied alone (its mask depends only on its own length and targets).
Result<CheckResult> check_forward(const AttentionBenchInputs& in, const DeviceTensors& t, int rows_per_sequence) {
  const AttentionProblem& p = in.problem;
  CheckResult result;
  double error_sq = 0;
  double ref_sq = 0;
  for (std::int64_t b : {std::int64_t{0}, p.batch - 1}) {
    const auto ub = static_cast<std::size_t>(b);
    const std::int64_t q_length = in.q_lengths[ub];
    const std::int64_t kv_begin = p.cross ? in.kv_offsets[ub] : in.q_offsets[ub];
    const std::int64_t kv_length = p.cross ? in.kv_lengths[ub] : q_length;
    if (q_length == 0) continue;
    AttentionProblem one = p;
    one.batch = 1;
    one.total_q = q_length;
    one.total_kv = kv_length;
    ref::AttentionRefInputs ref_in;
    PARITY_ASSIGN_OR_RETURN(ref_in.q, download_rows(t.q, p.dtype, in.q_offsets[ub], q_length, p.heads * p.dim_qk));
    PARITY_ASSIGN_OR_RETURN(ref_in.k, download_rows(t.k, p.dtype, kv_begin, kv_length, p.heads * p.dim_qk));
    PARITY_ASSIGN_OR_RETURN(ref_in.v, download_rows(t.v, p.dtype, kv_begin, kv_length, p.heads * p.dim_v));
    ref_in.q_offsets = {0, q_length};
    if (p.cross) ref_in.kv_offsets = {0, kv_length};
    if (p.has_num_targets) ref_in.num_targets = {in.num_targets[ub]};
    for (int r = 0; r < rows_per_sequence; ++r) {
      // Evenly spaced rows, the last one included (targets sit at the end).
      const std::int64_t i = rows_per_sequence == 1 ? q_length - 1 : r * (q_length - 1) / (rows_per_sequence - 1);
      std::vector<double> want, lse;
      PARITY_RETURN_IF_ERROR(ref::attention_forward_ref_row(one, ref_in, 0, i, &want, &lse));
      PARITY_ASSIGN_OR_RETURN(std::vector<double> got, download_rows(t.out, p.dtype, in.q_offsets[ub] + i, 1, p.heads * p.dim_v));
      for (std::size_t x = 0; x < want.size(); ++x) {
        const double error = got[x] - want[x];
        result.max_abs_error = std::max(result.max_abs_error, std::abs(error));
        error_sq += error * error;
        ref_sq += want[x] * want[x];
      }
      ++result.rows;
    }
  }
  result.nmse = ref_sq > 0 ? error_sq / ref_sq : error_sq;
  return result;
}

json device_json(const gpu::DeviceProperties& d) {
  return json{{"name", d.name},
              {"compute_capability", std::to_string(d.compute_capability_major) + "." +
                                         std::to_string(d.compute_capability_minor)},
              {"sm_count", d.sm_count},
              {"l2_bytes", d.l2_bytes},
              {"total_memory_bytes", d.total_memory_bytes},
              {"max_sm_clock_mhz", d.max_sm_clock_mhz},
              {"driver_version", d.driver_version},
              {"runtime_version", d.runtime_version}};
}

json clocks_or_null(const AttentionBenchDevice& device) {
  if (!device.clocks) return nullptr;
  const Result<DeviceClocks> c = device.clocks(0);
  if (!c.is_ok()) return json{{"error", c.status().to_string()}};
  return json{{"sm_clock_mhz", c->sm_clock_mhz},         {"memory_clock_mhz", c->memory_clock_mhz},
              {"max_sm_clock_mhz", c->max_sm_clock_mhz}, {"temperature_c", c->temperature_c},
              {"power_w", c->power_w},                   {"source", c->source}};
}

json problem_json(const AttentionBenchCase& c, const AttentionBenchInputs& in) {
  const AttentionProblem& p = in.problem;
  return json{{"config", c.config},
              {"label", c.label},
              {"kind", std::string(attention::attention_kind_name(p.kind))},
              {"activation", p.kind == AttentionKind::kSoftmax ? "" : std::string(attention::activation_name(p.activation))},
              {"batch", p.batch},
              {"heads", p.heads},
              {"dim_qk", p.dim_qk},
              {"dim_v", p.dim_v},
              {"max_seq_len", p.max_seq_len},
              {"min_length_fraction", c.min_length_fraction},
              {"causal", p.causal},
              {"cross", p.cross},
              {"kv_length", c.kv_length},
              {"max_targets", c.max_targets},
              {"contextual_len", p.contextual_len},
              {"max_attn_len", p.max_attn_len},
              {"min_full_attn_len", p.min_full_attn_len},
              {"alpha", p.effective_alpha()},
              {"dtype", std::string(dtype_name(p.dtype))},
              {"tokens", p.total_q},
              {"kv_tokens", p.total_kv},
              {"q_lengths", in.q_lengths},  // the baselines rerun these exact lengths
              {"num_targets", in.num_targets}};
}

// One backward timing (default or deterministic): stats, or the reason it did not run.
struct BackwardTiming {
  Result<SampleStats> stats = internal_error("not run");
  std::int64_t workspace_bytes = 0;
  std::int64_t in_use_bytes = 0;  // device memory in use after the timing, workspace still held
};

// `variant`: null = the op's choice (attention_backward), else that variant.
BackwardTiming time_backward(const AttentionProblem& problem, const attention::AttentionBackwardArgs& args,
                             const TimingOptions& timing, const AttentionBenchDevice& device,
                             const parity::detail::DeviceHooks& hooks,
                             const attention::AttentionBackwardVariant* variant = nullptr) {
  BackwardTiming result;
  ExecutionContext context{DeviceKind::kGpu, nullptr, problem.deterministic};
  if (variant != nullptr) {
    const Status runnable = variant->can_implement(problem, context);
    if (!runnable.is_ok()) {
      result.stats = runnable;
      return result;
    }
  }
  const auto workspace_bytes = variant != nullptr ? Result<std::int64_t>(variant->workspace_bytes(problem))
                                                  : attention::attention_backward_workspace_bytes(problem, context);
  if (!workspace_bytes.is_ok()) {
    result.stats = workspace_bytes.status();
    return result;
  }
  result.workspace_bytes = *workspace_bytes;
  auto workspace = Buffer::allocate(DeviceKind::kGpu, std::max<std::int64_t>(*workspace_bytes, 1), "backward workspace");
  if (!workspace.is_ok()) {
    result.stats = workspace.status();
    return result;
  }
  void* workspace_pointer = workspace->data();
  result.stats = device.time(
      [&](gpu::StreamHandle stream) {
        const ExecutionContext timed{DeviceKind::kGpu, stream, problem.deterministic};
        return variant != nullptr ? variant->run(problem, args, workspace_pointer, timed)
                                  : attention::attention_backward(problem, args, workspace_pointer, timed);
      },
      timing, nullptr);
  const Result<std::int64_t> in_use = hooks.memory_in_use();
  result.in_use_bytes = in_use.is_ok() ? *in_use : 0;
  return result;
}

json timing_json(const Result<SampleStats>& stats, double flops, std::int64_t tokens) {
  json j{{"stats", stats_json_or_null(stats)}, {"useful_flops", flops}, {"useful_tflops", tflops(flops, stats)}};
  if (stats.is_ok() && stats->median_ms > 0) j["tokens_per_s"] = static_cast<double>(tokens) / stats->median_ms * 1e3;
  if (!stats.is_ok()) j["skipped"] = stats.status().to_string();
  return j;
}

std::string format_ms(const Result<SampleStats>& stats, double flops) {
  if (!stats.is_ok()) return "      -              -";
  char line[64];
  std::snprintf(line, sizeof line, "%9.3f ms %7.1f TF", stats->median_ms, tflops(flops, stats));
  return line;
}

const attention::AttentionBackwardVariant* find_backward_variant(const std::string& name) {
  for (const auto* variant : attention::attention_backward_variants()) {
    if (variant->name() == name) return variant;
  }
  return nullptr;
}

const attention::AttentionForwardVariant* find_forward_variant(const std::string& name) {
  for (const auto* variant : attention::attention_forward_variants()) {
    if (variant->name() == name) return variant;
  }
  return nullptr;
}

// Each requested forward variant on the case's tensors: checked like the default (a wrong one is
// reported, not timed) and timed. The last one's out/lse stay for the backward (any correct
// forward's are).
json time_forward_variants(const AttentionBenchRequest& request,
                           const AttentionBenchInputs& in, const DeviceTensors& t,
                           const attention::AttentionForwardArgs& args, double flops,
                           const AttentionBenchDevice& device, const parity::detail::DeviceHooks& hooks,
                           std::string* text) {
  const AttentionProblem& p = in.problem;
  json rows = json::object();
  for (const auto& name : request.forward_variants) {
    const auto* variant = find_forward_variant(name);
    json row;
    const ExecutionContext context{DeviceKind::kGpu, nullptr, false};
    Status status = variant->can_implement(p, context);
    if (status.is_ok()) status = variant->run(p, args, nullptr, context);
    if (status.is_ok()) status = hooks.synchronize(nullptr);
    Result<CheckResult> check = internal_error("not run");
    if (status.is_ok()) check = check_forward(in, t, std::max(request.checked_rows / 2, 1));
    if (status.is_ok()) status = check.status();
    const double rms_limit = 8.0 * unit_roundoff(p.dtype);
    if (status.is_ok() && !(std::sqrt(check->nmse) <= rms_limit)) {
      status = internal_error(name, ": forward check failed: relative RMS error ", std::sqrt(check->nmse), " > ",
                              rms_limit, "; not timed");
    }
    if (!status.is_ok()) {
      rows[name] = json{{"skipped", status.to_string()}};
      *text += "  " + name + ": " + status.to_string() + "\n";
      continue;
    }
    const Result<SampleStats> stats = device.time(
        [&](gpu::StreamHandle stream) {
          return variant->run(p, args, nullptr, ExecutionContext{DeviceKind::kGpu, stream, false});
        },
        request.timing, nullptr);
    row = timing_json(stats, flops, p.total_q);
    row["check"] = json{{"rows", check->rows}, {"max_abs_error", check->max_abs_error}, {"nmse", check->nmse}};
    rows[name] = row;
    char line[256];
    std::snprintf(line, sizeof line, "  %-32s fwd %s  rms err %.1e\n", name.c_str(), format_ms(stats, flops).c_str(),
                  std::sqrt(check->nmse));
    *text += line;
  }
  return rows;
}

Result<json> run_case(const AttentionBenchCase& c, const AttentionBenchRequest& request,
                      const AttentionBenchDevice& device, const parity::detail::DeviceHooks& hooks, std::string* text) {
  PARITY_ASSIGN_OR_RETURN(const AttentionBenchInputs in, attention_bench_inputs(c, request.seed));
  const AttentionProblem& p = in.problem;
  const attention::AttentionFlops flops = attention::useful_flops(p, in.q_lengths, in.kv_lengths);
  PARITY_ASSIGN_OR_RETURN(const std::int64_t in_use_before, hooks.memory_in_use());
  PARITY_ASSIGN_OR_RETURN(const DeviceTensors t, upload_inputs(in, hooks, request.seed));
  const attention::AttentionForwardArgs args = forward_args(p, t);
  const ExecutionContext context{DeviceKind::kGpu, nullptr, false};
  PARITY_RETURN_IF_ERROR(attention::attention_forward(p, args, context).with_context(c.label));
  PARITY_RETURN_IF_ERROR(hooks.synchronize(nullptr));
  PARITY_ASSIGN_OR_RETURN(const CheckResult check, check_forward(in, t, std::max(request.checked_rows / 2, 1)));
  // A sanity check on whole rows (relative RMS error <= 8 u: bf16 3.1%, fp16 0.4%): it catches
  // wrong masks, scales and layouts; element-wise agreement is the GPU tests' job.
  const double rms_limit = 8.0 * unit_roundoff(p.dtype);
  if (!(std::sqrt(check.nmse) <= rms_limit)) {
    return internal_error(c.label, ": forward check failed: relative RMS error ", std::sqrt(check.nmse), " > ", rms_limit,
                          " over ", check.rows, " rows (max abs error ", check.max_abs_error, "); nothing timed");
  }
  const Result<SampleStats> forward = device.time(
      [&](gpu::StreamHandle stream) {
        return attention::attention_forward(p, args, ExecutionContext{DeviceKind::kGpu, stream, false});
      },
      request.timing, nullptr);
  PARITY_RETURN_IF_ERROR(forward.status().with_context(c.label));
  json row = problem_json(c, in);
  auto chosen = select_variant(attention::attention_forward_variants(), p, context);
  row["forward_variant"] = chosen.is_ok() ? std::string(chosen->variant->name()) : chosen.status().to_string();
  row["check"] = json{{"rows", check.rows}, {"max_abs_error", check.max_abs_error}, {"nmse", check.nmse}};
  row["forward"] = timing_json(forward, flops.forward, p.total_q);
  // The pairs the mask keeps (below the GR count under targets and windows): what a kernel that
  // skips every masked pair does, so the share of useful work it reaches is visible.
  const attention::AttentionFlops masked = attention::masked_flops(p, in.q_lengths, in.kv_lengths, in.num_targets);
  row["masked_flops"] = json{{"forward", masked.forward}, {"backward", masked.backward}};
  row["forward"]["masked_tflops"] = tflops(masked.forward, forward);
  std::string variant_lines;
  if (!request.forward_variants.empty()) {
    row["forward_by_variant"] =
        time_forward_variants(request, in, t, args, flops.forward, device, hooks, &variant_lines);
  }
  BackwardTiming backward, deterministic;
  if (c.time_backward) {
    attention::AttentionBackwardArgs backward_args;
    backward_args.forward = args;
    backward_args.grad_out = t.grad_out.data();
    backward_args.grad_q = t.grad_q.data();
    backward_args.grad_k = t.grad_k.data();
    backward_args.grad_v = t.grad_v.data();
    backward = time_backward(p, backward_args, request.timing, device, hooks);
    AttentionProblem deterministic_problem = p;
    deterministic_problem.deterministic = true;
    deterministic = time_backward(deterministic_problem, backward_args, request.timing, device, hooks);
    row["backward"] = timing_json(backward.stats, flops.backward, p.total_q);
    row["backward"]["workspace_bytes"] = backward.workspace_bytes;
    row["backward"]["masked_tflops"] = tflops(masked.backward, backward.stats);
    row["backward_deterministic"] = timing_json(deterministic.stats, flops.backward, p.total_q);
    if (backward.stats.is_ok() && deterministic.stats.is_ok()) {
      row["deterministic_over_default"] = deterministic.stats->median_ms / backward.stats->median_ms;
    }
    auto chosen_backward = select_variant(attention::attention_backward_variants(), p, context);
    row["backward_variant"] =
        chosen_backward.is_ok() ? std::string(chosen_backward->variant->name()) : chosen_backward.status().to_string();
    // Backward variants by name beside the op's choice (timed only: the GPU tests check them).
    for (const auto& name : request.backward_variants) {
      const BackwardTiming timing =
          time_backward(p, backward_args, request.timing, device, hooks, find_backward_variant(name));
      row["backward_by_variant"][name] = timing_json(timing.stats, flops.backward, p.total_q);
      variant_lines += "  " + name + " bwd " + format_ms(timing.stats, flops.backward) +
                       (timing.stats.is_ok() ? "" : "  " + timing.stats.status().to_string()) + "\n";
    }
  }
  PARITY_ASSIGN_OR_RETURN(const std::int64_t in_use_after, hooks.memory_in_use());
  // Peak: the highest of the samples taken while our buffers (and a backward's workspace) were held.
  const std::int64_t peak_in_use = std::max({in_use_after, backward.in_use_bytes, deterministic.in_use_bytes});
  row["device_memory"] = json{
      {"allocated_bytes", t.allocated_bytes + std::max(backward.workspace_bytes, deterministic.workspace_bytes)},
      {"peak_in_use_increase_bytes", peak_in_use - in_use_before}};
  char line[256];
  std::snprintf(line, sizeof line, "%-34s %9lld tok  fwd %s  bwd %s  det %s  rms err %.1e\n", c.label.c_str(),
                static_cast<long long>(p.total_q), format_ms(forward, flops.forward).c_str(),
                format_ms(backward.stats, flops.backward).c_str(), format_ms(deterministic.stats, flops.backward).c_str(),
                std::sqrt(check.nmse));
  *text += line;
  *text += variant_lines;
  return row;
}

}  // namespace

Status check_attention_backward_variants(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (find_backward_variant(name) != nullptr) continue;
    std::string known;
    for (const auto* variant : attention::attention_backward_variants()) {
      known += (known.empty() ? "" : ", ") + std::string(variant->name());
    }
    return invalid_argument("backward variant: '", name, "' is not one of ", known);
  }
  return Status::ok();
}

Status check_attention_forward_variants(const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (find_forward_variant(name) != nullptr) continue;
    std::string known;
    for (const auto* variant : attention::attention_forward_variants()) {
      known += (known.empty() ? "" : ", ") + std::string(variant->name());
    }
    return invalid_argument("forward variant: '", name, "' is not one of ", known);
  }
  return Status::ok();
}

Status validate_attention_bench_request(const AttentionBenchRequest& request) {
  PARITY_CHECK_ARG(request.checked_rows >= 1, "bench attention: --check-rows=", request.checked_rows, " must be >= 1");
  PARITY_RETURN_IF_ERROR(validate_timing_options(request.timing));
  PARITY_RETURN_IF_ERROR(check_attention_forward_variants(request.forward_variants));
  return check_attention_backward_variants(request.backward_variants);
}

Result<std::string> run_attention_bench(const AttentionBenchRequest& request, const AttentionBenchDevice& device) {
  PARITY_ASSIGN_OR_RETURN(const parity::detail::DeviceHooks* hooks, parity::detail::require_device_hooks("bench attention"));
  if (!device.time || !device.properties) return unsupported("bench attention: no device timing was handed in");
  PARITY_RETURN_IF_ERROR(validate_attention_bench_request(request));
  json document = results_document("attention", provenance_json(request.seed));
  PARITY_ASSIGN_OR_RETURN(const gpu::DeviceProperties properties, device.properties(0));
  document["provenance"]["device"] = device_json(properties);
  document["timing"] = json{{"warmup_iterations", request.timing.warmup_iterations},
                            {"repetitions", request.timing.repetitions},
                            {"warmup_ms", request.timing.warmup_ms},
                            {"rep_ms", request.timing.rep_ms},
                            {"cache", cache_mode_name(request.timing.cache)},
                            {"statistic", "median"}};
  document["flop_model"] = "GR useful FLOPs: per sequence pairs = n^2/2 (causal) or n_q*n_kv; "
                           "f1 = 2*H*d_qk*pairs, f2 = 2*H*d_v*pairs; forward f1+f2, backward 3f1+2f2";
  document["clocks_before"] = clocks_or_null(device);
  std::string text = "attention on " + properties.name + " (median of " + std::to_string(request.timing.repetitions) +
                     ", useful TFLOP/s by the GR convention)\n";
  json cases = json::array();
  for (const auto& c : request.cases) {
    PARITY_ASSIGN_OR_RETURN(json row, run_case(c, request, device, *hooks, &text));
    cases.push_back(std::move(row));
  }
  document["cases"] = std::move(cases);
  document["clocks_after"] = clocks_or_null(device);
  if (!request.out.empty()) {
    PARITY_RETURN_IF_ERROR(write_json_file(request.out, document));
    text += "wrote " + request.out + "\n";
  }
  return text;
}

}  // namespace parity::bench
