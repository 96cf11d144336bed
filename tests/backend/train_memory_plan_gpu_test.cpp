// The trainer's allocation list (train/memory_plan.hpp) against the GPU: DlrmModel's device
// buffers sum to the list's (GPU padding, bf16 shadows, the fused dReLU's masks or none), and the device memory
// the step benchmark sees in use grows over the idle baseline by at least the buffers and at most
// the buffers, the workspaces and a bounded slack (the GEMM plans' cuBLASLt state).
#include <gtest/gtest.h>

#include "common/test_support.hpp"
#include "core/device_hooks.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/memory_plan.hpp"
#include "parity/train/step_bench.hpp"

namespace parity {
namespace {

void check_device_buffers(const char* precision, model::InteractionKind interaction, train::ReluBackward relu) {
  model::ModelSpec spec = model::load_spec("dlrm-kaggle").value();
  model::cap_table_rows(spec, 100000);
  spec.interaction = interaction;
  spec.cross_layers = 2;
  spec.cross_rank = 64;
  spec.precision = model::parse_dense_precision(precision).value();
  const std::int64_t batch = 4096;
  const auto* hooks = parity::detail::device_hooks();
  ASSERT_NE(hooks, nullptr);
  const std::int64_t idle_bytes = hooks->memory_in_use().value();
  train::StepBenchOptions options;
  options.device = DeviceKind::kGpu;
  options.batch_size = batch;
  options.warmup_steps = 0;
  options.timed_steps = 2;
  options.breakdown_steps = 1;
  options.fused_drelu = relu == train::ReluBackward::kFusedMasks;
  const auto report = train::benchmark_training_step(spec, options);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  const auto plan = train::training_memory_plan(spec, batch, DeviceKind::kGpu, relu);
  ASSERT_TRUE(plan.is_ok()) << plan.status().to_string();
  const std::string where = std::string(precision) + " " + std::string(model::interaction_kind_name(interaction)) +
                            (options.fused_drelu ? " fused dReLU" : "");
  EXPECT_EQ(report->model_buffer_bytes, plan->buffer_bytes()) << where;
  // In use at the peak, over the idle baseline (the context and earlier workspaces stay): at
  // least the model's buffers; at most buffers + workspaces + 256 MiB of slack for the
  // allocator's 2 MiB rounding of ~40 buffers and the libraries' per-plan state.
  const std::int64_t grown = report->peak_device_bytes_in_use - idle_bytes;
  EXPECT_GE(grown, plan->buffer_bytes()) << where;
  EXPECT_LE(grown, plan->total_bytes() + (std::int64_t{256} << 20)) << where;
}

TEST(GpuTrainMemoryPlan, DeviceBuffersEqualTheList) {
  PARITY_REQUIRE_GPU();
  for (const char* precision : {"fp32", "tf32", "bf16"}) {
    for (const auto interaction : {model::InteractionKind::kDot, model::InteractionKind::kDcnV2}) {
      for (const auto relu : {train::ReluBackward::kUnfused, train::ReluBackward::kFusedMasks}) {
        check_device_buffers(precision, interaction, relu);
      }
    }
  }
}

}  // namespace
}  // namespace parity
