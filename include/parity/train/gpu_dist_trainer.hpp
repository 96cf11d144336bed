// The distributed trainer on GPU ranks: one GPU per rank, collectives over NCCL (launched with
// mpirun, the NCCL id shared over MPI; one rank may bootstrap with the local communicator).
// Embedding tables are placed as the CPU distributed trainer places them (table-wise, row-wise,
// column-wise, data-parallel; from a plan or greedy table-wise by bytes); every rank reads the
// global batch and trains on its rows [r·B/R, (r+1)·B/R); the shards' owners pool the global batch
// on their GPU and the pooled rows and their gradients travel in device all_to_allv (row shards'
// partial sums and the replicas' rows are folded on the host); the dense part is replicated, its
// gradient summed across ranks in buckets started during the backward (the loss is the global
// batch's mean, so this is the average of the ranks' mean-loss gradients). With one rank and
// whole tables nothing is exchanged or reduced: the step is the single-process step.
// docs/training.md, "Distributed on GPUs (NCCL)".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/comm/communicator.hpp"
#include "parity/core/status.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/dist_trainer.hpp"
#include "parity/train/step_bench.hpp"

namespace parity::train {

/// Collective over both communicators (same ranks): `host` (MPI or local) agrees on errors and
/// gathers evaluation logits; `collective` moves the training data: NCCL with device buffers on
/// GPU ranks (options.train.device kGpu), or a host communicator with options.train.device kCpu,
/// which runs the same step on CPU ranks (tests). options.gradient_chunks must be 0;
/// dense_reduction and bucket_bytes apply. Checkpoints: OUT/checkpoint.rank<r>-of-<R>.ckpt, the CPU
/// distributed trainer's sets, resumable on any rank count and placement (re-sharding).
Result<TrainSummary> train_distributed_gpu(const DistTrainOptions& options, comm::Communicator& host,
                                           comm::Communicator& collective);

/// The one-rank overhead benchmark: the single-process step and the distributed step (one rank of
/// `collective`) on the same synthetic batch resident on the device, timed in alternating rounds
/// of equal step counts (so drift affects both alike); medians and the overhead in percent.
struct DistStepBenchReport {
  std::string backend;  // the collective's
  int ranks = 1;
  std::vector<double> single_step_ms, distributed_step_ms;
  double median_single_ms = 0, median_distributed_ms = 0;
  double overhead_percent = 0;  // 100 (distributed / single - 1)
  double single_last_loss = 0, distributed_last_loss = 0;
  double first_loss_difference = 0;  // |single - distributed| of the first step's loss (0: same bits)
};
Result<DistStepBenchReport> benchmark_distributed_step(const model::ModelSpec& spec, const StepBenchOptions& options,
                                                      comm::Communicator& collective, int rounds = 5);
Status write_dist_step_bench_json(const DistStepBenchReport& report, const model::ModelSpec& spec,
                                  const StepBenchOptions& options, const std::string& path);

}  // namespace parity::train
