// The Origami model's pruned selection (predict_top_us, predict_top_runs_us): one admissible
// bound per run of candidates of one macro tile from the tile fields alone
// (model_origami_bounds.hpp), runs refined per launch geometry and predicted exactly only below
// the cutoff (model_origami_runs.cpp; docs/gemm_model.md, "Hierarchical selection").
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "model_math.hpp"
#include "model_origami.hpp"
#include "model_origami_bounds.hpp"
#include "model_origami_terms.hpp"

namespace parity::gemm {

using namespace origami_terms;  // the port's shared constants and helpers (internal header)

// A run in the search's heap: its bound and index (candidates [starts[run], starts[run + 1])).
struct OrigamiModel::Run {
  double bound;
  std::uint32_t run;
  bool is_refined;             // bound from the exact launch geometry (second stage)
  double by_decomposition[2];  // refined: each decomposition's bound [is_stream_k]
  bool is_predicted[2];        // a decomposition already predicted exactly (a per-tile seed's)
};

// The heap holds 16-byte entries (a sift moves each several times); a refined run's other
// fields wait in RunSearch::refined.
struct OrigamiModel::HeapEntry {
  static constexpr std::uint32_t kUnrefined = ~std::uint32_t{0};
  static constexpr std::uint32_t kGrid = kUnrefined - 1;  // `run` is an output grid, unbounded
  double bound;
  std::uint32_t run;
  std::uint32_t refined;  // into RunSearch::refined, kUnrefined or kGrid
};

// One search_runs call: the problem and its runs, the smallest predictions so far (`best`, whose
// cutoff is max(keep-th best, best x (1 + tie_epsilon))), the heap and the seeds.
struct OrigamiModel::RunSearch {
  const OrigamiModel& model;
  const GemmProblem& problem;
  const PreparedCandidate* prepared;
  std::span<const double> bounds;
  std::span<const std::uint32_t> starts;
  std::span<const OrigamiRunIndex::Decompositions> summaries;
  bool per_tile;
  double tie_epsilon;
  double* predicted_us;
  std::vector<CandidateRange>* exact_ranges;
  TopValues& best;
  std::vector<HeapEntry>& heap;
  std::vector<std::uint8_t>& is_seed;  // per run: predicted before the heap
  // The refined runs: per tile first the seeds' decompositions not predicted yet, then each
  // run the heap refines.
  std::vector<Run>& refined;
  GridPruning* pruning;  // over an OrigamiRunIndex: grids enter the heap before their runs

  double cutoff() const { return best.cutoff(tie_epsilon); }
  // A refined run predicts only the decompositions whose refined bound is at or below the
  // cutoff (the others stay at that bound, above every later cutoff too) and, per tile, at or
  // below its tile's held best (above it they cannot change the tile's entry).
  // Per tile the run's key comes from its summary: reading it from the candidate is a cache miss
  // per popped run.
  double run_limit(std::size_t run) const {
    if (!per_tile) return cutoff();  // held() is +infinity
    const std::uint64_t tile =
        summaries.empty() ? macro_tile_key(prepared[starts[run]]) : summaries[run].tile;
    return std::min(cutoff(), best.held(tile));
  }
  std::size_t predict_run(std::size_t run, const double* by_decomposition,
                          const bool* is_predicted);
  std::size_t predict_seeds(std::size_t seed, const std::vector<std::uint32_t>* bounded_runs);
  std::size_t seed_tiles(const std::vector<std::uint32_t>& bounded_runs);
  void fill_heap(double seed_cutoff, const std::vector<std::uint32_t>* bounded_runs);
  void enter_grids(double seed_cutoff);
  std::size_t enter_grid_runs(std::uint32_t grid, std::size_t heap_size);
  void refine(Run& run);
  std::size_t pop_runs();
  // The heap's root changed (any bound) or is removed: one sift down, not a pop and a push.
  void sift_down_root(std::size_t heap_size);
  std::size_t remove_root(std::size_t heap_size) {
    heap[0] = heap[heap_size - 1];
    sift_down_root(heap_size - 1);
    return heap_size - 1;
  }
};

std::size_t OrigamiModel::RunSearch::predict_run(std::size_t run, const double* by_decomposition,
                                                 const bool* is_predicted) {
  const double limit = by_decomposition == nullptr ? kInfinity : run_limit(run);
  bool include[2];
  for (int s = 0; s < 2; ++s) {
    include[s] = !(is_predicted != nullptr && is_predicted[s]) &&
                 (by_decomposition == nullptr || by_decomposition[s] <= limit);
  }
  return model.predict_run_us(problem, prepared, starts[run], starts[run + 1], include,
                              predicted_us, best, exact_ranges);
}

// Seed: the run of the smallest bound, predicted exactly, usually sets a finite cutoff at once;
// then only the runs whose bound is at or below it enter the heap (the cutoff never rises, so
// every other run stays above it). Without a finite cutoff every run enters.
std::size_t OrigamiModel::RunSearch::predict_seeds(
    std::size_t seed, const std::vector<std::uint32_t>* bounded_runs) {
  const bool has_seed = seed < bounds.size() && bounds[seed] != kInfinity;
  const bool seeds_per_tile = per_tile && has_seed && bounded_runs != nullptr && !summaries.empty();
  if (seeds_per_tile) return seed_tiles(*bounded_runs);
  if (!has_seed) return 0;
  const std::size_t exact = predict_run(seed, nullptr, nullptr);
  is_seed[seed] = 1;
  return exact;
}

// Per tile the cutoff is finite only once `keep` tiles are predicted (one run, one tile): the
// runs already bounded (the grids of least estimate) are seeds, best bound first, each predicted
// in its decomposition of lesser refined bound only (any exact value of a tile is at or above its
// best, so the cutoff stays admissible); the other decomposition waits for the heap in
// `refined` at its refined bound. Returns the exact predictions made.
std::size_t OrigamiModel::RunSearch::seed_tiles(const std::vector<std::uint32_t>& bounded_runs) {
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
    if (model.refined_bound_us(problem, prepared, summaries[next], run.by_decomposition) == kInfinity) continue;
    const int first = run.by_decomposition[0] <= run.by_decomposition[1] ? 0 : 1;
    run.is_predicted[1 - first] = true;  // predict `first` only
    exact += predict_run(next, run.by_decomposition, run.is_predicted);
    run.is_predicted[1 - first] = false;
    run.is_predicted[first] = true;
    run.bound = run.by_decomposition[1 - first];
    if (run.bound != kInfinity) refined.push_back(run);
  }
  return exact;
}

// The heap: the seeds' waiting decompositions and every bounded run that is not a seed, at or
// below the seeds' cutoff.
void OrigamiModel::RunSearch::fill_heap(double seed_cutoff,
                                        const std::vector<std::uint32_t>* bounded_runs) {
  const auto enter = [&](std::size_t r) {
    if (bounds[r] <= seed_cutoff && !is_seed[r]) {
      heap.push_back({bounds[r], static_cast<std::uint32_t>(r), HeapEntry::kUnrefined});
    }
  };
  for (std::size_t i = 0; i < refined.size(); ++i) {
    if (refined[i].bound <= seed_cutoff) {
      heap.push_back({refined[i].bound, refined[i].run, static_cast<std::uint32_t>(i)});
    }
  }
  if (bounded_runs != nullptr) {
    for (const std::uint32_t r : *bounded_runs) enter(r);
  } else {
    for (std::size_t r = 0; r < bounds.size(); ++r) enter(r);
  }
}

// The second stage: the run's bound per launch geometry (each decomposition's in
// by_decomposition). A walk (no summaries) writes each member its decomposition's bound.
void OrigamiModel::RunSearch::refine(Run& run) {
  if (summaries.empty()) {
    const std::size_t begin = starts[run.run], end = starts[run.run + 1];
    run.bound = model.refined_bound_us(problem, prepared, summarize_run(prepared, begin, end),
                                       run.by_decomposition);
    for (std::size_t t = begin; t < end; ++t) {
      predicted_us[t] = run.by_decomposition[prepared[t].origami.is_stream_k ? 1 : 0];
    }
  } else {
    run.bound = model.refined_bound_us(problem, prepared, summaries[run.run], run.by_decomposition);
  }
  run.is_refined = true;
}

void OrigamiModel::RunSearch::sift_down_root(std::size_t heap_size) {
  HeapEntry* const h = heap.data();
  const HeapEntry moving = h[0];
  std::size_t at = 0;
  for (std::size_t child = 1; child < heap_size; child = 2 * at + 1) {
    if (child + 1 < heap_size && h[child + 1].bound < h[child].bound) ++child;
    if (!(h[child].bound < moving.bound)) break;
    h[at] = h[child];
    at = child;
  }
  h[at] = moving;
}

// Runs in ascending bound from a min-heap (only the few below the cutoff are taken), read at its
// root. A run taken first is refined per launch geometry and sifted down at its refined bound;
// taken again, it is predicted exactly, one memory stage per geometry, and removed. Of entries of
// equal bound either may be taken first: one that the fallen cutoff then leaves has exact values
// at or above that bound, above the cutoff, which cannot enter the list. Returns the exact
// predictions made.
std::size_t OrigamiModel::RunSearch::pop_runs() {
  const auto above = [](const HeapEntry& a, const HeapEntry& b) { return a.bound > b.bound; };
  std::make_heap(heap.begin(), heap.end(), above);
  std::size_t exact = 0;
  std::size_t heap_size = heap.size();  // the heap is heap[0, heap_size); the rest is unused
  while (heap_size != 0) {
    HeapEntry& root = heap[0];
    if (root.bound == kInfinity || root.bound > cutoff()) break;
    if (root.refined == HeapEntry::kGrid) {
      heap_size = enter_grid_runs(root.run, heap_size);
      continue;
    }
    if (per_tile && root.bound > run_limit(root.run)) {
      heap_size = remove_root(heap_size);  // its tile already holds a better value
      continue;
    }
    if (root.refined == HeapEntry::kUnrefined) {
      root.refined = static_cast<std::uint32_t>(refined.size());
      Run& run = refined.emplace_back(Run{root.bound, root.run, false, {0.0, 0.0}, {false, false}});
      refine(run);
      root.bound = run.bound;
      sift_down_root(heap_size);
      continue;
    }
    const Run& run = refined[root.refined];
    exact += predict_run(run.run, run.by_decomposition, run.is_predicted);
    heap_size = remove_root(heap_size);
  }
  return exact;
}

std::size_t OrigamiModel::search_runs(const GemmProblem& problem, const PreparedCandidate* prepared,
                                      std::span<const double> bounds,
                                      std::span<const std::uint32_t> starts,
                                      std::span<const OrigamiRunIndex::Decompositions> summaries,
                                      std::size_t seed, std::size_t keep, bool per_tile,
                                      double tie_epsilon, double* predicted_us, double* cutoff_us,
                                      std::vector<CandidateRange>* exact_ranges,
                                      const std::vector<std::uint32_t>* bounded_runs,
                                      GridPruning* pruning) const {
  begin_epilogue_memo();  // a new problem: no earlier epilogue applies
  thread_local TopValues best;  // reused: no allocation per selection once warm
  thread_local std::vector<HeapEntry> heap;
  thread_local std::vector<Run> refined;
  thread_local std::vector<std::uint8_t> is_seed;
  best.reset(keep, per_tile);
  heap.clear();
  is_seed.assign(bounds.size(), 0);
  refined.clear();
  RunSearch search{*this,       problem,      prepared,     bounds, starts, summaries, per_tile,
                   tie_epsilon, predicted_us, exact_ranges, best,   heap,   is_seed,   refined,
                   pruning};
  std::size_t exact = search.predict_seeds(seed, bounded_runs);
  const double seed_cutoff = search.cutoff();
  search.fill_heap(seed_cutoff, bounded_runs);
  if (pruning != nullptr) search.enter_grids(seed_cutoff);
  exact += search.pop_runs();
  if (cutoff_us != nullptr) *cutoff_us = search.cutoff();
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
      nullptr, nullptr, nullptr);
}

namespace {

// The indices of the `count` least finite values other than `skip`, least first (of equal
// values the first). One compare per value once `count` are held: `limit` is the largest held
// (+infinity until then, which no value passes); an insertion shifts the few held ones.
const std::vector<std::size_t>& least_estimates(const std::vector<double>& values, std::size_t skip,
                                         std::size_t count) {
  thread_local std::vector<std::size_t> least;
  thread_local std::vector<double> least_values;
  least.resize(count);
  least_values.resize(count);
  std::size_t held = 0;
  double limit = kInfinity;
  const double* const value_of = values.data();
  for (std::size_t i = 0; i < values.size() && count > 0; ++i) {
    const double value = value_of[i];
    if (!(value < limit) || i == skip) continue;
    std::size_t at = held < count ? held++ : count - 1;  // the last slot, or one more
    for (; at > 0 && value < least_values[at - 1]; --at) {
      least_values[at] = least_values[at - 1];
      least[at] = least[at - 1];
    }
    least_values[at] = value;
    least[at] = i;
    if (held == count) limit = least_values[count - 1];
  }
  least.resize(held);
  return least;
}

}  // namespace

// predict_top_runs_us's state for one problem over an OrigamiRunIndex: per output grid a cheap
// estimate floor from its tile counts, and its terms and floor only when the estimate can reach
// the lowest floor or the cutoff (floors are computed lazily); run bounds only for the grids
// whose floor can reach the cutoff. Every other run stays unbounded, above any cutoff.
struct OrigamiModel::GridPruning {
  const OrigamiModel* model = nullptr;
  const OrigamiRunIndex* index = nullptr;
  TileBoundTerms terms;
  ProblemTables tables;
  std::vector<GridBound> grids;
  std::vector<double> floors, estimates;
  // Per grid, what enter_grids tests against the seeds' cutoff in one load: its estimate, or the
  // larger of its estimate and floor once the floor is known, or NaN once its runs are bounded
  // (they enter the heap themselves): NaN fails the test even when the cutoff is +infinity.
  std::vector<double> entry_tests;
  std::vector<std::uint8_t> has_terms, has_floor;  // per grid
  std::vector<double> bounds;          // per run; read only for the runs in `bounded`
  std::vector<std::uint32_t> bounded;  // the runs given a bound (the others are never read)
  std::size_t seed = 0;                // the run of the least bound (heads.size(): none yet)
  double seed_bound = kInfinity;

  void start(const OrigamiModel& selecting, const GemmProblem& problem,
             const OrigamiRunIndex& runs);
  GridDepths depths_of(const OrigamiRunIndex::Grid& g) const {
    return {&tables.depths[g.depth_min], &tables.depths[g.depth_max],
            tables.padding_upto[g.depth_max]};
  }
  std::size_t estimate_grids();
  void set_terms(std::size_t gi);
  double floor_at(std::size_t gi);
  void bound_grid(std::size_t gi, double limit = kInfinity);
  void bound_grid_once(std::size_t gi);
  void bound_seed_grids(std::size_t estimate_grid, std::size_t keep, bool per_tile);
};

void OrigamiModel::GridPruning::start(const OrigamiModel& selecting, const GemmProblem& problem,
                                      const OrigamiRunIndex& runs) {
  model = &selecting;
  index = &runs;
  terms = selecting.tile_bound_terms(problem);
  fill_problem_tables(terms, runs, tables);
  const std::size_t grid_count = runs.grids.size();
  grids.resize(grid_count);
  floors.resize(grid_count);
  estimates.resize(grid_count);
  entry_tests.resize(grid_count);
  has_terms.assign(grid_count, 0);
  has_floor.assign(grid_count, 0);
  bounds.resize(runs.heads.size());
  bounded.clear();
  seed = runs.heads.size();
  seed_bound = kInfinity;
}

// Every grid's estimate; returns the first grid of the least (grids.size(): none is feasible).
// An infeasible grid's estimate is +infinity and a feasible one's finite, so the least finite
// estimate is the least feasible one's.
std::size_t OrigamiModel::GridPruning::estimate_grids() {
  const std::size_t grid_count = index->grids.size();
  const double* const estimate_of = estimates.data();
  double* const entry_test_of = entry_tests.data();
  model->grid_tile_count_floors_us(terms, index->grid_columns, tables.grid_padding.data(),
                                   estimates.data());
  std::size_t estimate_grid = grid_count;
  double least = kInfinity;
  // (This pass and the other per-grid ones are unrolled: fewer loop instructions per grid.)
#pragma GCC unroll 4
  for (std::size_t gi = 0; gi < grid_count; ++gi) {
    const double estimate = estimate_of[gi];
    entry_test_of[gi] = estimate;
    if (estimate < least) least = estimate, estimate_grid = gi;
  }
  return estimate_grid;
}

// The grid's terms (GridBound), the first time.
void OrigamiModel::GridPruning::set_terms(std::size_t gi) {
  if (has_terms[gi]) return;
  has_terms[gi] = 1;
  const OrigamiRunIndex::Grid& g = index->grids[gi];
  grids[gi] = model->grid_bound(terms, index->sizes_m[g.m], index->sizes_n[g.n], g.split,
                                tables.tiles_m[g.m], tables.tiles_n[g.n]);
}

// The grid's floor, setting its terms the first time.
double OrigamiModel::GridPruning::floor_at(std::size_t gi) {
  if (!has_floor[gi]) {
    has_floor[gi] = 1;
    set_terms(gi);
    floors[gi] = model->grid_floor_us(terms, grids[gi], depths_of(index->grids[gi]));
    entry_tests[gi] = std::max(estimates[gi], floors[gi]);
  }
  return floors[gi];
}

// Each feasible run of the grid (whose terms are set): its bound, and the seed if least. Only
// the runs at or below `limit` are listed in `bounded` (a run above the seeds' cutoff never
// enters the heap).
void OrigamiModel::GridPruning::bound_grid(std::size_t gi, double limit) {
  const OrigamiRunIndex::GridRun* const runs = index->grid_runs.data();
  const DepthBound* const depth_of = tables.depths.data();
  double* const bound_of = bounds.data();
  const GridBound& grid = grids[gi];
  std::size_t least_run = seed;
  double least = seed_bound;
  for (std::uint32_t i = index->grid_run_begin[gi]; i < index->grid_run_begin[gi + 1]; ++i) {
    const std::uint32_t r = runs[i].run;
    const double bound = model->run_bound_us(terms, grid, depth_of[runs[i].depth]);
    bound_of[r] = bound;
    if (bound <= limit) bounded.push_back(r);
    if (bound < least) least_run = r, least = bound;
  }
  seed = least_run, seed_bound = least;
}

void OrigamiModel::GridPruning::bound_grid_once(std::size_t gi) {
  floor_at(gi);  // sets the grid's terms
  entry_tests[gi] = std::numeric_limits<double>::quiet_NaN();
  bound_grid(gi);
}

// The runs bounded before the search: the lowest floor's grid (its best run is the seed) and,
// per tile, the `keep` - 1 grids of least estimate after it.
void OrigamiModel::GridPruning::bound_seed_grids(std::size_t estimate_grid, std::size_t keep,
                                                 bool per_tile) {
  // The lowest floor (the first grid of it): at or below the least estimate's grid's floor, so
  // only the grids estimated at or below that floor can hold it.
  const std::size_t grid_count = index->grids.size();
  std::size_t floor_grid = 0;
  double lowest_floor = kInfinity;
  if (estimate_grid != grid_count) {
    const double probe = floor_at(estimate_grid);
    const double* const estimate_of = estimates.data();  // floor_at writes no estimate
#pragma GCC unroll 4
    for (std::size_t gi = 0; gi < grid_count; ++gi) {
      if (estimate_of[gi] <= probe && floor_at(gi) < lowest_floor) {
        floor_grid = gi, lowest_floor = floors[gi];
      }
    }
  }
  if (lowest_floor == kInfinity) return;
  bound_grid_once(floor_grid);
  // Per tile, a finite cutoff needs `keep` tiles: the seeds come from the runs of the `keep`
  // grids of least estimate (one grid's other MT_K alone are often far slower).
  if (per_tile) {
    for (const std::size_t gi : least_estimates(estimates, floor_grid, keep - 1)) {
      bound_grid_once(gi);
    }
  }
}

// Once the seeds have set the cutoff: every other grid whose estimate (and floor, where known)
// can reach it enters the heap at that value, at or below each of its run bounds; its runs are
// bounded only when it is popped, against the cutoff then (most grids never are). Per tile the
// cutoff falls slowly (k distinct tiles) and most such grids are popped: their runs at or below
// the seeds' cutoff enter at once (fewer heap moves).
void OrigamiModel::RunSearch::enter_grids(double seed_cutoff) {
  GridPruning& grids = *pruning;
  const double* const entry_test_of = grids.entry_tests.data();
  const std::size_t grid_count = grids.entry_tests.size();
#pragma GCC unroll 4
  for (std::size_t gi = 0; gi < grid_count; ++gi) {
    if (!(entry_test_of[gi] <= seed_cutoff)) continue;  // NaN: bounded already
    const double floor = grids.has_floor[gi] ? grids.floors[gi] : grids.estimates[gi];
    if (!per_tile) {
      heap.push_back({floor, static_cast<std::uint32_t>(gi), HeapEntry::kGrid});
      continue;
    }
    const std::size_t first = grids.bounded.size();
    grids.set_terms(gi);
    grids.bound_grid(gi, seed_cutoff);
    for (std::size_t i = first; i < grids.bounded.size(); ++i) {
      const std::uint32_t r = grids.bounded[i];
      heap.push_back({bounds[r], r, HeapEntry::kUnrefined});
    }
  }
}

// The grid at the heap's root: its runs at or below the cutoff enter the heap, the first in the
// grid's place (one sift down), or the grid is removed. Returns the heap's new size.
std::size_t OrigamiModel::RunSearch::enter_grid_runs(std::uint32_t grid, std::size_t heap_size) {
  const auto above = [](const HeapEntry& a, const HeapEntry& b) { return a.bound > b.bound; };
  const std::size_t first = pruning->bounded.size();
  pruning->set_terms(grid);
  pruning->bound_grid(grid, cutoff());
  if (first == pruning->bounded.size()) return remove_root(heap_size);
  for (std::size_t i = first; i < pruning->bounded.size(); ++i) {
    const std::uint32_t r = pruning->bounded[i];
    const HeapEntry entry{bounds[r], r, HeapEntry::kUnrefined};
    if (i == first) {
      heap[0] = entry;
      sift_down_root(heap_size);
      continue;
    }
    if (heap_size < heap.size()) {
      heap[heap_size] = entry;
    } else {
      heap.push_back(entry);
    }
    ++heap_size;
    std::push_heap(heap.begin(), heap.begin() + static_cast<std::ptrdiff_t>(heap_size), above);
  }
  return heap_size;
}

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
    thread_local GridPruning thread_pruning;  // reused: no allocation per selection once warm
    GridPruning& pruning = thread_pruning;    // read once through the thread_local's wrapper
    pruning.start(*this, problem, index);
    pruning.bound_seed_grids(pruning.estimate_grids(), keep, per_tile);
    exact = search_runs(
        problem, prepared, pruning.bounds, index.starts, index.decompositions, pruning.seed, keep,
        per_tile, tie_epsilon, predicted_us, &cutoff, &exact_ranges,
        &pruning.bounded, &pruning);
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

}  // namespace parity::gemm
