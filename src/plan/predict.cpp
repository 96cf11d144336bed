// Placement-dependent parts of the planner's models: each shard's TBE work and memory, the
// per-rank sums, the collectives the placement implies, and the step's critical path
// (docs/planner.md, "Step time").
#include <algorithm>
#include <cmath>

#include "parity/plan/cost_model.hpp"

namespace parity::plan {

double MemoryBreakdown::total() const {
  return embedding_weights + embedding_optimizer + dense_parameters + dense_gradients +
         dense_optimizer + activations + io_buffers + comm_buffers + workspaces + runtime_reserve +
         allocator_reserve;
}

double TimeBreakdown::total_us() const {
  return tbe_forward_us + tbe_backward_us + input_dist_us + embedding_a2a_forward_us +
         embedding_a2a_backward_us + dense_forward_us + dense_backward_us + recompute_us +
         allreduce_us + optimizer_us + overhead_us;
}

namespace {

double table_optimizer_bytes(embedding::OptimizerKind kind, double rows, double cols) {
  switch (kind) {
    case embedding::OptimizerKind::kSgd: return 0.0;
    case embedding::OptimizerKind::kRowwiseAdagrad: return rows * 4.0;
    case embedding::OptimizerKind::kAdagrad: return rows * cols * 4.0;
    case embedding::OptimizerKind::kAdam: return rows * cols * 8.0;
  }
  return 0.0;
}

// The TBE byte model of one shard: `batch` bags over `rows` x `cols`, `lookups` indices.
// The `features` features reading the table share the lookups evenly.
embedding::TbeByteModel shard_bytes(const PlannerModel& model, double rows, int cols, int features,
                                    double batch, double lookups, int table_bytes, int comm_bytes) {
  auto layout = embedding::TbeLayout::create({{static_cast<std::int64_t>(rows), cols}},
                                             std::vector<int>(static_cast<std::size_t>(features), 0));
  if (!layout.is_ok()) return {};  // dims are validated by the model; cannot happen
  embedding::TbeProblem problem{std::move(layout).value()};
  problem.batch_size = std::max<std::int64_t>(1, std::llround(batch));
  problem.num_indices = std::llround(lookups);
  problem.index_dtype = DType::kI64;
  problem.weight_dtype = table_bytes == 2 ? DType::kF16 : DType::kF32;
  problem.output_dtype = comm_bytes == 2 ? DType::kBF16 : DType::kF32;
  const double per_feature = lookups / features;
  const auto unique = static_cast<std::int64_t>(std::llround(expected_unique_rows(rows, per_feature)));
  const auto feature_lookups = static_cast<std::int64_t>(std::llround(per_feature));
  const auto count = static_cast<std::size_t>(features);
  return embedding::tbe_byte_model(problem, model.table_optimizer,
                                   std::vector<std::int64_t>(count, feature_lookups),
                                   std::vector<std::int64_t>(count, unique));
}

}  // namespace

ShardCost shard_cost(const Machine& machine, const PlannerModel& model,
                     const PlannerCalibration& calibration, const ConfigCosts& costs, int table,
                     ShardingType type, std::int64_t rows, int cols) {
  const PlannerTable& spec = model.tables[static_cast<std::size_t>(table)];
  const double global_batch = static_cast<double>(costs.config.global_batch);
  const double local_batch = static_cast<double>(costs.config.per_rank_batch);
  const double ranks = machine.num_gpus;
  const double hbm_bytes_per_us = machine.gpu.hbm_bandwidth_tbps.value * 1e6;
  const int table_bytes = static_cast<int>(costs.table_bytes_per_elem);
  const int comm_bytes = static_cast<int>(costs.comm_bytes_per_elem);
  // Bags and lookups this shard serves per step.
  double batch = global_batch, lookups = global_batch * spec.ids_per_sample;
  if (type == ShardingType::kRowWise) lookups /= ranks;  // rows hashed evenly over the ranks
  if (type == ShardingType::kDataParallel) {
    batch = local_batch;
    lookups = local_batch * spec.ids_per_sample;
  }
  const embedding::TbeByteModel bytes =
      shard_bytes(model, static_cast<double>(rows), cols, spec.features, batch, lookups,
                  table_bytes, comm_bytes);
  ShardCost cost;
  // Beyond the byte model: the forward's per-bag cost; the backward's sort traffic. The
  // kernels' fixed costs are per rank (score_placement).
  cost.tbe_forward_us =
      bytes.forward_bytes / (hbm_bytes_per_us * calibration.tbe_forward_efficiency.value) +
      batch * spec.features * calibration.tbe_forward_bag_ns.value * 1e-3;
  cost.tbe_backward_us =
      (bytes.backward_bytes + lookups * tbe_sort_bytes_per_lookup(costs.sort_passes)) /
      (hbm_bytes_per_us * calibration.tbe_backward_efficiency.value);
  cost.weight_bytes = static_cast<double>(rows) * cols * table_bytes;
  cost.optimizer_bytes = table_optimizer_bytes(model.table_optimizer, static_cast<double>(rows), cols);
  cost.lookups = lookups;
  if (type == ShardingType::kDataParallel) {
    // A replicated table keeps a dense fp32 gradient, all-reduces it and updates every row.
    const double gradient_bytes = static_cast<double>(rows) * cols * 4.0;
    cost.optimizer_bytes += gradient_bytes;
    cost.replicated_gradient_bytes = gradient_bytes / ranks;  // summed over the replicas
    const double update_bytes = 2.0 * cost.weight_bytes + gradient_bytes + 2.0 * cost.optimizer_bytes;
    cost.tbe_backward_us +=
        update_bytes / (hbm_bytes_per_us * calibration.elementwise_efficiency.value);
  } else {
    cost.pooled_dim = static_cast<double>(spec.features) * cols;
    cost.index_bytes = lookups * 8.0 + global_batch * 4.0;  // int64 indices + lengths
  }
  return cost;
}

void PlacementLoad::apply(int rank, const ShardCost& cost, double sign) {
  RankLoad& load = ranks[static_cast<std::size_t>(rank)];
  load.tbe_forward_us += sign * cost.tbe_forward_us;
  load.tbe_backward_us += sign * cost.tbe_backward_us;
  load.weight_bytes += sign * cost.weight_bytes;
  load.optimizer_bytes += sign * cost.optimizer_bytes;
  load.index_bytes += sign * cost.index_bytes;
  load.lookups += sign * cost.lookups;
  load.pooled_dim += sign * cost.pooled_dim;
  load.shards += sign > 0 ? 1 : -1;
  replicated_gradient_bytes += sign * cost.replicated_gradient_bytes;
}

namespace {

// Everything on one rank: the shared dense part plus the rank's shards, then the allocator's share.
MemoryBreakdown rank_memory(const PlannerCalibration& calibration, const ConfigCosts& costs,
                            const RankLoad& rank) {
  MemoryBreakdown memory = costs.shared_memory;
  memory.embedding_weights += rank.weight_bytes;
  memory.embedding_optimizer += rank.optimizer_bytes;
  memory.workspaces += tbe_backward_workspace_bytes(rank.lookups, costs.max_table_dim);
  if (costs.config.global_batch > costs.config.per_rank_batch) {  // more than one rank
    memory.io_buffers += calibration.input_batches_in_flight.value * rank.index_bytes;
    // The rank's pooled outputs (the all-to-all send buffer) and their incoming gradients.
    memory.comm_buffers += 2.0 * static_cast<double>(costs.config.global_batch) * rank.pooled_dim *
                           costs.comm_bytes_per_elem;
  }
  memory.allocator_reserve =
      calibration.allocator_reserve_fraction.value * (memory.total() - memory.runtime_reserve);
  return memory;
}

}  // namespace

StepScore score_placement(const CommParams& comm, const PlannerCalibration& calibration,
                          const ConfigCosts& costs, const PlacementLoad& load, Prediction* detail) {
  const std::size_t rank_count = load.ranks.size();
  const double global_batch = static_cast<double>(costs.config.global_batch);
  const double local_batch = static_cast<double>(costs.config.per_rank_batch);
  // Collectives: rank o sends each peer that peer's local batch of o's pooled columns, and
  // receives from each peer that peer's share of the indices o's shards look up.
  std::vector<double> pooled_per_peer(rank_count), indices_per_peer(rank_count);
  TimeBreakdown step = costs.dense_time;
  StepScore score;
  for (std::size_t r = 0; r < rank_count; ++r) {
    const RankLoad& rank = load.ranks[r];
    pooled_per_peer[r] = local_batch * rank.pooled_dim * costs.comm_bytes_per_elem;
    indices_per_peer[r] = rank.index_bytes / static_cast<double>(rank_count);
    // One batched TBE per rank: its kernels' fixed costs once forward and once backward.
    const double forward_us = rank.tbe_forward_us + (rank.shards > 0 ? calibration.tbe_forward_fixed_us.value : 0.0);
    const double backward_us =
        rank.tbe_backward_us + (rank.shards > 0 ? calibration.tbe_backward_fixed_us.value : 0.0);
    step.tbe_forward_us = std::max(step.tbe_forward_us, forward_us);
    step.tbe_backward_us = std::max(step.tbe_backward_us, backward_us);
    const MemoryBreakdown memory = rank_memory(calibration, costs, rank);
    const double total = memory.total();
    if (total > score.peak_memory_bytes) {
      score.peak_memory_bytes = total;
      score.peak_memory_rank = static_cast<int>(r);
    }
    if (detail != nullptr) {
      detail->memory_per_rank.push_back(memory);
      TimeBreakdown time = costs.dense_time;
      time.tbe_forward_us = forward_us;
      time.tbe_backward_us = backward_us;
      detail->time_per_rank.push_back(time);
    }
  }
  const double a2a_us = all_to_all_time(comm, pooled_per_peer);
  const double input_us = all_to_all_time(comm, indices_per_peer);
  const double allreduce_us =
      all_reduce_time(comm, costs.dense_gradient_bytes + load.replicated_gradient_bytes).time_us;
  // Exposed communication under the trainer's overlap.
  const double dense_us = costs.dense_time.dense_forward_us + costs.dense_time.dense_backward_us;
  step.input_dist_us =
      std::max(0.0, input_us - calibration.input_dist_overlap_fraction.value * dense_us);
  const double a2a_hide = calibration.embedding_a2a_overlap_fraction.value;
  step.embedding_a2a_forward_us = std::max(0.0, a2a_us - a2a_hide * costs.bottom_forward_us);
  step.embedding_a2a_backward_us = std::max(0.0, a2a_us - a2a_hide * costs.bottom_backward_us);
  step.allreduce_us = std::max(0.0, allreduce_us - calibration.allreduce_overlap_fraction.value *
                                                       costs.dense_time.dense_backward_us);
  score.step_us = step.total_us();
  double tbe_sum = 0.0, pooled_sum = 0.0;
  for (const RankLoad& rank : load.ranks) {
    tbe_sum += rank.tbe_forward_us + rank.tbe_backward_us;
    pooled_sum += rank.pooled_dim;
  }
  const double ranks = static_cast<double>(rank_count);
  for (const RankLoad& rank : load.ranks) {
    const double tbe = tbe_sum > 0.0 ? (rank.tbe_forward_us + rank.tbe_backward_us) * ranks / tbe_sum : 0.0;
    const double pooled = pooled_sum > 0.0 ? rank.pooled_dim * ranks / pooled_sum : 0.0;
    score.imbalance += (tbe * tbe + pooled * pooled) / ranks;
  }
  if (detail != nullptr) {
    for (TimeBreakdown& time : detail->time_per_rank) {
      time.input_dist_us = input_us;
      time.embedding_a2a_forward_us = a2a_us;
      time.embedding_a2a_backward_us = a2a_us;
      time.allreduce_us = allreduce_us;
    }
    detail->step = step;
    detail->allreduce_total_us = allreduce_us;
    detail->step_us = score.step_us;
    detail->samples_per_s = global_batch / (score.step_us * 1e-6);
    detail->peak_memory_bytes = score.peak_memory_bytes;
    detail->peak_memory_rank = score.peak_memory_rank;
  }
  return score;
}

Result<Prediction> predict(const Machine& machine, const PlannerModel& model,
                           const PlannerCalibration& calibration, const ConfigCosts& costs,
                           const std::vector<TablePlacement>& tables) {
  PARITY_CHECK_ARG(tables.size() == model.tables.size(), "plan: ", tables.size(),
                   " table placements for a model with ", model.tables.size(), " tables");
  const int ranks = machine.num_gpus;
  PlacementLoad load(ranks);
  for (std::size_t t = 0; t < tables.size(); ++t) {
    PARITY_CHECK_ARG(!tables[t].shards.empty(), "plan: table '", tables[t].table, "' has no shards");
    for (const Shard& shard : tables[t].shards) {
      PARITY_CHECK_ARG(shard.rank >= 0 && shard.rank < ranks, "plan: table '", tables[t].table,
                       "' has a shard on rank ", shard.rank, "; ranks are 0..", ranks - 1);
      const ShardCost cost = shard_cost(machine, model, calibration, costs, static_cast<int>(t),
                                        tables[t].type, shard.row_end - shard.row_begin,
                                        shard.col_end - shard.col_begin);
      load.apply(shard.rank, cost, +1.0);
    }
  }
  Prediction prediction;
  prediction.capacity_bytes = rank_capacity_bytes(machine);
  score_placement(comm_params(machine, calibration), calibration, costs, load, &prediction);
  return prediction;
}

Status predict_plan(const Machine& machine, const PlannerModel& model,
                    const PlannerCalibration& calibration, GemmPricer& pricer, Plan& plan) {
  PARITY_ASSIGN_OR_RETURN(const ConfigCosts costs,
                          config_costs(machine, model, calibration, pricer, plan.config));
  PARITY_ASSIGN_OR_RETURN(plan.prediction, predict(machine, model, calibration, costs, plan.tables));
  return Status::ok();
}

}  // namespace parity::plan
