// The per-element-type launch functions (defined in launch_kernels.cuh, instantiated once per
// type by forward_<type>.cu / backward_<type>.cu) and the head dimensions that have kernels.
#pragma once

#include "backends/gpu/attention/params.cuh"
#include "parity/attention/attention.hpp"

namespace parity::attention::gpu::detail {

namespace kernels = parity::gpu_device::attention;
using kernels::AttentionParams;
using kernels::Elem16;

template <Elem16 E>
Status launch_forward_kernels(const AttentionProblem& problem, const AttentionParams& params,
                              gpuStream_t stream);
template <Elem16 E>
Status launch_forward_rows128_kernels(const AttentionProblem& problem,
                                      const AttentionParams& params, gpuStream_t stream);
// The wgmma forwards (launch_wgmma_kernels.cuh; one TU per kernel and element type,
// forward_wgmma*_<type>.cu).
enum class WgmmaForward {
  kRound2,  // forward_wgmma_kernel.cuh
  kWs64,    // forward_wgmma_ws_kernel.cuh, cp.async loads, 64-key S tiles
  kWs128,   // the same, 128-key S tiles
  kTma64,   // the same with TMA loads, 64-key S tiles
  kTma128,  // TMA loads, 128-key S tiles
  kTma128Persistent,  // the same, a resident grid walking every q tile (QTile, persistent)
  kTma128Ahead,       // kTma128 with the scores one tile ahead (accumulate_scores_ahead)
  kTma128PersistentAhead,  // both
};
template <Elem16 E, WgmmaForward kKernel>
Status launch_forward_wgmma(const AttentionProblem& problem, const AttentionParams& params,
                            gpuStream_t stream);
// ok when the current device is compute capability 9.0 and the loaded binary of the wgmma kernel
// is sm_90a code (not the plain sm_90 body, which compiles empty); else the reason.
Status wgmma_forward_runnable();
template <Elem16 E>
Status launch_backward_kernels(const AttentionProblem& problem, AttentionParams params,
                               gpuStream_t stream);
// The wgmma backward (backward_wgmma_kernel.cuh): sm_90a, d_qk = d_v in {64, 128}, atomics only;
// `ring`: its mbarrier-ring schedule.
template <Elem16 E>
Status launch_backward_wgmma_kernels(const AttentionProblem& problem, AttentionParams params,
                                     bool ring, gpuStream_t stream);

// (d_qk, d_v) pairs with kernels: equal dims 64, 128, 256 and the mixed pairs of 64 and 128. The
// backward keeps dK and dV of 16 rows per mma group in registers: 2 x 64 fp32 per lane at
// d = 128; d = 256 would spill.
inline bool forward_dims_supported(int dim_qk, int dim_v) {
  const auto small = [](int d) { return d == 64 || d == 128; };
  return (dim_qk == dim_v && dim_qk == 256) || (small(dim_qk) && small(dim_v));
}
// The 128-row forward keeps 32 rows x d_v fp32 per mma group in registers: d_v <= 128.
inline bool forward_rows128_dims_supported(int dim_qk, int dim_v) {
  return (dim_qk == 64 || dim_qk == 128) && (dim_v == 64 || dim_v == 128);
}
// The wgmma forward: d_qk = d_v (one tile layout for Q, K, V), 64 or 128 (64 x d fp32 per
// warpgroup thread set; 256 would not fit the registers).
inline bool forward_wgmma_dims_supported(int dim_qk, int dim_v) {
  return dim_qk == dim_v && (dim_qk == 64 || dim_qk == 128);
}
inline bool backward_dims_supported(int dim_qk, int dim_v) {
  return (dim_qk == 64 || dim_qk == 128) && (dim_v == 64 || dim_v == 128);
}
// The wgmma backward: one tile layout for Q, K, V, dO (d_qk = d_v); dK and dV of 64 kv rows x d
// fp32 per warpgroup fill the registers at d = 128.
inline bool backward_wgmma_dims_supported(int dim_qk, int dim_v) {
  return dim_qk == dim_v && (dim_qk == 64 || dim_qk == 128);
}

}  // namespace parity::attention::gpu::detail
