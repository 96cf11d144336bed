// `parity gemm select | calibrate | eval | agree`: the analytical GEMM selector on any catalogue
// GPU (CPU only), its calibration from measurements, its evaluation against measured oracles, and
// its agreement with AMD Origami's published rankings. Bad input is exit code 2 naming the
// parameter.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "parity/build_info.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/evaluation.hpp"
#include "parity/gemm/origami_agreement.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::cli {
namespace {

using nlohmann::json;
namespace gemm = parity::gemm;

struct GemmOptions {
  std::string hw;
  std::string data_dir;
  std::string calibration_file;  // overrides <data dir>/calibration/<hw>_gemm.json
  long long m = 0, n = 0, k = 0, batch = 1;
  long long lda = 0, ldb = 0, ldc = 0;
  int alignment_bytes = 0;
  std::string dtype = "bf16";
  std::string layout = "TN";
  std::string epilogue = "none";
  int top = 5;
  bool is_json_output = false;
  bool is_latency_report = false;
  int latency_samples = 10000;
  std::string measurements;
  std::vector<std::string> measurement_files;  // calibrate: repeatable --measurements
  // calibrate/eval: shapes measured only to calibrate (absent from the suite); default the
  // repository's extra calibration CSVs that exist
  std::vector<std::string> calibration_shapes;
  int cv_folds = 0;
  std::string cv_csv;  // calibrate: per-shape held-out ratios of the cross-validation
  std::string shapes = std::string(PARITY_SOURCE_DIR) + "/bench/shapes/gemm_shapes_dev.csv";
  std::string out;
  std::string out_dir;
  std::string split = "evaluation";
  int max_evaluations = 4000;
  double regret_weight = gemm::FitOptions{}.regret_weight;
  std::string origami_csv;
  gemm::SelectorOptions selector_options;
};

std::optional<std::filesystem::path> data_dir_of(const GemmOptions& options) {
  if (options.data_dir.empty()) return std::nullopt;
  return std::filesystem::path(options.data_dir);
}

std::string fixed(double v, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << v;
  return out.str();
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

struct LoadedModel {
  gemm::DeviceParams device;
  gemm::GemmCalibration calibration;
};

Result<LoadedModel> load_model(const std::string& hw_name, const GemmOptions& options) {
  PARITY_CHECK_ARG(!hw_name.empty(), "gemm: --hw is required (a catalogue GPU, e.g. h200, mi300x)");
  auto spec = hw::find_hardware(hw_name, data_dir_of(options));
  if (!spec) return spec.status().with_context("--hw");
  PARITY_ASSIGN_OR_RETURN(auto device, gemm::device_params_from_spec(*spec));
  LoadedModel loaded;
  if (!options.calibration_file.empty()) {
    PARITY_ASSIGN_OR_RETURN(loaded.calibration, gemm::read_gemm_calibration(options.calibration_file));
  } else {
    PARITY_ASSIGN_OR_RETURN(loaded.calibration,
                            gemm::load_gemm_calibration_or_default(device, data_dir_of(options)));
  }
  loaded.device = std::move(device);
  return loaded;
}

std::string calibration_label(const gemm::GemmCalibration& calibration, const GemmOptions& options) {
  if (calibration.is_default) return "built-in defaults (uncalibrated)";
  const std::string file = options.calibration_file.empty() ? calibration.device + "_gemm.json"
                                                            : options.calibration_file;
  return "fitted (" + file + ")";
}

Result<gemm::GemmProblem> problem_of(const GemmOptions& options) {
  gemm::GemmProblem problem;
  problem.m = options.m;
  problem.n = options.n;
  problem.k = options.k;
  problem.batch = options.batch;
  PARITY_ASSIGN_OR_RETURN(const DType dtype, gemm::parse_gemm_dtype(options.dtype));
  problem.a_dtype = problem.b_dtype = problem.c_dtype = dtype;
  PARITY_ASSIGN_OR_RETURN(problem.layout, gemm::parse_layout(options.layout));
  PARITY_ASSIGN_OR_RETURN(problem.epilogue, gemm::parse_epilogue(options.epilogue));
  problem.lda = options.lda;
  problem.ldb = options.ldb;
  problem.ldc = options.ldc;
  problem.alignment_bytes = options.alignment_bytes;
  PARITY_RETURN_IF_ERROR(problem.validate());
  return problem;
}

// CPU time of this thread: on a shared, oversubscribed host wall time also counts preemption.
double thread_cpu_us() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) * 1e-3;
}

double percentile(std::vector<double> values, double q) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(std::min<double>(
      static_cast<double>(values.size() - 1), std::floor(q * static_cast<double>(values.size()))));
  return values[index];
}

Status run_latency_report(const GemmOptions& options, const LoadedModel& loaded,
                          const gemm::GemmProblem& base) {
  PARITY_CHECK_ARG(options.latency_samples >= 100, "gemm select: --latency-samples=",
                   options.latency_samples, " must be >= 100");
  gemm::Selector selector(gemm::GemmModel(loaded.device, loaded.calibration.scalars));
  selector.set_candidates(gemm::modelled_space(gemm::problem_class(base), loaded.device));
  const auto& space = selector.candidates();
  using Clock = std::chrono::steady_clock;
  // One-time cost: preparing the per-candidate constants for this problem class.
  const auto cold_start = Clock::now();
  auto first = selector.select(base, static_cast<std::size_t>(options.top));
  const double cold_us = std::chrono::duration<double, std::micro>(Clock::now() - cold_start).count();
  PARITY_RETURN_IF_ERROR(first.status());
  // Unseen shapes: log-uniform sizes in [1, 32768], fixed seed so the report is reproducible.
  std::mt19937_64 rng(20261129);
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  std::vector<double> samples_us;
  samples_us.reserve(static_cast<std::size_t>(options.latency_samples));
  double checksum = 0.0;
  // The thread-CPU clock is a system call (~0.2 us, no vDSO): read once around the whole loop, so
  // the per-sample wall interval holds select() and two vDSO clock reads only.
  const double cpu_start_us = thread_cpu_us();
  for (int i = 0; i < options.latency_samples; ++i) {
    gemm::GemmProblem problem = base;
    problem.m = static_cast<std::int64_t>(std::exp(log_size(rng)));
    problem.n = static_cast<std::int64_t>(std::exp(log_size(rng)));
    problem.k = static_cast<std::int64_t>(std::exp(log_size(rng)));
    problem.alignment_bytes = 0;
    const auto start = Clock::now();
    auto selection = selector.select(problem, static_cast<std::size_t>(options.top));
    samples_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (selection) checksum += selection->predicted_us;
  }
  const double p50 = percentile(samples_us, 0.50), p99 = percentile(samples_us, 0.99);
  // Includes drawing the shapes and the clock reads: an upper bound on select()'s CPU time.
  const double cpu_mean_us = (thread_cpu_us() - cpu_start_us) / static_cast<double>(options.latency_samples);
  if (options.is_json_output) {
    std::cout << json{{"hw", loaded.device.name},
                      {"candidates", space.size()},
                      {"samples", samples_us.size()},
                      {"first_call_us", cold_us},
                      {"p50_us", p50},
                      {"p99_us", p99},
                      {"max_us", percentile(samples_us, 1.0)},
                      {"thread_cpu_mean_us_per_sample", cpu_mean_us},
                      {"checksum", checksum}}
                     .dump(1)
              << "\n";
  } else {
    std::cout << "selection latency on " << loaded.device.name << ", " << space.size()
              << " candidates, " << samples_us.size() << " unseen shapes (host steady_clock):\n"
              << "  first call (prepares per-class constants): " << fixed(cold_us, 1) << " us\n"
              << "  p50 " << fixed(p50, 2) << " us, p99 " << fixed(p99, 2) << " us, max "
              << fixed(percentile(samples_us, 1.0), 1) << " us (wall)\n"
              << "  mean " << fixed(cpu_mean_us, 2)
              << " us thread CPU time per sample (shape drawing and clock reads included; excludes "
                 "preemption on a shared host)\n";
  }
  return Status::ok();
}

Status run_select(const GemmOptions& options) {
  PARITY_CHECK_ARG(options.top >= 1, "gemm select: --top=", options.top, " must be >= 1");
  GemmOptions sized = options;
  if (options.is_latency_report && options.m == 0 && options.n == 0 && options.k == 0) {
    sized.m = sized.n = sized.k = 4096;  // the latency report draws its own shapes
  }
  PARITY_ASSIGN_OR_RETURN(const auto problem, problem_of(sized));
  PARITY_ASSIGN_OR_RETURN(const auto loaded, load_model(options.hw, options));
  if (options.is_latency_report) return run_latency_report(options, loaded, problem);
  gemm::ModelledProvider provider(loaded.device);
  PARITY_ASSIGN_OR_RETURN(const auto space, provider.enumerate(problem));
  gemm::Selector selector(gemm::GemmModel(loaded.device, loaded.calibration.scalars));
  PARITY_ASSIGN_OR_RETURN(const auto selection,
                          selector.select(problem, space, static_cast<std::size_t>(options.top)));
  const bool is_amd = loaded.device.kind == gemm::ModelKind::kOrigami;
  const std::string basis = is_amd ? "modelled (AMD, Origami-class model; not a measurement)"
                                   : "modelled (Hopper model)";
  if (options.is_json_output) {
    json out;
    out["hw"] = loaded.device.name;
    out["problem"] = problem.describe();
    out["basis"] = basis;
    out["calibration"] = calibration_label(loaded.calibration, options);
    out["candidates"] = space.size();
    out["choice"] = {{"config", selection.choice.describe()},
                     {"short", selection.choice.short_name()},
                     {"predicted_us", selection.predicted_us},
                     {"predicted_tflops", selection.predicted_tflops}};
    out["top"] = json::array();
    for (const auto& r : selection.top) {
      out["top"].push_back({{"config", space[r.index].describe()},
                            {"short", space[r.index].short_name()},
                            {"predicted_us", r.predicted_us},
                            {"predicted_tflops", problem.flop_count() / (r.predicted_us * 1e-6) / 1e12}});
    }
    std::cout << out.dump(1) << "\n";
    return Status::ok();
  }
  std::cout << "gemm select on " << loaded.device.name << ": " << problem.describe() << "\n"
            << "  basis: " << basis << "; scalars: " << calibration_label(loaded.calibration, options)
            << "; " << space.size() << " candidates\n"
            << "  choice: " << selection.choice.short_name() << "  predicted "
            << fixed(selection.predicted_us, 2) << " us, " << fixed(selection.predicted_tflops, 1)
            << " TFLOP/s\n  config: " << selection.choice.describe() << "\n  top "
            << selection.top.size() << ":\n";
  int rank = 1;
  for (const auto& r : selection.top) {
    std::cout << "   " << rank++ << ". " << std::left << std::setw(34) << space[r.index].short_name()
              << std::right << std::setw(11) << fixed(r.predicted_us, 2) << " us "
              << std::setw(8) << fixed(problem.flop_count() / (r.predicted_us * 1e-6) / 1e12, 1)
              << " TFLOP/s\n";
  }
  return Status::ok();
}

// Recorded runs keep their measurements gzipped (bench/results/*/gemm_measurements_*.json.gz):
// a FILE ending in .gz is read through `gzip -dc`, so eval replays a run without unpacking it.
Result<gemm::MeasurementSet> read_measurements(const std::string& path) {
  PARITY_CHECK_ARG(!path.empty(), "gemm: --measurements FILE is required");
  if (path.size() < 3 || path.compare(path.size() - 3, 3, ".gz") != 0) {
    return gemm::read_measurements_file(path);
  }
  PARITY_CHECK_ARG(std::filesystem::exists(path), "gemm: --measurements '", path,
                   "' does not exist");
  std::string quoted = "'";
  for (const char c : path) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("gzip -dc " + quoted).c_str(), "r"), pclose);
  if (!pipe) return io_error("gemm: cannot run gzip -dc on '", path, "'");
  std::string text;
  char buffer[1 << 16];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof(buffer), pipe.get())) > 0) text.append(buffer, got);
  const int rc = pclose(pipe.release());
  if (rc != 0) return io_error("gemm: gzip -dc '", path, "' failed (status ", rc, ")");
  auto set = gemm::parse_measurements_json(text);
  if (!set) return set.status().with_context(path);
  return set;
}

// The repository's extra calibration CSVs (each disjoint from the dev suite, checked by tests);
// a measurement of their shapes calibrates only when its CSV is among the calibration shapes.
std::vector<std::string> default_calibration_shapes() {
  std::vector<std::string> paths;
  for (const char* name :
       {"gemm_shapes_calibration_extra.csv", "gemm_shapes_calibration_extra2.csv"}) {
    const std::string path = std::string(PARITY_SOURCE_DIR) + "/bench/shapes/" + name;
    if (std::filesystem::exists(path)) paths.push_back(path);
  }
  return paths;
}

// The extra calibration shapes: the files given with --calibration-shapes (repeatable, each must
// exist), else the repository's default files present. Returns an empty suite when there are none.
Result<gemm::ShapeSuite> read_calibration_shapes(const GemmOptions& options, json* files) {
  std::vector<std::string> paths = options.calibration_shapes;
  if (paths.empty()) paths = default_calibration_shapes();
  gemm::ShapeSuite extra;
  for (const auto& path : paths) {
    auto suite = gemm::read_shape_suite(path);
    if (!suite) return suite.status().with_context("--calibration-shapes");
    extra.names.insert(extra.names.end(), suite->names.begin(), suite->names.end());
    extra.problems.insert(extra.problems.end(), suite->problems.begin(), suite->problems.end());
    if (files != nullptr) files->push_back(path);
  }
  return extra;
}

Status run_calibrate(const GemmOptions& options) {
  PARITY_CHECK_ARG(!options.measurement_files.empty(),
                   "gemm calibrate: --measurements FILE is required (repeatable)");
  PARITY_CHECK_ARG(!options.out.empty() || options.cv_folds > 0,
                   "gemm calibrate: --out FILE is required (or --cv-folds K to cross-validate only)");
  PARITY_CHECK_ARG(options.cv_folds == 0 || options.cv_folds >= 2, "gemm calibrate: --cv-folds=",
                   options.cv_folds, " must be >= 2 (0 = no cross-validation)");
  std::vector<gemm::MeasurementSet> sets;
  for (const auto& path : options.measurement_files) {
    PARITY_ASSIGN_OR_RETURN(auto set, read_measurements(path));
    if (!sets.empty()) {
      PARITY_CHECK_ARG(set.device == sets.front().device, "gemm calibrate: --measurements '", path,
                       "' is from device '", set.device, "', '", options.measurement_files.front(),
                       "' from '", sets.front().device, "' (one device per calibration)");
    }
    sets.push_back(std::move(set));
  }
  const std::string hw_name = options.hw.empty() ? sets.front().device : options.hw;
  PARITY_ASSIGN_OR_RETURN(auto loaded, load_model(hw_name, options));
  PARITY_ASSIGN_OR_RETURN(const auto suite, gemm::read_shape_suite(options.shapes));
  json extra_files = json::array();
  PARITY_ASSIGN_OR_RETURN(const auto extra, read_calibration_shapes(options, &extra_files));
  std::vector<gemm::LabelledMeasurements> labelled;
  for (std::size_t i = 0; i < sets.size(); ++i) {
    labelled.push_back({options.measurement_files[i], &sets[i]});
  }
  const auto admitted = gemm::select_calibration_shapes(labelled, suite, &extra);
  for (const auto& message : admitted.ignored) std::cout << "gemm calibrate: " << message << "\n";
  std::size_t measured_shapes = 0;
  for (const auto& set : sets) measured_shapes += set.shapes.size();
  PARITY_CHECK_ARG(!admitted.shapes.empty(), "gemm calibrate: --measurements holds no calibration "
                   "shape (", measured_shapes, " shapes; the split is row % 3 == 0 of ",
                   options.shapes, ", plus the extra calibration shapes)");
  gemm::FitOptions fit_options;
  fit_options.max_evaluations = options.max_evaluations;
  fit_options.regret_weight = options.regret_weight;
  const gemm::ModelScalars start = gemm::default_scalars(loaded.device);
  if (options.cv_folds > 0) {
    PARITY_ASSIGN_OR_RETURN(const auto cv, gemm::cross_validate(loaded.device, start, admitted.shapes,
                                                                options.cv_folds, fit_options,
                                                                options.selector_options));
    std::cout << "gemm calibrate: " << cv.folds << "-fold cross-validation on " << cv.shapes
              << " calibration shape measurements (held out, t_oracle / t_pick)\n"
              << "  geomean " << fixed(cv.geomean, 4) << "  worst " << fixed(cv.worst, 3)
              << "  within 5% " << fixed(100 * cv.within_5_percent, 0) << "%  heuristic top-1 "
              << fixed(cv.heuristic_geomean, 4) << "  held-out rms log-time error "
              << fixed(cv.held_out_rms_log_error, 3) << "\n  per fold:";
    for (const double g : cv.fold_geomean) std::cout << " " << fixed(g, 4);
    std::cout << "\n  lowest:";
    for (const auto& w : cv.worst_shapes) std::cout << "  " << w;
    std::cout << "\n";
    // Held-out geomean per measurements file: figures on a grown set stay comparable by file.
    for (const auto& file : options.measurement_files) {
      double log_sum = 0.0, worst = 1.0;
      std::size_t count = 0, within = 0;
      for (std::size_t i = 0; i < admitted.shapes.size(); ++i) {
        const std::string& origin = admitted.origins[i];
        if (origin.compare(0, file.size() + 1, file + ":") != 0) continue;
        const double r = cv.shape_ratio[i];
        if (r <= 0) continue;
        log_sum += std::log(r);
        worst = std::min(worst, r);
        within += r >= 0.95 ? 1 : 0;
        ++count;
      }
      if (count == 0) continue;
      std::cout << "  " << file << ": " << count << " shapes, geomean "
                << fixed(std::exp(log_sum / static_cast<double>(count)), 4) << "  worst "
                << fixed(worst, 3) << "  within 5% "
                << fixed(100.0 * static_cast<double>(within) / static_cast<double>(count), 0)
                << "%\n";
    }
    if (!options.cv_csv.empty()) {
      // Per held-out shape: what the per-file lines above summarise, for residual analyses.
      std::ofstream csv(options.cv_csv);
      if (!csv) return io_error("gemm calibrate: cannot write '", options.cv_csv, "'");
      csv << "origin,shape,m,n,k,batch,held_out_ratio\n";
      for (std::size_t i = 0; i < admitted.shapes.size(); ++i) {
        const auto& shape = admitted.shapes[i];
        csv << '"' << admitted.origins[i] << "\"," << shape.name << ',' << shape.problem.m << ','
            << shape.problem.n << ',' << shape.problem.k << ',' << shape.problem.batch << ','
            << cv.shape_ratio[i] << '\n';
      }
      if (!csv) return io_error("gemm calibrate: write to '", options.cv_csv, "' failed");
    }
    if (options.out.empty()) return Status::ok();
  }
  PARITY_ASSIGN_OR_RETURN(const auto fit,
                          gemm::fit_scalars(loaded.device, start, admitted.shapes, fit_options));
  gemm::GemmCalibration calibration;
  calibration.device = loaded.device.name;
  calibration.scalars = fit.scalars;
  calibration.is_default = false;
  json provenance;
  provenance["kind"] = "measured_here";
  provenance["method"] = "Nelder-Mead on log-time error + selection regret (docs/gemm.md)";
  provenance["measurements"] = options.measurement_files;
  provenance["measurements_device"] = sets.front().device;
  json file_provenance = json::array();
  for (const auto& set : sets) file_provenance.push_back(json::parse(set.provenance_json, nullptr, false));
  provenance["measurements_provenance"] = file_provenance;
  provenance["split"] = "calibration rows: data row index % 3 == 0 of " + options.shapes +
                        ", minus any size of an evaluation row; plus the extra calibration shapes";
  provenance["extra_calibration_shapes"] = extra_files;
  json names = json::array();
  for (std::size_t i = 0; i < admitted.shapes.size(); ++i) {
    names.push_back(admitted.shapes[i].name + " <- " + admitted.origins[i]);
  }
  provenance["shapes"] = names;
  provenance["ignored"] = admitted.ignored;
  provenance["regret_weight"] = fit_options.regret_weight;
  provenance["samples"] = fit.samples;
  provenance["loss_before"] = fit.loss_before;
  provenance["loss_after"] = fit.loss_after;
  provenance["rms_log_error_before"] = fit.rms_log_error_before;
  provenance["rms_log_error_after"] = fit.rms_log_error_after;
  provenance["evaluations"] = fit.evaluations;
  provenance["date"] = utc_now();
  provenance["commit"] = build::kGitSha;
  calibration.provenance_json = provenance.dump();
  PARITY_RETURN_IF_ERROR(gemm::write_gemm_calibration(calibration, options.out));
  std::cout << "gemm calibrate: " << admitted.shapes.size() << " calibration shapes from "
            << sets.size() << " file(s), " << admitted.ignored.size() << " ignored, " << fit.samples
            << " candidates (timed or screened), " << fit.evaluations << " model evaluations\n"
            << "  loss " << fixed(fit.loss_before, 4) << " -> " << fixed(fit.loss_after, 4)
            << ", rms log-time error " << fixed(fit.rms_log_error_before, 3) << " -> "
            << fixed(fit.rms_log_error_after, 3) << "\n";
  const auto values = gemm::scalars_to_array(fit.scalars);
  for (int i = 0; i < gemm::kNumModelScalars; ++i) {
    std::cout << "  " << std::left << std::setw(22) << gemm::scalar_name(i) << std::right
              << fixed(values[static_cast<std::size_t>(i)], 4) << "\n";
  }
  std::cout << "  wrote " << options.out << "\n";
  return Status::ok();
}

Status write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return io_error("gemm eval: cannot write '", path.string(), "'");
  out << text;
  return out ? Status::ok() : io_error("gemm eval: write to '", path.string(), "' failed");
}

// Every measured candidate of every evaluated shape with the model's prediction and rank, in the
// order evaluate_selector ranked them: the residual analyses of docs/gemm.md read this (one row
// per candidate, the pick has rank 0).
Status write_candidates_csv(const std::filesystem::path& path, const gemm::EvaluationReport& report,
                            const std::vector<gemm::MeasuredShape>& shapes) {
  std::ofstream out(path);
  if (!out) return io_error("gemm eval: cannot write '", path.string(), "'");
  out << "shape,m,n,k,batch,alignment_bytes,tile_m,tile_n,tile_k,cluster_m,cluster_n,split_k,"
         "mi_m,mi_n,family,variant,heuristic_rank,screened_only,measured_us,predicted_us,model_rank\n";
  out << std::setprecision(6);
  for (const auto& evaluated : report.shapes) {
    const auto& shape = shapes[evaluated.shape_index];
    const auto& p = shape.problem;
    for (std::size_t r = 0; r < evaluated.ranking.size(); ++r) {
      const auto& entry = evaluated.ranking[r];
      const auto& measured = shape.candidates[entry.index];
      const auto& c = measured.candidate;
      out << shape.name << ',' << p.m << ',' << p.n << ',' << p.k << ',' << p.batch << ','
          << p.alignment_class_bytes() << ',' << c.tile_m << ',' << c.tile_n << ',' << c.tile_k
          << ',' << c.cluster_m << ',' << c.cluster_n << ',' << c.split_k << ',' << c.mi_m << ','
          << c.mi_n << ',' << c.kernel_family << ',' << c.variant << ',' << measured.heuristic_rank
          << ',' << (measured.is_screened_only ? 1 : 0) << ',' << measured.median_ms * 1e3 << ','
          << entry.predicted_us << ',' << r << '\n';
    }
  }
  return out ? Status::ok() : io_error("gemm eval: write to '", path.string(), "' failed");
}

Status run_eval(const GemmOptions& options) {
  PARITY_CHECK_ARG(!options.out_dir.empty(), "gemm eval: --out-dir DIR is required");
  PARITY_CHECK_ARG(options.split == "evaluation" || options.split == "calibration" ||
                       options.split == "all",
                   "gemm eval: --split='", options.split, "' (expected evaluation, calibration, all)");
  PARITY_ASSIGN_OR_RETURN(const auto set, read_measurements(options.measurements));
  const std::string hw_name = options.hw.empty() ? set.device : options.hw;
  PARITY_ASSIGN_OR_RETURN(const auto loaded, load_model(hw_name, options));
  PARITY_ASSIGN_OR_RETURN(const auto suite, gemm::read_shape_suite(options.shapes));
  PARITY_ASSIGN_OR_RETURN(const auto extra, read_calibration_shapes(options, nullptr));
  std::vector<gemm::MeasuredShape> shapes;
  for (const auto& shape : set.shapes) {
    const auto split = gemm::split_of(shape, suite, &extra);
    if (options.split == "all" ||
        (options.split == "evaluation") == (split == gemm::ShapeSplit::kEvaluation)) {
      shapes.push_back(shape);
    }
  }
  PARITY_CHECK_ARG(!shapes.empty(), "gemm eval: no ", options.split, " shapes in '",
                   options.measurements, "'");
  gemm::Selector selector(gemm::GemmModel(loaded.device, loaded.calibration.scalars),
                          options.selector_options);
  auto report = gemm::evaluate_selector(selector, shapes);
  report.split = options.split;
  report.calibration_source = calibration_label(loaded.calibration, options);
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  const std::filesystem::path dir(options.out_dir);
  PARITY_RETURN_IF_ERROR(write_text(dir / "gemm_eval.json", gemm::evaluation_to_json(report)));
  PARITY_RETURN_IF_ERROR(write_text(dir / "gemm_eval.md", gemm::evaluation_to_markdown(report)));
  PARITY_RETURN_IF_ERROR(write_text(dir / "gemm_eval.svg", gemm::evaluation_to_svg(report)));
  PARITY_RETURN_IF_ERROR(write_candidates_csv(dir / "gemm_eval_candidates.csv", report, shapes));
  const auto line = [](const char* name, const gemm::RatioSummary& s) {
    std::cout << "  " << std::left << std::setw(24) << name << std::right << "geomean "
              << fixed(s.geomean, 3) << "  worst " << fixed(s.worst, 3) << "  within 5% "
              << fixed(100 * s.within_5_percent, 0) << "%  (" << s.shapes << " shapes)\n";
  };
  std::cout << "gemm eval on " << report.device << " (" << options.split << " shapes, "
            << report.calibration_source << "): t_oracle / t_chosen\n";
  line("model selector", report.selector);
  line("heuristic top-1", report.heuristic);
  std::cout << "  within the noise floor: model " << fixed(100 * report.selector_within_noise, 0)
            << "%, heuristic " << fixed(100 * report.heuristic_within_noise, 0) << "%\n";
  std::cout << "  mean Kendall tau " << fixed(report.mean_kendall_tau, 3) << "\n  wrote "
            << (dir / "gemm_eval.{json,md,svg}").string() << ", gemm_eval_candidates.csv\n";
  return Status::ok();
}

Status run_agree(const GemmOptions& options) {
  PARITY_ASSIGN_OR_RETURN(const auto loaded, load_model(options.hw, options));
  PARITY_CHECK_ARG(loaded.device.kind == gemm::ModelKind::kOrigami, "gemm agree: --hw=",
                   options.hw, " is not an AMD GPU (Origami rankings exist for gfx942/gfx950)");
  std::string csv = options.origami_csv;
  if (csv.empty()) {
    csv = (hw::resolve_data_dir(data_dir_of(options)) / "reference" / "origami" /
           (loaded.device.arch + "_bf16.csv"))
              .string();
  }
  PARITY_ASSIGN_OR_RETURN(const auto rankings, gemm::read_origami_rankings(csv));
  gemm::ProblemClass key;
  const auto space = gemm::modelled_space(key, loaded.device);
  gemm::Selector selector(gemm::GemmModel(loaded.device, loaded.calibration.scalars));
  const auto r = gemm::compare_with_origami(selector, rankings, space);
  if (options.is_json_output) {
    std::cout << json{{"hw", loaded.device.name},
                      {"rankings", csv},
                      {"problems", r.problems},
                      {"top1_exact", r.top1_exact},
                      {"top1_macro_tile", r.top1_macro_tile},
                      {"top10_overlap_exact", r.top10_overlap_exact},
                      {"top10_overlap_macro_tile", r.top10_overlap_macro_tile},
                      {"spearman_shared", r.spearman_shared},
                      {"spearman_shared_problems", r.spearman_shared_problems},
                      {"spearman_their_top10", r.spearman_their_top10},
                      {"mean_rank_of_their_top1", r.rank_of_their_top1}}
                     .dump(1)
              << "\n";
    return Status::ok();
  }
  std::cout << "agreement with Origami's top-10 (" << csv << "), " << r.problems
            << " problems, model vs model (no measurement):\n"
            << "  top-1 match: exact config " << fixed(100 * r.top1_exact, 1) << "%, macro tile "
            << fixed(100 * r.top1_macro_tile, 1) << "%\n"
            << "  top-10 overlap: exact configs " << fixed(100 * r.top10_overlap_exact, 1)
            << "%, macro tiles " << fixed(100 * r.top10_overlap_macro_tile, 1) << "%\n"
            << "  Spearman rho on shared configs " << fixed(r.spearman_shared, 3) << " ("
            << r.spearman_shared_problems << " problems with >= 3 shared); on their 10 configs "
            << fixed(r.spearman_their_top10, 3) << "\n  mean rank we give their top-1: "
            << fixed(r.rank_of_their_top1, 1) << " (0 = our top-1)\n";
  return Status::ok();
}

void add_problem_options(CLI::App& command, GemmOptions& o) {
  command.add_option("--hw", o.hw, "Catalogue GPU (h200, h100_sxm, b200, mi300x, mi350x, ...)");
  command.add_option("--m", o.m, "Rows of C");
  command.add_option("--n", o.n, "Columns of C");
  command.add_option("--k", o.k, "Reduction length");
  command.add_option("--batch", o.batch, "Batch count (default 1)");
  command.add_option("--dtype", o.dtype, "bf16 (default), fp16, fp32-tf32");
  command.add_option("--layout", o.layout, "TN (default), NN, NT, TT (cuBLAS column-major)");
  command.add_option("--epilogue", o.epilogue, "none (default), bias, relu");
  command.add_option("--lda", o.lda, "Leading dimension of A (0 = packed)");
  command.add_option("--ldb", o.ldb, "Leading dimension of B (0 = packed)");
  command.add_option("--ldc", o.ldc, "Leading dimension of C (0 = packed)");
  command.add_option("--align", o.alignment_bytes,
                     "Alignment in bytes the pointers and rows guarantee (0 = derive)");
}

void add_common_options(CLI::App& command, GemmOptions& o) {
  command.add_option("--data-dir", o.data_dir, "Data directory (default: PARITY_DATA_DIR or data/)");
  command.add_option("--calibration", o.calibration_file,
                     "GEMM calibration file (default: <data>/calibration/<hw>_gemm.json)");
}

}  // namespace

void add_gemm_commands(CLI::App& gemm, Outcome& outcome) {
  auto options = std::make_shared<GemmOptions>();

  auto* select = gemm.add_subcommand("select", "Pick a GEMM configuration from the model (no GPU)");
  add_problem_options(*select, *options);
  add_common_options(*select, *options);
  select->add_option("--top", options->top, "How many ranked candidates to show (default 5)");
  select->add_flag("--json", options->is_json_output, "Print JSON");
  select->add_flag("--latency", options->is_latency_report,
                   "Report selection latency (p50/p99) over unseen random shapes instead");
  select->add_option("--latency-samples", options->latency_samples, "Shapes timed by --latency");
  select->callback([options, &outcome] { outcome.status = run_select(*options); });

  auto* calibrate = gemm.add_subcommand("calibrate", "Fit the model's scalars to measurements (CPU)");
  add_common_options(*calibrate, *options);
  calibrate->add_option("--hw", options->hw, "Catalogue GPU (default: the measurements' device)");
  calibrate->add_option("--measurements", options->measurement_files,
                        "Measurements JSON (gemm measure; .json.gz read through gzip); repeatable")
      ->take_all();
  calibrate->add_option("--shapes", options->shapes, "Shape suite CSV defining the split");
  calibrate->add_option("--calibration-shapes", options->calibration_shapes,
                        "Extra calibration-only shapes CSV, absent from the suite (repeatable; default "
                        "bench/shapes/gemm_shapes_calibration_extra{,2}.csv)");
  calibrate->add_option("--cv-folds", options->cv_folds,
                        "K-fold cross-validation inside the calibration shapes (report; 0 = off)");
  calibrate->add_option("--cv-csv", options->cv_csv,
                        "Write each held-out shape's ratio t_oracle / t_pick to this CSV");
  calibrate->add_option("--vendor-band", options->selector_options.vendor_band,
                        "Confidence rule band the cross-validation's selector uses (default 0.03)");
  calibrate->add_option("--out", options->out, "Calibration file to write");
  calibrate->add_option("--max-evals", options->max_evaluations, "Model-loss evaluations budget");
  calibrate->add_option("--regret-weight", options->regret_weight,
                        "Weight of the soft selection regret in the loss (default 1)");
  calibrate->callback([options, &outcome] { outcome.status = run_calibrate(*options); });

  auto* eval = gemm.add_subcommand("eval", "Selector vs heuristic top-1 vs oracle on measurements");
  add_common_options(*eval, *options);
  eval->add_option("--hw", options->hw, "Catalogue GPU (default: the measurements' device)");
  eval->add_option("--measurements", options->measurements, "Measurements JSON (gemm measure)");
  eval->add_option("--shapes", options->shapes, "Shape suite CSV defining the split");
  eval->add_option("--split", options->split, "evaluation (default), calibration or all");
  eval->add_option("--calibration-shapes", options->calibration_shapes,
                   "Calibration-only shapes CSV (repeatable; never evaluation; default the "
                   "extra CSVs)");
  eval->add_option("--out-dir", options->out_dir, "Directory for gemm_eval.{json,md,svg}");
  eval->add_option("--vendor-band", options->selector_options.vendor_band,
                   "Confidence rule band for TMA kernels (default 0.03; < 0 turns the rule off)");
  eval->add_option("--vendor-band-legacy", options->selector_options.vendor_band_legacy,
                   "Confidence rule band without TMA (default: always the vendor's top-1)");
  eval->callback([options, &outcome] { outcome.status = run_eval(*options); });

  auto* agree = gemm.add_subcommand("agree", "Top-10 agreement with Origami's rankings (AMD, model only)");
  add_common_options(*agree, *options);
  agree->add_option("--hw", options->hw, "mi300x (gfx942) or mi350x (gfx950)");
  agree->add_option("--origami", options->origami_csv,
                    "Rankings CSV (default: <data>/reference/origami/<arch>_bf16.csv)");
  agree->add_flag("--json", options->is_json_output, "Print JSON");
  agree->callback([options, &outcome] { outcome.status = run_agree(*options); });
}

}  // namespace parity::cli
