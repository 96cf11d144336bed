// The settings the commands hand the library as text (plan, train, bench train, data generate,
// bench comm, gemm measure/run/agree) and the text and files the library makes of the results:
// parsed strictly, errors naming the flag and value, the same lines the CLI printed itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "parity/bench/gemm_timing.hpp"
#include "parity/comm/bench.hpp"
#include "parity/core/text_file.hpp"
#include "parity/data/dataset.hpp"
#include "parity/gemm/workflow.hpp"
#include "parity/model/spec.hpp"
#include "parity/plan/plan_io.hpp"
#include "parity/plan/settings.hpp"
#include "parity/plan/validate.hpp"
#include "parity/train/dist_setup.hpp"
#include "parity/train/train_settings.hpp"

namespace parity {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(PlanSettings, BatchesDefaultPerRankOrFromOneFlag) {
  plan::PlanSettings settings;
  settings.gpus = 4;
  auto options = plan::plan_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  EXPECT_EQ(options->min_global_batch, 512 * 4);
  EXPECT_EQ(options->max_global_batch, 16384 * 4);
  EXPECT_EQ(options->precisions.size(), 2u);
  EXPECT_EQ(options->sharding_types.size(), 4u);
  settings.batch = "1024";
  options = plan::plan_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok());
  EXPECT_EQ(options->min_global_batch, 1024);
  EXPECT_EQ(options->max_global_batch, 1024);
  settings.batch.clear();
  settings.batch_range = "8192:131072";
  settings.precisions = "bf16";
  settings.checkpointing = "full";
  options = plan::plan_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok());
  EXPECT_EQ(options->min_global_batch, 8192);
  EXPECT_EQ(options->max_global_batch, 131072);
  ASSERT_EQ(options->precisions.size(), 1u);
  EXPECT_EQ(options->precisions[0], plan::Precision::kBf16);
  ASSERT_EQ(options->checkpointing.size(), 1u);
  EXPECT_EQ(options->checkpointing[0], plan::Checkpointing::kFull);
}

TEST(PlanSettings, BadTextNamesTheFlag) {
  plan::PlanSettings settings;
  EXPECT_TRUE(contains(plan::plan_options_from_settings(settings).status().message(),
                       "--gpus: 0 must be >= 1"));
  settings.gpus = 8;
  settings.batch = "64x";
  EXPECT_TRUE(contains(plan::plan_options_from_settings(settings).status().message(), "--batch"));
  settings.batch_range = "1024:2048";
  EXPECT_TRUE(contains(plan::plan_options_from_settings(settings).status().message(), "not both"));
  settings.batch.clear();
  settings.batch_range = "1024";
  EXPECT_TRUE(
      contains(plan::plan_options_from_settings(settings).status().message(), "'1024' is not A:B"));
  settings.batch_range = "1024:2048x";
  EXPECT_TRUE(
      contains(plan::plan_options_from_settings(settings).status().message(), "--batch-range B"));
  settings.batch_range.clear();
  settings.precisions = "bf16,fp64";
  const Status bad = plan::plan_options_from_settings(settings).status();
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(bad.message(), "fp64")) << bad.message();
}

TEST(PlanSettings, ContextSearchReportAndFiles) {
  plan::PlanSettings settings;
  settings.model = "tiny";
  settings.gpus = 2;
  settings.batch = "1024";
  EXPECT_TRUE(contains(plan::load_planner_context(settings, "").status().message(), "--hw"));
  auto loaded = plan::load_planner_context(settings, "h200");
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded->context.pricer, loaded->pricer.get());
  EXPECT_EQ(loaded->context.machine.num_gpus, 2);
  const auto options = plan::plan_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok());
  const auto result = plan::search(loaded->context, *options);
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  const std::string text = plan::search_report_text(*result, loaded->context.model);
  EXPECT_TRUE(
      contains(text, "searched " + std::to_string(result->configurations) + " configurations ("))
      << text;
  EXPECT_TRUE(contains(text, "Pareto front (peak memory GB -> M samples/s):\n  ")) << text;

  const auto dir = std::filesystem::path(::testing::TempDir()) / "cli_settings_plan";
  std::filesystem::create_directories(dir);
  const auto wrote = plan::write_search_files(dir, *result, loaded->context);
  ASSERT_TRUE(wrote.is_ok()) << wrote.status().to_string();
  EXPECT_EQ(*wrote, "wrote " + (dir / "plan.json").string() + " and " +
                        (dir / "pareto.svg").string() + "\n");
  EXPECT_TRUE(plan::read_plan_file(dir / "plan.json").is_ok());
  EXPECT_GT(std::filesystem::file_size(dir / "pareto.svg"), 0u);
  // A file where the folder should be: the write fails and names it.
  const auto blocker = dir / "blocker";
  ASSERT_TRUE(write_text_file(blocker, "x").is_ok());
  const Status blocked =
      plan::write_search_files(blocker / "out", *result, loaded->context).status();
  EXPECT_FALSE(blocked.is_ok());
  EXPECT_TRUE(contains(blocked.message(), "blocker")) << blocked.message();
}

TEST(PlanValidationConfigs, OneSourceOfConfigurations) {
  const auto defaults = plan::validation_configs(DeviceKind::kCpu, "", "");
  ASSERT_TRUE(defaults.is_ok());
  EXPECT_EQ(defaults->size(), plan::default_validation_configs(DeviceKind::kCpu).size());
  const auto listed =
      plan::validation_configs(DeviceKind::kCpu, "tiny:256:fp32:none,tiny:512:bf16:full", "");
  ASSERT_TRUE(listed.is_ok()) << listed.status().to_string();
  EXPECT_EQ(listed->size(), 2u);
  EXPECT_TRUE(contains(plan::validation_configs(DeviceKind::kCpu, "tiny:256:fp32:none", "set.txt")
                           .status()
                           .message(),
                       "--configs and --configs-file"));
  EXPECT_FALSE(plan::validation_configs(DeviceKind::kCpu, "", "/nonexistent/set.txt").is_ok());
}

TEST(TrainSettings, ParsedStrictlyIntoOptions) {
  train::TrainSettings settings;
  settings.model = "tiny";
  settings.table_cap = "100";
  settings.batch = "128";
  settings.steps = "7";
  settings.lr = "0.25";
  settings.threads = "3";
  settings.deterministic = true;
  settings.resume = true;
  settings.gemm_choice = "heuristic";
  auto options = train::train_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  EXPECT_EQ(options->batch_size, 128);
  EXPECT_EQ(options->max_steps, 7);
  EXPECT_DOUBLE_EQ(options->learning_rate, 0.25);
  EXPECT_EQ(options->num_threads, 3);
  EXPECT_EQ(options->determinism, train::Determinism::kBitwise);
  EXPECT_EQ(options->resume, train::ResumeMode::kFromLatestCheckpoint);
  EXPECT_EQ(options->gemm_choice, GemmChoice::kVendorHeuristic);
  for (const auto& table : options->spec.embedding.tables) EXPECT_LE(table.num_rows, 100);
  EXPECT_FALSE(options->on_progress);

  settings.batch = "64x";
  EXPECT_TRUE(contains(train::train_options_from_settings(settings).status().message(), "--batch"));
  settings.batch = "64";
  settings.threads = "5000";
  EXPECT_TRUE(
      contains(train::train_options_from_settings(settings).status().message(), "--threads"));
  settings.threads = "0";
  settings.epochs = "0";
  EXPECT_TRUE(
      contains(train::train_options_from_settings(settings).status().message(), "--epochs"));
  settings.epochs = "1";
  settings.table_cap = "0";
  EXPECT_TRUE(
      contains(train::train_options_from_settings(settings).status().message(), "--table-cap"));
}

TEST(StepBenchSettings, ParsedStrictlyIntoOptions) {
  train::StepBenchSettings settings;
  settings.device = "cpu";
  settings.batch = "256";
  settings.seed = "9";
  settings.steps = 4;
  auto options = train::step_bench_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  EXPECT_EQ(options->device, DeviceKind::kCpu);
  EXPECT_EQ(options->batch_size, 256);
  EXPECT_EQ(options->seed, 9u);
  EXPECT_EQ(options->timed_steps, 4);
  settings.batch = "0";
  EXPECT_TRUE(
      contains(train::step_bench_options_from_settings(settings).status().message(), "batch"));
  settings.batch = "1";
  settings.seed = "-1";
  EXPECT_FALSE(train::step_bench_options_from_settings(settings).is_ok());
}

TEST(DistSetup, DeviceMatchesTheCommunicator) {
  EXPECT_TRUE(train::check_device_for_backend(DeviceKind::kGpu, "nccl", "--backend").is_ok());
  EXPECT_TRUE(train::check_device_for_backend(DeviceKind::kCpu, "local", "--comm").is_ok());
  EXPECT_EQ(train::check_device_for_backend(DeviceKind::kCpu, "nccl", "--comm").message(),
            "--device: cpu does not go with --comm nccl (use --device cuda)");
  EXPECT_EQ(train::check_device_for_backend(DeviceKind::kGpu, "local", "--backend").message(),
            "--device: gpu does not go with --backend local (use --device cpu)");
}

TEST(DistSetup, StartLines) {
  train::DistTrainSettings settings;
  train::DistTrainOptions options;
  EXPECT_EQ(train::mpi_train_start_text(4, settings, options),
            "distributed: 4 ranks over MPI, placement greedy table-wise by bytes, gradient chunks "
            "one per rank\n");
  settings.plan = "p.json";
  options.gradient_chunks = 8;
  EXPECT_EQ(train::mpi_train_start_text(2, settings, options),
            "distributed: 2 ranks over MPI, placement p.json (its table placement only), gradient "
            "chunks 8\n");
  EXPECT_EQ(train::gpu_train_start_text(2, "nccl", "nccl", settings),
            "distributed: 2 ranks over nccl (one GPU each), placement p.json (its tables only)\n");
  settings.plan.clear();
  EXPECT_EQ(train::gpu_train_start_text(1, "local", "local", settings),
            "distributed: 1 ranks over local (one CPU process each), placement greedy table-wise "
            "by bytes\n");
}

TEST(SyntheticSettings, DefaultsAndErrors) {
  data::SyntheticSettings settings;
  settings.samples = "95";
  auto options = data::synthetic_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  EXPECT_EQ(options->train_samples, 95);
  EXPECT_EQ(options->eval_samples, 9);  // samples / 10
  EXPECT_DOUBLE_EQ(options->zipf_alpha, 1.05);
  settings.samples = "5";
  EXPECT_EQ(data::synthetic_options_from_settings(settings)->eval_samples, 1);  // at least one
  settings.eval_samples = "0";
  EXPECT_EQ(data::synthetic_options_from_settings(settings)->eval_samples, 0);
  settings.samples = "0";
  EXPECT_TRUE(
      contains(data::synthetic_options_from_settings(settings).status().message(), "--samples"));
  settings.samples = "10";
  settings.zipf = "1.0x";
  EXPECT_TRUE(
      contains(data::synthetic_options_from_settings(settings).status().message(), "--zipf"));
}

TEST(CommBenchSettings, SizesListsAndValidation) {
  comm::CommBenchSettings settings;
  settings.max_bytes = "1KiB";
  settings.collectives = "all_reduce,broadcast";
  settings.placement = "in_place";
  auto options = comm::comm_bench_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  EXPECT_EQ(options->min_bytes, 8);
  EXPECT_EQ(options->max_bytes, 1024);
  EXPECT_EQ(options->collectives.size(), 2u);
  ASSERT_EQ(options->placements.size(), 1u);
  EXPECT_EQ(options->placements[0], comm::BenchPlacement::kInPlace);
  settings.min_bytes = "8x";
  EXPECT_TRUE(
      contains(comm::comm_bench_options_from_settings(settings).status().message(), "--min-bytes"));
  settings.min_bytes = "8";
  settings.step_factor = 1.0;
  EXPECT_TRUE(contains(comm::comm_bench_options_from_settings(settings).status().message(),
                       "--step-factor"));
  settings.step_factor = 2.0;
  settings.placement = "sideways";
  EXPECT_TRUE(
      contains(comm::comm_bench_options_from_settings(settings).status().message(), "--placement"));
}

TEST(GemmMeasureCounts, NamedAsFlags) {
  gemm::MeasureOptions options;
  EXPECT_TRUE(gemm::validate_measure_counts(options, "gemm run").is_ok());
  options.repetitions = 0;
  EXPECT_EQ(gemm::validate_measure_counts(options, "gemm run").message(),
            "gemm run: --reps=0 must be >= 1");
  options.repetitions = 1;
  options.warmup_iterations = -1;
  EXPECT_EQ(gemm::validate_measure_counts(options, "gemm measure").message(),
            "gemm measure: --warmup=-1 must be >= 0");
}

TEST(GemmAgreementReport, HalvesAndErrors) {
  const gemm::ModelSource nvidia{"h200", std::nullopt, ""};
  EXPECT_EQ(gemm::agreement_report(nvidia, "", "all", false).status().code(),
            StatusCode::kInvalidArgument);
  const gemm::ModelSource amd{"mi300x", std::nullopt, ""};
  // JSON takes one half per run: "both" is not a half there.
  EXPECT_FALSE(gemm::agreement_report(amd, "", "both", true).is_ok());
  EXPECT_FALSE(gemm::agreement_report(amd, "", "sideways", false).is_ok());
}

TEST(PlanCommands, SearchAndCompareReportThenWriteTheirFiles) {
  const auto dir = std::filesystem::temp_directory_path() / "parity_unit_plan_commands";
  std::filesystem::remove_all(dir);
  plan::PlanSettings settings;
  settings.model = "tiny";
  settings.gpus = 8;
  settings.batch = "1024";
  std::vector<std::string> printed;
  const plan::PrintText print = [&printed](const std::string& text) { printed.push_back(text); };
  Status status = plan::run_plan_search(settings, "h200", (dir / "search").string(), print);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  ASSERT_EQ(printed.size(), 2u);  // the report, then the files written
  EXPECT_TRUE(std::filesystem::exists(dir / "search" / "plan.json"));
  EXPECT_TRUE(contains(printed[1], "plan.json")) << printed[1];
  printed.clear();
  status = plan::run_plan_compare(settings, "h200", "mi350x", 2.0, "", print);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  EXPECT_EQ(printed.size(), 1u);  // no out_dir: the report only
  printed.clear();
  // Bad input names the flag and prints nothing.
  EXPECT_TRUE(contains(plan::run_plan_compare(settings, "h200", "mi350x", 0.5, "", print).message(), "--headroom: 0.5"));
  EXPECT_FALSE(plan::run_plan_search(settings, "no_such_gpu", "", print).is_ok());
  settings.gpus = 0;
  EXPECT_TRUE(contains(plan::run_plan_search(settings, "h200", "", print).message(), "--gpus"));
  EXPECT_TRUE(printed.empty());
  std::filesystem::remove_all(dir);
}

TEST(GemmSelectCommand, TopLatencyPlaceholderAndJson) {
  gemm::SelectSettings settings;
  settings.model = {"h200", std::nullopt, ""};
  settings.top = 0;
  EXPECT_EQ(gemm::select_command_report(settings).status().message(), "gemm select: --top=0 must be >= 1");
  settings.top = 3;
  // No size: a selection needs one; the latency report draws its own shapes.
  EXPECT_EQ(gemm::select_command_report(settings).status().code(), StatusCode::kInvalidArgument);
  settings.is_latency_report = true;
  settings.latency_samples = 100;  // the fewest measure_selection_latency takes
  const auto latency = gemm::select_command_report(settings);
  ASSERT_TRUE(latency.is_ok()) << latency.status().to_string();
  EXPECT_TRUE(contains(*latency, "p50")) << *latency;
  settings.is_latency_report = false;
  settings.sizes.m = 1024;
  settings.sizes.n = 2048;
  settings.sizes.k = 512;
  settings.is_json = true;
  const auto json_text = gemm::select_command_report(settings);
  ASSERT_TRUE(json_text.is_ok()) << json_text.status().to_string();
  EXPECT_EQ(json_text->front(), '{') << *json_text;
  settings.is_json = false;
  settings.layout = "XY";
  EXPECT_EQ(gemm::select_command_report(settings).status().code(), StatusCode::kInvalidArgument);
}

TEST(LoadSpecWithOverrides, AppliesThem) {
  model::SpecOverrides overrides;
  overrides.table_cap = "10";
  const auto spec = model::load_spec("tiny", overrides);
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  for (const auto& table : spec->embedding.tables) EXPECT_LE(table.num_rows, 10);
  overrides.table_cap = "10x";
  EXPECT_TRUE(contains(model::load_spec("tiny", overrides).status().message(), "--table-cap"));
  EXPECT_FALSE(model::load_spec("no-such-preset", model::SpecOverrides{}).is_ok());
}

}  // namespace
}  // namespace parity
