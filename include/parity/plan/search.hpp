// The co-design search: per-GPU batch x checkpointing x precision, and for each an embedding
// placement (capacity- and load-aware greedy, then local search on the step-time model).
// Deterministic: same inputs, same plan. Also the direct-port comparison and model headroom.
#pragma once

#include <string>
#include <vector>

#include "parity/plan/cost_model.hpp"

namespace parity::plan {

struct PlannerContext {
  Machine machine;
  PlannerModel model;
  PlannerCalibration calibration;
  GemmPricer* pricer = nullptr;  // prices GEMMs on machine.gpu
};

struct SearchResult {
  Plan best;
  std::vector<Plan> pareto;  // non-dominated in (samples/s up, peak memory down), by memory
  int configurations = 0;    // (batch, checkpointing, precision) combinations tried
  int feasible = 0;          // of those, how many fit in memory
};

// The best placement for one configuration, or kOutOfMemory saying by how many bytes the best
// attempt exceeded the capacity on its fullest rank.
Result<Plan> plan_configuration(const PlannerContext& context, const PlanOptions& options,
                                const TrainConfig& config);
// The whole search. kOutOfMemory when nothing fits (the smallest excess named), kInvalidArgument
// for bad options.
Result<SearchResult> search(const PlannerContext& context, const PlanOptions& options);

// A plan from another machine run as is on `context.machine` (same batch, checkpointing,
// precision, placement): kOutOfMemory if it does not fit there.
Result<Plan> port_plan(const PlannerContext& context, const Plan& plan);

struct HeadroomPoint {
  std::string change;          // "table rows x2", "hidden dims x1.5"
  double scale = 1.0;
  bool fits = false;
  double samples_per_s = 0.0;  // of the best plan with the change (0 when it does not fit)
  double peak_memory_bytes = 0.0;
};
// What larger model fits on `context.machine`: table rows and MLP/cross hidden widths scaled up
// (each alone), each planned with `options`, until it stops fitting or `max_scale` is reached.
std::vector<HeadroomPoint> model_headroom(const PlannerContext& context, const PlanOptions& options,
                                          double max_scale);

// Direct port vs co-design: the source machine's best plan, that plan run as is on the target
// (when it fits), the target's own best plan, what changed, and the target's model headroom.
struct Comparison {
  Plan source;                 // best on the source machine
  Result<Plan> ported = Plan{};  // the source plan on the target, or why it cannot run there
  Plan codesigned;             // best on the target
  std::vector<std::string> changes;  // ported -> co-designed
  std::vector<HeadroomPoint> headroom;         // on the target
  std::vector<HeadroomPoint> source_headroom;  // the same changes on the source, for contrast
};
/// max_headroom_scale: the largest model scale the headroom tries, >= 1 ("--headroom: 0.5 must be
/// >= 1"); the two machines must have the same GPU count.
Result<Comparison> compare_port_and_codesign(const PlannerContext& source,
                                             const PlannerContext& target,
                                             const PlanOptions& options, double max_headroom_scale);

PlannerModel scale_table_rows(const PlannerModel& model, double scale);
PlannerModel scale_hidden_dims(const PlannerModel& model, double scale);

}  // namespace parity::plan
