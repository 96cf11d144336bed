// The Hopper-class (NVIDIA) model: waves with last-wave fill, per-K-iteration max(DRAM, 4-norm of
// compute and L2 -> SM time) with L2 reuse across the window of concurrently running tiles, TMA
// multicast across a cluster, split-K partials plus a reduction kernel, launch and epilogue
// overheads, tile efficiency; kernels without TMA (operands aligned to < 16 bytes) at their own
// limits. Internal header: users go through PerformanceModel / make_model.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "model_math.hpp"
#include "parity/gemm/model.hpp"

namespace parity::gemm {

// Terms of the Hopper model that depend on the problem only.
struct HopperProblemTerms {
  double m = 0, n = 0, k = 0, batch = 1, out_bytes = 2;
  double inv_dram_bw = 0, inv_l2_bw = 0, reuse = 0, operand_bytes = 0, saturating_sms = 0;
  // The bounds' per-problem products, hoisted out of the per-candidate loop: M N batch output
  // elements and their DRAM time per byte of each.
  double outputs = 0, output_us_per_byte = 0;
  // DRAM time of the operand bytes every grid reads at least (the bounds' DRAM floor): the exact
  // term's compulsory part, reuse x operand bytes, plus its window re-reads, (1 - reuse) x window
  // bytes, which over all waves cover at least (batch M + N) x K operand elements.
  double operand_floor_us = 0;
  // (1 - reuse) / DRAM bandwidth: the finer bound's per-tile share of the window floor.
  double window_us_per_byte = 0;
  // The last tile counts computed for this problem, keyed by the tile and cluster extents and the
  // K step: candidate lists run through one tile shape at a time (clusters, variants, splits), so
  // most candidates reuse the previous one's counts instead of recomputing the roundings.
  struct GridMemo {
    double inv_tile_m = -1, inv_tile_n = -1, inv_split_k = -1, inv_tile_k = -1;
    int cluster_m = 0, cluster_n = 0;
    double grid_m = 0, grid_n = 0, iters = 0;
  };
  mutable GridMemo memo;
};

constexpr double kGridGuard = 1e-9;
// The grouped search sorts its groups by keys whose low bits are the group: at most 2^16 groups.
// The group floors leave these bits clear (lower still, and a sort key).
constexpr std::uint64_t kGroupMask = (std::uint64_t{1} << 16) - 1;
// The coarse bounds are shrunk by this: it absorbs their different order of additions.
constexpr double kCoarseRoundingMargin = 1.0 - 1e-12;

// One K-iteration of a wave: the 4-norm of its compute and L2 -> SM time.
inline double compute_l2_norm(double compute_us, double l2_us) {
  const double c2 = compute_us * compute_us, l2 = l2_us * l2_us;
  return std::sqrt(std::sqrt(c2 * c2 + l2 * l2));
}

// A lower bound of compute_l2_norm without its two square roots (a dependent chain of ~40 cycles
// in every finer bound): (a^4 + b^4)^(1/4) >= max(a, b) and >= 2^(-3/4) (a + b) (power means:
// M4 >= M1); equal at b = 0 and at a = b, at most 1.6% below between.
inline double compute_l2_norm_lower(double compute_us, double l2_us) {
  constexpr double kTwoToMinusThreeQuarters = 0.5946035575013605;
  return std::max(std::max(compute_us, l2_us), kTwoToMinusThreeQuarters * (compute_us + l2_us));
}

// What the coarse bound shares across a macro tile and split: K iterations per tile and the
// unrounded tile rows and columns (M / tm, N / tn).
struct HopperCoarseShape {
  double iters, rows, cols;
};

struct HopperGrid {
  double grid_m, grid_n, tiles, iters;
};

// Tiles launched (grid padded to whole clusters, times batch and split-K) and K iterations per
// tile, shared by the prediction and its lower bound.
inline HopperGrid hopper_grid(const HopperProblemTerms& t, const PreparedCandidate& p) {
  const HopperTerms& c = p.hopper;
  auto& memo = t.memo;
  if (c.inv_tile_m != memo.inv_tile_m || c.cluster_m != memo.cluster_m) {
    memo.inv_tile_m = c.inv_tile_m;
    memo.cluster_m = c.cluster_m;
    // Clusters launch whole: the grid is padded to a multiple of the cluster shape.
    memo.grid_m = fast_ceil(t.m * c.inv_tile_m - kGridGuard);
    if (c.cluster_m > 1) memo.grid_m = fast_ceil(memo.grid_m * c.inv_cluster_m - kGridGuard) * c.cluster_m;
  }
  if (c.inv_tile_n != memo.inv_tile_n || c.cluster_n != memo.cluster_n) {
    memo.inv_tile_n = c.inv_tile_n;
    memo.cluster_n = c.cluster_n;
    memo.grid_n = fast_ceil(t.n * c.inv_tile_n - kGridGuard);
    if (c.cluster_n > 1) memo.grid_n = fast_ceil(memo.grid_n * c.inv_cluster_n - kGridGuard) * c.cluster_n;
  }
  if (c.inv_split_k != memo.inv_split_k || c.inv_tile_k != memo.inv_tile_k) {
    memo.inv_split_k = c.inv_split_k;
    memo.inv_tile_k = c.inv_tile_k;
    const double k_per_split = fast_ceil(t.k * c.inv_split_k - kGridGuard);
    memo.iters = std::max(1.0, fast_ceil(k_per_split * c.inv_tile_k - kGridGuard));
  }
  return {memo.grid_m, memo.grid_n, memo.grid_m * memo.grid_n * t.batch * p.split_k, memo.iters};
}

// No split-K of a K-loop of at most kMaxUnsplitKTiles tiles (K <= 2 tk): its one saved iteration
// is a pipeline fill the model's per-iteration terms overprice, while the split pays partial stores
// and a reduction; on the 795 recorded shapes of suites 1-11 no oracle split such a loop, and the
// model's such picks ran at 0.78-0.80 of it (docs/gemm_model.md). The exact predictions give these
// +infinity (never chosen); the bounds stay below it.
inline constexpr double kMaxUnsplitKTiles = 2.0;
// Kernels without TMA: split-K partials priced as fp32 in either split scheme. On the recorded
// suites output-type partials measured no faster than fp32 ones (same tile and split), where
// halving their bytes had priced them 4-7% faster (docs/gemm_model.md).
inline constexpr double kLegacyPartialBytes = 4.0;
inline bool splits_short_k_loop(double k, double inv_tile_k, int split_k) {
  return split_k > 1 && k * inv_tile_k <= kMaxUnsplitKTiles;
}

// The candidates of a prepared TMA list grouped by macro tile and split (a tile's cluster shapes),
// for the pruned search: a group's floor terms take each member's extreme in the direction that
// lowers coarse_bound_us (fewest padded tiles, most usable SMs, least compute and L2 time per
// iteration, least fixed and per-byte costs), so their coarse bound is at or below every member's.
struct HopperGroupIndex {
  std::vector<PreparedCandidate> floor_terms;  // per group
  std::vector<std::uint32_t> member_begin;     // group g: members[member_begin[g] .. [g + 1])
  std::vector<std::uint32_t> members;          // candidate indices, ascending within a group
  // The floor terms coarse_bound_us reads, as columns of doubles so that the floors' loop over
  // every group vectorises (model_hopper_floors.cpp); infeasible: 0, or +infinity for a group
  // without a feasible member.
  struct FloorColumns {
    std::vector<double> inv_split_k, inv_tile_k, inv_tile_m, inv_tile_n, min_grid_m, min_grid_n,
        splits, inv_usable_sms, compute_us_per_iter, exposed_epilogue_us, min_exposed_store_us,
        full_wave_iter_us, pingpong_epilogue_us, l2_us_per_iter, store_bytes_per_tile,
        wave_fixed_us, split_fixed_us, reduce_bytes_per_output, infeasible;
  };
  FloorColumns columns;
};

class HopperModel final : public PerformanceModel {
 public:
  using PerformanceModel::PerformanceModel;
  PreparedCandidate prepare(const ProblemClass& problem_class,
                            const Candidate& candidate) const override;
  double predict_us(const GemmProblem& problem, const PreparedCandidate& prepared) const override;
  void predict_all_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                      std::size_t count, double* predicted_us) const override;
  std::size_t predict_top_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                             std::size_t count, std::size_t keep, double tie_epsilon,
                             double* predicted_us, double* cutoff_us) const override;
  // The same for a per-tile top-k list (TopKList::kDistinctTiles): `keep` counts distinct macro
  // tiles (tile_of[i]: candidate i's tile id), each at its best exact value so far, so every tile
  // whose best can reach the k best tiles or the near-tie group is predicted exactly; a
  // candidate above its tile's best and above the near-tie group may stay at a bound (above that
  // best) even below the cutoff. tile_of == nullptr: `keep` counts configurations, as
  // predict_top_us. `exact_indices` (when given) receives the candidates predicted exactly: every
  // other one is above the cutoff or, per tile, never its tile's best. `groups` (from
  // index_groups on this list; used with exact_indices only) bounds a group of cluster shapes
  // at once: the members of a group whose floor is above the cutoff are left unwritten.
  std::size_t predict_top_tiles_us(const GemmProblem& problem, const PreparedCandidate* prepared,
                                   const std::uint32_t* tile_of, std::size_t count,
                                   std::size_t keep, double tie_epsilon, double* predicted_us,
                                   double* cutoff_us, std::vector<std::uint32_t>* exact_indices,
                                   const HopperGroupIndex* groups) const;
  static HopperGroupIndex index_groups(const PreparedCandidate* prepared, std::size_t count);
  TimeBreakdown explain(const GemmProblem& problem, const PreparedCandidate& prepared) const override;

 private:
  HopperProblemTerms problem_terms(const GemmProblem& problem) const;
  // The sustained tensor rate of one tile as a fraction of the dense peak.
  double tile_efficiency(const ProblemClass& problem_class, const Candidate& candidate,
                         bool uses_tma, int cluster_size) const;
  void prepare_epilogue(const ProblemClass& problem_class, const Candidate& candidate,
                        PreparedCandidate& p) const;
  void prepare_bounds(const ProblemClass& problem_class, PreparedCandidate& p) const;
  template <bool kExplain>
  double predict(const HopperProblemTerms& terms, const PreparedCandidate& c,
                 TimeBreakdown* breakdown) const;
  template <bool kExplain>
  double predict_legacy(const HopperProblemTerms& terms, const PreparedCandidate& c,
                        TimeBreakdown* breakdown) const;
  void prepare_legacy(const ProblemClass& problem_class, const Candidate& candidate,
                      PreparedCandidate& p) const;
  double lower_bound_us(const HopperProblemTerms& terms, const PreparedCandidate& c) const;
  // Kernels without TMA: one bound serves as both the coarse and the finer one.
  double legacy_bound_us(const HopperProblemTerms& terms, const PreparedCandidate& c) const;
  double coarse_bound_us(const HopperProblemTerms& terms, const PreparedCandidate& c) const;
  double coarse_bound_us(const HopperProblemTerms& terms, const PreparedCandidate& c,
                         const HopperCoarseShape& shape) const;
  static HopperCoarseShape coarse_shape(const HopperProblemTerms& terms, const PreparedCandidate& c);
  // coarse_bound_us of every group's floor terms at once (model_hopper_floors.cpp), the same
  // operations in the same order: the same values.
  void group_floors_us(const HopperProblemTerms& terms,
                       const HopperGroupIndex::FloorColumns& groups, double* floors_us) const;
  static void group_floors_loop(const HopperProblemTerms& terms,
                                const HopperGroupIndex::FloorColumns& groups, double launch_us,
                                double tail_boost, double* floors_us);
  struct TopSearch;  // predict_top_tiles_us's state and stages
};

}  // namespace parity::gemm
