// Planner models: memory against hand-computed cases, collectives against their alpha-beta
// equations, and monotonicity in bandwidth (property test over random inputs).
#include <gtest/gtest.h>

#include <random>

#include "common/test_support.hpp"
#include "unit/plan_test_support.hpp"

namespace parity::plan {
namespace {

using testing::bare_calibration;
using testing::hand_model;
using testing::make_context;

// The hand model on one H200, batch 10, its table on rank 0: the prediction's rank-0 memory.
MemoryBreakdown hand_memory(const PlannerCalibration& calibration) {
  auto owned = make_context("h200", 1, 0, hand_model(), &calibration);
  Plan plan;
  plan.config = {10, 10, Checkpointing::kNone, Precision::kTf32};
  plan.tables = {{"t0", ShardingType::kTableWise, {{0, 0, 1000, 0, 16}}}};
  const Status status = predict_plan(owned.context.machine, owned.context.model, calibration,
                                     *owned.pricer, plan);
  EXPECT_TRUE(status.is_ok()) << status.to_string();
  return status.is_ok() ? plan.prediction.memory_per_rank.at(0) : MemoryBreakdown{};
}

// Every number below is written out in the comment beside it (docs/planner.md, "Memory model":
// the trainer's GPU buffers, src/train/dlrm_model.cpp).
TEST(PlanMemory, HandComputedSingleGpu) {
  const MemoryBreakdown m = hand_memory(bare_calibration());
  EXPECT_DOUBLE_EQ(m.embedding_weights, 1000.0 * 16 * 4);  // fp32 rows
  EXPECT_DOUBLE_EQ(m.embedding_optimizer, 1000.0 * 4);     // one fp32 accumulator per row
  // Dense parameters: 233 unpadded (bottom 4x16+16, top 17x8+8, 8x1+1). The trainer's layout:
  // input padded 4 -> 8: 8x16 = 128, bias 16; dot output 17 -> 24: 24x8 = 192, bias 8 -> 16;
  // 8x1 = 8 -> 16, bias 1 -> 16 (16-float blocks): 384.
  EXPECT_EQ(hand_model().dense_parameter_count(), 233);
  EXPECT_EQ(trainer_dense_parameter_count(hand_model()), 384);
  EXPECT_DOUBLE_EQ(m.dense_parameters, 384.0 * 4);
  EXPECT_DOUBLE_EQ(m.dense_gradients, 384.0 * 4);
  EXPECT_DOUBLE_EQ(m.dense_optimizer, 0.0);  // SGD
  // Per sample (4 B values): bottom output 16; top outputs 8 + 1; pooled 16; interaction 24;
  // gradients 3 x widest (24) + pooled fp32 16 + logit 1. (16 + 9 + 16 + 24 + 72 + 16 + 1) x 4
  // = 616 B, x 10 samples.
  EXPECT_DOUBLE_EQ(m.activations, 616.0 * 10);
  // One staged batch: 10 x (8 padded dense x 4 + 2 ids x 8 + 1 offset x 8 + label 4) = 600; one
  // GPU distributes no indices.
  EXPECT_DOUBLE_EQ(m.io_buffers, 600.0);
  EXPECT_DOUBLE_EQ(m.comm_buffers, 0.0);  // one GPU: no all-to-all
  // GEMM workspace 64 MiB; TBE backward: 20 lookups x 16 B of sort keys + one chunk's partials
  // (2 x 16 floats + 32 B).
  EXPECT_DOUBLE_EQ(m.workspaces, kGemmWorkspaceBytes + 20 * 16 + 8 * 16 + 32);
  EXPECT_DOUBLE_EQ(m.total(), 64000.0 + 4000 + 1536 + 1536 + 6160 + 600 + m.workspaces);
}

TEST(PlanMemory, CheckpointingSavesNoMemoryInThisTrainer) {
  // The trainer recomputes the dense blocks into the buffers it keeps: the same memory, and
  // one more dense forward of time.
  auto owned = make_context("h200", 1, 0, testing::dlrm_v2_like_model());
  const PlannerContext& c = owned.context;
  const TrainConfig none{4096, 4096, Checkpointing::kNone, Precision::kBf16};
  TrainConfig full = none;
  full.checkpointing = Checkpointing::kFull;
  const auto without = config_costs(c.machine, c.model, c.calibration, *owned.pricer, none);
  const auto with = config_costs(c.machine, c.model, c.calibration, *owned.pricer, full);
  ASSERT_TRUE(without.is_ok() && with.is_ok());
  EXPECT_EQ(with->shared_memory, without->shared_memory);
  EXPECT_EQ(without->dense_time.recompute_us, 0.0);
  // The recompute is the dense forward without the loss (forward_dense_blocks).
  EXPECT_DOUBLE_EQ(with->dense_time.recompute_us, with->dense_time.dense_forward_us - with->loss_us);
  EXPECT_GT(with->loss_us, 0.0);
  EXPECT_DOUBLE_EQ(with->mlp_us + with->interaction_us + with->loss_us,
                   with->dense_time.dense_forward_us + with->dense_time.dense_backward_us + with->dense_time.recompute_us);
  // bf16 activations are smaller than fp32 ones, but not half: the pooled gradient stays fp32.
  const PlannerModel model = hand_model();
  EXPECT_LT(activation_bytes_per_sample(model, Precision::kBf16), activation_bytes_per_sample(model, Precision::kTf32));
  EXPECT_GT(2.0 * activation_bytes_per_sample(model, Precision::kBf16), activation_bytes_per_sample(model, Precision::kTf32));
}

TEST(PlanMemory, ReservesScaleAsDocumented) {
  PlannerCalibration calibration = bare_calibration();
  const MemoryBreakdown bare = hand_memory(calibration);
  calibration.allocator_reserve_fraction.value = 0.1;
  calibration.runtime_reserve_gb.value = 1.0;
  const MemoryBreakdown m = hand_memory(calibration);
  EXPECT_DOUBLE_EQ(m.runtime_reserve, 1e9);
  EXPECT_DOUBLE_EQ(m.allocator_reserve, 0.1 * bare.total());  // of everything but the runtime
}

TEST(PlanMemory, ExpectedUniqueRows) {
  EXPECT_DOUBLE_EQ(expected_unique_rows(100, 0), 0.0);
  EXPECT_NEAR(expected_unique_rows(1e9, 10), 10.0, 1e-6);  // no collisions when E >> N
  EXPECT_NEAR(expected_unique_rows(10, 1e6), 10.0, 1e-9);   // saturates at the table size
}

CommParams switched_params(int ranks, int nodes) {
  CommParams comm;
  comm.ranks = ranks;
  comm.nodes = nodes;
  comm.ranks_per_node = ranks / nodes;
  comm.link_bytes_per_us = 25e3;
  comm.gpu_bytes_per_us = 100e3;  // 100 GB/s
  comm.nic_bytes_per_us = 10e3;
  comm.base_us = 10.0;
  comm.scale_up_step_us = 1.0;
  comm.scale_out_step_us = 3.0;
  return comm;
}

TEST(PlanCollectives, RingAllReduceMatchesEquation) {
  const CommParams comm = switched_params(8, 1);
  // ring: 10 + 2x7x1 + 2x(7/8)x1e9/1e5 = 17524; tree: 10 + 2x3x1 + 2x1e9/1e5 = 20016.
  const CollectiveTime t = all_reduce_time(comm, 1e9);
  EXPECT_EQ(t.algorithm, AllReduceAlgorithm::kRing);
  EXPECT_DOUBLE_EQ(t.time_us, 17524.0);
  // Small messages: the tree's log2 latency wins: ring 24 + 0.175 vs tree 16 + 0.2.
  EXPECT_EQ(all_reduce_time(comm, 1e4).algorithm, AllReduceAlgorithm::kTree);
  EXPECT_DOUBLE_EQ(all_reduce_time(comm, 0.0).time_us, 0.0);
  CommParams one = comm;
  one.ranks = one.ranks_per_node = 1;
  EXPECT_DOUBLE_EQ(all_reduce_time(one, 1e9).time_us, 0.0);
}

TEST(PlanCollectives, AllToAllSwitchedVsMeshSkew) {
  CommParams switched = switched_params(8, 1);
  CommParams mesh = switched;
  mesh.is_full_mesh = true;
  mesh.link_bytes_per_us = switched.gpu_bytes_per_us / 7.0;  // same aggregate per GPU
  const std::vector<double> uniform(8, 7e6);
  // Uniform: switched 7 x 7e6 / 1e5 = 490; mesh 7e6 / (1e5/7) = 490 (+ latency 11 each).
  EXPECT_DOUBLE_EQ(all_to_all_time(switched, uniform), 11.0 + 490.0);
  EXPECT_DOUBLE_EQ(all_to_all_time(mesh, uniform), 11.0 + 490.0);
  // One hot sender (twice the bytes): the switch sees a busier port (980 us of sending, and the
  // receivers 8 x 7e6 / 1e5 = 560), the mesh a busier pair link (980 us).
  std::vector<double> skewed = uniform;
  skewed[0] = 14e6;
  EXPECT_DOUBLE_EQ(all_to_all_time(switched, skewed), 11.0 + 980.0);
  EXPECT_DOUBLE_EQ(all_to_all_time(mesh, skewed), 11.0 + 980.0);
  // Two nodes: off-node traffic through the NIC: 4 peers x 7e6 / 1e4 = 2800 us dominates.
  CommParams two_nodes = switched_params(8, 2);
  EXPECT_DOUBLE_EQ(all_to_all_time(two_nodes, uniform), 10.0 + 3.0 + 2800.0);
}

// More bandwidth (scale-up link, per-GPU, NIC) never predicts a slower collective.
TEST(PlanCollectives, MoreBandwidthNeverSlowerProperty) {
  const std::uint64_t seed = parity::testing::test_seed(16);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> bandwidth(1e3, 1e6), bytes(0.0, 1e9), factor(1.0, 4.0);
  const int node_counts[] = {1, 2, 4};
  for (int trial = 0; trial < 500; ++trial) {
    const int nodes = node_counts[rng() % 3];
    const int per_node = 1 + static_cast<int>(rng() % 8);
    CommParams comm = switched_params(nodes * per_node, nodes);
    comm.is_full_mesh = rng() % 2 == 0;
    comm.link_bytes_per_us = bandwidth(rng);
    comm.gpu_bytes_per_us = comm.link_bytes_per_us * (1 + static_cast<double>(rng() % 8));
    comm.nic_bytes_per_us = bandwidth(rng);
    comm.in_switch_reduction_speedup = comm.is_full_mesh ? 1.0 : factor(rng);
    std::vector<double> per_peer(static_cast<std::size_t>(comm.ranks));
    for (double& b : per_peer) b = bytes(rng);
    const double total = bytes(rng);
    CommParams faster = comm;
    const double f = factor(rng);
    switch (rng() % 3) {
      case 0: faster.link_bytes_per_us *= f; break;
      case 1: faster.gpu_bytes_per_us *= f; break;
      default: faster.nic_bytes_per_us *= f; break;
    }
    EXPECT_LE(all_to_all_time(faster, per_peer), all_to_all_time(comm, per_peer)) << trial;
    EXPECT_LE(all_reduce_time(faster, total).time_us, all_reduce_time(comm, total).time_us) << trial;
  }
}

// The whole step: a fixed plan on a GPU with more HBM, scale-up or NIC bandwidth is never
// predicted slower (random models, batches and placements; seeded).
TEST(PlanStepTime, MoreBandwidthNeverSlowerProperty) {
  const std::uint64_t seed = parity::testing::test_seed(61);
  SCOPED_TRACE(parity::testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  const char* gpus[] = {"h200", "b200", "mi300x", "mi350x"};
  for (int trial = 0; trial < 8; ++trial) {
    PlannerModel model = testing::hand_model();
    model.tables.clear();
    const int tables = 1 + static_cast<int>(rng() % 6);
    for (int t = 0; t < tables; ++t) {
      model.tables.push_back({"t" + std::to_string(t), 1000 + static_cast<std::int64_t>(rng() % 5000000), 16,
                              1.0 + static_cast<double>(rng() % 20), 1});
    }
    const std::string gpu = gpus[rng() % 4];
    const int ranks = 1 << (rng() % 4);
    auto owned = make_context(gpu, ranks, 0, model);
    Plan plan;
    const std::int64_t batch = 64 << (rng() % 6);
    plan.config = {batch * ranks, batch, rng() % 2 ? Checkpointing::kFull : Checkpointing::kNone,
                   rng() % 2 ? Precision::kBf16 : Precision::kTf32};
    for (int t = 0; t < tables; ++t) {
      const PlannerTable& table = model.tables[static_cast<std::size_t>(t)];
      plan.tables.push_back({table.name, ShardingType::kTableWise,
                             {{static_cast<int>(rng() % ranks), 0, table.rows, 0, table.dim}}});
    }
    ASSERT_TRUE(predict_plan(owned.context.machine, model, owned.context.calibration,
                             *owned.pricer, plan).is_ok());
    for (const auto field : {&hw::HardwareSpec::hbm_bandwidth_tbps, &hw::HardwareSpec::scale_up_link_gbps,
                             &hw::HardwareSpec::scale_up_per_gpu_gbps, &hw::HardwareSpec::scale_out_nic_gbps}) {
      hw::HardwareSpec faster = owned.context.machine.gpu;
      (faster.*field).value *= 1.0 + static_cast<double>(rng() % 300) / 100.0;
      auto fast = make_context(gpu, ranks, 0, model);
      fast.context.machine.gpu = faster;
      auto pricer = GemmPricer::create(faster, std::nullopt);
      ASSERT_TRUE(pricer.is_ok());
      Plan again = plan;
      ASSERT_TRUE(predict_plan(fast.context.machine, model, owned.context.calibration,
                               pricer.value(), again).is_ok());
      EXPECT_LE(again.prediction.step_us, plan.prediction.step_us * (1 + 1e-12))
          << gpu << " x" << ranks << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace parity::plan
