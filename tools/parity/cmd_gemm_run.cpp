// `parity gemm run`: runs the selector's choice for one shape through the cuBLASLt provider and
// reports measured against predicted, with cuBLASLt's heuristic top-1 (and the best of its 8)
// timed beside it in the same run.
// `parity gemm measure --shapes FILE --out FILE`: the oracle data set: per shape, the full pruned
// candidate set screened, the best top-K + the heuristic's 8 + the selector's top-3 timed in full
// (L2 flushed, median of >= 30 interleaved repetitions), and the oracle's top 5 re-timed for the
// noise floor; writes the measurements file gemm calibrate / gemm eval read
// (docs/gemm_measurements.md). Arguments are validated first (exit 2), then the device (exit 3).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/bench/provenance.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/measurements.hpp"
#include "parity/gemm/model.hpp"
#include "parity/gemm/problem.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"
#ifdef PARITY_HAS_CUDA
#include "parity/gemm/cublaslt.hpp"
#include "parity/gemm/cublaslt_measure.hpp"
#endif

namespace parity::cli {
namespace {

struct CommonArgs {
  std::string hw = "h200";
  std::string data_dir;
  int reps = 30;
  int warmup = 5;
  std::uint64_t seed = 1;
  std::string out;
};

struct RunArgs : CommonArgs {
  std::int64_t m = 0, n = 0, k = 0;
  std::string dtype = "bf16";
  std::string layout = "TN";
};

struct MeasureArgs : CommonArgs {
  std::string shapes;
  std::string dtype = "bf16";
  int screen_reps = 3;
  double min_timed_ms = 2.0;
  int max_reps = 300;
  int top_k = 8;
  int noise_top = 5;
  int limit = 0;
  int stride = 1;
  double time_budget_s = 0.0;
};

std::optional<std::filesystem::path> data_dir_of(const CommonArgs& args) {
  if (args.data_dir.empty()) return std::nullopt;
  return std::filesystem::path(args.data_dir);
}

// The selector `gemm select --hw NAME` uses: catalogue entry, then the device's fitted scalars
// (or the model's defaults when no calibration file exists).
Result<gemm::Selector> make_selector(const CommonArgs& args) {
  PARITY_ASSIGN_OR_RETURN(const hw::HardwareSpec spec, hw::find_hardware(args.hw, data_dir_of(args)));
  PARITY_ASSIGN_OR_RETURN(const gemm::DeviceParams device, gemm::device_params_from_spec(spec));
  PARITY_ASSIGN_OR_RETURN(const gemm::GemmCalibration calibration,
                          gemm::load_gemm_calibration_or_default(device, data_dir_of(args)));
  return gemm::Selector(gemm::GemmModel(device, calibration.scalars));
}

Status validate_common(const CommonArgs& args, const char* command) {
  PARITY_CHECK_ARG(args.reps >= 1, command, ": --reps=", args.reps, " must be >= 1");
  PARITY_CHECK_ARG(args.warmup >= 0, command, ": --warmup=", args.warmup, " must be >= 0");
  return Status::ok();
}

#ifdef PARITY_HAS_CUDA
double tflops_of(const gemm::GemmProblem& problem, double ms) {
  return ms > 0.0 ? problem.flop_count() / (ms * 1e-3) / 1e12 : 0.0;
}

nlohmann::json pick_json(const gemm::ShapeMeasurement& m, int index) {
  if (index < 0) return nullptr;
  const auto& c = m.candidates[static_cast<std::size_t>(index)];
  return {{"config", c.candidate.describe()},
          {"configuration", c.configuration},
          {"median_ms", c.stats.median_ms},
          {"tflops", tflops_of(m.problem, c.stats.median_ms)}};
}

// One shape in the measurements file (core keys of measurements.hpp plus measure's own).
nlohmann::json shape_json(const std::string& name, const gemm::ShapeMeasurement& m,
                          const std::vector<double>& selector_predicted_us) {
  const auto& p = m.problem;
  nlohmann::json item = {{"name", name},
                         {"m", p.m},
                         {"n", p.n},
                         {"k", p.k},
                         {"batch", p.batch},
                         {"dtype", gemm::gemm_dtype_name(p.a_dtype)},
                         {"layout", gemm::layout_name(p.layout)},
                         {"alignment_bytes", p.alignment_class_bytes()},
                         {"flop_count", p.flop_count()},
                         {"heuristic_us", m.heuristic_us},
                         {"check_ms", m.check_ms},
                         {"tolerance", m.tolerance}};
  nlohmann::json timed = nlohmann::json::array();
  nlohmann::json screened = nlohmann::json::array();
  nlohmann::json failed = nlohmann::json::array();
  for (const auto& c : m.candidates) {
    nlohmann::json sources = nlohmann::json::array();
    if (c.from_pruned_set) sources.push_back("pruned");
    if (c.candidate.heuristic_rank >= 0) sources.push_back("heuristic");
    if (c.selector_rank >= 0) sources.push_back("selector");
    nlohmann::json row = {{"config", c.candidate.describe()},
                          {"configuration", c.configuration},
                          {"heuristic_rank", c.candidate.heuristic_rank},
                          {"selector_rank", c.selector_rank},
                          {"sources", sources}};
    if (c.screen_ms > 0.0) row["screen_ms"] = c.screen_ms;
    if (!c.error.empty()) {
      row["error"] = c.error;
      failed.push_back(std::move(row));
    } else if (c.is_timed) {
      row["median_ms"] = c.stats.median_ms;
      row["spread_ms"] = c.stats.p90_ms - c.stats.p10_ms;
      row["p10_ms"] = c.stats.p10_ms;
      row["p90_ms"] = c.stats.p90_ms;
      row["min_ms"] = c.stats.min_ms;
      row["count"] = c.stats.count;
      row["tflops"] = tflops_of(p, c.stats.median_ms);
      row["max_relative_error"] = c.max_relative_error;
      timed.push_back(std::move(row));
    } else {
      screened.push_back(std::move(row));
    }
  }
  item["candidates"] = std::move(timed);
  item["screened"] = std::move(screened);
  item["failed"] = std::move(failed);
  item["oracle"] = pick_json(m, m.oracle);
  item["heuristic_top1"] = pick_json(m, m.heuristic_top1);
  item["selector_top1"] = pick_json(m, m.selector_top1);
  if (m.selector_top1 >= 0 && !selector_predicted_us.empty()) {
    item["selector_top1"]["predicted_ms"] = selector_predicted_us.front() * 1e-3;
  }
  nlohmann::json retimed = nlohmann::json::array();
  for (const auto& r : m.noise) {
    retimed.push_back({{"config", m.candidates[r.index].candidate.describe()},
                       {"first_ms", r.first_ms},
                       {"second_ms", r.second_ms}});
  }
  item["noise_floor"] = {{"retimed", retimed}, {"max_relative_spread", m.noise_max_relative_spread}};
  item["rounds"] = m.rounds;
  return item;
}

nlohmann::json enumeration_json(const gemm::CublasLtProvider& provider) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : provider.enumeration_reports()) {
    out.push_back({{"class", r.problem_class},
                   {"algo_ids", r.algo_ids},
                   {"family_algo_id", r.family_algo_id},
                   {"configs_built", r.configs_built},
                   {"configs_passed_check", r.configs_passed_check},
                   {"enumerate_ms", r.enumerate_ms}});
  }
  return out;
}

// "NVIDIA H200" -> "h200": the catalogue key the measurements are filed under.
std::string catalogue_name_of_device() {
  auto props = gpu::device_properties(0);
  if (!props.is_ok()) return "";
  std::string name = props->name;
  if (name.rfind("NVIDIA ", 0) == 0) name = name.substr(7);
  return hw::normalize_hardware_name(name);
}

struct Selected {
  std::vector<gemm::Candidate> picks;  // best first
  std::vector<double> predicted_us;
  double select_us = 0.0;
};

Result<Selected> select_top(gemm::Selector& selector, const gemm::GemmProblem& problem,
                            const std::vector<gemm::Candidate>& candidates, std::size_t top) {
  const auto start = std::chrono::steady_clock::now();
  PARITY_ASSIGN_OR_RETURN(const gemm::Selection selection, selector.select(problem, candidates, top));
  Selected out;
  out.select_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  for (const auto& ranked : selection.top) {
    out.picks.push_back(candidates[ranked.index]);
    out.predicted_us.push_back(ranked.predicted_us);
  }
  return out;
}
#endif

Status run_gemm_run(const RunArgs& args) {
  PARITY_RETURN_IF_ERROR(validate_common(args, "gemm run"));
  gemm::GemmProblem problem;
  problem.m = args.m;
  problem.n = args.n;
  problem.k = args.k;
  PARITY_ASSIGN_OR_RETURN(const DType dtype, gemm::parse_gemm_dtype(args.dtype));
  problem.a_dtype = problem.b_dtype = problem.c_dtype = dtype;
  PARITY_ASSIGN_OR_RETURN(problem.layout, gemm::parse_layout(args.layout));
  PARITY_RETURN_IF_ERROR(problem.validate().with_context("gemm run"));
  PARITY_ASSIGN_OR_RETURN(gemm::Selector selector, make_selector(args));
  PARITY_RETURN_IF_ERROR(require_cuda_device("gemm run"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(auto provider, gemm::CublasLtProvider::create());
  PARITY_ASSIGN_OR_RETURN(const auto candidates, provider->enumerate(problem));
  PARITY_ASSIGN_OR_RETURN(Selected selected, select_top(selector, problem, candidates, 5));
  if (selected.picks.empty()) return unsupported("gemm run: the selector ranked no candidate");
  gemm::MeasureOptions options;
  options.repetitions = args.reps;
  options.warmup_iterations = args.warmup;
  options.seed = args.seed;
  options.noise_top = 0;
  options.screen_all = false;  // the choice and the heuristic's 8 only
  PARITY_ASSIGN_OR_RETURN(const gemm::ShapeMeasurement m,
                          gemm::measure_shape(*provider, problem,
                                              {selected.picks.front()}, options));
  const auto report = provider->enumeration_reports();
  std::printf("gemm run: %s on %s (cuBLASLt %zu)\n", problem.describe().c_str(), args.hw.c_str(),
              gemm::CublasLtProvider::library_version());
  if (!report.empty()) {
    std::printf("enumeration (once per class): %d configs built, %d pass AlgoCheck, %.1f ms; "
                "this shape: %zu candidates, check %.2f ms, heuristic %.0f us, selection %.1f us\n",
                report.front().configs_built, report.front().configs_passed_check,
                report.front().enumerate_ms, candidates.size(), provider->last_check_ms(),
                m.heuristic_us, selected.select_us);
  }
  if (m.selector_top1 < 0) {
    const auto& c = m.candidates.empty() ? gemm::TimedCandidate{} : m.candidates.back();
    return internal_error("gemm run: the selector's choice (", c.configuration, ") was not timed: ",
                          c.error);
  }
  const auto& chosen = m.candidates[static_cast<std::size_t>(m.selector_top1)];
  const double predicted_ms = selected.predicted_us.front() * 1e-3;
  std::printf("%-10s %10s %10s %8s %9s  %s\n", "", "median_ms", "pred_ms", "TFLOP/s", "max_rel",
              "configuration");
  std::printf("%-10s %10.4f %10.4f %8.1f %9.2e  %s\n", "selector", chosen.stats.median_ms,
              predicted_ms, tflops_of(problem, chosen.stats.median_ms), chosen.max_relative_error,
              chosen.configuration.c_str());
  if (m.heuristic_top1 >= 0) {
    const auto& h = m.candidates[static_cast<std::size_t>(m.heuristic_top1)];
    std::printf("%-10s %10.4f %10s %8.1f %9.2e  %s\n", "heuristic", h.stats.median_ms, "-",
                tflops_of(problem, h.stats.median_ms), h.max_relative_error, h.configuration.c_str());
  }
  if (m.oracle >= 0) {
    const auto& o = m.candidates[static_cast<std::size_t>(m.oracle)];
    std::printf("%-10s %10.4f %10s %8.1f %9.2e  %s\n", "best-timed", o.stats.median_ms, "-",
                tflops_of(problem, o.stats.median_ms), o.max_relative_error, o.configuration.c_str());
  }
  std::printf("measured/predicted %.3f", chosen.stats.median_ms / predicted_ms);
  if (m.heuristic_top1 >= 0) {
    std::printf(", heuristic/selector time %.3f",
                m.candidates[static_cast<std::size_t>(m.heuristic_top1)].stats.median_ms /
                    chosen.stats.median_ms);
  }
  std::printf(" (median of %d flushed repetitions each, interleaved)\n", options.repetitions);
  if (!args.out.empty()) {
    ProcessArgs process_args;
    nlohmann::json document;
    document["benchmark"] = "gemm_run";
    document["provenance"] = bench::provenance_json(process_args.argc(), process_args.argv(), args.seed);
    document["shape"] = shape_json("", m, selected.predicted_us);
    document["selection_us"] = selected.select_us;
    document["enumeration"] = enumeration_json(*provider);
    PARITY_RETURN_IF_ERROR(bench::write_json_file(args.out, document));
    std::printf("wrote %s\n", args.out.c_str());
  }
  return Status::ok();
#else
  return internal_error("gemm run: unreachable without CUDA");
#endif
}

Status run_gemm_measure(const MeasureArgs& args) {
  PARITY_RETURN_IF_ERROR(validate_common(args, "gemm measure"));
  PARITY_CHECK_ARG(!args.shapes.empty(), "gemm measure: --shapes FILE is required");
  PARITY_CHECK_ARG(!args.out.empty(), "gemm measure: --out FILE is required");
  PARITY_CHECK_ARG(args.limit >= 0, "gemm measure: --limit=", args.limit, " must be >= 0");
  PARITY_CHECK_ARG(args.stride >= 1, "gemm measure: --stride=", args.stride, " must be >= 1");
  PARITY_CHECK_ARG(args.time_budget_s >= 0.0, "gemm measure: --time-budget-s=", args.time_budget_s,
                   " must be >= 0");
  PARITY_ASSIGN_OR_RETURN([[maybe_unused]] const DType dtype, gemm::parse_gemm_dtype(args.dtype));
  PARITY_ASSIGN_OR_RETURN(const gemm::ShapeSuite suite, gemm::read_shape_suite(args.shapes));
#ifdef PARITY_HAS_CUDA
  gemm::MeasureOptions options;
  options.repetitions = args.reps;
  options.warmup_iterations = args.warmup;
  options.screen_repetitions = args.screen_reps;
  options.min_timed_ms = args.min_timed_ms;
  options.max_repetitions = args.max_reps;
  options.top_k = args.top_k;
  options.noise_top = args.noise_top;
  options.seed = args.seed;
  PARITY_RETURN_IF_ERROR(gemm::validate_measure_options(options));
#endif
  // The selector is optional here: without it the file still holds the oracle data set.
  auto selector = make_selector(args);
  if (!selector.is_ok()) {
    std::fprintf(stderr, "gemm measure: no selector (%s); selector picks are not timed\n",
                 selector.status().to_string().c_str());
  }
  PARITY_RETURN_IF_ERROR(require_cuda_device("gemm measure"));
#ifdef PARITY_HAS_CUDA
  PARITY_ASSIGN_OR_RETURN(auto provider, gemm::CublasLtProvider::create());
  ProcessArgs process_args;
  nlohmann::json provenance = bench::provenance_json(process_args.argc(), process_args.argv(), args.seed);
  provenance["cublaslt_version"] = gemm::CublasLtProvider::library_version();
  provenance["method"] = {{"cache", "flush_l2"},
                          {"screen_repetitions", options.screen_repetitions},
                          {"repetitions", options.repetitions},
                          {"warmup_iterations", options.warmup_iterations},
                          {"interleaved_rounds", "per shape: its \"rounds\" (>= repetitions)"},
                          {"min_timed_ms", options.min_timed_ms},
                          {"max_repetitions", options.max_repetitions},
                          {"top_k", options.top_k},
                          {"noise_top", options.noise_top},
                          {"check_samples", options.check_samples},
                          {"max_workspace_bytes", provider->max_workspace_bytes()},
                          {"shapes_file", args.shapes},
                          {"stride", args.stride},
                          {"limit", args.limit}};
  nlohmann::json document = {{"schema", gemm::kMeasurementsSchema},
                             {"device", catalogue_name_of_device()},
                             {"provenance", provenance},
                             {"shapes", nlohmann::json::array()}};
  std::printf("%-28s %6s %6s %6s %5s %5s %10s %10s %10s %7s %7s %6s %6s\n", "shape", "m", "n", "k",
              "cands", "timed", "oracle_ms", "heur1_ms", "select_ms", "h1/orc", "sel/orc", "noise",
              "rounds");
  double log_heuristic = 0.0, log_selector = 0.0;
  int shapes_done = 0, selector_shapes = 0;
  const auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < suite.problems.size(); i += static_cast<std::size_t>(args.stride)) {
    if (args.limit > 0 && shapes_done >= args.limit) break;
    const double spent_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (args.time_budget_s > 0.0 && shapes_done > 0 &&
        spent_s + spent_s / shapes_done > args.time_budget_s) {
      std::printf("time budget: stopping after %d shapes (%.0f s spent, budget %.0f s)\n",
                  shapes_done, spent_s, args.time_budget_s);
      break;
    }
    gemm::GemmProblem problem = suite.problems[i];
    problem.a_dtype = problem.b_dtype = problem.c_dtype = dtype;
    Selected selected;
    if (selector.is_ok()) {
      PARITY_ASSIGN_OR_RETURN(const auto candidates, provider->enumerate(problem));
      PARITY_ASSIGN_OR_RETURN(selected, select_top(*selector, problem, candidates, 3));
    }
    auto measured = gemm::measure_shape(*provider, problem, selected.picks, options);
    if (!measured.is_ok()) {
      return measured.status().with_context("gemm measure " + suite.names[i]);
    }
    const auto& m = *measured;
    document["shapes"].push_back(shape_json(suite.names[i], m, selected.predicted_us));
    document["enumeration"] = enumeration_json(*provider);
    // Written after every shape (to a temporary, then renamed: never half a file), so a run cut
    // short keeps what it measured.
    const std::string partial = args.out + ".partial";
    PARITY_RETURN_IF_ERROR(bench::write_json_file(partial, document));
    std::error_code rename_error;
    std::filesystem::rename(partial, args.out, rename_error);
    if (rename_error) {
      return io_error("gemm measure: cannot rename '", partial, "' to '", args.out, "': ",
                      rename_error.message());
    }
    ++shapes_done;
    int timed = 0;
    for (const auto& c : m.candidates) timed += c.is_timed ? 1 : 0;
    auto ms = [&](int index) {
      return index < 0 ? NAN : m.candidates[static_cast<std::size_t>(index)].stats.median_ms;
    };
    const double oracle_ms = ms(m.oracle), heuristic_ms = ms(m.heuristic_top1), selector_ms = ms(m.selector_top1);
    std::printf("%-28s %6lld %6lld %6lld %5zu %5d %10.4f %10.4f %10.4f %7.3f %7.3f %6.3f %6d\n",
                suite.names[i].c_str(), static_cast<long long>(problem.m),
                static_cast<long long>(problem.n), static_cast<long long>(problem.k),
                m.candidates.size(), timed, oracle_ms, heuristic_ms, selector_ms,
                oracle_ms / heuristic_ms, oracle_ms / selector_ms, m.noise_max_relative_spread,
                m.rounds);
    std::fflush(stdout);
    if (std::isfinite(oracle_ms / heuristic_ms)) log_heuristic += std::log(oracle_ms / heuristic_ms);
    if (std::isfinite(oracle_ms / selector_ms)) {
      log_selector += std::log(oracle_ms / selector_ms);
      ++selector_shapes;
    }
  }
  for (const auto& r : provider->enumeration_reports()) {
    std::printf("enumeration %s: algo ids %zu, family %d, %d built, %d pass AlgoCheck, %.1f ms (once)\n",
                r.problem_class.c_str(), r.algo_ids.size(), r.family_algo_id, r.configs_built,
                r.configs_passed_check, r.enumerate_ms);
  }
  if (shapes_done > 0) {
    std::printf("geomean t_oracle/t: heuristic top-1 %.3f over %d shapes", std::exp(log_heuristic / shapes_done),
                shapes_done);
    if (selector_shapes > 0) {
      std::printf(", selector (current scalars) %.3f over %d", std::exp(log_selector / selector_shapes),
                  selector_shapes);
    }
    std::printf("\n");
  }
  // Round trip through the shared reader, so calibrate/eval are sure to accept the file.
  PARITY_RETURN_IF_ERROR(gemm::read_measurements_file(args.out).status());
  std::printf("wrote %s (%d shapes)\n", args.out.c_str(), shapes_done);
  return Status::ok();
#else
  return internal_error("gemm measure: unreachable without CUDA");
#endif
}

void add_common(CLI::App* cmd, CommonArgs& args) {
  cmd->add_option("--hw", args.hw, "catalogue name of this GPU, for the selector's model")
      ->capture_default_str();
  cmd->add_option("--data-dir", args.data_dir, "data directory (default: PARITY_DATA_DIR or the source tree's data/)");
  cmd->add_option("--reps", args.reps, "timed repetitions per candidate (one per interleaved round)")
      ->capture_default_str();
  cmd->add_option("--warmup", args.warmup, "untimed iterations per candidate first")->capture_default_str();
  cmd->add_option("--seed", args.seed, "seed of the inputs and of the interleaving order")->capture_default_str();
}

}  // namespace

void add_gemm_run_commands(CLI::App& gemm, Outcome& outcome) {
  auto run_args = std::make_shared<RunArgs>();
  auto* run = gemm.add_subcommand("run", "Run the selector's choice on this GPU (cuBLASLt): measured vs "
                                         "predicted, with cuBLASLt's heuristic top-1 beside it");
  run->add_option("--m", run_args->m, "rows of C")->required();
  run->add_option("--n", run_args->n, "columns of C")->required();
  run->add_option("--k", run_args->k, "reduction length")->required();
  run->add_option("--dtype", run_args->dtype, "bf16, fp16 or fp32 (TF32)")->capture_default_str();
  run->add_option("--layout", run_args->layout, "TN, NN, NT or TT (op(A) then op(B))")->capture_default_str();
  run->add_option("--out", run_args->out, "write the result JSON (with provenance) to FILE");
  add_common(run, *run_args);
  run->callback([run_args, &outcome] { outcome.status = run_gemm_run(*run_args); });

  auto measure_args = std::make_shared<MeasureArgs>();
  auto* measure = gemm.add_subcommand(
      "measure", "Oracle data set: time the pruned cuBLASLt space + heuristic's 8 + selector's top-3 per shape");
  measure->add_option("--shapes", measure_args->shapes, "CSV of shapes (name,m,n,k[,...])")->required();
  measure->add_option("--out", measure_args->out, "measurements JSON to write")->required();
  measure->add_option("--dtype", measure_args->dtype, "bf16, fp16 or fp32 (TF32)")->capture_default_str();
  measure->add_option("--screen-reps", measure_args->screen_reps, "flushed repetitions of the screening pass")
      ->capture_default_str();
  measure->add_option("--min-timed-ms", measure_args->min_timed_ms,
                      "kernel time each fully timed candidate accumulates: short kernels get more "
                      "rounds than --reps, up to --max-reps (0 = always --reps)")
      ->capture_default_str();
  measure->add_option("--max-reps", measure_args->max_reps, "most rounds a short kernel gets")
      ->capture_default_str();
  measure->add_option("--top-k", measure_args->top_k, "best screened candidates timed in full")
      ->capture_default_str();
  measure->add_option("--noise-top", measure_args->noise_top, "oracle's top candidates re-timed for the noise floor")
      ->capture_default_str();
  measure->add_option("--limit", measure_args->limit, "measure at most this many shapes (0 = all)")
      ->capture_default_str();
  measure->add_option("--stride", measure_args->stride, "measure every STRIDE-th shape of the file")
      ->capture_default_str();
  measure->add_option("--time-budget-s", measure_args->time_budget_s,
                      "start no shape that would end past this many seconds (0 = no limit)")
      ->capture_default_str();
  add_common(measure, *measure_args);
  measure->callback([measure_args, &outcome] { outcome.status = run_gemm_measure(*measure_args); });
}

}  // namespace parity::cli
