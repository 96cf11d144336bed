// The Origami-class (AMD CDNA) model: a port of AMD Origami's analytical GEMM latency model
// (ROCm rocm-libraries shared/origami, gemm.cpp / streamk.cpp / origami.cpp; origami.md §2 and
// docs/gemm_model.md list what is ported). Cycles throughout; predict_us divides by the clock.
// Internal header: the context and memory stages are shared by model_origami.cpp and
// model_origami_memory.cpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "parity/gemm/model.hpp"

namespace parity::gemm {

// Device constants in Origami's units (bytes per compute cycle, cycles), derived once.
struct OrigamiHardware {
  std::uint64_t num_cus = 0, num_xcds = 1, cus_per_xcd = 0;
  double l2_bytes = 0.0;  // per XCD
  double lds_bytes = 0.0;
  double l2_bytes_per_cycle = 0.0, mall_bytes_per_cycle = 0.0, dram_bytes_per_cycle = 0.0;
  double q0 = 0.0, q1 = 0.0, q2 = 0.0;  // bandwidth fraction quadratic in active CUs
  bool has_mall = true;
  double cycles_per_us = 1.0;
  // Achievable bandwidth fraction with `active` CUs (Origami compute_mem_bw_from_occupancy):
  // 1 above the CU count, else min(1, q2 a^2 + q1 a + q0). Inline: two calls per launch geometry.
  double bandwidth_fraction(std::uint64_t active) const {
    if (active > num_cus) return 1.0;
    const double a = static_cast<double>(active);
    return std::min(q2 * a * a + q1 * a + q0, 1.0);
  }
};

// Origami's workgroup mapping: XCD chunk, XCD remap (NUM_XCD = contiguous blocks per XCD,
// 0 = round-robin dispatch) and the WGM slab width (negative: column-major).
struct WorkgroupMapping {
  std::uint64_t chunk = 0, xcd_remap = 0;
  std::int64_t wgm = 1;
};

// Tile coordinates touched by a range of workgroups: k (splits), m, n, batch.
struct UniqueTiles {
  std::uint64_t k = 0, m = 0, n = 0, b = 0;
};

// Launch geometry of one candidate on one problem (Origami's context_t).
struct OrigamiContext {
  std::uint64_t m = 0, n = 0, k = 0, batch = 1;
  std::uint64_t tile_m = 0, tile_n = 0, tile_k = 0;
  std::uint64_t grid_m = 0, grid_n = 0, tiles = 0;
  std::uint64_t workgroups = 0, active_cus = 0, timesteps = 0, splits = 1;
  std::uint64_t k_per_split = 0, k_iters = 0;  // ceil(k_per_split / MT_K): the cache warm-up depth
  bool is_parallel_reduction = false;          // split partials reduced by a second kernel
  double read_bw_fraction = 1.0, write_bw_fraction = 1.0, occupancy_factor = 1.0;
  WorkgroupMapping mapping;
};

// Per-operand hit rates: L2 (per XCD) and MALL (this revision uses one rate for both operands).
struct CacheHitRates {
  double l2_a = 0, l2_b = 0, mall_a = 0, mall_b = 0;
};

// Per-K-iteration memory cycles: the max over the levels, and each level.
struct MemoryCycles {
  double total = 0, l2 = 0, mall = 0, dram = 0;
};

// The epilogue of one tile (before the occupancy factor), its in-kernel split reduction, and the
// separate reduction kernel's cycles.
struct EpilogueCycles {
  double stores = 0, reduce = 0, reduction_kernel = 0;
};

// model_origami_memory.cpp: Origami's predict_workgroup_mapping, unique-tile counts, hit rates
// (estimate_cache_hit_rates) and per-iteration memory latency (compute_memory_latency). Operands
// are K-contiguous (TN, Origami's test harness layout).
WorkgroupMapping predict_workgroup_mapping(const OrigamiHardware& hw, const OrigamiContext& ctx,
                                           double element_bytes);
UniqueTiles count_unique_range(const UniqueTiles& grid, std::int64_t wgm, std::uint64_t start,
                               std::uint64_t count);
UniqueTiles count_unique_tiles(const UniqueTiles& grid, const WorkgroupMapping& mapping,
                               std::uint64_t num_cus, std::uint64_t num_xcds, std::uint64_t xcd_id);
CacheHitRates cache_hit_rates(const OrigamiHardware& hw, const OrigamiContext& ctx,
                              double element_bytes);
MemoryCycles memory_cycles(const OrigamiHardware& hw, const OrigamiContext& ctx,
                           double element_bytes);
// The L2 level alone (no hit rate involved): every K-iteration's A and B bytes through the active
// CUs' share of the L2 bandwidth; memory_cycles().total >= max(this, the 200-cycle DRAM latency).
double l2_cycles(const OrigamiHardware& hw, const OrigamiContext& ctx, double element_bytes);
// The runs of one prepared list: each run's first candidate and its head's tile fields, with
// the output tile (MT_M, MT_N, split) and MT_K as indices into the list's distinct values, so a
// selection rounds each distinct size once.
struct OrigamiRunIndex {
  struct Head {
    std::uint16_t grid = 0;  // into grids
    std::uint8_t depth = 0;  // into depths (MT_K)
    bool is_feasible = false;
  };
  struct Grid {
    std::uint16_t m = 0, n = 0;  // into sizes_m, sizes_n
    int split = 1;
    // Over its feasible runs: the depths (into depths) of the smallest and largest MT_K.
    std::uint8_t depth_min = 0, depth_max = 0;
    bool is_feasible = false;  // has a feasible run
  };
  // Per decomposition [is_stream_k]: the run's first candidate of it, its smallest MFMA cycles
  // and largest occupancy (what the refined bound needs); and the run's macro tile key, so a
  // per-tile search reads no candidate to find it.
  struct Decompositions {
    static constexpr std::uint32_t kNone = ~std::uint32_t{0};
    std::uint32_t first[2] = {kNone, kNone};
    double lightest[2] = {0, 0};
    int occupancy[2] = {0, 0};
    std::uint64_t tile = 0;
  };
  std::vector<Head> heads;
  std::vector<Decompositions> decompositions;  // per run
  std::vector<std::uint32_t> starts;  // run r is [starts[r], starts[r + 1]); one more than heads
  std::vector<Grid> grids;
  // Grid g's feasible runs, ascending, are grid_runs[grid_run_begin[g] .. grid_run_begin[g + 1]),
  // each with its MT_K (into depths): a grid's run bounds read nothing else of the index.
  struct GridRun {
    std::uint32_t run = 0, depth = 0;
  };
  std::vector<std::uint32_t> grid_run_begin;
  std::vector<GridRun> grid_runs;
  std::vector<int> sizes_m, sizes_n, depths;
  std::vector<std::uint8_t> depth_order;  // into depths, ascending MT_K
  // The grids' fields as columns of doubles, so the estimates' loop over every grid vectorises:
  // MT_M, MT_N, max(1, split), the smallest and largest MT_K of the feasible runs, and 0
  // (feasible) or +infinity (no feasible run).
  struct GridColumns {
    std::vector<double> tile_m, tile_n, split_k, tk_min, tk_max, infeasible;
  };
  GridColumns grid_columns;
  std::size_t count = 0;  // candidates in the list
};
struct TopValues;  // model_math.hpp

class OrigamiModel final : public PerformanceModel {
 public:
  OrigamiModel(DeviceParams device, ModelScalars scalars);
  PreparedCandidate prepare(const ProblemClass& problem_class,
                            const Candidate& candidate) const override;
  double predict_us(const GemmProblem& problem, const PreparedCandidate& prepared) const override;
  TimeBreakdown explain(const GemmProblem& problem,
                        const PreparedCandidate& prepared) const override;
  // Hierarchical: candidates come in runs of one macro tile (their MFMA, occupancy, WGM and XCD
  // mapping variants follow each other). One admissible bound per run (launch plus timesteps x
  // the tile's compute, loop bookkeeping, fixed cost, the 200-cycle DRAM latency and the exact
  // epilogue; every dropped term is >= 0) orders the runs; only runs whose bound can reach the
  // top-`keep` or the near-tie group are predicted exactly, and within a run a variant that
  // shares the launch geometry of one already predicted (WGM variants; occupancy variants when
  // occupancy does not change the grid) reuses its memory stage.
  std::size_t predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                             std::size_t count, std::size_t keep, double tie_epsilon,
                             double* predicted_us, double* cutoff_us) const override;
  // The same selection with the runs known in advance, for a caller that keeps a prepared list
  // across selections (the selector, per problem class): `runs` (from index_runs() on that list)
  // replaces the walk over every candidate: output grids are bounded first (grid_floor_us) and
  // only the runs of grids that can reach the cutoff are bounded, each from its compact head (no
  // PreparedCandidate is read) with the per-size roundings computed once per problem;
  // predicted_us is written only inside the ranges predicted exactly (blocks of one run's
  // candidates), which replace the contents of `exact_ranges`. Every candidate outside them
  // predicts above *cutoff_us, so a caller scans only those ranges. When fewer than `keep`
  // candidates are feasible (cutoff +infinity) every candidate is predicted exactly and the one
  // range [0, count) is reported.
  struct CandidateRange {
    std::size_t begin = 0, end = 0;
  };
  static OrigamiRunIndex index_runs(const PreparedCandidate* prepared, std::size_t count);
  // `per_tile`: the cutoff is the `keep`-th best of distinct macro tiles (each tile counted at
  // its best prediction), for a top-k list of one configuration per tile.
  std::size_t predict_top_runs_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                  const OrigamiRunIndex& runs, std::size_t keep, bool per_tile,
                                  double tie_epsilon,
                                  double* predicted_us, double* cutoff_us,
                                  std::vector<CandidateRange>& exact_ranges) const;
  const OrigamiHardware& hardware() const { return hw_; }
  // The launch geometry Origami derives for this candidate (exposed for tests); kSkip leaves the
  // workgroup mapping out (only the hit rates need it).
  enum class Mapping : std::uint8_t { kPredict, kSkip };
  OrigamiContext context(const GemmProblem& problem, const PreparedCandidate& c,
                         Mapping mapping = Mapping::kPredict) const;

 private:
  struct Cycles;
  // The epilogue's store and in-kernel reduction cycles and the separate reduction kernel: one
  // launch geometry, whatever the instruction or occupancy.
  EpilogueCycles epilogue_terms(const GemmProblem& problem, const OrigamiContext& ctx) const;
  // The same through a per-search memo (model_origami_runs.cpp): only inside search_runs, which
  // starts it for its problem with begin_epilogue_memo().
  EpilogueCycles memo_epilogue_terms(const GemmProblem& problem, const OrigamiContext& ctx) const;
  static void begin_epilogue_memo();
  // predict_top_us's first stage (model_origami_bounds.hpp): a bound for every candidate of one
  // run (macro tile, split and MT_K) from the problem's terms, the output grid's (GridBound) and
  // MT_K's (DepthBound).
  struct TileBoundTerms;
  struct GridBound;
  struct DepthBound;
  struct GridDepths;
  struct ProblemTables;
  TileBoundTerms tile_bound_terms(const GemmProblem& problem) const;
  static void fill_problem_tables(const TileBoundTerms& terms, const OrigamiRunIndex& index,
                                  ProblemTables& tables);
  GridBound grid_bound(const TileBoundTerms& terms, int tile_m, int tile_n, int split,
                       double grid_m, double grid_n) const;
  static DepthBound depth_bound(const TileBoundTerms& terms, int tile_k);
  double run_bound_us(const TileBoundTerms& terms, const GridBound& grid,
                      const DepthBound& depth) const;
  // Hierarchical: one floor under run_bound_us of every run of an output grid, from the grid's
  // terms and its MT_K range; a grid whose floor is above the cutoff is never bounded per run.
  double grid_floor_us(const TileBoundTerms& terms, const GridBound& grid,
                       const GridDepths& depths) const;
  // Cheaper and lower still: at or below grid_floor_us from the grid's tile counts alone (which
  // grids' terms and floors a search computes at all), for every grid of the index at once
  // (+infinity for a grid without a feasible run); padding_min per grid from the problem's
  // tables (ProblemTables::grid_padding).
  void grid_tile_count_floors_us(const TileBoundTerms& terms,
                                 const OrigamiRunIndex::GridColumns& grids,
                                 const double* padding_min, double* floors_us) const;
  // Its loop, compiled for AVX2 and for baseline x86-64 (model_origami_estimates.cpp).
  static void tile_count_floors_us(const TileBoundTerms& terms,
                                   const OrigamiRunIndex::GridColumns& grids,
                                   const double* padding_min, double cycles_per_us,
                                   double* floors_us);
  // predict_top_us's search over runs (bounded by the first stage): pops them in ascending bound,
  // refines, predicts exactly; appends the exact ranges when `exact_ranges` is given. Run r has
  // the first-stage bound bounds[r], candidates [starts[r], starts[r + 1]) and, when `summaries`
  // is not empty, the refined bound's inputs summaries[r]; `seed` is the run
  // of the smallest bound so far. `bounded_runs`, when given, lists every run with a bound; the
  // others are never read (null: every run has one). With `pruning` (over an OrigamiRunIndex)
  // the grids not yet bounded enter the heap at their estimate once the seed is predicted, and a
  // popped grid's runs are bounded then (listed in `bounded_runs`).
  struct Run;
  struct HeapEntry;
  // search_runs's state (seeds, heap, best values) and predict_top_runs_us's per-grid state
  // (estimates, floors, run bounds), each with its stages as members.
  struct RunSearch;
  struct GridPruning;
  std::size_t search_runs(const GemmProblem& problem, const PreparedCandidate* prepared,
                          std::span<const double> bounds, std::span<const std::uint32_t> starts,
                          std::span<const OrigamiRunIndex::Decompositions> summaries,
                          std::size_t seed, std::size_t keep, bool per_tile,
                          double tie_epsilon, double* predicted_us, double* cutoff_us,
                          std::vector<CandidateRange>* exact_ranges,
                          const std::vector<std::uint32_t>* bounded_runs,
                          GridPruning* pruning) const;
  // predict_top_us's second stage (a run's bound from each decomposition's launch geometry,
  // each written to by_decomposition[is_stream_k] when given) and third (exact predictions of a
  // run, folding them into `best`). `summaries` (per run, from the index) may be empty: then
  // the walk summarizes a run when it refines it and writes the bounds to its members.
  static OrigamiRunIndex::Decompositions summarize_run(const PreparedCandidate* prepared,
                                                       std::size_t begin, std::size_t end);
  double refined_bound_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                          const OrigamiRunIndex::Decompositions& run,
                          double* by_decomposition) const;
  std::size_t predict_run_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                             std::size_t begin, std::size_t end, const bool include[2],
                             double* predicted_us, TopValues& best,
                             std::vector<CandidateRange>* exact_ranges) const;
  Cycles cycles(double compute_cycles_per_iter, const OrigamiContext& ctx, const MemoryCycles& mem,
                const EpilogueCycles& epi) const;
  OrigamiHardware hw_;
  double min_cycles_per_flop_ = 0.0;  // fastest native MFMA, 2-byte inputs
};

}  // namespace parity::gemm
