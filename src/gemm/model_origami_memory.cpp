// Origami's memory stage (gemm.cpp predict_workgroup_mapping, count_unique_range,
// count_unique_tiles, estimate_cache_hit_rates, compute_memory_latency), re-derived in our own
// code: which tiles each XCD runs in the first timestep, the per-operand hit rates that follow,
// and the per-K-iteration cycles at L2, MALL and DRAM.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "model_math.hpp"
#include "model_origami.hpp"
#include "model_origami_terms.hpp"

namespace parity::gemm {
namespace {

using U64 = std::uint64_t;

U64 div_up(U64 a, U64 b) { return b == 0 ? 0 : (a + b - 1) / b; }
double clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

// Origami's cache-model constants (heuristics.hpp heuristic_defaults_t).
using origami_terms::kL2LineBytes;
constexpr double kMallColdFloor = 0.85, kL2ColdFloor = 0.75, kDepthSq = 2.0;
constexpr double kDramLatencyCycles = 200.0;

// Unique slab rows ("fast", along M for a row-major WGM) and columns touched by the MN range
// [first, last] of a WGM walk over g_fast x g_slow tiles (count_unique_range's MN part).
void unique_mn(U64 g_fast, U64 g_slow, U64 wgm, U64 first, U64 last, U64* fast, U64* slow) {
  const U64 width = std::min(wgm, g_slow);
  const U64 per_slab = g_fast * width, full_slabs = g_slow / width;
  const U64 full_cover = full_slabs * per_slab, rem_width = g_slow - full_slabs * width;
  const auto locate = [&](U64 mn, U64* f, U64* s) {
    if (mn < full_cover) {
      const U64 offset = mn % per_slab;
      *f = offset / width;
      *s = (mn / per_slab) * width + offset % width;
    } else if (rem_width > 0) {
      const U64 offset = mn - full_cover;
      *f = offset / rem_width;
      *s = full_slabs * width + offset % rem_width;
    } else {
      *f = g_fast - 1;
      *s = g_slow - 1;
    }
  };
  U64 first_fast, first_slow, last_fast, last_slow;
  locate(first, &first_fast, &first_slow);
  locate(last, &last_fast, &last_slow);
  const U64 first_slab = first_slow / width, last_slab = last_slow / width;
  if (first_slab == last_slab) {
    *fast = last_fast - first_fast + 1;
    *slow = *fast > 1 ? width : last_slow - first_slow + 1;
  } else {
    *fast = last_slab - first_slab > 1 ? g_fast
                                       : std::min(g_fast, (g_fast - first_fast) + (last_fast + 1));
    // The bounding box of the slabs touched (first slab start to last slab end).
    *slow = std::min((last_slab + 1) * width, g_slow) - first_slab * width;
  }
  *fast = std::min(*fast, g_fast);
  *slow = std::min(*slow, g_slow);
}

}  // namespace

UniqueTiles count_unique_range(const UniqueTiles& grid, std::int64_t wgm, U64 start, U64 count) {
  UniqueTiles unique;
  const U64 end = start + count - 1;
  const U64 per_batch = grid.m * grid.n * grid.k;
  unique.b = std::min(end / per_batch - start / per_batch + 1, grid.b);
  const U64 first_in = start % per_batch, last_in = end % per_batch;
  const U64 first_mn = first_in / grid.k, last_mn = last_in / grid.k;
  unique.k = first_mn == last_mn && unique.b == 1
                 ? std::min(last_in % grid.k - first_in % grid.k + 1, grid.k)
                 : grid.k;
  if (unique.b > 1 || div_up(count, grid.k) >= grid.m * grid.n) {
    unique.m = grid.m;
    unique.n = grid.n;
    return unique;
  }
  const bool is_col_major = wgm < 0;
  const U64 width = static_cast<U64>(wgm < 0 ? -wgm : wgm);
  if (width == 0) return unique;
  U64 fast = 0, slow = 0;
  unique_mn(is_col_major ? grid.n : grid.m, is_col_major ? grid.m : grid.n, width, first_mn,
            last_mn, &fast, &slow);
  unique.m = is_col_major ? slow : fast;
  unique.n = is_col_major ? fast : slow;
  return unique;
}

UniqueTiles count_unique_tiles(const UniqueTiles& grid, const WorkgroupMapping& mapping,
                               U64 num_cus, U64 num_xcds, U64 xcd_id) {
  if (num_cus == 0 || num_xcds == 0 || grid.m == 0 || grid.n == 0 || grid.k == 0) return {};
  const U64 total = grid.k * grid.m * grid.n * grid.b;
  const U64 cus_per_xcd = num_cus / num_xcds, tiles_per_xcd = total / num_xcds;
  const U64 per_timestep = std::min(cus_per_xcd, tiles_per_xcd);
  if (mapping.xcd_remap > 1) {
    // Contiguous: XCD x owns the block [x tiles_per_xcd, (x + 1) tiles_per_xcd) of the walk.
    const U64 start = xcd_id * tiles_per_xcd;
    const U64 count = std::min(per_timestep, start < start + tiles_per_xcd ? tiles_per_xcd : 0);
    if (count == 0) return {};
    return count_unique_range(grid, mapping.wgm, start, count);
  }
  // Round-robin: XCD x runs tiles x, x + X, x + 2X, ...
  const U64 first = xcd_id;
  if (first >= total) return {};
  const U64 count = std::min(cus_per_xcd, (total - first + num_xcds - 1) / num_xcds);
  if (count == 0) return {};
  if (grid.k >= num_xcds) {
    // Splits a multiple of X: the MN tiles are consecutive, K is strided (a reduced-K grid).
    const UniqueTiles reduced{grid.k / num_xcds, grid.m, grid.n, grid.b};
    const U64 reduced_total = reduced.k * reduced.m * reduced.n * reduced.b;
    const U64 rcount = std::min(per_timestep, reduced_total);
    if (rcount == 0) return {};
    UniqueTiles unique = count_unique_range(reduced, mapping.wgm, 0, rcount);
    unique.k = std::min(unique.k, reduced.k);
    return unique;
  }
  // Small grids: the stride jumps across batches (gcd analysis).
  UniqueTiles unique;
  const U64 gcd_k = std::gcd(num_xcds, grid.k);
  unique.k = std::min(count, grid.k / gcd_k);
  const U64 mn = grid.m * grid.n;
  const U64 mn_stride = num_xcds / gcd_k;
  U64 unique_mn_count = std::min(count / unique.k, mn / std::gcd(mn_stride, mn));
  if (unique_mn_count == 0) unique_mn_count = 1;
  const U64 per_batch = grid.m * grid.n * grid.k;
  U64 batches = 0, previous = ~U64{0};
  for (U64 i = 0; i < count; ++i) {
    const U64 b = (first + i * num_xcds) / per_batch;
    if (b != previous) ++batches, previous = b;
  }
  unique.b = std::min(batches, grid.b);
  if (unique_mn_count >= mn) {
    unique.m = grid.m;
    unique.n = grid.n;
  } else if (mapping.wgm != 0) {
    unique.m = std::min(unique_mn_count, grid.m);
    unique.n = std::min(unique_mn_count, grid.n);
  }
  return unique;
}

WorkgroupMapping predict_workgroup_mapping(const OrigamiHardware& hw, const OrigamiContext& ctx,
                                           double element_bytes) {
  const U64 xcds = hw.num_xcds, per_xcd = hw.cus_per_xcd;
  const U64 gm = ctx.grid_m, gn = ctx.grid_n, mts = gm * gn;
  if (ctx.batch > 1) {
    if (mts == 1 || mts * ctx.batch <= xcds || mts % xcds == 0) return {0, 0, 1};
    return {0, xcds, 1};
  }
  const U64 remap = ctx.splits % xcds == 0 || mts <= xcds ? 0 : xcds;
  if (remap == 0 || gm == 1 || gn == 1) return {0, remap, 1};
  const U64 per_xcd_wgs = std::min(div_up(mts, xcds), per_xcd);
  if (per_xcd_wgs >= per_xcd / 2 && gn <= 8) return {0, remap, static_cast<std::int64_t>(gn)};
  const U64 cap = std::min(gn, per_xcd_wgs / 2);
  if (cap == 0) return {0, remap, 1};
  // Candidates {1, 4, 6} and the divisors of the cap, scored by the L2 bytes the second-to-last
  // XCD's first-timestep tiles touch; the smallest cost wins, the smaller WGM on a tie.
  std::uint64_t mask = 0;
  for (const U64 v : {U64{1}, U64{4}, U64{6}}) {
    if (v <= cap) mask |= U64{1} << v;
  }
  for (U64 i = 1; i * i <= cap; ++i) {
    if (cap % i == 0) mask |= (U64{1} << i) | (U64{1} << (cap / i));
  }
  const U64 group = mts >= xcds ? mts / xcds : mts;
  const U64 start = (xcds - 2) * group;
  const U64 count = start < mts ? std::min(std::min(per_xcd, group), mts - start) : 0;
  if (count == 0) return {0, remap, 1};
  const double a_cost = static_cast<double>(ctx.tile_m) * element_bytes;
  const double b_cost = static_cast<double>(ctx.tile_n) * element_bytes;
  U64 best_wgm = 1;
  double best_cost = std::numeric_limits<double>::max();
  for (U64 w = 1; w < 64; ++w) {
    if ((mask & (U64{1} << w)) == 0) continue;
    const U64 slab = gm * w;
    const U64 first_slab = start / slab, last_slab = (start + count - 1) / slab;
    const U64 first_row = (start % slab) / w, last_row = ((start + count - 1) % slab) / w;
    U64 rows = 0, cols = 0;
    if (first_slab == last_slab) {
      rows = last_row - first_row + 1;
      cols = rows > 1 ? w : std::min(count, w);
    } else {
      rows = last_slab - first_slab > 1 ? gm : std::min(gm, (gm - first_row) + (last_row + 1));
      cols = std::min((last_slab - first_slab + 1) * w, gn);
    }
    const double cost = static_cast<double>(std::min(rows, gm)) * a_cost +
                        static_cast<double>(std::min(cols, gn)) * b_cost;
    if (cost < best_cost) best_cost = cost, best_wgm = w;
  }
  return {0, remap, static_cast<std::int64_t>(best_wgm)};
}

CacheHitRates cache_hit_rates(const OrigamiHardware& hw, const OrigamiContext& ctx,
                              double element_bytes) {
  CacheHitRates rates;
  const UniqueTiles grid{ctx.splits, ctx.grid_m, ctx.grid_n, ctx.batch};
  const U64 total = grid.k * grid.m * grid.n * grid.b;
  if (hw.num_cus == 0 || total == 0) return rates;
  // Warm-up by K depth: deep K-loops stagger their prefetches, shallow ones load all at once.
  const double depth_sq = static_cast<double>(ctx.k_iters) * static_cast<double>(ctx.k_iters);
  const double l2_warmup = kL2ColdFloor + (1.0 - kL2ColdFloor) * depth_sq / (depth_sq + kDepthSq);
  const double mall_warmup = kMallColdFloor + (1.0 - kMallColdFloor) * depth_sq / (depth_sq + kDepthSq);
  // Bytes of A and B one workgroup reads over its K share, and per K-iteration.
  const double k_share = static_cast<double>(ctx.k_per_split);
  const double a_tile = static_cast<double>(ctx.tile_m) * k_share * element_bytes;
  const double b_tile = static_cast<double>(ctx.tile_n) * k_share * element_bytes;
  const double per_wg = a_tile + b_tile;
  const double a_iter = static_cast<double>(ctx.tile_m * ctx.tile_k) * element_bytes;
  const double b_iter = static_cast<double>(ctx.tile_n * ctx.tile_k) * element_bytes;
  // MALL: the reused share of the first timestep's reads over the whole device. Requests count
  // every batch the window touches, the unique bytes one batch's tiles (the baselines' batched
  // latencies fit this form, as they do for the L2 below).
  const UniqueTiles t = count_unique_range(grid, ctx.mapping.wgm, 0, std::min(hw.num_cus, total));
  const double mall_unique = (static_cast<double>(t.m) * a_tile + static_cast<double>(t.n) * b_tile) * static_cast<double>(t.k);
  const double mall_requested = static_cast<double>(t.m * t.n * t.k * t.b) * per_wg;
  rates.mall_a = rates.mall_b = hw.has_mall && mall_requested > 0
      ? clamp01((1.0 - mall_unique / mall_requested) * mall_warmup) : 0.0;
  // L2: the tiles the second-to-last XCD runs in the first timestep.
  const U64 active_tiles = std::min(hw.num_cus, total);
  const U64 xcd_id = hw.num_xcds > 2 ? hw.num_xcds - 2 : 0;
  const UniqueTiles l2 = count_unique_tiles(grid, ctx.mapping, hw.num_cus, hw.num_xcds, xcd_id);
  const U64 on_xcd = std::min(active_tiles / hw.num_xcds, std::min(hw.cus_per_xcd, total / hw.num_xcds));
  // Small M or N: several tile rows share one 128-byte line.
  const double a_lines = std::min(1.0, static_cast<double>(ctx.m) * element_bytes / kL2LineBytes);
  const double b_lines = std::min(1.0, static_cast<double>(ctx.n) * element_bytes / kL2LineBytes);
  const double l2_unique = (static_cast<double>(l2.m) * a_tile * a_lines +
                            static_cast<double>(l2.n) * b_tile * b_lines) * static_cast<double>(l2.k);
  const double l2_requested = static_cast<double>(l2.m * l2.n * l2.k * l2.b) * per_wg;
  double reuse = l2_requested > 0 ? (1.0 - l2_unique / l2_requested) * l2_warmup : 0.0;
  const double working_set = (static_cast<double>(l2.m) * a_iter + static_cast<double>(l2.n) * b_iter) * static_cast<double>(l2.b);
  const double residency = working_set > 0 ? std::min(hw.l2_bytes / working_set, 1.0) : 1.0;
  rates.l2_a = rates.l2_b = on_xcd > 0 ? clamp01(reuse * residency) : 0.0;
  return rates;
}

namespace {

// A workgroup's A and B bytes per K-iteration: MT_M (MT_N) rows of MT_K rounded up to 128-byte
// lines (TN: K-contiguous rows).
double tile_bytes_per_iter(std::uint64_t rows, const OrigamiContext& ctx, double element_bytes) {
  const double line_elements = kL2LineBytes / element_bytes;
  const double k_elements = fast_ceil(static_cast<double>(ctx.tile_k) / line_elements) * line_elements;
  return static_cast<double>(rows) * k_elements * element_bytes;
}

}  // namespace

double l2_cycles(const OrigamiHardware& hw, const OrigamiContext& ctx, double element_bytes) {
  // Bytes x active CUs over (L2 bandwidth x active / CUs): the active count cancels.
  const double bytes = tile_bytes_per_iter(ctx.tile_m + ctx.tile_n, ctx, element_bytes);
  return bytes * static_cast<double>(hw.num_cus) / hw.l2_bytes_per_cycle;
}

MemoryCycles memory_cycles(const OrigamiHardware& hw, const OrigamiContext& ctx,
                           double element_bytes) {
  const CacheHitRates h = cache_hit_rates(hw, ctx, element_bytes);
  const double active = static_cast<double>(ctx.active_cus);
  const double a_total = tile_bytes_per_iter(ctx.tile_m, ctx, element_bytes) * active;
  const double b_total = tile_bytes_per_iter(ctx.tile_n, ctx, element_bytes) * active;
  const double to_mall = (1.0 - h.l2_a) * a_total + (1.0 - h.l2_b) * b_total;
  const double to_dram = hw.has_mall ? (1.0 - h.mall_a) * to_mall : to_mall;
  const double mall_bw = hw.mall_bytes_per_cycle * ctx.read_bw_fraction;
  const double dram_bw = hw.dram_bytes_per_cycle * ctx.read_bw_fraction;
  MemoryCycles mem;
  mem.l2 = l2_cycles(hw, ctx, element_bytes);
  mem.mall = hw.has_mall && mall_bw > 0 ? to_mall / mall_bw : 0.0;
  mem.dram = (dram_bw > 0 ? to_dram / dram_bw : 0.0) + kDramLatencyCycles;
  mem.total = std::max({mem.l2, mem.mall, mem.dram});
  return mem;
}

}  // namespace parity::gemm
