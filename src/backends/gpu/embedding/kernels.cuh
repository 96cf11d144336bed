// Table-batched embedding kernels, one source for CUDA and HIP (lane count kWarpSize = 32 or 64).
//
// Legend: F features, B batch, bag = f*B + b, N indices, D dim of a feature's table, "vec" = 4
// consecutive elements (16 B in fp32, 8 B in fp16/bf16); a lane owns vecs lane, lane+G, ...
//
// Forward (group per bag): a group of G lanes (G = kWarpSize, /2 or /4 for narrow rows, so
// several bags share a warp) walks its bag: each lane loads one index (and weight) of a chunk of G,
// indices are broadcast by shuffles, and every lane loads its vecs of kUnroll rows before adding
// any (several rows in flight). Accumulation in fp32 registers; mean scales by 1/L (L = 0 -> 0).
//
// Backward: keys (global_row << low_bits | bag or position) sorted by the row bits (stable) group equal
// rows; the sorted array is cut into fixed chunks of C positions, one warp per chunk. A run that
// lies inside one chunk is summed in registers and updated right there (one update per unique
// row). A run crossing chunk edges leaves one partial per chunk in the workspace (head slot: the
// piece continuing a run from the previous chunk; tail slot: a run starting here and going on);
// a second kernel gives the run's start chunk one block that adds its pieces in chunk order and
// applies the update. No global atomics; the order of every sum depends only on the sorted input
// and C, so results are bitwise identical across runs and grid sizes.
//
// Bounds check: threads map flatly onto offsets and indices (no idle lanes on short bags);
// a position's feature comes from a binary search over the F+1 feature-boundary offsets staged
// in shared memory; counts and the lowest bad position are tree-reduced per block into that
// block's slot (no global atomics at all); the host sums the slots after the next sync.
#pragma once

#include <type_traits>

#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device {

// ---- element types (16-bit weights are kept as raw bits: no vendor half headers needed) ----
struct F32Tag {
  using Storage = float;
};
struct F16Tag {
  using Storage = std::uint16_t;
};
struct BF16Tag {
  using Storage = std::uint16_t;
};

__device__ inline float bits_to_float(std::uint32_t u) { return __uint_as_float(u); }

__device__ inline float bf16_to_float(std::uint16_t bits) { return bits_to_float(std::uint32_t{bits} << 16); }

__device__ inline std::uint16_t float_to_bf16(float value) {
  std::uint32_t u = __float_as_uint(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);  // NaN stays NaN
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
  return static_cast<std::uint16_t>(u >> 16);
}

__device__ inline float fp16_to_float(std::uint16_t h) { return device_fp16_bits_to_float(h); }
__device__ inline std::uint16_t float_to_fp16(float value) { return device_float_to_fp16_bits(value); }

__device__ inline float4 load_vec(const float* p) { return *reinterpret_cast<const float4*>(p); }

// A vec as stored: float4 (fp32) or four 16-bit values in a uint2. Loading raw and converting later
// lets a lane issue all of its rows' loads before the first conversion waits on one.
template <typename Tag>
struct RawVecOf {
  using Type = uint2;
};
template <>
struct RawVecOf<F32Tag> {
  using Type = float4;
};
template <typename Tag>
using RawVec = typename RawVecOf<Tag>::Type;

template <typename Tag>
__device__ inline RawVec<Tag> zero_raw_vec() {
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    return make_float4(0.f, 0.f, 0.f, 0.f);
  } else {
    return make_uint2(0u, 0u);  // +0 in fp16 and bf16
  }
}

template <typename Tag>
__device__ inline RawVec<Tag> load_raw_vec(const typename Tag::Storage* p) {
  return *reinterpret_cast<const RawVec<Tag>*>(p);
}

template <typename Tag>
__device__ inline float4 raw_to_float4(RawVec<Tag> raw) {
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    return raw;
  } else {
    const auto lo0 = static_cast<std::uint16_t>(raw.x & 0xffffu), hi0 = static_cast<std::uint16_t>(raw.x >> 16);
    const auto lo1 = static_cast<std::uint16_t>(raw.y & 0xffffu), hi1 = static_cast<std::uint16_t>(raw.y >> 16);
    if constexpr (std::is_same_v<Tag, F16Tag>) {
      return make_float4(fp16_to_float(lo0), fp16_to_float(hi0), fp16_to_float(lo1), fp16_to_float(hi1));
    } else {
      return make_float4(bf16_to_float(lo0), bf16_to_float(hi0), bf16_to_float(lo1), bf16_to_float(hi1));
    }
  }
}

template <typename Tag>
__device__ inline float4 load_row_vec(const typename Tag::Storage* p) {
  return raw_to_float4<Tag>(load_raw_vec<Tag>(p));
}

template <typename Tag>
__device__ inline void store_row_vec(typename Tag::Storage* p, float4 v) {
  if constexpr (std::is_same_v<Tag, F32Tag>) {
    *reinterpret_cast<float4*>(p) = v;
  } else {
    auto cvt = [](float x) -> std::uint32_t {
      if constexpr (std::is_same_v<Tag, F16Tag>) {
        return float_to_fp16(x);
      } else {
        return float_to_bf16(x);
      }
    };
    uint2 raw;
    raw.x = cvt(v.x) | (cvt(v.y) << 16);
    raw.y = cvt(v.z) | (cvt(v.w) << 16);
    *reinterpret_cast<uint2*>(p) = raw;
  }
}

// Output dtype is a run-time choice (one branch per bag, not per element).
enum class OutKind : int { kF32 = 0, kF16 = 1, kBF16 = 2 };

// v as four 16-bit values of `kind` (fp16 or bf16) in 8 bytes.
__device__ inline uint2 packed_16_bit_vec(OutKind kind, float4 v) {
  auto cvt = [kind](float x) -> std::uint32_t { return kind == OutKind::kF16 ? float_to_fp16(x) : float_to_bf16(x); };
  return make_uint2(cvt(v.x) | (cvt(v.y) << 16), cvt(v.z) | (cvt(v.w) << 16));
}

// kStreaming: a store of data this kernel never reads again (st.global.cs on CUDA: evict-first),
// so the output stream does not push the rows still to be gathered out of L2 (the warp tiles').
template <bool kStreaming, typename T>
__device__ inline void store_output(T* ptr, T value) {
#if defined(PARITY_GPU_CUDA)
  if constexpr (kStreaming) {
    __stcs(ptr, value);
    return;
  }
#endif
  *ptr = value;
}

// Two vectors of a 16-bit output (kind fp16 or bf16) as one 16-byte store where they are whole
// (elements_left >= 8) and the address is on 16 bytes: a 16-byte piece of 16-bit weights pooled to
// a 16-bit output otherwise went out as two 8-byte stores (run 81: one-hot bf16 D=512 rows in the
// wide one-hot tiles 159 -> 130 us, fp16 D=128 234 -> 187 us). Returns false where it did not store.
template <bool kStreaming>
__device__ inline bool store_16_bit_pair(void* out, std::int64_t element, OutKind kind, float4 first,
                                         float4 second, int elements_left) {
  auto* target = static_cast<std::uint16_t*>(out) + element;
  if (kind == OutKind::kF32 || elements_left < 8 || reinterpret_cast<std::uintptr_t>(target) % 16 != 0) return false;
  const uint2 low = packed_16_bit_vec(kind, first), high = packed_16_bit_vec(kind, second);
  store_output<kStreaming>(reinterpret_cast<uint4*>(target), make_uint4(low.x, low.y, high.x, high.y));
  return true;
}

template <bool kStreaming = false>
__device__ inline void store_out_vec(void* out, std::int64_t element, OutKind kind, float4 v) {
  if (kind == OutKind::kF32) {
    store_output<kStreaming>(reinterpret_cast<float4*>(static_cast<float*>(out) + element), v);
  } else {
    store_output<kStreaming>(reinterpret_cast<uint2*>(static_cast<std::uint16_t*>(out) + element),
                             packed_16_bit_vec(kind, v));
  }
}

__device__ inline void fma_vec(float4& acc, float w, float4 v) {
  acc.x += w * v.x;
  acc.y += w * v.y;
  acc.z += w * v.z;
  acc.w += w * v.w;
}

// Per-feature arrays of the layout (int64 each, F entries; out_col has F+1) and per-table arrays
// (T entries; table_row_base has T+1) in one device buffer.
struct LayoutView {
  const std::int64_t* feature_weights_offset;
  const std::int64_t* feature_row_base;
  const std::int64_t* feature_rows;
  const std::int64_t* feature_dim;
  const std::int64_t* feature_out_col;
  const std::int64_t* table_row_base;
  const std::int64_t* table_weights_offset;
  const std::int64_t* table_dim;
  // Elements from one row to the next (dim unless the layout pads rows: TableSpec::row_stride);
  // every row address is offset + row * stride, every row length dim.
  const std::int64_t* feature_row_stride;
  const std::int64_t* table_row_stride;
  int num_features;
  int num_tables;
};

enum class Pool : int { kSum = 0, kMean = 1, kNone = 2 };

template <typename IndexT>
struct ForwardParams {
  LayoutView layout;
  const void* weights;
  const IndexT* indices;
  const IndexT* offsets;
  const float* per_sample_weights;  // may be null
  void* output;
  OutKind out_kind;
  Pool pooling;
  std::int64_t batch_size;
  std::int64_t num_bags;     // the launch's bags end here (the group-per-bag kernel: bags [bag_begin, num_bags))
  std::int64_t num_indices;  // host-side dispatch only (mean bag length)
  std::int64_t output_cols;
  // First bag of the launch: a run of features of one row-width class (group-per-bag kernel
  // only; every other forward kernel needs 0).
  std::int64_t bag_begin;
  // The warp tiles' bag order: feature-major (0) or sample-major (1); ForwardOptions::tile_order.
  int sample_major_tiles;
};

inline constexpr int kForwardBlockThreads = 256;

}  // namespace parity::gpu_device
