// The trainer's allocation list (train/memory_plan.hpp): its buffers sum to exactly what DlrmModel
// allocates on the CPU (several models, optimisers and batches), and the GPU layout's padding and
// workspaces equal hand-computed figures for dlrm-kaggle.
#include <gtest/gtest.h>

#include "parity/model/spec.hpp"
#include "parity/train/memory_plan.hpp"
#include "parity/train/step_bench.hpp"

namespace parity::train {
namespace {

std::int64_t allocated_by_the_model(const model::ModelSpec& spec, std::int64_t batch, ReluBackward relu) {
  StepBenchOptions options;
  options.fused_drelu = relu == ReluBackward::kFusedMasks;
  options.device = DeviceKind::kCpu;
  options.batch_size = batch;
  options.warmup_steps = 0;
  options.timed_steps = 1;
  options.breakdown_steps = 0;
  const auto report = benchmark_training_step(spec, options);
  EXPECT_TRUE(report.is_ok()) << report.status().to_string();
  return report.is_ok() ? report->model_buffer_bytes : -1;
}

TEST(TrainMemoryPlan, MatchesTheModelsAllocations) {
  for (const auto interaction : {model::InteractionKind::kDot, model::InteractionKind::kDcnV2}) {
    for (const auto dense_optimizer : {nn::DenseOptimizerKind::kSgd, nn::DenseOptimizerKind::kAdam}) {
      for (const std::int64_t batch : {1, 37, 256}) {
        for (const ReluBackward relu : {ReluBackward::kUnfused, ReluBackward::kFusedMasks}) {
          model::ModelSpec spec = model::load_spec("tiny").value();
          spec.interaction = interaction;
          spec.cross_layers = 2;
          spec.cross_rank = 4;
          spec.dense_optimizer.kind = dense_optimizer;
          const auto plan = training_memory_plan(spec, batch, DeviceKind::kCpu, relu);
          ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
          EXPECT_EQ(plan->buffer_bytes(), allocated_by_the_model(spec, batch, relu))
              << model::interaction_kind_name(interaction) << ", batch " << batch
              << (relu == ReluBackward::kFusedMasks ? ", fused dReLU" : "");
          EXPECT_EQ(plan->workspace_bytes(), 0);  // the CPU ops allocate no device workspace
        }
      }
    }
  }
}

TEST(TrainMemoryPlan, GpuPaddingAndWorkspacesForDlrmKaggle) {
  const model::ModelSpec spec = model::load_spec("dlrm-kaggle").value();
  const std::int64_t batch = 1024;
  const auto gpu = training_memory_plan(spec, batch, DeviceKind::kGpu);
  const auto cpu = training_memory_plan(spec, batch, DeviceKind::kCpu);
  ASSERT_TRUE(gpu.is_ok() && cpu.is_ok());
  const auto bytes_named = [](const TrainingMemoryPlan& plan, const std::string& name) {
    std::int64_t total = 0;
    for (const Allocation& a : plan.buffers) total += a.name == name ? a.bytes : 0;
    for (const Allocation& a : plan.workspaces) total += a.name == name ? a.bytes : 0;
    return total;
  };
  // 13 dense features padded to 16 columns; the dot output 128 + 27*26/2 = 479 padded to 480.
  EXPECT_EQ(bytes_named(*gpu, "dense input"), batch * 16 * 4);
  EXPECT_EQ(bytes_named(*cpu, "dense input"), batch * 13 * 4);
  EXPECT_EQ(bytes_named(*gpu, "interaction"), batch * 480 * 4);
  // The padded columns add weights: first bottom layer 3 x 512, first top layer 1 x 1024 floats
  // (the blocks are already multiples of 16 floats), in the weights and the gradients (SGD: no state).
  EXPECT_EQ(bytes_named(*gpu, "dense weights") - bytes_named(*cpu, "dense weights"), (3 * 512 + 1024) * 4);
  // TBE backward: 26 one-hot features -> 26624 indices, 2 sort-key arrays of 8 B; the default
  // short chunks, max(32, D/4 = 32, min(128, 26624/8192 -> 4)) = 32 positions: 832 chunks x
  // (2 x 128 floats + 2 x 16 B).
  EXPECT_EQ(bytes_named(*gpu, "tbe backward workspace"), 2 * 26624 * 8 + 832 * 2 * 128 * 4 + 2 * 832 * 16);
  EXPECT_EQ(bytes_named(*gpu, "gemm workspace"), kGemmWorkspaceBytes);
  // Fused dReLU masks: bottom 512, 256 and top 1024, 1024, 512, 256 feed a next layer:
  // (4 + 2 + 8 + 8 + 4 + 2) x 16 bytes per sample.
  const auto fused = training_memory_plan(spec, batch, DeviceKind::kGpu, ReluBackward::kFusedMasks);
  ASSERT_TRUE(fused.is_ok());
  EXPECT_EQ(fused->buffer_bytes() - gpu->buffer_bytes(), batch * 28 * 16);
  EXPECT_EQ(bytes_named(*gpu, "ReLU masks"), 0);
  // Kinds partition the list.
  std::int64_t by_kind = 0;
  for (int k = 0; k <= static_cast<int>(AllocationKind::kWorkspace); ++k) by_kind += gpu->bytes_of(static_cast<AllocationKind>(k));
  EXPECT_EQ(by_kind, gpu->total_bytes());
}

TEST(TrainMemoryPlan, RejectsBadBatch) {
  const model::ModelSpec spec = model::load_spec("tiny").value();
  const auto plan = training_memory_plan(spec, 0, DeviceKind::kCpu);
  ASSERT_FALSE(plan.is_ok());
  EXPECT_NE(plan.status().message().find("batch: 0"), std::string::npos) << plan.status().to_string();
}

}  // namespace
}  // namespace parity::train
