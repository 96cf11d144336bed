// Over 600 lines: the four search stages (grid floors, run bounds, refined bounds, exact runs) share
// one per-problem run index and cutoff; split apart they would pass that state through every call.
// The Origami model's pruned selection (predict_top_us, predict_top_runs_us): one admissible
// bound per run of candidates of one macro tile from the tile fields alone, runs refined per
// launch geometry and predicted exactly only below the cutoff (docs/gemm_model.md, "Hierarchical
// selection").
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "model_math.hpp"
#include "model_origami.hpp"
#include "model_origami_terms.hpp"

namespace parity::gemm {

using namespace origami_terms;  // the port's shared constants and helpers (internal header)

namespace {

// A run's key: MT_M, MT_N, MT_K and split as one 128-bit value: the four ints are adjacent in
// PreparedCandidate, so a run's end is found with two 8-byte compares per candidate.
struct TileKey {
  std::uint64_t mn, k_split;
  bool operator==(const TileKey&) const = default;
};
static_assert(
    offsetof(PreparedCandidate, tile_n) == offsetof(PreparedCandidate, tile_m) + sizeof(int) &&
    offsetof(PreparedCandidate, tile_k) == offsetof(PreparedCandidate, tile_m) + 2 * sizeof(int) &&
    offsetof(PreparedCandidate, split_k) == offsetof(PreparedCandidate, tile_m) + 3 * sizeof(int));
TileKey tile_key(const PreparedCandidate& c) {
  TileKey key;
  std::memcpy(&key, &c.tile_m, sizeof(key));
  return key;
}

// A search's epilogues: for one problem, epilogue_terms depends on the launch geometry only
// through MT_M, MT_N, the workgroup count and the reduction kind, and the refined and exact
// stages ask for the same few many times (a grid's data-parallel one is the same for every MT_K
// and XCD mapping). Direct-mapped; a new search starts a new generation instead of clearing.
struct EpilogueMemo {
  struct Entry {
    std::uint64_t generation = 0;
    std::uint64_t tile_m = 0, tile_n = 0, workgroups = 0;
    bool is_parallel_reduction = false;
    EpilogueCycles value;
  };
  std::array<Entry, 64> entries;
  std::uint64_t generation = 0;
};
thread_local EpilogueMemo epilogue_memo;

}  // namespace

EpilogueCycles OrigamiModel::memo_epilogue_terms(const GemmProblem& problem,
                                                 const OrigamiContext& x) const {
  const std::size_t slot =
      (x.tile_m * 7 + x.tile_n * 13 + x.workgroups * 5 + (x.is_parallel_reduction ? 1 : 0)) %
      epilogue_memo.entries.size();
  EpilogueMemo::Entry& e = epilogue_memo.entries[slot];
  if (e.generation != epilogue_memo.generation || e.tile_m != x.tile_m || e.tile_n != x.tile_n ||
      e.workgroups != x.workgroups || e.is_parallel_reduction != x.is_parallel_reduction) {
    e = {epilogue_memo.generation,  x.tile_m, x.tile_n, x.workgroups, x.is_parallel_reduction,
         epilogue_terms(problem, x)};
  }
  return e.value;
}

// The first-stage bound's terms per problem (TileBoundTerms), per output grid (MT_M, MT_N, split:
// GridBound) and per MT_K (DepthBound). A walk keeps the last grid's and MT_K's terms while
// consecutive runs share them (the reference space varies MT_K fastest); a selection over an
// OrigamiRunIndex computes each distinct size's once. Every value is computed by the same
// operations either way, so the bounds are bit-identical.
struct OrigamiModel::TileBoundTerms {
  double m = 0, n = 0, k = 0, batch = 0, cus = 0, out_bytes = 0, mnk = 0, type_factor = 0;
  double element_bytes = 0;
  // grid_tile_count_floor_us's per-problem factors: MFMA cycles per MT_M MT_N MT_K at the fastest
  // native instruction, L2 cycles per row element of one tile's operands across the CUs.
  double compute_cycles_per_mnk = 0, l2_cycles_per_row_element = 0;
};

struct OrigamiModel::GridBound {
  // split_k: the candidates' own split; max_grid_split: the most a stream-K grid can add, CUs /
  // tiles.
  double split_k = 1, max_grid_split = 1, timesteps = 0, decay = 0, stores = 0;
  // Padded output elements (grid_m MT_M x grid_n MT_N), MFMA cycles per unit of MT_K at the
  // fastest native instruction, L2 cycles per byte of an operand row's K extent.
  double padded_mn = 0, compute_cycles_per_k = 0, l2_cycles_per_row_byte = 0;
};

// What the grid floor needs of a grid's MT_K values: the smallest's and largest's terms, and a
// padding penalty at or below each of theirs.
struct OrigamiModel::GridDepths {
  const DepthBound* smallest = nullptr;
  const DepthBound* largest = nullptr;
  double padding_min = 0;
};

struct OrigamiModel::DepthBound {
  double tile_k = 0, k_tiles = 0, padding = 0;
  double k_tiles_over_8 = 0;  // floor(ceil(K / MT_K) / 8): the K splits of >= 8 iterations
  double padded_k = 0;        // ceil(K / MT_K) MT_K
  double k_line_bytes = 0;    // one K-iteration's row of MT_K elements in whole 128-byte lines
};

// The per-problem tables of a search over an OrigamiRunIndex: output tile counts per distinct
// MT_M and MT_N, the MT_K terms per distinct MT_K, and the padding floor per MT_K.
struct OrigamiModel::ProblemTables {
  std::vector<double> tiles_m, tiles_n, padding_upto;
  std::vector<DepthBound> depths;
};

OrigamiModel::GridBound OrigamiModel::grid_bound(const TileBoundTerms& t, int tile_m, int tile_n,
                                                 int split, double grid_m, double grid_n) const {
  const double tm = tile_m, tn = tile_n;
  GridBound g;
  const double tiles = grid_m * grid_n * t.batch;
  const double split_k = split;
  g.split_k = std::max(1.0, split_k);
  g.max_grid_split = fast_floor(t.cus / tiles);
  g.timesteps = ceil_div(tiles, t.cus);
  g.padded_mn = grid_m * tm * grid_n * tn;
  g.compute_cycles_per_k = 2.0 * tm * tn * min_cycles_per_flop_ * t.type_factor;
  g.l2_cycles_per_row_byte = (tm + tn) * t.cus / hw_.l2_bytes_per_cycle;
  const double waves = std::max(ceil_div(tiles * split_k, t.cus), g.timesteps);
  g.decay = occupancy_decay(static_cast<U64>(std::min(waves, static_cast<double>(kMaxOccupancy))));
  // Stores: at least the output bytes of the largest tile kind that exists (min(MT, size) per
  // dimension) through its share of the full DRAM bandwidth, shared by at least the active
  // workgroups' lower bound. With >= 2 x CUs tiles Origami keeps only the interior and one edge,
  // which may not exist when the problem is smaller than the tile: then no floor.
  const double active =
      tiles > t.cus ? fast_floor(tiles / (fast_floor(tiles / t.cus) + 1.0)) : tiles;
  const bool has_interior = t.m >= tm && t.n >= tn;
  g.stores =
      tiles >= 2.0 * t.cus && !has_interior
          ? 0.0
          : std::min(tm, t.m) * std::min(tn, t.n) * t.out_bytes * active / hw_.dram_bytes_per_cycle;
  return g;
}

OrigamiModel::DepthBound OrigamiModel::depth_bound(const TileBoundTerms& t, int tile_k) {
  DepthBound d;
  const double tk = tile_k;
  const double k_over_tk = t.k / tk;
  d.tile_k = tk;
  d.k_tiles = fast_ceil(k_over_tk);
  d.padding = (t.k - fast_floor(k_over_tk) * tk) / t.k * kKPaddingPenalty;
  d.k_tiles_over_8 = fast_floor(d.k_tiles / 8.0);
  d.padded_k = d.k_tiles * tk;
  const double line_elements = kL2LineBytes / t.element_bytes;
  d.k_line_bytes = fast_ceil(tk / line_elements) * line_elements * t.element_bytes;
  return d;
}

double OrigamiModel::run_bound_us(const TileBoundTerms& t, const GridBound& g,
                                  const DepthBound& d) const {
  // Every term of cycles() at or below its value for any candidate of this tile and split:
  // timesteps >= ceil(tiles / CUs); the split never exceeds max(split_k, min(CUs / tiles,
  // ceil(K / MT_K) / 8)); L_mem >= max(t_L2, 200) (t_L2: MT_M + MT_N rows of MT_K in whole
  // 128-byte lines, as l2_cycles counts them); MFMA cycles >= the tile's flops at the fastest
  // native instruction; decay >= 0.95^min(8, waves); a store floor; no reduction kernel.
  // Origami's grid splits K only into pieces of >= 8 iterations (k_split_aware_grid).
  const double tk = d.tile_k;
  const double max_split = std::max(g.split_k, std::min(g.max_grid_split, d.k_tiles_over_8));
  const double iters = std::max(ceil_div(t.k, max_split * tk) - 1.0, 1.0);
  const double etp = g.padded_mn * d.padded_k / t.mnk;
  const double lm = std::max(g.l2_cycles_per_row_byte * d.k_line_bytes, kDramLatencyCycles);
  const double lc = g.compute_cycles_per_k * tk;
  const double tile = iters * std::max(lc, lm) * etp + kPrologueWeight * lm * etp * g.decay +
                      kEpilogueWeight * ((lc * etp + g.stores) * g.decay + d.padding) +
                      kWorkgroupSetupCycles + kLoopCyclesPerIter * iters;
  return g.timesteps * tile / hw_.cycles_per_us * kRoundingMargin;
}

double OrigamiModel::grid_floor_us(const TileBoundTerms& t, const GridBound& g,
                                   const GridDepths& d) const {
  // At or below run_bound_us of every run of the grid, whatever its MT_K in [tk_min, tk_max]:
  // the split ms <= max(split_k, min(CUs / tiles, ceil(K / tk_min) / 8)) and ms MT_K <=
  // max(split_k tk_max, min(CUs / tiles tk_max, (K + tk_max) / 8)); etp >= padded_mn max(K,
  // tk_min) / MNK; iters + 1 >= max(K / (ms MT_K), 2). So the compute of the iterations and the
  // epilogue's last one is >= etp c max(K / ms, 2 tk_min) (as 2 x decay >= 2 x 0.95^8 > 1); the
  // iterations' and prologue's memory likewise at min(1, 1.5 x decay), with L_mem >= max(t_L2,
  // 200) and t_L2 >= the unrounded row bytes and >= one 128-byte line per row; the stores, the
  // smallest padding penalty, setup and the loop of the fewest iterations add.
  const double tk_min = d.smallest->tile_k, tk_max = d.largest->tile_k;
  const double ms = std::max(g.split_k, std::min(g.max_grid_split, d.smallest->k_tiles_over_8));
  const double span =
      std::max(g.split_k * tk_max, std::min(g.max_grid_split * tk_max, (t.k + tk_max) / 8.0));
  const double etp = g.padded_mn * std::max(t.k, tk_min) / t.mnk;
  const double k_span = std::max(t.k / ms, 2.0 * tk_min);   // <= MT_K (iters + 1)
  const double iters_plus_one = std::max(t.k / span, 2.0);  // <= iters + 1
  const double compute = etp * g.compute_cycles_per_k * k_span;
  const double row_bytes = std::max(t.element_bytes * k_span, kL2LineBytes * iters_plus_one);
  const double memory =
      etp * std::min(1.0, kPrologueWeight * g.decay) *
      std::max(g.l2_cycles_per_row_byte * row_bytes, kDramLatencyCycles * iters_plus_one);
  const double tile = std::max(compute, memory) +
                      kEpilogueWeight * (g.stores * g.decay + d.padding_min) +
                      kWorkgroupSetupCycles + kLoopCyclesPerIter * (iters_plus_one - 1.0);
  // The floor's own rounding differs from the run bounds': a relative 1e-9 below absorbs it.
  return g.timesteps * tile / hw_.cycles_per_us * kRoundingMargin * (1.0 - 1e-9);
}

// inline: called for every grid of every selection (a call costs ~30 of its ~90 instructions).
inline double OrigamiModel::grid_tile_count_floor_us(const TileBoundTerms& t, int tile_m,
                                                     int tile_n, int split, double grid_m,
                                                     double grid_n, const GridDepths& d) const {
  // At or below grid_floor_us from the tile counts and the MT_K range alone (no decay or
  // stores): its split and span with CUs / tiles unrounded (>= max_grid_split); the memory
  // weight min(1, 1.5 x decay) >= 1.5 x 0.95^8 > 0.99.
  const double tm = tile_m, tn = tile_n;
  const double tk_min = d.smallest->tile_k, tk_max = d.largest->tile_k;
  const double tiles = grid_m * grid_n * t.batch;
  const double split_k = std::max(1.0, static_cast<double>(split));
  const double grid_split = t.cus / tiles;
  const double ms = std::max(split_k, std::min(grid_split, d.smallest->k_tiles_over_8));
  const double span =
      std::max(split_k * tk_max, std::min(grid_split * tk_max, (t.k + tk_max) / 8.0));
  const double etp = grid_m * tm * grid_n * tn * std::max(t.k, tk_min) / t.mnk;
  const double k_span = std::max(t.k / ms, 2.0 * tk_min);
  const double iters_plus_one = std::max(t.k / span, 2.0);
  const double compute = etp * tm * tn * t.compute_cycles_per_mnk * k_span;
  const double row_elements = std::max(k_span, kL2LineBytes * iters_plus_one / t.element_bytes);
  const double memory = etp * 0.99 *
                        std::max((tm + tn) * t.l2_cycles_per_row_element * row_elements,
                                 kDramLatencyCycles * iters_plus_one);
  const double tile = std::max(compute, memory) + kEpilogueWeight * d.padding_min +
                      kWorkgroupSetupCycles + kLoopCyclesPerIter * (iters_plus_one - 1.0);
  // A relative 1e-6 below absorbs the two computations' different rounding.
  return ceil_div(tiles, t.cus) * tile / hw_.cycles_per_us * kRoundingMargin * (1.0 - 1e-6);
}

// A run in the search's heap: its bound and index (candidates [starts[run], starts[run + 1])).
struct OrigamiModel::Run {
  double bound;
  std::uint32_t run;
  bool is_refined;             // bound from the exact launch geometry (second stage)
  double by_decomposition[2];  // refined: each decomposition's bound [is_stream_k]
  bool is_predicted[2];        // a decomposition already predicted exactly (a per-tile seed's)
};

OrigamiModel::TileBoundTerms OrigamiModel::tile_bound_terms(const GemmProblem& problem) const {
  TileBoundTerms terms;
  terms.m = static_cast<double>(problem.m);
  terms.n = static_cast<double>(problem.n);
  terms.k = static_cast<double>(problem.k);
  terms.batch = static_cast<double>(problem.batch);
  terms.cus = static_cast<double>(hw_.num_cus);
  terms.out_bytes = static_cast<double>(dtype_size_bytes(problem.c_dtype));
  terms.mnk = terms.m * terms.n * terms.k;
  terms.type_factor = input_type_factor(device_, problem.a_dtype);
  terms.element_bytes = element_bytes_of(problem);
  terms.compute_cycles_per_mnk = 2.0 * min_cycles_per_flop_ * terms.type_factor;
  terms.l2_cycles_per_row_element = terms.cus / hw_.l2_bytes_per_cycle * terms.element_bytes;
  return terms;
}

// Per tile the cutoff is finite only once `keep` tiles are predicted (one run, one tile): the
// runs already bounded (the grids of least estimate) are seeds, best bound first, each predicted
// in its decomposition of lesser refined bound only (any exact value of a tile is at or above its
// best, so the cutoff stays admissible); the other decomposition waits for the heap in
// `seeded_rest` at its refined bound. Returns the exact predictions made.
template <typename PredictRun>
std::size_t OrigamiModel::seed_tiles(const GemmProblem& problem, const PreparedCandidate* prepared,
                                     std::span<const double> bounds,
                                     std::span<const OrigamiRunIndex::Decompositions> summaries,
                                     const std::vector<std::uint32_t>& bounded_runs,
                                     const TopValues& best, PredictRun&& predict_run,
                                     std::vector<std::uint8_t>& is_seed,
                                     std::vector<Run>& seeded_rest) const {
  std::size_t exact = 0;
  while (best.values.size() < best.keep) {
    std::size_t next = bounds.size();
    for (const std::uint32_t r : bounded_runs) {
      if (bounds[r] == kInfinity || is_seed[r]) continue;
      if (next == bounds.size() || bounds[r] < bounds[next]) next = r;
    }
    if (next == bounds.size()) break;
    is_seed[next] = 1;
    Run run{bounds[next], static_cast<std::uint32_t>(next), true, {kInfinity, kInfinity}, {false, false}};
    if (refined_bound_us(problem, prepared, summaries[next], run.by_decomposition) == kInfinity) continue;
    const int first = run.by_decomposition[0] <= run.by_decomposition[1] ? 0 : 1;
    run.is_predicted[1 - first] = true;  // predict `first` only
    exact += predict_run(next, run.by_decomposition, run.is_predicted);
    run.is_predicted[1 - first] = false;
    run.is_predicted[first] = true;
    run.bound = run.by_decomposition[1 - first];
    if (run.bound != kInfinity) seeded_rest.push_back(run);
  }
  return exact;
}

template <typename BoundRest>
std::size_t OrigamiModel::search_runs(const GemmProblem& problem, const PreparedCandidate* prepared,
                                      std::span<const double> bounds,
                                      std::span<const std::uint32_t> starts,
                                      std::span<const OrigamiRunIndex::Decompositions> summaries,
                                      std::size_t seed, std::size_t keep, bool per_tile,
                                      double tie_epsilon, double* predicted_us, double* cutoff_us,
                                      std::vector<CandidateRange>* exact_ranges,
                                      BoundRest&& bound_rest,
                                      const std::vector<std::uint32_t>* bounded_runs) const {
  // Runs in ascending bound from a min-heap (only the few below the cutoff are popped), the
  // cutoff being max(keep-th best, best x (1 + tie_epsilon)). A run popped first is refined per
  // launch geometry and pushed back; popped again, it is predicted exactly, one memory stage per
  // geometry.
  ++epilogue_memo.generation;  // a new problem: no earlier epilogue applies
  thread_local TopValues best;
  thread_local std::vector<Run> heap;
  best.reset(keep, per_tile);
  heap.clear();
  const auto cutoff = [&] { return best.cutoff(tie_epsilon); };
  // A refined run predicts only the decompositions whose refined bound is at or below the
  // cutoff (the others stay at that bound, above every later cutoff too) and, per tile, at or
  // below its tile's held best (above it they cannot change the tile's entry).
  const auto run_limit = [&](std::size_t run) {
    return std::min(cutoff(), best.held(macro_tile_key(prepared[starts[run]])));
  };
  const auto predict_run = [&](std::size_t run, const double* by_decomposition,
                               const bool* is_predicted) {
    const double limit = by_decomposition == nullptr ? kInfinity : run_limit(run);
    bool include[2];
    for (int s = 0; s < 2; ++s) {
      include[s] = !(is_predicted != nullptr && is_predicted[s]) &&
                   (by_decomposition == nullptr || by_decomposition[s] <= limit);
    }
    return predict_run_us(problem, prepared, starts[run], starts[run + 1], include, predicted_us,
                          best, exact_ranges);
  };
  std::size_t exact = 0;
  // Seed: the run of the smallest bound, predicted exactly, usually sets a finite cutoff at once;
  // then only the runs whose bound is at or below it enter the heap (the cutoff never rises, so
  // every other run stays above it). Without a finite cutoff every run enters.
  thread_local std::vector<std::uint8_t> is_seed;  // per run: predicted before the heap
  thread_local std::vector<Run> seeded_rest;
  is_seed.assign(bounds.size(), 0);
  seeded_rest.clear();
  const bool has_seed = seed < bounds.size() && bounds[seed] != kInfinity;
  const bool seeds_per_tile = per_tile && has_seed && bounded_runs != nullptr && !summaries.empty();
  if (has_seed && !seeds_per_tile) {
    exact += predict_run(seed, nullptr, nullptr);
    is_seed[seed] = 1;
  }
  if (seeds_per_tile) {
    exact += seed_tiles(problem, prepared, bounds, summaries, *bounded_runs, best, predict_run,
                        is_seed, seeded_rest);
  }
  const double seed_cutoff = cutoff();
  bound_rest(seed_cutoff);
  const auto enter = [&](std::size_t r) {
    if (bounds[r] <= seed_cutoff && !is_seed[r]) {
      heap.push_back({bounds[r], static_cast<std::uint32_t>(r), false, {0.0, 0.0}, {false, false}});
    }
  };
  for (const Run& run : seeded_rest) {
    if (run.bound <= seed_cutoff) heap.push_back(run);
  }
  if (bounded_runs != nullptr) {
    for (const std::uint32_t r : *bounded_runs) enter(r);
  } else {
    for (std::size_t r = 0; r < bounds.size(); ++r) enter(r);
  }
  const auto above = [](const Run& a, const Run& b) { return a.bound > b.bound; };
  std::make_heap(heap.begin(), heap.end(), above);
  auto heap_end = heap.end();
  while (heap_end != heap.begin()) {
    std::pop_heap(heap.begin(), heap_end, above);
    Run& run = *(heap_end - 1);
    if (run.bound == kInfinity || run.bound > cutoff()) break;
    if (per_tile && run.bound > run_limit(run.run)) {
      --heap_end;  // its tile already holds a better value
      continue;
    }
    if (!run.is_refined) {
      if (summaries.empty()) {
        // A walk: the members keep their decomposition's bound.
        const std::size_t begin = starts[run.run], end = starts[run.run + 1];
        run.bound = refined_bound_us(problem, prepared, summarize_run(prepared, begin, end),
                                     run.by_decomposition);
        for (std::size_t t = begin; t < end; ++t) {
          predicted_us[t] = run.by_decomposition[prepared[t].origami.is_stream_k ? 1 : 0];
        }
      } else {
        run.bound = refined_bound_us(problem, prepared, summaries[run.run], run.by_decomposition);
      }
      run.is_refined = true;
      std::push_heap(heap.begin(), heap_end, above);
      continue;
    }
    exact += predict_run(run.run, run.by_decomposition, run.is_predicted);
    --heap_end;
  }
  if (cutoff_us != nullptr) *cutoff_us = cutoff();
  return exact;
}

std::size_t OrigamiModel::predict_top_us(const GemmProblem& problem,
                                         const PreparedCandidate* prepared, std::size_t count,
                                         std::size_t keep, double tie_epsilon, double* predicted_us,
                                         double* cutoff_us) const {
  if (keep == 0) {
    return PerformanceModel::predict_top_us(problem, prepared, count, keep, tie_epsilon,
                                            predicted_us, cutoff_us);
  }
  thread_local std::vector<double> bounds;  // reused: no allocation per selection once warm
  thread_local std::vector<std::uint32_t> starts;
  bounds.clear();
  starts.clear();
  // Pass 1: one admissible bound per run of candidates of one macro tile and split, read from the
  // tile fields alone (run_bound_us); the candidates' other terms are only read for runs that
  // come below the cutoff. The head's bound is written to each member while the run is found.
  // This walk over every prepared candidate (one cache line of a 352-byte PreparedCandidate each)
  // is bound by memory, not instructions (a software prefetch measured slower);
  // predict_top_runs_us avoids it when the runs are known.
  const TileBoundTerms terms = tile_bound_terms(problem);
  GridBound grid;
  DepthBound depth;
  int grid_m = 0, grid_n = 0, grid_split = 0, tile_k = 0;  // the keys of `grid` and `depth`
  std::size_t seed = 0;
  for (std::size_t i = 0; i < count;) {
    const PreparedCandidate& head = prepared[i];
    double bound = kInfinity;
    if (head.is_feasible) {
      if (head.tile_m != grid_m || head.tile_n != grid_n || head.split_k != grid_split) {
        grid_m = head.tile_m, grid_n = head.tile_n, grid_split = head.split_k;
        grid = grid_bound(terms, grid_m, grid_n, grid_split, ceil_div(terms.m, grid_m),
                          ceil_div(terms.n, grid_n));
      }
      if (head.tile_k != tile_k) depth = depth_bound(terms, tile_k = head.tile_k);
      bound = run_bound_us(terms, grid, depth);
    }
    const TileKey key = tile_key(head);
    predicted_us[i] = bound;
    std::size_t j = i + 1;
    while (j < count && tile_key(prepared[j]) == key) predicted_us[j++] = bound;
    if (bounds.empty() || bound < bounds[seed]) seed = bounds.size();
    bounds.push_back(bound);
    starts.push_back(static_cast<std::uint32_t>(i));
    i = j;
  }
  starts.push_back(static_cast<std::uint32_t>(count));
  return search_runs(
      problem, prepared, bounds, starts, {}, seed, keep, false, tie_epsilon, predicted_us, cutoff_us,
      nullptr, [](double) {}, nullptr);
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
  // Each grid's runs (a counting sort by grid) and the MT_K range of its feasible ones.
  index.grid_run_begin.assign(index.grids.size() + 1, 0);
  for (const auto& head : index.heads) ++index.grid_run_begin[head.grid + 1];
  for (std::size_t g = 0; g < index.grids.size(); ++g)
    index.grid_run_begin[g + 1] += index.grid_run_begin[g];
  index.grid_runs.resize(index.heads.size());
  std::vector<std::uint32_t> fill(index.grid_run_begin.begin(), index.grid_run_begin.end() - 1);
  for (std::size_t r = 0; r < index.heads.size(); ++r) {
    const auto& head = index.heads[r];
    index.grid_runs[fill[head.grid]++] = static_cast<std::uint32_t>(r);
    if (!head.is_feasible) continue;
    OrigamiRunIndex::Grid& grid = index.grids[head.grid];
    const int tile_k = index.depths[head.depth];
    if (!grid.is_feasible || tile_k < index.depths[grid.depth_min]) grid.depth_min = head.depth;
    if (!grid.is_feasible || tile_k > index.depths[grid.depth_max]) grid.depth_max = head.depth;
    grid.is_feasible = true;
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
  // it at its largest MT_K: at or below the penalty of each of its runs).
  tables.padding_upto.assign(tables.depths.size(), kInfinity);
  for (std::size_t i = 0; i < tables.depths.size(); ++i) {
    for (std::size_t j = 0; j < tables.depths.size(); ++j) {
      if (index.depths[j] <= index.depths[i]) {
        tables.padding_upto[i] = std::min(tables.padding_upto[i], tables.depths[j].padding);
      }
    }
  }
}

namespace {

// The indices of the `count` least finite values other than `skip`, least first.
const std::vector<std::size_t>& least_estimates(const std::vector<double>& values, std::size_t skip,
                                         std::size_t count) {
  thread_local std::vector<std::size_t> least;
  least.clear();
  for (std::size_t i = 0; i < values.size() && count > 0; ++i) {
    if (i == skip || values[i] == kInfinity) continue;
    if (least.size() == count && !(values[i] < values[least.back()])) continue;
    const auto at = std::upper_bound(least.begin(), least.end(), values[i],
                                     [&](double v, std::size_t j) { return v < values[j]; });
    least.insert(at, i);
    if (least.size() > count) least.pop_back();
  }
  return least;
}

}  // namespace

std::size_t OrigamiModel::predict_top_runs_us(const GemmProblem& problem,
                                              const PreparedCandidate* prepared,
                                              const OrigamiRunIndex& index, std::size_t keep,
                                              bool per_tile, double tie_epsilon, double* predicted_us,
                                              double* cutoff_us,
                                              std::vector<CandidateRange>& exact_ranges) const {
  exact_ranges.clear();
  const std::size_t count = index.count;
  double cutoff = kInfinity;
  std::size_t exact = 0;
  if (keep > 0) {
    thread_local ProblemTables tables;
    thread_local std::vector<double> bounds, floors, estimates;
    thread_local std::vector<std::uint8_t> has_floor, grid_is_bounded;
    thread_local std::vector<std::uint32_t>
        bounded;  // the runs given a bound (the others are never read)
    thread_local std::vector<GridBound> grids;
    const TileBoundTerms terms = tile_bound_terms(problem);
    fill_problem_tables(terms, index, tables);
    const std::vector<double>& tiles_m = tables.tiles_m;
    const std::vector<double>& tiles_n = tables.tiles_n;
    const std::size_t grid_count = index.grids.size();
    grids.resize(grid_count);
    floors.resize(grid_count);
    // Plain pointers: the loops read no thread_local through its wrapper.
    GridBound* const grid_of = grids.data();
    double* const floor_of = floors.data();
    const DepthBound* const depth_of = tables.depths.data();
    const OrigamiRunIndex::Head* const heads = index.heads.data();
    // Per output grid a cheap estimate floor from its tile counts; its terms and floor only when
    // the estimate can reach the lowest floor or the cutoff (floors are computed lazily).
    estimates.resize(grid_count);
    has_floor.assign(grid_count, 0);
    double* const estimate_of = estimates.data();
    std::size_t estimate_grid = grid_count;
    for (std::size_t gi = 0; gi < grid_count; ++gi) {
      const OrigamiRunIndex::Grid& g = index.grids[gi];
      estimate_of[gi] = kInfinity;
      if (!g.is_feasible) continue;
      estimate_of[gi] = grid_tile_count_floor_us(
          terms, index.sizes_m[g.m], index.sizes_n[g.n], g.split, tiles_m[g.m], tiles_n[g.n],
          {&depth_of[g.depth_min], &depth_of[g.depth_max], tables.padding_upto[g.depth_max]});
      if (estimate_grid == grid_count || estimate_of[gi] < estimate_of[estimate_grid])
        estimate_grid = gi;
    }
    const auto floor_at = [&](std::size_t gi) {
      if (!has_floor[gi]) {
        has_floor[gi] = 1;
        const OrigamiRunIndex::Grid& g = index.grids[gi];
        grid_of[gi] = grid_bound(terms, index.sizes_m[g.m], index.sizes_n[g.n], g.split,
                                 tiles_m[g.m], tiles_n[g.n]);
        const GridDepths range{&depth_of[g.depth_min], &depth_of[g.depth_max],
                               tables.padding_upto[g.depth_max]};
        floor_of[gi] = grid_floor_us(terms, grid_of[gi], range);
      }
      return floor_of[gi];
    };
    // The lowest floor (the first grid of it): at or below the least estimate's grid's floor, so
    // only the grids estimated at or below that floor can hold it.
    std::size_t floor_grid = 0;
    double lowest_floor = kInfinity;
    if (estimate_grid != grid_count) {
      const double probe = floor_at(estimate_grid);
      for (std::size_t gi = 0; gi < grid_count; ++gi) {
        if (estimate_of[gi] <= probe && floor_at(gi) < lowest_floor) {
          floor_grid = gi, lowest_floor = floor_of[gi];
        }
      }
    }
    // Run bounds only for the grids whose floor can reach the cutoff: first the lowest floor's
    // (its best run is the seed), the rest once the seed has set the cutoff. Every other run
    // stays at +infinity, above any cutoff.
    bounds.resize(index.heads.size());
    bounded.clear();
    double* const bound_of = bounds.data();
    std::size_t seed = index.heads.size();  // none until a run is bounded
    double seed_bound = kInfinity;
    const auto bound_grid = [&](std::size_t gi) {
      for (std::uint32_t i = index.grid_run_begin[gi]; i < index.grid_run_begin[gi + 1]; ++i) {
        const std::uint32_t r = index.grid_runs[i];
        const OrigamiRunIndex::Head head = heads[r];
        if (!head.is_feasible) continue;
        bound_of[r] = run_bound_us(terms, grid_of[gi], depth_of[head.depth]);
        bounded.push_back(r);
        if (bound_of[r] < seed_bound) seed = r, seed_bound = bound_of[r];
      }
    };
    grid_is_bounded.assign(grid_count, 0);
    const auto bound_grid_once = [&](std::size_t gi) {
      floor_at(gi);  // sets the grid's terms
      grid_is_bounded[gi] = 1;
      bound_grid(gi);
    };
    if (lowest_floor != kInfinity) {
      bound_grid_once(floor_grid);
      // Per tile, a finite cutoff needs `keep` tiles: the seeds come from the runs of the
      // `keep` grids of least estimate (one grid's other MT_K alone are often far slower).
      if (per_tile) {
        for (const std::size_t gi : least_estimates(estimates, floor_grid, keep - 1)) {
          bound_grid_once(gi);
        }
      }
    }
    const auto bound_rest = [&](double seed_cutoff) {
      for (std::size_t gi = 0; gi < grid_count; ++gi) {
        if (!grid_is_bounded[gi] && estimate_of[gi] <= seed_cutoff && floor_at(gi) <= seed_cutoff) {
          bound_grid(gi);
        }
      }
    };
    exact = search_runs(problem, prepared, bounds, index.starts, index.decompositions, seed, keep,
                        per_tile, tie_epsilon, predicted_us, &cutoff, &exact_ranges, bound_rest, &bounded);
  }
  if (!std::isfinite(cutoff)) {
    // Fewer than `keep` feasible candidates: everything is a candidate for the top.
    predict_all_us(problem, prepared, count, predicted_us);
    exact_ranges.assign(1, {0, count});
    exact = count;
  }
  if (cutoff_us != nullptr) *cutoff_us = cutoff;
  return exact;
}

OrigamiRunIndex::Decompositions OrigamiModel::summarize_run(const PreparedCandidate* prepared,
                                                            std::size_t begin, std::size_t end) {
  OrigamiRunIndex::Decompositions d;
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
  for (int s = 0; s < 2; ++s) {
    double bound = kInfinity;
    if (run.first[s] != OrigamiRunIndex::Decompositions::kNone) {
      OrigamiContext x = context(problem, prepared[run.first[s]], Mapping::kSkip);
      if (!is_rejected(x, element_bytes)) {
        const U64 waves_per_cu = div_up(x.grid_m * x.grid_n * x.batch * x.splits, hw_.num_cus);
        MemoryCycles floor;
        floor.l2 = l2_cycles(hw_, x, element_bytes);
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
    bool is_ready = false, is_rejected = false;
    OrigamiContext x;
    MemoryCycles mem;
    EpilogueCycles epi;
    U64 waves_per_cu = 0;
    double last_compute = -1.0, last_decay = -1.0, last_value = 0.0;
  };
  Geometry geometries[4];  // [is_stream_k][is_xcd_contiguous]
  const std::uint64_t tile = macro_tile_key(prepared[begin]);  // one run, one macro tile
  std::size_t exact = 0;
  std::size_t range_begin = begin;
  for (std::size_t t = begin; t < end; ++t) {
    const PreparedCandidate& c = prepared[t];
    if (!include[c.origami.is_stream_k ? 1 : 0]) {
      if (exact_ranges != nullptr && range_begin < t) exact_ranges->push_back({range_begin, t});
      range_begin = t + 1;
      continue;
    }
    Geometry& g =
        geometries[(c.origami.is_stream_k ? 2 : 0) + (c.origami.is_xcd_contiguous ? 1 : 0)];
    if (!g.is_ready) {
      g.is_ready = true;
      g.x = context(problem, c, Mapping::kPredict);
      g.is_rejected = is_rejected(g.x, element_bytes);
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
    best.add(tile, value);
  }
  if (exact_ranges != nullptr && range_begin < end) exact_ranges->push_back({range_begin, end});
  return exact;
}

}  // namespace parity::gemm
