// The HSTU layer's element-wise kernels (hstu_layer_launch.hpp): the two layer norms, the SiLU gate
// and their backwards. Portable (nvcc, hipcc-checked): one warp of kWarpSize lanes per row, fp32
// arithmetic on bf16 storage; the parameter gradients reduce fixed row chunks column by column and
// then the chunks in order (no atomics: repeatable bit for bit).
#include <algorithm>
#include <cstdint>

#include "backends/gpu/attention/hstu_layer_launch.hpp"
#include "backends/gpu/common/portability.cuh"
#include "backends/gpu/embedding/kernels.cuh"  // bf16 <-> float

namespace parity::gpu_device::hstu_layer {

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = kThreads / kWarpSize;
constexpr std::int64_t kMinRowsPerChunk = 512;  // the parameter gradients' row chunk (at least)
constexpr std::int64_t kMaxChunks = 65535;      // grid y limit

__device__ inline float warp_sum(float value) {
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value += shfl_xor(value, offset);
  return value;
}

__device__ inline float silu(float x) { return x / (1.0f + expf(-x)); }
__device__ inline float silu_derivative(float x) {
  const float sigmoid = 1.0f / (1.0f + expf(-x));
  return sigmoid * (1.0f + x * (1.0f - sigmoid));
}

// Mean, then the centred variance (two passes over the row, which stays in L1).
struct RowStats {
  float mean;
  float rstd;
};
__device__ inline RowStats row_stats(const std::uint16_t* row, std::int64_t width, float epsilon) {
  float sum = 0.0f;
  for (std::int64_t j = lane_id(); j < width; j += kWarpSize) sum += bf16_to_float(row[j]);
  const float mean = warp_sum(sum) / static_cast<float>(width);
  float squares = 0.0f;
  for (std::int64_t j = lane_id(); j < width; j += kWarpSize) {
    const float centred = bf16_to_float(row[j]) - mean;
    squares += centred * centred;
  }
  return {mean, rsqrtf(warp_sum(squares) / static_cast<float>(width) + epsilon)};
}

// The layer-norm backward's two row means, mean(d xhat) and mean(d xhat xhat), with d xhat of
// column j given by `dxhat_of(e, j)` (e the element's index).
struct BackwardMeans {
  float dxhat;
  float dxhat_xhat;
};
template <typename DxhatOf>
__device__ inline BackwardMeans backward_means(std::int64_t r, std::int64_t width, const std::uint16_t* in, float mean,
                                               float rstd, DxhatOf dxhat_of) {
  float sum_dxhat = 0.0f, sum_dxhat_xhat = 0.0f;
  for (std::int64_t j = lane_id(); j < width; j += kWarpSize) {
    const std::int64_t e = r * width + j;
    const float dxhat = dxhat_of(e, j);
    sum_dxhat += dxhat;
    sum_dxhat_xhat += dxhat * (bf16_to_float(in[e]) - mean) * rstd;
  }
  return {warp_sum(sum_dxhat) / static_cast<float>(width), warp_sum(sum_dxhat_xhat) / static_cast<float>(width)};
}

__device__ inline std::int64_t warp_row() {
  return static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + warp_id();
}

__global__ void layer_norm_forward_kernel(std::int64_t rows, std::int64_t width, const std::uint16_t* in,
                                          const float* gamma, const float* beta, float epsilon,
                                          std::uint16_t* out, float* mean, float* rstd) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // the whole warp shares the row
  const std::uint16_t* x = in + r * width;
  const RowStats s = row_stats(x, width, epsilon);
  if (lane_id() == 0) {
    mean[r] = s.mean;
    rstd[r] = s.rstd;
  }
  for (std::int64_t j = lane_id(); j < width; j += kWarpSize) {
    out[r * width + j] = float_to_bf16((bf16_to_float(x[j]) - s.mean) * s.rstd * gamma[j] + beta[j]);
  }
}

__global__ void gate_forward_kernel(std::int64_t rows, std::int64_t width, const std::uint16_t* u,
                                    const std::uint16_t* a, const float* gamma, const float* beta, float epsilon,
                                    std::uint16_t* g, float* mean, float* rstd) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;
  const RowStats s = row_stats(a + r * width, width, epsilon);
  if (mean != nullptr && lane_id() == 0) {
    mean[r] = s.mean;
    rstd[r] = s.rstd;
  }
  for (std::int64_t j = lane_id(); j < width; j += kWarpSize) {
    const std::int64_t e = r * width + j;
    const float normed = (bf16_to_float(a[e]) - s.mean) * s.rstd * gamma[j] + beta[j];
    g[e] = float_to_bf16(silu(bf16_to_float(u[e])) * normed);
  }
}

// d a = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) with dxhat = d out * gamma.
__global__ void gate_backward_kernel(std::int64_t rows, std::int64_t width, const std::uint16_t* grad_g,
                                     const std::uint16_t* u, const std::uint16_t* a, const float* mean,
                                     const float* rstd, const float* gamma, const float* beta,
                                     std::uint16_t* grad_u, std::uint16_t* grad_a) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;
  const float mu = mean[r], inv_std = rstd[r];
  const BackwardMeans means = backward_means(r, width, a, mu, inv_std, [&](std::int64_t e, std::int64_t j) {
    return bf16_to_float(grad_g[e]) * silu(bf16_to_float(u[e])) * gamma[j];
  });
  const float mean_dxhat = means.dxhat, mean_dxhat_xhat = means.dxhat_xhat;
  for (std::int64_t j = lane_id(); j < width; j += kWarpSize) {
    const std::int64_t e = r * width + j;
    const float xhat = (bf16_to_float(a[e]) - mu) * inv_std;
    const float dg = bf16_to_float(grad_g[e]), u_pre = bf16_to_float(u[e]);
    const float dxhat = dg * silu(u_pre) * gamma[j];
    grad_u[e] = float_to_bf16(dg * (xhat * gamma[j] + beta[j]) * silu_derivative(u_pre));
    grad_a[e] = float_to_bf16(inv_std * (dxhat - mean_dxhat - xhat * mean_dxhat_xhat));
  }
}

__global__ void layer_norm_backward_kernel(std::int64_t rows, std::int64_t width, const float* grad_out,
                                           const std::uint16_t* in, const float* mean, const float* rstd,
                                           const float* gamma, const std::uint16_t* residual,
                                           std::uint16_t* grad_in) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;
  const float mu = mean[r], inv_std = rstd[r];
  const BackwardMeans means = backward_means(r, width, in, mu, inv_std,
                                             [&](std::int64_t e, std::int64_t j) { return grad_out[e] * gamma[j]; });
  const float mean_dxhat = means.dxhat, mean_dxhat_xhat = means.dxhat_xhat;
  for (std::int64_t j = lane_id(); j < width; j += kWarpSize) {
    const std::int64_t e = r * width + j;
    const float xhat = (bf16_to_float(in[e]) - mu) * inv_std;
    const float dx = inv_std * (grad_out[e] * gamma[j] - mean_dxhat - xhat * mean_dxhat_xhat);
    grad_in[e] = float_to_bf16(bf16_to_float(residual[e]) + dx);
  }
}

// One thread per column, one block row per chunk of rows: partial sums in row order.
__global__ void param_grad_partials_kernel(std::int64_t rows, std::int64_t width, std::int64_t rows_per_chunk,
                                           const float* grad_out,
                                           const std::uint16_t* grad_g, const std::uint16_t* u,
                                           const std::uint16_t* in, const float* mean, const float* rstd,
                                           float* partial_gamma, float* partial_beta) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= width) return;
  const std::int64_t chunk = blockIdx.y;
  const std::int64_t first = chunk * rows_per_chunk, last = min(rows, first + rows_per_chunk);
  float sum_gamma = 0.0f, sum_beta = 0.0f;
  for (std::int64_t r = first; r < last; ++r) {
    const std::int64_t e = r * width + j;
    const float d = grad_out != nullptr ? grad_out[e] : bf16_to_float(grad_g[e]) * silu(bf16_to_float(u[e]));
    sum_gamma += d * (bf16_to_float(in[e]) - mean[r]) * rstd[r];
    sum_beta += d;
  }
  partial_gamma[chunk * width + j] = sum_gamma;
  partial_beta[chunk * width + j] = sum_beta;
}

__global__ void sum_partials_kernel(std::int64_t chunks, std::int64_t width, const float* partial_gamma,
                                    const float* partial_beta, float* grad_gamma, float* grad_beta) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= width) return;
  float sum_gamma = 0.0f, sum_beta = 0.0f;
  for (std::int64_t c = 0; c < chunks; ++c) {
    sum_gamma += partial_gamma[c * width + j];
    sum_beta += partial_beta[c * width + j];
  }
  grad_gamma[j] = sum_gamma;
  grad_beta[j] = sum_beta;
}

}  // namespace parity::gpu_device::hstu_layer

namespace parity::attention::gpu::hstu_layer {
namespace {

namespace k = parity::gpu_device::hstu_layer;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }
unsigned row_blocks(std::int64_t rows) { return static_cast<unsigned>(ceil_div(rows, k::kRowsPerBlock)); }
std::int64_t rows_per_chunk(std::int64_t rows) {
  return std::max(k::kMinRowsPerChunk, ceil_div(rows, k::kMaxChunks));
}
std::int64_t chunks_of(std::int64_t rows) { return std::max<std::int64_t>(1, ceil_div(rows, rows_per_chunk(rows))); }

}  // namespace

Status layer_norm_forward(std::int64_t rows, std::int64_t width, const std::uint16_t* in, const float* gamma,
                          const float* beta, float epsilon, std::uint16_t* out, float* mean, float* rstd,
                          void* stream) {
  if (rows == 0) return Status::ok();
  k::layer_norm_forward_kernel<<<row_blocks(rows), k::kThreads, 0, static_cast<gpuStream_t>(stream)>>>(
      rows, width, in, gamma, beta, epsilon, out, mean, rstd);
  PARITY_GPU_CHECK_LAUNCH("layer_norm_forward_kernel");
  return Status::ok();
}

Status gate_forward(std::int64_t rows, std::int64_t width, const std::uint16_t* u, const std::uint16_t* a,
                    const float* gamma, const float* beta, float epsilon, std::uint16_t* g, float* mean, float* rstd,
                    void* stream) {
  if (rows == 0) return Status::ok();
  k::gate_forward_kernel<<<row_blocks(rows), k::kThreads, 0, static_cast<gpuStream_t>(stream)>>>(
      rows, width, u, a, gamma, beta, epsilon, g, mean, rstd);
  PARITY_GPU_CHECK_LAUNCH("gate_forward_kernel");
  return Status::ok();
}

Status gate_backward(std::int64_t rows, std::int64_t width, const std::uint16_t* grad_g, const std::uint16_t* u,
                     const std::uint16_t* a, const float* mean, const float* rstd, const float* gamma,
                     const float* beta, std::uint16_t* grad_u, std::uint16_t* grad_a, void* stream) {
  if (rows == 0) return Status::ok();
  k::gate_backward_kernel<<<row_blocks(rows), k::kThreads, 0, static_cast<gpuStream_t>(stream)>>>(
      rows, width, grad_g, u, a, mean, rstd, gamma, beta, grad_u, grad_a);
  PARITY_GPU_CHECK_LAUNCH("gate_backward_kernel");
  return Status::ok();
}

Status layer_norm_backward(std::int64_t rows, std::int64_t width, const float* grad_out, const std::uint16_t* in,
                           const float* mean, const float* rstd, const float* gamma, const std::uint16_t* residual,
                           std::uint16_t* grad_in, void* stream) {
  if (rows == 0) return Status::ok();
  k::layer_norm_backward_kernel<<<row_blocks(rows), k::kThreads, 0, static_cast<gpuStream_t>(stream)>>>(
      rows, width, grad_out, in, mean, rstd, gamma, residual, grad_in);
  PARITY_GPU_CHECK_LAUNCH("layer_norm_backward_kernel");
  return Status::ok();
}

std::int64_t param_grads_workspace_bytes(std::int64_t rows, std::int64_t width) {
  return 2 * chunks_of(rows) * width * static_cast<std::int64_t>(sizeof(float));
}

Status layer_norm_param_grads(std::int64_t rows, std::int64_t width, const ParamGradsInputs& inputs,
                              float* grad_gamma, float* grad_beta, void* workspace, void* stream) {
  const auto s = static_cast<gpuStream_t>(stream);
  const std::int64_t chunks = chunks_of(rows);
  auto* partial_gamma = static_cast<float*>(workspace);
  float* partial_beta = partial_gamma + chunks * width;
  const auto column_blocks = static_cast<unsigned>(ceil_div(width, k::kThreads));
  if (rows == 0) {
    PARITY_GPU_TRY(gpuMemsetAsync(partial_gamma, 0, static_cast<std::size_t>(2 * width) * sizeof(float), s));
  } else {
    k::param_grad_partials_kernel<<<dim3(column_blocks, static_cast<unsigned>(chunks)), k::kThreads, 0, s>>>(
        rows, width, rows_per_chunk(rows), inputs.grad_out, inputs.grad_g, inputs.u, inputs.in, inputs.mean, inputs.rstd, partial_gamma,
        partial_beta);
    PARITY_GPU_CHECK_LAUNCH("param_grad_partials_kernel");
  }
  k::sum_partials_kernel<<<column_blocks, k::kThreads, 0, s>>>(chunks, width, partial_gamma, partial_beta,
                                                                grad_gamma, grad_beta);
  PARITY_GPU_CHECK_LAUNCH("sum_partials_kernel");
  return Status::ok();
}

Status zero_device(void* dst, std::int64_t bytes, void* stream) {
  if (bytes == 0) return Status::ok();
  PARITY_GPU_TRY(gpuMemsetAsync(dst, 0, static_cast<std::size_t>(bytes), static_cast<gpuStream_t>(stream)));
  return Status::ok();
}

Status copy_device(const void* src, void* dst, std::int64_t bytes, void* stream) {
  if (bytes == 0) return Status::ok();
  PARITY_GPU_TRY(gpuMemcpyAsync(dst, src, static_cast<std::size_t>(bytes), gpuMemcpyDeviceToDevice,
                                static_cast<gpuStream_t>(stream)));
  return Status::ok();
}

}  // namespace parity::attention::gpu::hstu_layer
