// Analytical GEMM cost models: predicted time of one candidate on one problem, from the hardware
// description and at most kNumModelScalars fitted scalars. Two back ends share one interface
// (PerformanceModel; make_model picks by DeviceParams::kind; design: docs/gemm_model.md):
//  - Hopper-class (NVIDIA): waves with last-wave fill, per-K-iteration max(compute, L2, DRAM) with
//    L2 reuse across the window of concurrently running tiles, TMA multicast across a cluster,
//    split-K partials plus a reduction kernel, launch and epilogue overheads, tile efficiency.
//  - Origami-class (AMD CDNA): cycle model after origami.md §2: MFMA latency table, per-XCD L2
//    hit rates from the tiles each XCD runs under WGM and the XCD mapping, MALL, HBM bandwidth
//    fraction in active CUs, wave quantisation, stream-K.
// Everything is a pure function of (DeviceParams, ModelScalars, problem, candidate): no timing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/problem.hpp"
#include "parity/hw/hardware_spec.hpp"

namespace parity::gemm {

enum class RunEpilogue : std::uint8_t;  // parity/gemm/gemm.hpp

enum class ModelKind : std::uint8_t { kHopper, kOrigami };

// What the models need from a HardwareSpec, in model units.
struct DeviceParams {
  std::string name;                    // catalogue name, "h200"
  ModelKind kind = ModelKind::kHopper;
  std::string arch;                    // "sm_90", "gfx942", "gfx950", or the catalogue's
  int num_sms = 132;                   // SMs or CUs
  int num_l2_domains = 1;              // XCDs on AMD (each with its own L2)
  double clock_ghz = 1.83;             // the clock the dense peaks assume
  double peak_bf16_flops_per_s = 989e12;
  double peak_fp16_flops_per_s = 989e12;
  double peak_tf32_flops_per_s = 494e12;
  double hbm_bytes_per_s = 4.8e12;
  double l2_bytes_per_domain = 60.0 * 1048576.0;
  double llc_bytes = 0.0;              // AMD MALL; 0 when there is none
  double smem_bytes_per_sm = 228.0 * 1024.0;
  // Clusters of 4 CTAs (one per SM) resident at once: a cluster must fit one GPC, so the SMs a GPC
  // has beyond a multiple of 4 stay idle. 0: not known for this part (the model assumes one
  // cluster's worth is lost). NVIDIA (Hopper model) only.
  int max_active_clusters_of_4 = 0;
  // AMD (Origami) constants; unused by the Hopper model.
  double l2_bw_tbps = 0.0;             // c1
  double mall_bw_tbps = 0.0;           // c2
  double hbm_model_bw_tbps = 0.0;      // c3
  double memory_clock_ghz = 1.3;       // Origami divides the MALL/HBM constants by this clock
  double mem_clock_ratio = 1.5;        // and the MALL one also by this ratio (origami.md §2.1)
  std::array<double, 3> bw_fraction_quadratic{0.0, 0.015, 0.0};  // q0, q1, q2 over active CUs
  double mi_latency_16_cycles = 16;    // bf16 MFMA 16x16 latency (cycles, before / parallel_mi)
  double mi_latency_32_cycles = 32;    // bf16 MFMA 32x32
  int mi_k_16 = 16;                    // K of the bf16 16x16 MFMA (16 on gfx942, 32 on gfx950)
  int mi_k_32 = 8;                     // K of the bf16 32x32 MFMA (8 on gfx942, 16 on gfx950)
};

// Derives DeviceParams from a catalogue entry. kUnsupported when a field the models need is 0.
Result<DeviceParams> device_params_from_spec(const hw::HardwareSpec& spec);

// The fitted scalars (all > 0). Names are stable keys of the calibration file.
inline constexpr int kNumModelScalars = 15;
struct ModelScalars {
  double mma_efficiency = 0.90;      // sustained fraction of the dense peak for a big tile
  double feed_intensity = 5.0;       // tile-efficiency knee: eta ~ I/(I+this), I=tm*tn/(tm+tn)
  double dram_efficiency = 0.90;     // sustained fraction of the HBM peak
  double l2_bandwidth_ratio = 2.6;   // L2->SM bandwidth as a multiple of sustained HBM
  double launch_us = 5.0;            // kernel launch + teardown seen by back-to-back timing
  double tile_overhead_us = 0.3;     // per wave: prologue latency and epilogue fixed cost
  double splitk_overhead_us = 1.0;   // the separate split-K reduction kernel's fixed cost
  double bw_saturation = 0.6;        // fraction of SMs needed to saturate HBM
  double cluster_efficiency = 1.0;  // compute efficiency factor of 2-CTA clusters (1x2, 2x1)
  // Clock headroom of a partial last wave: with a fraction f of the SMs busy the tensor cores run
  // up to (1 + this * (1 - f)) faster (power-limited boost; H200: 1980 MHz max vs ~1.7 loaded).
  double tail_boost = 0.2;
  // Cluster shape, measured on H200 (docs/gemm.md): a single CTA has no TMA multicast partner and
  // runs below a pair; a 4-CTA cluster must find four co-resident SMs in one GPC and stalls on
  // the slowest member. Both are compute factors relative to a plain CTA of the same tile.
  double single_cta_efficiency = 1.0;
  double cluster4_efficiency = 1.0;
  // Exposed epilogue of a cooperative schedule (both consumer warpgroups on one tile, so the
  // tile's epilogue cannot overlap the next tile's main loop), per tile, for a 128x128 output tile
  // of 2-byte elements; scaled by the output tile's bytes. Ping-pong schedules hide it.
  double epilogue_us = 0.4;
  // Sustained fraction of the tensor peak for kernels without TMA (operands aligned to < 16 bytes:
  // cp.async / register loads, no multicast, no clusters), for 4-byte or wider alignment; 2-byte
  // alignment (no cp.async, one element per load) runs at half of it.
  double legacy_efficiency = 0.25;
  // Kernels without TMA (mma.sync, cp.async or register loads) hide load latency only with work in
  // flight: with r co-resident CTAs of tm x tn an SM runs at W / (W + this x 128 x 128) of its
  // legacy rate, W = r tm tn accumulators. Half-saturation point, in 128x128 tiles.
  double legacy_latency_ctas = 1.0;
  // Per-variant compute efficiency (cuBLASLt custom options 0..7 are undocumented kernel
  // variants): a multiplier on the tile's sustained rate, fitted in closed form after the scalars
  // (geometric-mean residual per variant). Not part of the scalar array; 1 = no preference.
  std::array<double, 8> variant_efficiency{1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
};
std::array<double, kNumModelScalars> scalars_to_array(const ModelScalars& scalars);
ModelScalars scalars_from_array(const std::array<double, kNumModelScalars>& values);
std::string_view scalar_name(int index);
// Plausible range of each scalar (the calibrator clamps to it).
std::array<double, 2> scalar_bounds(int index);
// Defaults for a device (AMD devices keep the Origami constants' meaning: see docs/gemm.md).
ModelScalars default_scalars(const DeviceParams& device);

// Per-candidate constants that depend only on the problem class (dtype, layout, alignment), so the
// selector computes them once and each prediction for a new shape is a few dozen flops. The
// common part is what the selector's tie-break reads; each model keeps its own terms in its
// section (the other section stays default).
struct HopperTerms {
  int usable_sms = 0;                // SMs that can host this cluster shape at once
  int cluster_m = 1, cluster_n = 1;  // the grid is padded to whole clusters
  double inv_cluster_m = 1.0, inv_cluster_n = 1.0;
  // predict_top_us's coarse lower bound (no grid roundings): tiles >= max(cluster_m, M / tm) x
  // max(cluster_n, N / tn) x batch x split (a grid launches whole clusters), in waves of
  // usable_sms, each at least one K-loop (the last one boosted by its busy fraction) plus the
  // cooperative epilogue, and the fixed per-wave cost; the L2 -> SM time of every tile-iteration;
  // the split-K kernel's fixed cost and DRAM bytes per output element (0 without a split).
  double min_grid_m = 1.0, min_grid_n = 1.0;
  double splits = 1.0;
  double l2_us_per_iter = 0.0;  // L2 -> SM time of one tile's K-iteration
  // One K-iteration of a full wave: the 4-norm of compute and usable_sms x l2_us_per_iter.
  double full_wave_iter_us = 0.0;
  // The last wave's exposed store at the least bandwidth a wave gets (bw_saturation x SMs tiles'
  // share): one tile's output bytes x saturating SMs / DRAM bandwidth.
  double min_exposed_store_us = 0.0;
  double wave_fixed_us = 0.0;
  double split_fixed_us = 0.0;
  double reduce_bytes_per_output = 0.0;
  double exposed_epilogue_us = 0.0;   // per tile: cooperative schedules of TMA kernels only
  double pingpong_epilogue_us = 0.0;  // per tile: ping-pong TMA kernels, beyond one K-loop
  double compute_us_per_iter = 0.0;   // one K-iteration of one tile at sustained rate
  double a_bytes_per_row_iter = 0.0;  // tile_m * tile_k * a bytes: DRAM bytes per tile row / iter
  double b_bytes_per_col_iter = 0.0;  // tile_n * tile_k * b bytes: per tile column / iter
  double window_aspect = 1.0;         // sqrt(tile_n / tile_m): best raster window shape
  double full_wave_rows = 1.0;        // sqrt(positions of a full wave) * window_aspect
  double full_wave_splits = 1.0, full_wave_positions = 1.0;
  double full_wave_rows_used = 1.0, full_wave_cols_used = 1.0, full_wave_inv_bw_fraction = 1.0;
  double inv_tile_m = 1.0, inv_tile_n = 1.0, inv_tile_k = 1.0, inv_split_k = 1.0;
  double inv_usable_sms = 1.0;        // reciprocals: selection runs on multiplies, not divides
  double store_bytes_per_tile = 0.0;  // output (or fp32 partial) bytes per tile
  // Kernels without TMA: CTAs one SM can hold at once (shared memory for three stages, registers
  // for the accumulators) and whether a second kernel reduces split-K partials.
  int legacy_resident_ctas = 1;
  bool has_reduce_kernel = true;
  // predict_top_us's lower bound for them (no roundings): CTA-iterations per unit of M N K batch
  // spread over the SMs, waves per output element, the latency part per K-iteration, and the
  // fixed cost of one wave (fill plus per-tile overhead).
  double legacy_iters_per_volume = 0.0;  // 1 / (tm tn tk SMs)
  double legacy_waves_per_output = 0.0;  // split / (tm tn SMs resident CTAs)
  double legacy_latency_us_per_iter = 0.0;
  double legacy_wave_fixed_us = 0.0;
  double legacy_wave_store_bytes = 0.0;  // one tile's output (or partial) per SM: a wave's exposed store
  double legacy_latency_tiles = 0.0;  // exposed latency per K-iteration, in iterations of this tile
  bool operator==(const HopperTerms&) const = default;
};
struct OrigamiTerms {
  double compute_cycles_per_iter = 0.0;  // MFMA cycles of one K-iteration of one tile
  int group_size = 1;                    // WGM
  bool is_xcd_contiguous = false;
  int occupancy = 1;
  bool is_stream_k = false;
  bool operator==(const OrigamiTerms&) const = default;
};
struct PreparedCandidate {
  int tile_m = 0, tile_n = 0, tile_k = 0;
  int split_k = 1;
  bool is_feasible = true;            // false when shared memory / LDS cannot hold the tile
  bool uses_tma = true;               // Hopper: operands aligned for TMA (>= 16 bytes)
  double l2_bytes_per_iter = 0.0;     // per CTA (already divided by the multicast sharing)
  double arithmetic_intensity = 0.0;  // tie-break key (origami.md §2.10)
  HopperTerms hopper;
  OrigamiTerms origami;
  // Equal prepared terms predict the same time for every problem (e.g. cluster shapes of kernels
  // without TMA, which run no cluster): the selector predicts one of them.
  bool operator==(const PreparedCandidate&) const = default;
};

// A prediction split into the terms a user can reason about (`gemm select --explain`). The terms
// are the model's own accounting: compute (tensor-core time of the K-loops), memory (DRAM time
// beyond compute), l2 (L2 -> SM time beyond compute), launch_wave (launch, per-wave fixed costs,
// pipeline fill and exposed epilogues), reduction (split-K / stream-K fix-up), epilogue (extra
// traffic of the run API's epilogue). They add up to total_us.
struct TimeBreakdown {
  double total_us = 0.0;
  double compute_us = 0.0;
  double memory_us = 0.0;
  double l2_us = 0.0;
  double launch_wave_us = 0.0;
  double reduction_us = 0.0;
  double epilogue_us = 0.0;
  double waves = 0.0;  // tile waves (fractional last wave counted whole)
};

// Extra DRAM bytes a run epilogue moves beyond D itself (parity/gemm/gemm.hpp RunEpilogue): the
// bias vector read (M elements of C's type), the auxiliary output written by *Aux and read by
// dReLU/dGELU (M x N: a bit per element for ReLU, C's type for GELU), and the fp32 bias gradient
// written by *Bgrad (M floats; N for kBgradB). Per batch entry, times the batch.
double epilogue_extra_bytes(RunEpilogue epilogue, const GemmProblem& problem);

// The interface both back ends implement. Everything is const and a pure function of the device,
// the scalars, the problem and the candidate.
class PerformanceModel {
 public:
  PerformanceModel(DeviceParams device, ModelScalars scalars)
      : device_(std::move(device)), scalars_(scalars) {}
  virtual ~PerformanceModel() = default;
  const DeviceParams& device() const { return device_; }
  const ModelScalars& scalars() const { return scalars_; }

  virtual PreparedCandidate prepare(const ProblemClass& problem_class,
                                    const Candidate& candidate) const = 0;
  // Predicted time in microseconds (+infinity when infeasible).
  virtual double predict_us(const GemmProblem& problem, const PreparedCandidate& prepared) const = 0;
  // predicted_us[i] = predict_us(problem, prepared[i]); per-problem terms computed once.
  virtual void predict_all_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                              std::size_t count, double* predicted_us) const;
  // Exact only where it matters for a top-`keep` selection (see GemmModel::predict_top_us); the
  // default predicts everything exactly and reports no cutoff.
  virtual std::size_t predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                     std::size_t count, std::size_t keep, double tie_epsilon,
                                     double* predicted_us, double* cutoff_us) const;
  // The terms of predict_us (their sum is predict_us up to rounding).
  virtual TimeBreakdown explain(const GemmProblem& problem, const PreparedCandidate& prepared) const = 0;

 protected:
  DeviceParams device_;
  ModelScalars scalars_;
};

// max(keep-th smallest, smallest * (1 + tie_epsilon)) of exact predictions: the cutoff
// predict_top_us reports when it predicted every candidate exactly (+infinity when count < keep).
double exact_cutoff_us(const double* predicted_us, std::size_t count, std::size_t keep,
                       double tie_epsilon);

// The model for a device: the Hopper model for NVIDIA devices, the Origami-class one for AMD.
std::unique_ptr<PerformanceModel> make_model(DeviceParams device, ModelScalars scalars);

// A copyable handle on one immutable PerformanceModel (what the selector, calibration and
// evaluation hold). Constructed from a device and scalars through make_model.
class GemmModel {
 public:
  GemmModel(DeviceParams device, ModelScalars scalars);
  const DeviceParams& device() const { return impl_->device(); }
  const ModelScalars& scalars() const { return impl_->scalars(); }
  const PerformanceModel& impl() const { return *impl_; }

  PreparedCandidate prepare(const ProblemClass& problem_class, const Candidate& candidate) const {
    return impl_->prepare(problem_class, candidate);
  }
  double predict_us(const GemmProblem& problem, const PreparedCandidate& prepared) const {
    return impl_->predict_us(problem, prepared);
  }
  double predict_us(const GemmProblem& problem, const Candidate& candidate) const;
  // The prediction plus the run epilogue's extra traffic at the sustained DRAM bandwidth.
  double predict_us(const GemmProblem& problem, const Candidate& candidate,
                    RunEpilogue epilogue) const;
  void predict_all_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                      std::size_t count, double* predicted_us) const {
    impl_->predict_all_us(problem, prepared, count, predicted_us);
  }
  // Like predict_all_us, but exact only where it matters for a top-`keep` selection: a candidate
  // whose cheap lower bound (compute-only waves, no memory, no fill) already exceeds both the
  // keep-th best exact prediction so far and the best one times (1 + tie_epsilon) is left at that
  // bound, which is <= its true prediction and above every prediction of the exact top-`keep` and
  // of the near-tie group. Returns how many candidates were predicted exactly. `cutoff_us`, when
  // given, receives max(keep-th best, best * (1 + tie_epsilon)): every candidate of the top-`keep`
  // and of the near-tie group is at or below it, every other one above.
  std::size_t predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                             std::size_t count, std::size_t keep, double tie_epsilon,
                             double* predicted_us, double* cutoff_us = nullptr) const {
    return impl_->predict_top_us(problem, prepared, count, keep, tie_epsilon, predicted_us,
                                 cutoff_us);
  }
  TimeBreakdown explain(const GemmProblem& problem, const Candidate& candidate,
                        RunEpilogue epilogue) const;

 private:
  std::shared_ptr<const PerformanceModel> impl_;
};

}  // namespace parity::gemm
