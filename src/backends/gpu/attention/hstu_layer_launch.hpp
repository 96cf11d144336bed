// GPU entry points of the HSTU layer's element-wise parts (hstu_layer_kernels.cu), host-only: no
// CUDA/HIP types. bf16 activations as raw 16-bit storage, fp32 statistics and parameters. All
// pointers are device pointers; `stream` is the native stream as void*. Every call is asynchronous
// and returns launch errors only. One warp per row for the row passes; the norms' parameter
// gradients are reduced column by column over fixed row chunks, then the chunks in order, so every
// result is bitwise repeatable.
#pragma once

#include <cstdint>

#include "parity/core/status.hpp"

namespace parity::attention::gpu::hstu_layer {

// out = LayerNorm(in) * gamma + beta per row of `width`; the row's mean and 1/std to mean, rstd.
Status layer_norm_forward(std::int64_t rows, std::int64_t width, const std::uint16_t* in, const float* gamma,
                          const float* beta, float epsilon, std::uint16_t* out, float* mean, float* rstd,
                          void* stream);

// g = SiLU(u) * (LayerNorm(a) * gamma + beta), rows of `width`; the statistics of a to mean, rstd
// when they are not null (the forward), else recomputed and dropped (the backward's recompute).
Status gate_forward(std::int64_t rows, std::int64_t width, const std::uint16_t* u, const std::uint16_t* a,
                    const float* gamma, const float* beta, float epsilon, std::uint16_t* g, float* mean, float* rstd,
                    void* stream);

// From d g: d u (through SiLU') and d a (through the layer norm, given its saved statistics).
Status gate_backward(std::int64_t rows, std::int64_t width, const std::uint16_t* grad_g, const std::uint16_t* u,
                     const std::uint16_t* a, const float* mean, const float* rstd, const float* gamma,
                     const float* beta, std::uint16_t* grad_u, std::uint16_t* grad_a, void* stream);

// grad_in = residual + LayerNorm backward of grad_out (fp32), given the saved statistics.
Status layer_norm_backward(std::int64_t rows, std::int64_t width, const float* grad_out, const std::uint16_t* in,
                           const float* mean, const float* rstd, const float* gamma, const std::uint16_t* residual,
                           std::uint16_t* grad_in, void* stream);

// The norms' parameter gradients: grad_gamma[j] = sum_r d_out[r, j] xhat[r, j], grad_beta[j] =
// sum_r d_out[r, j], with d_out either fp32 (grad_out, the input norm) or d g * SiLU(u) (both
// bf16, the output norm: pass grad_out = null). `workspace` holds param_grads_workspace_bytes.
std::int64_t param_grads_workspace_bytes(std::int64_t rows, std::int64_t width);
struct ParamGradsInputs {
  const float* grad_out = nullptr;           // fp32 [rows, width], or null for d g * SiLU(u)
  const std::uint16_t* grad_g = nullptr;     // bf16 [rows, width] when grad_out is null
  const std::uint16_t* u = nullptr;          // bf16 [rows, width] when grad_out is null
  const std::uint16_t* in = nullptr;         // the norm's input (bf16)
  const float* mean = nullptr;
  const float* rstd = nullptr;
};
Status layer_norm_param_grads(std::int64_t rows, std::int64_t width, const ParamGradsInputs& inputs,
                              float* grad_gamma, float* grad_beta, void* workspace, void* stream);

// `bytes` zero bytes at dst, on the stream (the gradients of a layer with no rows).
Status zero_device(void* dst, std::int64_t bytes, void* stream);

// dst = src, `bytes` bytes of device memory, on the stream (the residual's copy of x).
Status copy_device(const void* src, void* dst, std::int64_t bytes, void* stream);

}  // namespace parity::attention::gpu::hstu_layer
