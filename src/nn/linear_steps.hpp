// Internal: the linear layer's forward and backward as GEMM calls, shared by the CPU variants
// (src/nn/linear.cpp) and the GPU ones (src/backends/cuda/nn/): only how a GEMM runs and how the
// ReLU derivative is applied differ between devices.
#pragma once

#include "nn/gemm_cache.hpp"
#include "parity/nn/linear.hpp"

namespace parity::nn::detail {

// Runs one of the layer's GEMMs (CPU: the cache; GPU: the cache with an fp32 fallback).
using GemmRunner = Status (*)(const gemm::GemmRunProblem& problem, const gemm::GemmArgs& args,
                              const ExecutionContext& context);
// grad_pre[i] = grad_out[i] where output[i] > 0, else 0; `count` elements of `dtype`.
using ReluBackward = Status (*)(std::int64_t count, DType dtype, const void* grad_out, const void* output,
                                void* grad_pre, const ExecutionContext& context);

Status linear_forward_steps(const LinearProblem& problem, const LinearForwardArgs& args,
                            const ExecutionContext& context, GemmRunner run);
Status linear_backward_steps(const LinearProblem& problem, const LinearBackwardArgs& args,
                             const ExecutionContext& context, GemmRunner run, ReluBackward relu_backward);

}  // namespace parity::nn::detail
