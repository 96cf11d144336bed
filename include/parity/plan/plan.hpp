// Plan: what the planner decides (batch, checkpointing, precision, each table's placement) and
// what it predicts (per-rank memory and time breakdowns, step time, throughput). A Plan is what
// `parity plan` writes as JSON and `parity train --plan FILE` reads (plan_io.hpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "parity/plan/inputs.hpp"

namespace parity::plan {

// One piece of a table on one rank: rows [row_begin, row_end) x columns [col_begin, col_end).
struct Shard {
  int rank = 0;
  std::int64_t row_begin = 0;
  std::int64_t row_end = 0;
  int col_begin = 0;
  int col_end = 0;
  friend bool operator==(const Shard&, const Shard&) = default;
};

// Data-parallel tables have one full shard per rank.
struct TablePlacement {
  std::string table;  // the model's table name
  ShardingType type = ShardingType::kTableWise;
  std::vector<Shard> shards;
  friend bool operator==(const TablePlacement&, const TablePlacement&) = default;
};

struct TrainConfig {
  std::int64_t global_batch = 0;
  std::int64_t per_rank_batch = 0;
  Checkpointing checkpointing = Checkpointing::kNone;
  Precision precision = Precision::kFp32;
  friend bool operator==(const TrainConfig&, const TrainConfig&) = default;
};

// Bytes on one rank, by category.
struct MemoryBreakdown {
  double embedding_weights = 0;
  double embedding_optimizer = 0;
  double dense_parameters = 0;  // fp32 master (+ bf16 working copy)
  double dense_gradients = 0;
  double dense_optimizer = 0;
  double activations = 0;       // saved for backward + the backward working set
  double io_buffers = 0;        // input batches in flight and the rank's distributed indices
  double comm_buffers = 0;      // all-to-all send/receive buffers + the library's own
  double workspaces = 0;        // GPU op workspaces (TBE backward sort, GEMM)
  double runtime_reserve = 0;   // context, library handles
  double allocator_reserve = 0; // fragmentation
  double total() const;
  friend bool operator==(const MemoryBreakdown&, const MemoryBreakdown&) = default;
};

// Microseconds per step. Per-rank fields are that rank's own work; the step-level breakdown
// (Prediction::step) holds each phase's maximum over ranks and the exposed communication.
struct TimeBreakdown {
  double tbe_forward_us = 0;
  double tbe_backward_us = 0;         // backward fused with the optimiser
  double input_dist_us = 0;           // index all-to-all (exposed part at step level)
  double embedding_a2a_forward_us = 0;
  double embedding_a2a_backward_us = 0;
  double dense_forward_us = 0;        // GEMMs + element-wise
  double dense_backward_us = 0;
  double recompute_us = 0;            // checkpointing's extra forward
  double allreduce_us = 0;            // dense gradients (+ data-parallel tables), exposed part
  double optimizer_us = 0;            // dense optimiser step
  double overhead_us = 0;
  double total_us() const;
  friend bool operator==(const TimeBreakdown&, const TimeBreakdown&) = default;
};

struct Prediction {
  std::vector<MemoryBreakdown> memory_per_rank;
  std::vector<TimeBreakdown> time_per_rank;
  TimeBreakdown step;  // the critical path: phase maxima over ranks, exposed communication
  double allreduce_total_us = 0;  // before overlap
  double step_us = 0;
  double samples_per_s = 0;
  double peak_memory_bytes = 0;  // max over ranks
  double capacity_bytes = 0;     // per rank
  int peak_memory_rank = 0;
  friend bool operator==(const Prediction&, const Prediction&) = default;
};

struct Plan {
  std::string model;     // model/preset name
  std::string hardware;  // catalogue name
  int num_gpus = 0;
  int num_nodes = 0;
  TrainConfig config;
  std::vector<TablePlacement> tables;  // in the model's table order
  Prediction prediction;
  friend bool operator==(const Plan&, const Plan&) = default;
};

}  // namespace parity::plan
