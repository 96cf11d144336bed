// `parity train` end to end: bad input (exit codes and messages), and a run killed with SIGKILL at
// a random moment (possibly inside a checkpoint save) that resumes to the same losses, bit for bit,
// as an uninterrupted run.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "cli/run_cli.hpp"
#include "common/test_support.hpp"

namespace parity {
namespace {

namespace fs = std::filesystem;
using testing::run_cli;

std::string temp_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("parity_cli_train_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir.string();
}

TEST(CliTrain, BadInputGivesClearErrors) {
  const std::string out = temp_dir("bad");
  auto unknown = run_cli("train --model dlrm-huge --synthetic 1000 --out " + out);
  EXPECT_EQ(unknown.exit_code, 2) << unknown.output;
  EXPECT_NE(unknown.output.find("unknown preset 'dlrm-huge'"), std::string::npos) << unknown.output;

  auto missing = run_cli("train --model /nonexistent/spec.json --synthetic 1000 --out " + out);
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  EXPECT_NE(missing.output.find("/nonexistent/spec.json: no such file"), std::string::npos) << missing.output;

  auto batch = run_cli("train --model tiny --synthetic 1000 --batch 0 --out " + out);
  EXPECT_EQ(batch.exit_code, 2) << batch.output;
  EXPECT_NE(batch.output.find("batch: 0 is out of range"), std::string::npos) << batch.output;

  auto sloppy = run_cli("train --model tiny --synthetic 1000 --batch 64x --out " + out);
  EXPECT_EQ(sloppy.exit_code, 2) << sloppy.output;

  auto no_data = run_cli("train --model tiny --out " + out);
  EXPECT_EQ(no_data.exit_code, 2) << no_data.output;
  EXPECT_NE(no_data.output.find("exactly one of --data DIR and --synthetic N"), std::string::npos);

  auto data_dir = run_cli("train --model tiny --data /nonexistent/dataset --out " + out);
  EXPECT_NE(data_dir.exit_code, 0) << data_dir.output;
  EXPECT_NE(data_dir.output.find("/nonexistent/dataset"), std::string::npos) << data_dir.output;

  // Two tables of 10^11 rows x 128 fp32 (about 100 TB): more than any machine has, so the answer
  // does not depend on the machine the test runs on.
  const std::string huge_spec = out + "_huge_spec.json";
  std::ofstream(huge_spec)
      << R"({"name": "huge", "bottom_mlp": [64, 16], "top_mlp": [16, 1], "interaction": {"kind": "dot"},)"
      << R"( "embedding": {"tables": [{"rows": 100000000000, "dim": 16}, {"rows": 100000000000, "dim": 16}]}})";
  auto too_big = run_cli("train --model " + huge_spec + " --synthetic 1000 --out " + out);
  EXPECT_EQ(too_big.exit_code, 1) << too_big.output;
  EXPECT_NE(too_big.output.find("does not fit: needs"), std::string::npos) << too_big.output;
  EXPECT_NE(too_big.output.find("short by"), std::string::npos) << too_big.output;

  // A CPU-only build refuses the GPU before generating data; a CUDA build trains (or, without a
  // device, fails in the backend with its own message).
  auto cuda = run_cli("train --model tiny --synthetic 1000 --device cuda --out " + out);
  if (cuda.output.find("no GPU backend") != std::string::npos) {
    EXPECT_EQ(cuda.exit_code, 3) << cuda.output;
    EXPECT_FALSE(fs::exists(out + "/data")) << "data generated before the device check";
  }
  fs::remove_all(out);
  fs::remove(huge_spec);
}

TEST(CliTrain, TrainsTinyAndPrintsNeAndAuc) {
  const std::string out = temp_dir("tiny");
  auto result = run_cli("train --model tiny --synthetic 20000 --batch 256 --eval-every 20 --out " + out);
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("eval: NE"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("AUC"), std::string::npos);
  EXPECT_NE(result.output.find("planted model's AUC"), std::string::npos);
  EXPECT_TRUE(fs::exists(out + "/training.svg"));
  fs::remove_all(out);
}

std::vector<double> step_losses(const std::string& out) {
  std::ifstream in(out + "/summary.json");
  const auto summary = nlohmann::json::parse(in);
  return summary.at("step_losses").get<std::vector<double>>();
}

pid_t spawn_cli(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(PARITY_CLI_PATH)};
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    execv(PARITY_CLI_PATH, argv.data());
    _exit(127);
  }
  return pid;
}

TEST(CliTrain, KilledAtARandomMomentResumesToTheSameLosses) {
  const std::uint64_t seed = testing::test_seed(1405);
  SCOPED_TRACE(testing::seed_trace(seed));
  const std::string straight = temp_dir("straight"), killed = temp_dir("killed");
  // The uninterrupted run also writes the dataset the killed runs read. 12000 steps take over three
  // seconds even on an idle machine, so three kills within 0.5 s each land before the end.
  const std::string common = " --model tiny --batch 64 --steps 12000 --epochs 8 --checkpoint-every 25 --deterministic --threads 1";
  auto reference = run_cli("train --synthetic 100000" + common + " --out " + straight);
  ASSERT_EQ(reference.exit_code, 0) << reference.output;
  const auto want = step_losses(straight);
  ASSERT_EQ(want.size(), 12000u);

  std::vector<std::string> args = {"train", "--data", straight + "/data", "--model", "tiny", "--batch", "64",
                                   "--steps", "12000", "--epochs", "8", "--checkpoint-every", "25", "--deterministic",
                                   "--threads", "1", "--resume", "--out", killed};
  std::mt19937_64 rng(seed);
  for (int attempt = 0; attempt < 3; ++attempt) {
    const pid_t pid = spawn_cli(args);
    ASSERT_GT(pid, 0);
    // A run takes over a second; a save every 25 steps (fsync included) leaves kills inside saves likely.
    const auto delay = std::chrono::milliseconds(100 + static_cast<int>(rng() % 400));
    std::this_thread::sleep_for(delay);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "attempt " << attempt << " finished before the kill";
  }
  ASSERT_FALSE(fs::exists(killed + "/summary.json"));
  auto resumed = run_cli("train --data " + straight + "/data --model tiny --batch 64 --steps 12000 --epochs 8 "
                         "--checkpoint-every 25 --deterministic --threads 1 --resume --out " + killed);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.output;
  EXPECT_NE(resumed.output.find("resumed from the checkpoint at step"), std::string::npos) << resumed.output;
  const auto got = step_losses(killed);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t s = 0; s < want.size(); ++s) ASSERT_EQ(got[s], want[s]) << "step " << s + 1;
  fs::remove_all(straight);
  fs::remove_all(killed);
}

}  // namespace
}  // namespace parity
