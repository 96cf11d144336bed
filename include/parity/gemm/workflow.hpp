// The GEMM model's workflows as library calls (CPU only): load a device's model, select for one
// shape, time the selector itself, fit the scalars to measurement files (with cross-validation),
// evaluate a selector on measurements (writing the JSON/Markdown/SVG/CSV reports) and compare with
// Origami's rankings. `parity gemm select|calibrate|eval|agree` parse flags, call these and print
// the returned text; a Python binding or a trainer calls the same functions.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/evaluation.hpp"
#include "parity/gemm/measurements.hpp"
#include "parity/gemm/origami_agreement.hpp"
#include "parity/gemm/selector.hpp"

namespace parity::gemm {

/// Which device model to load: a catalogue GPU, the data directory (nullopt: PARITY_DATA_DIR or
/// the installed/source data), and a calibration file (empty: <data>/calibration/<hw>_gemm.json,
/// else the model's defaults).
struct ModelSource {
  std::string hw;
  std::optional<std::filesystem::path> data_dir;
  std::string calibration_file;
};

struct LoadedModel {
  DeviceParams device;
  GemmCalibration calibration;
  std::string calibration_label;  // "built-in defaults (uncalibrated)" or "fitted (FILE)"
};

Result<LoadedModel> load_model(const ModelSource& source);
/// `source` with data_dir set from a path given as text (empty: unchanged).
ModelSource with_data_dir(ModelSource source, const std::string& data_dir);
/// The selector over a loaded model: the one place a workflow builds a model from its scalars.
Selector make_selector(const LoadedModel& model, const SelectorOptions& options = {});

/// A measurements file (`gemm measure`'s output); a name ending in .gz is read through zlib.
Result<MeasurementSet> load_measurements(const std::string& path);

/// The repository's shape suite that defines the calibration/evaluation split, and its extra
/// calibration-only CSVs that exist (each disjoint from the suite, checked by tests).
std::string default_shape_suite_path();
std::vector<std::string> default_calibration_shape_paths();
/// The extra calibration shapes of `paths` (each must exist) concatenated; empty paths: none.
Result<ShapeSuite> read_calibration_shapes(const std::vector<std::string>& paths);

// ---- select ----
struct SelectionRow {
  std::string short_name;
  std::string config;
  double predicted_us = 0.0;
  double predicted_tflops = 0.0;
  TimeBreakdown breakdown;  // the model's terms of predicted_us (select --explain)
};
struct SelectionReport {
  std::string hw;
  std::string problem;  // GemmProblem::describe()
  std::string basis;    // modelled (Hopper model) / modelled (AMD, ...; not a measurement)
  std::string calibration;
  std::size_t candidates = 0;
  std::vector<SelectionRow> top;  // best first; top[0] is the choice
  TopKList top_k_list = TopKList::kDistinctTiles;  // what `top` holds
  bool is_explained = false;      // to_text prints each row's breakdown
};
Result<SelectionReport> select_report(const LoadedModel& model, const GemmProblem& problem,
                                      std::size_t top, bool explain = false,
                                      TopKList top_k_list = TopKList::kDistinctTiles);
std::string to_text(const SelectionReport& report);
std::string to_json(const SelectionReport& report);

/// Selection latency over `samples` unseen shapes (log-uniform sizes in [1, 32768], fixed seed),
/// each `base` with new m, n, k, on the model's modelled space.
struct SelectionLatency {
  std::string hw;
  std::size_t candidates = 0;
  std::size_t samples = 0;
  // What each select() returns: the top `top` of `top_k_list` (1: the best configuration, as
  // Gemm::create's model choice asks; 5 tiles: gemm select's default list).
  std::size_t top = 1;
  TopKList top_k_list = TopKList::kDistinctTiles;
  double first_call_us = 0.0;  // prepares the per-class constants
  double p50_us = 0.0, p99_us = 0.0, max_us = 0.0;
  // Per alignment class. Misaligned: the shapes above whose rows are not all 16-byte aligned
  // (~98% of random sizes; kernels without TMA on NVIDIA). Aligned: the same number of shapes
  // with M and K rounded up to 16-byte rows (the TMA path on NVIDIA).
  std::size_t misaligned_samples = 0;
  double misaligned_p50_us = 0.0, misaligned_p99_us = 0.0;
  double aligned_p50_us = 0.0, aligned_p99_us = 0.0;
  double thread_cpu_mean_us_per_sample = 0.0;
  double checksum = 0.0;  // keeps the calls observable
};
Result<SelectionLatency> measure_selection_latency(const LoadedModel& model, const GemmProblem& base,
                                                   int samples, std::size_t top,
                                                   TopKList top_k_list = TopKList::kDistinctTiles);
std::string to_text(const SelectionLatency& latency);
std::string to_json(const SelectionLatency& latency);

/// `gemm select` as settings (sizes as numbers, the rest as text): what it prints.
struct SelectSettings {
  ModelSource model;
  GemmProblem sizes;  // m, n, k, batch, leading dimensions, alignment
  std::string dtype = "bf16", layout = "TN", epilogue = "none";
  int top = 5;  // ranked candidates shown, >= 1
  std::string top_k_list = "tiles";  // tiles or configs (TopKList)
  bool is_json = false;
  bool is_explained = false;      // each row's predicted-time breakdown
  bool is_latency_report = false;  // measure_selection_latency instead (m = n = k = 4096 when none is given)
  int latency_samples = 10000;
};
/// The problem, the model, then select_report (or measure_selection_latency) as text or JSON;
/// errors name the flag ("gemm select: --top=0 must be >= 1").
Result<std::string> select_command_report(const SelectSettings& settings);

// ---- calibrate ----
struct CalibrateRequest {
  ModelSource model;  // hw empty: the measurements' device
  std::vector<std::string> measurement_files;
  std::string shapes = default_shape_suite_path();
  std::vector<std::string> calibration_shapes;  // empty: default_calibration_shape_paths()
  int cv_folds = 0;     // >= 2: cross-validate inside the calibration shapes first
  std::string cv_csv;   // per held-out shape ratio, when cross-validating
  std::string out;      // calibration file; empty only when cross-validating
  FitOptions fit;
  // Scalars to fit (scalar_name spelling); empty: every one. The others stay at the --calibration
  // file's values, so e.g. the kernels-without-TMA scalars can be refitted without moving any
  // TMA kernel's prediction.
  std::vector<std::string> fit_only;
  SelectorOptions selector;  // the cross-validation's selector
};
struct CalibrateOutcome {
  std::vector<std::string> ignored;  // shapes refused by the split, one message each
  std::size_t measurement_files = 0;
  std::size_t calibration_shapes = 0;
  std::optional<CrossValidationResult> cross_validation;
  std::vector<std::string> cross_validation_per_file;  // "FILE: n shapes, geomean ..."
  std::optional<FitResult> fit;  // absent when only cross-validating
  std::string out;
};
/// Validates the request, reads every file, admits the calibration shapes, cross-validates when
/// asked, fits and writes the calibration file with its provenance.
Result<CalibrateOutcome> calibrate(const CalibrateRequest& request);
std::string to_text(const CalibrateOutcome& outcome);
/// What `gemm calibrate` prints: `mode` (parse_selection_mode) for the cross-validation's
/// selector, then calibrate's outcome as text.
Result<std::string> calibrate_command_report(CalibrateRequest request, const std::string& mode);

// ---- eval ----
struct EvalRequest {
  ModelSource model;  // hw empty: the measurements' device
  std::string measurements;
  std::string shapes = default_shape_suite_path();
  std::vector<std::string> calibration_shapes;  // empty: default_calibration_shape_paths()
  std::string split = "evaluation";             // evaluation, calibration or all
  std::string out_dir;
  SelectorOptions selector;
};
/// Scores the selector on the measured shapes of the split and writes gemm_eval.{json,md,svg} and
/// gemm_eval_candidates.csv (every measured candidate with its prediction and model rank) under
/// out_dir.
Result<EvaluationReport> evaluate(const EvalRequest& request);
std::string eval_summary_text(const EvaluationReport& report, const std::string& out_dir);
/// What `gemm eval` prints: `mode` (parse_selection_mode) for the written per-shape report, then
/// evaluate's summary text.
Result<std::string> eval_command_report(EvalRequest request, const std::string& mode);
/// The per-candidate CSV `evaluate` writes (the residual analyses read it).
Status write_candidates_csv(const std::filesystem::path& path, const EvaluationReport& report,
                            const std::vector<MeasuredShape>& shapes);

// ---- agree ----
struct AgreementOutcome {
  std::string hw;
  std::string rankings_csv;
  TopKList top_k_list = TopKList::kDistinctTiles;  // what the top-5 figure reads
  AgreementReport report;
};
/// `origami_csv` empty: <data>/reference/origami/<arch>_bf16.csv. kInvalidArgument on a non-AMD
/// device.
/// `half`: the port half (even problem index), the held-out half (odd) or all (origami_agreement.hpp).
Result<AgreementOutcome> agree_with_origami(const ModelSource& source, const std::string& origami_csv,
                                            RankingHalf half = RankingHalf::kAll,
                                            TopKList top_k_list = TopKList::kDistinctTiles);
std::string to_text(const AgreementOutcome& outcome);
std::string to_json(const AgreementOutcome& outcome);
/// What `gemm agree` prints: `half_name` all, port, held-out, or both (the port half, then the
/// held-out half; text only, JSON takes one half per run), each outcome as text or JSON.
/// `top_k_list`: the selector's top-k list the top-5 figure reads (TopKList).
Result<std::string> agreement_report(const ModelSource& source, const std::string& origami_csv,
                                     const std::string& half_name, bool is_json,
                                     TopKList top_k_list = TopKList::kDistinctTiles);
/// The same with the top-k list as text (parse_top_k_list: tiles or configs), as `gemm agree` gives it.
Result<std::string> agreement_command_report(const ModelSource& source, const std::string& origami_csv,
                                             const std::string& half_name, bool is_json,
                                             const std::string& top_k_list);

}  // namespace parity::gemm
