// Runs the built parity binary with arguments and captures exit code and combined output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace parity::testing {

struct CliResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs any shell command line, stdout and stderr together.
inline CliResult run_command(const std::string& command_line) {
  const std::string command = command_line + " 2>&1";
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) result.output += buffer.data();
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline CliResult run_cli(const std::string& args) { return run_command(std::string(PARITY_CLI_PATH) + " " + args); }

}  // namespace parity::testing
