// `parity plan validate`: the planner's single-GPU predictions against the trainer's measured
// step time and peak memory (library: include/parity/plan/validate.hpp). Parses, runs, prints.
#include <iostream>
#include <memory>
#include <string>

#include "commands.hpp"
#include "device_support.hpp"
#include "parity/plan/validate.hpp"

namespace parity::cli {
namespace {

struct ValidateArgs {
  std::string device = "gpu";
  std::string hw = "h200";
  std::string configs;  // empty: the default list for the device
  std::string configs_file;
  int warmup = 3;
  int steps = 10;
  std::string out;
  std::string data_dir;
  bool predict_only = false;
};

Status run_validate(const ValidateArgs& args) {
  plan::ValidationOptions options;
  PARITY_ASSIGN_OR_RETURN(options.device, parse_device_kind(args.device));
  options.hardware = args.hw;
  options.warmup_steps = args.warmup;
  options.timed_steps = args.steps;
  options.predict_only = args.predict_only;
  if (!args.data_dir.empty()) options.data_dir = std::filesystem::path(args.data_dir);
  PARITY_RETURN_IF_ERROR(options.validate());
  PARITY_ASSIGN_OR_RETURN(const std::vector<plan::ValidationConfig> configs,
                          plan::validation_configs(options.device, args.configs, args.configs_file));
  if (options.device == DeviceKind::kGpu && !options.predict_only) {
    const Status device = require_cuda_device("plan validate");
    if (!device.is_ok()) {
      return unsupported(device.message(), "; `parity plan validate --device cpu` runs the CPU trainer on "
                                            "tiny-sized configurations (the pipeline, not a GPU validation)");
    }
  }
  PARITY_ASSIGN_OR_RETURN(const plan::ValidationReport report, plan::validate_plans(configs, options));
  std::cout << plan::validation_report_text(report);
  if (!args.out.empty()) {
    PARITY_RETURN_IF_ERROR(plan::write_validation_json(report, args.out));
    std::cout << "wrote " << args.out << "\n";
  }
  return Status::ok();
}

}  // namespace

void add_plan_validate_command(CLI::App& plan, Outcome& outcome) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = plan.add_subcommand("validate", "Planner predictions vs the trainer's measured step time and peak memory");
  cmd->add_option("--device", args->device, "gpu (default; needs a CUDA device) or cpu (tiny configurations)");
  cmd->add_option("--hw", args->hw, "catalogue GPU the planner predicts for (default h200)");
  cmd->add_option(
      "--configs", args->configs,
      "MODEL:BATCH:PRECISION:CHECKPOINTING[:OPTIMIZER][,...] (default: the device's list)");
  cmd->add_option(
      "--configs-file", args->configs_file,
      "a validation-set file, one configuration per line (e.g. bench/plan/validation_set_1.txt)");
  cmd->add_option("--warmup", args->warmup, "warm-up steps per configuration (default 3)");
  cmd->add_option("--steps", args->steps, "timed steps per configuration (default 10)");
  cmd->add_option("--out", args->out, "write the results JSON here");
  cmd->add_option("--data-dir", args->data_dir, "folder with hardware/ and calibration/");
  cmd->add_flag("--predict-only", args->predict_only,
                "print the planner's predictions (and phases) without running the trainer");
  cmd->callback([args, &outcome] { outcome.status = run_validate(*args); });
}

}  // namespace parity::cli
