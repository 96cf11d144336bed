// `parity train --distributed --backend nccl` (cmd_train_nccl.cpp): the run on GPU ranks.
#pragma once

#include <functional>

#include "cmd_train_dist.hpp"
#include "parity/core/status.hpp"
#include "parity/train/trainer.hpp"

namespace parity::cli {

/// Trains with train::train_distributed_gpu over NCCL (backend "nccl", one GPU per rank, under
/// mpirun or as one process) or the local communicator on the CPU (backend "local", one rank).
Status run_gpu_distributed_train(train::TrainOptions options, const DistributedTrainFlags& flags,
                                 const std::string& backend,
                                 const std::function<void(const train::TrainSummary&)>& print_summary);

}  // namespace parity::cli
