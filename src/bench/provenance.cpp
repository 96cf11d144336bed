// Host and build provenance for results files, and the JSON writer. Device fields come from
// parity_gpu (results_json.hpp merges them in CUDA translation units).
#include "bench/results_json.hpp"

#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "parity/build_info.hpp"

namespace parity::bench {
namespace {

std::string utc_timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

std::string hostname() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

}  // namespace

namespace detail {

nlohmann::json host_provenance_json(const std::vector<std::string>& argv, std::uint64_t seed) {
  nlohmann::json argv_json = nlohmann::json::array();
  for (const auto& arg : argv) argv_json.push_back(arg);
  return {
      {"commit", build::kGitSha},
      {"version", build::kVersion},
      {"build_type", build::kBuildType},
      {"cuda_enabled", build::kHasCuda},
      {"compiled_archs", build::kHasCuda ? build::kCudaArchs : ""},
      {"hostname", hostname()},
      {"timestamp_utc", utc_timestamp()},
      {"argv", argv_json},
      {"seed", seed},
      {"device", nullptr},
  };
}

}  // namespace detail

std::vector<std::string> process_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> args;
  std::string current;
  char c = 0;
  while (in.get(c)) {
    if (c == '\0') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) args.push_back(current);
  return args;
}

Status write_json_file(const std::string& path, const nlohmann::json& document) {
  PARITY_CHECK_ARG(!path.empty(), "write_json_file: path is empty; expected a file name");
  const std::filesystem::path file(path);
  std::error_code error;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), error);
    if (error) {
      return io_error("write_json_file: cannot create directory '", file.parent_path().string(),
                      "': ", error.message());
    }
  }
  std::ofstream out(file);
  if (!out) return io_error("write_json_file: cannot open '", path, "' for writing");
  out << document.dump(2) << "\n";
  out.close();
  if (!out) return io_error("write_json_file: writing '", path, "' failed");
  return Status::ok();
}

}  // namespace parity::bench
