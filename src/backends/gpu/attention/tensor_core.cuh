// Portable tensor-core building blocks for the attention kernels: a 16x8x16 matrix multiply-add
// on 16-bit inputs with fp32 accumulation, 8x8 fragment loads from shared memory, asynchronous
// global->shared copies, and a swizzled shared-memory tile layout.
//
// Fragment layouts (those of PTX mma.m16n8k16; "group" g = lane/4, t = lane%4 inside a 32-lane
// mma group):
//   A 16x16 (row-major): a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..], a[3] =
//   A[g+8][2t+8..] B 16x8  (k x n):     b[0] = {B[2t][g], B[2t+1][g]}, b[1] = {B[2t+8][g],
//   B[2t+9][g]} C 16x8  (fp32):      c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1]
// Each 32-bit register holds two 16-bit elements, the lower column (or k) in the low half.
//
// NVIDIA (sm_80+): mma.sync, ldmatrix and cp.async. AMD: the same fragment semantics built from
// lane shuffles and plain loads inside each 32-lane half of a wavefront — a compile-checked path
// that keeps the kernels portable, not a tuned one (MFMA would replace it).
#pragma once

#include <cstdint>

#include "backends/gpu/common/portability.cuh"
#include "backends/gpu/embedding/kernels.cuh"

namespace parity::gpu_device::attention {

// The mma fragment layouts are defined over 32 lanes whatever the hardware lane count.
inline constexpr int kMmaLanes = 32;

enum class Elem16 : int { kBF16 = 0, kF16 = 1 };

#if defined(PARITY_GPU_CUDA) && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 800)
#define PARITY_ATTENTION_SM80 1
#endif

__device__ inline int mma_lane() { return static_cast<int>(threadIdx.x) % kMmaLanes; }
// Lane `index` of this lane's 32-lane mma group, as a lane id of the hardware warp.
__device__ inline int mma_group_lane(int index) {
  return (lane_id() / kMmaLanes) * kMmaLanes + index;
}

template <Elem16 E>
__device__ inline float to_float(std::uint16_t bits) {
  if constexpr (E == Elem16::kBF16)
    return bf16_to_float(bits);
  else
    return fp16_to_float(bits);
}

template <Elem16 E>
__device__ inline std::uint16_t from_float(float value) {
  if constexpr (E == Elem16::kBF16)
    return float_to_bf16(value);
  else
    return float_to_fp16(value);
}

// Two floats rounded to nearest into one register (lo in the low half).
template <Elem16 E>
__device__ inline std::uint32_t pack2(float lo, float hi) {
#if defined(PARITY_ATTENTION_SM80)
  std::uint32_t packed;
  if constexpr (E == Elem16::kBF16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(hi), "f"(lo));
  }
  return packed;
#else
  return std::uint32_t{from_float<E>(lo)} | (std::uint32_t{from_float<E>(hi)} << 16);
#endif
}

template <Elem16 E>
__device__ inline float low_half(std::uint32_t packed) {
  return to_float<E>(static_cast<std::uint16_t>(packed & 0xffffu));
}
template <Elem16 E>
__device__ inline float high_half(std::uint32_t packed) {
  return to_float<E>(static_cast<std::uint16_t>(packed >> 16));
}

// c += a * b for one 16x8x16 tile (layouts above).
template <Elem16 E>
__device__ inline void mma_16x8x16(float (&c)[4], const std::uint32_t (&a)[4],
                                   const std::uint32_t (&b)[2]) {
#if defined(PARITY_ATTENTION_SM80)
  if constexpr (E == Elem16::kBF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
#else
  // Lane (g, t) needs rows g and g+8 of A (held by lanes 4g..4g+3) and columns 2t, 2t+1 of B
  // (held by lanes 8t..8t+3 and 8t+4..8t+7); k pairs 2s, 2s+1 and 2s+8, 2s+9 come from lane s of
  // each.
  const int g = mma_lane() / 4;
  const int t = mma_lane() % 4;
  for (int s = 0; s < 4; ++s) {
    std::uint32_t a_regs[4];
    for (int r = 0; r < 4; ++r) a_regs[r] = shfl(a[r], mma_group_lane(g * 4 + s));
    std::uint32_t b_col0[2], b_col1[2];
    for (int r = 0; r < 2; ++r) {
      b_col0[r] = shfl(b[r], mma_group_lane(2 * t * 4 + s));
      b_col1[r] = shfl(b[r], mma_group_lane((2 * t + 1) * 4 + s));
    }
    for (int half = 0; half < 2; ++half) {  // k = 2s (+8*half) and 2s+1 (+8*half)
      for (int odd = 0; odd < 2; ++odd) {
        const auto pick = [odd](std::uint32_t packed) {
          return odd ? high_half<E>(packed) : low_half<E>(packed);
        };
        const float a_top = pick(a_regs[half * 2]);         // A[g][k]
        const float a_bottom = pick(a_regs[half * 2 + 1]);  // A[g+8][k]
        const float b0 = pick(b_col0[half]);                // B[k][2t]
        const float b1 = pick(b_col1[half]);                // B[k][2t+1]
        c[0] += a_top * b0;
        c[1] += a_top * b1;
        c[2] += a_bottom * b0;
        c[3] += a_bottom * b1;
      }
    }
  }
#endif
}

// ---- shared-memory tiles: rows of kCols 16-bit elements, 16-byte chunks XOR-swizzled by row ----
// Element (r, c) lives at r*kCols + ((c/8) ^ (r%8))*8 + c%8, so the 8 rows an 8x8 fragment load
// touches at one logical chunk fall in 8 different bank groups. Needs kCols >= 64.
template <int kCols>
__device__ inline int swizzled_offset(int row, int col) {
  static_assert(kCols % 64 == 0, "swizzled tiles need at least 8 chunks of 8 elements per row");
  return row * kCols + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
}

// Four 8x8 fragments. Lane l gives the address of row l%8 of fragment l/8; register i receives
// fragment i as M[g][2t..2t+1] (plain) or {M[2t][g], M[2t+1][g]} (kTransposed).
#if defined(PARITY_GPU_CUDA)
// The same from a 32-bit shared-window address: NVIDIA sm_80+ (ldmatrix). Device code for older
// chips never calls it (load_fragments_x4 falls back to plain loads there, and the 128-row
// kernel refuses to compile); the host pass only parses it.
template <bool kTransposed>
__device__ inline void load_fragments_x4_shared(std::uint32_t (&r)[4], unsigned address) {
#if !defined(PARITY_ATTENTION_SM80)
  (void)address;
  r[0] = r[1] = r[2] = r[3] = 0;
#else
  if constexpr (kTransposed) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  } else {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  }
#endif
}
#endif

template <bool kTransposed>
__device__ inline void load_fragments_x4(std::uint32_t (&r)[4], const std::uint16_t* row_address) {
#if defined(PARITY_ATTENTION_SM80)
  load_fragments_x4_shared<kTransposed>(
      r, static_cast<unsigned>(__cvta_generic_to_shared(row_address)));
#else
  const int g = mma_lane() / 4;
  const int t = mma_lane() % 4;
  const auto address_bits = reinterpret_cast<unsigned long long>(row_address);
  for (int i = 0; i < 4; ++i) {
    if constexpr (kTransposed) {
      const auto row0 =
          reinterpret_cast<const std::uint16_t*>(shfl(address_bits, mma_group_lane(i * 8 + 2 * t)));
      const auto row1 = reinterpret_cast<const std::uint16_t*>(
          shfl(address_bits, mma_group_lane(i * 8 + 2 * t + 1)));
      r[i] = std::uint32_t{row0[g]} | (std::uint32_t{row1[g]} << 16);
    } else {
      const auto row =
          reinterpret_cast<const std::uint16_t*>(shfl(address_bits, mma_group_lane(i * 8 + g)));
      r[i] = std::uint32_t{row[2 * t]} | (std::uint32_t{row[2 * t + 1]} << 16);
    }
  }
#endif
}

// ---- warp-level products on swizzled shared tiles (one 32-lane mma group, 16 output rows) ----

// C (16 x kCols) = rows [a_row0, a_row0+16) of `a_tile` x (rows [b_row0, b_row0+kCols) of
// `b_tile`)^T; both tiles have kDepth columns.
template <Elem16 E, int kDepth, int kCols>
__device__ inline void multiply_rows_by_rows_t(float (&c)[kCols / 8][4],
                                               const std::uint16_t* a_tile, int a_row0,
                                               const std::uint16_t* b_tile, int b_row0) {
  constexpr int kPairs = kCols / 16;  // B fragments of 16 columns
  const int lane = mma_lane();
#pragma unroll
  for (int n = 0; n < kCols / 8; ++n) c[n][0] = c[n][1] = c[n][2] = c[n][3] = 0.0f;
#pragma unroll
  for (int kc = 0; kc < kDepth / 16; ++kc) {
    // All loads of a step first, then the products: the loads are in flight together.
    std::uint32_t a[4];
    std::uint32_t b[kPairs][4];
    load_fragments_x4<false>(
        a, a_tile + swizzled_offset<kDepth>(a_row0 + (lane % 8) + ((lane / 8) & 1) * 8,
                                            kc * 16 + (lane / 16) * 8));
#pragma unroll
    for (int n2 = 0; n2 < kPairs; ++n2) {
      load_fragments_x4<false>(
          b[n2], b_tile + swizzled_offset<kDepth>(b_row0 + n2 * 16 + (lane / 16) * 8 + lane % 8,
                                                  kc * 16 + ((lane / 8) & 1) * 8));
    }
#pragma unroll
    for (int n2 = 0; n2 < kPairs; ++n2) {
      const std::uint32_t b_even[2] = {b[n2][0], b[n2][1]};
      const std::uint32_t b_odd[2] = {b[n2][2], b[n2][3]};
      mma_16x8x16<E>(c[2 * n2], a, b_even);
      mma_16x8x16<E>(c[2 * n2 + 1], a, b_odd);
    }
  }
}

// acc (16 x kDim) += X (16 x kDepth, fp32 C layout in registers, rounded to E) x rows
// [b_row0, b_row0+kDepth) of `b_tile` (kDim columns).
template <Elem16 E, int kDepth, int kDim>
__device__ inline void accumulate_x_rows(float (&acc)[kDim / 8][4], const float (&x)[kDepth / 8][4],
                                         const std::uint16_t* b_tile, int b_row0) {
  constexpr int kGroup = 4;  // B fragments loaded together before their products
  static_assert((kDim / 16) % kGroup == 0, "kDim must be a multiple of 64");
  const int lane = mma_lane();
#pragma unroll
  for (int kc = 0; kc < kDepth / 16; ++kc) {
    const std::uint32_t a[4] = {
        pack2<E>(x[2 * kc][0], x[2 * kc][1]), pack2<E>(x[2 * kc][2], x[2 * kc][3]),
        pack2<E>(x[2 * kc + 1][0], x[2 * kc + 1][1]), pack2<E>(x[2 * kc + 1][2], x[2 * kc + 1][3])};
#pragma unroll
    for (int g0 = 0; g0 < kDim / 16; g0 += kGroup) {
      std::uint32_t b[kGroup][4];
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
        load_fragments_x4<true>(
            b[i], b_tile + swizzled_offset<kDim>(b_row0 + kc * 16 + ((lane / 8) & 1) * 8 + lane % 8,
                                                 (g0 + i) * 16 + (lane / 16) * 8));
      }
#pragma unroll
      for (int i = 0; i < kGroup; ++i) {
        const std::uint32_t b_even[2] = {b[i][0], b[i][1]};
        const std::uint32_t b_odd[2] = {b[i][2], b[i][3]};
        mma_16x8x16<E>(acc[2 * (g0 + i)], a, b_even);
        mma_16x8x16<E>(acc[2 * (g0 + i) + 1], a, b_odd);
      }
    }
  }
}

// ---- asynchronous copies (cp.async on sm_80+, plain copies elsewhere) ----
// 16 bytes global -> shared; zero-filled when `in_range` is false (the source is not read).
__device__ inline void copy_16_bytes_async(void* shared_destination, const void* global_source,
                                           bool in_range) {
#if defined(PARITY_ATTENTION_SM80)
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared_destination));
  const int source_bytes = in_range ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(address), "l"(global_source),
               "r"(source_bytes));
#else
  *static_cast<uint4*>(shared_destination) =
      in_range ? *static_cast<const uint4*>(global_source) : uint4{0, 0, 0, 0};
#endif
}

// One float global -> shared; `fill` when `in_range` is false.
__device__ inline void copy_float_async(float* shared_destination, const float* global_source,
                                        bool in_range, float fill) {
#if defined(PARITY_ATTENTION_SM80)
  if (in_range) {
    const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared_destination));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"(address), "l"(global_source));
  } else {
    *shared_destination = fill;
  }
#else
  *shared_destination = in_range ? *global_source : fill;
#endif
}

__device__ inline void commit_async_copies() {
#if defined(PARITY_ATTENTION_SM80)
  asm volatile("cp.async.commit_group;");
#endif
}

// Waits until at most kPending committed groups are still in flight.
template <int kPending>
__device__ inline void wait_async_copies() {
#if defined(PARITY_ATTENTION_SM80)
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending));
#endif
}

// Copies rows [row_begin, row_begin + kRows) of a row-major global matrix (row stride
// `row_stride` elements, kCols columns used) into a swizzled shared tile; rows at or past
// `row_limit` are zero-filled. All threads of the block take part.
template <int kRows, int kCols, int kThreads>
__device__ inline void load_tile_async(std::uint16_t* tile, const std::uint16_t* global,
                                       std::int64_t row_stride, int row_begin, int row_limit) {
  constexpr int kChunksPerRow = kCols / 8;
  constexpr int kChunks = kRows * kChunksPerRow;
  static_assert(kChunks % kThreads == 0, "tile chunks must divide evenly among the threads");
#pragma unroll
  for (int i = 0; i < kChunks / kThreads; ++i) {
    const int chunk = static_cast<int>(threadIdx.x) + i * kThreads;
    const int row = chunk / kChunksPerRow;
    const int col = (chunk % kChunksPerRow) * 8;
    const bool in_range = row_begin + row < row_limit;
    const std::uint16_t* source = in_range ? global + (row_begin + row) * row_stride + col : global;
    copy_16_bytes_async(tile + swizzled_offset<kCols>(row, col), source, in_range);
  }
}

}  // namespace parity::gpu_device::attention
