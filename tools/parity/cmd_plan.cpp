// `parity plan` and `parity plan compare`: the co-design planner (library: include/parity/plan/).
// This file parses options, calls the planner and prints; every figure it prints is MODELLED.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "parity/core/parse.hpp"
#include "parity/hw/catalogue.hpp"
#include "parity/model/spec.hpp"
#include "parity/plan/plan_io.hpp"

namespace parity::cli {
namespace {

struct PlanCliOptions {
  std::string model = "dlrm-v2";
  std::string hw;
  std::string from_hw, to_hw;  // compare
  int gpus = 0;
  int nodes = 0;               // 0: the fewest scale-up domains that hold the GPUs
  std::string batch;           // global batch
  std::string batch_range;     // A:B global batches
  std::string checkpointing = "none,full";
  std::string precisions = "tf32,bf16";
  std::string sharding = "table_wise,row_wise,column_wise,data_parallel";
  std::string out_dir;
  std::string data_dir;
  double headroom_scale = 8.0;
};

std::optional<std::filesystem::path> data_dir_of(const PlanCliOptions& options) {
  if (options.data_dir.empty()) return std::nullopt;
  return std::filesystem::path(options.data_dir);
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) items.push_back(item);
  return items;
}

template <typename T, typename Parse>
Result<std::vector<T>> parse_list(const std::string& text, Parse parse) {
  std::vector<T> values;
  for (const std::string& item : split_list(text)) {
    PARITY_ASSIGN_OR_RETURN(T value, parse(item));
    values.push_back(value);
  }
  return values;
}

// Global batch: --batch B, --batch-range A:B, or by default 512..16384 per rank.
Status parse_batches(const PlanCliOptions& cli, int gpus, plan::PlanOptions& options) {
  PARITY_CHECK_ARG(cli.batch.empty() || cli.batch_range.empty(),
                   "plan: give --batch or --batch-range, not both");
  if (!cli.batch.empty()) {
    PARITY_ASSIGN_OR_RETURN(options.min_global_batch, parse_int64(cli.batch, "--batch", 1));
    options.max_global_batch = options.min_global_batch;
  } else if (!cli.batch_range.empty()) {
    const auto colon = cli.batch_range.find(':');
    PARITY_CHECK_ARG(colon != std::string::npos, "--batch-range: '", cli.batch_range,
                     "' is not A:B (global batches, e.g. 8192:131072)");
    PARITY_ASSIGN_OR_RETURN(options.min_global_batch,
                            parse_int64(cli.batch_range.substr(0, colon), "--batch-range A", 1));
    PARITY_ASSIGN_OR_RETURN(options.max_global_batch,
                            parse_int64(cli.batch_range.substr(colon + 1), "--batch-range B", 1));
  } else {
    options.min_global_batch = std::int64_t{512} * gpus;
    options.max_global_batch = std::int64_t{16384} * gpus;
  }
  return Status::ok();
}

Result<plan::PlanOptions> plan_options(const PlanCliOptions& cli) {
  PARITY_CHECK_ARG(cli.gpus >= 1, "--gpus: ", cli.gpus, " must be >= 1");
  plan::PlanOptions options;
  PARITY_RETURN_IF_ERROR(parse_batches(cli, cli.gpus, options));
  PARITY_ASSIGN_OR_RETURN(options.checkpointing,
                          parse_list<plan::Checkpointing>(cli.checkpointing, plan::parse_checkpointing));
  PARITY_ASSIGN_OR_RETURN(options.precisions,
                          parse_list<plan::Precision>(cli.precisions, plan::parse_precision));
  PARITY_ASSIGN_OR_RETURN(options.sharding_types,
                          parse_list<plan::ShardingType>(cli.sharding, plan::parse_sharding_type));
  return options;
}

// A planner context for one GPU type; the pricer lives as long as the context is used.
struct LoadedContext {
  std::unique_ptr<plan::GemmPricer> pricer;
  plan::PlannerContext context;
};
Result<LoadedContext> load_context(const PlanCliOptions& cli, const std::string& hw_name) {
  PARITY_CHECK_ARG(!hw_name.empty(), "plan: the GPU is required (--hw, or --from/--to for compare)");
  PARITY_ASSIGN_OR_RETURN(const model::ModelSpec spec, model::load_spec(cli.model));
  LoadedContext loaded;
  PARITY_ASSIGN_OR_RETURN(loaded.context.model, plan::planner_model_from_spec(spec));
  PARITY_ASSIGN_OR_RETURN(const hw::HardwareSpec gpu, hw::find_hardware(hw_name, data_dir_of(cli)));
  PARITY_ASSIGN_OR_RETURN(loaded.context.machine, plan::make_machine(gpu, cli.gpus, cli.nodes));
  PARITY_ASSIGN_OR_RETURN(loaded.context.calibration,
                          plan::load_planner_calibration(gpu, data_dir_of(cli)));
  PARITY_ASSIGN_OR_RETURN(plan::GemmPricer pricer, plan::GemmPricer::create(gpu, data_dir_of(cli)));
  loaded.pricer = std::make_unique<plan::GemmPricer>(std::move(pricer));
  loaded.context.pricer = loaded.pricer.get();
  return loaded;
}

Status write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  return out ? Status::ok() : io_error("plan: cannot write '", path.string(), "'");
}

Status run_plan(const PlanCliOptions& cli) {
  PARITY_ASSIGN_OR_RETURN(const plan::PlanOptions options, plan_options(cli));
  PARITY_ASSIGN_OR_RETURN(const LoadedContext loaded, load_context(cli, cli.hw));
  PARITY_ASSIGN_OR_RETURN(const plan::SearchResult result, plan::search(loaded.context, options));
  std::cout << plan::plan_report(result.best, loaded.context.model) << "\n"
            << "searched " << result.configurations << " configurations (" << result.feasible
            << " fit); Pareto front (peak memory GB -> M samples/s):\n";
  for (const plan::Plan& point : result.pareto) {
    std::cout << "  " << point.prediction.peak_memory_bytes / 1e9 << " -> "
              << point.prediction.samples_per_s / 1e6 << "  (batch/rank " << point.config.per_rank_batch
              << ", " << plan::checkpointing_name(point.config.checkpointing) << ", "
              << plan::precision_name(point.config.precision) << ")\n";
  }
  if (!cli.out_dir.empty()) {
    const std::filesystem::path dir(cli.out_dir);
    PARITY_RETURN_IF_ERROR(plan::write_plan_file(dir / "plan.json", result.best));
    PARITY_RETURN_IF_ERROR(write_text(
        dir / "pareto.svg",
        plan::pareto_svg(result, loaded.context.model.name + " on " + std::to_string(cli.gpus) +
                                     " x " + loaded.context.machine.gpu.name)));
    std::cout << "wrote " << (dir / "plan.json").string() << " and " << (dir / "pareto.svg").string()
              << "\n";
  }
  return Status::ok();
}

Status run_compare(const PlanCliOptions& cli) {
  PARITY_ASSIGN_OR_RETURN(const plan::PlanOptions options, plan_options(cli));
  PARITY_ASSIGN_OR_RETURN(const LoadedContext source, load_context(cli, cli.from_hw));
  PARITY_ASSIGN_OR_RETURN(const LoadedContext target, load_context(cli, cli.to_hw));
  PARITY_CHECK_ARG(cli.headroom_scale >= 1.0, "--headroom: ", cli.headroom_scale, " must be >= 1");
  PARITY_ASSIGN_OR_RETURN(const plan::Comparison comparison,
                          plan::compare_port_and_codesign(source.context, target.context, options,
                                                          cli.headroom_scale));
  std::cout << plan::comparison_report(comparison);
  if (!cli.out_dir.empty()) {
    const std::filesystem::path dir(cli.out_dir);
    PARITY_RETURN_IF_ERROR(plan::write_plan_file(dir / ("plan_" + cli.from_hw + ".json"), comparison.source));
    if (comparison.ported.is_ok()) {
      PARITY_RETURN_IF_ERROR(plan::write_plan_file(dir / ("plan_direct_port_" + cli.to_hw + ".json"),
                                                   comparison.ported.value()));
    }
    PARITY_RETURN_IF_ERROR(plan::write_plan_file(dir / ("plan_codesigned_" + cli.to_hw + ".json"),
                                                 comparison.codesigned));
    std::cout << "wrote the plans to " << dir.string() << "\n";
  }
  return Status::ok();
}

void add_common_options(CLI::App& command, PlanCliOptions& options) {
  command.add_option("--model", options.model, "preset (tiny, dlrm-kaggle, dlrm-v2) or spec JSON");
  command.add_option("--gpus", options.gpus, "number of GPUs (ranks)");
  command.add_option("--nodes", options.nodes, "scale-up domains (default: fewest that hold the GPUs)");
  command.add_option("--batch", options.batch, "global batch (divisible by the GPUs)");
  command.add_option("--batch-range", options.batch_range, "global batches A:B, doubling");
  command.add_option("--checkpointing", options.checkpointing, "allowed: none,full");
  command.add_option("--precision", options.precisions, "allowed: fp32,tf32,bf16,bf16_fp16tables");
  command.add_option("--sharding", options.sharding,
                     "allowed: table_wise,row_wise,column_wise,data_parallel");
  command.add_option("--out", options.out_dir, "write plan JSON (and SVG) here");
  command.add_option("--data-dir", options.data_dir, "folder with hardware/ and calibration/");
}

}  // namespace

void add_plan_commands(CLI::App& plan, Outcome& outcome) {
  auto options = std::make_shared<PlanCliOptions>();
  add_common_options(plan, *options);
  plan.add_option("--hw", options->hw, "catalogue GPU (parity hw list)");
  auto* compare = plan.add_subcommand("compare", "Direct port of the source-optimal plan vs the co-designed target plan");
  auto compare_options = std::make_shared<PlanCliOptions>();
  add_common_options(*compare, *compare_options);
  compare->add_option("--from", compare_options->from_hw, "source GPU (its optimal plan is ported)")->required();
  compare->add_option("--to", compare_options->to_hw, "target GPU")->required();
  compare->add_option("--headroom", compare_options->headroom_scale, "largest model scale tried (default 8)");
  compare->callback([compare_options, &outcome] { outcome.status = run_compare(*compare_options); });
  add_plan_validate_command(plan, outcome);
  CLI::App* validate = plan.get_subcommand("validate");
  plan.callback([options, compare, validate, &outcome] {
    if (!compare->parsed() && !validate->parsed()) outcome.status = run_plan(*options);
  });
}

}  // namespace parity::cli
