#include "model_origami.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <vector>

#include "model_math.hpp"
#include "model_origami_terms.hpp"

namespace parity::gemm {

using namespace origami_terms;  // the port's shared constants and helpers (internal header)

namespace {

// Epilogue (compute_epilogue_latency): 16-byte stores, 6 cycles per bounds check, scalar stores
// 1.1x, fp32 split partials, and per partial 35 (SALU) + 2 x 90 (barrier) + 550 (cross-XCD flag
// poll) cycles. The baselines agree best without the accumulator-read and line-alignment terms of
// later revisions (docs/gemm_model.md).
constexpr double kLanes = 64.0;
constexpr double kStoreVectorBytes = 16.0, kBoundsCheckCycles = 6.0;
constexpr double kScalarStorePenalty = 1.1, kPartialBytes = 4.0;
constexpr double kPartialSyncCycles = 35.0 + 2.0 * 90.0 + 550.0;
// The separate reduction kernel (compute_parallel_reduction_latency).
constexpr double kReduceLaunchCycles = 25000.0, kReduceThreads = 256.0;

// Origami's default grid (streamk.cpp grid_k_split_aware, called with the CU count as the CU
// budget; origami.md §2.9). More tiles than CUs: the first fractional grid
// round(T / (floor(T / CUs) + f)) within the CUs whose per-workgroup K fragment covers whole
// 128-byte lines, else one workgroup per CU. Fewer tiles: a K split, the largest fitting the CUs
// for a separate (parallel) reduction of deep K and few tiles, else the first of
// {16, 12, 8, 6, 4, 3, 2, 1} that fits with >= 8 iterations each.
U64 k_split_aware_grid(U64 cus, U64 tiles, U64 iters_per_tile, U64 tile_k, double element_bytes,
                       bool is_parallel_reduction) {
  constexpr U64 kMinItersPerSplit = 8;
  if (tiles > cus) {
    const U64 min_even = std::max<U64>(1, tiles / cus);
    for (const double fraction : {0.0, 1.0 / 2, 1.0 / 8, 1.0 / 5, 1.0 / 4, 1.0 / 3}) {
      const U64 grid = static_cast<U64>(static_cast<double>(tiles) / (static_cast<double>(min_even) + fraction) + 0.5);
      if (grid == 0) continue;
      const U64 per_cta = div_up(tiles * iters_per_tile, grid);
      // Whole elements of whole bytes: an integer remainder tests what fmod(bytes, 128) did.
      const U64 fragment_bytes = per_cta % iters_per_tile * tile_k * static_cast<U64>(element_bytes);
      if (fragment_bytes % 128 != 0) continue;
      if (grid <= cus) return grid;
    }
    return cus;
  }
  if (tiles < cus) {
    if (is_parallel_reduction) return tiles * std::min(cus / tiles, iters_per_tile / kMinItersPerSplit);
    for (const U64 splits : {16, 12, 8, 6, 4, 3, 2, 1}) {
      if (tiles * splits <= cus && iters_per_tile / splits >= kMinItersPerSplit) return tiles * splits;
    }
  }
  return tiles;
}

// MFMA table latency over the 4 units per CU. Origami's table holds whole cycles and divides as
// integers; a catalogue latency derived from the dense peak may be fractional and is kept exact
// (flooring it would beat the peak).
double mfma_issue_cycles(double table_cycles) {
  return table_cycles == std::floor(table_cycles) ? std::floor(table_cycles / 4.0) : table_cycles / 4.0;
}


}  // namespace

OrigamiModel::OrigamiModel(DeviceParams device, ModelScalars scalars)
    : PerformanceModel(std::move(device), scalars) {
  const DeviceParams& d = device_;
  hw_.num_cus = static_cast<U64>(std::max(1, d.num_sms));
  hw_.num_xcds = static_cast<U64>(std::max(1, d.num_l2_domains));
  hw_.cus_per_xcd = hw_.num_cus / hw_.num_xcds;
  hw_.l2_bytes = d.l2_bytes_per_domain;
  hw_.lds_bytes = d.smem_bytes_per_sm;
  // Origami's conversion of its bandwidth constants (TB/s) to bytes per compute cycle: the MALL
  // and DRAM ones divide by the memory clock (origami.md §2.1). dram_efficiency rescales DRAM
  // relative to its default (0.9 = as published).
  hw_.l2_bytes_per_cycle = d.l2_bw_tbps * 1e3 / d.clock_ghz;
  hw_.mall_bytes_per_cycle = d.mall_bw_tbps * 1e3 / (d.memory_clock_ghz * d.mem_clock_ratio);
  hw_.dram_bytes_per_cycle = d.hbm_model_bw_tbps * 1e3 / d.memory_clock_ghz * scalars_.dram_efficiency / 0.9;
  hw_.q0 = d.bw_fraction_quadratic[0];
  hw_.q1 = d.bw_fraction_quadratic[1];
  hw_.q2 = d.bw_fraction_quadratic[2];
  hw_.has_mall = d.llc_bytes > 0;
  hw_.cycles_per_us = d.clock_ghz * 1e3;
  // The fastest native instruction's cycles per flop (MFMA count >= the tile's flops over one
  // instruction's), before the input-type factor: predict_top_us's compute floor.
  min_cycles_per_flop_ =
      std::min(mfma_issue_cycles(d.mi_latency_16_cycles) / (2.0 * 16 * 16 * d.mi_k_16),
               mfma_issue_cycles(d.mi_latency_32_cycles) / (2.0 * 32 * 32 * d.mi_k_32)) /
      scalars_.mma_efficiency;
}

PreparedCandidate OrigamiModel::prepare(const ProblemClass& key, const Candidate& c) const {
  PreparedCandidate p = prepare_common(c);
  const double a_bytes = static_cast<double>(dtype_size_bytes(key.a_dtype));
  const double tm = c.tile_m, tn = c.tile_n, tk = c.tile_k;
  p.l2_bytes_per_iter = (tm + tn) * tk * a_bytes;
  OrigamiTerms& o = p.origami;
  o.is_stream_k = c.decomposition == Decomposition::kStreamK;
  o.group_size = std::max(1, c.group_size);
  o.is_xcd_contiguous = c.xcd_mapping == XcdMapping::kContiguous;
  // A CDNA CU holds at most 8 workgroups of 4 waves (32 waves): occupancy is clamped to [1, 8].
  o.occupancy = std::clamp(c.occupancy, 1, kMaxOccupancy);
  // Origami's LDS check: one stage of A and B (check_lds_capacity).
  p.is_feasible = (tm + tn) * tk * a_bytes <= device_.smem_bytes_per_sm;
  const bool is_wide = c.mi_m >= 32;
  const int mi_m = is_wide ? 32 : 16;
  const int device_mi_k = is_wide ? device_.mi_k_32 : device_.mi_k_16;
  // An instruction deeper in K than the arch's native one does not exist: clamp to the native K
  // (this also keeps predict_top_us's compute floor, built from the native shapes, admissible).
  const int mi_k = std::min(c.mi_k > 0 ? c.mi_k : device_mi_k, device_mi_k);
  // MFMA latency table / 4 units (integer, as Origami's get_mi_latency); an instruction of another
  // K than the arch's native one (CDNA3 shapes on CDNA4) has the same latency, other K padding.
  const double latency = mfma_issue_cycles(is_wide ? device_.mi_latency_32_cycles : device_.mi_latency_16_cycles);
  o.compute_cycles_per_iter =
      latency * ceil_div(tm, mi_m) * ceil_div(tn, mi_m) * ceil_div(tk, mi_k);
  // Without native TF32 (gfx950) fp32 inputs run as three bf16 passes (origami.md §2.2).
  o.compute_cycles_per_iter *= input_type_factor(device_, key.a_dtype) / scalars_.mma_efficiency;
  return p;
}

OrigamiContext OrigamiModel::context(const GemmProblem& problem, const PreparedCandidate& c,
                                     Mapping mapping) const {
  OrigamiContext x;
  x.m = static_cast<U64>(problem.m);
  x.n = static_cast<U64>(problem.n);
  x.k = static_cast<U64>(problem.k);
  x.batch = static_cast<U64>(problem.batch);
  x.tile_m = static_cast<U64>(c.tile_m);
  x.tile_n = static_cast<U64>(c.tile_n);
  x.tile_k = static_cast<U64>(c.tile_k);
  x.grid_m = div_up(x.m, x.tile_m);
  x.grid_n = div_up(x.n, x.tile_n);
  x.tiles = x.grid_m * x.grid_n * x.batch;
  const U64 cus = hw_.num_cus;
  const U64 iters_per_tile = div_up(x.k, x.tile_k);
  if (c.origami.is_stream_k) {
    // Deep K and few tiles: partials reduced by a separate kernel (select_reduction).
    x.is_parallel_reduction = x.tiles < cus && std::max<U64>(1, iters_per_tile) >= 64 && x.tiles <= cus / 4;
    x.workgroups = k_split_aware_grid(cus, x.tiles, iters_per_tile, x.tile_k, element_bytes_of(problem),
                                      x.is_parallel_reduction);
  } else {
    x.workgroups = x.tiles * static_cast<U64>(c.split_k);
  }
  x.active_cus = std::min(x.workgroups, cus);
  // Whole timesteps of the larger of grid and tiles: a stream-K grid smaller than the tile count
  // is charged as the data-parallel one (Origami's compute_launch_parameters).
  x.timesteps = div_up(std::max(x.workgroups, x.tiles), cus);
  x.splits = div_up(x.workgroups, x.tiles);
  x.k_per_split = div_up(x.k, x.splits);
  x.k_iters = div_up(x.k_per_split, x.tile_k);
  x.read_bw_fraction = hw_.bandwidth_fraction(x.active_cus);
  x.write_bw_fraction = hw_.bandwidth_fraction(x.tiles);
  // The kernel's occupancy, capped by the workgroups each CU actually receives.
  const U64 waves_per_cu = div_up(x.grid_m * x.grid_n * x.batch * x.splits, cus);
  const U64 occupancy = std::min(static_cast<U64>(std::max(1, c.origami.occupancy)), waves_per_cu);
  x.occupancy_factor = occupancy_decay(occupancy);
  if (mapping == Mapping::kSkip) {
    x.mapping = {0, 0, 1};  // not needed: only the hit rates read it
  } else if (c.origami.is_xcd_contiguous) {
    x.mapping = predict_workgroup_mapping(hw_, x, element_bytes_of(problem));
  } else {
    x.mapping = {0, 0, 1};  // hardware round-robin dispatch, no remap
  }
  return x;
}

namespace {

// The worst epilogue over interior, N-edge, M-edge (scalar path) and corner tiles, before the
// occupancy factor (compute_epilogue_latency); `reduce` receives the in-kernel split reduction.
// Its roundings are of non-negative values below 2^53: fast_ceil / fast_floor, no libm call.
double epilogue_cycles(const OrigamiHardware& hw, const OrigamiContext& x, double out_bytes,
                       double* reduce) {
  const double tm = static_cast<double>(x.tile_m), tn = static_cast<double>(x.tile_n);
  const double vector = std::max(1.0, fast_floor(kStoreVectorBytes / out_bytes));
  // Stores stream at DRAM bandwidth shared by every active workgroup; the split reduction's
  // partial reads are shared by the finishing workgroups (one per tile).
  const double per_cu_store_bw = hw.dram_bytes_per_cycle * x.read_bw_fraction / static_cast<double>(x.active_cus);
  const double per_tile_reduce_bw = hw.dram_bytes_per_cycle * x.write_bw_fraction / static_cast<double>(x.tiles);
  const bool in_kernel_reduce = x.splits > 1 && !x.is_parallel_reduction;
  const auto tile_cost = [&](double m, double n, bool is_scalar, double* tile_reduce) {
    const double elements = m * n;
    double check = 0.0;
    if (is_scalar) {
      check = fast_ceil(elements / kLanes) * kBoundsCheckCycles;
    } else if (m != tm || n != tn) {
      check = fast_ceil(elements / (kLanes * vector)) * kBoundsCheckCycles;
    }
    // D is column-major: n column segments of m elements, each whole 128-byte lines.
    const double elem_bytes = in_kernel_reduce ? kPartialBytes : out_bytes;
    const double store_bytes = n * fast_ceil(m * elem_bytes / 128.0) * 128.0;
    const double store = store_bytes * (is_scalar ? kScalarStorePenalty : 1.0) / per_cu_store_bw;
    double r = 0.0;
    if (in_kernel_reduce) {
      const double partials = static_cast<double>(x.splits - 1);
      // Per partial: sync, fp32 partial reads, accumulation; then the output write. No wait for
      // the partner's store (later revisions add it; the baselines agree better without).
      r = partials * kPartialSyncCycles +
          partials * elements * kPartialBytes / per_tile_reduce_bw + partials * elements / kLanes +
          elements * out_bytes / per_tile_reduce_bw;
      if (elements <= 2048) r *= 4.0;  // tiny tiles: the fixed sync cost dominates
    }
    *tile_reduce = r;
    return check + store + r;
  };
  const bool has_interior = x.m >= x.tile_m && x.n >= x.tile_n;
  const bool has_m_edge = x.m % x.tile_m != 0, has_n_edge = x.n % x.tile_n != 0;
  const double m_rest = static_cast<double>(has_m_edge ? x.m % x.tile_m : x.tile_m);
  const double n_rest = static_cast<double>(has_n_edge ? x.n % x.tile_n : x.tile_n);
  double r_interior = 0, r_n = 0, r_m = 0, r_corner = 0;
  // With >= 2 x CUs tiles the M edge is charged on the vector path (see below).
  const bool is_many_tiles = x.tiles >= 2 * hw.num_cus;
  const double interior = has_interior ? tile_cost(tm, tn, false, &r_interior) : 0.0;
  const double n_edge = has_n_edge ? tile_cost(tm, n_rest, false, &r_n) : 0.0;
  const double m_edge = has_m_edge ? tile_cost(m_rest, tn, !is_many_tiles, &r_m) : 0.0;
  const double corner = has_m_edge && has_n_edge ? tile_cost(m_rest, n_rest, true, &r_corner) : 0.0;
  double worst = std::max({interior, n_edge, m_edge, corner});
  *reduce = std::max({r_interior, r_n, r_m, r_corner});
  // Many tiles: only the edge along the longer grid dimension counts, the M edge without the
  // scalar path's per-element bounds checks and 1.1x stores (1488x1568x16x2773: with them our
  // latency for Origami's 512x224x16 pick was 1.53x its own, without 1.04-1.07x). A square grid
  // (one tile per batch included) counts its N edge, or its M edge when it has no N edge:
  // Origami's rankings price both a lone N-edge and a lone M-edge tile (224x128x96x98666: 224x192
  // and 256x128 rank below 224x128) and a square grid with both edges at its N edge
  // (384x384x240x22154).
  if (is_many_tiles) {
    const bool n_edge_counts = x.grid_m > x.grid_n || (x.grid_m == x.grid_n && (has_n_edge || !has_m_edge));
    worst = std::max(interior, n_edge_counts ? n_edge : m_edge);
  }
  return worst;
}

// The separate reduction kernel: launch, then per wave each workgroup (256 threads x VW outputs)
// reads every split's fp32 partial and writes the output at DRAM bandwidth; partials still in L2
// (or MALL, 64 x L2) are read up to 10x (3x) faster with every CU busy.
double parallel_reduction_cycles(const OrigamiHardware& hw, const OrigamiContext& x, double out_bytes) {
  const double vector = std::max(1.0, fast_floor(4.0 / out_bytes));
  const double elements = static_cast<double>(x.m) * static_cast<double>(x.n) * static_cast<double>(x.batch);
  const U64 workgroups = static_cast<U64>(fast_ceil(elements / (kReduceThreads * vector)));
  const U64 active = std::min(workgroups, hw.num_cus);
  const double waves = static_cast<double>(div_up(workgroups, hw.num_cus));
  const double bw = std::max(hw.dram_bytes_per_cycle * hw.bandwidth_fraction(active), 1e-12);
  const double busy = static_cast<double>(active) / static_cast<double>(hw.num_cus);
  const double splits = static_cast<double>(x.splits);
  const double workspace = elements * splits * kPartialBytes;
  double read_bw = bw;
  if (workspace <= hw.l2_bytes) {
    read_bw *= 1.0 + 9.0 * busy;
  } else if (workspace <= hw.l2_bytes * 64.0) {
    read_bw *= 1.0 + 2.0 * busy;
  }
  const double per_wave = static_cast<double>(active) * kReduceThreads * vector;
  const double read = per_wave * splits * kPartialBytes / read_bw, write = per_wave * out_bytes / bw;
  const double accumulate = (splits - 1.0) * per_wave / (static_cast<double>(active) * kLanes);
  return kReduceLaunchCycles + (read + accumulate + write) * waves;
}


}  // namespace

EpilogueCycles OrigamiModel::epilogue_terms(const GemmProblem& problem, const OrigamiContext& x) const {
  const double out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  EpilogueCycles e;
  e.stores = epilogue_cycles(hw_, x, out_bytes, &e.reduce);
  e.reduction_kernel = x.splits > 1 && x.is_parallel_reduction ? parallel_reduction_cycles(hw_, x, out_bytes) : 0.0;
  return e;
}

// One tile's cycles after Origami's compute_tile_latency (origami.md §2.7), then the total:
// (K-iterations - 1) x max(compute, memory) x padding waste, 1.5 x the prologue (one memory
// iteration), 2 x the epilogue (the last compute iteration and the stores), workgroup setup and
// 500 cycles per iteration; timesteps x that, plus the separate reduction kernel. No launch term.
OrigamiModel::Cycles OrigamiModel::cycles(double lc, const OrigamiContext& x, const MemoryCycles& mem,
                                          const EpilogueCycles& epi) const {
  const double lm = mem.total;
  const double utilization = static_cast<double>(x.m) * static_cast<double>(x.n) * static_cast<double>(x.k) /
                             (static_cast<double>(x.grid_m * x.tile_m) * static_cast<double>(x.grid_n * x.tile_n) *
                              static_cast<double>(div_up(x.k, x.tile_k) * x.tile_k));
  const double etp = utilization > 1e-9 ? 1.0 / utilization : 1.0;  // padding waste
  const double iters = static_cast<double>(std::max<std::int64_t>(static_cast<std::int64_t>(x.k_iters) - 1, 1));
  Cycles t;
  const double prologue = lm * etp * x.occupancy_factor;
  double epilogue = (lc * etp + epi.stores) * x.occupancy_factor;
  t.reduce = epi.reduce * x.occupancy_factor * kEpilogueWeight;
  if (x.k % x.tile_k != 0) {
    epilogue += static_cast<double>(x.k % x.tile_k) / static_cast<double>(x.k) * kKPaddingPenalty;
  }
  const double single = std::max(lc, lm) * etp;
  t.compute = lc * etp * iters;
  t.loop = kLoopCyclesPerIter * iters;
  t.epilogue = kEpilogueWeight * epilogue;
  t.memory_excess = (single * iters - t.compute) + kPrologueWeight * prologue;
  t.tile = single * iters + kPrologueWeight * prologue + t.epilogue + kWorkgroupSetupCycles + t.loop;
  t.reduction_kernel = epi.reduction_kernel;
  t.total = static_cast<double>(x.timesteps) * t.tile + t.reduction_kernel;
  t.l2_bound = mem.l2 >= mem.dram && mem.l2 >= mem.mall;
  return t;
}

double OrigamiModel::predict_us(const GemmProblem& problem, const PreparedCandidate& c) const {
  if (!c.is_feasible) return kInfinity;
  const OrigamiContext x = context(problem, c, Mapping::kPredict);
  if (is_rejected(x, element_bytes_of(problem))) return kInfinity;
  return cycles(c.origami.compute_cycles_per_iter, x, memory_cycles(hw_, x, element_bytes_of(problem)), epilogue_terms(problem, x)).total /
         hw_.cycles_per_us;
}

TimeBreakdown OrigamiModel::explain(const GemmProblem& problem, const PreparedCandidate& c) const {
  TimeBreakdown b;
  b.total_us = predict_us(problem, c);
  if (!std::isfinite(b.total_us)) return b;
  const OrigamiContext x = context(problem, c, Mapping::kPredict);
  const Cycles t = cycles(c.origami.compute_cycles_per_iter, x, memory_cycles(hw_, x, element_bytes_of(problem)), epilogue_terms(problem, x));
  const double waves = static_cast<double>(std::max<U64>(x.timesteps, 1));
  const double per_us = hw_.cycles_per_us;
  b.waves = waves;
  b.compute_us = waves * t.compute / per_us;
  (t.l2_bound ? b.l2_us : b.memory_us) = waves * t.memory_excess / per_us;
  b.reduction_us = (waves * t.reduce + t.reduction_kernel) / per_us;
  b.launch_wave_us = b.total_us - b.compute_us - b.l2_us - b.memory_us - b.reduction_us;
  return b;
}

}  // namespace parity::gemm
