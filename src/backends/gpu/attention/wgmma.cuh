// Hopper warpgroup MMA (wgmma, sm_90a) for the wgmma attention forward
// (forward_wgmma_kernel.cuh): shared-memory matrix descriptors of 128-byte-swizzled tiles, the
// fences and group waits, and the three instruction shapes the kernel issues. Every PTX statement
// is guarded by __CUDA_ARCH_FEAT_SM90_ALL: on plain sm_90 (and in the host pass) the functions
// compile empty, and the host refuses the kernel there (can_implement_forward) instead of running
// it.
//
// Tiles: a tile of R rows x C 16-bit columns (C a multiple of 64) is stored as C/64 column blocks
// of R rows x 128 bytes, block b at b * R * 128 bytes; inside a block, row r's 16-byte chunk c
// (columns 8c..8c+7 of the block) sits at r * 128 + ((c ^ (r % 8)) * 16). With the tile 1024-byte
// aligned this is the hardware's 128-byte swizzle (address bits [4,7) XOR bits [7,10)), so the
// tile is the canonical SW128 layout in both readings:
//   K-major (Q, K: rows = M or N, columns = the reduction): 8-row groups SBO = 1024 bytes apart,
//     a k16 step = 32 bytes inside the 128-byte row (the start address moves; the hardware
//     swizzles the computed address), the next 64 columns = the next column block.
//   MN-major (V[kv, d] as B of O += P V: rows = the reduction, columns = N): 8-row groups
//     SBO = 1024 bytes apart, 64-column blocks LBO = R * 128 bytes apart; a k16 step = 16 rows =
//     2048 bytes.
//
// Fragments (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate", register
// fragments; warp w = 0..3 of the warpgroup, lane l, g = l / 4, t = l % 4):
//   D of m64nNk16, fp32, N/2 values per thread, held as d[N/8][4]:
//     d[n][0] = (16w + g,     8n + 2t)    d[n][1] = (16w + g,     8n + 2t + 1)
//     d[n][2] = (16w + g + 8, 8n + 2t)    d[n][3] = (16w + g + 8, 8n + 2t + 1)
//   A of m64nNk16 from registers, 16-bit, 4 x 32 bits per thread (element pairs, low half first):
//     a[0] = (16w + g, 2t..2t+1)          a[1] = (16w + g + 8, 2t..2t+1)
//     a[2] = (16w + g, 2t+8..2t+9)        a[3] = (16w + g + 8, 2t+8..2t+9)
//   Per warp these are the C and A fragments of mma.sync m16n8k16 (tensor_core.cuh), so the
//   score masks, softmax steps and the C -> A conversion of the mma.sync kernels apply unchanged
//   to a warp's 16 rows (rows 16w.. of the warpgroup's 64).
#pragma once

#include <cstdint>

#include "backends/gpu/attention/tensor_core.cuh"

namespace parity::gpu_device::attention {

inline constexpr unsigned kSwizzleRowBytes = 128;   // one row of a 64-column block
inline constexpr unsigned kSwizzleAtomBytes = 1024;  // 8 rows: the swizzle period, and SBO

// The 64-bit descriptor of a shared-memory tile: start address, leading and stride byte offsets
// (each >> 4, 14 bits), base offset 0 (tiles are 1024-byte aligned), layout type 1 = 128-byte
// swizzle in bits [62, 64).
__device__ inline std::uint64_t swizzled_descriptor(unsigned shared_address, unsigned leading_bytes,
                                                    unsigned stride_bytes) {
  return static_cast<std::uint64_t>((shared_address & 0x3ffffu) >> 4) |
         (static_cast<std::uint64_t>((leading_bytes & 0x3ffffu) >> 4) << 16) |
         (static_cast<std::uint64_t>((stride_bytes & 0x3ffffu) >> 4) << 32) | (1ull << 62);
}

// The descriptor of the tile offset_bytes (a multiple of 16) past the one `descriptor` describes:
// the start address is the low field (address >> 4, 14 bits) and shared addresses stay below
// 2^18, so adding offset_bytes >> 4 to the low word moves the start without a carry into the
// leading-offset field. One add per wgmma where forming each descriptor from its address took a
// mask, a shift, an or and two moves (SASS of the forward: about ten instructions per wgmma).
__device__ inline std::uint64_t descriptor_plus(std::uint64_t descriptor, unsigned offset_bytes) {
  const auto low = static_cast<std::uint32_t>(descriptor) + (offset_bytes >> 4);
  return (descriptor & 0xffffffff00000000ull) | low;
}

// Orders this thread's register writes (accumulators, A fragments) before the wgmma that follow.
__device__ inline void wgmma_fence() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ inline void wgmma_commit_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
// Waits until at most kPending committed wgmma groups of this warpgroup are in flight.
template <int kPending>
__device__ inline void wgmma_wait_group() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
#endif
}
// Shared memory written through the generic proxy (cp.async, stores) and read next by wgmma (the
// async proxy): each writing thread fences before the barrier that publishes the tile.
__device__ inline void fence_generic_to_async_shared() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
// Pins wgmma operand registers in program order for the compiler: called before wgmma_fence,
// every earlier write of them is issued before the fence (the hardware fence then orders them
// before the wgmma); called after a wait, no read of them moves above it.
template <int kN>
__device__ inline void wgmma_fence_operands(float (&d)[kN][4]) {
#pragma unroll
  for (int n = 0; n < kN; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(d[n][e])::"memory");
}
template <int kN>
__device__ inline void wgmma_fence_operands(std::uint32_t (&a)[kN][4]) {
#pragma unroll
  for (int n = 0; n < kN; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(a[n][e])::"memory");
}

// The instructions. Operand lists: the accumulator registers as asm operands and their
// placeholders (D of m64n64: %0..%31; of m64n128: %0..%63), the other operands after them.
#define PARITY_WGMMA_D_N64(d) \
    "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), \
    "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), \
    "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
    "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), \
    "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), \
    "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
    "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
    "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
#define PARITY_WGMMA_D_N128(d) \
    "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), \
    "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), \
    "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), \
    "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), \
    "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), \
    "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
    "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), \
    "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]), \
    "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), \
    "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]), \
    "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), \
    "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]), \
    "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), \
    "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]), \
    "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), \
    "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
#define PARITY_WGMMA_REGS_N64 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}"
#define PARITY_WGMMA_REGS_N128 \
  "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31," \
  "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"

// D (64 x N fp32 over the warpgroup; this thread's N/2 as [N/8][4]) = A (64 x 16) x B (N x 16)^T,
// both through descriptors of K-major tiles (transpose bits 0), + D when accumulate != 0. PTX
// operand order: d, a, b, scale-d (a predicate), imm-scale-a, imm-scale-b, imm-trans-a,
// imm-trans-b. A, B, ACC: the placeholders of a, b and accumulate after the N/2 accumulators.
#define PARITY_WGMMA_SS(N, TYPES, A, B, ACC)                                              \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " ACC ", 0;\n"                          \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPES " "                \
               PARITY_WGMMA_REGS_N##N ", " A ", " B ", p, 1, 1, 0, 0;\n}\n"              \
               : PARITY_WGMMA_D_N##N(d)                                                  \
               : "l"(a_descriptor), "l"(b_descriptor), "r"(accumulate))

template <Elem16 E, int kN>
__device__ inline void wgmma_m64nNk16_ss(float (&d)[kN / 8][4], std::uint64_t a_descriptor,
                                         std::uint64_t b_descriptor, int accumulate) {
  static_assert(kN == 64 || kN == 128, "instantiated for N = 64 and 128");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kBF16 = E == Elem16::kBF16;
  if constexpr (kN == 64 && kBF16) PARITY_WGMMA_SS(64, "bf16.bf16", "%32", "%33", "%34");
  if constexpr (kN == 64 && !kBF16) PARITY_WGMMA_SS(64, "f16.f16", "%32", "%33", "%34");
  if constexpr (kN == 128 && kBF16) PARITY_WGMMA_SS(128, "bf16.bf16", "%64", "%65", "%66");
  if constexpr (kN == 128 && !kBF16) PARITY_WGMMA_SS(128, "f16.f16", "%64", "%65", "%66");
#else
  (void)d, (void)a_descriptor, (void)b_descriptor, (void)accumulate;
#endif
}
#undef PARITY_WGMMA_SS

// The N = 64 product (64-key S tiles).
template <Elem16 E>
__device__ inline void wgmma_m64n64k16_ss(float (&d)[8][4], std::uint64_t a_descriptor,
                                          std::uint64_t b_descriptor, int accumulate) {
  wgmma_m64nNk16_ss<E, 64>(d, a_descriptor, b_descriptor, accumulate);
}

// D (64 x N fp32 over the warpgroup; this thread's N/2 as [N/8][4]) += A (64 x 16 in registers,
// this thread's 4 packed pairs) x B (16 x N), B through the descriptor of an MN-major tile
// (transpose bit 1). PTX operand order: d, a, b, scale-d (a predicate, set from the constant 1:
// accumulate), imm-scale-a, imm-scale-b, imm-trans-b. A, B, ONE: the placeholders of a, b and the
// constant after the N/2 accumulators.
#define PARITY_WGMMA_RS(N, TYPES, A, B, ONE)                                                \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " ONE ", 0;\n"                            \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPES " "                  \
               PARITY_WGMMA_REGS_N##N ", " A ", " B ", p, 1, 1, 1;\n}\n"                    \
               : PARITY_WGMMA_D_N##N(d)                                                    \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_descriptor), "r"(1))

template <Elem16 E, int kN>
__device__ inline void wgmma_m64nNk16_rs(float (&d)[kN / 8][4], const std::uint32_t (&a)[4],
                                         std::uint64_t b_descriptor) {
  static_assert(kN == 64 || kN == 128, "instantiated for N = 64 and 128");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kBF16 = E == Elem16::kBF16;
  if constexpr (kN == 64 && kBF16) PARITY_WGMMA_RS(64, "bf16.bf16", "{%32,%33,%34,%35}", "%36", "%37");
  if constexpr (kN == 64 && !kBF16) PARITY_WGMMA_RS(64, "f16.f16", "{%32,%33,%34,%35}", "%36", "%37");
  if constexpr (kN == 128 && kBF16) PARITY_WGMMA_RS(128, "bf16.bf16", "{%64,%65,%66,%67}", "%68", "%69");
  if constexpr (kN == 128 && !kBF16) PARITY_WGMMA_RS(128, "f16.f16", "{%64,%65,%66,%67}", "%68", "%69");
#else
  (void)d, (void)a, (void)b_descriptor;
#endif
}

#undef PARITY_WGMMA_RS
#undef PARITY_WGMMA_REGS_N128
#undef PARITY_WGMMA_REGS_N64
#undef PARITY_WGMMA_D_N128
#undef PARITY_WGMMA_D_N64

}  // namespace parity::gpu_device::attention
