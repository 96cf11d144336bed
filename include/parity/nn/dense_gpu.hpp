// GPU kernels of the DLRM dense part that are not GEMMs: the dot interaction, the DCNv2 cross
// layer's element-wise step, BCE-with-logits, dense optimiser steps and casts. Portable kernels
// in src/backends/gpu/nn (nvcc, hipcc-checked). Pointers are device pointers; every call is
// asynchronous on `stream` and returns launch errors only. The trainer's GPU op variants wrap
// these; GEMMs go through gemm::Gemm. Activation dtype: fp32, bf16 or fp16.
#pragma once

#include <cstdint>

#include "parity/core/dtype.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/status.hpp"

namespace parity::nn::gpu {

using parity::gpu::StreamHandle;

// Dot interaction (DLRM): z = [bottom (B x D), embeddings (B x E*D)] as F = E + 1 vectors of D per
// sample; output row = [bottom, z_i . z_j for i > j in row-major lower-triangle order
// (1,0), (2,0), (2,1), ...] of width D + F(F-1)/2. All three in `dtype`. Padding columns of a
// strided output are written as zeros.
struct InteractionShape {
  std::int64_t batch = 0;
  int num_embeddings = 0;  // E
  int dim = 0;             // D
  DType dtype = DType::kF32;
  // Elements between output rows (and grad_output rows); 0 = output_width(). A padded stride
  // (e.g. 480 for width 479) keeps the next GEMM's rows 16-byte aligned.
  std::int64_t output_stride = 0;
  std::int64_t output_row_stride() const { return output_stride == 0 ? output_width() : output_stride; }
  int num_vectors() const { return num_embeddings + 1; }
  std::int64_t num_pairs() const { return static_cast<std::int64_t>(num_vectors()) * (num_vectors() - 1) / 2; }
  std::int64_t output_width() const { return dim + num_pairs(); }
  Status validate() const;
};
Status interaction_dot_forward(const InteractionShape& shape, const void* bottom, const void* embeddings,
                               void* output, StreamHandle stream = nullptr);
// grad_output (B x output_width, dtype) -> grad_bottom (B x D, dtype) and grad_embeddings
// (B x E*D, fp32: the TBE backward's input).
Status interaction_dot_backward(const InteractionShape& shape, const void* bottom, const void* embeddings,
                                const void* grad_output, void* grad_bottom, float* grad_embeddings,
                                StreamHandle stream = nullptr);
// The fast kernels, same arguments and results. Forward: 4x4 blocks of the per-sample Gram matrix
// in registers from shared memory, several samples per block (needs dim % 4 == 0). Backward: each
// thread holds two columns of a sample's vectors in registers (needs an even dim and at most 32
// vectors). *_supported says why a shape is refused. Inputs not aligned to 4 (forward) or 2
// (backward) elements run the general kernels above.
Status interaction_gram_tiles_supported(const InteractionShape& shape);
Status interaction_dot_forward_gram_tiles(const InteractionShape& shape, const void* bottom, const void* embeddings,
                                          void* output, StreamHandle stream = nullptr);
Status interaction_register_columns_supported(const InteractionShape& shape);
Status interaction_dot_backward_register_columns(const InteractionShape& shape, const void* bottom,
                                                 const void* embeddings, const void* grad_output, void* grad_bottom,
                                                 float* grad_embeddings, StreamHandle stream = nullptr);

// BCE with logits, mean over the batch. logits: `logit_dtype`, labels fp32 (0/1).
// loss_sum: one fp32 on the device, the SUM of per-sample losses (deterministic two-pass
// reduction through `workspace`); grad_logits[i] = (sigmoid(x_i) - y_i) * grad_scale, logit_dtype.
std::int64_t bce_workspace_bytes(std::int64_t batch);
Status bce_with_logits(std::int64_t batch, DType logit_dtype, const void* logits, const float* labels,
                       float* loss_sum, void* grad_logits, float grad_scale, void* workspace,
                       std::int64_t workspace_bytes, StreamHandle stream = nullptr);

// DCNv2 cross layer, element-wise part: out = x0 * t + xl, where t = U (V xl) + b comes from the
// GEMMs. Backward: grad_t = grad_out * x0; grad_x0 (+)= grad_out * t; (grad_xl = grad_out plus the
// GEMMs' data gradient, which the caller accumulates: when grad_xl is not null it receives a copy
// of grad_out in the same pass, for the data-gradient GEMM to add onto with beta = 1). All
// `dtype`, `count` elements.
Status cross_forward(std::int64_t count, DType dtype, const void* x0, const void* t, const void* xl, void* out,
                     StreamHandle stream = nullptr);
Status cross_backward(std::int64_t count, DType dtype, const void* grad_out, const void* x0, const void* t,
                      void* grad_t, void* grad_x0, bool accumulate_grad_x0, StreamHandle stream = nullptr,
                      void* grad_xl = nullptr);
// The cross net's input gradient: c = a + b (rows x (left_cols + right_cols), dtype) split by
// columns into left (rows x left_cols, dtype) and right (rows x right_cols, fp32). The sum is
// formed in fp32 and rounded once per output.
Status add_split_columns(const void* a, const void* b, DType dtype, std::int64_t rows, std::int64_t left_cols,
                         std::int64_t right_cols, void* left, float* right, StreamHandle stream = nullptr);

// ReLU backward from the activated output: grad_pre[i] = grad_out[i] if output[i] > 0 else 0.
// grad_pre may alias grad_out.
Status relu_backward(std::int64_t count, DType dtype, const void* grad_out, const void* output, void* grad_pre,
                     StreamHandle stream = nullptr);

enum class DenseOptimizer : std::uint8_t { kSgd, kAdagrad, kAdam };
struct DenseOptimizerParams {
  DenseOptimizer kind = DenseOptimizer::kSgd;
  float learning_rate = 0.01f;
  float eps = 1e-8f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float weight_decay = 0.0f;  // L2 added to the gradient
  std::int64_t step = 1;      // Adam bias correction (>= 1)
  Status validate() const;
};
// One step on `count` fp32 master weights; grad in grad_dtype; state1 (Adagrad sum, Adam m) and
// state2 (Adam v) fp32 or null when unused. When `shadow` is not null it receives the updated
// weights in shadow_dtype (the bf16 copy the GEMMs read).
Status dense_optimizer_step(const DenseOptimizerParams& params, std::int64_t count, float* master,
                            float* state1, float* state2, const void* grad, DType grad_dtype, void* shadow,
                            DType shadow_dtype, StreamHandle stream = nullptr);

// out[i] = in[i] converted (round to nearest even); fp32/bf16/fp16 both ways.
Status cast(std::int64_t count, const void* in, DType in_dtype, void* out, DType out_dtype,
            StreamHandle stream = nullptr);

}  // namespace parity::nn::gpu
