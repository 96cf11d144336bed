// The outer co-design search (batch x checkpointing x precision), the Pareto front, the direct
// port of a plan to another machine, and the model headroom a machine allows.
#include "parity/plan/search.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "parity/plan/plan_io.hpp"
#include "placement.hpp"

namespace parity::plan {
namespace {

std::string gigabytes(double bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(2) << bytes / 1e9 << " GB";
  return out.str();
}

std::string describe(const TrainConfig& config) {
  std::ostringstream out;
  out << "global batch " << config.global_batch << " (" << config.per_rank_batch << " per rank), "
      << checkpointing_name(config.checkpointing) << " checkpointing, "
      << precision_name(config.precision);
  return out.str();
}

Status out_of_memory(const Plan& plan, const Machine& machine) {
  const Prediction& p = plan.prediction;
  return {StatusCode::kOutOfMemory,
          parity::detail::concat(
              "model '", plan.model, "' does not fit on ", machine.num_gpus, " x ",
              machine.gpu.name, " with ", describe(plan.config), ": rank ", p.peak_memory_rank,
              " needs ", gigabytes(p.peak_memory_bytes), ", ", gigabytes(p.peak_memory_bytes - p.capacity_bytes),
              " more than its ", gigabytes(p.capacity_bytes), " HBM")};
}

Plan make_plan(const PlannerContext& context, const TrainConfig& config,
               std::vector<TablePlacement> tables) {
  Plan plan;
  plan.model = context.model.name;
  plan.hardware = context.machine.gpu.name;
  plan.num_gpus = context.machine.num_gpus;
  plan.num_nodes = context.machine.num_nodes;
  plan.config = config;
  plan.tables = std::move(tables);
  return plan;
}

// Fills plan.prediction from the placement (the same score the search minimised, with detail).
Status fill_prediction(const PlannerContext& context, const ConfigCosts& costs, Plan& plan) {
  PARITY_ASSIGN_OR_RETURN(plan.prediction, predict(context.machine, context.model,
                                                   context.calibration, costs, plan.tables));
  return Status::ok();
}

std::vector<std::int64_t> per_rank_batches(const PlanOptions& options, int ranks) {
  std::vector<std::int64_t> batches;
  const std::int64_t low = options.min_global_batch / ranks;
  const std::int64_t high = options.max_global_batch / ranks;
  for (std::int64_t b = low; b <= high; b *= 2) batches.push_back(b);
  if (batches.back() != high) batches.push_back(high);
  return batches;
}

}  // namespace

Result<Plan> plan_configuration(const PlannerContext& context, const PlanOptions& options,
                                const TrainConfig& config) {
  PARITY_CHECK_ARG(context.pricer != nullptr, "plan: no GEMM pricer");
  PARITY_ASSIGN_OR_RETURN(const ConfigCosts costs,
                          config_costs(context.machine, context.model, context.calibration,
                                       *context.pricer, config));
  detail::PlacementSearch search(context, options, costs);
  PARITY_RETURN_IF_ERROR(search.validate());
  search.run(options.local_search_passes);
  Plan plan = make_plan(context, config, search.placements());
  PARITY_RETURN_IF_ERROR(fill_prediction(context, costs, plan));
  if (plan.prediction.peak_memory_bytes > plan.prediction.capacity_bytes) {
    return out_of_memory(plan, context.machine);
  }
  return plan;
}

Result<SearchResult> search(const PlannerContext& context, const PlanOptions& options) {
  PARITY_CHECK_ARG(context.pricer != nullptr, "plan: no GEMM pricer");
  PARITY_RETURN_IF_ERROR(context.model.validate());
  PARITY_RETURN_IF_ERROR(options.validate(context.machine));
  const int ranks = context.machine.num_gpus;
  SearchResult result;
  std::vector<Plan> feasible;
  Plan least_excess;
  double least_excess_bytes = -1.0;
  for (const Precision precision : options.precisions) {
    // The last placement that fitted, a warm start for the next batch size: embedding costs
    // scale with the batch, so the best placement moves little.
    std::vector<std::size_t> warm_choice;
    std::vector<std::vector<int>> warm_ranks;
    for (const std::int64_t batch : per_rank_batches(options, ranks)) {
      // A placement that fits with less checkpointing fits with more: re-use it as is (the
      // embedding work does not depend on checkpointing); search again only after a miss.
      std::vector<std::size_t> fitted_choice;
      std::vector<std::vector<int>> fitted_ranks;
      for (const Checkpointing policy : options.checkpointing) {
        const TrainConfig config{batch * ranks, batch, policy, precision};
        ++result.configurations;
        PARITY_ASSIGN_OR_RETURN(const ConfigCosts costs,
                                config_costs(context.machine, context.model, context.calibration,
                                             *context.pricer, config));
        detail::PlacementSearch placement(context, options, costs);
        PARITY_RETURN_IF_ERROR(placement.validate());
        bool is_placed = false;
        if (!fitted_choice.empty()) {
          placement.set_placement(fitted_choice, fitted_ranks);
          is_placed = placement.objective().fits;
        }
        if (!is_placed && !warm_choice.empty()) {
          placement.set_placement(warm_choice, warm_ranks);
          placement.improve(options.local_search_passes);
          is_placed = placement.objective().fits;
        }
        if (!is_placed) placement.run(options.local_search_passes);
        Plan plan = make_plan(context, config, placement.placements());
        PARITY_RETURN_IF_ERROR(fill_prediction(context, costs, plan));
        const double excess = plan.prediction.peak_memory_bytes - plan.prediction.capacity_bytes;
        if (excess > 0.0) {
          if (least_excess_bytes < 0.0 || excess < least_excess_bytes) {
            least_excess_bytes = excess;
            least_excess = plan;
          }
          continue;
        }
        fitted_choice = warm_choice = placement.choice();
        fitted_ranks = warm_ranks = placement.ranks_of();
        feasible.push_back(std::move(plan));
      }
    }
  }
  result.feasible = static_cast<int>(feasible.size());
  if (feasible.empty()) return out_of_memory(least_excess, context.machine);
  // Best: most samples/s, then least memory; ties keep the search order (deterministic).
  const auto best = std::min_element(feasible.begin(), feasible.end(), [](const Plan& a, const Plan& b) {
    if (a.prediction.samples_per_s != b.prediction.samples_per_s) {
      return a.prediction.samples_per_s > b.prediction.samples_per_s;
    }
    return a.prediction.peak_memory_bytes < b.prediction.peak_memory_bytes;
  });
  result.best = *best;
  std::vector<Plan> by_memory = feasible;
  std::stable_sort(by_memory.begin(), by_memory.end(), [](const Plan& a, const Plan& b) {
    if (a.prediction.peak_memory_bytes != b.prediction.peak_memory_bytes) {
      return a.prediction.peak_memory_bytes < b.prediction.peak_memory_bytes;
    }
    return a.prediction.samples_per_s > b.prediction.samples_per_s;
  });
  for (Plan& plan : by_memory) {
    if (result.pareto.empty() ||
        plan.prediction.samples_per_s > result.pareto.back().prediction.samples_per_s) {
      result.pareto.push_back(std::move(plan));
    }
  }
  return result;
}

Result<Plan> port_plan(const PlannerContext& context, const Plan& plan) {
  PARITY_CHECK_ARG(context.pricer != nullptr, "plan: no GEMM pricer");
  PARITY_CHECK_ARG(plan.num_gpus == context.machine.num_gpus, "port: the plan is for ",
                   plan.num_gpus, " GPUs, the machine has ", context.machine.num_gpus);
  Plan ported = plan;
  ported.hardware = context.machine.gpu.name;
  ported.num_nodes = context.machine.num_nodes;
  PARITY_RETURN_IF_ERROR(predict_plan(context.machine, context.model, context.calibration,
                                      *context.pricer, ported));
  ported.prediction.capacity_bytes = rank_capacity_bytes(context.machine);
  if (ported.prediction.peak_memory_bytes > ported.prediction.capacity_bytes) {
    return out_of_memory(ported, context.machine);
  }
  return ported;
}

PlannerModel scale_table_rows(const PlannerModel& model, double scale) {
  PlannerModel scaled = model;
  for (PlannerTable& table : scaled.tables) {
    table.rows = std::max<std::int64_t>(1, std::llround(static_cast<double>(table.rows) * scale));
  }
  return scaled;
}

PlannerModel scale_hidden_dims(const PlannerModel& model, double scale) {
  // The bottom MLP's last width is the embedding dim and the top MLP's last is the logit: both
  // stay; every other width (and the DCNv2 rank) grows, rounded to a multiple of 8.
  auto grow = [scale](int width) {
    return std::max(8, static_cast<int>(std::llround(width * scale / 8.0)) * 8);
  };
  PlannerModel scaled = model;
  for (std::size_t l = 0; l + 1 < scaled.bottom_mlp.size(); ++l) scaled.bottom_mlp[l] = grow(scaled.bottom_mlp[l]);
  for (std::size_t l = 0; l + 1 < scaled.top_mlp.size(); ++l) scaled.top_mlp[l] = grow(scaled.top_mlp[l]);
  if (scaled.interaction == InteractionKind::kDcnV2) scaled.cross_rank = grow(scaled.cross_rank);
  return scaled;
}

std::vector<HeadroomPoint> model_headroom(const PlannerContext& context, const PlanOptions& options,
                                          double max_scale) {
  std::vector<HeadroomPoint> points;
  for (const bool is_rows : {true, false}) {
    for (double scale = 1.0; scale <= max_scale + 1e-9; scale *= 1.5) {
      PlannerContext scaled = context;
      scaled.model = is_rows ? scale_table_rows(context.model, scale)
                             : scale_hidden_dims(context.model, scale);
      HeadroomPoint point;
      std::ostringstream change;
      change << (is_rows ? "table rows x" : "hidden dims x") << std::setprecision(3) << scale;
      point.change = change.str();
      point.scale = scale;
      const auto result = search(scaled, options);
      if (result.is_ok()) {
        point.fits = true;
        point.samples_per_s = result->best.prediction.samples_per_s;
        point.peak_memory_bytes = result->best.prediction.peak_memory_bytes;
      }
      points.push_back(point);
      if (!point.fits) break;
    }
  }
  return points;
}

Result<Comparison> compare_port_and_codesign(const PlannerContext& source,
                                             const PlannerContext& target,
                                             const PlanOptions& options, double max_headroom_scale) {
  PARITY_CHECK_ARG(max_headroom_scale >= 1.0, "--headroom: ", max_headroom_scale, " must be >= 1");
  PARITY_CHECK_ARG(source.machine.num_gpus == target.machine.num_gpus, "compare: ",
                   source.machine.num_gpus, " source GPUs vs ", target.machine.num_gpus,
                   " target GPUs; the port keeps the GPU count");
  Comparison comparison;
  PARITY_ASSIGN_OR_RETURN(const SearchResult from, search(source, options));
  comparison.source = from.best;
  comparison.ported = port_plan(target, from.best);
  PARITY_ASSIGN_OR_RETURN(const SearchResult to, search(target, options));
  comparison.codesigned = to.best;
  // The port is one of the target's candidate plans: co-design never predicts below it.
  if (comparison.ported.is_ok() &&
      comparison.ported->prediction.samples_per_s > comparison.codesigned.prediction.samples_per_s) {
    comparison.codesigned = comparison.ported.value();
  }
  comparison.changes = plan_differences(from.best, to.best);
  comparison.headroom = model_headroom(target, options, max_headroom_scale);
  comparison.source_headroom = model_headroom(source, options, max_headroom_scale);
  return comparison;
}

}  // namespace parity::plan
