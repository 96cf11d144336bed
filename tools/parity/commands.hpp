// Subcommand registration for the parity CLI. Each cmd_*.cpp adds its subcommands to the app;
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

void add_hw_commands(CLI::App& hw, Outcome& outcome);           // list, show, compare
void add_probe_command(CLI::App& hw, Outcome& outcome);         // hw probe
void add_bench_commands(CLI::App& bench, Outcome& outcome);     // bench hbm
void add_bench_gemm_command(CLI::App& bench, Outcome& outcome);  // bench gemm
void add_bench_tbe_command(CLI::App& bench, Outcome& outcome);  // bench tbe
void add_bench_attention_command(CLI::App& bench, Outcome& outcome);  // bench attention
void add_bench_interaction_command(CLI::App& bench, Outcome& outcome);  // bench interaction (dot, fwd/bwd)
void add_bench_gemm_run_command(CLI::App& bench, Outcome& outcome);  // bench gemm-run
void add_bench_train_command(CLI::App& bench, Outcome& outcome);  // bench train (step throughput)
void add_bench_comm_command(CLI::App& bench, Outcome& outcome);  // bench comm (collectives, alpha-beta fit)
void add_gemm_commands(CLI::App& gemm, Outcome& outcome);       // gemm select/eval/calibrate
void add_gemm_run_commands(CLI::App& gemm, Outcome& outcome);   // gemm run/measure (cuBLASLt)
void add_tbe_commands(CLI::App& tbe, Outcome& outcome);         // tbe check (correctness run)
void add_train_command(CLI::App& app, Outcome& outcome);        // train (cmd_train.cpp)
void add_data_commands(CLI::App& data, Outcome& outcome);       // data generate / convert-criteo
void add_plan_commands(CLI::App& plan, Outcome& outcome);       // plan, plan compare
void add_plan_validate_command(CLI::App& plan, Outcome& outcome);  // plan validate (runs the trainer)

}  // namespace parity::cli
