// The HSTU layer's element-wise kernels (hstu_layer_launch.hpp): the two layer norms, the SiLU gate
// and their backwards. Portable (nvcc, hipcc-checked): one warp of kWarpSize lanes per row, eight
// columns per lane per step in 16-byte loads where aligned, fp32 arithmetic on bf16 storage; the parameter gradients reduce fixed row chunks column by column and
// then the chunks in order (no atomics: repeatable bit for bit).
#include <algorithm>
#include <cstdint>
#include <initializer_list>

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

// kVec consecutive columns per lane and step: 8 (one 16-byte load of bf16) when every row and
// pointer allows it, else 1.
template <int kVec>
__device__ inline void load_bf16(const std::uint16_t* p, float (&out)[kVec]) {
  if constexpr (kVec == 8) {
    const uint4 bits = *reinterpret_cast<const uint4*>(p);
    const std::uint32_t words[4] = {bits.x, bits.y, bits.z, bits.w};
    for (int i = 0; i < 4; ++i) {
      out[2 * i] = bits_to_float(words[i] << 16);
      out[2 * i + 1] = bits_to_float(words[i] & 0xffff0000u);
    }
  } else {
    for (int i = 0; i < kVec; ++i) out[i] = bf16_to_float(p[i]);
  }
}
template <int kVec>
__device__ inline void store_bf16(std::uint16_t* p, const float (&in)[kVec]) {
  if constexpr (kVec == 8) {
    std::uint32_t words[4];
    for (int i = 0; i < 4; ++i) {
      words[i] = std::uint32_t{float_to_bf16(in[2 * i])} | (std::uint32_t{float_to_bf16(in[2 * i + 1])} << 16);
    }
    *reinterpret_cast<uint4*>(p) = make_uint4(words[0], words[1], words[2], words[3]);
  } else {
    for (int i = 0; i < kVec; ++i) p[i] = float_to_bf16(in[i]);
  }
}
template <int kVec>
__device__ inline void load_f32(const float* p, float (&out)[kVec]) {
  if constexpr (kVec == 8) {
    const float4 lo = reinterpret_cast<const float4*>(p)[0], hi = reinterpret_cast<const float4*>(p)[1];
    out[0] = lo.x, out[1] = lo.y, out[2] = lo.z, out[3] = lo.w, out[4] = hi.x, out[5] = hi.y, out[6] = hi.z, out[7] = hi.w;
  } else {
    for (int i = 0; i < kVec; ++i) out[i] = p[i];
  }
}
#define PARITY_FOR_ROW_STEPS(j, width) \
  for (std::int64_t j = static_cast<std::int64_t>(lane_id()) * kVec; j < (width); j += kWarpSize * kVec)

// Mean, then the centred variance (two passes over the row, which stays in L1).
struct RowStats {
  float mean;
  float rstd;
};
template <int kVec>
__device__ inline RowStats row_stats(const std::uint16_t* row, std::int64_t width, float epsilon) {
  float sum = 0.0f, x[kVec];
  PARITY_FOR_ROW_STEPS(j, width) {
    load_bf16<kVec>(row + j, x);
    for (int i = 0; i < kVec; ++i) sum += x[i];
  }
  const float mean = warp_sum(sum) / static_cast<float>(width);
  float squares = 0.0f;
  PARITY_FOR_ROW_STEPS(j, width) {
    load_bf16<kVec>(row + j, x);
    for (int i = 0; i < kVec; ++i) squares += (x[i] - mean) * (x[i] - mean);
  }
  return {mean, rsqrtf(warp_sum(squares) / static_cast<float>(width) + epsilon)};
}

// The layer-norm backward's two row means, mean(d xhat) and mean(d xhat xhat), with kVec values
// of d xhat from column j given by `dxhat_of(j, out)`.
struct BackwardMeans {
  float dxhat;
  float dxhat_xhat;
};
template <int kVec, typename DxhatOf>
__device__ inline BackwardMeans backward_means(const std::uint16_t* in_row, std::int64_t width, float mean, float rstd,
                                               DxhatOf dxhat_of) {
  float sum_dxhat = 0.0f, sum_dxhat_xhat = 0.0f, x[kVec], dxhat[kVec];
  PARITY_FOR_ROW_STEPS(j, width) {
    load_bf16<kVec>(in_row + j, x);
    dxhat_of(j, dxhat);
    for (int i = 0; i < kVec; ++i) {
      sum_dxhat += dxhat[i];
      sum_dxhat_xhat += dxhat[i] * (x[i] - mean) * rstd;
    }
  }
  return {warp_sum(sum_dxhat) / static_cast<float>(width), warp_sum(sum_dxhat_xhat) / static_cast<float>(width)};
}

__device__ inline std::int64_t warp_row() {
  return static_cast<std::int64_t>(blockIdx.x) * kRowsPerBlock + warp_id();
}

template <int kVec>
__global__ void layer_norm_forward_kernel(std::int64_t rows, std::int64_t width, const std::uint16_t* in,
                                          const float* gamma, const float* beta, float epsilon,
                                          std::uint16_t* out, float* mean, float* rstd) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;  // the whole warp shares the row
  const std::uint16_t* x_row = in + r * width;
  const RowStats s = row_stats<kVec>(x_row, width, epsilon);
  if (lane_id() == 0) {
    mean[r] = s.mean;
    rstd[r] = s.rstd;
  }
  float x[kVec], g[kVec], b[kVec];
  PARITY_FOR_ROW_STEPS(j, width) {
    load_bf16<kVec>(x_row + j, x);
    load_f32<kVec>(gamma + j, g);
    load_f32<kVec>(beta + j, b);
    for (int i = 0; i < kVec; ++i) x[i] = (x[i] - s.mean) * s.rstd * g[i] + b[i];
    store_bf16<kVec>(out + r * width + j, x);
  }
}

template <int kVec>
__global__ void gate_forward_kernel(std::int64_t rows, std::int64_t width, const std::uint16_t* u,
                                    const std::uint16_t* a, const float* gamma, const float* beta, float epsilon,
                                    std::uint16_t* g, float* mean, float* rstd) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;
  const std::int64_t base = r * width;
  const RowStats s = row_stats<kVec>(a + base, width, epsilon);
  if (mean != nullptr && lane_id() == 0) {
    mean[r] = s.mean;
    rstd[r] = s.rstd;
  }
  float av[kVec], uv[kVec], gm[kVec], bt[kVec];
  PARITY_FOR_ROW_STEPS(j, width) {
    load_bf16<kVec>(a + base + j, av);
    load_bf16<kVec>(u + base + j, uv);
    load_f32<kVec>(gamma + j, gm);
    load_f32<kVec>(beta + j, bt);
    for (int i = 0; i < kVec; ++i) av[i] = silu(uv[i]) * ((av[i] - s.mean) * s.rstd * gm[i] + bt[i]);
    store_bf16<kVec>(g + base + j, av);
  }
}

// d a = rstd (dxhat - mean(dxhat) - xhat mean(dxhat xhat)) with dxhat = d out * gamma.
template <int kVec>
__global__ void gate_backward_kernel(std::int64_t rows, std::int64_t width, const std::uint16_t* grad_g,
                                     const std::uint16_t* u, const std::uint16_t* a, const float* mean,
                                     const float* rstd, const float* gamma, const float* beta,
                                     std::uint16_t* grad_u, std::uint16_t* grad_a) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;
  const std::int64_t base = r * width;
  const float mu = mean[r], inv_std = rstd[r];
  float dg[kVec], uv[kVec], av[kVec], gm[kVec], bt[kVec], du[kVec], da[kVec];
  const BackwardMeans means = backward_means<kVec>(a + base, width, mu, inv_std, [&](std::int64_t j, float (&out)[kVec]) {
    load_bf16<kVec>(grad_g + base + j, dg);
    load_bf16<kVec>(u + base + j, uv);
    load_f32<kVec>(gamma + j, gm);
    for (int i = 0; i < kVec; ++i) out[i] = dg[i] * silu(uv[i]) * gm[i];
  });
  PARITY_FOR_ROW_STEPS(j, width) {
    load_bf16<kVec>(grad_g + base + j, dg);
    load_bf16<kVec>(u + base + j, uv);
    load_bf16<kVec>(a + base + j, av);
    load_f32<kVec>(gamma + j, gm);
    load_f32<kVec>(beta + j, bt);
    for (int i = 0; i < kVec; ++i) {
      const float xhat = (av[i] - mu) * inv_std;
      du[i] = dg[i] * (xhat * gm[i] + bt[i]) * silu_derivative(uv[i]);
      da[i] = inv_std * (dg[i] * silu(uv[i]) * gm[i] - means.dxhat - xhat * means.dxhat_xhat);
    }
    store_bf16<kVec>(grad_u + base + j, du);
    store_bf16<kVec>(grad_a + base + j, da);
  }
}

template <int kVec>
__global__ void layer_norm_backward_kernel(std::int64_t rows, std::int64_t width, const float* grad_out,
                                           const std::uint16_t* in, const float* mean, const float* rstd,
                                           const float* gamma, const std::uint16_t* residual,
                                           std::uint16_t* grad_in) {
  const std::int64_t r = warp_row();
  if (r >= rows) return;
  const std::int64_t base = r * width;
  const float mu = mean[r], inv_std = rstd[r];
  float dy[kVec], gm[kVec], x[kVec], res[kVec];
  const BackwardMeans means = backward_means<kVec>(in + base, width, mu, inv_std, [&](std::int64_t j, float (&out)[kVec]) {
    load_f32<kVec>(grad_out + base + j, dy);
    load_f32<kVec>(gamma + j, gm);
    for (int i = 0; i < kVec; ++i) out[i] = dy[i] * gm[i];
  });
  PARITY_FOR_ROW_STEPS(j, width) {
    load_f32<kVec>(grad_out + base + j, dy);
    load_f32<kVec>(gamma + j, gm);
    load_bf16<kVec>(in + base + j, x);
    load_bf16<kVec>(residual + base + j, res);
    for (int i = 0; i < kVec; ++i) {
      const float xhat = (x[i] - mu) * inv_std;
      res[i] += inv_std * (dy[i] * gm[i] - means.dxhat - xhat * means.dxhat_xhat);
    }
    store_bf16<kVec>(grad_in + base + j, res);
  }
}
#undef PARITY_FOR_ROW_STEPS

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

// Eight columns per lane when the rows are whole 16-byte pieces and every pointer is 16-byte
// aligned (the layer's own buffers always are; a caller's x or grad_x may not be).
bool vectorizable(std::int64_t width, std::initializer_list<const void*> pointers) {
  if (width % 8 != 0) return false;
  for (const void* p : pointers) {
    if (p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 16 != 0) return false;
  }
  return true;
}
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
  const auto s = static_cast<gpuStream_t>(stream);
  if (vectorizable(width, {in, gamma, beta, out})) {
    k::layer_norm_forward_kernel<8><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, in, gamma, beta, epsilon,
                                                                            out, mean, rstd);
  } else {
    k::layer_norm_forward_kernel<1><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, in, gamma, beta, epsilon,
                                                                            out, mean, rstd);
  }
  PARITY_GPU_CHECK_LAUNCH("layer_norm_forward_kernel");
  return Status::ok();
}

Status gate_forward(std::int64_t rows, std::int64_t width, const std::uint16_t* u, const std::uint16_t* a,
                    const float* gamma, const float* beta, float epsilon, std::uint16_t* g, float* mean, float* rstd,
                    void* stream) {
  if (rows == 0) return Status::ok();
  const auto s = static_cast<gpuStream_t>(stream);
  if (vectorizable(width, {u, a, gamma, beta, g})) {
    k::gate_forward_kernel<8><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, u, a, gamma, beta, epsilon, g,
                                                                      mean, rstd);
  } else {
    k::gate_forward_kernel<1><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, u, a, gamma, beta, epsilon, g,
                                                                      mean, rstd);
  }
  PARITY_GPU_CHECK_LAUNCH("gate_forward_kernel");
  return Status::ok();
}

Status gate_backward(std::int64_t rows, std::int64_t width, const std::uint16_t* grad_g, const std::uint16_t* u,
                     const std::uint16_t* a, const float* mean, const float* rstd, const float* gamma,
                     const float* beta, std::uint16_t* grad_u, std::uint16_t* grad_a, void* stream) {
  if (rows == 0) return Status::ok();
  const auto s = static_cast<gpuStream_t>(stream);
  if (vectorizable(width, {grad_g, u, a, gamma, beta, grad_u, grad_a})) {
    k::gate_backward_kernel<8><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, grad_g, u, a, mean, rstd, gamma,
                                                                       beta, grad_u, grad_a);
  } else {
    k::gate_backward_kernel<1><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, grad_g, u, a, mean, rstd, gamma,
                                                                       beta, grad_u, grad_a);
  }
  PARITY_GPU_CHECK_LAUNCH("gate_backward_kernel");
  return Status::ok();
}

Status layer_norm_backward(std::int64_t rows, std::int64_t width, const float* grad_out, const std::uint16_t* in,
                           const float* mean, const float* rstd, const float* gamma, const std::uint16_t* residual,
                           std::uint16_t* grad_in, void* stream) {
  if (rows == 0) return Status::ok();
  const auto s = static_cast<gpuStream_t>(stream);
  if (vectorizable(width, {grad_out, in, gamma, residual, grad_in})) {
    k::layer_norm_backward_kernel<8><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, grad_out, in, mean, rstd,
                                                                             gamma, residual, grad_in);
  } else {
    k::layer_norm_backward_kernel<1><<<row_blocks(rows), k::kThreads, 0, s>>>(rows, width, grad_out, in, mean, rstd,
                                                                             gamma, residual, grad_in);
  }
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
