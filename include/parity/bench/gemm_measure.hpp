// `parity gemm run` and `parity gemm measure` as library calls (NVIDIA; implemented in parity_gpu,
// src/backends/cuda/gemm/measure_workflow.cpp). run: the selector's choice for one shape timed
// beside cuBLASLt's heuristic top-1 (and the best of its 8). measure: the oracle data set of a
// shape suite (per shape the pruned space screened, the best top-K + the heuristic's 8 + the
// selector's top-3 timed in full, the oracle's top re-timed for the noise floor), written as the
// measurements file `gemm calibrate` / `gemm eval` read (docs/gemm_measurements.md).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "parity/bench/gemm_timing.hpp"
#include "parity/core/status.hpp"
#include "parity/gemm/workflow.hpp"

namespace parity::gemm {

struct GemmRunRequest {
  LoadedModel model;  // load_model() first: a bad --hw is an input error before any device
  GemmProblem problem;
  MeasureOptions options;  // noise_top and screen_all are overridden: choice + heuristic's 8 only
  std::string out;         // results JSON with provenance (empty: none)
};
/// What `gemm run` and `gemm measure` share, as a command line or a binding gives it.
struct GemmMeasureSettings {
  std::string data_dir;  // empty: the default data directory
  ModelSource model{"h200", std::nullopt, ""};
  MeasureOptions options;
  std::string out;
};
/// `parity gemm run`: the shape as text (dtype, layout).
struct GemmRunSettings : GemmMeasureSettings {
  GemmProblem sizes;  // m, n, k
  std::string dtype = "bf16";
  std::string layout = "TN";
};
/// The checked request with its model loaded (CPU, before any device); errors name "gemm run".
Result<GemmRunRequest> gemm_run_request_from_settings(const GemmRunSettings& settings);
/// The printed report (measured vs predicted, heuristic and best-timed beside).
Result<std::string> run_selected_gemm(const GemmRunRequest& request);

struct SuiteMeasureRequest {
  std::optional<LoadedModel> model;  // the selector whose top-3 is timed too (none: not timed)
  std::string shapes;
  DType dtype = DType::kBF16;
  MeasureOptions options;
  int limit = 0;               // at most this many shapes (0 = all)
  int stride = 1;              // every stride-th shape of the file
  double time_budget_s = 0.0;  // start no shape that would end past this (0 = no limit)
  std::string out;
};
/// Arguments only (no device): exit-2 errors before any device is touched.
Status validate(const SuiteMeasureRequest& request);
/// `parity gemm measure` as a command line or a binding gives it.
struct SuiteMeasureSettings : GemmMeasureSettings {
  SuiteMeasureSettings() { options.min_timed_ms = 2.0; }
  SuiteMeasureRequest request;  // shapes, limit, stride, time budget; the rest from the fields above
  std::string dtype = "bf16";
};
/// The checked request (CPU, before any device): the settings validated, the shape suite read.
/// The selector is optional: when its model does not load, the request has none and
/// `selector_warning` says why (one line for stderr: the selector's picks are not timed).
Result<SuiteMeasureRequest> suite_measure_request_from_settings(const SuiteMeasureSettings& settings,
                                                                std::string& selector_warning);
/// Measures the suite, rewriting `out` after every shape (a cut run keeps what it measured);
/// `print` receives the table lines as they are produced. Returns the closing summary text.
Result<std::string> measure_gemm_suite(const SuiteMeasureRequest& request,
                                       const std::function<void(const std::string&)>& print);

}  // namespace parity::gemm
