// The plain causal mask (self-attention, causal, no window, no contextual prefix; num_targets
// allowed) in closed form, for the attention kernels' partial tiles: with position ids
// id(p) = min(p, max_ids) under targets (p without), (i, j) is valid when i < len_q, j < len_kv
// and (i == j or id(i) > id(j)) (mask.cuh), and id(i) > id(j) reduces to j < min(i, max_ids)
// (j < i without targets). So a q row needs two constants and each pair two compares, where the
// general rule maps both positions to ids per pair. Compiled for the host as well as the device:
// tests/unit/attention_plain_causal_mask_test.cpp checks the forms against the id rule.
// No CUDA or HIP types: the host compiler sees plain C++.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PARITY_ATTENTION_MASK_HOST_DEVICE __host__ __device__
#else
#define PARITY_ATTENTION_MASK_HOST_DEVICE
#endif

namespace parity::gpu_device::attention {

// Lengths of one sequence's plain causal mask (max_ids as in mask.cuh: len_q - num_targets).
struct PlainCausalLengths {
  int len_q = 0;
  int len_kv = 0;
  bool has_targets = false;
  int max_ids = 0;
};

// Row i sees columns [0, below) and column self (-1: none).
struct CausalRowColumns {
  int below = 0;
  int self = -1;
};

PARITY_ATTENTION_MASK_HOST_DEVICE constexpr CausalRowColumns causal_row_columns(
    const PlainCausalLengths& m, int i) {
  CausalRowColumns r;
  if (i < 0 || i >= m.len_q) return r;
  int below = i;
  if (m.has_targets && m.max_ids < below) below = m.max_ids;
  if (m.len_kv < below) below = m.len_kv;
  r.below = below < 0 ? 0 : below;
  r.self = i < m.len_kv ? i : -1;
  return r;
}

// The transposed form (backward: a thread holds kv rows): column j is seen by the q rows
// [j, end) (end <= j: none). A non-target column (j < max_ids) is seen by every later row, a
// target column only by itself.
PARITY_ATTENTION_MASK_HOST_DEVICE constexpr int causal_column_seen_end(const PlainCausalLengths& m,
                                                                       int j) {
  if (j < 0 || j >= m.len_kv || j >= m.len_q) return j;
  if (m.has_targets && j >= m.max_ids) return j + 1;
  return m.len_q;
}

}  // namespace parity::gpu_device::attention
