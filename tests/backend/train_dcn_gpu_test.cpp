// The DLRM model with DCNv2 cross layers on the GPU against the same model on the CPU (`tiny` with
// interaction=dcnv2, fp32 without TF32, the same weights), and the device-memory refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/dtype.hpp"
#include "parity/model/spec.hpp"
#include "parity/train/step_bench.hpp"
#include "train/dlrm_model.hpp"

namespace parity {
namespace {

model::ModelSpec tiny_dcn() {
  model::ModelSpec spec = model::load_spec("tiny").value();
  spec.interaction = model::InteractionKind::kDcnV2;
  spec.cross_layers = 2;
  spec.cross_rank = 8;
  spec.precision = model::DensePrecision::kFp32;  // fp32 FMA GEMMs: no TF32 rounding
  return spec;
}

train::Buffer* state(train::detail::DlrmModel& model, const std::string& name) {
  for (const auto& entry : model.state_buffers()) {
    if (entry.name == name) return entry.buffer;
  }
  return nullptr;
}

train::detail::DlrmModel make_model(const model::ModelSpec& spec, std::int64_t rows, DeviceKind device) {
  ExecutionContext context;
  context.device = device;
  auto model = train::detail::DlrmModel::create(spec, rows, context);
  EXPECT_TRUE(model.is_ok()) << model.status().to_string();
  EXPECT_TRUE(model->initialize(7).is_ok());
  return std::move(model).value();
}

// Tolerance: both devices evaluate the same chain of fp32 dot products and element-wise steps in
// different orders; each result is within gamma_n * m of the exact value, where m is the same
// model evaluated on absolute values (|inputs|, |tables|, |weights|: ReLU and the cross layer are
// then monotone, so this is the first-order magnitude, Higham 3.5) and n the chain's total length:
// the pooling (<= 3 ids), the bottom MLP (13, 32), each cross layer (W + R + 2), the top MLP
// (W, 64, 32) and one bias add per layer. The two results differ by at most 2 gamma_n m.
TEST(GpuTrainDcn, TinyDcnForwardAndLossMatchTheCpu) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(41);
  SCOPED_TRACE(testing::seed_trace(seed));
  const model::ModelSpec spec = tiny_dcn();
  const std::int64_t rows = 256;
  train::StepBenchOptions batch_options;
  batch_options.batch_size = rows;
  batch_options.seed = seed;
  const data::Batch batch = train::synthetic_step_batch(spec, batch_options);
  auto cpu = make_model(spec, rows, DeviceKind::kCpu);
  auto gpu = make_model(spec, rows, DeviceKind::kGpu);
  // Dense weights are initialised identically on both devices; tables on the GPU come from a
  // device hash, so copy the CPU's.
  train::Buffer* cpu_tables = state(cpu, "embedding.weights");
  train::Buffer* gpu_tables = state(gpu, "embedding.weights");
  ASSERT_TRUE(cpu_tables != nullptr && gpu_tables != nullptr);
  ASSERT_EQ(cpu_tables->size_bytes(), gpu_tables->size_bytes());
  ASSERT_TRUE(gpu_tables->copy_from_host(cpu_tables->data(), cpu_tables->size_bytes()).is_ok());

  ASSERT_TRUE(cpu.forward(batch).is_ok());
  const auto gpu_forward = gpu.forward(batch);
  ASSERT_TRUE(gpu_forward.is_ok()) << gpu_forward.to_string();
  const std::vector<float> cpu_logits(cpu.logits(), cpu.logits() + rows);
  const std::vector<float> gpu_logits(gpu.logits(), gpu.logits() + rows);

  // The magnitude model: the CPU model (same seed, so the same tables) on absolute values.
  auto magnitude = make_model(spec, rows, DeviceKind::kCpu);
  for (const char* name : {"dense.weights", "embedding.weights"}) {
    train::Buffer* buffer = state(magnitude, name);
    float* values = buffer->as<float>();
    for (std::int64_t i = 0; i < buffer->size_bytes() / 4; ++i) values[i] = std::fabs(values[i]);
  }
  data::Batch abs_batch = batch;
  for (auto& v : abs_batch.dense) v = std::fabs(v);
  ASSERT_TRUE(magnitude.forward(abs_batch).is_ok());

  const std::int64_t width = spec.bottom_output_dim() + spec.pooled_embedding_dim();
  const std::int64_t chain = 3 + spec.num_dense_features + 32 + width + 64 + 32 + 8 +
                             spec.cross_layers * (width + spec.cross_rank + 2);
  const auto n = static_cast<double>(chain);
  const double u = unit_roundoff(DType::kF32);
  const double factor = 2 * n * u / (1 - n * u);
  double logit_tolerance_sum = 0.0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const double tolerance = factor * magnitude.logits()[i];
    logit_tolerance_sum += tolerance;
    ASSERT_NEAR(gpu_logits[static_cast<std::size_t>(i)], cpu_logits[static_cast<std::size_t>(i)], tolerance) << i;
  }
  // The loss: |d bce / d z| <= 1, so the logits' differences move the mean by at most their mean
  // bound; each device's own fp32 sum of B per-sample losses (each <= |z| + log 2) adds gamma_B.
  const auto cpu_loss = cpu.train_step(batch, 0);
  const auto gpu_loss = gpu.train_step(batch, 0);
  ASSERT_TRUE(cpu_loss.is_ok() && gpu_loss.is_ok()) << gpu_loss.status().to_string();
  double per_sample = 0.0;
  for (float z : cpu_logits) per_sample += std::fabs(z) + std::log(2.0);
  const double b = static_cast<double>(rows) + 4;
  const double loss_tolerance = logit_tolerance_sum / rows + 2 * (b * u / (1 - b * u)) * per_sample / rows;
  EXPECT_NEAR(*gpu_loss, *cpu_loss, loss_tolerance);
  // Training on: the GPU's losses stay finite.
  for (std::int64_t step = 1; step < 4; ++step) {
    const auto loss = gpu.train_step(batch, step);
    ASSERT_TRUE(loss.is_ok()) << loss.status().to_string();
    EXPECT_TRUE(std::isfinite(*loss)) << step;
  }
}

TEST(GpuTrainDcn, ModelLargerThanTheDeviceIsRefusedWithTheSizes) {
  PARITY_REQUIRE_GPU();
  model::ModelSpec spec = model::load_spec("dlrm-v2").value();
  for (auto& table : spec.embedding.tables) table.num_rows *= 4;  // ~420 GB of fp32 tables
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  const auto model = train::detail::DlrmModel::create(spec, 1024, context);
  ASSERT_FALSE(model.is_ok());
  EXPECT_EQ(model.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(model.status().message().find("needs"), std::string::npos) << model.status().message();
  EXPECT_NE(model.status().message().find("GiB free"), std::string::npos) << model.status().message();
}

}  // namespace
}  // namespace parity
