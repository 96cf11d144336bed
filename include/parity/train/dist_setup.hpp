// The distributed run's settings as a command line, a config file or a binding gives them (text),
// turned into DistTrainOptions: parsed strictly, each error naming the setting. Shared by the MPI
// (CPU ranks) and the NCCL (GPU ranks) runs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "parity/core/status.hpp"
#include "parity/train/dist_trainer.hpp"

namespace parity::train {

struct DistTrainSettings {
  std::string plan;                            // a plan file (its table placement), or empty (greedy)
  std::string gradient_chunks = "0";           // 0: one per rank
  std::string comm_timeout = "300";            // seconds; a collective not done by then fails
  std::string dense_reduction = "overlapped";  // or after-backward (without gradient chunks)
  std::string bucket_bytes = "4MiB";           // dense gradient bucket size
  bool report_timings = false;                 // print the dense reduction's timings (rank 0)

  /// Whether bucketing settings differ from their defaults (only the MPI run takes them).
  bool has_host_reduction_settings() const;
};

/// gradient_chunks, dense_reduction and bucket_bytes into a DistTrainOptions (its `train` left
/// default); errors name the flag: "--bucket-bytes: 0 must be >= 1".
Result<DistTrainOptions> dist_train_options(const DistTrainSettings& settings);

/// comm_timeout in milliseconds; "--comm-timeout: -1 must be > 0 seconds".
Result<double> comm_timeout_ms(const DistTrainSettings& settings);

/// Reads settings.plan (when given) and sets options.placement from it for num_ranks ranks of
/// options.train.spec; an error names the plan file.
Status apply_plan_placement(const DistTrainSettings& settings, int num_ranks, DistTrainOptions& options);

/// A distributed run's communicator and device agree: "nccl" wants the GPU, "local" (and "mpi")
/// the CPU. `flag` names the setting that chose the communicator ("--backend", "--comm").
Status check_device_for_backend(DeviceKind device, std::string_view backend, std::string_view flag);

/// Rank 0's first line of an MPI run: ranks, placement (greedy or the plan's), gradient chunks.
std::string mpi_train_start_text(int ranks, const DistTrainSettings& settings, const DistTrainOptions& options);
/// Rank 0's first line of an NCCL or local run: ranks over `communicator_name` and the placement.
std::string gpu_train_start_text(int ranks, std::string_view communicator_name, std::string_view backend,
                                 const DistTrainSettings& settings);

/// The dense reduction's timings on rank 0, one line (or why there are none: gradient chunks).
std::string reduction_timings_text(const DistTrainSettings& settings, const DistTrainOptions& options,
                                   const DenseReductionTimings& timings);

}  // namespace parity::train
