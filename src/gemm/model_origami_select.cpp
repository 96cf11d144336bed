// The Origami model's pruned selection (predict_top_us, predict_top_runs_us): one admissible
// bound per run of candidates of one macro tile from the tile fields alone, runs refined per
// launch geometry and predicted exactly only below the cutoff (docs/gemm_model.md, "Hierarchical
// selection").
#include <algorithm>
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

// Candidates that share one launch geometry: same macro tile, split, decomposition and XCD
// mapping (their instruction, occupancy and WGM may differ).
// MT_M, MT_N, MT_K and split as one 128-bit value: the four ints are adjacent in
// PreparedCandidate, so a run's end is found with two 8-byte compares per candidate.
struct TileKey {
  std::uint64_t mn, k_split;
  bool operator==(const TileKey&) const = default;
};
static_assert(offsetof(PreparedCandidate, tile_n) == offsetof(PreparedCandidate, tile_m) + sizeof(int) &&
              offsetof(PreparedCandidate, tile_k) == offsetof(PreparedCandidate, tile_m) + 2 * sizeof(int) &&
              offsetof(PreparedCandidate, split_k) == offsetof(PreparedCandidate, tile_m) + 3 * sizeof(int));
TileKey tile_key(const PreparedCandidate& c) {
  TileKey key;
  std::memcpy(&key, &c.tile_m, sizeof(key));
  return key;
}

bool same_geometry(const PreparedCandidate& a, const PreparedCandidate& b) {
  return a.tile_m == b.tile_m && a.tile_n == b.tile_n && a.tile_k == b.tile_k &&
         a.split_k == b.split_k && a.origami.is_stream_k == b.origami.is_stream_k &&
         a.origami.is_xcd_contiguous == b.origami.is_xcd_contiguous;
}

}  // namespace

// The terms of tile_bound_us that depend only on the output grid (MT_M, MT_N, split) or only on
// MT_K, computed once and reused while consecutive runs share them (the reference space varies
// MT_K fastest). Every value is computed by the same operations as without the reuse, so the
// bounds are bit-identical.
struct OrigamiModel::TileBoundTerms {
  // Per call.
  double m = 0, n = 0, k = 0, batch = 0, cus = 0, out_bytes = 0, mnk = 0, type_factor = 0;
  double element_bytes = 0;
  // Per output grid.
  int tile_m = 0, tile_n = 0, split = 0;
  // split_k: the candidates' own split; max_grid_split: the most a stream-K grid can add, CUs / tiles.
  double split_k = 1, max_grid_split = 1;
  double grid_m = 0, grid_n = 0, tiles = 0, timesteps = 0, decay = 0, stores = 0;
  // Padded output elements (grid_m MT_M x grid_n MT_N), MFMA cycles per unit of MT_K at the
  // fastest native instruction, L2 cycles per byte of an operand row's K extent.
  double padded_mn = 0, compute_cycles_per_k = 0, l2_cycles_per_row_byte = 0;
  // Per MT_K.
  int tile_k = 0;
  double k_tiles = 0, padding = 0;
  double k_line_bytes = 0;  // one K-iteration's row of MT_K elements in whole 128-byte lines
};

void OrigamiModel::set_tile_bound_grid(TileBoundTerms& t, const PreparedCandidate& head) const {
  const double tm = head.tile_m, tn = head.tile_n;
  t.tile_m = head.tile_m;
  t.tile_n = head.tile_n;
  t.split = head.split_k;
  t.grid_m = ceil_div(t.m, tm);
  t.grid_n = ceil_div(t.n, tn);
  t.tiles = t.grid_m * t.grid_n * t.batch;
  const double split_k = head.split_k;
  t.split_k = std::max(1.0, split_k);
  t.max_grid_split = fast_floor(t.cus / t.tiles);
  t.timesteps = ceil_div(t.tiles, t.cus);
  t.padded_mn = t.grid_m * tm * t.grid_n * tn;
  t.compute_cycles_per_k = 2.0 * tm * tn * min_cycles_per_flop_ * t.type_factor;
  t.l2_cycles_per_row_byte = (tm + tn) * t.cus / hw_.l2_bytes_per_cycle;
  const double waves = std::max(ceil_div(t.tiles * split_k, t.cus), t.timesteps);
  t.decay = occupancy_decay(static_cast<U64>(std::min(waves, static_cast<double>(kMaxOccupancy))));
  // Stores: at least the output bytes of the largest tile kind that exists (min(MT, size) per
  // dimension) through its share of the full DRAM bandwidth, shared by at least the active
  // workgroups' lower bound. With >= 2 x CUs tiles Origami keeps only the interior and one edge,
  // which may not exist when the problem is smaller than the tile: then no floor.
  const double active =
      t.tiles > t.cus ? fast_floor(t.tiles / (fast_floor(t.tiles / t.cus) + 1.0)) : t.tiles;
  const bool has_interior = t.m >= tm && t.n >= tn;
  t.stores = t.tiles >= 2.0 * t.cus && !has_interior
                 ? 0.0
                 : std::min(tm, t.m) * std::min(tn, t.n) * t.out_bytes * active / hw_.dram_bytes_per_cycle;
}

double OrigamiModel::tile_bound_us(TileBoundTerms& t, const PreparedCandidate& head) const {
  // Every term of cycles() at or below its value for any candidate of this tile and split:
  // timesteps >= ceil(tiles / CUs); the split never exceeds max(split_k, min(CUs / tiles,
  // ceil(K / MT_K) / 8)); L_mem >= max(t_L2, 200) (t_L2: MT_M + MT_N rows of MT_K in whole
  // 128-byte lines, as l2_cycles counts them); MFMA cycles >= the tile's flops at the fastest
  // native instruction; decay >= 0.95^min(8, waves); a store floor; no reduction kernel.
  if (head.tile_m != t.tile_m || head.tile_n != t.tile_n || head.split_k != t.split) {
    set_tile_bound_grid(t, head);
  }
  const double tk = head.tile_k;
  if (head.tile_k != t.tile_k) {
    const double k_over_tk = t.k / tk;
    t.tile_k = head.tile_k;
    t.k_tiles = fast_ceil(k_over_tk);
    t.padding = (t.k - fast_floor(k_over_tk) * tk) / t.k * kKPaddingPenalty;
    const double line_elements = kL2LineBytes / t.element_bytes;
    t.k_line_bytes = fast_ceil(tk / line_elements) * line_elements * t.element_bytes;
  }
  // Origami's grid splits K only into pieces of >= 8 iterations (k_split_aware_grid).
  const double max_split = std::max(t.split_k, std::min(t.max_grid_split, fast_floor(t.k_tiles / 8.0)));
  const double iters = std::max(ceil_div(t.k, max_split * tk) - 1.0, 1.0);
  const double etp = t.padded_mn * (t.k_tiles * tk) / t.mnk;
  const double lm = std::max(t.l2_cycles_per_row_byte * t.k_line_bytes, kDramLatencyCycles);
  const double lc = t.compute_cycles_per_k * tk;
  const double tile = iters * std::max(lc, lm) * etp + kPrologueWeight * lm * etp * t.decay +
                      kEpilogueWeight * ((lc * etp + t.stores) * t.decay + t.padding) +
                      kWorkgroupSetupCycles + kLoopCyclesPerIter * iters;
  return t.timesteps * tile / hw_.cycles_per_us * kRoundingMargin;
}

struct OrigamiModel::Run {
  double bound;
  std::size_t begin, end;
  bool is_refined;  // bound from the exact launch geometry (second stage)
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
  return terms;
}

std::size_t OrigamiModel::predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                         std::size_t count, std::size_t keep, double tie_epsilon,
                                         double* predicted_us, double* cutoff_us) const {
  if (keep == 0) {
    return PerformanceModel::predict_top_us(problem, prepared, count, keep, tie_epsilon, predicted_us, cutoff_us);
  }
  thread_local std::vector<Run> runs;  // reused: no allocation per selection once warm
  runs.clear();
  // Pass 1: one admissible bound per run of candidates of one macro tile and split, read from the
  // tile fields alone (tile_bound_us); the candidates' other terms are only read for runs that
  // come below the cutoff. The head's bound is written to each member while the run is found.
  // This walk over every prepared candidate (one cache line of a 352-byte PreparedCandidate each)
  // is bound by memory, not instructions (a software prefetch measured slower);
  // predict_top_runs_us avoids it when the runs are known.
  TileBoundTerms terms = tile_bound_terms(problem);
  for (std::size_t i = 0; i < count;) {
    const PreparedCandidate& head = prepared[i];
    const double bound = head.is_feasible ? tile_bound_us(terms, head) : kInfinity;
    const TileKey key = tile_key(head);
    predicted_us[i] = bound;
    std::size_t j = i + 1;
    while (j < count && tile_key(prepared[j]) == key) predicted_us[j++] = bound;
    runs.push_back({bound, i, j, false});
    i = j;
  }
  return search_runs(problem, prepared, runs, keep, tie_epsilon, predicted_us, cutoff_us, nullptr);
}

std::vector<std::uint32_t> OrigamiModel::run_starts(const PreparedCandidate* prepared, std::size_t count) {
  std::vector<std::uint32_t> starts;
  for (std::size_t i = 0; i < count; ++i) {
    if (i == 0 || !(tile_key(prepared[i]) == tile_key(prepared[i - 1]))) {
      starts.push_back(static_cast<std::uint32_t>(i));
    }
  }
  return starts;
}

std::size_t OrigamiModel::predict_top_runs_us(const GemmProblem& problem,
                                              const PreparedCandidate* prepared, std::size_t count,
                                              std::span<const std::uint32_t> run_starts,
                                              std::size_t keep, double tie_epsilon,
                                              double* predicted_us, double* cutoff_us,
                                              std::vector<CandidateRange>& exact_ranges) const {
  exact_ranges.clear();
  double cutoff = kInfinity;
  std::size_t exact = 0;
  if (keep > 0) {
    thread_local std::vector<Run> runs;
    runs.clear();
    TileBoundTerms terms = tile_bound_terms(problem);
    for (std::size_t r = 0; r < run_starts.size(); ++r) {
      const std::size_t begin = run_starts[r];
      const std::size_t end = r + 1 < run_starts.size() ? run_starts[r + 1] : count;
      const PreparedCandidate& head = prepared[begin];
      runs.push_back({head.is_feasible ? tile_bound_us(terms, head) : kInfinity, begin, end, false});
    }
    exact = search_runs(problem, prepared, runs, keep, tie_epsilon, predicted_us, &cutoff, &exact_ranges);
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

std::size_t OrigamiModel::search_runs(const GemmProblem& problem, const PreparedCandidate* prepared,
                                      std::vector<Run>& runs, std::size_t keep, double tie_epsilon,
                                      double* predicted_us, double* cutoff_us,
                                      std::vector<CandidateRange>* exact_ranges) const {
  // Runs in ascending bound from a min-heap (only the few below the cutoff are popped), the
  // cutoff being max(keep-th best, best x (1 + tie_epsilon)). A run popped first is refined per
  // launch geometry and pushed back; popped again, it is predicted exactly, one memory stage per
  // geometry.
  thread_local std::vector<double> best;
  best.clear();
  const auto cutoff = [&] {
    return best.size() < keep ? kInfinity : std::max(best[keep - 1], best[0] * (1.0 + tie_epsilon));
  };
  std::size_t exact = 0;
  // Seed: the run of the smallest bound, predicted exactly, usually sets a finite cutoff at once;
  // then only the runs whose bound is at or below it enter the heap (the cutoff never rises, so
  // every other run stays above it). Without a finite cutoff every run enters.
  const auto seed = std::min_element(runs.begin(), runs.end(),
                                     [](const Run& a, const Run& b) { return a.bound < b.bound; });
  if (seed != runs.end() && seed->bound != kInfinity) {
    exact += predict_run_us(problem, prepared, seed->begin, seed->end, predicted_us, keep, best);
    if (exact_ranges != nullptr) exact_ranges->push_back({seed->begin, seed->end});
    *seed = runs.back();
    runs.pop_back();
    const double seed_cutoff = cutoff();
    if (seed_cutoff != kInfinity) {
      runs.erase(std::remove_if(runs.begin(), runs.end(), [&](const Run& r) { return r.bound > seed_cutoff; }),
                 runs.end());
    }
  }
  const auto above = [](const Run& a, const Run& b) { return a.bound > b.bound; };
  std::make_heap(runs.begin(), runs.end(), above);
  auto heap_end = runs.end();
  while (heap_end != runs.begin()) {
    std::pop_heap(runs.begin(), heap_end, above);
    Run& run = *(heap_end - 1);
    if (run.bound == kInfinity || run.bound > cutoff()) break;
    if (!run.is_refined) {
      run.bound = refined_bound_us(problem, prepared, run.begin, run.end, predicted_us);
      run.is_refined = true;
      std::push_heap(runs.begin(), heap_end, above);
      continue;
    }
    exact += predict_run_us(problem, prepared, run.begin, run.end, predicted_us, keep, best);
    if (exact_ranges != nullptr) exact_ranges->push_back({run.begin, run.end});
    --heap_end;
  }
  if (cutoff_us != nullptr) *cutoff_us = cutoff();
  return exact;
}

double OrigamiModel::refined_bound_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                      std::size_t begin, std::size_t end, double* predicted_us) const {
  // Per decomposition (data-parallel or stream-K): the exact grid and epilogue with L_mem at
  // max(t_L2, 200), the group's smallest MFMA cycles and largest occupancy. Without the workgroup
  // mapping the launch geometry depends only on the macro tile, split and decomposition, so the
  // context, memory floor and epilogue are computed once per decomposition in the run and every
  // group of consecutive candidates of that decomposition reuses them.
  const double element_bytes = element_bytes_of(problem);
  struct Geometry {
    bool is_ready = false, is_rejected = false;
    OrigamiContext x;
    U64 waves_per_cu = 0;
    MemoryCycles floor;
    EpilogueCycles epi;
  };
  Geometry geometries[2];  // [is_stream_k]
  double run_bound = kInfinity;
  for (std::size_t i = begin; i < end;) {
    const bool is_stream_k = prepared[i].origami.is_stream_k;
    std::size_t j = i + 1;
    double lightest = prepared[i].origami.compute_cycles_per_iter;
    int occupancy = prepared[i].origami.occupancy;
    while (j < end && prepared[j].origami.is_stream_k == is_stream_k) {
      lightest = std::min(lightest, prepared[j].origami.compute_cycles_per_iter);
      occupancy = std::max(occupancy, prepared[j].origami.occupancy);
      ++j;
    }
    Geometry& g = geometries[is_stream_k ? 1 : 0];
    if (!g.is_ready) {
      g.is_ready = true;
      g.x = context(problem, prepared[i], Mapping::kSkip);
      g.is_rejected = is_rejected(g.x, element_bytes);
      if (!g.is_rejected) {
        g.waves_per_cu = div_up(g.x.grid_m * g.x.grid_n * g.x.batch * g.x.splits, hw_.num_cus);
        g.floor.l2 = l2_cycles(hw_, g.x, element_bytes);
        g.floor.dram = kDramLatencyCycles;
        g.floor.total = std::max(g.floor.l2, g.floor.dram);
        g.epi = epilogue_terms(problem, g.x);
      }
    }
    double bound = kInfinity;
    if (!g.is_rejected) {
      g.x.occupancy_factor = occupancy_decay(std::min(static_cast<U64>(std::max(1, occupancy)), g.waves_per_cu));
      bound = cycles(lightest, g.x, g.floor, g.epi).total / hw_.cycles_per_us * kRoundingMargin;
    }
    for (std::size_t t = i; t < j; ++t) predicted_us[t] = bound;
    run_bound = std::min(run_bound, bound);
    i = j;
  }
  return run_bound;
}

std::size_t OrigamiModel::predict_run_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                         std::size_t begin, std::size_t end, double* predicted_us,
                                         std::size_t keep, std::vector<double>& best) const {
  // Exact, one context, memory stage and epilogue per launch geometry; `best` keeps the `keep`
  // smallest predictions so far, ascending.
  const double element_bytes = element_bytes_of(problem);
  std::size_t exact = 0;
  for (std::size_t i = begin; i < end;) {
    std::size_t j = i + 1;
    while (j < end && same_geometry(prepared[j], prepared[i])) ++j;
    OrigamiContext x = context(problem, prepared[i], Mapping::kPredict);
    if (is_rejected(x, element_bytes)) {
      for (std::size_t t = i; t < j; ++t) predicted_us[t] = kInfinity;
      i = j;
      continue;
    }
    const MemoryCycles mem = memory_cycles(hw_, x, element_bytes);
    const EpilogueCycles epi = epilogue_terms(problem, x);
    const U64 waves_per_cu = div_up(x.grid_m * x.grid_n * x.batch * x.splits, hw_.num_cus);
    for (std::size_t t = i; t < j; ++t) {
      x.occupancy_factor =
          occupancy_decay(std::min(static_cast<U64>(std::max(1, prepared[t].origami.occupancy)), waves_per_cu));
      const double value = cycles(prepared[t].origami.compute_cycles_per_iter, x, mem, epi).total / hw_.cycles_per_us;
      predicted_us[t] = value;
      ++exact;
      if (best.size() < keep || value < best.back()) {
        best.insert(std::upper_bound(best.begin(), best.end(), value), value);
        if (best.size() > keep) best.pop_back();
      }
    }
    i = j;
  }
  return exact;
}

}  // namespace parity::gemm
