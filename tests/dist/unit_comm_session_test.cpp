// parity_comm_session on one process: the communicators opened by name (what this build lacks is
// kUnsupported, an unknown name kInvalidArgument), and the distributed runs' rank handling on the
// local communicator (training, the step benchmark, the collectives sweep): rank 0 prints the start
// line and reports, every setting is checked before a communicator starts, errors name the flag. MPI itself is not started here (it
// cannot restart in one process); the mpirun tests (dist_train_cli, dist_train_killed_rank,
// dist_bench_comm_cli) run the MPI path and the lost-peer exit.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "parity/comm/bench_run.hpp"
#include "parity/comm/session.hpp"
#include "parity/train/dist_run.hpp"
#include "parity/train/train_settings.hpp"

namespace parity {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CommSession, LocalOpensOneRankForBothRoles) {
  auto session = comm::open_comm_session("local", {});
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  ASSERT_NE(session->host, nullptr);
  ASSERT_NE(session->collective, nullptr);
  EXPECT_EQ(session->mpi, nullptr);
  for (const comm::Communicator* communicator : {session->host.get(), session->collective.get()}) {
    EXPECT_EQ(communicator->rank(), 0);
    EXPECT_EQ(communicator->size(), 1);
    EXPECT_EQ(communicator->backend_name(), "local");
  }
  EXPECT_FALSE(session->has_failed_peer());
}

TEST(CommSession, UnknownNamesAndBackendsNotBuiltAreNamed) {
  auto bogus = comm::open_comm_session("bogus", {});
  ASSERT_FALSE(bogus.is_ok());
  EXPECT_EQ(bogus.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bogus.status().message(), "--backend: 'bogus' is not one of mpi, nccl, local");
  EXPECT_TRUE(comm::is_backend_built("local"));
  EXPECT_FALSE(comm::is_backend_built("bogus"));
  EXPECT_FALSE(comm::is_backend_built(""));
  EXPECT_EQ(comm::default_comm_backend(), comm::is_backend_built("mpi") ? "mpi" : "local");
  // Opening a backend that is built would start MPI or need a GPU: only the missing ones here.
  const std::vector<std::pair<std::string, std::string>> missing_messages = {
      {"mpi", "--backend mpi: this build has no MPI communicator"},
      {"nccl", "--backend nccl: this build has no NCCL communicator"}};
  for (const auto& [backend, message] : missing_messages) {
    if (comm::is_backend_built(backend)) continue;
    auto session = comm::open_comm_session(backend, {});
    ASSERT_FALSE(session.is_ok()) << backend;
    EXPECT_EQ(session.status().code(), StatusCode::kUnsupported) << backend;
    EXPECT_TRUE(contains(session.status().message(), message)) << session.status().message();
  }
}

TEST(DistRun, RankContextNamesRankAndSize) {
  EXPECT_EQ(train::rank_context(0, 1), "rank 0 of 1");
  EXPECT_EQ(train::rank_context(2, 4), "rank 2 of 4");
}

// tiny on the CPU, a few steps: the run's options as `parity train` builds them.
train::TrainOptions tiny_options(const std::filesystem::path& out) {
  train::TrainSettings settings;
  settings.model = "tiny";
  settings.synthetic = "2000";
  settings.batch = "128";
  settings.steps = "4";
  settings.threads = "1";
  settings.out = out.string();
  auto options = train::train_options_from_settings(settings);
  EXPECT_TRUE(options.is_ok()) << options.status().to_string();
  return *options;
}

// Records what a run reports.
struct Recorder {
  std::vector<std::string> printed;
  int summaries = 0;
  int peers_lost = 0;
  train::DistRunReport report() {
    train::DistRunReport report;
    report.print = [this](const std::string& text) { printed.push_back(text); };
    report.on_summary = [this](const train::TrainSummary&) { ++summaries; };
    report.on_peer_lost = [this](const Status&) { ++peers_lost; };
    return report;
  }
};

TEST(DistRun, LocalRankZeroPrintsTheStartLineKeepsProgressAndReportsTheSummary) {
  const auto out = std::filesystem::temp_directory_path() / "parity_unit_dist_run";
  std::filesystem::remove_all(out);
  train::TrainOptions options = tiny_options(out);
  int progress_calls = 0;
  options.on_progress = [&progress_calls](const train::TrainProgress&) { ++progress_calls; };
  Recorder recorder;
  const train::DistTrainSettings settings;
  const Status status = train::run_distributed_train(options, settings, "local", recorder.report());
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  ASSERT_EQ(recorder.printed.size(), 1u);
  EXPECT_EQ(recorder.printed[0], train::gpu_train_start_text(1, "local", "local", settings));
  EXPECT_EQ(recorder.summaries, 1);
  EXPECT_EQ(recorder.peers_lost, 0);
  EXPECT_GT(progress_calls, 0);  // rank 0 keeps its progress
  EXPECT_TRUE(std::filesystem::exists(out / "checkpoint.rank0-of-1.ckpt"));
  std::filesystem::remove_all(out);
}

// Each bad setting fails before a communicator starts, naming the flag, and reports nothing.
TEST(DistRun, SettingErrorsNameTheFlagAndReportNothing) {
  const auto out = std::filesystem::temp_directory_path() / "parity_unit_dist_run_errors";
  const train::TrainOptions options = tiny_options(out);
  struct Case {
    std::string backend;
    train::DistTrainSettings settings;
    StatusCode code;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"local", {}, StatusCode::kInvalidArgument, "--reduction-timings: only with --backend mpi, not local"});
  cases.back().settings.report_timings = true;
  cases.push_back({"local", {}, StatusCode::kInvalidArgument, "--comm-timeout: -1"});
  cases.back().settings.comm_timeout = "-1";
  cases.push_back({"mpi", {}, StatusCode::kInvalidArgument, "--bucket-bytes"});
  cases.back().settings.bucket_bytes = "64x";
  cases.push_back({"nccl", {}, StatusCode::kInvalidArgument, "--device: cpu does not go with --backend nccl"});
  cases.push_back({"bogus", {}, StatusCode::kInvalidArgument, "--backend: 'bogus'"});
  if (!comm::is_backend_built("mpi")) {
    cases.push_back({"mpi", {}, StatusCode::kUnsupported, "--distributed: this build has no MPI communicator"});
  }
  for (const Case& c : cases) {
    Recorder recorder;
    const Status status = train::run_distributed_train(options, c.settings, c.backend, recorder.report());
    EXPECT_EQ(status.code(), c.code) << c.backend << ": " << status.to_string();
    EXPECT_TRUE(contains(status.message(), c.message)) << c.backend << ": " << status.message();
    EXPECT_TRUE(recorder.printed.empty()) << c.backend;
    EXPECT_EQ(recorder.summaries, 0) << c.backend;
  }
  std::filesystem::remove_all(out);
}

TEST(DistRun, StepBenchOnTheLocalRankPrintsAndWritesOnRankZero) {
  const auto out = std::filesystem::temp_directory_path() / "parity_unit_dist_step_bench.json";
  std::filesystem::remove(out);
  auto spec = model::load_spec("tiny", {});
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  train::StepBenchSettings settings;
  settings.model = "tiny";
  settings.device = "cpu";
  settings.batch = "128";
  settings.warmup = 1;
  settings.steps = 4;
  auto options = train::step_bench_options_from_settings(settings);
  ASSERT_TRUE(options.is_ok()) << options.status().to_string();
  std::vector<std::string> printed;
  const auto print = [&printed](const std::string& text) { printed.push_back(text); };
  Status status = train::run_distributed_step_bench(*spec, *options, "local", "--comm", 2, out.string(), print);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_TRUE(contains(printed[0], "overhead: ")) << printed[0];
  EXPECT_EQ(printed[1], "wrote " + out.string() + "\n");
  EXPECT_TRUE(std::filesystem::exists(out));
  std::filesystem::remove(out);
  // The device and the communicator must agree; the error names the flag that chose it.
  printed.clear();
  status = train::run_distributed_step_bench(*spec, *options, "nccl", "--comm", 2, "", print);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "--comm nccl")) << status.message();
  EXPECT_TRUE(printed.empty());
}

TEST(CommBenchRun, LocalRankZeroPrintsTheTableAndWritesTheResults) {
  const auto out = std::filesystem::temp_directory_path() / "parity_unit_comm_bench_run.json";
  std::filesystem::remove(out);
  comm::CommBenchRun run;
  run.backend = "local";
  run.settings.max_bytes = "64";
  run.settings.collectives = "all_reduce";
  run.settings.warmup = 1;
  run.settings.repetitions = 2;
  run.out = out.string();
  std::vector<std::string> printed;
  const auto print = [&printed](const std::string& text) { printed.push_back(text); };
  const Status status = comm::run_comm_bench_command(run, print);
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  ASSERT_EQ(printed.size(), 2u);
  EXPECT_TRUE(contains(printed[0], "all_reduce ")) << printed[0];
  EXPECT_EQ(printed[1], "wrote " + out.string() + "\n");
  auto written = comm::read_comm_bench_json(out.string());
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  EXPECT_EQ(written->backend, "local");
  std::filesystem::remove(out);
}

TEST(CommBenchRun, ErrorsNameTheFlagAndPrintNothing) {
  std::vector<std::string> printed;
  const auto print = [&printed](const std::string& text) { printed.push_back(text); };
  comm::CommBenchRun run;
  run.backend = "local";
  run.settings.step_factor = 1.0;
  Status status = comm::run_comm_bench_command(run, print);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "--step-factor: 1 must be > 1")) << status.message();
  run.settings.step_factor = 2.0;
  run.backend = "bogus";
  status = comm::run_comm_bench_command(run, print);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(contains(status.message(), "--backend: 'bogus'")) << status.message();
  run.fit_from = "/nonexistent/parity_comm_results.json";  // read before any communicator starts
  status = comm::run_comm_bench_command(run, print);
  EXPECT_FALSE(status.is_ok());
  EXPECT_TRUE(contains(status.message(), run.fit_from)) << status.message();
  EXPECT_TRUE(printed.empty());
}

}  // namespace
}  // namespace parity
