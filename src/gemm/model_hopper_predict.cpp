// HopperModel's per-problem prediction, its explanation and the pruned top-k search.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "model_hopper.hpp"
#include "model_math.hpp"

namespace parity::gemm {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxPrunedKeep = 16;
constexpr double kCoarseRoundingMargin = 1.0 - 1e-12;
constexpr double kGuard = 1e-9;

inline double compute_l2_norm(double compute_us, double l2_us) {
  const double c2 = compute_us * compute_us, l2 = l2_us * l2_us;
  return std::sqrt(std::sqrt(c2 * c2 + l2 * l2));
}

// One wave's inputs: `active` concurrent tiles of `active_splits` K-splits over a window of
// rows_used x cols_used tile positions.
struct WaveShape {
  double active, active_splits, rows_used, cols_used, inv_bw_fraction, compute_us;
};

}  // namespace

// Long on purpose: the model's time equation term by term, in the order docs/gemm_model.md
// gives it; split up it would no longer read as the equation.
template <bool kExplain>
double HopperModel::predict(const HopperProblemTerms& t, const PreparedCandidate& p,
                            TimeBreakdown* breakdown) const {
  const HopperTerms& c = p.hopper;
  const HopperGrid grid = hopper_grid(t, p);
  const double splits = p.split_k;
  const double sms = c.usable_sms;
  const double iters = grid.iters;
  const double compulsory_per_tile_iter = t.operand_bytes / (grid.tiles * iters);
  // Batched problems stack their grids along M (distinct operands per batch entry).
  const double grid_rows = grid.grid_m * t.batch;

  // One wave: K-loop at the slower of DRAM and the 4-norm of compute and L2 -> SM time, plus the
  // pipeline fill, the output store and the fixed per-tile cost. The window of concurrently
  // running tiles touches rows_used x cols_used tile positions per split (the best raster:
  // cols/rows ~ sqrt(tile_n/tile_m)); each split reads its own K range. Warp-specialised
  // persistent kernels overlap one tile's epilogue with the next tile's loads: the output store
  // costs bandwidth inside the K-loop, and only the first pipeline fill and the last epilogue are
  // exposed (added once, below).
  double exposed_fill_us = 0.0, exposed_store_us = 0.0;
  const double inv_iters = 1.0 / iters;
  const auto wave_us = [&](const WaveShape& w, double count) {
    const double l2_us = w.active * p.l2_bytes_per_iter * t.inv_l2_bw;
    const double window_bytes = w.active_splits * (w.rows_used * c.a_bytes_per_row_iter +
                                                   w.cols_used * c.b_bytes_per_col_iter);
    const double store_bytes = w.active * c.store_bytes_per_tile;
    const double dram_bytes = (1.0 - t.reuse) * window_bytes +
                              t.reuse * w.active * compulsory_per_tile_iter + store_bytes * inv_iters;
    const double dram_us = dram_bytes * t.inv_dram_bw * w.inv_bw_fraction;
    const double memory_us = std::max(l2_us, dram_us);
    const double norm_us = compute_l2_norm(w.compute_us, l2_us);
    const double iter_us = std::max(dram_us, norm_us);
    // A pipeline of n iterations costs n max(memory, compute) + min(memory, compute): only the
    // shorter stage of the first iteration is exposed.
    exposed_fill_us = std::max(exposed_fill_us, std::min(memory_us, w.compute_us));
    // The last wave's store has no next tile to hide behind; the part of it that the K-loop
    // already paid as bandwidth beyond compute is not charged again.
    const double store_us = store_bytes * t.inv_dram_bw * w.inv_bw_fraction;
    exposed_store_us = std::max(0.0, store_us - iters * std::max(0.0, memory_us - w.compute_us));
    // A cooperative tile's epilogue stalls both consumer warpgroups but not the TMA producer: the
    // tile costs max(memory stream, K-loop compute + epilogue).
    const double loop_us = iters * iter_us;
    const double tile_us = std::max(loop_us, iters * w.compute_us + c.exposed_epilogue_us);
    const double pingpong_us = std::max(0.0, c.pingpong_epilogue_us - loop_us);
    if constexpr (kExplain) {
      breakdown->compute_us += count * iters * w.compute_us;
      breakdown->l2_us += count * iters * (std::min(norm_us, iter_us) - w.compute_us);
      breakdown->memory_us += count * iters * (iter_us - std::min(norm_us, iter_us));
      breakdown->launch_wave_us +=
          count * (tile_us - loop_us + scalars_.tile_overhead_us + pingpong_us);
    }
    return tile_us + scalars_.tile_overhead_us + pingpong_us;
  };
  const auto window = [&](double positions, double rows_hint, double& rows_used, double& cols_used) {
    rows_used = std::clamp(rows_hint, 1.0, grid_rows);
    cols_used = std::min(grid.grid_n, fast_ceil(positions / rows_used));
    rows_used = std::min(grid_rows, fast_ceil(positions / cols_used));
  };

  const double full_waves = fast_floor(grid.tiles * c.inv_usable_sms + kGuard);
  const double last_wave_tiles = grid.tiles - full_waves * sms;
  double total_us = scalars_.launch_us;
  if (full_waves > 0) {
    // The full-wave window was prepared once; recompute only when the grid clips it.
    double rows_used = c.full_wave_rows_used, cols_used = c.full_wave_cols_used;
    if (c.full_wave_rows > grid_rows || cols_used > grid.grid_n || rows_used > grid_rows) {
      window(c.full_wave_positions, c.full_wave_rows, rows_used, cols_used);
    }
    total_us += full_waves * wave_us({sms, c.full_wave_splits, rows_used, cols_used,
                                      c.full_wave_inv_bw_fraction, c.compute_us_per_iter},
                                     full_waves);
  }
  if (last_wave_tiles > 0) {
    const double active_splits = std::min(splits, last_wave_tiles);
    const double positions = std::max(1.0, last_wave_tiles / active_splits);
    double rows_used = 0, cols_used = 0;
    window(positions, std::sqrt(positions) * c.window_aspect, rows_used, cols_used);
    const double inv_bw_fraction = std::max(1.0, t.saturating_sms / last_wave_tiles);
    const double busy_fraction = last_wave_tiles * c.inv_usable_sms;
    const double compute_us =
        c.compute_us_per_iter / (1.0 + scalars_.tail_boost * (1.0 - busy_fraction));
    total_us += wave_us({last_wave_tiles, active_splits, rows_used, cols_used, inv_bw_fraction,
                         compute_us},
                        1.0);
  }
  total_us += exposed_fill_us + exposed_store_us;
  double reduce_us = 0.0;
  if (p.split_k > 1) {
    // Separate reduction kernel: reads s fp32 partials, writes D.
    const double reduce_bytes = t.batch * t.m * t.n * (splits * 4.0 + t.out_bytes);
    reduce_us = scalars_.splitk_overhead_us + reduce_bytes * t.inv_dram_bw;
    total_us += reduce_us;
  }
  if constexpr (kExplain) {
    breakdown->launch_wave_us += scalars_.launch_us + exposed_fill_us;
    breakdown->memory_us += exposed_store_us;
    breakdown->reduction_us = reduce_us;
    breakdown->waves = full_waves + (last_wave_tiles > 0 ? 1.0 : 0.0);
  }
  return total_us;
}

template double HopperModel::predict<true>(const HopperProblemTerms&, const PreparedCandidate&,
                                           TimeBreakdown*) const;
template double HopperModel::predict<false>(const HopperProblemTerms&, const PreparedCandidate&,
                                            TimeBreakdown*) const;

// Inlined into predict_top_us, its only caller: called for every candidate, the call costs a
// noticeable share of the bound itself.
[[gnu::always_inline]] inline double HopperModel::lower_bound_us(const HopperProblemTerms& t,
                                                                 const PreparedCandidate& p) const {
  // predict without the window's raster shape: every wave's K-loop is at least the 4-norm of its
  // compute and L2 -> SM time per iteration (the same products as the exact wave), the exposed
  // fill at least a wave's min(L2 time, compute), and every dropped term is >= 0. A slightly
  // shrunk sum absorbs the different order of additions.
  const HopperTerms& c = p.hopper;
  const HopperGrid grid = hopper_grid(t, p);
  const double iters = grid.iters;
  const double full_waves = fast_floor(grid.tiles * c.inv_usable_sms + kGuard);
  const double last_wave_tiles = grid.tiles - full_waves * c.usable_sms;
  const bool has_last_wave = last_wave_tiles > 0;
  const double full_l2_us = full_waves > 0 ? c.usable_sms * c.l2_us_per_iter : 0.0;
  const double last_l2_us = last_wave_tiles * c.l2_us_per_iter;
  const double full_iter_us = compute_l2_norm(c.compute_us_per_iter, full_l2_us);
  // The last wave's boost, as predict computes it.
  const double last_compute_us =
      c.compute_us_per_iter /
      (1.0 + scalars_.tail_boost * (1.0 - last_wave_tiles * c.inv_usable_sms));
  const double last_iter_us = compute_l2_norm(last_compute_us, last_l2_us);
  // Each wave streams at least its tiles' share of the compulsory reads (reuse x operand bytes
  // over all tiles), of the window re-reads ((1 - reuse) x window bytes: a wave's window holds at
  // least tm / grid_n + tn / grid_rows operand rows per tile) and their outputs, at the wave's
  // bandwidth fraction.
  const double window_us_per_tile =
      t.window_us_per_byte * iters *
      (c.a_bytes_per_row_iter / grid.grid_n + c.b_bytes_per_col_iter / (grid.grid_m * t.batch));
  const double dram_us_per_tile =
      (t.reuse * t.operand_bytes / grid.tiles + c.store_bytes_per_tile) * t.inv_dram_bw +
      window_us_per_tile;
  const double full_dram_us = c.usable_sms * dram_us_per_tile * c.full_wave_inv_bw_fraction;
  const double last_dram_us = dram_us_per_tile * std::max(last_wave_tiles, t.saturating_sms);
  // Each wave's K-loop and cooperative epilogue cost at least max(iters x 4-norm, iters x compute
  // + epilogue); a ping-pong tile max(K-loop, epilogue).
  const double full_loop_us =
      std::max({iters * full_iter_us, iters * c.compute_us_per_iter + c.exposed_epilogue_us,
                full_dram_us, c.pingpong_epilogue_us});
  const double last_loop_us =
      std::max({iters * last_iter_us, iters * last_compute_us + c.exposed_epilogue_us,
                last_dram_us, c.pingpong_epilogue_us});
  // The last wave's store is exposed beyond what its memory-bound K-loop paid: that wave's K-loop
  // and store cost at least iters x compute + store.
  const double store_us =
      c.store_bytes_per_tile * t.inv_dram_bw *
      (has_last_wave ? std::max(last_wave_tiles, t.saturating_sms)
                     : c.usable_sms * c.full_wave_inv_bw_fraction);
  const double exposed_store_us =
      has_last_wave ? std::max(0.0, iters * last_compute_us + store_us - last_loop_us)
                    : std::max(0.0, iters * c.compute_us_per_iter + store_us - full_loop_us);
  const double total_us =
      scalars_.launch_us + (full_waves + (has_last_wave ? 1.0 : 0.0)) * c.wave_fixed_us +
      full_waves * full_loop_us + (has_last_wave ? last_loop_us : 0.0) + exposed_store_us +
      std::max(std::min(full_l2_us, c.compute_us_per_iter), std::min(last_l2_us, last_compute_us)) +
      c.split_fixed_us + t.output_us_per_byte * c.reduce_bytes_per_output;
  return total_us * kCoarseRoundingMargin;
}

[[gnu::always_inline]] inline double HopperModel::legacy_bound_us(const HopperProblemTerms& t,
                                                                  const PreparedCandidate& p) const {
  // predict_legacy's terms without roundings: at least max(1, tiles / slots) waves, each at
  // least K / (split tk) iterations with its latency part and fixed cost; CTA-iterations at least
  // max(iterations, M N K batch / (tm tn tk SMs)); the operands read once and every output (or
  // partial) stored; the same split-K reduction. A slightly shrunk sum absorbs the different
  // order of additions.
  if (!p.is_feasible) return kInfinity;
  const HopperTerms& c = p.hopper;
  const double splits = p.split_k;
  const double iters = std::max(1.0, t.k * c.inv_split_k * c.inv_tile_k);
  const double waves = std::max(1.0, t.m * t.n * t.batch * c.legacy_waves_per_output);
  // Resident CTAs summed over the waves are at least max(1, tiles / SMs) (the last wave holds at
  // least one CTA per SM it uses): iterations x residents >= both terms below.
  const double busy_iters = std::max(iters, t.m * t.n * t.k * t.batch * c.legacy_iters_per_volume);
  const double compute_us = busy_iters * c.compute_us_per_iter +
                            waves * (iters * c.legacy_latency_us_per_iter + c.legacy_wave_fixed_us);
  const double outputs = t.batch * t.m * t.n;
  const double dram_us =
      (t.operand_bytes + outputs * splits * (splits > 1 ? c.partial_bytes : t.out_bytes)) * t.inv_dram_bw;
  double reduce_us = 0.0;
  if (p.split_k > 1 && c.has_reduce_kernel) {
    reduce_us = scalars_.splitk_overhead_us +
                t.batch * t.m * t.n * (splits * c.partial_bytes + t.out_bytes) * t.inv_dram_bw;
  }
  return (scalars_.launch_us + std::max(compute_us, dram_us) + reduce_us) * kCoarseRoundingMargin;
}

[[gnu::always_inline]] inline double HopperModel::coarse_bound_us(const HopperProblemTerms& t,
                                                                  const PreparedCandidate& p) const {
  // Launch; the fewest tiles the grid allows, as waves of K-loops at their boosted rates with
  // their fixed costs; the L2 time; the DRAM floor; the split-K reduction: no grid roundings.
  if (!p.is_feasible) return kInfinity;
  const HopperTerms& c = p.hopper;
  // Iterations per tile: ceil(K / (split tk)) <= ceil(ceil(K / split) / tk).
  const double iters = fast_ceil(t.k * c.inv_split_k * c.inv_tile_k - kGuard);
  // Tile rows >= max(M / tm, cluster_m), columns likewise: narrow outputs pay their padding.
  const double tiles = std::max(t.m * c.inv_tile_m, c.min_grid_m) *
                       std::max(t.n * c.inv_tile_n, c.min_grid_n) * t.batch * c.splits;
  // A grid's K-loop time, counted in full waves (the last one at its boosted rate 1 / (1 +
  // tail_boost (1 - busy))), never falls when tiles are added, so the fewest tiles bound it; the
  // guard keeps a whole number of waves from gaining a boosted one.
  const double waves_exact = tiles * c.inv_usable_sms - kGuard;
  const double full_waves = fast_floor(waves_exact);
  const double busy_fraction = waves_exact - full_waves;
  const bool has_last_wave = busy_fraction > 0;
  const double waves = has_last_wave ? full_waves + 1.0 : full_waves;
  const double boosted_wave =
      has_last_wave ? 1.0 / (1.0 + scalars_.tail_boost * (1.0 - busy_fraction)) : 0.0;
  const double compute_us = iters * c.compute_us_per_iter * (full_waves + boosted_wave);
  // Per wave max(memory, compute + cooperative epilogue, ping-pong epilogue): the sums bound the
  // sum of the maxima. The last wave's K-loop and exposed store cost at least its compute plus a
  // store at no more than saturating_sms tiles' share of the bandwidth. DRAM, summed over the
  // waves: the operand floor and every tile's output, at the waves' bandwidth fractions.
  const double dram_us =
      t.operand_floor_us + std::max(tiles, t.saturating_sms) * c.store_bytes_per_tile * t.inv_dram_bw;
  // L2, summed over the waves: every tile-iteration's L2 -> SM time.
  const double loop_us =
      std::max({compute_us + waves * c.exposed_epilogue_us +
                    std::max(0.0, c.min_exposed_store_us - c.exposed_epilogue_us),
                waves * c.pingpong_epilogue_us, tiles * iters * c.l2_us_per_iter, dram_us});
  return (scalars_.launch_us + waves * c.wave_fixed_us + loop_us + c.split_fixed_us +
          t.output_us_per_byte * c.reduce_bytes_per_output) *
         kCoarseRoundingMargin;
}

std::size_t HopperModel::predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                        std::size_t count, std::size_t keep, double tie_epsilon,
                                        double* predicted_us, double* cutoff_us) const {
  return predict_top_tiles_us(problem, prepared, nullptr, count, keep, tie_epsilon, predicted_us,
                              cutoff_us, nullptr);
}

std::size_t HopperModel::predict_top_tiles_us(const GemmProblem& problem,
                                              const PreparedCandidate* prepared,
                                              const std::uint32_t* tile_of, std::size_t count,
                                              std::size_t keep, double tie_epsilon,
                                              double* predicted_us, double* cutoff_us,
                                              std::vector<std::uint32_t>* exact_indices) const {
  // tile_of == nullptr: `keep` counts configurations. One alignment class per list: all candidates run with TMA or none does. Kernels without TMA
  // have one rounding-free bound that serves as both the coarse and the finer one.
  const bool is_legacy = count > 0 && !prepared[0].uses_tma;
  if (exact_indices != nullptr) exact_indices->clear();
  if (keep == 0 || keep > kMaxPrunedKeep || count < keep) {
    predict_all_us(problem, prepared, count, predicted_us);
    if (exact_indices != nullptr) {
      for (std::size_t i = 0; i < count; ++i) exact_indices->push_back(static_cast<std::uint32_t>(i));
    }
    if (cutoff_us != nullptr) {
      // Per tile: everything is exact, so every candidate is a candidate for the top.
      *cutoff_us = tile_of != nullptr ? kInfinity : exact_cutoff_us(predicted_us, count, keep, tie_epsilon);
    }
    return count;
  }
  const HopperProblemTerms terms = problem_terms(problem);
  // Pass 1: every candidate's coarse bound; remember the `keep` smallest (ascending) as seeds.
  // (Seeding by the finer bound instead computed it for ~60 of 256 candidates per aligned shape
  // and cost more than the tighter seeds saved.) Per tile the seeds are `keep` distinct tiles,
  // each at its smallest bound: seeds of fewer tiles left the cutoff infinite, and every
  // candidate exact, until the walk had met `keep` tiles.
  std::array<double, kMaxPrunedKeep> seed_bound{};
  std::array<std::size_t, kMaxPrunedKeep> seed_index{};
  std::size_t seeds = 0;
  double seed_limit = kInfinity;  // a bound enters the seeds only below it (+infinity never does)
  for (std::size_t i = 0; i < count; ++i) {
    const double bound =
        is_legacy ? legacy_bound_us(terms, prepared[i]) : coarse_bound_us(terms, prepared[i]);
    predicted_us[i] = bound;
    if (!(bound < seed_limit)) continue;
    std::size_t at = seeds;  // the slot this bound takes before moving up
    if (tile_of != nullptr) {
      std::size_t same_tile = 0;
      while (same_tile < seeds && tile_of[seed_index[same_tile]] != tile_of[i]) ++same_tile;
      if (same_tile < seeds && seed_bound[same_tile] <= bound) continue;
      at = same_tile;  // replaces its tile's larger bound, if any
    }
    if (at == seeds) at = seeds < keep ? seeds++ : keep - 1;
    while (at > 0 && seed_bound[at - 1] > bound) {
      seed_bound[at] = seed_bound[at - 1];
      seed_index[at] = seed_index[at - 1];
      --at;
    }
    seed_bound[at] = bound;
    seed_index[at] = i;
    if (seeds == keep) seed_limit = seed_bound[keep - 1];
  }
  // Pass 2: the most promising candidates exactly first (a tight threshold early), then every
  // other candidate whose bound does not already rule it out. `best` holds the smallest exact
  // predictions so far (per tile: one per tile, at its best so far).
  thread_local TopValues best;  // reused: no allocation per selection once warm
  best.reset(keep, tile_of != nullptr);
  std::size_t exact = 0;
  const auto predict_exact = [&](std::size_t i) {
    const double value = is_legacy ? predict_legacy<false>(terms, prepared[i], nullptr)
                                   : predict<false>(terms, prepared[i], nullptr);
    predicted_us[i] = value;
    ++exact;
    best.add(tile_of != nullptr ? tile_of[i] : 0, value);
    if (exact_indices != nullptr) exact_indices->push_back(static_cast<std::uint32_t>(i));
  };
  for (std::size_t s = 0; s < seeds; ++s) predict_exact(seed_index[s]);
  // Seeds in index order, walked beside i: skipping them costs a comparison per candidate at or
  // below the cutoff.
  std::array<std::size_t, kMaxPrunedKeep> seeds_in_order = seed_index;
  std::sort(seeds_in_order.begin(), seeds_in_order.begin() + static_cast<std::ptrdiff_t>(seeds));
  std::size_t next_seed = 0;
  // The cutoff moves only when an exact prediction enters `best`.
  double threshold = best.cutoff(tie_epsilon);
  for (std::size_t i = 0; i < count; ++i) {
    // Most candidates stop here: a finite cutoff also drops the infeasible ones (+infinity).
    if (predicted_us[i] > threshold || predicted_us[i] == kInfinity) continue;
    while (next_seed < seeds && seeds_in_order[next_seed] < i) ++next_seed;
    if (next_seed < seeds && seeds_in_order[next_seed] == i) continue;  // predicted already
    if (threshold != kInfinity && !is_legacy) {
      // Per tile, a candidate above its tile's held best and above the near-tie group can change
      // neither its tile's entry nor the list: it stays at its bound (above that best, so never
      // its tile's choice), even below the cutoff. (Kernels without TMA: their exact prediction
      // costs less than the lookup.)
      const double limit =
          tile_of == nullptr
              ? threshold
              : std::min(threshold, std::max(best.held(tile_of[i]),
                                             best.values[0] * (1.0 + tie_epsilon)));
      if (predicted_us[i] > limit) continue;
      const double bound = lower_bound_us(terms, prepared[i]);
      if (bound > limit) {
        predicted_us[i] = bound;  // stays at the finer bound
        continue;
      }
    }
    predict_exact(i);
    threshold = best.cutoff(tie_epsilon);
  }
  if (cutoff_us != nullptr) {
    *cutoff_us = best.cutoff(tie_epsilon);
  }
  return exact;
}

}  // namespace parity::gemm
