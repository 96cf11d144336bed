// Device code of the dense DLRM ops that are not GEMMs (see include/parity/nn/dense_gpu.hpp).
// Element types are kept as raw storage (float or 16-bit bits) and converted in registers.
#pragma once

#include <cstdint>

#include "backends/gpu/common/portability.cuh"
#include "backends/gpu/embedding/kernels.cuh"  // bf16/fp16 <-> float conversions

namespace parity::gpu_device::nn {

enum class ElemKind : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

template <ElemKind K>
struct Elem;
template <>
struct Elem<ElemKind::kF32> {
  using Storage = float;
  __device__ static float load(const Storage* p, std::int64_t i) { return p[i]; }
  __device__ static void store(Storage* p, std::int64_t i, float v) { p[i] = v; }
};
template <>
struct Elem<ElemKind::kF16> {
  using Storage = std::uint16_t;
  __device__ static float load(const Storage* p, std::int64_t i) { return fp16_to_float(p[i]); }
  __device__ static void store(Storage* p, std::int64_t i, float v) { p[i] = float_to_fp16(v); }
};
template <>
struct Elem<ElemKind::kBF16> {
  using Storage = std::uint16_t;
  __device__ static float load(const Storage* p, std::int64_t i) { return bf16_to_float(p[i]); }
  __device__ static void store(Storage* p, std::int64_t i, float v) { p[i] = float_to_bf16(v); }
};

// Pair p of the strict lower triangle in row-major order: (1,0), (2,0), (2,1), (3,0), ...
__device__ inline void pair_of_index(int p, int* i, int* j) {
  int row = static_cast<int>((1.0f + sqrtf(1.0f + 8.0f * static_cast<float>(p))) * 0.5f);
  while (row * (row - 1) / 2 > p) --row;          // the float estimate may be one too high
  while ((row + 1) * row / 2 <= p) ++row;         // ... or one too low
  *i = row;
  *j = p - row * (row - 1) / 2;
}

// One block per sample: z (F x D) staged in shared memory (row stride D + 1 against bank
// conflicts), then each thread computes pairs tid, tid + blockDim, ...
template <ElemKind K>
__global__ void interaction_forward_kernel(int num_vectors, int dim, std::int64_t out_stride, const typename Elem<K>::Storage* bottom,
                                           const typename Elem<K>::Storage* embeddings,
                                           typename Elem<K>::Storage* output) {
  extern __shared__ float z[];
  const std::int64_t b = blockIdx.x;
  const int stride = dim + 1;
  const int num_embeddings = num_vectors - 1;
  const int pairs = num_vectors * (num_vectors - 1) / 2;
  for (int e = threadIdx.x; e < dim; e += blockDim.x) {
    const float v = Elem<K>::load(bottom, b * dim + e);
    z[e] = v;
    Elem<K>::store(output, b * out_stride + e, v);
  }
  for (std::int64_t e = dim + pairs + threadIdx.x; e < out_stride; e += blockDim.x) {
    Elem<K>::store(output, b * out_stride + e, 0.0f);
  }
  const std::int64_t emb_row = b * static_cast<std::int64_t>(num_embeddings) * dim;
  for (int e = threadIdx.x; e < num_embeddings * dim; e += blockDim.x) {
    z[(1 + e / dim) * stride + e % dim] = Elem<K>::load(embeddings, emb_row + e);
  }
  __syncthreads();
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
    int i = 0;
    int j = 0;
    pair_of_index(p, &i, &j);
    const float* zi = z + i * stride;
    const float* zj = z + j * stride;
    float acc = 0.0f;
    for (int d = 0; d < dim; ++d) acc = fmaf(zi[d], zj[d], acc);
    Elem<K>::store(output, b * out_stride + dim + p, acc);
  }
}

// dz_i = sum_{j != i} G_ij z_j with G symmetric from the pair gradients; dz_0 also gets the
// pass-through gradient of the bottom columns. Shared: z (F x (D+1)) then G (F x F).
template <ElemKind K>
__global__ void interaction_backward_kernel(int num_vectors, int dim, std::int64_t out_stride, const typename Elem<K>::Storage* bottom,
                                            const typename Elem<K>::Storage* embeddings,
                                            const typename Elem<K>::Storage* grad_output,
                                            typename Elem<K>::Storage* grad_bottom, float* grad_embeddings) {
  extern __shared__ float shared[];
  const std::int64_t b = blockIdx.x;
  const int stride = dim + 1;
  const int num_embeddings = num_vectors - 1;
  const int pairs = num_vectors * (num_vectors - 1) / 2;
  float* z = shared;
  float* g = shared + num_vectors * stride;
  for (int e = threadIdx.x; e < dim; e += blockDim.x) z[e] = Elem<K>::load(bottom, b * dim + e);
  const std::int64_t emb_row = b * static_cast<std::int64_t>(num_embeddings) * dim;
  for (int e = threadIdx.x; e < num_embeddings * dim; e += blockDim.x) {
    z[(1 + e / dim) * stride + e % dim] = Elem<K>::load(embeddings, emb_row + e);
  }
  for (int e = threadIdx.x; e < num_vectors; e += blockDim.x) g[e * num_vectors + e] = 0.0f;
  for (int p = threadIdx.x; p < pairs; p += blockDim.x) {
    int i = 0;
    int j = 0;
    pair_of_index(p, &i, &j);
    const float v = Elem<K>::load(grad_output, b * out_stride + dim + p);
    g[i * num_vectors + j] = v;
    g[j * num_vectors + i] = v;
  }
  __syncthreads();
  for (int e = threadIdx.x; e < num_vectors * dim; e += blockDim.x) {
    const int i = e / dim;
    const int d = e % dim;
    float acc = 0.0f;
    for (int j = 0; j < num_vectors; ++j) acc = fmaf(g[i * num_vectors + j], z[j * stride + d], acc);
    if (i == 0) {
      acc += Elem<K>::load(grad_output, b * out_stride + d);
      Elem<K>::store(grad_bottom, b * dim + d, acc);
    } else {
      grad_embeddings[emb_row + static_cast<std::int64_t>(i - 1) * dim + d] = acc;
    }
  }
}

// log(1 + exp(-|x|)) + max(x, 0) - x y: the stable BCE-with-logits per sample.
template <ElemKind K, int kBlockThreads>
__global__ void bce_partials_kernel(std::int64_t batch, const typename Elem<K>::Storage* logits,
                                    const float* labels, typename Elem<K>::Storage* grad_logits,
                                    float grad_scale, float* block_partials) {
  __shared__ float scratch[kBlockThreads / kWarpSize];
  float local = 0.0f;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kBlockThreads) + threadIdx.x; i < batch;
       i += static_cast<std::int64_t>(gridDim.x) * kBlockThreads) {
    const float x = Elem<K>::load(logits, i);
    const float y = labels[i];
    local += fmaxf(x, 0.0f) - x * y + log1pf(expf(-fabsf(x)));
    const float probability = 1.0f / (1.0f + expf(-x));
    Elem<K>::store(grad_logits, i, (probability - y) * grad_scale);
  }
  const float total = block_reduce_sum(local, scratch);
  if (threadIdx.x == 0) block_partials[blockIdx.x] = total;
}

// Sums the block partials in a fixed order: the same loss bits on every run.
template <int kBlockThreads>
__global__ void sum_partials_kernel(int count, const float* partials, float* total) {
  __shared__ float scratch[kBlockThreads / kWarpSize];
  float local = 0.0f;
  for (int i = threadIdx.x; i < count; i += kBlockThreads) local += partials[i];
  const float sum = block_reduce_sum(local, scratch);
  if (threadIdx.x == 0) *total = sum;
}

template <ElemKind K>
__global__ void cross_forward_kernel(std::int64_t count, const typename Elem<K>::Storage* x0,
                                     const typename Elem<K>::Storage* t, const typename Elem<K>::Storage* xl,
                                     typename Elem<K>::Storage* out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    Elem<K>::store(out, i, fmaf(Elem<K>::load(x0, i), Elem<K>::load(t, i), Elem<K>::load(xl, i)));
  }
}

template <ElemKind K>
__global__ void cross_backward_kernel(std::int64_t count, const typename Elem<K>::Storage* grad_out,
                                      const typename Elem<K>::Storage* x0, const typename Elem<K>::Storage* t,
                                      typename Elem<K>::Storage* grad_t, typename Elem<K>::Storage* grad_x0,
                                      bool accumulate, typename Elem<K>::Storage* grad_xl) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const typename Elem<K>::Storage g_stored = grad_out[i];
    const float g = Elem<K>::load(grad_out, i);
    Elem<K>::store(grad_t, i, g * Elem<K>::load(x0, i));
    const float previous = accumulate ? Elem<K>::load(grad_x0, i) : 0.0f;
    Elem<K>::store(grad_x0, i, fmaf(g, Elem<K>::load(t, i), previous));
    if (grad_xl != nullptr) grad_xl[i] = g_stored;  // the exact bits: no round trip
  }
}

// One thread per element of the (rows x (left + right)) sum; columns [0, left) go to `left` in K,
// the rest to `right` in fp32.
template <ElemKind K>
__global__ void add_split_columns_kernel(std::int64_t rows, std::int64_t left_cols, std::int64_t right_cols,
                                         const typename Elem<K>::Storage* a, const typename Elem<K>::Storage* b,
                                         typename Elem<K>::Storage* left, float* right) {
  const std::int64_t width = left_cols + right_cols;
  const std::int64_t count = rows * width;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = i / width, col = i - row * width;
    const float sum = Elem<K>::load(a, i) + Elem<K>::load(b, i);
    if (col < left_cols) {
      Elem<K>::store(left, row * left_cols + col, sum);
    } else {
      right[row * right_cols + (col - left_cols)] = sum;
    }
  }
}

template <ElemKind K>
__global__ void relu_backward_kernel(std::int64_t count, const typename Elem<K>::Storage* grad_out,
                                     const typename Elem<K>::Storage* output, typename Elem<K>::Storage* grad_pre) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const float g = Elem<K>::load(grad_out, i);
    Elem<K>::store(grad_pre, i, Elem<K>::load(output, i) > 0.0f ? g : 0.0f);
  }
}

// 16-byte vector access for the element-wise kernels (4 fp32 or 8 bf16/fp16 per load): scalar
// 2-byte accesses leave much of HBM's bandwidth unused. Callers check 16-byte alignment.
template <ElemKind K>
struct Vec {
  using Storage = typename Elem<K>::Storage;
  static constexpr int kCount = 16 / static_cast<int>(sizeof(Storage));
  __device__ static void load(const Storage* p, std::int64_t v, float (&out)[kCount]) {
    const uint4 raw = reinterpret_cast<const uint4*>(p)[v];
    const Storage* lanes = reinterpret_cast<const Storage*>(&raw);
#pragma unroll
    for (int j = 0; j < kCount; ++j) out[j] = Elem<K>::load(lanes, j);
  }
  __device__ static void store(Storage* p, std::int64_t v, const float (&in)[kCount]) {
    uint4 raw;
    Storage* lanes = reinterpret_cast<Storage*>(&raw);
#pragma unroll
    for (int j = 0; j < kCount; ++j) Elem<K>::store(lanes, j, in[j]);
    reinterpret_cast<uint4*>(p)[v] = raw;
  }
};

// The vector forms of cross_forward, cross_backward and relu_backward: `vectors` groups of
// Vec<K>::kCount elements, the same arithmetic per element as the scalar kernels above.
template <ElemKind K>
__global__ void cross_forward_vec_kernel(std::int64_t vectors, const typename Elem<K>::Storage* x0,
                                         const typename Elem<K>::Storage* t, const typename Elem<K>::Storage* xl,
                                         typename Elem<K>::Storage* out) {
  constexpr int N = Vec<K>::kCount;
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float a[N], b[N], c[N];
    Vec<K>::load(x0, v, a);
    Vec<K>::load(t, v, b);
    Vec<K>::load(xl, v, c);
#pragma unroll
    for (int j = 0; j < N; ++j) a[j] = fmaf(a[j], b[j], c[j]);
    Vec<K>::store(out, v, a);
  }
}

template <ElemKind K>
__global__ void cross_backward_vec_kernel(std::int64_t vectors, const typename Elem<K>::Storage* grad_out,
                                          const typename Elem<K>::Storage* x0, const typename Elem<K>::Storage* t,
                                          typename Elem<K>::Storage* grad_t, typename Elem<K>::Storage* grad_x0,
                                          bool accumulate, typename Elem<K>::Storage* grad_xl) {
  constexpr int N = Vec<K>::kCount;
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float g[N], a[N], b[N], previous[N];
    Vec<K>::load(grad_out, v, g);
    Vec<K>::load(x0, v, a);
    Vec<K>::load(t, v, b);
    if (accumulate) {
      Vec<K>::load(grad_x0, v, previous);
    } else {
#pragma unroll
      for (int j = 0; j < N; ++j) previous[j] = 0.0f;
    }
#pragma unroll
    for (int j = 0; j < N; ++j) {
      a[j] = g[j] * a[j];
      previous[j] = fmaf(g[j], b[j], previous[j]);
    }
    Vec<K>::store(grad_t, v, a);
    Vec<K>::store(grad_x0, v, previous);
    if (grad_xl != nullptr) reinterpret_cast<uint4*>(grad_xl)[v] = reinterpret_cast<const uint4*>(grad_out)[v];
  }
}

template <ElemKind K>
__global__ void relu_backward_vec_kernel(std::int64_t vectors, const typename Elem<K>::Storage* grad_out,
                                         const typename Elem<K>::Storage* output,
                                         typename Elem<K>::Storage* grad_pre) {
  constexpr int N = Vec<K>::kCount;
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float g[N], y[N];
    Vec<K>::load(grad_out, v, g);
    Vec<K>::load(output, v, y);
#pragma unroll
    for (int j = 0; j < N; ++j) g[j] = y[j] > 0.0f ? g[j] : 0.0f;
    Vec<K>::store(grad_pre, v, g);
  }
}

// add_split_columns in vectors: every group of N elements lies in one half (both widths are
// multiples of N); the right half's fp32 values go out as N / 4 float4 stores.
template <ElemKind K>
__global__ void add_split_columns_vec_kernel(std::int64_t rows, std::int64_t left_cols, std::int64_t right_cols,
                                             const typename Elem<K>::Storage* a, const typename Elem<K>::Storage* b,
                                             typename Elem<K>::Storage* left, float* right) {
  constexpr int N = Vec<K>::kCount;
  const std::int64_t width_vectors = (left_cols + right_cols) / N, left_vectors = left_cols / N;
  const std::int64_t right_vectors = right_cols / N;
  const std::int64_t vectors = rows * width_vectors;
  for (std::int64_t v = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; v < vectors;
       v += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t row = v / width_vectors, col = v - row * width_vectors;
    float x[N], y[N];
    Vec<K>::load(a, v, x);
    Vec<K>::load(b, v, y);
#pragma unroll
    for (int j = 0; j < N; ++j) x[j] += y[j];
    if (col < left_vectors) {
      Vec<K>::store(left, row * left_vectors + col, x);
    } else {
      float4* out = reinterpret_cast<float4*>(right + (row * right_vectors + (col - left_vectors)) * N);
#pragma unroll
      for (int q = 0; q < N / 4; ++q) out[q] = make_float4(x[4 * q], x[4 * q + 1], x[4 * q + 2], x[4 * q + 3]);
    }
  }
}

// kind: 0 SGD, 1 Adagrad, 2 Adam. Adam's bias corrections come from the host (1 - beta^t).
struct OptimizerStepArgs {
  int kind;
  // 1 - beta computed on the host in double: 1.0f - 0.999f in fp32 is off by 1e-5 relative.
  float learning_rate, eps, beta1, beta2, one_minus_beta1, one_minus_beta2, weight_decay, adam_correction1,
      adam_correction2;
};

template <ElemKind KGrad, ElemKind KShadow>
__global__ void dense_optimizer_kernel(OptimizerStepArgs args, std::int64_t count, float* master, float* state1,
                                       float* state2, const typename Elem<KGrad>::Storage* grad,
                                       typename Elem<KShadow>::Storage* shadow) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    float w = master[i];
    const float g = Elem<KGrad>::load(grad, i) + args.weight_decay * w;
    if (args.kind == 0) {
      w -= args.learning_rate * g;
    } else if (args.kind == 1) {
      const float sum = state1[i] + g * g;
      state1[i] = sum;
      w -= args.learning_rate * g / (sqrtf(sum) + args.eps);
    } else {
      const float m = args.beta1 * state1[i] + args.one_minus_beta1 * g;
      const float v = args.beta2 * state2[i] + args.one_minus_beta2 * g * g;
      state1[i] = m;
      state2[i] = v;
      w -= args.learning_rate * (m / args.adam_correction1) / (sqrtf(v / args.adam_correction2) + args.eps);
    }
    master[i] = w;
    if (shadow != nullptr) Elem<KShadow>::store(shadow, i, w);
  }
}

template <ElemKind KIn, ElemKind KOut>
__global__ void cast_kernel(std::int64_t count, const typename Elem<KIn>::Storage* in,
                            typename Elem<KOut>::Storage* out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    Elem<KOut>::store(out, i, Elem<KIn>::load(in, i));
  }
}

}  // namespace parity::gpu_device::nn
