// `parity train --distributed` (cmd_train_dist.cpp, MPI; cmd_train_nccl.cpp, NCCL or local): the
// run on the ranks mpirun started.
#pragma once

#include <functional>
#include <string>

#include "parity/core/status.hpp"
#include "parity/train/dist_setup.hpp"
#include "parity/train/trainer.hpp"

namespace parity::cli {

using PrintSummary = std::function<void(const train::TrainSummary&)>;

/// Starts MPI, trains on its ranks (rank 0 reports progress and calls print_summary), and returns
/// this rank's status (an error names the rank). kUnsupported in builds without MPI.
Status run_distributed_train(train::TrainOptions options, const train::DistTrainSettings& settings,
                             const PrintSummary& print_summary);

/// Trains with train::train_distributed_gpu over NCCL (backend "nccl", one GPU per rank, under
/// mpirun or as one process) or the local communicator on the CPU (backend "local", one rank).
Status run_gpu_distributed_train(train::TrainOptions options, const train::DistTrainSettings& settings,
                                 const std::string& backend, const PrintSummary& print_summary);

}  // namespace parity::cli
