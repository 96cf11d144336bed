// The Origami model's per-run stages of the pruned selection (model_origami_select.cpp): the
// run index of a prepared list and a problem's tables over it, a run's summary and refined bound
// per launch geometry, and the exact predictions of a run, which share one memory stage and
// epilogue per geometry.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model_math.hpp"
#include "model_origami.hpp"
#include "model_origami_bounds.hpp"
#include "model_origami_terms.hpp"

namespace parity::gemm {

using namespace origami_terms;  // the port's shared constants and helpers (internal header)

namespace {

// A search's epilogues: for one problem, epilogue_terms depends on the launch geometry only
// through MT_M, MT_N, the workgroup count and the reduction kind, and the refined and exact
// stages ask for the same few many times (a grid's data-parallel one is the same for every MT_K
// and XCD mapping). Direct-mapped; a new search starts a new generation instead of clearing.
// The slot is a multiplicative hash of the whole key: tile sizes are multiples of 16, so a sum
// of small multiples modulo the slot count left most slots unused and evicted within a search.
struct EpilogueMemo {
  static constexpr int kSlotBits = 7;
  struct Entry {
    std::uint64_t generation = 0;
    std::uint64_t tile_m = 0, tile_n = 0, workgroups = 0;
    bool is_parallel_reduction = false;
    EpilogueCycles value;
  };
  std::array<Entry, std::size_t{1} << kSlotBits> entries;
  std::uint64_t generation = 0;
};
thread_local EpilogueMemo epilogue_memo;

}  // namespace

void OrigamiModel::begin_epilogue_memo() { ++epilogue_memo.generation; }

EpilogueCycles OrigamiModel::memo_epilogue_terms(const GemmProblem& problem,
                                                 const OrigamiContext& x) const {
  const std::uint64_t key = (x.tile_m << 48) ^ (x.tile_n << 32) ^ (x.workgroups << 1) ^
                           (x.is_parallel_reduction ? 1 : 0);
  const auto slot = static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >>
                                             (64 - EpilogueMemo::kSlotBits));
  EpilogueMemo::Entry& e = epilogue_memo.entries[slot];
  if (e.generation != epilogue_memo.generation || e.tile_m != x.tile_m || e.tile_n != x.tile_n ||
      e.workgroups != x.workgroups || e.is_parallel_reduction != x.is_parallel_reduction) {
    e = {epilogue_memo.generation,  x.tile_m, x.tile_n, x.workgroups, x.is_parallel_reduction,
         epilogue_terms(problem, x)};
  }
  return e.value;
}

OrigamiRunIndex OrigamiModel::index_runs(const PreparedCandidate* prepared, std::size_t count) {
  OrigamiRunIndex index;
  index.count = count;
  const auto index_of = [](std::vector<int>& values, int value) {
    const auto at = std::find(values.begin(), values.end(), value);
    if (at != values.end()) return static_cast<std::size_t>(at - values.begin());
    values.push_back(value);
    return values.size() - 1;
  };
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0 && tile_key(prepared[i]) == tile_key(prepared[i - 1])) continue;
    const PreparedCandidate& c = prepared[i];
    const OrigamiRunIndex::Grid grid{static_cast<std::uint16_t>(index_of(index.sizes_m, c.tile_m)),
                                     static_cast<std::uint16_t>(index_of(index.sizes_n, c.tile_n)),
                                     c.split_k};
    auto at =
        std::find_if(index.grids.begin(), index.grids.end(), [&](const OrigamiRunIndex::Grid& g) {
          return g.m == grid.m && g.n == grid.n && g.split == grid.split;
        });
    if (at == index.grids.end()) at = index.grids.insert(at, grid);
    index.starts.push_back(static_cast<std::uint32_t>(i));
    std::size_t end = i + 1;
    while (end < count && tile_key(prepared[end]) == tile_key(c)) ++end;
    index.decompositions.push_back(summarize_run(prepared, i, end));
    index.heads.push_back({static_cast<std::uint16_t>(at - index.grids.begin()),
                           static_cast<std::uint8_t>(index_of(index.depths, c.tile_k)),
                           c.is_feasible});
  }
  index.starts.push_back(static_cast<std::uint32_t>(count));
  // Each grid's feasible runs (a counting sort by grid) and their MT_K range.
  index.grid_run_begin.assign(index.grids.size() + 1, 0);
  for (const auto& head : index.heads) {
    if (head.is_feasible) ++index.grid_run_begin[head.grid + 1];
  }
  for (std::size_t g = 0; g < index.grids.size(); ++g)
    index.grid_run_begin[g + 1] += index.grid_run_begin[g];
  index.grid_runs.resize(index.grid_run_begin.back());
  std::vector<std::uint32_t> fill(index.grid_run_begin.begin(), index.grid_run_begin.end() - 1);
  for (std::size_t r = 0; r < index.heads.size(); ++r) {
    const auto& head = index.heads[r];
    if (!head.is_feasible) continue;
    index.grid_runs[fill[head.grid]++] = {static_cast<std::uint32_t>(r), head.depth};
    OrigamiRunIndex::Grid& grid = index.grids[head.grid];
    const int tile_k = index.depths[head.depth];
    if (!grid.is_feasible || tile_k < index.depths[grid.depth_min]) grid.depth_min = head.depth;
    if (!grid.is_feasible || tile_k > index.depths[grid.depth_max]) grid.depth_max = head.depth;
    grid.is_feasible = true;
  }
  index.depth_order.resize(index.depths.size());
  for (std::size_t i = 0; i < index.depths.size(); ++i)
    index.depth_order[i] = static_cast<std::uint8_t>(i);
  std::sort(index.depth_order.begin(), index.depth_order.end(),
            [&](std::uint8_t a, std::uint8_t b) { return index.depths[a] < index.depths[b]; });
  OrigamiRunIndex::GridColumns& columns = index.grid_columns;
  for (const OrigamiRunIndex::Grid& g : index.grids) {
    columns.tile_m.push_back(index.sizes_m[g.m]);
    columns.tile_n.push_back(index.sizes_n[g.n]);
    columns.split_k.push_back(std::max(1.0, static_cast<double>(g.split)));
    columns.tk_min.push_back(index.depths[g.depth_min]);
    columns.tk_max.push_back(index.depths[g.depth_max]);
    columns.infeasible.push_back(g.is_feasible ? 0.0 : kInfinity);
  }
  return index;
}

void OrigamiModel::fill_problem_tables(const TileBoundTerms& terms, const OrigamiRunIndex& index,
                                       ProblemTables& tables) {
  tables.tiles_m.resize(index.sizes_m.size());
  tables.tiles_n.resize(index.sizes_n.size());
  tables.depths.resize(index.depths.size());
  for (std::size_t i = 0; i < tables.tiles_m.size(); ++i)
    tables.tiles_m[i] = ceil_div(terms.m, index.sizes_m[i]);
  for (std::size_t i = 0; i < tables.tiles_n.size(); ++i)
    tables.tiles_n[i] = ceil_div(terms.n, index.sizes_n[i]);
  for (std::size_t i = 0; i < tables.depths.size(); ++i)
    tables.depths[i] = depth_bound(terms, index.depths[i]);
  // padding_upto[i]: the smallest padding penalty of any MT_K <= depths[i] (a grid's floor takes
  // it at its largest MT_K: at or below the penalty of each of its runs), a running minimum in
  // ascending MT_K (the index's MT_K values are distinct).
  tables.padding_upto.resize(tables.depths.size());
  double padding_least = kInfinity;
  for (const std::uint8_t i : index.depth_order) {
    padding_least = std::min(padding_least, tables.depths[i].padding);
    tables.padding_upto[i] = padding_least;
  }
  tables.grid_padding.resize(index.grids.size());
  const std::size_t grid_count = index.grids.size();
#pragma GCC unroll 4
  for (std::size_t gi = 0; gi < grid_count; ++gi)  // a gather: unrolled, fewer loop instructions
    tables.grid_padding[gi] = tables.padding_upto[index.grids[gi].depth_max];
}

OrigamiRunIndex::Decompositions OrigamiModel::summarize_run(const PreparedCandidate* prepared,
                                                            std::size_t begin, std::size_t end) {
  OrigamiRunIndex::Decompositions d;
  d.tile = macro_tile_key(prepared[begin]);
  for (std::size_t t = begin; t < end; ++t) {
    const OrigamiTerms& o = prepared[t].origami;
    const int s = o.is_stream_k ? 1 : 0;
    if (d.first[s] == OrigamiRunIndex::Decompositions::kNone) {
      d.first[s] = static_cast<std::uint32_t>(t);
      d.lightest[s] = o.compute_cycles_per_iter;
      d.occupancy[s] = o.occupancy;
    }
    d.lightest[s] = std::min(d.lightest[s], o.compute_cycles_per_iter);
    d.occupancy[s] = std::max(d.occupancy[s], o.occupancy);
  }
  return d;
}

double OrigamiModel::refined_bound_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                      const OrigamiRunIndex::Decompositions& run,
                                      double* by_decomposition) const {
  // Per decomposition (data-parallel or stream-K): the exact grid and epilogue with L_mem at
  // max(t_L2, 200), the decomposition's smallest MFMA cycles and largest occupancy (each term of
  // cycles() grows with the MFMA cycles and shrinks with the occupancy). Without the workgroup
  // mapping the launch geometry depends only on the macro tile, split and decomposition.
  const double element_bytes = element_bytes_of(problem);
  double run_bound = kInfinity;
  double l2 = -1.0;  // one macro tile: both decompositions' L2 cycles are equal
  for (int s = 0; s < 2; ++s) {
    double bound = kInfinity;
    if (run.first[s] != OrigamiRunIndex::Decompositions::kNone) {
      OrigamiContext x = context(problem, prepared[run.first[s]], Mapping::kSkip);
      if (!is_rejected(x, element_bytes)) {
        const U64 waves_per_cu = div_up(x.grid_m * x.grid_n * x.batch * x.splits, hw_.num_cus);
        if (l2 < 0.0) l2 = l2_cycles(hw_, x, element_bytes);
        MemoryCycles floor;
        floor.l2 = l2;
        floor.dram = kDramLatencyCycles;
        floor.total = std::max(floor.l2, floor.dram);
        x.occupancy_factor = occupancy_decay(
            std::min(static_cast<U64>(std::max(1, run.occupancy[s])), waves_per_cu));
        bound = cycles(run.lightest[s], x, floor, memo_epilogue_terms(problem, x)).total /
                hw_.cycles_per_us * kRoundingMargin;
      }
    }
    if (by_decomposition != nullptr) by_decomposition[s] = bound;
    run_bound = std::min(run_bound, bound);
  }
  return run_bound;
}

std::size_t OrigamiModel::predict_run_us(const GemmProblem& problem,
                                         const PreparedCandidate* prepared, std::size_t begin,
                                         std::size_t end, const bool include[2],
                                         double* predicted_us, TopValues& best,
                                         std::vector<CandidateRange>* exact_ranges) const {
  // Exact, one context, memory stage and epilogue per launch geometry: within a run (one macro
  // tile and split) the geometry is the decomposition and XCD mapping, so the MFMA variants'
  // groups reuse the first group's stages; a candidate of the same MFMA cycles and occupancy as
  // the last one of its geometry (the WGM variants) reuses its value. Only the decompositions in
  // `include` are predicted, each maximal block of them appended to `exact_ranges`. `best` keeps
  // the smallest predictions so far (one per macro tile when it is per tile).
  const double element_bytes = element_bytes_of(problem);
  struct Geometry {
    bool is_rejected;
    OrigamiContext x;
    MemoryCycles mem;
    EpilogueCycles epi;
    U64 waves_per_cu;
    double last_compute, last_decay, last_value;
  };
  // [is_stream_k][is_xcd_contiguous], each set up when first used: a run uses one or two, and
  // zeroing all four cost more than a geometry's setup.
  union Slot {
    Slot() {}
    Geometry g;
  };
  Slot slots[4];
  bool is_ready[4] = {false, false, false, false};
  const std::uint64_t tile = macro_tile_key(prepared[begin]);  // one run, one macro tile
  // Per tile, a value at or above one this run already offered cannot change `best` (its tile
  // holds that value or better, or lost its place to k better tiles): not offered again.
  double offered = kInfinity;
  std::size_t exact = 0;
  std::size_t range_begin = begin;
  for (std::size_t t = begin; t < end; ++t) {
    const PreparedCandidate& c = prepared[t];
    if (!include[c.origami.is_stream_k ? 1 : 0]) {
      if (exact_ranges != nullptr && range_begin < t) exact_ranges->push_back({range_begin, t});
      range_begin = t + 1;
      continue;
    }
    const int slot = (c.origami.is_stream_k ? 2 : 0) + (c.origami.is_xcd_contiguous ? 1 : 0);
    Geometry& g = slots[slot].g;
    if (!is_ready[slot]) {
      is_ready[slot] = true;
      g.x = context(problem, c, Mapping::kPredict);
      g.is_rejected = is_rejected(g.x, element_bytes);
      g.last_compute = g.last_decay = -1.0;
      if (!g.is_rejected) {
        g.mem = memory_cycles(hw_, g.x, element_bytes);
        g.epi = memo_epilogue_terms(problem, g.x);
        g.waves_per_cu = div_up(g.x.grid_m * g.x.grid_n * g.x.batch * g.x.splits, hw_.num_cus);
      }
    }
    if (g.is_rejected) {
      predicted_us[t] = kInfinity;
      continue;
    }
    const double decay = occupancy_decay(
        std::min(static_cast<U64>(std::max(1, c.origami.occupancy)), g.waves_per_cu));
    const double compute = c.origami.compute_cycles_per_iter;
    if (compute != g.last_compute || decay != g.last_decay) {
      g.x.occupancy_factor = decay;
      g.last_compute = compute;
      g.last_decay = decay;
      g.last_value = cycles(compute, g.x, g.mem, g.epi).total / hw_.cycles_per_us;
    }
    const double value = g.last_value;
    predicted_us[t] = value;
    ++exact;
    if (!best.per_tile || value < offered) {
      best.add(tile, value);
      offered = value;
    }
  }
  if (exact_ranges != nullptr && range_begin < end) exact_ranges->push_back({range_begin, end});
  return exact;
}

}  // namespace parity::gemm
