// The one portability header for device code: CUDA (nvcc) and HIP (hipcc) from the same source.
// Lane count is a compile-time constant of the target (32 NVIDIA, 64 AMD CDNA); kernels use
// kWarpSize and full_lane_mask(), never a literal 32 or 0xffffffff.
#pragma once

#if defined(__HIPCC__) || defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define PARITY_GPU_HIP 1
#else
#include <cuda_runtime.h>
#define PARITY_GPU_CUDA 1
#endif

#include <cstdint>

namespace parity::gpu_device {

#if defined(PARITY_GPU_HIP)
// CDNA (gfx90a, gfx940) runs 64-lane wavefronts. hipcc defines __AMDGCN_WAVEFRONT_SIZE.
#if defined(__AMDGCN_WAVEFRONT_SIZE)
inline constexpr int kWarpSize = __AMDGCN_WAVEFRONT_SIZE;
#else
inline constexpr int kWarpSize = 64;
#endif
using LaneMask = unsigned long long;
#else
inline constexpr int kWarpSize = 32;
using LaneMask = unsigned int;
#endif
static_assert(kWarpSize == 32 || kWarpSize == 64, "lane count must be 32 or 64");

__host__ __device__ constexpr LaneMask full_lane_mask() { return ~LaneMask{0}; }

__device__ inline int lane_id() { return static_cast<int>(threadIdx.x) % kWarpSize; }
__device__ inline int warp_id() { return static_cast<int>(threadIdx.x) / kWarpSize; }

template <typename T>
__device__ inline T shfl_down(T value, int delta) {
#if defined(PARITY_GPU_HIP)
  return __shfl_down(value, delta, kWarpSize);
#else
  return __shfl_down_sync(full_lane_mask(), value, static_cast<unsigned>(delta), kWarpSize);
#endif
}

template <typename T>
__device__ inline T shfl_xor(T value, int lane_mask) {
#if defined(PARITY_GPU_HIP)
  return __shfl_xor(value, lane_mask, kWarpSize);
#else
  return __shfl_xor_sync(full_lane_mask(), value, lane_mask, kWarpSize);
#endif
}

template <typename T>
__device__ inline T shfl(T value, int src_lane) {
#if defined(PARITY_GPU_HIP)
  return __shfl(value, src_lane, kWarpSize);
#else
  return __shfl_sync(full_lane_mask(), value, src_lane, kWarpSize);
#endif
}

__device__ inline LaneMask ballot(bool predicate) {
#if defined(PARITY_GPU_HIP)
  return __ballot(predicate);
#else
  return __ballot_sync(full_lane_mask(), predicate);
#endif
}

__device__ inline int popcount(LaneMask mask) {
#if defined(PARITY_GPU_HIP)
  return __popcll(mask);
#else
  return __popc(mask);
#endif
}

// Lanes below this one, for prefix counts inside a warp.
__device__ inline LaneMask lanes_below_mask() {
  const int lane = lane_id();
  return lane == 0 ? LaneMask{0} : (full_lane_mask() >> (kWarpSize - lane));
}

template <typename T>
__device__ inline T warp_reduce_sum(T value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) value += shfl_xor(value, offset);
  return value;
}

template <typename T>
__device__ inline T warp_reduce_max(T value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    const T other = shfl_xor(value, offset);
    value = other > value ? other : value;
  }
  return value;
}

// Block-wide sum; every thread gets the total. `scratch` holds blockDim.x / kWarpSize values.
template <typename T>
__device__ inline T block_reduce_sum(T value, T* scratch) {
  value = warp_reduce_sum(value);
  const int warps = static_cast<int>(blockDim.x) / kWarpSize;
  if (lane_id() == 0) scratch[warp_id()] = value;
  __syncthreads();
  T total = lane_id() < warps ? scratch[lane_id()] : T{};
  total = warp_reduce_sum(total);
  __syncthreads();  // scratch may be reused by the caller
  return total;
}

// A load of data read once (evict-first in L1 and L2: ld.global.cs on CUDA): a stream of such
// lines recycles its own L2 slots instead of evicting lines that are reused or dirty. T: a
// 4/8/16-byte scalar or vector type (int, long long, int4, longlong2, float4, uint2, ...).
template <typename T>
__device__ inline T load_read_once(const T* ptr) {
#if defined(PARITY_GPU_CUDA)
  return __ldcs(ptr);
#else
  return *ptr;
#endif
}

// x / y and sqrt(x) with the hardware approximations (<= 2 ulp; no IEEE fix-up sequence).
__device__ inline float fast_divide(float x, float y) { return __fdividef(x, y); }
__device__ inline float fast_sqrt(float x) {
#if defined(PARITY_GPU_HIP)
  return __fsqrt_rn(x);
#else
  float r;
  asm("sqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
#endif
}

// Orders shared-memory accesses among the lanes of one warp (lanes are not lockstep on NVIDIA
// since Volta; a wavefront barrier on AMD).
__device__ inline void sync_lanes_of_warp() {
#if defined(PARITY_GPU_HIP)
  __builtin_amdgcn_wave_barrier();
#else
  __syncwarp();
#endif
}

// IEEE binary16 <-> binary32 with the hardware conversion instructions (round to nearest even),
// on 16-bit patterns so no vendor half header is needed. A software conversion cost ~12
// instructions per element and made the fp16 TBE forward instruction-bound.
#if defined(PARITY_GPU_HIP)
__device__ inline float device_fp16_bits_to_float(std::uint16_t bits) {
  _Float16 value;
  __builtin_memcpy(&value, &bits, sizeof(value));
  return static_cast<float>(value);
}
__device__ inline std::uint16_t device_float_to_fp16_bits(float value) {
  const auto half = static_cast<_Float16>(value);
  std::uint16_t bits;
  __builtin_memcpy(&bits, &half, sizeof(bits));
  return bits;
}
#else
__device__ inline float device_fp16_bits_to_float(std::uint16_t bits) {
  float value;
  asm("cvt.f32.f16 %0, %1;" : "=f"(value) : "h"(bits));
  return value;
}
__device__ inline std::uint16_t device_float_to_fp16_bits(float value) {
  std::uint16_t bits;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(bits) : "f"(value));
  return bits;
}
#endif

}  // namespace parity::gpu_device

// Host runtime names, one spelling for both vendors (launch.cu files use these).
#if defined(PARITY_GPU_HIP)
#define gpuError_t hipError_t
#define gpuSuccess hipSuccess
#define gpuStream_t hipStream_t
#define gpuGetLastError hipGetLastError
#define gpuGetErrorString hipGetErrorString
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuFuncSetAttribute hipFuncSetAttribute
#define gpuFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define gpuDeviceGetAttribute hipDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define gpuGetDevice hipGetDevice
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor hipOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuHostAllocMapped(pointer, bytes) hipHostMalloc(pointer, bytes, hipHostMallocMapped)
#define gpuHostGetDevicePointer hipHostGetDevicePointer
#define gpuFreeHost hipHostFree
#else
#define gpuError_t cudaError_t
#define gpuSuccess cudaSuccess
#define gpuStream_t cudaStream_t
#define gpuGetLastError cudaGetLastError
#define gpuGetErrorString cudaGetErrorString
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuFuncSetAttribute cudaFuncSetAttribute
#define gpuFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define gpuDeviceGetAttribute cudaDeviceGetAttribute
#define gpuDevAttrMultiProcessorCount cudaDevAttrMultiProcessorCount
#define gpuGetDevice cudaGetDevice
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
#define gpuHostAllocMapped(pointer, bytes) cudaHostAlloc(pointer, bytes, cudaHostAllocMapped)
#define gpuHostGetDevicePointer cudaHostGetDevicePointer
#define gpuFreeHost cudaFreeHost
#endif

// Turns a runtime error into a Status naming the call, the error string, file and line.
#define PARITY_GPU_TRY(call)                                                                  \
  do {                                                                                        \
    const gpuError_t parity_gpu_error_ = (call);                                              \
    if (parity_gpu_error_ != gpuSuccess) {                                                    \
      return ::parity::device_error(#call, " failed: ", gpuGetErrorString(parity_gpu_error_), \
                                    " (", __FILE__, ":", __LINE__, ")");                      \
    }                                                                                         \
  } while (0)

// After every launch: a bad configuration shows up here, not at the next unrelated call.
#define PARITY_GPU_CHECK_LAUNCH(kernel_name) PARITY_GPU_TRY(gpuGetLastError())
