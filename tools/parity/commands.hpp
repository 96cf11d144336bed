// Subcommand registration for the parity CLI. Each cmd_*.cpp adds its command group to the app;
// a subcommand's callback stores its Status in `outcome`, and main maps it to an exit code.
// Only tools/parity prints and exits.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "parity/core/status.hpp"

namespace parity::cli {

struct Outcome {
  Status status;
};

// Exit codes: 0 ok, 1 runtime error, 2 invalid input/usage, 3 unsupported on this build/hardware
// (main adds 4: an exception escaped a command, an internal error).
int exit_code_for(const Status& status);
// A distributed command whose peer is lost or hung: MPI_Finalize (the session's end) would wait
// for it forever, so the error is printed and the process leaves without it (mpirun then ends
// the job, stopped ranks included).
[[noreturn]] void exit_without_finalize(const Status& status);

// Each adds its command group to the app (one cmd_<group>.cpp each).
void add_hw_commands(CLI::App& app, Outcome& outcome);     // hw list, show, compare, probe
void add_bench_commands(CLI::App& app, Outcome& outcome);  // bench hbm, gemm, tbe, attention, interaction, gemm-run
void add_gemm_commands(CLI::App& app, Outcome& outcome);   // gemm select, calibrate, eval, agree
void add_tbe_commands(CLI::App& app, Outcome& outcome);    // tbe check (correctness run)
void add_train_command(CLI::App& app, Outcome& outcome);   // train
void add_data_commands(CLI::App& app, Outcome& outcome);   // data generate, convert-criteo
void add_plan_commands(CLI::App& app, Outcome& outcome);   // plan, plan compare, plan validate
// Parts of a group in a file of their own.
void add_bench_train_command(CLI::App& bench, Outcome& outcome);  // bench train (cmd_bench_train.cpp)
void add_bench_comm_command(CLI::App& bench, Outcome& outcome);   // bench comm (cmd_bench_train.cpp)
void add_gemm_run_commands(CLI::App& gemm, Outcome& outcome);     // gemm run, measure (cmd_gemm_run.cpp)

}  // namespace parity::cli
