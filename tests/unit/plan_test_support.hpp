// Shared fixtures of the planner tests: small hand-checkable models, catalogue GPUs, a context.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "parity/hw/catalogue.hpp"
#include "parity/plan/search.hpp"

namespace parity::plan::testing {

// Calibration with every reserve and overlap zeroed and one batch in flight: memory totals are
// then exactly the sums a test can write down by hand.
inline PlannerCalibration bare_calibration() {
  PlannerCalibration calibration;
  calibration.allocator_reserve_fraction.value = 0.0;
  calibration.runtime_reserve_gb.value = 0.0;
  calibration.comm_library_buffer_gb.value = 0.0;
  calibration.input_batches_in_flight.value = 1.0;
  return calibration;
}

// One table 1000 x 16, 2 ids per sample; bottom 4 -> 16, dot, top 17 -> 8 -> 1.
inline PlannerModel hand_model() {
  PlannerModel model;
  model.name = "hand";
  model.tables = {{"t0", 1000, 16, 2.0, 1}};
  model.dense_features = 4;
  model.bottom_mlp = {16};
  model.top_mlp = {8, 1};
  model.interaction = InteractionKind::kDot;
  model.table_optimizer = embedding::OptimizerKind::kRowwiseAdagrad;
  model.dense_optimizer = DenseOptimizer::kSgd;
  return model;
}

// MLPerf DLRMv2's shape (26 tables, 204M rows, 214 ids per sample, DCNv2): the planner's view of
// the trainer's dlrm-v2 preset, for tests that must not depend on the spec reader.
inline PlannerModel dlrm_v2_like_model() {
  const std::int64_t rows[] = {40000000, 39060, 17295, 7424, 20265, 3, 7122, 1543, 63,
                               40000000, 3067956, 405282, 10, 2209, 11938, 155, 4, 976, 14,
                               40000000, 40000000, 40000000, 590152, 12973, 108, 36};
  const int hots[] = {3, 2, 1, 2, 6, 1, 1, 1, 1, 7, 3, 8, 1, 6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
  PlannerModel model;
  model.name = "dlrm-v2-like";
  for (int t = 0; t < 26; ++t) {
    model.tables.push_back({"C" + std::to_string(t + 1), rows[t], 128, static_cast<double>(hots[t]), 1});
  }
  model.bottom_mlp = {512, 256, 128};
  model.top_mlp = {1024, 1024, 512, 256, 1};
  model.interaction = InteractionKind::kDcnV2;
  model.cross_layers = 3;
  model.cross_rank = 512;
  model.dense_optimizer = DenseOptimizer::kAdagrad;
  return model;
}

inline hw::HardwareSpec catalogue_gpu(const std::string& name) {
  auto spec = hw::find_hardware(name);
  EXPECT_TRUE(spec.is_ok()) << spec.status().to_string();
  return spec.is_ok() ? spec.value() : hw::HardwareSpec{};
}

// A context that owns its pricer.
struct OwnedContext {
  std::unique_ptr<GemmPricer> pricer;
  PlannerContext context;
};
inline OwnedContext make_context(const std::string& gpu, int gpus, int nodes, PlannerModel model,
                                 const PlannerCalibration* calibration = nullptr) {
  OwnedContext owned;
  const hw::HardwareSpec spec = catalogue_gpu(gpu);
  auto pricer = GemmPricer::create(spec, std::nullopt);
  EXPECT_TRUE(pricer.is_ok()) << pricer.status().to_string();
  owned.pricer = std::make_unique<GemmPricer>(std::move(pricer).value());
  auto machine = make_machine(spec, gpus, nodes);
  EXPECT_TRUE(machine.is_ok()) << machine.status().to_string();
  owned.context.machine = machine.value();
  owned.context.model = std::move(model);
  if (calibration != nullptr) {
    owned.context.calibration = *calibration;
  } else {
    auto loaded = load_planner_calibration(spec, std::nullopt);
    EXPECT_TRUE(loaded.is_ok()) << loaded.status().to_string();
    owned.context.calibration = loaded.value();
  }
  owned.context.pricer = owned.pricer.get();
  return owned;
}

inline PlanOptions fixed_batch(std::int64_t global_batch) {
  PlanOptions options;
  options.min_global_batch = options.max_global_batch = global_batch;
  return options;
}

}  // namespace parity::plan::testing
