#include "model_origami.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "model_math.hpp"

namespace parity::gemm {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Origami constants (origami.md §2.5-2.8), in cycles.
constexpr double kDramLatencyCycles = 200.0;
constexpr double kLoopCyclesPerIter = 500.0;
constexpr double kSplitKPeerCycles = 35.0 + 2.0 * 100.0 + 1900.0;
constexpr double kPrefetchDepth = 2.0;
constexpr double kLineBytes = 64.0;
constexpr double kTailCyclesPerSubIter = 700.0;  // tail-loop bookkeeping per MI_K step
// Epilogue: one accumulator read per fp32 output per lane of 4 waves of 64 lanes, ~0.9 pipelined;
// 16-byte vector stores issued one per cycle per wave.
constexpr double kEpilogueLanes = 64.0 * 4.0;
constexpr double kAccReadParallelism = 0.9;
constexpr double kStoreVectorBytes = 16.0;

// Launch geometry of one candidate on one problem.
struct Geometry {
  double grid_m, grid_n, tiles, splits, active, timesteps, kappa, k_iters_total, utilization;
  double k_per_split;  // K elements one workgroup reduces
  bool is_parallel_reduction = false;  // split partials reduced by a separate kernel
  double occupancy_factor;
};

// Per-K-iteration memory cycles (max over L2, MALL, HBM) and their parts.
struct MemoryCycles {
  double total, l2, mall, hbm;
};

// Origami's default grid (k_split_aware, origami.md §2.9). More tiles than CUs: the first
// fractional grid round(T / (floor(T / vCU) + f)) that fits the virtual CUs (CUs x occupancy),
// skipping grids whose per-workgroup K fragment is not whole 128-byte lines or whose fp32
// partials exceed 128 MiB. Fewer tiles: a K split, by a separate reduction kernel for deep K and
// few tiles, else the first of {16, 12, 8, 6, 4, 3, 2, 1} that fits with >= 8 iterations each.
double k_split_aware_grid(double cus, double tiles, double tm, double tn, double tk, double k,
                          int occupancy, bool* is_parallel_reduction) {
  constexpr double kMinItersPerSplit = 8.0, kMinItersForParallel = 64.0;
  constexpr double kPartialsLimitBytes = 128.0 * 1024.0 * 1024.0, kLineBytes128 = 128.0;
  const double iters_per_tile = std::ceil(k / tk);
  *is_parallel_reduction = false;
  if (tiles > cus) {
    const double virtual_cus = cus * std::max(1, occupancy);
    const double min_even = std::max(1.0, std::floor(tiles / virtual_cus));
    for (const double fraction : {0.0, 1.0 / 2, 1.0 / 8, 1.0 / 5, 1.0 / 4, 1.0 / 3}) {
      const double grid = std::floor(tiles / (min_even + fraction) + 0.5);
      if (std::fmod(tiles, grid) != 0 && tm * tn * 4.0 * grid > kPartialsLimitBytes) continue;
      const double per_cta = std::ceil(tiles * iters_per_tile / grid);
      const double fragment_bytes = std::fmod(per_cta, iters_per_tile) * tk * 2.0;
      if (fragment_bytes > 0 && std::fmod(fragment_bytes, kLineBytes128) != 0) continue;
      if (grid <= virtual_cus) return grid;
    }
    return tiles;
  }
  if (tiles < cus) {
    if (iters_per_tile >= kMinItersForParallel && tiles <= std::floor(cus / 4)) {
      *is_parallel_reduction = true;
      const double splits = std::min(std::floor(cus / tiles), std::floor(iters_per_tile / kMinItersPerSplit));
      return tiles * std::max(1.0, splits);
    }
    for (const double splits : {16.0, 12.0, 8.0, 6.0, 4.0, 3.0, 2.0, 1.0}) {
      if (tiles * splits <= cus && std::floor(iters_per_tile / splits) >= kMinItersPerSplit) {
        return tiles * splits;
      }
    }
  }
  return tiles;
}

Geometry geometry(const DeviceParams& d, const GemmProblem& problem, const PreparedCandidate& c) {
  const double m = static_cast<double>(problem.m), n = static_cast<double>(problem.n),
               k = static_cast<double>(problem.k), batch = static_cast<double>(problem.batch);
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  const double cus = d.num_sms;
  Geometry g{};
  g.grid_m = ceil_div(m, tm);
  g.grid_n = ceil_div(n, tn);
  g.tiles = g.grid_m * g.grid_n * batch;
  // Grid: data-parallel (G = tiles * split) or Origami's k-split-aware stream-K grid.
  const double grid = c.origami.is_stream_k
                          ? k_split_aware_grid(cus, g.tiles, tm, tn, tk, k, c.origami.occupancy,
                                               &g.is_parallel_reduction)
                          : g.tiles * c.split_k;
  g.splits = std::ceil(grid / g.tiles);
  g.active = std::min(grid, cus);
  // Origami counts whole timesteps of the larger of grid and tiles (a stream-K grid smaller than
  // the tile count is charged as the data-parallel one).
  g.timesteps = std::ceil(std::max(grid, g.tiles) / cus);
  // Full K-iterations floor(K / MT_K), sharded over the splits; 0 when K < MT_K (only the tail
  // runs), as in Origami's tile latency (origami.md §2.3, §2.7).
  g.k_iters_total = std::floor(k / tk);
  g.kappa = std::ceil(g.k_iters_total / g.splits);
  g.k_per_split = std::ceil(k / g.splits);
  g.utilization = m * n * k / (g.grid_m * tm * g.grid_n * tn * std::ceil(k / tk) * tk);
  g.occupancy_factor = std::pow(0.95, std::min(g.timesteps, 4.0)) *
                       std::pow(0.95, c.origami.occupancy - 1.0);
  return g;
}

// L2 hit rate of one XCD: the tiles it runs in a timestep under WGM grouping and the XCD mapping.
double l2_hit_rate(const DeviceParams& d, const PreparedCandidate& c, const Geometry& g,
                   double a_iter, double b_iter) {
  const double xcds = d.num_l2_domains;
  const double per_xcd = std::max(1.0, std::ceil(g.active / xcds));
  const double group = std::min(static_cast<double>(c.origami.group_size), g.grid_m);
  double rows_l2 = std::min(group, per_xcd);
  double cols_l2 = 0;
  if (c.origami.is_xcd_contiguous) {
    // Each XCD owns a contiguous block of the WGM walk: group rows x (per_xcd / group) columns.
    cols_l2 = std::min(g.grid_n * g.splits, std::ceil(per_xcd / rows_l2));
  } else {
    // Round-robin dealing: an XCD's tiles are every xcds-th tile of the walk, so they spread over
    // xcds times as many columns (rows stay within the group).
    cols_l2 = std::min({g.grid_n * g.splits, per_xcd, std::ceil(per_xcd * xcds / rows_l2)});
  }
  // Shrink to what fits in one XCD's L2 (double-buffered K-slices).
  while (rows_l2 > 1 &&
         (rows_l2 * a_iter + cols_l2 * b_iter) * kPrefetchDepth > d.l2_bytes_per_domain) {
    rows_l2 -= 1;
  }
  return std::max(0.0, 1.0 - (rows_l2 * a_iter + cols_l2 * b_iter) / (per_xcd * (a_iter + b_iter)));
}

MemoryCycles memory_cycles(const DeviceParams& d, const ModelScalars& s, const GemmProblem& problem,
                           const PreparedCandidate& c, const Geometry& g) {
  const double in_bytes = static_cast<double>(dtype_size_bytes(problem.a_dtype));
  const double cus = d.num_sms;
  // Bandwidths in bytes per compute cycle (Origami's conversion, origami.md §2.1). Origami's
  // quirk: the MALL and HBM constants are divided by the memory clock, yet used per compute
  // cycle. dram_efficiency rescales HBM relative to its default (0.9 = as published).
  const double clock_hz = d.clock_ghz * 1e9;
  const double l2_bpc = d.l2_bw_tbps * 1e12 / clock_hz;
  const double mall_bpc = d.mall_bw_tbps * 1e12 / (d.memory_clock_ghz * 1e9 * d.mem_clock_ratio);
  const double hbm_bpc =
      d.hbm_model_bw_tbps * 1e12 / (d.memory_clock_ghz * 1e9) * s.dram_efficiency / 0.9;
  const auto& q = d.bw_fraction_quadratic;
  const double bw_fraction =
      std::clamp(q[2] * g.active * g.active + q[1] * g.active + q[0], 0.01, 1.0);
  // Bytes one workgroup loads per K-iteration (rows rounded to whole 64-byte lines).
  const double m = static_cast<double>(problem.m), n = static_cast<double>(problem.n);
  // Rows are K-contiguous (Origami's TN harness); each row's K span is rounded up to whole lines
  // once over the workgroup's share of K, then spread over its K-iterations (origami.md §2.5).
  const double span_bytes = std::ceil(g.k_per_split * in_bytes / kLineBytes) * kLineBytes;
  const double iters = std::max(g.k_per_split / c.tile_k, 1.0);
  const double a_iter = std::min(m, static_cast<double>(c.tile_m)) * span_bytes / iters;
  const double b_iter = std::min(n, static_cast<double>(c.tile_n)) * span_bytes / iters;
  const double hit_l2 = l2_hit_rate(d, c, g, a_iter, b_iter);
  // MALL: the whole timestep's window over the device (no capacity term, as in Origami).
  const double group = std::min(static_cast<double>(c.origami.group_size), g.grid_m);
  const double rows_mall = std::min(std::max(group, 1.0), g.active);
  const double cols_mall = std::min(g.grid_n * g.splits, std::ceil(g.active / rows_mall));
  const double hit_mall =
      d.llc_bytes > 0 ? std::max(0.0, 1.0 - (rows_mall * a_iter + cols_mall * b_iter) /
                                                (g.active * (a_iter + b_iter)))
                      : 0.0;
  const double bytes = g.active * (a_iter + b_iter);
  MemoryCycles mem{};
  mem.l2 = bytes / (l2_bpc * g.active / cus);
  mem.mall = d.llc_bytes > 0 ? (1.0 - hit_l2) * bytes / (mall_bpc * bw_fraction) : 0.0;
  mem.hbm = (1.0 - hit_mall) * (1.0 - hit_l2) * bytes / (hbm_bpc * bw_fraction) + kDramLatencyCycles;
  mem.total = std::max({mem.l2, mem.mall, mem.hbm});
  return mem;
}

}  // namespace

PreparedCandidate OrigamiModel::prepare(const ProblemClass& key, const Candidate& c) const {
  PreparedCandidate p = prepare_common(c);
  const double a_bytes = static_cast<double>(dtype_size_bytes(key.a_dtype));
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  p.l2_bytes_per_iter = (tm + tn) * tk * a_bytes;
  OrigamiTerms& o = p.origami;
  o.is_stream_k = c.decomposition == Decomposition::kStreamK;
  o.group_size = std::max(1, c.group_size);
  o.is_xcd_contiguous = c.xcd_mapping == XcdMapping::kContiguous;
  o.occupancy = std::max(1, c.occupancy);
  p.is_feasible = (tm * a_bytes + tn * a_bytes) * tk <= device_.smem_bytes_per_sm;
  const bool is_wide = c.mi_m >= 32;
  const int mi_m = is_wide ? 32 : 16;
  const int device_mi_k = is_wide ? device_.mi_k_32 : device_.mi_k_16;
  // An instruction of another K than the arch's native one (CDNA3 shapes on CDNA4) takes its
  // latency in proportion: the same rate, other padding of the K-extent.
  const int mi_k = c.mi_k > 0 ? c.mi_k : device_mi_k;
  const double latency = (is_wide ? device_.mi_latency_32_cycles : device_.mi_latency_16_cycles) *
                         mi_k / device_mi_k;
  o.compute_cycles_per_iter =
      latency / 4.0 * ceil_div(tm, mi_m) * ceil_div(tn, mi_m) * ceil_div(tk, mi_k);
  // Without native TF32 (gfx950) fp32 inputs run as three bf16 passes (origami.md §2.2).
  if (key.a_dtype == DType::kF32) o.compute_cycles_per_iter *= device_.arch == "gfx950" ? 6 : 2;
  o.compute_cycles_per_iter /= scalars_.mma_efficiency;
  return p;
}

namespace {

// One tile's cycles after Origami's compute_tile_latency (origami.md §2.7), in parts.
struct TileCycles {
  double compute = 0, memory_excess = 0, loop = 0, epilogue = 0, reduce = 0, total = 0;
};

TileCycles tile_cycles(const DeviceParams& d, const ModelScalars& s, const GemmProblem& problem,
                       const PreparedCandidate& c, const Geometry& g, const MemoryCycles& mem) {
  const double lc = c.origami.compute_cycles_per_iter;  // per K-iteration, before padding waste
  const double lc_eff = lc / g.utilization;              // padding waste charged to compute only
  const double lm = mem.total;
  const double k_iters = g.kappa;
  const double n_main = std::max(k_iters - kPrefetchDepth, 0.0);
  const double n_drain = k_iters > 0 ? std::min(kPrefetchDepth - 1.0, k_iters - 1.0) : 0.0;
  const double tile_k = c.tile_k;
  const double tail_k = static_cast<double>(problem.k) - g.k_iters_total * tile_k;
  TileCycles t;
  const double prologue = k_iters > 0 ? lm * g.occupancy_factor : 0.0;
  const double main = std::max(n_main * lm, n_main * lc_eff);
  const double pure_compute = (n_drain + (k_iters > 0 ? 1.0 : 0.0)) * lc_eff;
  double tail = 0.0, tail_compute = 0.0;
  if (tail_k > 0) {
    // Memory in proportion to the tail's bytes, compute in proportion to its K, plus a fixed
    // cost per sub-iteration (counted in the arch's 16x16 MI_K for every candidate: the
    // prepared candidate does not carry its instruction's K).
    tail_compute = tail_k / tile_k * lc_eff;
    tail = tail_k / tile_k * lm + tail_compute +
           kTailCyclesPerSubIter * std::ceil(tail_k / std::max(1, d.mi_k_16));
  }
  // Prefetch fill/drain: below PGR + 1 main iterations the loads are not hidden; the exposure
  // fades with the memory share of an iteration.
  const double unamortized = std::min(k_iters, kPrefetchDepth + 1.0 - n_main);
  const double pgr_stall =
      unamortized > 0 && lm + lc > 0
          ? (unamortized + (n_main == 0 && tail_k > 0 ? tail_k / tile_k : 0.0)) * lm * lm / (lm + lc)
          : 0.0;
  // Depth-unroll waste: a workgroup reducing fewer than MT_K elements still pays a full iteration.
  const double k_effective = k_iters * tile_k + tail_k;
  const double waste_ratio = k_effective > 0 ? std::max(0.0, tile_k / k_effective - 1.0) : 0.0;
  const double waste = waste_ratio * (std::max(lm, lc_eff) + kLoopCyclesPerIter);
  t.loop = kLoopCyclesPerIter * k_iters;
  t.compute = n_main * lc_eff + pure_compute + tail_compute;
  // Epilogue: accumulator reads, then the tile's stores through this CU's share of the L2
  // bandwidth (its fraction in active CUs), 10% more when M is not line-aligned.
  const double tm = c.tile_m, tn = c.tile_n;
  const double out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  const auto& q = d.bw_fraction_quadratic;
  const double bw_fraction =
      std::clamp(q[2] * g.active * g.active + q[1] * g.active + q[0], 0.01, 1.0);
  const double l2_bpc = d.l2_bw_tbps * 1e12 / (d.clock_ghz * 1e9);
  const double per_cu_store_bpc = l2_bpc * bw_fraction / g.active;
  const double line_elements = std::ceil(128.0 / out_bytes);
  const double alignment = std::fmod(static_cast<double>(problem.m), line_elements) != 0 ? 1.1 : 1.0;
  const bool in_kernel_reduce = g.splits > 1 && !g.is_parallel_reduction;
  const double split_bytes = in_kernel_reduce ? 4.0 : out_bytes;  // partials are fp32
  const double store_bytes = tm * tn * split_bytes;
  t.epilogue = tm * tn / kEpilogueLanes * kAccReadParallelism +
               store_bytes * alignment / per_cu_store_bpc +
               std::ceil(tm * tn / (64.0 * std::ceil(kStoreVectorBytes / out_bytes)));
  if (in_kernel_reduce) {
    const double hbm_bpc = d.hbm_model_bw_tbps * 1e12 / (d.memory_clock_ghz * 1e9) *
                           s.dram_efficiency / 0.9;
    t.reduce = store_bytes / per_cu_store_bpc + (g.splits - 1.0) * kSplitKPeerCycles +
               (g.splits - 1.0) * tm * tn * 4.0 / (hbm_bpc / g.tiles);
    if (tm * tn <= 2048) t.reduce *= 2.0;
    t.epilogue += t.reduce;
  }
  t.epilogue *= g.occupancy_factor;
  t.reduce *= g.occupancy_factor;
  const double loop_total = main + pure_compute + tail + pgr_stall + t.loop + waste;
  t.memory_excess = prologue + loop_total - t.compute - t.loop;
  t.total = prologue + loop_total + t.epilogue + s.tile_overhead_us * d.clock_ghz * 1e3;
  return t;
}

// The separate reduction kernel (Origami's PostGSU): launch, then per wave each of its
// workgroups (256 threads x 4 bytes of output each) reads the fp32 partials of every split and
// writes the output, at MALL bandwidth scaled by its active-CU fraction.
double parallel_reduction_cycles(const DeviceParams& d, const GemmProblem& problem, const Geometry& g) {
  constexpr double kLaunchCycles = 8000.0, kThreadsPerWorkgroup = 256.0, kLanes = 64.0;
  const double out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  const double vector = std::max(1.0, std::floor(4.0 / out_bytes));
  const double elements = static_cast<double>(problem.m) * static_cast<double>(problem.n) *
                          static_cast<double>(problem.batch);
  const double workgroups = std::ceil(elements / (kThreadsPerWorkgroup * vector));
  const double active = std::min(workgroups, static_cast<double>(d.num_sms));
  const double waves = std::ceil(workgroups / d.num_sms);
  const auto& q = d.bw_fraction_quadratic;
  const double fraction = std::clamp(q[2] * active * active + q[1] * active + q[0], 0.01, 1.0);
  const double mall_bpc = d.mall_bw_tbps * 1e12 / (d.memory_clock_ghz * 1e9 * d.mem_clock_ratio);
  const double bw = std::max(mall_bpc * fraction, 1e-12);
  const double per_wave = active * kThreadsPerWorkgroup * vector;
  const double read = per_wave * g.splits * 4.0 / bw;
  const double write = per_wave * out_bytes / bw;
  const double accumulate = (g.splits - 1.0) * per_wave / (active * kLanes);
  return kLaunchCycles + (read + accumulate + write) * waves;
}

}  // namespace

template <bool kExplain>
double OrigamiModel::predict(const GemmProblem& problem, const PreparedCandidate& c,
                             TimeBreakdown* breakdown) const {
  const DeviceParams& d = device_;
  const Geometry g = geometry(d, problem, c);
  const MemoryCycles mem = memory_cycles(d, scalars_, problem, c, g);
  const TileCycles t = tile_cycles(d, scalars_, problem, c, g, mem);
  const double timesteps = g.timesteps;
  const double reduction_kernel = g.is_parallel_reduction ? parallel_reduction_cycles(d, problem, g) : 0.0;
  const double cycles_per_us = d.clock_ghz * 1e3;
  if constexpr (kExplain) {
    breakdown->compute_us = timesteps * t.compute / cycles_per_us;
    const bool l2_bound = mem.l2 >= mem.hbm && mem.l2 >= mem.mall;
    (l2_bound ? breakdown->l2_us : breakdown->memory_us) = timesteps * t.memory_excess / cycles_per_us;
    breakdown->reduction_us = (timesteps * t.reduce + reduction_kernel) / cycles_per_us;
    breakdown->launch_wave_us =
        scalars_.launch_us +
        timesteps * (t.loop + t.epilogue - t.reduce + scalars_.tile_overhead_us * cycles_per_us) /
            cycles_per_us;
    breakdown->waves = timesteps;
  }
  return scalars_.launch_us + (timesteps * t.total + reduction_kernel) / cycles_per_us;
}

double OrigamiModel::predict_us(const GemmProblem& problem, const PreparedCandidate& c) const {
  return c.is_feasible ? predict<false>(problem, c, nullptr) : kInfinity;
}

TimeBreakdown OrigamiModel::explain(const GemmProblem& problem, const PreparedCandidate& c) const {
  TimeBreakdown breakdown;
  breakdown.total_us = c.is_feasible ? predict<true>(problem, c, &breakdown) : kInfinity;
  return breakdown;
}

double OrigamiModel::lower_bound_us(const GemmProblem& problem, const PreparedCandidate& c) const {
  constexpr double kRoundingMargin = 1.0 - 1e-12;
  const Geometry g = geometry(device_, problem, c);
  const double timesteps = g.timesteps;
  const double cycles_per_us = device_.clock_ghz * 1e3;
  // tile_cycles() with the memory level taken as its L2 term alone (L_mem >= t_L2, which needs no
  // hit rates): prologue, steady state max(L2, compute), drain and tail compute, loop bookkeeping
  // and the fixed cost; every other term is >= 0.
  const double in_bytes = static_cast<double>(dtype_size_bytes(problem.a_dtype));
  const double span_bytes = std::ceil(g.k_per_split * in_bytes / kLineBytes) * kLineBytes;
  const double iters = std::max(g.k_per_split / c.tile_k, 1.0);
  const double iter_bytes = (std::min(static_cast<double>(problem.m), static_cast<double>(c.tile_m)) +
                             std::min(static_cast<double>(problem.n), static_cast<double>(c.tile_n))) *
                            span_bytes / iters;
  const double l2_bpc = device_.l2_bw_tbps * 1e12 / (device_.clock_ghz * 1e9);
  const double l2_cycles = device_.num_sms * iter_bytes / l2_bpc;
  const double tail_k = static_cast<double>(problem.k) - g.k_iters_total * c.tile_k;
  const double lc_eff = c.origami.compute_cycles_per_iter / g.utilization;
  const double n_main = std::max(g.kappa - kPrefetchDepth, 0.0);
  const double prologue = g.kappa > 0 ? l2_cycles * g.occupancy_factor : 0.0;
  const double tile_cycles = prologue + n_main * std::max(l2_cycles, lc_eff) +
                             (g.kappa - n_main) * lc_eff + g.kappa * kLoopCyclesPerIter +
                             std::max(tail_k, 0.0) / c.tile_k * lc_eff +
                             scalars_.tile_overhead_us * cycles_per_us;
  return (scalars_.launch_us + timesteps * tile_cycles / cycles_per_us) * kRoundingMargin;
}

std::size_t OrigamiModel::predict_top_us(const GemmProblem& problem,
                                         const PreparedCandidate* prepared, std::size_t count,
                                         std::size_t keep, double tie_epsilon,
                                         double* predicted_us, double* cutoff_us) const {
  if (keep == 0) {
    return PerformanceModel::predict_top_us(problem, prepared, count, keep, tie_epsilon,
                                            predicted_us, cutoff_us);
  }
  const auto same_run = [&](std::size_t a, std::size_t b) {
    const PreparedCandidate& x = prepared[a];
    const PreparedCandidate& y = prepared[b];
    return x.tile_m == y.tile_m && x.tile_n == y.tile_n && x.tile_k == y.tile_k &&
           x.split_k == y.split_k && x.origami.is_stream_k == y.origami.is_stream_k &&
           x.origami.compute_cycles_per_iter == y.origami.compute_cycles_per_iter;
  };
  // Pass 1: one bound per run (macro tile and MFMA shape), written to every member.
  struct Run {
    double bound;
    std::size_t begin, end;
  };
  std::vector<Run> runs;
  for (std::size_t i = 0; i < count; ++i) {
    if (!runs.empty() && same_run(i, runs.back().begin)) {
      predicted_us[i] = runs.back().bound;
      runs.back().end = i + 1;
      continue;
    }
    const double bound = prepared[i].is_feasible ? lower_bound_us(problem, prepared[i]) : kInfinity;
    predicted_us[i] = bound;
    runs.push_back({bound, i, i + 1});
  }
  // Pass 2: runs in ascending bound, predicted exactly until the bound passes the running cutoff
  // max(keep-th best, best * (1 + tie_epsilon)); best[] holds the smallest exact values, ascending.
  std::sort(runs.begin(), runs.end(), [](const Run& a, const Run& b) { return a.bound < b.bound; });
  std::vector<double> best;
  best.reserve(keep + 1);
  const auto cutoff = [&] {
    return keep == 0 || best.size() < keep ? kInfinity : std::max(best[keep - 1], best[0] * (1.0 + tie_epsilon));
  };
  std::size_t exact = 0;
  for (const Run& run : runs) {
    if (run.bound == kInfinity || run.bound > cutoff()) break;
    for (std::size_t i = run.begin; i < run.end; ++i) {
      const double value = predict_us(problem, prepared[i]);
      predicted_us[i] = value;
      ++exact;
      if (best.size() < keep || value < best.back()) {
        best.insert(std::upper_bound(best.begin(), best.end(), value), value);
        if (best.size() > keep) best.pop_back();
      }
    }
  }
  if (cutoff_us != nullptr) *cutoff_us = cutoff();
  return exact;
}

}  // namespace parity::gemm
