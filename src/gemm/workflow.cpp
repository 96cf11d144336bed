// Loading a device's model, selection reports, selection latency and the Origami agreement
// (include/parity/gemm/workflow.hpp). Text and JSON renderings live here so every front end
// prints the same thing.
#include "parity/gemm/workflow.hpp"

#include "parity/gemm/gemm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "gemm/workflow_text.hpp"
#include "parity/core/text_file.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {

using nlohmann::json;

std::string fixed(double value, int digits) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(digits) << value;
  return out.str();
}

ModelSource with_data_dir(ModelSource source, const std::string& data_dir) {
  if (!data_dir.empty()) source.data_dir = std::filesystem::path(data_dir);
  return source;
}

Result<LoadedModel> load_model(const ModelSource& source) {
  PARITY_CHECK_ARG(!source.hw.empty(), "gemm: --hw is required (a catalogue GPU, e.g. h200, mi300x)");
  auto spec = hw::find_hardware(source.hw, source.data_dir);
  if (!spec) return spec.status().with_context("--hw");
  PARITY_ASSIGN_OR_RETURN(auto device, device_params_from_spec(*spec));
  LoadedModel loaded;
  if (!source.calibration_file.empty()) {
    PARITY_ASSIGN_OR_RETURN(loaded.calibration, read_gemm_calibration(source.calibration_file));
  } else {
    PARITY_ASSIGN_OR_RETURN(loaded.calibration, load_gemm_calibration_or_default(device, source.data_dir));
  }
  if (loaded.calibration.is_default) {
    loaded.calibration_label = "built-in defaults (uncalibrated)";
  } else {
    loaded.calibration_label = "fitted (" + (source.calibration_file.empty()
                                                 ? loaded.calibration.device + "_gemm.json"
                                                 : source.calibration_file) + ")";
  }
  loaded.device = std::move(device);
  return loaded;
}

Selector make_selector(const LoadedModel& model, const SelectorOptions& options) {
  return Selector(GemmModel(model.device, model.calibration.scalars), options);
}

Result<MeasurementSet> load_measurements(const std::string& path) {
  PARITY_CHECK_ARG(!path.empty(), "gemm: --measurements FILE is required");
  auto text = read_text_file(path);
  if (!text) return text.status().with_context("measurements");
  auto set = parse_measurements_json(*text);
  if (!set) return set.status().with_context(path);
  return set;
}

std::string default_shape_suite_path() {
  return std::string(PARITY_SOURCE_DIR) + "/bench/shapes/gemm_shapes_dev.csv";
}

std::vector<std::string> default_calibration_shape_paths() {
  std::vector<std::string> paths;
  for (const char* name : {"gemm_shapes_calibration_extra.csv", "gemm_shapes_calibration_extra2.csv"}) {
    const std::string path = std::string(PARITY_SOURCE_DIR) + "/bench/shapes/" + name;
    if (std::filesystem::exists(path)) paths.push_back(path);
  }
  return paths;
}

Result<ShapeSuite> read_calibration_shapes(const std::vector<std::string>& paths) {
  ShapeSuite extra;
  for (const auto& path : paths) {
    auto suite = read_shape_suite(path);
    if (!suite) return suite.status().with_context("--calibration-shapes");
    extra.names.insert(extra.names.end(), suite->names.begin(), suite->names.end());
    extra.problems.insert(extra.problems.end(), suite->problems.begin(), suite->problems.end());
  }
  return extra;
}

// ---- select ----

Result<SelectionReport> select_report(const LoadedModel& model, const GemmProblem& problem,
                                      std::size_t top, bool explain, TopKList top_k_list) {
  PARITY_CHECK_ARG(top >= 1, "gemm select: --top=", top, " must be >= 1");
  ModelledProvider provider(model.device);
  PARITY_ASSIGN_OR_RETURN(const auto space, provider.enumerate(problem));
  Selector selector = make_selector(model, SelectorOptions{.top_k_list = top_k_list});
  PARITY_ASSIGN_OR_RETURN(const auto selection, selector.select(problem, space, top));
  SelectionReport report;
  report.top_k_list = top_k_list;
  report.hw = model.device.name;
  report.problem = problem.describe();
  report.basis = model.device.kind == ModelKind::kOrigami
                     ? "modelled (AMD, Origami-class model; not a measurement)"
                     : "modelled (Hopper model)";
  report.calibration = model.calibration_label;
  report.candidates = space.size();
  report.is_explained = explain;
  for (const auto& ranked : selection.top) {
    const Candidate& c = space[ranked.index];
    report.top.push_back({c.short_name(), c.describe(), ranked.predicted_us,
                          problem.flop_count() / (ranked.predicted_us * 1e-6) / 1e12,
                          selector.model().explain(problem, c, RunEpilogue::kNone)});
  }
  return report;
}

std::string to_text(const SelectionReport& report) {
  std::ostringstream out;
  out << "gemm select on " << report.hw << ": " << report.problem << "\n"
      << "  basis: " << report.basis << "; scalars: " << report.calibration << "; "
      << report.candidates << " candidates\n";
  if (report.top.empty()) return out.str();
  const SelectionRow& choice = report.top.front();
  out << "  choice: " << choice.short_name << "  predicted " << fixed(choice.predicted_us, 2)
      << " us, " << fixed(choice.predicted_tflops, 1) << " TFLOP/s\n  config: " << choice.config
      << "\n  top " << report.top.size()
      << (report.top_k_list == TopKList::kConfigs ? " configurations" : " (the best configuration of each macro tile)")
      << ":\n";
  int rank = 1;
  for (const auto& row : report.top) {
    out << "   " << rank++ << ". " << std::left << std::setw(34) << row.short_name << std::right
        << std::setw(11) << fixed(row.predicted_us, 2) << " us " << std::setw(8)
        << fixed(row.predicted_tflops, 1) << " TFLOP/s\n";
    if (report.is_explained) {
      const TimeBreakdown& b = row.breakdown;
      out << "      compute " << fixed(b.compute_us, 2) << " + memory " << fixed(b.memory_us, 2)
          << " + L2 " << fixed(b.l2_us, 2) << " + launch/waves " << fixed(b.launch_wave_us, 2)
          << " + reduction " << fixed(b.reduction_us, 2) << " us  (" << fixed(b.waves, 2)
          << " waves)\n";
    }
  }
  return out.str();
}

std::string to_json(const SelectionReport& report) {
  json out;
  out["hw"] = report.hw;
  out["problem"] = report.problem;
  out["basis"] = report.basis;
  out["calibration"] = report.calibration;
  out["candidates"] = report.candidates;
  out["top_k_list"] = std::string(top_k_list_name(report.top_k_list));
  out["top"] = json::array();
  for (const auto& row : report.top) {
    const TimeBreakdown& b = row.breakdown;
    out["top"].push_back({{"config", row.config},
                          {"short", row.short_name},
                          {"predicted_us", row.predicted_us},
                          {"predicted_tflops", row.predicted_tflops},
                          {"breakdown_us", {{"compute", b.compute_us}, {"memory", b.memory_us},
                                            {"l2", b.l2_us}, {"launch_wave", b.launch_wave_us},
                                            {"reduction", b.reduction_us}, {"waves", b.waves}}}});
  }
  if (!report.top.empty()) out["choice"] = out["top"][0];
  return out.dump(1) + "\n";
}

// ---- selection latency ----
namespace {

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

}  // namespace

Result<SelectionLatency> measure_selection_latency(const LoadedModel& model, const GemmProblem& base,
                                                   int samples, std::size_t top,
                                                   TopKList top_k_list) {
  PARITY_CHECK_ARG(samples >= 100, "gemm select: --latency-samples=", samples, " must be >= 100");
  Selector selector = make_selector(model, SelectorOptions{.top_k_list = top_k_list});
  selector.set_candidates(modelled_space(problem_class(base), model.device));
  using Clock = std::chrono::steady_clock;
  SelectionLatency latency;
  latency.hw = model.device.name;
  latency.candidates = selector.candidates().size();
  latency.top = top;
  latency.top_k_list = top_k_list;
  const auto cold_start = Clock::now();
  auto first = selector.select(base, top);
  latency.first_call_us = std::chrono::duration<double, std::micro>(Clock::now() - cold_start).count();
  PARITY_RETURN_IF_ERROR(first.status());
  std::mt19937_64 rng(20261129);  // fixed: the report is reproducible
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  const auto row_elements = static_cast<std::int64_t>(16 / dtype_size_bytes(base.a_dtype));
  std::vector<double> samples_us, misaligned_us;
  samples_us.reserve(static_cast<std::size_t>(samples));
  misaligned_us.reserve(static_cast<std::size_t>(samples));
  const auto time_shapes = [&](bool tma_aligned) {
    samples_us.clear();
    misaligned_us.clear();
    for (int i = 0; i < samples; ++i) {
      GemmProblem problem = base;
      problem.m = static_cast<std::int64_t>(std::exp(log_size(rng)));
      problem.n = static_cast<std::int64_t>(std::exp(log_size(rng)));
      problem.k = static_cast<std::int64_t>(std::exp(log_size(rng)));
      if (tma_aligned) {
        problem.m = (problem.m + row_elements - 1) / row_elements * row_elements;
        problem.k = (problem.k + row_elements - 1) / row_elements * row_elements;
      }
      problem.alignment_bytes = 0;
      const auto start = Clock::now();
      auto selection = selector.select(problem, top);
      samples_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      if (selection) latency.checksum += selection->predicted_us;
      if (problem.alignment_class_bytes() < 16) misaligned_us.push_back(samples_us.back());
    }
  };
  // The thread-CPU clock is a system call (~0.2 us, no vDSO): read once around the whole loop, so
  // the per-sample wall interval holds select() and two vDSO clock reads only.
  const double cpu_start_us = thread_cpu_us();
  time_shapes(false);
  // Includes drawing the shapes and the clock reads: an upper bound on select()'s CPU time.
  latency.thread_cpu_mean_us_per_sample = (thread_cpu_us() - cpu_start_us) / static_cast<double>(samples);
  latency.samples = samples_us.size();
  latency.p50_us = percentile(samples_us, 0.50);
  latency.p99_us = percentile(samples_us, 0.99);
  latency.max_us = percentile(samples_us, 1.0);
  latency.misaligned_samples = misaligned_us.size();
  if (!misaligned_us.empty()) {
    latency.misaligned_p50_us = percentile(misaligned_us, 0.50);
    latency.misaligned_p99_us = percentile(misaligned_us, 0.99);
  }
  time_shapes(true);
  latency.aligned_p50_us = percentile(samples_us, 0.50);
  latency.aligned_p99_us = percentile(samples_us, 0.99);
  return latency;
}

std::string to_text(const SelectionLatency& l) {
  std::ostringstream out;
  out << "selection latency on " << l.hw << ", " << l.candidates << " candidates, " << l.samples
      << " unseen shapes (host steady_clock), top " << l.top
      << (l.top == 1 ? "" : (l.top_k_list == TopKList::kConfigs ? " configurations" : " tiles")) << ":\n"
      << "  first call (prepares per-class constants): " << fixed(l.first_call_us, 1) << " us\n"
      << "  p50 " << fixed(l.p50_us, 2) << " us, p99 " << fixed(l.p99_us, 2) << " us, max "
      << fixed(l.max_us, 1) << " us (wall)\n"
      << "  mean " << fixed(l.thread_cpu_mean_us_per_sample, 2)
      << " us thread CPU time per sample (shape drawing and clock reads included; excludes "
         "preemption on a shared host)\n"
      << "  misaligned shapes (" << l.misaligned_samples << " of them; no TMA on NVIDIA): p50 "
      << fixed(l.misaligned_p50_us, 2) << " us, p99 " << fixed(l.misaligned_p99_us, 2) << " us (wall)\n"
      << "  aligned shapes (" << l.samples << ", M, K rounded up to 16-byte rows; TMA on NVIDIA): p50 "
      << fixed(l.aligned_p50_us, 2) << " us, p99 " << fixed(l.aligned_p99_us, 2) << " us (wall)\n";
  return out.str();
}

std::string to_json(const SelectionLatency& l) {
  return json{{"hw", l.hw},
              {"candidates", l.candidates},
              {"samples", l.samples},
              {"top", l.top},
              {"top_k_list", std::string(top_k_list_name(l.top_k_list))},
              {"first_call_us", l.first_call_us},
              {"p50_us", l.p50_us},
              {"p99_us", l.p99_us},
              {"max_us", l.max_us},
              {"misaligned_samples", l.misaligned_samples},
              {"misaligned_p50_us", l.misaligned_p50_us},
              {"misaligned_p99_us", l.misaligned_p99_us},
              {"aligned_p50_us", l.aligned_p50_us},
              {"aligned_p99_us", l.aligned_p99_us},
              {"thread_cpu_mean_us_per_sample", l.thread_cpu_mean_us_per_sample},
              {"checksum", l.checksum}}
             .dump(1) + "\n";
}

// ---- agree ----

Result<AgreementOutcome> agree_with_origami(const ModelSource& source, const std::string& origami_csv,
                                            RankingHalf half, TopKList top_k_list) {
  PARITY_ASSIGN_OR_RETURN(const auto model, load_model(source));
  PARITY_CHECK_ARG(model.device.kind == ModelKind::kOrigami, "gemm agree: --hw=", source.hw,
                   " is not an AMD GPU (Origami rankings exist for gfx942/gfx950)");
  AgreementOutcome outcome;
  outcome.hw = model.device.name;
  outcome.rankings_csv = origami_csv;
  outcome.top_k_list = top_k_list;
  if (outcome.rankings_csv.empty()) {
    outcome.rankings_csv = (hw::resolve_data_dir(source.data_dir) / "reference" / "origami" /
                            (model.device.arch + "_bf16.csv")).string();
  }
  PARITY_ASSIGN_OR_RETURN(const auto rankings, read_origami_rankings(outcome.rankings_csv));
  // Origami's rankings were produced on its test harness's hardware and config list: compare on
  // the same (origami_agreement.hpp).
  PARITY_ASSIGN_OR_RETURN(const DeviceParams reference, origami_reference_device(model.device));
  const auto space = origami_reference_space(reference);
  Selector selector(GemmModel(reference, model.calibration.scalars),
                    SelectorOptions{.top_k_list = top_k_list});
  outcome.report = compare_with_origami(selector, rankings, space, half);
  return outcome;
}

std::string to_text(const AgreementOutcome& o) {
  const AgreementReport& r = o.report;
  std::ostringstream out;
  out << "agreement with Origami's top-10 (" << o.rankings_csv << "), " << r.problems
      << " problems, model vs model (no measurement):\n"
      << "  top-1 match: exact config " << fixed(100 * r.top1_exact, 1) << "%, macro tile "
      << fixed(100 * r.top1_macro_tile, 1) << "%\n"
      << "  top-10 overlap: exact configs " << fixed(100 * r.top10_overlap_exact, 1)
      << "%, macro tiles " << fixed(100 * r.top10_overlap_macro_tile, 1) << "%\n"
      << "  Spearman rho on shared configs " << fixed(r.spearman_shared, 3) << " ("
      << r.spearman_shared_problems << " problems with >= 3 shared); on their 10 configs "
      << fixed(r.spearman_their_top10, 3) << "\n  mean rank we give their top-1: "
      << fixed(r.rank_of_their_top1, 1) << " (0 = our top-1)\n"
      << "  half: " << ranking_half_name(r.half) << "; their top-1 in our top-5 list ("
      << (o.top_k_list == TopKList::kConfigs ? "5 best configs" : "one config per tile") << ") "
      << fixed(100 * r.their_top1_in_our_top5, 1) << "%, its macro tile in our 5 best macro tiles "
      << fixed(100 * r.their_top1_tile_in_our_top5_tiles, 1) << "%\n  selection p50 "
      << fixed(r.selection_p50_us, 1) << " us, p99 " << fixed(r.selection_p99_us, 1) << " us\n";
  return out.str();
}

Result<std::string> agreement_report(const ModelSource& source, const std::string& origami_csv,
                                     const std::string& half_name, bool is_json,
                                     TopKList top_k_list) {
  const bool is_both = half_name == "both" && !is_json;
  std::string text;
  for (const std::string& name : is_both ? std::vector<std::string>{"port", "held-out"}
                                         : std::vector<std::string>{half_name}) {
    PARITY_ASSIGN_OR_RETURN(const RankingHalf half, parse_ranking_half(name));
    PARITY_ASSIGN_OR_RETURN(const AgreementOutcome outcome, agree_with_origami(source, origami_csv, half, top_k_list));
    text += is_json ? to_json(outcome) : to_text(outcome);
  }
  return text;
}

Result<std::string> agreement_command_report(const ModelSource& source, const std::string& origami_csv,
                                             const std::string& half_name, bool is_json,
                                             const std::string& top_k_list) {
  PARITY_ASSIGN_OR_RETURN(const TopKList list, parse_top_k_list(top_k_list));
  return agreement_report(source, origami_csv, half_name, is_json, list);
}

std::string to_json(const AgreementOutcome& o) {
  const AgreementReport& r = o.report;
  return json{{"hw", o.hw},
              {"rankings", o.rankings_csv},
              {"problems", r.problems},
              {"top1_exact", r.top1_exact},
              {"top1_macro_tile", r.top1_macro_tile},
              {"top10_overlap_exact", r.top10_overlap_exact},
              {"top10_overlap_macro_tile", r.top10_overlap_macro_tile},
              {"spearman_shared", r.spearman_shared},
              {"spearman_shared_problems", r.spearman_shared_problems},
              {"spearman_their_top10", r.spearman_their_top10},
              {"mean_rank_of_their_top1", r.rank_of_their_top1},
              {"half", std::string(ranking_half_name(r.half))},
              {"top_k_list", std::string(top_k_list_name(o.top_k_list))},
              {"their_top1_in_our_top5", r.their_top1_in_our_top5},
              {"their_top1_tile_in_our_top5_tiles", r.their_top1_tile_in_our_top5_tiles},
              {"selection_p50_us", r.selection_p50_us},
              {"selection_p99_us", r.selection_p99_us}}
             .dump(1) + "\n";
}

Result<std::string> select_command_report(const SelectSettings& settings) {
  PARITY_CHECK_ARG(settings.top >= 1, "gemm select: --top=", settings.top, " must be >= 1");
  GemmProblem sizes = settings.sizes;
  // The latency report draws its own shapes: a placeholder size when none is given.
  const bool has_no_size = sizes.m == 0 && sizes.n == 0 && sizes.k == 0;
  if (settings.is_latency_report && has_no_size) sizes.m = sizes.n = sizes.k = 4096;
  PARITY_ASSIGN_OR_RETURN(const GemmProblem problem,
                          gemm_problem_from_text(sizes, settings.dtype, settings.layout, settings.epilogue));
  PARITY_ASSIGN_OR_RETURN(const LoadedModel model, load_model(settings.model));
  const auto top = static_cast<std::size_t>(settings.top);
  PARITY_ASSIGN_OR_RETURN(const TopKList list, parse_top_k_list(settings.top_k_list));
  if (settings.is_latency_report) {
    PARITY_ASSIGN_OR_RETURN(const SelectionLatency latency,
                            measure_selection_latency(model, problem, settings.latency_samples, top, list));
    return settings.is_json ? to_json(latency) : to_text(latency);
  }
  PARITY_ASSIGN_OR_RETURN(const SelectionReport report, select_report(model, problem, top, settings.is_explained, list));
  return settings.is_json ? to_json(report) : to_text(report);
}

}  // namespace parity::gemm
