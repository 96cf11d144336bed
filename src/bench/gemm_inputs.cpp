// The CPU half of gemm measure / gemm run / bench gemm: option and request validation, so bad flags
// are input errors (exit 2) before any device is touched, in every build
// (include/parity/bench/gemm_timing.hpp, gemm_measure.hpp).
#include <cmath>

#include "parity/bench/gemm_measure.hpp"
#include "parity/gemm/calibration.hpp"

namespace parity::gemm {

Status validate_measure_options(const MeasureOptions& o) {
  PARITY_CHECK_ARG(o.screen_repetitions >= 1, "measure: screen_repetitions=", o.screen_repetitions,
                   " (expected >= 1)");
  PARITY_CHECK_ARG(o.repetitions >= 1, "measure: repetitions=", o.repetitions, " (expected >= 1)");
  PARITY_CHECK_ARG(std::isfinite(o.min_timed_ms) && o.min_timed_ms >= 0.0,
                   "measure: min_timed_ms=", o.min_timed_ms, " (expected >= 0)");
  PARITY_CHECK_ARG(o.max_repetitions >= o.repetitions, "measure: max_repetitions=",
                   o.max_repetitions, " (expected >= repetitions=", o.repetitions, ")");
  PARITY_CHECK_ARG(o.warmup_iterations >= 0, "measure: warmup_iterations=", o.warmup_iterations,
                   " (expected >= 0)");
  PARITY_CHECK_ARG(o.top_k >= 0, "measure: top_k=", o.top_k, " (expected >= 0)");
  PARITY_CHECK_ARG(o.noise_top >= 0, "measure: noise_top=", o.noise_top, " (expected >= 0)");
  PARITY_CHECK_ARG(o.check_samples >= 1, "measure: check_samples=", o.check_samples,
                   " (expected >= 1)");
  PARITY_CHECK_ARG(o.flush_bytes >= 0, "measure: flush_bytes=", o.flush_bytes, " (expected >= 0)");
  return Status::ok();
}

Status validate_measure_counts(const MeasureOptions& options, std::string_view command) {
  PARITY_CHECK_ARG(options.repetitions >= 1, command, ": --reps=", options.repetitions, " must be >= 1");
  PARITY_CHECK_ARG(options.warmup_iterations >= 0, command, ": --warmup=", options.warmup_iterations, " must be >= 0");
  return Status::ok();
}

Status validate(const SuiteMeasureRequest& request) {
  PARITY_CHECK_ARG(!request.shapes.empty(), "gemm measure: --shapes FILE is required");
  PARITY_CHECK_ARG(!request.out.empty(), "gemm measure: --out FILE is required");
  PARITY_CHECK_ARG(request.limit >= 0, "gemm measure: --limit=", request.limit, " must be >= 0");
  PARITY_CHECK_ARG(request.stride >= 1, "gemm measure: --stride=", request.stride, " must be >= 1");
  PARITY_CHECK_ARG(std::isfinite(request.time_budget_s) && request.time_budget_s >= 0.0,
                   "gemm measure: --time-budget-s=", request.time_budget_s, " must be >= 0");
  return validate_measure_options(request.options);
}

Result<std::vector<NamedGemmShape>> gemm_bench_shapes(const std::string& shapes_file, std::int64_t m,
                                                      std::int64_t n, std::int64_t k, DType dtype) {
  std::vector<NamedGemmShape> shapes;
  if (!shapes_file.empty()) {
    PARITY_CHECK_ARG(m == 0 && n == 0 && k == 0, "bench gemm: give either --shapes or --m/--n/--k, not both");
    PARITY_ASSIGN_OR_RETURN(const ShapeSuite suite, read_shape_suite(shapes_file));
    PARITY_CHECK_ARG(!suite.problems.empty(), "bench gemm: --shapes='", shapes_file, "' holds no shapes");
    for (std::size_t i = 0; i < suite.problems.size(); ++i) shapes.push_back({suite.names[i], suite.problems[i]});
  } else {
    PARITY_CHECK_ARG(m > 0 && n > 0 && k > 0, "bench gemm: --m=", m, " --n=", n, " --k=", k,
                     " must all be > 0 (or give --shapes FILE)");
    GemmProblem problem;
    problem.m = m;
    problem.n = n;
    problem.k = k;
    shapes.push_back({"", problem});
  }
  for (auto& shape : shapes) {
    shape.problem.a_dtype = shape.problem.b_dtype = shape.problem.c_dtype = dtype;
    shape.problem.layout = GemmLayout::kTN;
    PARITY_RETURN_IF_ERROR(shape.problem.validate().with_context("bench gemm"));
  }
  return shapes;
}

Result<GemmBenchRequest> gemm_bench_request_from_settings(const GemmBenchSettings& settings) {
  PARITY_CHECK_ARG(settings.library == "cublaslt" || settings.library == "cublas", "bench gemm: --library='",
                   settings.library, "' is not one of cublaslt, cublas");
  GemmBenchRequest request;
  PARITY_ASSIGN_OR_RETURN(request.dtype, parse_gemm_dtype(settings.dtype));
  PARITY_ASSIGN_OR_RETURN(request.shapes,
                          gemm_bench_shapes(settings.shapes, settings.m, settings.n, settings.k, request.dtype));
  PARITY_ASSIGN_OR_RETURN(request.timing, bench::timing_options_from_settings("bench gemm", settings.timing));
  request.use_cublas = settings.library == "cublas";
  request.cublas_workspace_bytes = settings.cublas_workspace_bytes;
  request.out = settings.out;
  return request;
}

Result<GemmRunRequest> gemm_run_request_from_settings(const GemmRunSettings& settings) {
  PARITY_RETURN_IF_ERROR(validate_measure_counts(settings.options, "gemm run"));
  GemmRunRequest request;
  auto problem = gemm_problem_from_text(settings.sizes, settings.dtype, settings.layout);
  if (!problem.is_ok()) return problem.status().with_context("gemm run");
  request.problem = *problem;
  PARITY_ASSIGN_OR_RETURN(request.model, load_model(with_data_dir(settings.model, settings.data_dir)));
  request.options = settings.options;
  request.out = settings.out;
  return request;
}

Result<SuiteMeasureRequest> suite_measure_request_from_settings(const SuiteMeasureSettings& settings,
                                                                std::string& selector_warning) {
  PARITY_RETURN_IF_ERROR(validate_measure_counts(settings.options, "gemm measure"));
  SuiteMeasureRequest request = settings.request;
  request.options = settings.options;
  request.out = settings.out;
  PARITY_ASSIGN_OR_RETURN(request.dtype, parse_gemm_dtype(settings.dtype));
  PARITY_RETURN_IF_ERROR(validate(request));
  PARITY_RETURN_IF_ERROR(read_shape_suite(request.shapes).status());
  // The selector is optional here: without it the file still holds the oracle data set.
  auto model = load_model(with_data_dir(settings.model, settings.data_dir));
  if (model.is_ok()) {
    request.model = *model;
  } else {
    selector_warning =
        "gemm measure: no selector (" + model.status().to_string() + "); selector picks are not timed\n";
  }
  return request;
}

}  // namespace parity::gemm
