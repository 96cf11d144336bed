// parity: the command-line front end. Library calls return Status; this file turns them into
// messages on stderr and exit codes. Exit codes: 0 ok, 1 runtime error, 2 invalid input or usage,
// 3 unsupported on this build/hardware, 4 internal error (an exception escaped: a bug to report).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>

#include "commands.hpp"
#include "parity/build_info.hpp"

namespace parity::cli {

int exit_code_for(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return 0;
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound: return 2;
    case StatusCode::kUnsupported: return 3;
    default: return 1;
  }
}

void exit_without_finalize(const Status& status) {
  std::fprintf(stderr, "parity: error: %s\n", status.to_string().c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(exit_code_for(status));
}

}  // namespace parity::cli

int main(int argc, char** argv) {
  using namespace parity::cli;
  CLI::App app{"parity: recommendation-model training kernels, analytical models and honest benchmarks"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("parity ") + parity::build::kVersion + " (" +
                                        parity::build::kGitSha + ", cuda=" +
                                        (parity::build::kHasCuda ? parity::build::kCudaArchs : "off") + ")");
  // Every option's help shows its default (subcommands inherit this).
  app.option_defaults()->always_capture_default();
  Outcome outcome;

  add_hw_commands(app, outcome);
  add_bench_commands(app, outcome);
  add_gemm_commands(app, outcome);
  add_tbe_commands(app, outcome);
  add_train_command(app, outcome);
  add_data_commands(app, outcome);
  // Set before plan is added, which inherits it (the groups above do not).
  app.footer(
      "Exit codes: 0 ok, 1 runtime error, 2 invalid input or usage, 3 unsupported on this "
      "build/hardware, 4 internal error (a bug: please report the message).");
  add_plan_commands(app, outcome);

  // The library reports every failure as a Status; an exception reaching here is a bug, but it
  // still gets a message and its own exit code instead of an abort.
  constexpr int kInternalErrorExitCode = 4;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help or the parse error
    return code == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "parity: internal error: uncaught exception: " << e.what() << "\n";
    return kInternalErrorExitCode;
  } catch (...) {
    std::cerr << "parity: internal error: uncaught non-standard exception\n";
    return kInternalErrorExitCode;
  }
  if (!outcome.status.is_ok()) {
    std::cerr << "parity: error: " << outcome.status.to_string() << "\n";
  }
  return exit_code_for(outcome.status);
}
