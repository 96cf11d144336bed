// The planner's memory and step-time models: pure functions of (machine, model, calibration,
// plan). GEMMs are priced by the analytical GEMM selector (gemm/selector.hpp) on the machine's
// GPU, TBE passes by the TBE byte model (embedding/tbe.hpp) over calibrated bandwidth, collectives
// by collectives.hpp. Equations: docs/planner.md.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/plan/calibration.hpp"
#include "parity/plan/collectives.hpp"
#include "parity/plan/plan.hpp"

namespace parity::plan {

// Prices GEMMs with the analytical selector on one device; remembers every shape it priced.
class GemmPricer {
 public:
  static Result<GemmPricer> create(const hw::HardwareSpec& gpu,
                                   const std::optional<std::filesystem::path>& data_dir);
  // Time of the selected kernel for C[m x n] = A[m x k] B[k x n] (x batch) in `dtype`.
  double time_us(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch, DType dtype);
  // Exact fp32 (no tensor cores): the GEMM model does not describe SIMT kernels, so a roofline
  // on the vector FP32 peak at kSimtFp32Efficiency, the HBM bytes, and the model's launch cost.
  double simt_fp32_time_us(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) const;
  static constexpr double kSimtFp32Efficiency = 0.7;

 private:
  GemmPricer(gemm::DeviceParams device, gemm::ModelScalars scalars, double fp32_flops_per_us)
      : device_(std::move(device)), scalars_(scalars), fp32_flops_per_us_(fp32_flops_per_us) {}
  gemm::DeviceParams device_;
  gemm::ModelScalars scalars_;
  double fp32_flops_per_us_ = 0.0;
  // One selector per dtype: the modelled candidate space depends only on the dtype.
  std::map<int, std::shared_ptr<gemm::Selector>> selector_by_dtype_;
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>, double> cache_;
};

// The trainer's device buffers as the planner models them (docs/planner.md, "Memory model"):
// the GPU layout pads the dense input and the dot interaction's output to 8 columns and aligns
// each parameter block to 16 floats; every activation buffer is allocated at creation, so
// activation checkpointing (a recompute into the same buffers) saves no memory in this trainer.
std::int64_t trainer_dense_parameter_count(const PlannerModel& model);
// Layer outputs, pooled embeddings, interaction/cross buffers and the activation
// gradients, per sample of the local batch.
double activation_bytes_per_sample(const PlannerModel& model, Precision precision);
// One staged batch per sample: dense features (+ their bf16 copy), int64 indices and offsets, label.
double input_bytes_per_sample(const PlannerModel& model, Precision precision);
// The TBE backward's workspace for `lookups` indices (sort keys and chunk partials).
double tbe_backward_workspace_bytes(double lookups, int max_dim);
// The GEMM workspace (cuBLASLt's cap, allocated once).
inline constexpr double kGemmWorkspaceBytes = 64.0 * 1024 * 1024;

// Expected distinct rows touched when `lookups` uniform draws hit `rows` rows.
double expected_unique_rows(double rows, double lookups);

// The per-step work one shard brings to its rank, independent of where it is placed.
struct ShardCost {
  double tbe_forward_us = 0;
  double tbe_backward_us = 0;
  double weight_bytes = 0;
  double optimizer_bytes = 0;
  double pooled_dim = 0;       // columns this shard contributes to the pooled output
  double index_bytes = 0;      // distributed indices it receives per step
  double lookups = 0;          // indices its TBE backward sorts per step
  double replicated_gradient_bytes = 0;  // data-parallel: the gradient every rank all-reduces
};
// Everything that does not depend on the placement, for one (machine, model, config).
struct ConfigCosts {
  TrainConfig config;
  MemoryBreakdown shared_memory;  // dense state, activations, IO, reserves: equal on every rank
  TimeBreakdown dense_time;       // dense forward/backward/recompute/optimizer + overhead
  double dense_gradient_bytes = 0;
  double bottom_forward_us = 0;   // what the pooled-embedding all-to-all can hide behind
  double bottom_backward_us = 0;
  double comm_bytes_per_elem = 4;
  double table_bytes_per_elem = 4;
  int max_table_dim = 0;          // sizes the TBE backward workspace's chunk partials
  int sort_passes = 1;            // the TBE backward's radix-sort passes (tbe_sort_passes)
  // Where the dense time goes, as the trainer's step benchmark splits it: the MLP GEMMs with their
  // element-wise passes, the interaction (dot kernels or the cross network), each with its
  // recompute under checkpointing; the loss.
  double mlp_us = 0;
  double interaction_us = 0;
  double loss_us = 0;
};
// Passes of the TBE backward's LSD radix sort over a rank's keys: the row bits of every table's
// rows (an upper bound for a shard) in digits of at most 9 bits.
int tbe_sort_passes(const PlannerModel& model);
// Bytes per lookup the TBE backward's sort moves beyond the byte model: the linearised 8-byte key
// written, then per pass read twice (histogram, scatter) and written once, then read by the
// chunk kernel.
double tbe_sort_bytes_per_lookup(int passes);
Result<ConfigCosts> config_costs(const Machine& machine, const PlannerModel& model,
                                 const PlannerCalibration& calibration, GemmPricer& pricer,
                                 const TrainConfig& config);
// One shard's cost: table `table`, `rows` x `cols` of it, under `type`.
ShardCost shard_cost(const Machine& machine, const PlannerModel& model,
                     const PlannerCalibration& calibration, const ConfigCosts& costs, int table,
                     ShardingType type, std::int64_t rows, int cols);

// What a placement puts on each rank: the sums of its shards' costs. The search updates it
// shard by shard; score_placement turns it into the step time and memory (the one code path
// predict() also uses).
struct RankLoad {
  double tbe_forward_us = 0;
  double tbe_backward_us = 0;
  double weight_bytes = 0;
  double optimizer_bytes = 0;
  double index_bytes = 0;
  double lookups = 0;
  double pooled_dim = 0;
  int shards = 0;
};
struct PlacementLoad {
  std::vector<RankLoad> ranks;
  double replicated_gradient_bytes = 0;  // data-parallel tables' gradients (all-reduced)
  explicit PlacementLoad(int num_ranks = 0) : ranks(static_cast<std::size_t>(num_ranks)) {}
  // sign +1 adds the shard to `rank`, -1 removes it.
  void apply(int rank, const ShardCost& cost, double sign);
};
struct StepScore {
  double step_us = 0;
  double peak_memory_bytes = 0;
  int peak_memory_rank = 0;
  // Mean square of each rank's TBE time and pooled columns, each relative to its mean: lower is
  // more balanced. The search breaks step-time ties with it, so it can leave plateaus where
  // several ranks share the maximum.
  double imbalance = 0;
};
// Step time and peak memory of a placement; with `detail`, the full per-rank breakdowns too.
StepScore score_placement(const CommParams& comm, const PlannerCalibration& calibration,
                          const ConfigCosts& costs, const PlacementLoad& load,
                          Prediction* detail = nullptr);

// Per-rank and step predictions for a complete plan (placement included).
Result<Prediction> predict(const Machine& machine, const PlannerModel& model,
                           const PlannerCalibration& calibration, const ConfigCosts& costs,
                           const std::vector<TablePlacement>& tables);
// Convenience: config_costs + predict for `plan`, filling plan.prediction.
Status predict_plan(const Machine& machine, const PlannerModel& model,
                    const PlannerCalibration& calibration, GemmPricer& pricer, Plan& plan);

// Usable bytes per rank: HBM capacity (1e9 bytes per catalogue GB).
double rank_capacity_bytes(const Machine& machine);

}  // namespace parity::plan
