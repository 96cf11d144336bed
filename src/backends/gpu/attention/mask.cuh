// The jagged attention masks of one sequence (docs/attention.md; research/recsys.md sec. 2.2) and
// the pointwise activations, for the attention kernels.
//
// Positions map to ids: a contextual prefix of c rows all gets id 0 and position p >= c gets
// p - c + 1; the last num_targets rows all get the first target's id (targets never see each
// other). With max_ids = len - max(c - 1, 0) - num_targets, (i, j) is valid when
//   (i == j or d > 0)  with d = id_i - id_j (causal) or |id_i - id_j| (not causal),
//   and, with a window W > 0, d <= W or (min_full > 0 and id_i >= max_ids - min_full),
//   or, with a contextual prefix, id_i == 0 and id_j < max_ids.
// Rows and columns at or past the (truncated) lengths are never valid. Cross attention has no
// mask beyond the lengths.
#pragma once

#include <cmath>
#include <cstdint>

#include "backends/gpu/attention/plain_causal_mask.hpp"
#include "backends/gpu/common/portability.cuh"

namespace parity::gpu_device::attention {

// Tile classes: no valid pair (skipped), every pair valid (no mask), or some (mask per element).
enum class TileClass : int { kEmpty = 0, kFull = 1, kPartial = 2 };

struct SequenceMask {
  int len_q = 0;   // q rows of this sequence after truncation
  int len_kv = 0;  // kv rows after truncation
  int contextual = 0;
  int window = 0;  // max_attn_len; 0 = none
  int min_full = 0;
  int max_ids = 0;
  bool causal = true;
  bool cross = false;
  bool has_targets = false;  // ids are clamped to max_ids only with targets (as the reference does)

  __device__ static SequenceMask make(int len_q, int len_kv, bool has_targets, int num_targets,
                                      int contextual, int window, int min_full, bool causal,
                                      bool cross) {
    SequenceMask m;
    m.has_targets = has_targets;
    m.len_q = len_q;
    m.len_kv = len_kv;
    m.contextual = contextual;
    m.window = window;
    m.min_full = min_full;
    m.causal = causal;
    m.cross = cross;
    m.max_ids = len_q - (contextual > 0 ? contextual - 1 : 0) - num_targets;
    return m;
  }

  __device__ int id(int position) const {
    int value = contextual > 0 ? max(position - contextual + 1, 0) : position;
    return has_targets ? min(value, max_ids) : value;
  }

  // Causal self-attention without a window or contextual prefix: partial tiles then take the
  // closed form of plain_causal_mask.hpp (two compares per pair) instead of valid().
  __device__ bool plain_causal() const {
    return causal && !cross && window == 0 && contextual == 0;
  }
  __device__ PlainCausalLengths plain_causal_lengths() const {
    return PlainCausalLengths{len_q, len_kv, has_targets, max_ids};
  }

  __device__ bool valid(int i, int j) const {
    if (i >= len_q || j >= len_kv) return false;
    if (cross) return true;
    const int row_id = id(i);
    const int col_id = id(j);
    int distance = row_id - col_id;
    if (!causal && distance < 0) distance = -distance;
    bool is_valid = i == j || distance > 0;
    if (window > 0)
      is_valid = is_valid && (distance <= window || (min_full > 0 && row_id >= max_ids - min_full));
    if (contextual > 0) is_valid = is_valid || (row_id == 0 && col_id < max_ids);
    return is_valid;
  }

  // Rows [q_begin, q_end) x columns [kv_begin, kv_end) (tile bounds, possibly past the lengths).
  // kEmpty and kFull are exact claims; kPartial may be returned for either when unsure.
  __device__ TileClass classify(int q_begin, int q_end, int kv_begin, int kv_end) const {
    const int q_last = min(q_end, len_q) - 1;
    const int kv_last = min(kv_end, len_kv) - 1;
    if (q_last < q_begin || kv_last < kv_begin) return TileClass::kEmpty;
    const bool clipped = q_end > len_q || kv_end > len_kv;
    if (cross) return clipped ? TileClass::kPartial : TileClass::kFull;
    const int row_lo = id(q_begin), row_hi = id(q_last);
    const int col_lo = id(kv_begin), col_hi = id(kv_last);
    const bool some_full_rows = window > 0 && min_full > 0 && row_hi >= max_ids - min_full;
    const bool all_full_rows = window > 0 && min_full > 0 && row_lo >= max_ids - min_full;
    // Could any pair be valid? (ids are non-decreasing in position.)
    bool any = q_begin <= kv_last && kv_begin <= q_last;  // a diagonal element
    any = any || (contextual > 0 && row_lo == 0 && col_lo < max_ids);
    if (causal) {
      any =
          any || (row_hi > col_lo && (window == 0 || row_lo - col_hi <= window || some_full_rows));
    } else {
      const int min_distance = max(0, max(row_lo - col_hi, col_lo - row_hi));
      any = any || ((row_hi > col_lo || col_hi > row_lo) &&
                    (window == 0 || min_distance <= window || some_full_rows));
    }
    if (!any) return TileClass::kEmpty;
    if (clipped) return TileClass::kPartial;
    // Is every pair valid?
    bool all;
    if (causal) {
      all = row_lo > col_hi && (window == 0 || row_hi - col_lo <= window || all_full_rows);
    } else {
      const int max_distance = max(row_hi - col_lo, col_hi - row_lo);
      all = (row_lo > col_hi || col_lo > row_hi) &&
            (window == 0 || max_distance <= window || all_full_rows);
    }
    all = all || (contextual > 0 && row_hi == 0 && col_hi < max_ids);
    return all ? TileClass::kFull : TileClass::kPartial;
  }
};

// ---- pointwise activations (HSTU: SiLU; GDPA: any) and their derivatives ----
enum class Activation : int { kSilu = 0, kGelu = 1, kRelu = 2, kSigmoid = 3 };

__device__ inline float sigmoid(float x) { return fast_divide(1.0f, 1.0f + __expf(-x)); }

template <Activation A>
__device__ inline float activation_value(float x) {
  if constexpr (A == Activation::kSilu) return x * sigmoid(x);
  if constexpr (A == Activation::kGelu) return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
  if constexpr (A == Activation::kRelu) return x > 0.0f ? x : 0.0f;
  if constexpr (A == Activation::kSigmoid) return sigmoid(x);
}

template <Activation A>
__device__ inline float activation_derivative(float x) {
  if constexpr (A == Activation::kSilu) {
    const float s = sigmoid(x);
    return s * (1.0f + x * (1.0f - s));
  }
  if constexpr (A == Activation::kGelu) {
    return 0.5f * (1.0f + erff(x * 0.70710678118654752f)) +
           x * 0.39894228040143268f * __expf(-0.5f * x * x);
  }
  if constexpr (A == Activation::kRelu) return x > 0.0f ? 1.0f : 0.0f;
  if constexpr (A == Activation::kSigmoid) {
    const float s = sigmoid(x);
    return s * (1.0f - s);
  }
}

// x := act(scale x) over a register tile; with `derivative`, also derivative := act'(scale x).
// The activation is chosen once per tile, outside the element loops.
template <Activation A, int kN>
__device__ inline void activate_tile(float (&x)[kN][4], float scale, float (*derivative)[4]) {
#pragma unroll
  for (int n = 0; n < kN; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float scaled = x[n][e] * scale;
      if (derivative != nullptr) derivative[n][e] = activation_derivative<A>(scaled);
      x[n][e] = activation_value<A>(scaled);
    }
  }
}

template <int kN>
__device__ inline void activate_tile(Activation activation, float (&x)[kN][4], float scale,
                                     float (*derivative)[4] = nullptr) {
  switch (activation) {
    case Activation::kSilu:
      return activate_tile<Activation::kSilu>(x, scale, derivative);
    case Activation::kGelu:
      return activate_tile<Activation::kGelu>(x, scale, derivative);
    case Activation::kRelu:
      return activate_tile<Activation::kRelu>(x, scale, derivative);
    case Activation::kSigmoid:
      return activate_tile<Activation::kSigmoid>(x, scale, derivative);
  }
}

}  // namespace parity::gpu_device::attention
