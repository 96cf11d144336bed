// `gemm calibrate` as a library call: measurement files -> admitted calibration shapes ->
// optional K-fold cross-validation -> the fit -> the calibration file with its provenance
// (include/parity/gemm/workflow.hpp).
#include <cmath>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gemm/workflow_text.hpp"
#include "parity/build_info.hpp"
#include "parity/gemm/workflow.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

using nlohmann::json;

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

Status validate(const CalibrateRequest& request) {
  PARITY_CHECK_ARG(!request.measurement_files.empty(),
                   "gemm calibrate: --measurements FILE is required (repeatable)");
  PARITY_CHECK_ARG(!request.out.empty() || request.cv_folds > 0,
                   "gemm calibrate: --out FILE is required (or --cv-folds K to cross-validate only)");
  PARITY_CHECK_ARG(request.cv_folds == 0 || request.cv_folds >= 2, "gemm calibrate: --cv-folds=",
                   request.cv_folds, " must be >= 2 (0 = no cross-validation)");
  return Status::ok();
}

// Every file, all from one device.
// Each set's device as its catalogue name where the catalogue knows it: files recorded before
// measure resolved the runtime name ("h100_80gb_hbm3") file under the same GPU as "h100".
Result<std::vector<MeasurementSet>> read_sets(const std::vector<std::string>& files,
                                              const std::optional<std::filesystem::path>& data_dir) {
  std::vector<MeasurementSet> sets;
  for (const auto& path : files) {
    PARITY_ASSIGN_OR_RETURN(auto set, load_measurements(path));
    if (auto spec = hw::find_hardware(set.device, data_dir); spec.is_ok()) set.device = spec->name;
    if (!sets.empty()) {
      PARITY_CHECK_ARG(set.device == sets.front().device, "gemm calibrate: --measurements '", path,
                       "' is from device '", set.device, "', '", files.front(), "' from '",
                       sets.front().device, "' (one device per calibration)");
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

// Held-out geomean per measurements file: figures on a grown set stay comparable by file.
std::vector<std::string> per_file_lines(const std::vector<std::string>& files, const CalibrationShapes& admitted,
                                        const CrossValidationResult& cv) {
  std::vector<std::string> lines;
  for (const auto& file : files) {
    double log_sum = 0.0, worst = 1.0;
    std::size_t count = 0, within = 0;
    for (std::size_t i = 0; i < admitted.shapes.size(); ++i) {
      if (admitted.origins[i].compare(0, file.size() + 1, file + ":") != 0) continue;
      const double r = cv.shape_ratio[i];
      if (r <= 0) continue;
      log_sum += std::log(r);
      worst = std::min(worst, r);
      within += r >= 0.95 ? 1 : 0;
      ++count;
    }
    if (count == 0) continue;
    lines.push_back(file + ": " + std::to_string(count) + " shapes, geomean " +
                    fixed(std::exp(log_sum / static_cast<double>(count)), 4) + "  worst " + fixed(worst, 3) +
                    "  within 5% " +
                    fixed(100.0 * static_cast<double>(within) / static_cast<double>(count), 0) + "%");
  }
  return lines;
}

// Per held-out shape: what the per-file lines summarise, for residual analyses.
Status write_cv_csv(const std::string& path, const CalibrationShapes& admitted, const CrossValidationResult& cv) {
  std::ofstream csv(path);
  if (!csv) return io_error("gemm calibrate: cannot write '", path, "'");
  csv << "origin,shape,m,n,k,batch,held_out_ratio\n";
  for (std::size_t i = 0; i < admitted.shapes.size(); ++i) {
    const auto& shape = admitted.shapes[i];
    csv << '"' << admitted.origins[i] << "\"," << shape.name << ',' << shape.problem.m << ','
        << shape.problem.n << ',' << shape.problem.k << ',' << shape.problem.batch << ','
        << cv.shape_ratio[i] << '\n';
  }
  return csv ? Status::ok() : io_error("gemm calibrate: write to '", path, "' failed");
}

std::string provenance_of(const CalibrateRequest& request, const std::vector<MeasurementSet>& sets,
                          const std::vector<std::string>& extra_files, const CalibrationShapes& admitted,
                          const FitResult& fit) {
  json provenance;
  provenance["kind"] = "measured_here";
  provenance["method"] = "Nelder-Mead on log-time error + selection regret (docs/gemm.md)";
  provenance["measurements"] = request.measurement_files;
  provenance["measurements_device"] = sets.front().device;
  json file_provenance = json::array();
  for (const auto& set : sets) file_provenance.push_back(json::parse(set.provenance_json, nullptr, false));
  provenance["measurements_provenance"] = file_provenance;
  provenance["split"] = "calibration rows: data row index % 3 == 0 of " + request.shapes +
                        ", minus any size of an evaluation row; plus the extra calibration shapes";
  provenance["extra_calibration_shapes"] = extra_files;
  json names = json::array();
  for (std::size_t i = 0; i < admitted.shapes.size(); ++i) {
    names.push_back(admitted.shapes[i].name + " <- " + admitted.origins[i]);
  }
  provenance["shapes"] = names;
  provenance["ignored"] = admitted.ignored;
  provenance["regret_weight"] = request.fit.regret_weight;
  if (!request.fit_only.empty()) provenance["fit_only"] = request.fit_only;
  provenance["samples"] = fit.samples;
  provenance["loss_before"] = fit.loss_before;
  provenance["loss_after"] = fit.loss_after;
  provenance["rms_log_error_before"] = fit.rms_log_error_before;
  provenance["rms_log_error_after"] = fit.rms_log_error_after;
  provenance["evaluations"] = fit.evaluations;
  provenance["date"] = utc_now();
  provenance["commit"] = build::kGitSha;
  return provenance.dump();
}

// --fit-only: every scalar not named starts at, and is pinned to, the loaded calibration's value.
Status pin_all_but(const std::vector<std::string>& fit_only, const ModelScalars& loaded, ModelScalars& start,
                   FitOptions& options) {
  if (fit_only.empty()) return Status::ok();
  std::array<bool, kNumModelScalars> is_fitted{};
  for (const std::string& name : fit_only) {
    int index = -1;
    for (int i = 0; i < kNumModelScalars; ++i) {
      if (scalar_name(i) == name) index = i;
    }
    PARITY_CHECK_ARG(index >= 0, "gemm calibrate: --fit-only: '", name, "' is not a model scalar (",
                     "one of mma_efficiency ... legacy_latency_ctas, as `gemm calibrate` prints them)");
    is_fitted[static_cast<std::size_t>(index)] = true;
  }
  auto values = scalars_to_array(start);
  const auto pinned = scalars_to_array(loaded);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (is_fitted[i]) continue;
    values[i] = pinned[i];
    options.scalar_bounds[i] = {pinned[i], pinned[i]};
  }
  start = scalars_from_array(values);
  start.variant_efficiency = loaded.variant_efficiency;
  options.fit_variant_efficiency = false;
  return Status::ok();
}

}  // namespace

Result<CalibrateOutcome> calibrate(const CalibrateRequest& request) {
  PARITY_RETURN_IF_ERROR(validate(request));
  PARITY_ASSIGN_OR_RETURN(const auto sets, read_sets(request.measurement_files, request.model.data_dir));
  ModelSource source = request.model;
  if (source.hw.empty()) source.hw = sets.front().device;
  PARITY_ASSIGN_OR_RETURN(const auto model, load_model(source));
  PARITY_ASSIGN_OR_RETURN(const auto suite, read_shape_suite(request.shapes));
  const auto extra_files =
      request.calibration_shapes.empty() ? default_calibration_shape_paths() : request.calibration_shapes;
  PARITY_ASSIGN_OR_RETURN(const auto extra, read_calibration_shapes(extra_files));
  std::vector<LabelledMeasurements> labelled;
  for (std::size_t i = 0; i < sets.size(); ++i) labelled.push_back({request.measurement_files[i], &sets[i]});
  PARITY_RETURN_IF_ERROR(check_measurement_device(labelled, model.device.name));
  const auto admitted = select_calibration_shapes(labelled, suite, &extra);
  std::size_t measured_shapes = 0;
  for (const auto& set : sets) measured_shapes += set.shapes.size();
  PARITY_CHECK_ARG(!admitted.shapes.empty(), "gemm calibrate: --measurements holds no calibration shape (",
                   measured_shapes, " shapes; the split is row % 3 == 0 of ", request.shapes,
                   ", plus the extra calibration shapes)");
  CalibrateOutcome outcome;
  outcome.ignored = admitted.ignored;
  outcome.measurement_files = sets.size();
  outcome.calibration_shapes = admitted.shapes.size();
  ModelScalars start = default_scalars(model.device);
  FitOptions fit_options = request.fit;
  PARITY_RETURN_IF_ERROR(pin_all_but(request.fit_only, model.calibration.scalars, start, fit_options));
  if (request.cv_folds > 0) {
    PARITY_ASSIGN_OR_RETURN(auto cv, cross_validate(model.device, start, admitted.shapes, request.cv_folds,
                                                    fit_options, request.selector));
    outcome.cross_validation_per_file = per_file_lines(request.measurement_files, admitted, cv);
    if (!request.cv_csv.empty()) PARITY_RETURN_IF_ERROR(write_cv_csv(request.cv_csv, admitted, cv));
    outcome.cross_validation = std::move(cv);
    if (request.out.empty()) return outcome;
  }
  PARITY_ASSIGN_OR_RETURN(const auto fit, fit_scalars(model.device, start, admitted.shapes, fit_options));
  GemmCalibration calibration;
  calibration.device = model.device.name;
  calibration.scalars = fit.scalars;
  calibration.is_default = false;
  calibration.provenance_json = provenance_of(request, sets, extra_files, admitted, fit);
  PARITY_RETURN_IF_ERROR(write_gemm_calibration(calibration, request.out));
  outcome.fit = fit;
  outcome.out = request.out;
  return outcome;
}

std::string to_text(const CalibrateOutcome& outcome) {
  std::ostringstream out;
  for (const auto& message : outcome.ignored) out << "gemm calibrate: " << message << "\n";
  if (outcome.cross_validation) {
    const auto& cv = *outcome.cross_validation;
    out << "gemm calibrate: " << cv.folds << "-fold cross-validation on " << cv.shapes
        << " calibration shape measurements (held out, t_oracle / t_pick)\n"
        << "  geomean " << fixed(cv.geomean, 4) << "  worst " << fixed(cv.worst, 3) << "  within 5% "
        << fixed(100 * cv.within_5_percent, 0) << "%  heuristic top-1 " << fixed(cv.heuristic_geomean, 4)
        << "  held-out rms log-time error " << fixed(cv.held_out_rms_log_error, 3) << "\n  per fold:";
    for (const double g : cv.fold_geomean) out << " " << fixed(g, 4);
    out << "\n  lowest:";
    for (const auto& w : cv.worst_shapes) out << "  " << w;
    out << "\n";
    for (const auto& line : outcome.cross_validation_per_file) out << "  " << line << "\n";
  }
  if (!outcome.fit) return out.str();
  const FitResult& fit = *outcome.fit;
  out << "gemm calibrate: " << outcome.calibration_shapes << " calibration shapes from "
      << outcome.measurement_files << " file(s), " << outcome.ignored.size() << " ignored, " << fit.samples
      << " candidates (timed or screened), " << fit.evaluations << " model evaluations\n"
      << "  loss " << fixed(fit.loss_before, 4) << " -> " << fixed(fit.loss_after, 4)
      << ", rms log-time error " << fixed(fit.rms_log_error_before, 3) << " -> "
      << fixed(fit.rms_log_error_after, 3) << "\n";
  const auto values = scalars_to_array(fit.scalars);
  for (int i = 0; i < kNumModelScalars; ++i) {
    out << "  " << std::left << std::setw(22) << scalar_name(i) << std::right
        << fixed(values[static_cast<std::size_t>(i)], 4) << "\n";
  }
  out << "  wrote " << outcome.out << "\n";
  return out.str();
}

Result<std::string> calibrate_command_report(CalibrateRequest request, const std::string& mode) {
  PARITY_ASSIGN_OR_RETURN(request.selector.mode, parse_selection_mode(mode));
  PARITY_ASSIGN_OR_RETURN(const CalibrateOutcome outcome, calibrate(request));
  return to_text(outcome);
}

}  // namespace parity::gemm
