// GPU entry points of the jagged attention op (HSTU, softmax / jagged flash attention, GDPA),
// host-only: no CUDA/HIP types. Pointers in the args are device pointers (offsets and
// num_targets too); `stream` is the native stream as void* (nullptr = default stream). The
// kernels are described in docs/attention.md ("GPU kernels") and src/backends/gpu/attention/*.cuh.
#pragma once

#include <cstddef>

#include "parity/attention/attention.hpp"
#include "parity/core/status.hpp"

namespace parity::attention::gpu {

// The forward kernels (docs/attention.md, "GPU kernels"): kRows64 (forward_kernel.cuh, portable,
// every head dim) and kRows128 (forward_rows128_kernel.cuh: 128 q rows per block, 32 per mma
// group; NVIDIA, d_qk and d_v in {64, 128}) and kWgmma (forward_wgmma_kernel.cuh: 128 q rows per
// block on Hopper warpgroup MMA; sm_90a devices and builds only, d_qk = d_v in {64, 128}) and
// kWgmmaWs (forward_wgmma_ws_kernel.cuh: the same math, warp-specialized: a producer warpgroup
// and two ping-ponging consumers; same limits) and kWgmmaWs128 (the same with 128-key S tiles),
// kWgmmaTma and kWgmmaTma64 (the same with TMA loads, 128- and 64-key S tiles), and
// kWgmmaTmaSeq (kWgmmaTma's kernel with one block per (sequence, head) walking all its q tiles:
// the producer streams the next tile's K and V while the consumers finish the current one), and
// kWgmmaTmaTileMajor (kWgmmaTma's kernel, one block per q tile, the q tiles of one (sequence,
// head) adjacent in the grid, heaviest first: the blocks resident together share K and V in L2),
// and kWgmmaTmaPersistent (kWgmmaTma's kernel on a resident grid, a block per SM, each walking
// its share of every q tile in that order: forward_wgmma_ws_kernel.cuh, QTile), and
// kWgmmaTmaPairWalk (kWgmmaTma's kernel, a few adjacent blocks per (sequence, head), each walking
// every k-th q tile, k sized so that the resident pairs' K and V fit in L2: pair_walk_slots).
enum class ForwardKernel : int {
  kRows64 = 0,
  kRows128 = 1,
  kWgmma = 2,
  kWgmmaWs = 3,
  kWgmmaWs128 = 4,
  kWgmmaTma = 5,
  kWgmmaTma64 = 6,
  kWgmmaTmaSeq = 7,
  kWgmmaTmaTileMajor = 8,
  kWgmmaTmaPersistent = 9,
  kWgmmaTmaPairWalk = 10,
};

// ok, or kUnsupported with the reason (dtype, head dims, masks with cross attention).
Status can_implement(const AttentionProblem& problem);
// The forward kernel's own limits on top of can_implement.
Status can_implement_forward(const AttentionProblem& problem, ForwardKernel kernel);
// The backward kernels (docs/attention.md): kMmaSync (backward_kernel.cuh, portable, 64 kv rows
// per block, atomic or deterministic dQ) and kWgmma (backward_wgmma_kernel.cuh: 128 kv rows per
// block on Hopper warpgroup MMA; sm_90a devices and builds only, d_qk = d_v in {64, 128}; atomic
// or deterministic dQ) and kWgmmaRing (the same kernel with its mbarrier-ring schedule: the two
// warpgroups are not held in lockstep; same limits, no deterministic mode) and kWgmmaWs
// (backward_wgmma_ws_kernel.cuh: the same math warp-specialized, a TMA producer warpgroup feeding
// two consumers; same limits, atomic or deterministic dQ) and kWgmmaWsTmaReduce (the same with dQ
// added by bulk tensor reduce-adds from shared memory) and kWgmmaWsTmaReducePairWalk (that kernel
// on the pair walk's grid: a few adjacent blocks per (sequence, head), each walking every k-th kv
// tile, so the q / dO tiles the resident pairs re-read stay in L2; the deterministic mode walks
// with one block per pair as kWgmmaWsTmaReduce does) and kWgmmaWsTmaReducePairWalkTanh (the pair
// walk with SiLU / sigmoid and their derivatives from one tanh.approx per score, not ex2 + rcp)
// and kWgmmaWsTmaReducePairWalkOverlapTanh (that one with less idle time between a block's kv
// tiles: the next kv tile's K and V prefetched into L2, no dQ completion wait between kv tiles
// outside the deterministic mode, dK / dV through shared memory with coalesced stores) and
// kWgmmaWsTmaReducePairWalkOverlapTanhFusedGradQ (that one converting dQ to 16 bits in the kernel:
// the block whose reduce-adds complete a q tile, counted against the tile's arrivals, writes it;
// no separate conversion pass).
enum class BackwardKernel : int {
  kMmaSync = 0,
  kWgmma = 1,
  kWgmmaRing = 2,
  kWgmmaWs = 3,
  kWgmmaWsTmaReduce = 4,
  kWgmmaWsTmaReducePairWalk = 5,
  kWgmmaWsTmaReducePairWalkTanh = 6,
  kWgmmaWsTmaReducePairWalkOverlapTanh = 7,
  kWgmmaWsTmaReducePairWalkOverlapTanhFusedGradQ = 8,
};

// The backward's extra limits on top of can_implement (head dims whose dK/dV fit in registers,
// and the kernel's own).
Status can_implement_backward(const AttentionProblem& problem,
                              BackwardKernel kernel = BackwardKernel::kMmaSync);

// fp32 dQ accumulator and the softmax row terms.
std::size_t backward_workspace_bytes(const AttentionProblem& problem);

Status forward(const AttentionProblem& problem, const AttentionForwardArgs& args, void* stream,
               ForwardKernel kernel = ForwardKernel::kRows64);
// `workspace` holds backward_workspace_bytes(problem) bytes of device memory.
Status backward(const AttentionProblem& problem, const AttentionBackwardArgs& args, void* workspace,
                void* stream, BackwardKernel kernel = BackwardKernel::kMmaSync);

}  // namespace parity::attention::gpu
