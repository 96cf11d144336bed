// Host launches of the attention kernels for one element type: head-dimension dispatch, shared
// memory opt-in, grid sizes. Included by forward_<dtype>.cu / backward_<dtype>.cu, each of which
// instantiates one element type (the kernels are heavy: one TU per type compiles in parallel).
#pragma once

#include <algorithm>

#include "backends/gpu/attention/backward_kernel.cuh"
#include "backends/gpu/attention/forward_kernel.cuh"
#include "backends/gpu/attention/launch_entry.cuh"

namespace parity::attention::gpu::detail {

using kernels::Mode;

// Blocks: `tiles` tile slots for each (sequence, head).
inline std::int64_t grid_blocks(const AttentionParams& params) {
  return static_cast<std::int64_t>(params.grid_tiles) * params.batch * params.heads;
}

template <Elem16 E, Mode M, int kDimQk, int kDimV>
Status launch_forward_config(const AttentionParams& params, gpuStream_t stream) {
  constexpr int kShared = kernels::forward_shared_bytes<kDimQk, kDimV>();
  const auto kernel = kernels::attention_forward_kernel<E, M, kDimQk, kDimV>;
  PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                     gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
  kernel<<<static_cast<unsigned>(grid_blocks(params)), kernels::kThreads, kShared, stream>>>(
      params);
  PARITY_GPU_CHECK_LAUNCH(attention_forward_kernel);
  return Status::ok();
}

template <Elem16 E, Mode M, int kDimQk, int kDimV>
Status launch_backward_config(const AttentionParams& params, gpuStream_t stream) {
  constexpr int kShared = kernels::backward_shared_bytes<kDimQk, kDimV>();
  const auto kernel = kernels::attention_backward_kernel<E, M, kDimQk, kDimV>;
  PARITY_GPU_TRY(gpuFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                     gpuFuncAttributeMaxDynamicSharedMemorySize, kShared));
  kernel<<<static_cast<unsigned>(grid_blocks(params)), kernels::kThreads, kShared, stream>>>(
      params);
  PARITY_GPU_CHECK_LAUNCH(attention_backward_kernel);
  return Status::ok();
}

template <Elem16 E, int kDimV>
Status launch_row_terms(const AttentionParams& params, gpuStream_t stream) {
  const std::int64_t threads = params.total_q * params.heads * (kDimV / 8);
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((threads + 255) / 256, 1, 65535));
  kernels::attention_row_terms_kernel<E, kDimV><<<blocks, 256, 0, stream>>>(
      params.out, params.grad_out, params.lse, params.row_terms, params.total_q, params.heads);
  PARITY_GPU_CHECK_LAUNCH(attention_row_terms_kernel);
  return Status::ok();
}

template <Elem16 E, Mode M>
Status forward_mode(int dim_qk, int dim_v, const AttentionParams& params, gpuStream_t stream) {
  if (dim_qk == 64 && dim_v == 64) return launch_forward_config<E, M, 64, 64>(params, stream);
  if (dim_qk == 128 && dim_v == 128) return launch_forward_config<E, M, 128, 128>(params, stream);
  if (dim_qk == 256 && dim_v == 256) return launch_forward_config<E, M, 256, 256>(params, stream);
  if (dim_qk == 64 && dim_v == 128) return launch_forward_config<E, M, 64, 128>(params, stream);
  if (dim_qk == 128 && dim_v == 64) return launch_forward_config<E, M, 128, 64>(params, stream);
  return unsupported("attention forward: head dims ", dim_qk, "/", dim_v, " have no kernel");
}

template <Elem16 E>
Status launch_forward_kernels(const AttentionProblem& problem, const AttentionParams& params,
                              gpuStream_t stream) {
  if (!forward_dims_supported(problem.dim_qk, problem.dim_v)) {
    return unsupported("attention forward: head dims ", problem.dim_qk, "/", problem.dim_v,
                       " have no kernel");
  }
  if (problem.kind == AttentionKind::kSoftmax)
    return forward_mode<E, Mode::kSoftmax>(problem.dim_qk, problem.dim_v, params, stream);
  return forward_mode<E, Mode::kPointwise>(problem.dim_qk, problem.dim_v, params, stream);
}

template <Elem16 E, Mode M>
Status backward_mode(int dim_qk, int dim_v, const AttentionParams& params, gpuStream_t stream) {
  if (dim_qk == 64 && dim_v == 64) return launch_backward_config<E, M, 64, 64>(params, stream);
  if (dim_qk == 128 && dim_v == 128) return launch_backward_config<E, M, 128, 128>(params, stream);
  if (dim_qk == 64 && dim_v == 128) return launch_backward_config<E, M, 64, 128>(params, stream);
  if (dim_qk == 128 && dim_v == 64) return launch_backward_config<E, M, 128, 64>(params, stream);
  return unsupported("attention backward: head dims ", dim_qk, "/", dim_v, " have no kernel");
}

// Row terms (softmax), the main kernel (`main_kernel()`, a Status), then grad_q from the fp32
// accumulator (zeroed by the caller, launch.cu) unless the main kernel wrote it (convert_grad_q
// false): the steps every backward kernel shares.
template <Elem16 E, typename MainKernel>
Status launch_backward_steps(const AttentionProblem& problem, const AttentionParams& params,
                             gpuStream_t stream, const MainKernel& main_kernel,
                             bool convert_grad_q = true) {
  if (problem.kind == AttentionKind::kSoftmax) {
    const Status row_terms = problem.dim_v == 64 ? launch_row_terms<E, 64>(params, stream)
                                                 : launch_row_terms<E, 128>(params, stream);
    PARITY_RETURN_IF_ERROR(row_terms);
  }
  PARITY_RETURN_IF_ERROR(main_kernel());
  const std::int64_t count = params.total_q * params.heads * problem.dim_qk;
  if (count == 0 || !convert_grad_q) return Status::ok();
  const float scale = problem.kind == AttentionKind::kSoftmax
                          ? params.alpha
                          : params.alpha * params.inv_max_seq_len;
  const auto blocks =
      static_cast<unsigned>(std::clamp<std::int64_t>((count / 4 + 255) / 256, 1, 65535));
  kernels::attention_grad_q_kernel<E>
      <<<blocks, 256, 0, stream>>>(params.grad_q_accum, params.grad_q, count, scale);
  PARITY_GPU_CHECK_LAUNCH(attention_grad_q_kernel);
  return Status::ok();
}

template <Elem16 E>
Status launch_backward_kernels(const AttentionProblem& problem, AttentionParams params,
                               gpuStream_t stream) {
  if (!backward_dims_supported(problem.dim_qk, problem.dim_v)) {
    return unsupported("attention backward: head dims ", problem.dim_qk, "/", problem.dim_v,
                       " have no kernel");
  }
  const auto main_kernel = [&]() {
    return problem.kind == AttentionKind::kSoftmax
               ? backward_mode<E, Mode::kSoftmax>(problem.dim_qk, problem.dim_v, params, stream)
               : backward_mode<E, Mode::kPointwise>(problem.dim_qk, problem.dim_v, params, stream);
  };
  return launch_backward_steps<E>(problem, params, stream, main_kernel);
}

}  // namespace parity::attention::gpu::detail
