// `parity train --distributed` (cmd_train_dist.cpp): the run on the ranks mpirun started.
#pragma once

#include <functional>
#include <string>

#include "parity/core/status.hpp"
#include "parity/train/trainer.hpp"

namespace parity::cli {

struct DistributedTrainFlags {
  std::string plan;                    // a plan whose tables are table-wise, or empty (greedy)
  std::string gradient_chunks = "0";   // 0: one per rank
  std::string comm_timeout = "300";    // seconds; a collective not done by then fails
  std::string dense_reduction = "overlapped";  // or after-backward (without gradient chunks)
  std::string bucket_bytes = "4MiB";           // dense gradient bucket size
  bool report_timings = false;                 // print the dense reduction's timings (rank 0)
};

/// Starts MPI, trains on its ranks (rank 0 reports progress and calls print_summary), and returns
/// this rank's status (an error names the rank). kUnsupported in builds without MPI.
Status run_distributed_train(train::TrainOptions options, const DistributedTrainFlags& flags,
                             const std::function<void(const train::TrainSummary&)>& print_summary);

}  // namespace parity::cli
