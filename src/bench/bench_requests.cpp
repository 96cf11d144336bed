// The device benchmarks' settings (flag values as a command line or a binding gives them) turned
// into checked requests: CPU code, so bad input is an input error (exit 2) before any device is
// touched, in every build. Each check runs in the order the flags' errors were always reported.
#include "parity/bench/attention_bench.hpp"
#include "parity/bench/gemm_run_bench.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/hw_probe.hpp"
#include "parity/bench/interaction_bench.hpp"
#include "parity/bench/tbe_bench.hpp"
#include "parity/core/op.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::bench {

Result<HbmBenchRequest> hbm_bench_request_from_settings(const HbmBenchSettings& settings) {
  HbmBenchRequest request;
  PARITY_ASSIGN_OR_RETURN(request.total_bytes, parse_hbm_total_bytes("bench hbm", settings.total_bytes));
  PARITY_ASSIGN_OR_RETURN(request.timing, timing_options_from_settings("bench hbm", settings.timing));
  request.out = settings.out;
  return request;
}

Result<HwProbeRequest> hw_probe_request_from_settings(const HwProbeSettings& settings) {
  HwProbeRequest request;
  PARITY_ASSIGN_OR_RETURN(request.copy_total_bytes, parse_hbm_total_bytes("hw probe", settings.copy_total_bytes));
  PARITY_ASSIGN_OR_RETURN(request.timing, timing_options_from_settings("hw probe", settings.timing));
  request.out = settings.out;
  request.results = settings.results;
  return request;
}

Result<TbeBenchRequest> tbe_bench_request_from_settings(const TbeBenchSettings& settings) {
  TbeBenchRequest request = settings.request;
  PARITY_ASSIGN_OR_RETURN(request.spec, tbe_bench_spec(settings.config, settings.overrides, request.seed));
  PARITY_RETURN_IF_ERROR(tbe_bench_problem(request.spec).status());
  PARITY_ASSIGN_OR_RETURN(request.timing, timing_options_from_settings("bench tbe", settings.timing));
  if (!settings.forward_variants.empty()) {
    PARITY_ASSIGN_OR_RETURN(request.forward_variants, parse_tbe_forward_variants(settings.forward_variants));
  }
  return request;
}

Result<AttentionBenchRequest> attention_bench_request_from_settings(const AttentionBenchSettings& settings) {
  AttentionBenchRequest request = settings.request;
  PARITY_ASSIGN_OR_RETURN(request.cases, attention_bench_cases(settings.config, settings.overrides));
  PARITY_ASSIGN_OR_RETURN(request.timing, timing_options_from_settings("bench attention", settings.timing));
  PARITY_RETURN_IF_ERROR(validate_attention_bench_request(request));
  return request;
}

Result<InteractionBenchRequest> interaction_bench_request_from_settings(const InteractionBenchSettings& settings) {
  InteractionBenchRequest request = settings.request;
  auto dtype = parse_dtype(settings.dtype);
  if (!dtype.is_ok()) return invalid_argument("bench interaction: --dtype: ", dtype.status().message());
  request.dtype = *dtype;
  PARITY_ASSIGN_OR_RETURN(request.timing, timing_options_from_settings("bench interaction", settings.timing));
  PARITY_RETURN_IF_ERROR(validate_interaction_bench_request(request));
  return request;
}

Result<GemmRunBenchRequest> gemm_run_bench_request_from_settings(const GemmRunBenchSettings& settings) {
  GemmRunBenchRequest request = settings.request;
  PARITY_ASSIGN_OR_RETURN(request.dtype, gemm::parse_gemm_dtype(settings.dtype));
  PARITY_ASSIGN_OR_RETURN(request.options.timing, timing_options_from_settings("bench gemm-run", settings.timing));
  request.options.measure_oracle = !settings.skip_oracle;
  PARITY_ASSIGN_OR_RETURN(request.options.gemm_choice, parse_gemm_choice(settings.gemm_choice));
  PARITY_CHECK_ARG(settings.measured_per_source >= 1, "bench gemm-run: --measured-per-source=",
                   settings.measured_per_source, "; expected >= 1");
  request.options.measured_candidates_per_source = settings.measured_per_source;
  PARITY_CHECK_ARG(settings.measured_model_list == "configs" || settings.measured_model_list == "tiles",
                   "bench gemm-run: --measured-model-list=", settings.measured_model_list,
                   "; expected configs or tiles");
  request.options.measured_distinct_tiles = settings.measured_model_list == "tiles";
  PARITY_CHECK_ARG(settings.measured_timing == "flushed" || settings.measured_timing == "back-to-back",
                   "bench gemm-run: --measured-timing=", settings.measured_timing, "; expected flushed or back-to-back");
  request.options.measured_flush_l2 = settings.measured_timing == "flushed";
  PARITY_RETURN_IF_ERROR(gemm_run_bench_problems(request).status());
  return request;
}

}  // namespace parity::bench
