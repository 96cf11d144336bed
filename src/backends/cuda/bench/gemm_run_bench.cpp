// The device side of the gemm::Gemm run benchmark (parity/bench/gemm_run_bench.hpp): operands
// filled from a random host pool, Gemm::run and the forced heuristic top-1 timed with
// time_on_device, the oracle as the fastest of every accepted candidate with the run epilogue
// (GemmOptions::measured_candidates_per_source above the candidate space), and host time per call of
// Gemm::run against a bare cublasLtMatmul of the same descriptor.
#include "parity/bench/gemm_run_bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <vector>

#include "backends/cuda/gemm/lt_common.hpp"
#include "backends/cuda/gemm/run_descriptors.hpp"
#include "gemm/gemm_run_backend.hpp"
#include "bench/results_json.hpp"
#include "core/text_format.hpp"
#include "parity/bench/gemm_timing.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "parity/gemm/cublaslt.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::bench {
namespace {

using gemm::GemmRunProblem;
using gemm::RunEpilogue;
namespace lt = gemm::lt;

// Fills `buffer` with bytes tiled from a random pool of values in `dtype` (device copies only).
Status fill_random(gpu::DeviceBuffer& buffer, DType dtype, std::uint64_t seed) {
  constexpr std::size_t kPoolBytes = 4u << 20;
  const std::size_t element = dtype_size_bytes(dtype);
  std::vector<std::uint8_t> pool(kPoolBytes);
  Rng rng(seed);
  for (std::size_t i = 0; i + element <= kPoolBytes; i += element) {
    const auto value = static_cast<float>(rng.normal(0.0, 1.0));
    if (dtype == DType::kF32) {
      std::memcpy(pool.data() + i, &value, 4);
    } else {
      const std::uint16_t bits =
          dtype == DType::kBF16 ? float_to_bf16_bits(value) : float_to_fp16_bits(value);
      std::memcpy(pool.data() + i, &bits, 2);
    }
  }
  for (std::size_t offset = 0; offset < buffer.size_bytes(); offset += kPoolBytes) {
    const std::size_t bytes = std::min(kPoolBytes, buffer.size_bytes() - offset);
    PARITY_RETURN_IF_ERROR(buffer.copy_from_host(pool.data(), bytes, offset));
  }
  return Status::ok();
}

struct DeviceOperands {
  gpu::DeviceBuffer a, b, d, bias, aux, bias_grad, workspace;
};

Result<DeviceOperands> allocate_operands(const GemmRunProblem& p, std::int64_t workspace_bytes) {
  const gemm::GemmProblem& s = p.shape;
  const std::size_t in = dtype_size_bytes(s.a_dtype), out = dtype_size_bytes(s.c_dtype);
  auto bytes = [](std::int64_t elements, std::size_t size) {
    return static_cast<std::size_t>(std::max<std::int64_t>(elements, 1)) * size;
  };
  DeviceOperands o;
  PARITY_ASSIGN_OR_RETURN(o.a,
                          gpu::DeviceBuffer::allocate(bytes(p.stride_a_or_packed() * s.batch, in)));
  PARITY_ASSIGN_OR_RETURN(o.b,
                          gpu::DeviceBuffer::allocate(bytes(p.stride_b_or_packed() * s.batch, in)));
  PARITY_ASSIGN_OR_RETURN(
      o.d, gpu::DeviceBuffer::allocate(bytes(p.stride_c_or_packed() * s.batch, out)));
  PARITY_ASSIGN_OR_RETURN(o.bias, gpu::DeviceBuffer::allocate(bytes(s.m, out)));
  PARITY_ASSIGN_OR_RETURN(o.aux, gpu::DeviceBuffer::allocate(bytes(p.aux_bytes(), 1)));
  PARITY_ASSIGN_OR_RETURN(o.bias_grad, gpu::DeviceBuffer::allocate(bytes(std::max(s.m, s.n), 4)));
  PARITY_ASSIGN_OR_RETURN(o.workspace, gpu::DeviceBuffer::allocate(bytes(workspace_bytes, 1)));
  PARITY_RETURN_IF_ERROR(fill_random(o.a, s.a_dtype, 1));
  PARITY_RETURN_IF_ERROR(fill_random(o.b, s.b_dtype, 2));
  PARITY_RETURN_IF_ERROR(fill_random(o.bias, s.c_dtype, 3));
  PARITY_RETURN_IF_ERROR(fill_random(o.aux, DType::kBF16, 4));  // random bits: a ReLU mask half set
  return o;
}

gemm::GemmArgs args_of(const DeviceOperands& o, std::int64_t workspace_bytes) {
  gemm::GemmArgs args;
  args.a = o.a.data();
  args.b = o.b.data();
  args.d = o.d.data();
  args.bias = o.bias.data();
  args.aux = o.aux.data();
  args.bias_grad = o.bias_grad.data();
  args.workspace = o.workspace.data();
  args.workspace_bytes = workspace_bytes;
  return args;
}

// The shape the provider can time: the epilogue the model prices (bias, relu or none).
gemm::GemmProblem oracle_problem_of(const GemmRunProblem& p) {
  gemm::GemmProblem shape = p.shape;
  shape.epilogue = gemm::epilogue_reads_bias(p.epilogue) ? gemm::Epilogue::kBias
                   : p.epilogue == RunEpilogue::kRelu    ? gemm::Epilogue::kRelu
                                                         : gemm::Epilogue::kNone;
  return shape;
}

Result<SampleStats> time_gemm(const gemm::Gemm& gemm, const DeviceOperands& o,
                              const TimingOptions& timing) {
  const gemm::GemmArgs args = args_of(o, gemm.workspace_bytes());
  return time_on_device(
      [&](gpu::StreamHandle stream) {
        ExecutionContext context{DeviceKind::kGpu, stream, false};
        return gemm.run(args, context);
      },
      timing);
}

struct HostTimes {
  double run_us = 0.0, bare_us = 0.0, overhead_us = 0.0;
};

// Host microseconds per call of `run` and of `bare`: `samples` pairs of batches of `calls`
// enqueues, the order alternating within a pair so drift (clocks, the launch queue) hits both
// alike; medians of each, and the median of the per-pair differences as the overhead.
Result<HostTimes> paired_host_us(const std::function<Status()>& run,
                                 const std::function<Status()>& bare, int calls, int samples) {
  auto batch_us = [calls](const std::function<Status()>& call) -> Result<double> {
    PARITY_RETURN_IF_ERROR(gpu::synchronize());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) PARITY_RETURN_IF_ERROR(call());
    const auto stop = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(stop - start).count() / calls;
  };
  std::vector<double> run_us, bare_us, overhead_us;
  for (int s = 0; s < samples; ++s) {
    double r = 0.0, b = 0.0;
    if (s % 2 == 0) {
      PARITY_ASSIGN_OR_RETURN(r, batch_us(run));
      PARITY_ASSIGN_OR_RETURN(b, batch_us(bare));
    } else {
      PARITY_ASSIGN_OR_RETURN(b, batch_us(bare));
      PARITY_ASSIGN_OR_RETURN(r, batch_us(run));
    }
    run_us.push_back(r);
    bare_us.push_back(b);
    overhead_us.push_back(r - b);
  }
  PARITY_RETURN_IF_ERROR(gpu::synchronize());
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  return HostTimes{median(run_us), median(bare_us), median(overhead_us)};
}

// A bare cublasLtMatmul of the run's own descriptor (epilogue, bias / bias-gradient / aux
// pointers set once), with cuBLASLt's heuristic top-1 for that descriptor: cuBLASLt's own launch of
// the same work, so the difference to Gemm::run is the wrapper's host time alone (epilogues such as
// bias gradients cost cuBLASLt itself more host time than a plain GEMM).
Result<HostTimes> host_times(const lt::Handle& handle, const GemmRunProblem& p,
                             const DeviceOperands& o, const std::function<Status()>& run,
                             const GemmRunBenchOptions& options) {
  namespace detail = gemm::detail;
  PARITY_ASSIGN_OR_RETURN(const lt::LtTypes types, detail::run_types(p));
  detail::LtDescriptors lt_run;
  PARITY_RETURN_IF_ERROR(detail::build_descriptors(p, types, &lt_run));
  if (p.bias_grad_length() > 0) {
    PARITY_RETURN_IF_ERROR(detail::set_desc(lt_run.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, o.bias_grad.data()));
  } else if (gemm::epilogue_reads_bias(p.epilogue)) {
    PARITY_RETURN_IF_ERROR(detail::set_desc(lt_run.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, o.bias.data()));
  }
  if (gemm::epilogue_aux_kind(p.epilogue) != gemm::AuxKind::kNone) {
    PARITY_RETURN_IF_ERROR(
        detail::set_desc(lt_run.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, o.aux.data()));
  }
  cublasLtMatmulPreference_t preference = nullptr;
  PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceCreate(&preference));
  struct Guard {
    cublasLtMatmulPreference_t p;
    ~Guard() { cublasLtMatmulPreferenceDestroy(p); }
  } guard{preference};
  const std::uint64_t max_workspace_bytes = o.workspace.size_bytes();
  PARITY_CUBLASLT_TRY(cublasLtMatmulPreferenceSetAttribute(
      preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_workspace_bytes,
      sizeof(max_workspace_bytes)));
  cublasLtMatmulHeuristicResult_t pick{};
  int returned = 0;
  PARITY_CUBLASLT_TRY(cublasLtMatmulAlgoGetHeuristic(handle.get(), lt_run.desc, lt_run.a, lt_run.b,
                                                     lt_run.c, lt_run.c, preference, 1, &pick,
                                                     &returned));
  if (returned == 0) return unsupported("no heuristic pick for the run descriptor of ", p.shape.describe());
  const float alpha = 1.0f, beta = 0.0f;
  return paired_host_us(
      run,
      [&]() -> Status {
        PARITY_CUBLASLT_TRY(cublasLtMatmul(handle.get(), lt_run.desc, &alpha, o.a.data(), lt_run.a,
                                           o.b.data(), lt_run.b, &beta, o.d.data(), lt_run.c,
                                           o.d.data(), lt_run.c, &pick.algo, o.workspace.data(),
                                           pick.workspaceSize, nullptr));
        return Status::ok();
      },
      options.host_calls, options.host_samples);
}

// GemmRunBenchOptions::oracle_flushed_finalists: the oracle pass's next fastest candidates after
// its winner (already timed like the chosen configuration), forced one at a time and timed the same
// way; a faster median replaces the oracle. A candidate whose text does not force (or that does not
// run) is skipped.
void retime_oracle_finalists(const GemmRunProblem& p, const ExecutionContext& context, gemm::GemmOptions forced,
                             const DeviceOperands& operands, const GemmRunBenchOptions& options,
                             GemmRunBenchResult* result) {
  auto sorted = result->oracle_candidates;
  std::sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
  const auto wanted = static_cast<std::size_t>(std::max(options.oracle_flushed_finalists, 0));
  const std::size_t end = std::min(sorted.size(), wanted + 1);
  for (std::size_t i = 1; i < end; ++i) {
    forced.forced_configuration = sorted[i].first.substr(0, sorted[i].first.find(" ["));
    auto finalist = gemm::Gemm::create(p, context, forced);
    if (!finalist.is_ok() || finalist->workspace_bytes() > static_cast<std::int64_t>(operands.workspace.size_bytes())) {
      continue;
    }
    auto stats = time_gemm(*finalist, operands, options.timing);
    if (!stats.is_ok()) continue;
    ++result->oracle_flushed_finalists;
    if (stats->median_ms < result->oracle_median_ms) {
      result->oracle_median_ms = stats->median_ms;
      result->oracle_configuration = sorted[i].first + " (flushed finalist " + std::to_string(i + 1) + ")";
    }
  }
}

Status bench_one(const lt::Handle& handle,
                 const GemmRunBenchOptions& options, GemmRunBenchResult* result) {
  const GemmRunProblem& p = result->item.problem;
  const ExecutionContext gpu_context{DeviceKind::kGpu, nullptr, false, options.gemm_choice};
  gemm::GemmOptions gemm_options;
  gemm_options.hardware = options.hardware;
  gemm_options.measured_candidates_per_source = options.measured_candidates_per_source;
  gemm_options.measured_distinct_tiles = options.measured_distinct_tiles;
  gemm_options.measured_flush_l2 = options.measured_flush_l2;
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(const gemm::Gemm chosen,
                          gemm::Gemm::create(p, gpu_context, gemm_options));
  result->create_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result->configuration = chosen.configuration();
  gemm_options.forced_configuration = "heuristic";
  PARITY_ASSIGN_OR_RETURN(const gemm::Gemm heuristic,
                          gemm::Gemm::create(p, gpu_context, gemm_options));
  result->heuristic_configuration = heuristic.configuration();
  const std::int64_t workspace =
      std::max<std::int64_t>({chosen.workspace_bytes(), heuristic.workspace_bytes(),
                              static_cast<std::int64_t>(lt::kMaxWorkspaceBytes)});
  PARITY_ASSIGN_OR_RETURN(const DeviceOperands operands, allocate_operands(p, workspace));
  PARITY_ASSIGN_OR_RETURN(result->run, time_gemm(chosen, operands, options.timing));
  PARITY_ASSIGN_OR_RETURN(result->heuristic, time_gemm(heuristic, operands, options.timing));
  const gemm::GemmArgs args = args_of(operands, chosen.workspace_bytes());
  PARITY_ASSIGN_OR_RETURN(
      const HostTimes host,
      host_times(handle, p, operands, [&] { return chosen.run(args, gpu_context); }, options));
  result->host_run_us = host.run_us;
  result->host_bare_us = host.bare_us;
  result->host_overhead_us = host.overhead_us;
  result->oracle_problem = oracle_problem_of(p).describe();
  if (options.measure_oracle) {
    // Every accepted candidate of both rankings timed with the real descriptor; the winner is
    // then timed by time_gemm like the chosen and heuristic configurations.
    gemm::GemmOptions oracle_options;
    oracle_options.hardware = options.hardware;
    oracle_options.measured_candidates_per_source = 1 << 20;
    oracle_options.measured_flush_l2 = true;
    const ExecutionContext oracle_context{DeviceKind::kGpu, nullptr, false, GemmChoice::kMeasured};
    // The backend itself (not a Gemm) so that every timed candidate can be reported.
    PARITY_ASSIGN_OR_RETURN(
        const auto oracle, gemm::detail::create_gpu_gemm_run_backend(p, oracle_context, oracle_options));
    const gemm::GemmArgs oracle_args = args_of(operands, oracle->workspace_bytes());
    PARITY_ASSIGN_OR_RETURN(const SampleStats oracle_stats,
                            time_on_device(
                                [&](gpu::StreamHandle stream) {
                                  return oracle->run(oracle_args, ExecutionContext{DeviceKind::kGpu, stream, false});
                                },
                                options.timing));
    result->oracle_median_ms = oracle_stats.median_ms;
    result->oracle_pass_winner_median_ms = oracle_stats.median_ms;
    result->oracle_configuration = oracle->configuration();
    for (const auto& timed : oracle->timed_candidates()) {
      result->oracle_candidates.push_back({timed.configuration, timed.time_us});
    }
    retime_oracle_finalists(p, gpu_context, gemm_options, operands, options, result);
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<GemmRunBenchResult>> run_gemm_run_bench(
    const std::vector<GemmRunBenchProblem>& problems, const GemmRunBenchOptions& options,
    const std::function<void(const GemmRunBenchResult&)>& on_result) {
  PARITY_RETURN_IF_ERROR(validate_timing_options(options.timing));
  PARITY_CHECK_ARG(options.host_calls >= 1 && options.host_samples >= 1,
                   "bench gemm-run: host_calls=", options.host_calls,
                   " and host_samples=", options.host_samples, " must be >= 1");
  PARITY_ASSIGN_OR_RETURN(const lt::Handle handle, lt::Handle::create());
  std::vector<GemmRunBenchResult> results;
  for (const auto& item : problems) {
    GemmRunBenchResult result;
    result.item = item;
    const Status status = bench_one(handle, options, &result);
    if (!status.is_ok()) result.error = status.to_string();
    if (on_result) on_result(result);
    results.push_back(std::move(result));
  }
  return results;
}

namespace {

// The oracle's pool, fastest first: [configuration with its ranks, microseconds].
nlohmann::json oracle_candidates_json(const GemmRunBenchResult& r) {
  auto sorted = r.oracle_candidates;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& x, const auto& y) { return x.second < y.second; });
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [configuration, time_us] : sorted) rows.push_back({configuration, time_us});
  return rows;
}

nlohmann::json result_json(const GemmRunBenchResult& r) {
  const GemmRunProblem& p = r.item.problem;
  nlohmann::json row = {{"model", r.item.model},
                        {"layer", r.item.layer},
                        {"pass", r.item.pass},
                        {"problem", p.shape.describe()},
                        {"run_epilogue", gemm::run_epilogue_name(p.epilogue)},
                        {"flop_count", p.shape.flop_count()}};
  if (!r.error.empty()) {
    row["error"] = r.error;
    return row;
  }
  row.update({{"configuration", r.configuration},
              {"create_ms", r.create_ms},
              {"run", sample_stats_json(r.run)},
              {"heuristic_configuration", r.heuristic_configuration},
              {"heuristic", sample_stats_json(r.heuristic)},
              {"oracle_problem", r.oracle_problem},
              {"oracle_configuration", r.oracle_configuration},
              {"oracle_median_ms", r.oracle_median_ms},
              {"oracle_pass_winner_median_ms", r.oracle_pass_winner_median_ms},
              {"oracle_flushed_finalists", r.oracle_flushed_finalists},
              {"oracle_candidates", oracle_candidates_json(r)},
              {"oracle_over_chosen",
               r.oracle_median_ms > 0.0 ? r.oracle_median_ms / r.run.median_ms : 0.0},
              {"host_run_us", r.host_run_us},
              {"host_bare_us", r.host_bare_us},
              {"host_overhead_us", r.host_overhead_us}});
  return row;
}

std::string result_line(const GemmRunBenchResult& r) {
  if (!r.error.empty()) {
    return format_text("%-12s %-24s %-11s error: %s\n", r.item.model.c_str(), r.item.layer.c_str(),
                       r.item.pass.c_str(), r.error.c_str());
  }
  return format_text("%-12s %-24s %-11s %9.4f %9.4f %9.4f %6.3f %7.2f  %s\n", r.item.model.c_str(),
                     r.item.layer.c_str(), r.item.pass.c_str(), r.run.median_ms,
                     r.heuristic.median_ms, r.oracle_median_ms,
                     r.oracle_median_ms > 0.0 ? r.oracle_median_ms / r.run.median_ms : 0.0,
                     r.host_overhead_us, r.configuration.c_str());
}

}  // namespace

Result<std::string> run_gemm_run_bench_report(
    const GemmRunBenchRequest& request, const std::function<void(const std::string&)>& print) {
  PARITY_ASSIGN_OR_RETURN(const auto problems, gemm_run_bench_problems(request));
  const GemmRunBenchOptions& options = request.options;
  // The catalogue entry the selector models (empty option: the device's own, as Gemm resolves it).
  std::string hardware_label = options.hardware;
  if (hardware_label.empty()) {
    PARITY_ASSIGN_OR_RETURN(const gpu::DeviceProperties props, gpu::device_properties(0));
    PARITY_ASSIGN_OR_RETURN(const hw::HardwareSpec spec, hw::find_hardware_for_device(props.name));
    hardware_label = spec.name;
  }
  nlohmann::json document = results_document("gemm_run", provenance_json(0));
  document["method"] = {
      {"batch_size", request.batch_size},
      {"dtype", gemm::gemm_dtype_name(request.dtype)},
      {"cache", cache_mode_name(options.timing.cache)},
      {"warmup_iterations", options.timing.warmup_iterations},
      {"repetitions", options.timing.repetitions},
      {"gemm_choice", std::string(gemm_choice_name(options.gemm_choice))},
      {"measured_candidates_per_source", options.measured_candidates_per_source},
      {"measured_model_list", options.measured_distinct_tiles ? "tiles" : "configs"},
      {"measured_timing", options.measured_flush_l2 ? "flushed" : "back-to-back"},
      {"oracle", options.measure_oracle
                     ? "every candidate the run descriptor (epilogue included) accepts, timed once "
                       "by flushed medians of 9 runs; the fastest of that pass and its "
                       "oracle_flushed_finalists next fastest timed like the others, the lowest median wins"
                     : "off"},
      {"oracle_flushed_finalists", options.oracle_flushed_finalists},
      {"host_calls", options.host_calls},
      {"host_samples", options.host_samples},
      {"hardware", hardware_label},
      {"cublaslt_version", gemm::CublasLtProvider::library_version()}};
  PARITY_ASSIGN_OR_RETURN(const auto clocks_before, read_device_clocks());
  print(format_text("%-12s %-24s %-11s %9s %9s %9s %6s %7s  %s\n", "model", "layer", "pass",
                    "run_ms", "heur_ms", "oracle_ms", "ratio", "host_us", "configuration"));
  nlohmann::json rows = nlohmann::json::array();
  PARITY_RETURN_IF_ERROR(
      run_gemm_run_bench(problems, options, [&](const GemmRunBenchResult& result) {
        print(result_line(result));
        rows.push_back(result_json(result));
      }).status());
  PARITY_ASSIGN_OR_RETURN(const auto clocks_after, read_device_clocks());
  std::string text = format_text("clocks: SM %d -> %d MHz (%s)\n", clocks_before.sm_clock_mhz,
                                 clocks_after.sm_clock_mhz, clocks_after.source.c_str());
  document["results"] = std::move(rows);
  PARITY_RETURN_IF_ERROR(
      finish_results_document(document, clocks_before, clocks_after, request.out, &text));
  return text;
}

}  // namespace parity::bench
