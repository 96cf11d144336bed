// Device code of the fast dot-interaction kernels (see include/parity/nn/dense_gpu.hpp). The
// general one-block-per-sample kernels stay in kernels.cuh as the fallback.
//
// Legend: V = num_vectors (the bottom output plus F embeddings), D = dim, P = V(V-1)/2 pairs,
// T = ceil(V/4) blocks of 4 rows, Z = the V x D matrix of one sample.
//
// Forward (Gram tiles): a block stages S samples' Z in shared memory as fp32 (rows padded by 4
// floats after every 4 rows so that the rows 4I + r of different blocks I sit in different 16-byte
// bank groups), then each thread computes one 4x4 block (I >= J) of Z Z^T over one of `splits`
// slices of D, with 16-byte shared loads: 8 loads per 64 FMAs. The partial pairs of the slices are
// summed in a fixed order while the output row (dense part, pairs, zero padding) is written.
//
// Backward (register columns): dZ = G Z, G the symmetric V x V matrix of pair gradients (zero
// diagonal). A thread owns two columns of one sample: it holds Z[:, d0..d0+1] in registers (read
// once from HBM, coalesced across the D/2 threads of the sample), reads G from shared memory as
// broadcast 16-byte loads of 4 rows, and writes d bottom (+ the dense columns' pass-through
// gradient) and the fp32 embedding gradients straight to their outputs (the TBE backward's layout).
#pragma once

#include <cstdint>

#include "backends/gpu/common/portability.cuh"
#include "backends/gpu/nn/kernels.cuh"

namespace parity::gpu_device::nn {

// Four consecutive elements (one 16-byte fp32 or 8-byte 16-bit load) and two (8 or 4 bytes).
template <ElemKind K>
struct Quad {
  using Storage = typename Elem<K>::Storage;
  __device__ static float4 load(const Storage* p) {
    if constexpr (K == ElemKind::kF32) {
      return *reinterpret_cast<const float4*>(p);
    } else {
      const uint2 raw = *reinterpret_cast<const uint2*>(p);
      const Storage* lanes = reinterpret_cast<const Storage*>(&raw);
      return make_float4(Elem<K>::load(lanes, 0), Elem<K>::load(lanes, 1), Elem<K>::load(lanes, 2),
                         Elem<K>::load(lanes, 3));
    }
  }
  __device__ static float2 load_pair(const Storage* p) {
    if constexpr (K == ElemKind::kF32) {
      return *reinterpret_cast<const float2*>(p);
    } else {
      const unsigned int raw = *reinterpret_cast<const unsigned int*>(p);
      const Storage* lanes = reinterpret_cast<const Storage*>(&raw);
      return make_float2(Elem<K>::load(lanes, 0), Elem<K>::load(lanes, 1));
    }
  }
  __device__ static void store_pair(Storage* p, float a, float b) {
    if constexpr (K == ElemKind::kF32) {
      *reinterpret_cast<float2*>(p) = make_float2(a, b);
    } else {
      unsigned int raw;
      Storage* lanes = reinterpret_cast<Storage*>(&raw);
      Elem<K>::store(lanes, 0, a);
      Elem<K>::store(lanes, 1, b);
      *reinterpret_cast<unsigned int*>(p) = raw;
    }
  }
};

// The block shape of the forward, chosen on the host (interaction_launch in launch.cu).
struct GramTiling {
  int num_vectors;        // V
  int dim;                // D, a multiple of 4
  int splits;             // slices of D per tile; D % (4 splits) == 0
  int samples_per_block;  // S
  int sample_floats;      // shared floats per sample: Z (padded) then splits x P partial pairs
  __device__ int row_blocks() const { return (num_vectors + 3) / 4; }
  __device__ int tiles() const { return row_blocks() * (row_blocks() + 1) / 2; }
  __device__ int pairs() const { return num_vectors * (num_vectors - 1) / 2; }
  __device__ int z_floats() const { return num_vectors * dim + row_blocks() * 4; }
  // Shared offset of row n: 4 floats of padding after every 4 rows.
  __device__ int row_offset(int n) const { return n * dim + (n / 4) * 4; }
};

// Tile index t of the lower block triangle in row-major order -> (I, J), J <= I.
__device__ inline void tile_of_index(int t, int* block_i, int* block_j) {
  int row = static_cast<int>((sqrtf(8.0f * static_cast<float>(t) + 1.0f) - 1.0f) * 0.5f);
  while (row * (row + 1) / 2 > t) --row;        // the float estimate may be one too high
  while ((row + 1) * (row + 2) / 2 <= t) ++row;  // ... or one too low
  *block_i = row;
  *block_j = t - row * (row + 1) / 2;
}

// One 4x4 tile of Z Z^T over columns [d_begin, d_end) of the sample at `z`; rows past V - 1 read
// row V - 1 (their results are dropped).
__device__ inline void gram_tile(const GramTiling& g, const float* z, int block_i, int block_j, int d_begin,
                                 int d_end, float (&acc)[4][4]) {
  int a_row[4], b_row[4];
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    a_row[r] = g.row_offset(min(4 * block_i + r, g.num_vectors - 1));
    b_row[r] = g.row_offset(min(4 * block_j + r, g.num_vectors - 1));
  }
#pragma unroll
  for (int r = 0; r < 4; ++r) {
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[r][c] = 0.0f;
  }
  for (int d = d_begin; d < d_end; d += 4) {
    float4 a[4], b[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      a[r] = *reinterpret_cast<const float4*>(z + a_row[r] + d);
      b[r] = *reinterpret_cast<const float4*>(z + b_row[r] + d);
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        acc[r][c] = fmaf(a[r].x, b[c].x, acc[r][c]);
        acc[r][c] = fmaf(a[r].y, b[c].y, acc[r][c]);
        acc[r][c] = fmaf(a[r].z, b[c].z, acc[r][c]);
        acc[r][c] = fmaf(a[r].w, b[c].w, acc[r][c]);
      }
    }
  }
}

template <ElemKind K>
__global__ void interaction_forward_gram_tiles_kernel(GramTiling g, std::int64_t batch, std::int64_t out_stride,
                                                      const typename Elem<K>::Storage* bottom,
                                                      const typename Elem<K>::Storage* embeddings,
                                                      typename Elem<K>::Storage* output) {
  extern __shared__ float4 shared_quads[];
  float* shared = reinterpret_cast<float*>(shared_quads);
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * g.samples_per_block;
  const int samples = static_cast<int>(min(static_cast<std::int64_t>(g.samples_per_block), batch - first));
  const int num_embeddings = g.num_vectors - 1;
  const int quads_per_row = g.dim / 4;
  const int quads_per_sample = g.num_vectors * quads_per_row;
  for (int q = threadIdx.x; q < samples * quads_per_sample; q += blockDim.x) {
    const int s = q / quads_per_sample;
    const int rest = q - s * quads_per_sample;
    const int n = rest / quads_per_row;
    const int col = (rest - n * quads_per_row) * 4;
    const std::int64_t b = first + s;
    const float4 v = n == 0 ? Quad<K>::load(bottom + b * g.dim + col)
                            : Quad<K>::load(embeddings + (b * num_embeddings + (n - 1)) * g.dim + col);
    *reinterpret_cast<float4*>(shared + s * g.sample_floats + g.row_offset(n) + col) = v;
  }
  __syncthreads();
  const int tiles = g.tiles();
  const int pairs = g.pairs();
  const int chunk = g.dim / g.splits;
  for (int w = threadIdx.x; w < samples * tiles * g.splits; w += blockDim.x) {
    const int s = w / (tiles * g.splits);
    const int rest = w - s * tiles * g.splits;
    const int split = rest / tiles;
    int block_i = 0;
    int block_j = 0;
    tile_of_index(rest - split * tiles, &block_i, &block_j);
    const float* z = shared + s * g.sample_floats;
    float acc[4][4];
    gram_tile(g, z, block_i, block_j, split * chunk, (split + 1) * chunk, acc);
    float* partial = shared + s * g.sample_floats + g.z_floats() + split * pairs;
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int i = 4 * block_i + r;
#pragma unroll
      for (int c = 0; c < 4; ++c) {
        const int j = 4 * block_j + c;
        if (i < g.num_vectors && j < i) partial[i * (i - 1) / 2 + j] = acc[r][c];
      }
    }
  }
  __syncthreads();
  const std::int64_t dense_and_pairs = g.dim + pairs;
  for (std::int64_t e = threadIdx.x; e < samples * out_stride; e += blockDim.x) {
    const int s = static_cast<int>(e / out_stride);
    const std::int64_t col = e - s * out_stride;
    const float* sample = shared + s * g.sample_floats;
    float value = 0.0f;
    if (col < g.dim) {
      value = sample[col];  // row 0 at offset 0: the bottom output, exact in fp32
    } else if (col < dense_and_pairs) {
      const float* partial = sample + g.z_floats() + (col - g.dim);
      for (int split = 0; split < g.splits; ++split) value += partial[split * pairs];
    }
    Elem<K>::store(output, (first + s) * out_stride + col, value);
  }
}

// kMaxVectors bounds V (the register array of a thread's two columns).
template <ElemKind K, int kMaxVectors>
__global__ void interaction_backward_register_columns_kernel(
    int num_vectors, int dim, int samples_per_block, std::int64_t batch, std::int64_t out_stride,
    const typename Elem<K>::Storage* bottom, const typename Elem<K>::Storage* embeddings,
    const typename Elem<K>::Storage* grad_output, typename Elem<K>::Storage* grad_bottom, float* grad_embeddings) {
  extern __shared__ float4 shared_quads[];
  float* gram = reinterpret_cast<float*>(shared_quads);  // S x V x 4T, row j holds G[j][0..4T)
  const int padded = (num_vectors + 3) / 4 * 4;
  const int per_sample = num_vectors * padded;
  const int num_embeddings = num_vectors - 1;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * samples_per_block;
  const int samples = static_cast<int>(min(static_cast<std::int64_t>(samples_per_block), batch - first));
  const int lanes = dim / 2;
  const int s = static_cast<int>(threadIdx.x) / lanes;
  const int d0 = 2 * (static_cast<int>(threadIdx.x) - s * lanes);
  const bool is_active = s < samples;
  const std::int64_t b = first + s;
  // This thread's columns of Z, loaded before the barrier so that they are in flight while G fills.
  float2 z[kMaxVectors];
  if (is_active) {
#pragma unroll
    for (int j = 0; j < kMaxVectors; ++j) {
      if (j < num_vectors) {
        z[j] = j == 0 ? Quad<K>::load_pair(bottom + b * dim + d0)
                      : Quad<K>::load_pair(embeddings + (b * num_embeddings + (j - 1)) * dim + d0);
      }
    }
  }
  for (int e = threadIdx.x; e < samples * per_sample; e += blockDim.x) {
    const int sample = e / per_sample;
    const int rest = e - sample * per_sample;
    const int i = rest / padded;
    const int j = rest - i * padded;
    const typename Elem<K>::Storage* pair_grads = grad_output + (first + sample) * out_stride + dim;
    float v = 0.0f;
    if (j < i) {
      v = Elem<K>::load(pair_grads, i * (i - 1) / 2 + j);
    } else if (j > i && j < num_vectors) {
      v = Elem<K>::load(pair_grads, j * (j - 1) / 2 + i);
    }
    gram[e] = v;
  }
  __syncthreads();
  if (!is_active) return;
  const float* g = gram + s * per_sample;
  for (int block = 0; block < padded / 4; ++block) {
    float2 acc[4] = {};
#pragma unroll
    for (int j = 0; j < kMaxVectors; ++j) {
      if (j < num_vectors) {
        const float4 gj = *reinterpret_cast<const float4*>(g + j * padded + 4 * block);  // G[4 block + r][j]
        acc[0].x = fmaf(gj.x, z[j].x, acc[0].x);
        acc[0].y = fmaf(gj.x, z[j].y, acc[0].y);
        acc[1].x = fmaf(gj.y, z[j].x, acc[1].x);
        acc[1].y = fmaf(gj.y, z[j].y, acc[1].y);
        acc[2].x = fmaf(gj.z, z[j].x, acc[2].x);
        acc[2].y = fmaf(gj.z, z[j].y, acc[2].y);
        acc[3].x = fmaf(gj.w, z[j].x, acc[3].x);
        acc[3].y = fmaf(gj.w, z[j].y, acc[3].y);
      }
    }
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int i = 4 * block + r;
      if (i >= num_vectors) break;
      if (i == 0) {
        // Scalar loads: an odd out_stride leaves these two columns unaligned for a pair load.
        const float pass_x = Elem<K>::load(grad_output, b * out_stride + d0);
        const float pass_y = Elem<K>::load(grad_output, b * out_stride + d0 + 1);
        Quad<K>::store_pair(grad_bottom + b * dim + d0, acc[0].x + pass_x, acc[0].y + pass_y);
      } else {
        *reinterpret_cast<float2*>(grad_embeddings + (b * num_embeddings + (i - 1)) * dim + d0) = acc[r];
      }
    }
  }
}

}  // namespace parity::gpu_device::nn
