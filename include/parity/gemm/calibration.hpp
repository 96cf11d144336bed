// GEMM model calibration: the fitted scalars of one device, their file
// (<data dir>/calibration/<device>_gemm.json, with provenance), the calibration/evaluation split of
// the shape suite, and the fit itself (Nelder-Mead on log-time error, CPU only).
#pragma once

#include <array>
#include <filesystem>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/measurements.hpp"
#include "parity/gemm/model.hpp"
#include "parity/gemm/selector.hpp"

namespace parity::gemm {

inline constexpr const char* kGemmCalibrationSchema = "parity.gemm.calibration/1";

struct GemmCalibration {
  std::string device;
  ModelScalars scalars;
  bool is_default = true;              // true: built-in defaults, nothing was fitted
  std::string provenance_json = "{}";  // measurements file, shapes, loss, date, commit
};

// <data dir>/calibration/<device>_gemm.json (data dir resolved as the hardware catalogue does).
std::filesystem::path gemm_calibration_path(std::string_view device,
                                            const std::optional<std::filesystem::path>& data_dir);
Result<GemmCalibration> read_gemm_calibration(const std::filesystem::path& path);
Status write_gemm_calibration(const GemmCalibration& calibration, const std::filesystem::path& path);
// The device's calibration when its file exists, else its defaults (is_default = true).
Result<GemmCalibration> load_gemm_calibration_or_default(
    const DeviceParams& device, const std::optional<std::filesystem::path>& data_dir);

// The split: data row i (0-based, after the header) of the shape suite is a calibration shape
// when i % 3 == 0, an evaluation shape otherwise. Shapes absent from the suite fall back to a
// hash of (m, n, k, batch) with the same 1-in-3 rate.
enum class ShapeSplit : std::uint8_t { kCalibration, kEvaluation };
struct ShapeSuite {
  std::vector<std::string> names;  // in file order
  std::vector<GemmProblem> problems;
};
Result<ShapeSuite> read_shape_suite(const std::filesystem::path& csv_path);
// `extra_calibration` (optional): shapes measured only to calibrate (e.g.
// bench/shapes/gemm_shapes_calibration_extra.csv, disjoint from the suite): a shape absent from
// the suite but listed there (by name or size) is a calibration shape, never an evaluation one.
ShapeSplit split_of(const MeasuredShape& shape, const ShapeSuite& suite,
                    const ShapeSuite* extra_calibration = nullptr);

// The shapes a calibration fit may see, gathered from one or more measurement files. A shape is
// refused (with one message each in `ignored`) when its name is an evaluation row's name or its
// size (m, n, k, batch) is an evaluation row's size: the suite repeats some sizes under other
// names, and a size in both splits would show the fit an evaluation shape. Otherwise it is kept
// when it is a calibration row of the suite or a row of `extra_calibration`, and, for shapes in
// neither, when the hash fallback of split_of makes it a calibration shape.
struct CalibrationShapes {
  std::vector<MeasuredShape> shapes;
  std::vector<std::string> origins;  // per kept shape: "<file>: suite row i" or "<file>: extra"
  std::vector<std::string> ignored;  // per refused shape: why
};
struct LabelledMeasurements {
  std::string label;  // the file it came from (messages and provenance)
  const MeasurementSet* set = nullptr;
};
CalibrationShapes select_calibration_shapes(const std::vector<LabelledMeasurements>& sets,
                                            const ShapeSuite& suite,
                                            const ShapeSuite* extra_calibration = nullptr);

// Each scalar's [low, high] clamp during the fit (scalar_bounds of model.hpp).
std::array<std::array<double, 2>, kNumModelScalars> default_fit_bounds();

struct FitOptions {
  int max_evaluations = 4000;  // >= 1
  // Weight of the per-shape (soft) selection regret in the loss (>= 0). 1 from a two-fold
  // cross-validation inside run 2's calibration split: 0 misranks, 3-10 overfit the picks.
  double regret_weight = 1.0;
  // Optional down-weighting of slow candidates in the squared-error term: a candidate measured
  // more than slow_candidate_ratio x its shape's fastest weighs slow_candidate_weight (0 = off).
  double slow_candidate_ratio = 0.0;
  double slow_candidate_weight = 1.0;
  std::array<std::array<double, 2>, kNumModelScalars> scalar_bounds = default_fit_bounds();
  // Refit the per-variant efficiency table after the scalars (else the start's table is kept).
  bool fit_variant_efficiency = true;
};
// kInvalidArgument naming the option: max_evaluations < 1, a negative or non-finite
// regret_weight, bounds with low <= 0 or low > high, ...
Status validate_fit_options(const FitOptions& options);
// kInvalidArgument when a measurement file was recorded on another device than the one the fit
// calibrates (H200 data cannot calibrate mi300x).
Status check_measurement_device(const std::vector<LabelledMeasurements>& sets,
                                std::string_view device);
struct FitResult {
  ModelScalars scalars;
  double loss_before = 0.0;
  double loss_after = 0.0;
  double rms_log_error_before = 0.0;
  double rms_log_error_after = 0.0;
  int evaluations = 0;
  int shapes = 0;
  int samples = 0;
};

// Loss = mean over measured candidates of (log predicted - log measured)^2 + regret_weight * mean
// over shapes of the soft regret: sum_i w_i log(t_i / t_oracle), w = softmin of the predicted
// log-times at temperature 0.03 (-> the regret of the model's pick as the temperature -> 0).
double calibration_loss(const GemmModel& model, const std::vector<MeasuredShape>& shapes,
                        double regret_weight, double* rms_log_error = nullptr);
double calibration_loss(const GemmModel& model, const std::vector<MeasuredShape>& shapes,
                        const FitOptions& options, double* rms_log_error = nullptr);
// fit_scalars refuses degenerate fits (kInvalidArgument): no shapes, 0 measured candidates,
// invalid options, a non-finite loss before or after.
Result<FitResult> fit_scalars(const DeviceParams& device, const ModelScalars& start,
                              const std::vector<MeasuredShape>& shapes, const FitOptions& options);

// K-fold cross-validation inside the calibration shapes, for choosing model forms and fit options
// without looking at the evaluation split. Shapes are grouped by size (m, n, k, batch) so repeated
// measurements of one size (several runs) fall in the same fold; sizes are dealt to folds in order
// of first appearance. Each fold is fitted on the others and its shapes are scored with the
// selector's pick (the confidence rule included, as `gemm eval` does): every shape is held out once.
struct CrossValidationResult {
  int folds = 0;
  int shapes = 0;                      // held-out shape measurements scored (all of them, once)
  double geomean = 0.0;                // t_oracle / t_pick over every held-out shape
  double worst = 0.0;
  double within_5_percent = 0.0;
  double heuristic_geomean = 0.0;      // the vendor's top-1 on the same shapes (where measured)
  double held_out_rms_log_error = 0.0; // of the held-out predictions, every candidate
  std::vector<double> fold_geomean;
  std::vector<std::string> worst_shapes;  // "name ratio", the five lowest
  std::vector<double> shape_ratio;        // per input shape (same order): its held-out ratio
};
Result<CrossValidationResult> cross_validate(const DeviceParams& device, const ModelScalars& start,
                                             const std::vector<MeasuredShape>& shapes, int folds,
                                             const FitOptions& options,
                                             const SelectorOptions& selector_options = {});

}  // namespace parity::gemm
