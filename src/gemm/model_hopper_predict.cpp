// HopperModel's per-problem prediction, its explanation and the pruned top-k search.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "model_hopper.hpp"
#include "model_math.hpp"

namespace parity::gemm {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxPrunedKeep = 16;
constexpr double kGuard = 1e-9;

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
  if (splits_short_k_loop(t.k, c.inv_tile_k, p.split_k)) return kInfinity;
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
  // Prepared: the 4-norm of compute and full_l2_us (read only when there is a full wave).
  const double full_iter_us = c.full_wave_iter_us;
  // The last wave's boost, as predict computes it.
  const double last_compute_us =
      c.compute_us_per_iter /
      (1.0 + scalars_.tail_boost * (1.0 - last_wave_tiles * c.inv_usable_sms));
  const double last_iter_us = compute_l2_norm_lower(last_compute_us, last_l2_us);
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
                            waves * (iters * c.legacy_latency_us_per_iter + c.legacy_wave_fixed_us +
                                     c.legacy_wave_store_bytes * t.inv_dram_bw);
  const double outputs = t.batch * t.m * t.n;
  const double dram_us =
      (t.operand_bytes + outputs * splits * (splits > 1 ? kLegacyPartialBytes : t.out_bytes)) * t.inv_dram_bw;
  double reduce_us = 0.0;
  if (p.split_k > 1 && c.has_reduce_kernel) {
    reduce_us = scalars_.splitk_overhead_us +
                t.batch * t.m * t.n * (splits * kLegacyPartialBytes + t.out_bytes) * t.inv_dram_bw;
  }
  return (scalars_.launch_us + std::max(compute_us, dram_us) + reduce_us) * kCoarseRoundingMargin;
}

[[gnu::always_inline]] inline HopperCoarseShape HopperModel::coarse_shape(
    const HopperProblemTerms& t, const PreparedCandidate& p) {
  const HopperTerms& c = p.hopper;
  // Iterations per tile: ceil(K / (split tk)) <= ceil(ceil(K / split) / tk).
  return {fast_ceil(t.k * c.inv_split_k * c.inv_tile_k - kGuard), t.m * c.inv_tile_m,
          t.n * c.inv_tile_n};
}

[[gnu::always_inline]] inline double HopperModel::coarse_bound_us(const HopperProblemTerms& t,
                                                                  const PreparedCandidate& p) const {
  return coarse_bound_us(t, p, coarse_shape(t, p));
}

[[gnu::always_inline]] inline double HopperModel::coarse_bound_us(
    const HopperProblemTerms& t, const PreparedCandidate& p, const HopperCoarseShape& shape) const {
  // Launch; the fewest tiles the grid allows, as waves of K-loops at their boosted rates with
  // their fixed costs; the L2 time; the DRAM floor; the split-K reduction: no grid roundings.
  if (!p.is_feasible) return kInfinity;
  const HopperTerms& c = p.hopper;
  const double iters = shape.iters;
  // Tile rows >= max(M / tm, cluster_m), columns likewise: narrow outputs pay their padding.
  const double tiles = std::max(shape.rows, c.min_grid_m) * std::max(shape.cols, c.min_grid_n) *
                       t.batch * c.splits;
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
  // L2, summed over the waves: every tile-iteration's L2 -> SM time. A full wave's K-loop is at
  // least the 4-norm of its compute and L2 -> SM time per iteration (this count of waves stays
  // non-decreasing in the tiles: the norm is at least the compute a boosted wave would add).
  const double loop_us =
      std::max({compute_us + waves * c.exposed_epilogue_us +
                    std::max(0.0, c.min_exposed_store_us - c.exposed_epilogue_us),
                iters * (full_waves * c.full_wave_iter_us + boosted_wave * c.compute_us_per_iter),
                waves * c.pingpong_epilogue_us, tiles * iters * c.l2_us_per_iter, dram_us});
  return (scalars_.launch_us + waves * c.wave_fixed_us + loop_us + c.split_fixed_us +
          t.output_us_per_byte * c.reduce_bytes_per_output) *
         kCoarseRoundingMargin;
}

namespace {

// The `keep` smallest bounds offered so far, ascending; per tile `keep` distinct tiles, each at
// its smallest bound (seeds of fewer tiles left the cutoff infinite, and every candidate exact,
// until the walk had met `keep` tiles).
struct Seeds {
  std::array<double, kMaxPrunedKeep> bound{};
  std::array<std::size_t, kMaxPrunedKeep> index{};
  std::array<std::uint32_t, kMaxPrunedKeep> tile{};
  std::size_t count = 0, keep = 0;
  bool per_tile = false;
  double limit = kInfinity;  // a bound enters only below it (+infinity never does)

  void offer(double value, std::size_t at_index, std::uint32_t at_tile) {
    if (!(value < limit)) return;
    std::size_t at = count;  // the slot this bound takes before moving up
    if (per_tile) {
      std::size_t same_tile = 0;
      while (same_tile < count && tile[same_tile] != at_tile) ++same_tile;
      if (same_tile < count && bound[same_tile] <= value) return;
      at = same_tile;  // replaces its tile's larger bound, if any
    }
    if (at == count) at = count < keep ? count++ : keep - 1;
    while (at > 0 && bound[at - 1] > value) {
      bound[at] = bound[at - 1];
      index[at] = index[at - 1];
      tile[at] = tile[at - 1];
      --at;
    }
    bound[at] = value;
    index[at] = at_index;
    tile[at] = at_tile;
    if (count == keep) limit = bound[keep - 1];
  }
};

}  // namespace

// One pruned search: the problem's terms, the list, the best exact values so far and the cutoff.
struct HopperModel::TopSearch {
  const HopperModel& model;
  const HopperProblemTerms& terms;
  const PreparedCandidate* prepared;
  const std::uint32_t* tile_of;  // nullptr: `keep` counts configurations
  bool is_legacy;
  double tie_epsilon;
  double* predicted_us;
  std::vector<std::uint32_t>* exact_indices;
  TopValues& best;
  std::size_t exact = 0;
  double threshold = kInfinity;  // best's cutoff: it moves only when an exact value enters
  std::array<std::size_t, kMaxPrunedKeep> seeds{};
  std::size_t seed_count = 0;
  std::uint8_t* is_seed;  // per candidate; all 0 again once the search ends (forget_seeds)

  [[gnu::always_inline]] double coarse_bound(std::size_t i) const {
    return is_legacy ? model.legacy_bound_us(terms, prepared[i])
                     : model.coarse_bound_us(terms, prepared[i]);
  }
  void predict_exact(std::size_t i) {
    const double value = is_legacy ? model.predict_legacy<false>(terms, prepared[i], nullptr)
                                   : model.predict<false>(terms, prepared[i], nullptr);
    predicted_us[i] = value;
    ++exact;
    best.add(tile_of != nullptr ? tile_of[i] : 0, value);
    if (exact_indices != nullptr) exact_indices->push_back(static_cast<std::uint32_t>(i));
    threshold = best.cutoff(tie_epsilon);
  }
  void predict_seeds(const Seeds& chosen) {
    seed_count = chosen.count;
    for (std::size_t s = 0; s < seed_count; ++s) {
      seeds[s] = chosen.index[s];
      is_seed[seeds[s]] = 1;
      predict_exact(seeds[s]);
    }
  }
  void forget_seeds() {
    for (std::size_t s = 0; s < seed_count; ++s) is_seed[seeds[s]] = 0;
  }
  // Per tile, a candidate above its tile's held best and above the near-tie group can change
  // neither its tile's entry nor the list: it may stay at a bound above that best (never its
  // tile's choice), even below the cutoff.
  double tile_limit(std::uint32_t tile) const {
    return std::min(threshold, std::max(best.held(tile), best.values[0] * (1.0 + tie_epsilon)));
  }
  // Candidate i, its coarse bound in predicted_us[i]: dropped at that bound, else at its finer
  // bound, else predicted exactly (a seed is predicted already). Inlined: called for every
  // candidate, the call cost a noticeable share of the visit.
  [[gnu::always_inline]] void visit(std::size_t i) {
    if (predicted_us[i] > threshold || predicted_us[i] == kInfinity) return;
    if (threshold != kInfinity && !is_legacy) {
      // (Kernels without TMA skip the tile's limit: their exact prediction costs less.)
      const double limit = tile_of == nullptr ? threshold : tile_limit(tile_of[i]);
      if (predicted_us[i] > limit || is_seed[i]) return;
      const double bound = model.lower_bound_us(terms, prepared[i]);
      if (bound > limit) {
        predicted_us[i] = bound;  // stays at the finer bound
        return;
      }
    } else if (is_seed[i]) {
      return;
    }
    predict_exact(i);
  }
  void search_candidates(std::size_t count, std::size_t keep);
  void search_groups(const HopperGroupIndex& groups, std::size_t keep);
};

// Every candidate's coarse bound; the `keep` smallest (per tile: of `keep` tiles) are the seeds,
// predicted exactly first (a tight cutoff early); then every other candidate is visited.
// (Seeding by the finer bound instead computed it for ~60 of 256 candidates per aligned shape
// and cost more than the tighter seeds saved.)
void HopperModel::TopSearch::search_candidates(std::size_t count, std::size_t keep) {
  Seeds chosen{.count = 0, .keep = keep, .per_tile = tile_of != nullptr};
  for (std::size_t i = 0; i < count; ++i) {
    predicted_us[i] = coarse_bound(i);
    chosen.offer(predicted_us[i], i, tile_of != nullptr ? tile_of[i] : 0);
  }
  predict_seeds(chosen);
  for (std::size_t i = 0; i < count; ++i) visit(i);
}

// The same over groups of one macro tile and split: every group's floor first (one coarse bound
// for its cluster shapes); the seeds are the least coarse bound of each of the `keep` groups of
// least floor (per tile: of `keep` tiles); then a group's members are bounded and visited only
// when its floor is at or below the cutoff. The other members are left unwritten.
void HopperModel::TopSearch::search_groups(const HopperGroupIndex& groups, std::size_t keep) {
  const std::size_t group_count = groups.floor_terms.size();
  const std::uint32_t* const members = groups.members.data();
  const std::uint32_t* const member_begin = groups.member_begin.data();
  thread_local std::vector<double> floors;  // reused: no allocation per selection once warm
  thread_local std::vector<std::uint8_t> is_bounded;
  floors.resize(group_count);
  is_bounded.assign(group_count, 0);
  Seeds chosen_groups{.count = 0, .keep = keep, .per_tile = tile_of != nullptr};
  model.group_floors_us(terms, groups.columns, floors.data());
  for (std::size_t g = 0; g < group_count; ++g) {
    chosen_groups.offer(floors[g], g, tile_of != nullptr ? tile_of[members[member_begin[g]]] : 0);
  }
  const auto bound_members = [&](std::size_t g) {
    // One macro tile and split: the members share the bound's iterations and tile extents.
    is_bounded[g] = 1;
    const HopperCoarseShape shape = coarse_shape(terms, groups.floor_terms[g]);
    for (std::uint32_t m = member_begin[g]; m < member_begin[g + 1]; ++m) {
      predicted_us[members[m]] = model.coarse_bound_us(terms, prepared[members[m]], shape);
    }
  };
  // One seed per chosen group: its member of least coarse bound (the groups hold distinct tiles
  // when per tile).
  Seeds chosen{.count = 0, .keep = chosen_groups.count, .per_tile = false};
  for (std::size_t s = 0; s < chosen_groups.count; ++s) {
    const std::size_t g = chosen_groups.index[s];
    bound_members(g);
    std::size_t least = members[member_begin[g]];
    for (std::uint32_t m = member_begin[g] + 1; m < member_begin[g + 1]; ++m) {
      if (predicted_us[members[m]] < predicted_us[least]) least = members[m];
    }
    if (predicted_us[least] != kInfinity) chosen.offer(predicted_us[least], least, 0);
  }
  predict_seeds(chosen);
  // The groups that can reach the cutoff, in ascending floor: the cutoff and the tiles' held
  // values tighten sooner, and the walk ends at the first floor above the cutoff.
  // Keys are the floors' bits (positive doubles order as their bits; the floors' low bits are
  // clear) with the group in the low bits: one integer sort.
  thread_local std::vector<std::uint64_t> open;
  open.clear();
  for (std::size_t g = 0; g < group_count; ++g) {
    if (floors[g] <= threshold && floors[g] != kInfinity) {
      open.push_back(std::bit_cast<std::uint64_t>(floors[g]) | g);
    }
  }
  std::sort(open.begin(), open.end());
  for (const std::uint64_t key : open) {
    const std::size_t g = key & kGroupMask;
    const double floor = floors[g];
    if (floor > threshold) break;
    // Per tile: every member above its tile's limit stays unwritten.
    if (tile_of != nullptr && floor > tile_limit(tile_of[members[member_begin[g]]])) continue;
    if (!is_bounded[g]) bound_members(g);
    for (std::uint32_t m = member_begin[g]; m < member_begin[g + 1]; ++m) visit(members[m]);
  }
}

std::size_t HopperModel::predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                        std::size_t count, std::size_t keep, double tie_epsilon,
                                        double* predicted_us, double* cutoff_us) const {
  return predict_top_tiles_us(problem, prepared, nullptr, count, keep, tie_epsilon, predicted_us,
                              cutoff_us, nullptr, nullptr);
}

std::size_t HopperModel::predict_top_tiles_us(const GemmProblem& problem,
                                              const PreparedCandidate* prepared,
                                              const std::uint32_t* tile_of, std::size_t count,
                                              std::size_t keep, double tie_epsilon,
                                              double* predicted_us, double* cutoff_us,
                                              std::vector<std::uint32_t>* exact_indices,
                                              const HopperGroupIndex* groups) const {
  // One alignment class per list: all candidates run with TMA or none does. Kernels without TMA
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
  thread_local TopValues best;  // reused: no allocation per selection once warm
  best.reset(keep, tile_of != nullptr);
  thread_local std::vector<std::uint8_t> is_seed;
  if (is_seed.size() < count) is_seed.resize(count, 0);
  TopSearch search{*this,        terms, prepared, tile_of, is_legacy, tie_epsilon, predicted_us,
                   exact_indices, best,  0,        kInfinity, {},   0,           is_seed.data()};
  // The groups leave members unwritten: only a caller that reads the exact list may use them.
  if (groups != nullptr && exact_indices != nullptr && !is_legacy &&
      groups->members.size() == count && groups->floor_terms.size() <= kGroupMask + 1) {
    search.search_groups(*groups, keep);
  } else {
    search.search_candidates(count, keep);
  }
  search.forget_seeds();
  if (cutoff_us != nullptr) *cutoff_us = search.threshold;
  return search.exact;
}

namespace {

// The terms coarse_bound_us grows with, taken at their least over a group's members (the inverse
// of the usable SMs: the most SMs; the cluster extents: the fewest padded tiles).
constexpr double HopperTerms::*kLowestInGroup[] = {
    &HopperTerms::min_grid_m,           &HopperTerms::min_grid_n,
    &HopperTerms::inv_usable_sms,       &HopperTerms::compute_us_per_iter,
    &HopperTerms::l2_us_per_iter,       &HopperTerms::min_exposed_store_us,
    &HopperTerms::exposed_epilogue_us,  &HopperTerms::pingpong_epilogue_us,
    &HopperTerms::store_bytes_per_tile, &HopperTerms::wave_fixed_us,
    &HopperTerms::split_fixed_us,       &HopperTerms::reduce_bytes_per_output,
    &HopperTerms::full_wave_iter_us};

}  // namespace

HopperGroupIndex HopperModel::index_groups(const PreparedCandidate* prepared, std::size_t count) {
  // Members of one macro tile and split; the floor terms take each member's extreme in the
  // direction that lowers coarse_bound_us (it grows with the padded tile count, the wave count
  // per usable SM, the compute and L2 time per iteration and every fixed or per-byte term).
  HopperGroupIndex index;
  std::vector<std::uint32_t> group_of(count);
  std::vector<std::uint32_t> sizes;
  for (std::size_t i = 0; i < count; ++i) {
    const PreparedCandidate& c = prepared[i];
    std::size_t g = 0;
    while (g < index.floor_terms.size() &&
           !(macro_tile_key(index.floor_terms[g]) == macro_tile_key(c) &&
             index.floor_terms[g].split_k == c.split_k)) {
      ++g;
    }
    if (g == index.floor_terms.size()) {
      index.floor_terms.push_back(c);
      sizes.push_back(0);
    }
    group_of[i] = static_cast<std::uint32_t>(g);
    ++sizes[g];
    PreparedCandidate& floor = index.floor_terms[g];
    floor.is_feasible = floor.is_feasible || c.is_feasible;
    for (double HopperTerms::*term : kLowestInGroup) {
      floor.hopper.*term = std::min(floor.hopper.*term, c.hopper.*term);
    }
  }
  index.member_begin.assign(sizes.size() + 1, 0);
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    index.member_begin[g + 1] = index.member_begin[g] + sizes[g];
  }
  index.members.resize(count);
  std::vector<std::uint32_t> fill(index.member_begin.begin(), index.member_begin.end() - 1);
  for (std::size_t i = 0; i < count; ++i) {
    index.members[fill[group_of[i]]++] = static_cast<std::uint32_t>(i);
  }
  HopperGroupIndex::FloorColumns& columns = index.columns;
  for (const PreparedCandidate& floor : index.floor_terms) {
    const HopperTerms& c = floor.hopper;
    for (const auto& [column, value] : {
             std::pair{&columns.inv_split_k, c.inv_split_k},
             {&columns.inv_tile_k, c.inv_tile_k},
             {&columns.inv_tile_m, c.inv_tile_m},
             {&columns.inv_tile_n, c.inv_tile_n},
             {&columns.min_grid_m, c.min_grid_m},
             {&columns.min_grid_n, c.min_grid_n},
             {&columns.splits, c.splits},
             {&columns.inv_usable_sms, c.inv_usable_sms},
             {&columns.compute_us_per_iter, c.compute_us_per_iter},
             {&columns.exposed_epilogue_us, c.exposed_epilogue_us},
             {&columns.min_exposed_store_us, c.min_exposed_store_us},
             {&columns.full_wave_iter_us, c.full_wave_iter_us},
             {&columns.pingpong_epilogue_us, c.pingpong_epilogue_us},
             {&columns.l2_us_per_iter, c.l2_us_per_iter},
             {&columns.store_bytes_per_tile, c.store_bytes_per_tile},
             {&columns.wave_fixed_us, c.wave_fixed_us},
             {&columns.split_fixed_us, c.split_fixed_us},
             {&columns.reduce_bytes_per_output, c.reduce_bytes_per_output},
             {&columns.infeasible, floor.is_feasible ? 0.0 : 1.0}}) {
      column->push_back(value);
    }
  }
  return index;
}

}  // namespace parity::gemm
