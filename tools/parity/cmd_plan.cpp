// `parity plan` and `parity plan compare`: the co-design planner (library: include/parity/plan/,
// the settings and files in plan/settings.hpp). Parses, calls, prints; every figure is MODELLED.
// `parity plan validate`: the planner's single-GPU predictions against the trainer's measured
// step time and peak memory (include/parity/plan/validate.hpp).
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "flags.hpp"
#include "parity/plan/settings.hpp"
#include "parity/plan/validate.hpp"

namespace parity::cli {
namespace {

struct PlanCliOptions {
  plan::PlanSettings settings;
  std::string hw;
  std::string from_hw, to_hw;  // compare
  std::string out_dir;
  std::string data_dir;
  double headroom_scale = 8.0;

  plan::PlanSettings resolved() const {
    plan::PlanSettings resolved = settings;
    if (!data_dir.empty()) resolved.data_dir = std::filesystem::path(data_dir);
    return resolved;
  }
};

const auto print_to_cout = [](const std::string& text) { std::cout << text; };

Status run_plan(const PlanCliOptions& cli) {
  return plan::run_plan_search(cli.resolved(), cli.hw, cli.out_dir, print_to_cout);
}

Status run_compare(const PlanCliOptions& cli) {
  return plan::run_plan_compare(cli.resolved(), cli.from_hw, cli.to_hw, cli.headroom_scale, cli.out_dir, print_to_cout);
}

void add_common_options(CLI::App& command, PlanCliOptions& options) {
  plan::PlanSettings& s = options.settings;
  command.add_option("--model", s.model, "preset (tiny, dlrm-kaggle, dlrm-v2) or spec JSON");
  command.add_option("--gpus", s.gpus, "number of GPUs (ranks)");
  command.add_option("--nodes", s.nodes, "scale-up domains (default: fewest that hold the GPUs)");
  command.add_option("--batch", s.batch, "global batch (divisible by the GPUs)");
  command.add_option("--batch-range", s.batch_range, "global batches A:B, doubling");
  command.add_option("--checkpointing", s.checkpointing, "allowed: none,full");
  command.add_option("--precision", s.precisions, "allowed: fp32,tf32,bf16,bf16_fp16tables");
  command.add_option("--sharding", s.sharding,
                     "allowed: table_wise,row_wise,column_wise,data_parallel");
  command.add_option("--out", options.out_dir, "write plan JSON (and SVG) here");
  add_data_dir_option(&command, options.data_dir);
}

struct ValidateArgs {
  plan::ValidationSettings settings;
  std::string out;
};

Status run_validate(const ValidateArgs& args) {
  PARITY_ASSIGN_OR_RETURN(const plan::ValidationRequest request, plan::validation_request_from_settings(args.settings));
  if (request.needs_gpu()) {
    const Status device = require_cuda_device("plan validate");
    if (!device.is_ok()) {
      return unsupported(device.message(), "; `parity plan validate --device cpu` runs the CPU trainer on "
                                            "tiny-sized configurations (the pipeline, not a GPU validation)");
    }
  }
  PARITY_ASSIGN_OR_RETURN(const plan::ValidationReport report, plan::validate_plans(request.configs, request.options));
  std::cout << plan::validation_report_text(report);
  if (!args.out.empty()) {
    PARITY_RETURN_IF_ERROR(plan::write_validation_json(report, args.out));
    std::cout << "wrote " << args.out << "\n";
  }
  return Status::ok();
}

CLI::App* add_validate(CLI::App& plan, Outcome& outcome) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = plan.add_subcommand("validate", "Planner predictions vs the trainer's measured step time and peak memory");
  cmd->add_option("--device", args->settings.device, "gpu (default; needs a CUDA device) or cpu (tiny configurations)");
  cmd->add_option("--hw", args->settings.options.hardware, "catalogue GPU the planner predicts for (default h200)");
  cmd->add_option("--configs", args->settings.configs,
                  "MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER][,...] (default: the device's list)");
  cmd->add_option("--configs-file", args->settings.configs_file,
                  "a validation-set file, one configuration per line (e.g. bench/plan/validation_set_1.txt)");
  cmd->add_option("--warmup", args->settings.options.warmup_steps, "warm-up steps per configuration (default 3)");
  cmd->add_option("--steps", args->settings.options.timed_steps, "timed steps per configuration (default 10)");
  cmd->add_option("--out", args->out, "write the results JSON here");
  add_data_dir_option(cmd, args->settings.data_dir);
  cmd->add_flag("--predict-only", args->settings.options.predict_only,
                "print the planner's predictions (and phases) without running the trainer");
  cmd->callback([args, &outcome] { outcome.status = run_validate(*args); });
  return cmd;
}

}  // namespace

void add_plan_commands(CLI::App& app, Outcome& outcome) {
  CLI::App& plan =
      *app.add_subcommand("plan", "Co-design planner: batch, checkpointing, sharding, precision (MODELLED)");
  plan.option_defaults()->always_capture_default(false);  // the planner's help lists its defaults itself
  auto options = std::make_shared<PlanCliOptions>();
  add_common_options(plan, *options);
  plan.add_option("--hw", options->hw, "catalogue GPU (parity hw list)");
  auto* compare = plan.add_subcommand(
      "compare", "Direct port of the source-optimal plan vs the co-designed target plan");
  auto compare_options = std::make_shared<PlanCliOptions>();
  add_common_options(*compare, *compare_options);
  compare->add_option("--from", compare_options->from_hw, "source GPU (its optimal plan is ported)")
      ->required();
  compare->add_option("--to", compare_options->to_hw, "target GPU")->required();
  compare->add_option("--headroom", compare_options->headroom_scale,
                      "largest model scale tried (default 8)");
  compare->callback(
      [compare_options, &outcome] { outcome.status = run_compare(*compare_options); });
  CLI::App* validate = add_validate(plan, outcome);
  plan.callback([options, compare, validate, &outcome] {
    if (!compare->parsed() && !validate->parsed()) outcome.status = run_plan(*options);
  });
}

}  // namespace parity::cli
