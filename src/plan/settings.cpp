// The planner commands' settings into search options and contexts, the search report and the
// files it writes (include/parity/plan/settings.hpp).
#include "parity/plan/settings.hpp"

#include <sstream>
#include <vector>

#include "parity/core/parse.hpp"
#include "parity/core/text_file.hpp"
#include "parity/hw/catalogue.hpp"
#include "parity/model/spec.hpp"
#include "parity/plan/calibration.hpp"
#include "parity/plan/plan_io.hpp"

namespace parity::plan {
namespace {

template <typename T, typename Parse>
Result<std::vector<T>> parse_list(const std::string& text, Parse parse) {
  std::vector<T> values;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    PARITY_ASSIGN_OR_RETURN(T value, parse(item));
    values.push_back(value);
  }
  return values;
}

// Global batch: --batch B, --batch-range A:B, or by default 512..16384 per rank.
Status parse_batches(const PlanSettings& settings, PlanOptions& options) {
  PARITY_CHECK_ARG(settings.batch.empty() || settings.batch_range.empty(),
                   "plan: give --batch or --batch-range, not both");
  if (!settings.batch.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.min_global_batch, parse_int64(settings.batch, "--batch", 1));
    options.max_global_batch = options.min_global_batch;
  } else if (!settings.batch_range.empty()) {
    const auto colon = settings.batch_range.find(':');
    PARITY_CHECK_ARG(colon != std::string::npos, "--batch-range: '", settings.batch_range,
                     "' is not A:B (global batches, e.g. 8192:131072)");
    PARITY_ASSIGN_OR_RETURN(
        options.min_global_batch,
        parse_int64(settings.batch_range.substr(0, colon), "--batch-range A", 1));
    PARITY_ASSIGN_OR_RETURN(
        options.max_global_batch,
        parse_int64(settings.batch_range.substr(colon + 1), "--batch-range B", 1));
  } else {
    options.min_global_batch = std::int64_t{512} * settings.gpus;
    options.max_global_batch = std::int64_t{16384} * settings.gpus;
  }
  return Status::ok();
}

}  // namespace

Result<PlanOptions> plan_options_from_settings(const PlanSettings& settings) {
  PARITY_CHECK_ARG(settings.gpus >= 1, "--gpus: ", settings.gpus, " must be >= 1");
  PlanOptions options;
  PARITY_RETURN_IF_ERROR(parse_batches(settings, options));
  PARITY_ASSIGN_OR_RETURN(options.checkpointing,
                          parse_list<Checkpointing>(settings.checkpointing, parse_checkpointing));
  PARITY_ASSIGN_OR_RETURN(options.precisions,
                          parse_list<Precision>(settings.precisions, parse_precision));
  PARITY_ASSIGN_OR_RETURN(options.sharding_types,
                          parse_list<ShardingType>(settings.sharding, parse_sharding_type));
  return options;
}

Result<LoadedPlannerContext> load_planner_context(const PlanSettings& settings,
                                                  const std::string& hw_name) {
  PARITY_CHECK_ARG(!hw_name.empty(),
                   "plan: the GPU is required (--hw, or --from/--to for compare)");
  PARITY_ASSIGN_OR_RETURN(const model::ModelSpec spec, model::load_spec(settings.model));
  LoadedPlannerContext loaded;
  PARITY_ASSIGN_OR_RETURN(loaded.context.model, planner_model_from_spec(spec));
  PARITY_ASSIGN_OR_RETURN(const hw::HardwareSpec gpu,
                          hw::find_hardware(hw_name, settings.data_dir));
  PARITY_ASSIGN_OR_RETURN(loaded.context.machine, make_machine(gpu, settings.gpus, settings.nodes));
  PARITY_ASSIGN_OR_RETURN(loaded.context.calibration,
                          load_planner_calibration(gpu, settings.data_dir));
  PARITY_ASSIGN_OR_RETURN(GemmPricer pricer, GemmPricer::create(gpu, settings.data_dir));
  loaded.pricer = std::make_unique<GemmPricer>(std::move(pricer));
  loaded.context.pricer = loaded.pricer.get();
  return loaded;
}

std::string search_report_text(const SearchResult& result, const PlannerModel& model) {
  std::ostringstream text;
  text << plan_report(result.best, model) << "\n"
       << "searched " << result.configurations << " configurations (" << result.feasible
       << " fit); Pareto front (peak memory GB -> M samples/s):\n";
  for (const Plan& point : result.pareto) {
    text << "  " << point.prediction.peak_memory_bytes / 1e9 << " -> "
         << point.prediction.samples_per_s / 1e6 << "  (batch/rank " << point.config.per_rank_batch
         << ", " << checkpointing_name(point.config.checkpointing) << ", "
         << precision_name(point.config.precision) << ")\n";
  }
  return text.str();
}

Result<std::string> write_search_files(const std::filesystem::path& dir, const SearchResult& result,
                                       const PlannerContext& context) {
  const std::filesystem::path plan_path = dir / "plan.json";
  const std::filesystem::path svg_path = dir / "pareto.svg";
  PARITY_RETURN_IF_ERROR(write_plan_file(plan_path, result.best));
  const std::string title = context.model.name + " on " + std::to_string(context.machine.num_gpus) +
                            " x " + context.machine.gpu.name;
  PARITY_RETURN_IF_ERROR(write_text_file(svg_path, pareto_svg(result, title)).with_context("plan"));
  return "wrote " + plan_path.string() + " and " + svg_path.string() + "\n";
}

Result<std::string> write_comparison_files(const std::filesystem::path& dir,
                                           const Comparison& comparison, const std::string& from_hw,
                                           const std::string& to_hw) {
  PARITY_RETURN_IF_ERROR(write_plan_file(dir / ("plan_" + from_hw + ".json"), comparison.source));
  if (comparison.ported.is_ok()) {
    PARITY_RETURN_IF_ERROR(
        write_plan_file(dir / ("plan_direct_port_" + to_hw + ".json"), comparison.ported.value()));
  }
  PARITY_RETURN_IF_ERROR(
      write_plan_file(dir / ("plan_codesigned_" + to_hw + ".json"), comparison.codesigned));
  return "wrote the plans to " + dir.string() + "\n";
}

Status run_plan_search(const PlanSettings& settings, const std::string& hw, const std::string& out_dir,
                       const PrintText& print) {
  PARITY_ASSIGN_OR_RETURN(const PlanOptions options, plan_options_from_settings(settings));
  PARITY_ASSIGN_OR_RETURN(const LoadedPlannerContext loaded, load_planner_context(settings, hw));
  PARITY_ASSIGN_OR_RETURN(const SearchResult result, search(loaded.context, options));
  print(search_report_text(result, loaded.context.model));
  if (out_dir.empty()) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const std::string wrote, write_search_files(out_dir, result, loaded.context));
  print(wrote);
  return Status::ok();
}

Status run_plan_compare(const PlanSettings& settings, const std::string& from_hw, const std::string& to_hw,
                        double max_headroom_scale, const std::string& out_dir, const PrintText& print) {
  PARITY_ASSIGN_OR_RETURN(const PlanOptions options, plan_options_from_settings(settings));
  PARITY_ASSIGN_OR_RETURN(const LoadedPlannerContext source, load_planner_context(settings, from_hw));
  PARITY_ASSIGN_OR_RETURN(const LoadedPlannerContext target, load_planner_context(settings, to_hw));
  PARITY_ASSIGN_OR_RETURN(const Comparison comparison,
                          compare_port_and_codesign(source.context, target.context, options, max_headroom_scale));
  print(comparison_report(comparison));
  if (out_dir.empty()) return Status::ok();
  PARITY_ASSIGN_OR_RETURN(const std::string wrote, write_comparison_files(out_dir, comparison, from_hw, to_hw));
  print(wrote);
  return Status::ok();
}

}  // namespace parity::plan
