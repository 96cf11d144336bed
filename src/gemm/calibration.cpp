#include "parity/gemm/calibration.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "parity/gemm/calibration_file.hpp"
#include "parity/gemm/evaluation.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

using nlohmann::json;

std::uint64_t mix(std::uint64_t x) {
  // splitmix64 finaliser: a fixed, platform-independent hash for the fallback split.
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::filesystem::path gemm_calibration_path(std::string_view device,
                                            const std::optional<std::filesystem::path>& data_dir) {
  return hw::resolve_data_dir(data_dir) / "calibration" / (std::string(device) + "_gemm.json");
}

Result<GemmCalibration> read_gemm_calibration(const std::filesystem::path& path) {
  return load_gemm_calibration_file(path);  // strict: src/gemm/calibration_file.cpp
}

Status write_gemm_calibration(const GemmCalibration& calibration, const std::filesystem::path& path) {
  json root;
  root["schema"] = kGemmCalibrationSchema;
  root["device"] = calibration.device;
  const auto values = scalars_to_array(calibration.scalars);
  for (int i = 0; i < kNumModelScalars; ++i) {
    root["scalars"][std::string(scalar_name(i))] = values[static_cast<std::size_t>(i)];
  }
  root["variant_efficiency"] = calibration.scalars.variant_efficiency;
  const json provenance = json::parse(calibration.provenance_json, nullptr, false);
  root["provenance"] = provenance.is_discarded() ? json::object() : provenance;
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path);
  if (!out) return io_error("gemm calibration: cannot write '", path.string(), "'");
  out << root.dump(2) << "\n";
  return out ? Status::ok() : io_error("gemm calibration: write to '", path.string(), "' failed");
}

Result<GemmCalibration> load_gemm_calibration_or_default(
    const DeviceParams& device, const std::optional<std::filesystem::path>& data_dir) {
  const auto path = gemm_calibration_path(device.name, data_dir);
  if (!std::filesystem::exists(path)) {
    GemmCalibration calibration;
    calibration.device = device.name;
    calibration.scalars = default_scalars(device);
    calibration.provenance_json = R"json({"source":"built-in defaults (docs/gemm.md)"})json";
    return calibration;
  }
  return read_gemm_calibration(path);
}

Result<ShapeSuite> read_shape_suite(const std::filesystem::path& csv_path) {
  return load_shape_suite_file(csv_path);  // strict: src/gemm/calibration_file.cpp
}

namespace {

constexpr std::size_t kNotFound = static_cast<std::size_t>(-1);

bool same_size(const GemmProblem& a, const GemmProblem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch;
}

// The suite row of a measured shape: by name first (the suite repeats some sizes under different
// names), then by size; kNotFound when absent.
std::size_t suite_row(const MeasuredShape& shape, const ShapeSuite& suite) {
  for (std::size_t i = 0; i < suite.names.size(); ++i) {
    if (!shape.name.empty() && suite.names[i] == shape.name) return i;
  }
  for (std::size_t i = 0; i < suite.names.size(); ++i) {
    if (same_size(suite.problems[i], shape.problem)) return i;
  }
  return kNotFound;
}

bool is_calibration_row(std::size_t row) { return row % 3 == 0; }

ShapeSplit hash_split(const GemmProblem& problem) {
  const std::uint64_t h =
      mix(mix(mix(mix(static_cast<std::uint64_t>(problem.m)) ^ static_cast<std::uint64_t>(problem.n)) ^
              static_cast<std::uint64_t>(problem.k)) ^
          static_cast<std::uint64_t>(problem.batch));
  return h % 3 == 0 ? ShapeSplit::kCalibration : ShapeSplit::kEvaluation;
}

}  // namespace

ShapeSplit split_of(const MeasuredShape& shape, const ShapeSuite& suite,
                    const ShapeSuite* extra_calibration) {
  const std::size_t row = suite_row(shape, suite);
  if (row != kNotFound) {
    return is_calibration_row(row) ? ShapeSplit::kCalibration : ShapeSplit::kEvaluation;
  }
  if (extra_calibration != nullptr && suite_row(shape, *extra_calibration) != kNotFound) {
    return ShapeSplit::kCalibration;
  }
  return hash_split(shape.problem);
}

CalibrationShapes select_calibration_shapes(const std::vector<LabelledMeasurements>& sets,
                                            const ShapeSuite& suite,
                                            const ShapeSuite* extra_calibration) {
  CalibrationShapes out;
  for (const LabelledMeasurements& labelled : sets) {
    if (labelled.set == nullptr) continue;
    for (const MeasuredShape& shape : labelled.set->shapes) {
      const std::string what = detail::concat(
          labelled.label, ": ", shape.name.empty() ? std::string("(unnamed)") : shape.name, " (",
          shape.problem.m, "x", shape.problem.n, "x", shape.problem.k,
          shape.problem.batch > 1 ? detail::concat(" batch ", shape.problem.batch) : std::string(),
          ")");
      // Refused: an evaluation row's name, or an evaluation row's size under any name.
      std::size_t evaluation_row = kNotFound;
      for (std::size_t i = 0; i < suite.names.size() && evaluation_row == kNotFound; ++i) {
        if (is_calibration_row(i)) continue;
        if ((!shape.name.empty() && suite.names[i] == shape.name) ||
            same_size(suite.problems[i], shape.problem)) {
          evaluation_row = i;
        }
      }
      if (evaluation_row != kNotFound) {
        out.ignored.push_back(detail::concat(what, " ignored: evaluation row ", evaluation_row, " (",
                                             suite.names[evaluation_row],
                                             ") of the suite has this name or size"));
        continue;
      }
      const std::size_t row = suite_row(shape, suite);
      std::string origin;
      if (row != kNotFound) {
        origin = detail::concat(labelled.label, ": suite row ", row);
      } else if (extra_calibration != nullptr && suite_row(shape, *extra_calibration) != kNotFound) {
        origin = detail::concat(labelled.label, ": extra calibration shape");
      } else if (hash_split(shape.problem) == ShapeSplit::kCalibration) {
        origin = detail::concat(labelled.label, ": not in the suite, hash split calibration");
      } else {
        out.ignored.push_back(detail::concat(
            what, " ignored: not in the suite nor the extra calibration shapes, and the hash split "
                  "puts it in evaluation"));
        continue;
      }
      out.shapes.push_back(shape);
      out.origins.push_back(origin);
    }
  }
  return out;
}

double calibration_loss(const GemmModel& model, const std::vector<MeasuredShape>& shapes,
                        double regret_weight, double* rms_log_error) {
  FitOptions options;
  options.regret_weight = regret_weight;
  return calibration_loss(model, shapes, options, rms_log_error);
}

double calibration_loss(const GemmModel& model, const std::vector<MeasuredShape>& shapes,
                        const FitOptions& options, double* rms_log_error) {
  // The regret term is smooth so Nelder-Mead can follow it: each candidate's measured regret
  // log(t / t_oracle), weighted by a softmin over predicted log-times (temperature
  // kRegretTemperature, ~ the 3-5% spread between near-best kernels). It tends to the hard regret
  // of the model's argmin as the temperature goes to zero.
  constexpr double kRegretTemperature = 0.03;
  const double log_slow_ratio =
      options.slow_candidate_ratio > 0 ? std::log(options.slow_candidate_ratio) : 0.0;
  double squared = 0.0, regret = 0.0, samples_weight = 0.0;
  std::size_t counted_shapes = 0;
  std::vector<double> log_predicted, log_measured;
  for (const MeasuredShape& shape : shapes) {
    if (shape.candidates.empty()) continue;
    const ProblemClass key = problem_class(shape.problem);
    log_predicted.clear();
    log_measured.clear();
    double best_log_measured = std::numeric_limits<double>::infinity();
    double best_log_predicted = std::numeric_limits<double>::infinity();
    for (const MeasuredCandidate& measured : shape.candidates) {
      best_log_measured = std::min(best_log_measured, std::log(measured.median_ms * 1e3));
    }
    for (const MeasuredCandidate& measured : shape.candidates) {
      const double predicted_us = model.predict_us(shape.problem, model.prepare(key, measured.candidate));
      const double log_measured_us = std::log(measured.median_ms * 1e3);
      if (!std::isfinite(predicted_us)) continue;
      const double error = std::log(predicted_us) - log_measured_us;
      const bool is_slow =
          options.slow_candidate_ratio > 0 && log_measured_us - best_log_measured > log_slow_ratio;
      const double weight = is_slow ? options.slow_candidate_weight : 1.0;
      squared += weight * error * error;
      samples_weight += weight;
      log_predicted.push_back(std::log(predicted_us));
      log_measured.push_back(log_measured_us);
      best_log_predicted = std::min(best_log_predicted, log_predicted.back());
    }
    if (log_predicted.empty()) continue;
    double weight_sum = 0.0, weighted_regret = 0.0;
    for (std::size_t i = 0; i < log_predicted.size(); ++i) {
      const double w = std::exp(-(log_predicted[i] - best_log_predicted) / kRegretTemperature);
      weight_sum += w;
      weighted_regret += w * (log_measured[i] - best_log_measured);
    }
    regret += weighted_regret / weight_sum;
    ++counted_shapes;
  }
  const double mse = samples_weight > 0 ? squared / samples_weight : 0.0;
  if (rms_log_error != nullptr) *rms_log_error = std::sqrt(mse);
  const double mean_regret = counted_shapes > 0 ? regret / static_cast<double>(counted_shapes) : 0.0;
  return mse + options.regret_weight * mean_regret;
}

std::array<std::array<double, 2>, kNumModelScalars> default_fit_bounds() {
  std::array<std::array<double, 2>, kNumModelScalars> bounds{};
  for (int i = 0; i < kNumModelScalars; ++i) bounds[static_cast<std::size_t>(i)] = scalar_bounds(i);
  return bounds;
}

Status validate_fit_options(const FitOptions& options) {
  PARITY_CHECK_ARG(options.max_evaluations >= 1, "gemm calibrate: max_evaluations: ",
                   options.max_evaluations, " is out of range [1, ...]");
  PARITY_CHECK_ARG(std::isfinite(options.regret_weight) && options.regret_weight >= 0.0,
                   "gemm calibrate: regret_weight: ", options.regret_weight,
                   " is out of range [0, ...)");
  PARITY_CHECK_ARG(std::isfinite(options.slow_candidate_ratio) && options.slow_candidate_ratio >= 0.0,
                   "gemm calibrate: slow_candidate_ratio: ", options.slow_candidate_ratio,
                   " is out of range [0, ...) (0 = off)");
  PARITY_CHECK_ARG(std::isfinite(options.slow_candidate_weight) && options.slow_candidate_weight > 0.0,
                   "gemm calibrate: slow_candidate_weight: ", options.slow_candidate_weight,
                   " is out of range (0, ...)");
  for (int i = 0; i < kNumModelScalars; ++i) {
    const auto& b = options.scalar_bounds[static_cast<std::size_t>(i)];
    PARITY_CHECK_ARG(std::isfinite(b[0]) && std::isfinite(b[1]) && b[0] > 0.0 && b[0] <= b[1],
                     "gemm calibrate: scalar_bounds[", scalar_name(i), "]: [", b[0], ", ", b[1],
                     "] must satisfy 0 < low <= high");
  }
  return Status::ok();
}

Status check_measurement_device(const std::vector<LabelledMeasurements>& sets,
                                std::string_view device) {
  for (const LabelledMeasurements& labelled : sets) {
    if (labelled.set == nullptr) continue;
    PARITY_CHECK_ARG(labelled.set->device == device, "gemm calibrate: ", labelled.label,
                     " was recorded on device '", labelled.set->device, "', not on --hw '", device,
                     "': a fit must use measurements of the device it calibrates");
  }
  return Status::ok();
}

namespace {

constexpr int kFitDims = kNumModelScalars;
using FitPoint = std::array<double, kFitDims>;  // log of each scalar

// Nelder-Mead (standard coefficients) from `origin`, restarted from the best vertex up to three
// times, within `max_evaluations` calls of `loss` (counted in *evaluations). Returns the best point
// and its loss.
std::pair<FitPoint, double> nelder_mead(const std::function<double(const FitPoint&)>& loss,
                                        const FitPoint& origin, int max_evaluations,
                                        const int* evaluations) {
  constexpr int kDims = kFitDims;
  using Point = FitPoint;
  Point best = origin;
  double best_loss = loss(best);
  for (int restart = 0; restart < 3 && *evaluations < max_evaluations; ++restart) {
    std::array<Point, kDims + 1> simplex{};
    std::array<double, kDims + 1> values{};
    simplex[0] = best;
    values[0] = best_loss;
    for (int i = 0; i < kDims; ++i) {
      simplex[static_cast<std::size_t>(i + 1)] = best;
      simplex[static_cast<std::size_t>(i + 1)][static_cast<std::size_t>(i)] += 0.3;
      values[static_cast<std::size_t>(i + 1)] = loss(simplex[static_cast<std::size_t>(i + 1)]);
    }
    while (*evaluations < max_evaluations) {
      std::array<int, kDims + 1> order{};
      for (int i = 0; i <= kDims; ++i) order[static_cast<std::size_t>(i)] = i;
      std::sort(order.begin(), order.end(), [&](int a, int b) {
        return values[static_cast<std::size_t>(a)] < values[static_cast<std::size_t>(b)];
      });
      const auto lo = static_cast<std::size_t>(order[0]);
      const auto hi = static_cast<std::size_t>(order[kDims]);
      const auto second = static_cast<std::size_t>(order[kDims - 1]);
      if (std::abs(values[hi] - values[lo]) < 1e-10 * (1.0 + std::abs(values[lo]))) break;
      Point centroid{};
      for (int i = 0; i <= kDims; ++i) {
        if (static_cast<std::size_t>(i) == hi) continue;
        for (int j = 0; j < kDims; ++j) {
          centroid[static_cast<std::size_t>(j)] +=
              simplex[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] / kDims;
        }
      }
      const auto along = [&](double t) {
        Point p{};
        for (int j = 0; j < kDims; ++j) {
          const auto jj = static_cast<std::size_t>(j);
          p[jj] = centroid[jj] + t * (simplex[hi][jj] - centroid[jj]);
        }
        return p;
      };
      const Point reflected = along(-1.0);
      const double reflected_value = loss(reflected);
      if (reflected_value < values[lo]) {
        const Point expanded = along(-2.0);
        const double expanded_value = loss(expanded);
        if (expanded_value < reflected_value) {
          simplex[hi] = expanded, values[hi] = expanded_value;
        } else {
          simplex[hi] = reflected, values[hi] = reflected_value;
        }
      } else if (reflected_value < values[second]) {
        simplex[hi] = reflected, values[hi] = reflected_value;
      } else {
        const Point contracted = along(0.5);
        const double contracted_value = loss(contracted);
        if (contracted_value < values[hi]) {
          simplex[hi] = contracted, values[hi] = contracted_value;
        } else {
          for (int i = 0; i <= kDims; ++i) {
            const auto ii = static_cast<std::size_t>(i);
            if (ii == lo) continue;
            for (int j = 0; j < kDims; ++j) {
              const auto jj = static_cast<std::size_t>(j);
              simplex[ii][jj] = simplex[lo][jj] + 0.5 * (simplex[ii][jj] - simplex[lo][jj]);
            }
            values[ii] = loss(simplex[ii]);
          }
        }
      }
    }
    for (int i = 0; i <= kDims; ++i) {
      if (values[static_cast<std::size_t>(i)] < best_loss) {
        best_loss = values[static_cast<std::size_t>(i)];
        best = simplex[static_cast<std::size_t>(i)];
      }
    }
  }
  return {best, best_loss};
}

// Per-variant efficiency in closed form: within each shape, the candidates that differ only in
// the variant (same tile, cluster, split) are compared with their group's geometric mean, on
// the residual log(measured / predicted) of the fitted model without a variant table (so the
// cooperative schedules' exposed epilogue, which the model already charges, is not counted
// twice); a variant's efficiency is exp(-mean log excess), clamped to +-25%. Measuring the
// variant inside its group keeps tile-model errors out of the variant table.
void fit_variant_efficiency(const DeviceParams& device, const std::vector<MeasuredShape>& shapes,
                            ModelScalars* scalars) {
  ModelScalars plain = *scalars;
  plain.variant_efficiency.fill(1.0);
  const GemmModel plain_model(device, plain);
  std::array<double, 8> log_sum{};
  std::array<int, 8> count{};
  for (const MeasuredShape& shape : shapes) {
    const auto& cs = shape.candidates;
    std::vector<bool> done(cs.size(), false);
    for (std::size_t i = 0; i < cs.size(); ++i) {
      if (done[i]) continue;
      const Candidate& a = cs[i].candidate;
      std::vector<std::size_t> group;
      for (std::size_t j = i; j < cs.size(); ++j) {
        const Candidate& b = cs[j].candidate;
        if (!done[j] && b.tile_m == a.tile_m && b.tile_n == a.tile_n && b.tile_k == a.tile_k &&
            b.cluster_m == a.cluster_m && b.cluster_n == a.cluster_n && b.split_k == a.split_k) {
          group.push_back(j);
          done[j] = true;
        }
      }
      if (group.size() < 2) continue;
      const ProblemClass key = problem_class(shape.problem);
      std::vector<double> residual;
      double mean_log = 0.0;
      for (std::size_t j : group) {
        const double predicted_us =
            plain_model.predict_us(shape.problem, plain_model.prepare(key, cs[j].candidate));
        residual.push_back(std::log(cs[j].median_ms * 1e3 / predicted_us));
        mean_log += residual.back();
      }
      mean_log /= static_cast<double>(group.size());
      for (std::size_t g = 0; g < group.size(); ++g) {
        const int v = cs[group[g]].candidate.variant;
        if (v < 0 || v >= 8 || !std::isfinite(residual[g])) continue;
        log_sum[static_cast<std::size_t>(v)] += residual[g] - mean_log;
        ++count[static_cast<std::size_t>(v)];
      }
    }
  }
  for (std::size_t v = 0; v < 8; ++v) {
    if (count[v] < 3) continue;
    scalars->variant_efficiency[v] = std::clamp(std::exp(-log_sum[v] / count[v]), 0.75, 1.25);
  }
}

}  // namespace

Result<FitResult> fit_scalars(const DeviceParams& device, const ModelScalars& start,
                              const std::vector<MeasuredShape>& shapes, const FitOptions& options) {
  PARITY_CHECK_ARG(!shapes.empty(), "gemm calibrate: no calibration shapes in the measurements");
  PARITY_RETURN_IF_ERROR(validate_fit_options(options));
  std::size_t measured = 0;
  for (const auto& shape : shapes) measured += shape.candidates.size();
  PARITY_CHECK_ARG(measured > 0, "gemm calibrate: the ", shapes.size(),
                   " calibration shapes have 0 measured candidates: nothing to fit");
  const auto to_scalars = [&options, &start](const FitPoint& x) {
    std::array<double, kFitDims> values{};
    for (int i = 0; i < kFitDims; ++i) {
      const auto& bounds = options.scalar_bounds[static_cast<std::size_t>(i)];
      values[static_cast<std::size_t>(i)] =
          std::clamp(std::exp(x[static_cast<std::size_t>(i)]), bounds[0], bounds[1]);
    }
    ModelScalars scalars = scalars_from_array(values);
    // A kept table is part of the model being fitted; a refitted one is fitted afterwards.
    if (!options.fit_variant_efficiency) scalars.variant_efficiency = start.variant_efficiency;
    return scalars;
  };
  int evaluations = 0;
  const auto loss = [&](const FitPoint& x) {
    ++evaluations;
    return calibration_loss(GemmModel(device, to_scalars(x)), shapes, options);
  };

  FitResult result;
  result.shapes = static_cast<int>(shapes.size());
  for (const auto& shape : shapes) result.samples += static_cast<int>(shape.candidates.size());
  result.loss_before = calibration_loss(GemmModel(device, start), shapes, options,
                                        &result.rms_log_error_before);
  PARITY_CHECK_ARG(std::isfinite(result.loss_before), "gemm calibrate: the loss at the start point is ",
                   result.loss_before, " (a measured time of 0 or a non-finite prediction)");

  // Nelder-Mead in log space from the start scalars.
  FitPoint origin{};
  const auto start_values = scalars_to_array(start);
  for (int i = 0; i < kFitDims; ++i) {
    origin[static_cast<std::size_t>(i)] = std::log(start_values[static_cast<std::size_t>(i)]);
  }
  const FitPoint best = nelder_mead(loss, origin, options.max_evaluations, &evaluations).first;
  result.scalars = to_scalars(best);
  result.scalars.variant_efficiency = start.variant_efficiency;
  if (options.fit_variant_efficiency) fit_variant_efficiency(device, shapes, &result.scalars);
  result.loss_after = calibration_loss(GemmModel(device, result.scalars), shapes, options,
                                       &result.rms_log_error_after);
  PARITY_CHECK_ARG(std::isfinite(result.loss_after), "gemm calibrate: the fitted loss is ",
                   result.loss_after, ": refusing to write a degenerate fit");
  result.evaluations = evaluations;
  return result;
}

Result<CrossValidationResult> cross_validate(const DeviceParams& device, const ModelScalars& start,
                                             const std::vector<MeasuredShape>& shapes, int folds,
                                             const FitOptions& options,
                                             const SelectorOptions& selector_options) {
  PARITY_CHECK_ARG(folds >= 2, "gemm calibrate: --cv-folds=", folds, " must be >= 2");
  // Sizes in order of first appearance, dealt to folds round-robin.
  std::vector<GemmProblem> sizes;
  std::vector<int> fold_of(shapes.size(), 0);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    std::size_t at = 0;
    while (at < sizes.size() && !same_size(sizes[at], shapes[i].problem)) ++at;
    if (at == sizes.size()) sizes.push_back(shapes[i].problem);
    fold_of[i] = static_cast<int>(at % static_cast<std::size_t>(folds));
  }
  PARITY_CHECK_ARG(static_cast<int>(sizes.size()) >= folds, "gemm calibrate: --cv-folds=", folds,
                   " needs at least as many distinct shapes (", sizes.size(), ")");
  CrossValidationResult result;
  result.folds = folds;
  result.shape_ratio.assign(shapes.size(), 0.0);
  std::vector<double> ratio, oracle_ms, chosen_ms, heuristic_log;
  std::vector<std::pair<double, std::string>> scored;
  double squared = 0.0;
  std::size_t samples = 0;
  for (int fold = 0; fold < folds; ++fold) {
    std::vector<MeasuredShape> train, test;
    std::vector<std::size_t> test_index;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      (fold_of[i] == fold ? test : train).push_back(shapes[i]);
      if (fold_of[i] == fold) test_index.push_back(i);
    }
    PARITY_ASSIGN_OR_RETURN(const FitResult fit, fit_scalars(device, start, train, options));
    Selector selector(GemmModel(device, fit.scalars), selector_options);
    const EvaluationReport report = evaluate_selector(selector, test);
    std::vector<double> fold_ratio, fold_oracle, fold_chosen;
    std::size_t next = 0;  // evaluate_selector keeps the order and skips empty shapes only
    for (const ShapeEvaluation& e : report.shapes) {
      while (next < test.size() && test[next].name != e.name) ++next;
      if (next < test.size()) result.shape_ratio[test_index[next++]] = e.selected_ratio;
      ratio.push_back(e.selected_ratio);
      oracle_ms.push_back(e.oracle_ms);
      chosen_ms.push_back(e.selected_ms);
      fold_ratio.push_back(e.selected_ratio);
      fold_oracle.push_back(e.oracle_ms);
      fold_chosen.push_back(e.selected_ms);
      if (e.heuristic_ratio > 0) heuristic_log.push_back(std::log(e.heuristic_ratio));
      scored.emplace_back(e.selected_ratio, e.name);
    }
    result.fold_geomean.push_back(summarize_ratios(fold_ratio, fold_oracle, fold_chosen).geomean);
    double rms = 0.0;
    calibration_loss(GemmModel(device, fit.scalars), test, 0.0, &rms);
    std::size_t count = 0;
    for (const auto& shape : test) count += shape.candidates.size();
    squared += rms * rms * static_cast<double>(count);
    samples += count;
  }
  const RatioSummary pooled = summarize_ratios(ratio, oracle_ms, chosen_ms);
  result.shapes = pooled.shapes;
  result.geomean = pooled.geomean;
  result.worst = pooled.worst;
  result.within_5_percent = pooled.within_5_percent;
  double heuristic_sum = 0.0;
  for (const double v : heuristic_log) heuristic_sum += v;
  result.heuristic_geomean =
      heuristic_log.empty() ? 0.0 : std::exp(heuristic_sum / static_cast<double>(heuristic_log.size()));
  result.held_out_rms_log_error = samples > 0 ? std::sqrt(squared / static_cast<double>(samples)) : 0.0;
  std::sort(scored.begin(), scored.end());
  for (std::size_t i = 0; i < scored.size() && i < 5; ++i) {
    std::ostringstream line;
    line << scored[i].second << " " << std::fixed << std::setprecision(3) << scored[i].first;
    result.worst_shapes.push_back(line.str());
  }
  return result;
}

}  // namespace parity::gemm
