// `parity bench train --comm BACKEND` (cmd_bench_train_comm.cpp).
#pragma once

#include <string>

#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/step_bench.hpp"

namespace parity::cli {

/// backend nccl (GPU ranks; one rank also times the single-process step) or local (CPU, one rank).
Status run_bench_train_comm(const model::ModelSpec& spec, const train::StepBenchOptions& options,
                            const std::string& backend, int rounds, const std::string& out);

}  // namespace parity::cli
