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

// Launch geometry of one candidate on one problem.
struct Geometry {
  double grid_m, grid_n, tiles, splits, active, timesteps, kappa, k_iters_total, utilization;
  double occupancy_factor;
};

// Per-K-iteration memory cycles (max over L2, MALL, HBM) and their parts.
struct MemoryCycles {
  double total, l2, mall, hbm;
};

Geometry geometry(const DeviceParams& d, const GemmProblem& problem, const PreparedCandidate& c) {
  const double m = static_cast<double>(problem.m), n = static_cast<double>(problem.n),
               k = static_cast<double>(problem.k), batch = static_cast<double>(problem.batch);
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  const double cus = d.num_sms;
  Geometry g{};
  g.grid_m = ceil_div(m, tm);
  g.grid_n = ceil_div(n, tn);
  g.tiles = g.grid_m * g.grid_n * batch;
  // Grid: data-parallel (G = tiles * split) or stream-K (one workgroup per CU).
  g.splits = c.origami.is_stream_k ? std::max(1.0, std::min(16.0, std::floor(cus / g.tiles)))
                                   : static_cast<double>(c.split_k);
  const double grid = g.tiles * g.splits;
  g.active = std::min(grid, cus);
  g.timesteps = std::ceil(grid / cus);
  g.k_iters_total = std::max(1.0, std::floor(k / tk));
  g.kappa = std::max(1.0, std::ceil(g.k_iters_total / g.splits));
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
  const double line_bytes = std::ceil(c.tile_k * in_bytes / kLineBytes) * kLineBytes;
  const double a_iter = std::min(m, static_cast<double>(c.tile_m)) * line_bytes;
  const double b_iter = std::min(n, static_cast<double>(c.tile_n)) * line_bytes;
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

template <bool kExplain>
double OrigamiModel::predict(const GemmProblem& problem, const PreparedCandidate& c,
                             TimeBreakdown* breakdown) const {
  const DeviceParams& d = device_;
  const Geometry g = geometry(d, problem, c);
  const MemoryCycles mem = memory_cycles(d, scalars_, problem, c, g);
  const double compute_cycles = c.origami.compute_cycles_per_iter / g.utilization;
  const double cus = d.num_sms;
  const double out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  const double l2_bpc = d.l2_bw_tbps * 1e12 / (d.clock_ghz * 1e9);
  const double hbm_bpc = d.hbm_model_bw_tbps * 1e12 / (d.memory_clock_ghz * 1e9) *
                         scalars_.dram_efficiency / 0.9;
  // Tile: prologue, steady state with prefetch depth 2, drain, loop bookkeeping, epilogue.
  const double n_main = std::max(g.kappa - kPrefetchDepth, 0.0);
  const double n_drain = std::min(kPrefetchDepth - 1.0, g.kappa - 1.0);
  const double steady = std::max(n_main * mem.total, n_main * compute_cycles);
  double loop_cycles = steady + (n_drain + 1.0) * compute_cycles + kLoopCyclesPerIter * g.kappa;
  const double tile_k = c.tile_k;
  const double tail_k = static_cast<double>(problem.k) - g.k_iters_total * tile_k;
  if (tail_k > 0) loop_cycles += (tail_k / tile_k) * std::max(mem.total, compute_cycles);
  const double tm = c.tile_m, tn = c.tile_n;
  double epilogue_cycles = g.occupancy_factor * tm * tn * out_bytes / (l2_bpc / cus);
  double reduce_cycles = 0.0;
  if (g.splits > 1) {
    reduce_cycles = (g.splits - 1.0) * kSplitKPeerCycles + (g.splits - 1.0) * tm * tn * 4.0 / (hbm_bpc / cus);
    epilogue_cycles += reduce_cycles;
  }
  const double fixed_cycles = scalars_.tile_overhead_us * d.clock_ghz * 1e3;
  const double tile_cycles = g.occupancy_factor * mem.total + loop_cycles + epilogue_cycles + fixed_cycles;
  double timesteps = g.timesteps;
  if (c.origami.is_stream_k) {
    // Stream-K: MAC iterations spread evenly over the CUs; fractional timesteps, a fix-up per
    // extra peer sharing a tile (origami.md §6.1).
    const double iters_per_tile = std::max(1.0, std::ceil(static_cast<double>(problem.k) / tile_k));
    const double iters_per_cu = std::ceil(g.tiles * iters_per_tile / cus);
    timesteps = iters_per_cu / iters_per_tile * g.splits;
  }
  const double cycles_per_us = d.clock_ghz * 1e3;
  if constexpr (kExplain) {
    const double compute_part = n_main * compute_cycles + (n_drain + 1.0) * compute_cycles;
    breakdown->compute_us = timesteps * compute_part / cycles_per_us;
    const double memory_excess = steady - n_main * compute_cycles + g.occupancy_factor * mem.total +
                                 (loop_cycles - steady - (n_drain + 1.0) * compute_cycles -
                                  kLoopCyclesPerIter * g.kappa);
    const bool l2_bound = mem.l2 >= mem.hbm && mem.l2 >= mem.mall;
    (l2_bound ? breakdown->l2_us : breakdown->memory_us) = timesteps * memory_excess / cycles_per_us;
    breakdown->reduction_us = timesteps * reduce_cycles / cycles_per_us;
    breakdown->launch_wave_us =
        scalars_.launch_us + timesteps *
                                 (kLoopCyclesPerIter * g.kappa + epilogue_cycles - reduce_cycles +
                                  fixed_cycles) /
                                 cycles_per_us;
    breakdown->waves = timesteps;
  }
  return scalars_.launch_us + timesteps * tile_cycles / cycles_per_us;
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
  // predict() with the memory terms, prologue, epilogue and tail dropped: a tile costs at least
  // kappa compute iterations (n_main + n_drain + 1 = kappa) plus its loop bookkeeping and fixed
  // cost; every dropped term is >= 0. The grid and utilisation are the exact ones (geometry()).
  constexpr double kRoundingMargin = 1.0 - 1e-12;
  const Geometry g = geometry(device_, problem, c);
  double timesteps = g.timesteps;
  if (c.origami.is_stream_k) {
    const double tile_k = c.tile_k;
    const double iters_per_tile = std::max(1.0, std::ceil(static_cast<double>(problem.k) / tile_k));
    timesteps = std::ceil(g.tiles * iters_per_tile / device_.num_sms) / iters_per_tile * g.splits;
  }
  const double cycles_per_us = device_.clock_ghz * 1e3;
  const double tile_cycles = g.kappa * (c.origami.compute_cycles_per_iter / g.utilization +
                                        kLoopCyclesPerIter) +
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
