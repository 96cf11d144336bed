// Kernel parameters of the jagged attention kernels (plain data, passed by value) and the
// per-block sequence lookup shared by the forward and backward kernels.
#pragma once

#include <cstdint>

#include "backends/gpu/attention/forward_schedule.hpp"
#include "backends/gpu/attention/mask.cuh"
#include "backends/gpu/attention/tensor_core.cuh"

namespace parity::gpu_device::attention {

// kPointwise: HSTU and GDPA, out = sum_j act(alpha s_ij) v_j / N. kSoftmax: jagged flash attention.
enum class Mode : int { kPointwise = 0, kSoftmax = 1 };

inline constexpr int kThreads = 128;  // 4 warps of 32 lanes (2 wavefronts of 64 on AMD)
inline constexpr int kTileRows =
    64;  // q rows per forward block tile, kv rows per backward block tile
inline constexpr int kTileCols = 64;  // kv rows per forward step, q rows per backward step
inline constexpr int kRows128 = 128;         // q rows per block of the 128-row forward
inline constexpr int kRows128Threads = 128;  // its 4 mma groups of 32 lanes
inline constexpr int kWgmmaRows = 128;       // q rows per block of the wgmma forward (sm_90a)
inline constexpr int kWgmmaThreads = 256;    // its two warpgroups
inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.69314718055994531f;

struct AttentionParams {
  const std::uint16_t* q = nullptr;  // [total_q, heads, dim_qk]
  const std::uint16_t* k = nullptr;  // [total_kv, heads, dim_qk]
  const std::uint16_t* v = nullptr;  // [total_kv, heads, dim_v]
  const std::int64_t* q_offsets = nullptr;
  const std::int64_t* kv_offsets = nullptr;
  const std::int32_t* num_targets = nullptr;  // null: no targets
  std::int64_t batch = 0;
  int heads = 0;
  int grid_tiles =
      1;  // tiles of one (sequence, head) that run in parallel; a block strides by this
  // Forward grid order (forward_schedule.hpp, forward_grid_slot): false, block b takes
  // (sequence, head) b % (batch*heads) and tile slot b / (batch*heads); true, the slots of one
  // (sequence, head) are adjacent (slot b % grid_tiles, (sequence, head) b / grid_tiles), so the
  // blocks resident together read the same K and V (L2 hits) instead of one sequence each.
  bool q_tiles_fastest = false;
  int max_seq_len = 0;    // N
  bool truncate = false;  // softmax: sequences truncated at N
  bool causal = true;
  bool cross = false;
  int contextual = 0;
  int window = 0;
  int min_full = 0;
  Activation activation = Activation::kSilu;
  float alpha = 0;            // score scale
  float inv_max_seq_len = 0;  // 1/N (pointwise modes)

  // forward outputs
  std::uint16_t* out = nullptr;  // [total_q, heads, dim_v]
  float* lse = nullptr;          // [total_q, heads] (softmax)

  // backward inputs and outputs
  const std::uint16_t* grad_out = nullptr;  // [total_q, heads, dim_v]
  float* row_terms = nullptr;     // softmax: [heads][total_q] lse*log2e, then [heads][total_q] dO.O
  float* grad_q_accum = nullptr;  // [total_q, heads, dim_qk] fp32, zeroed before the backward
  int* grad_q_counters = nullptr;  // [batch x heads] dQ arrivals (backward_grad_q_fused.cuh)
  std::uint16_t* grad_q = nullptr;
  std::uint16_t* grad_k = nullptr;
  std::uint16_t* grad_v = nullptr;
  bool deterministic = false;  // one block per (sequence, head) walks its kv tiles in order
  std::int64_t total_q = 0;
};

// The sequence and head a block works on, its row ranges and mask.
struct BlockSequence {
  std::int64_t q_begin = 0;
  std::int64_t kv_begin = 0;
  int raw_len_q = 0;  // rows owned in the tensors (outputs past the truncation are zero)
  int raw_len_kv = 0;
  int head = 0;
  SequenceMask mask;
};

// The sequence and head of (sequence, head) index `sequence_head` (= b * heads + h).
__device__ inline BlockSequence block_sequence(const AttentionParams& p,
                                               std::int64_t sequence_head) {
  BlockSequence s;
  const std::int64_t b = sequence_head / p.heads;
  s.head = static_cast<int>(sequence_head % p.heads);
  s.q_begin = p.q_offsets[b];
  s.raw_len_q = static_cast<int>(p.q_offsets[b + 1] - s.q_begin);
  const std::int64_t* kv_offsets = p.cross ? p.kv_offsets : p.q_offsets;
  s.kv_begin = kv_offsets[b];
  s.raw_len_kv = static_cast<int>(kv_offsets[b + 1] - s.kv_begin);
  const int len_q = p.truncate ? min(s.raw_len_q, p.max_seq_len) : s.raw_len_q;
  const int len_kv = p.truncate ? min(s.raw_len_kv, p.max_seq_len) : s.raw_len_kv;
  const int targets = p.num_targets != nullptr ? p.num_targets[b] : 0;
  s.mask = SequenceMask::make(len_q, len_kv, p.num_targets != nullptr, targets, p.contextual,
                              p.window, p.min_full, p.causal, p.cross);
  return s;
}

// What a forward block works on: its (sequence, head), its tile slot (the grid order:
// AttentionParams::q_tiles_fastest), and the first q, k, v rows of that head (row strides heads*d).
template <int kDimQk, int kDimV>
struct ForwardBlock {
  BlockSequence seq;
  int slot = 0;
  std::int64_t qk_stride = 0;
  std::int64_t v_stride = 0;
  const std::uint16_t* q_base = nullptr;
  const std::uint16_t* k_base = nullptr;
  const std::uint16_t* v_base = nullptr;

  __device__ explicit ForwardBlock(const AttentionParams& p) {
    const ForwardSlot s = forward_grid_slot(static_cast<std::int64_t>(blockIdx.x),
                                            p.batch * p.heads, p.grid_tiles, p.q_tiles_fastest);
    seq = block_sequence(p, s.sequence_head);
    slot = s.slot;
    qk_stride = static_cast<std::int64_t>(p.heads) * kDimQk;
    v_stride = static_cast<std::int64_t>(p.heads) * kDimV;
    q_base = p.q + seq.q_begin * qk_stride + seq.head * kDimQk;
    k_base = p.k + seq.kv_begin * qk_stride + seq.head * kDimQk;
    v_base = p.v + seq.kv_begin * v_stride + seq.head * kDimV;
  }
};

}  // namespace parity::gpu_device::attention
