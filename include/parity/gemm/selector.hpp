// Selector: ranks candidates by the model's predicted time and picks one, breaking near-ties as
// Origami does (origami.md §2.10): within kTieEpsilon of the fastest prediction, prefer higher
// tile arithmetic intensity, then the tile that follows the problem's aspect (larger tile_m when
// M > N, else larger tile_n), then larger tile_m, tile_n, tile_k, then fewer L2 -> SM bytes per
// K-iteration (of one tile's clusters, the one multicasting the larger operand), then fewer split-K
// partials, then enumeration order. No timing, no tuning files beyond the model's scalars, no environment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/model.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::gemm {

inline constexpr double kTieEpsilon = 0.01;

struct OrigamiRunIndex;  // the AMD model's runs of one prepared list (internal)
struct HopperGroupIndex;  // the Hopper model's groups of cluster shapes of one list (internal)

// Two named modes.
//  - kAnalytical (the default): the model's ranking alone; no vendor query is needed, so the
//    selection latency is the model's.
//  - kHybrid: the model plus the vendor heuristic's ranks (the confidence rule): when the vendor's
//    own top-1 is among the candidates (the cuBLASLt provider adds its picks with their rank) and
//    the model predicts it within the model's error band of its own best, the vendor's top-1 is
//    chosen; the model overrides the vendor only where it predicts a clear win. The band is wider
//    where the model describes the kernels less well (no TMA: alignment < 16 bytes). Its latency
//    includes the vendor heuristic query (~0.1-0.2 ms warm on the H200), which the candidate list
//    must already carry.
enum class SelectionMode : std::uint8_t { kAnalytical, kHybrid };
std::string_view selection_mode_name(SelectionMode mode);        // "analytical", "hybrid"
Result<SelectionMode> parse_selection_mode(std::string_view text);

// What a top-k list holds (Selection::top). A top-k list is for autotuning among k candidates, so
// by default it spans k macro tiles: the variants of one tile (instruction, occupancy, WGM,
// cluster, split) are near-duplicates whose times move together, and a miss on one is a miss on
// all of them.
//  - kDistinctTiles (the default): the best configuration of each of the k best macro tiles
//    (tile_m x tile_n x tile_k), in predicted order (the best tile first; fewer than k entries
//    only when fewer tiles are feasible).
//  - kConfigs: the k best configurations, whatever their tiles.
// Both lists start with the same choice: top[0] does not depend on this option.
enum class TopKList : std::uint8_t { kDistinctTiles, kConfigs };
std::string_view top_k_list_name(TopKList list);  // "tiles", "configs"
Result<TopKList> parse_top_k_list(std::string_view text);

struct SelectorOptions {
  SelectionMode mode = SelectionMode::kAnalytical;
  TopKList top_k_list = TopKList::kDistinctTiles;
  double vendor_band = 0.03;         // hybrid, TMA kernels: relative prediction error band
  double vendor_band_legacy = 1e9;   // hybrid, kernels without TMA: always the vendor's top-1
};

struct RankedCandidate {
  std::size_t index = 0;       // into the candidate list the selector ranked
  double predicted_us = 0.0;
};

struct Selection {
  Candidate choice;
  double predicted_us = 0.0;
  double predicted_tflops = 0.0;
  std::vector<RankedCandidate> top;  // best first; top[0] is the choice (see TopKList)
  bool is_vendor_pick = false;       // hybrid: the confidence rule chose the vendor's top-1
};

class Selector {
 public:
  explicit Selector(GemmModel model, SelectorOptions options = {})
      : model_(std::move(model)), options_(options) {}
  const GemmModel& model() const { return model_; }
  const SelectorOptions& options() const { return options_; }

  // Ranks an ad-hoc candidate list (prepares its per-candidate constants on every call).
  Result<Selection> select(const GemmProblem& problem, std::span<const Candidate> candidates,
                           std::size_t top_k = 5);
  // Full ranking (every candidate, best first; variants of one tile are not merged).
  Result<std::vector<RankedCandidate>> rank(const GemmProblem& problem,
                                            std::span<const Candidate> candidates);

  // The fast path: a candidate set owned by the selector, whose per-candidate constants are
  // computed once per problem class and reused for every later shape of that class.
  void set_candidates(std::vector<Candidate> candidates);
  const std::vector<Candidate>& candidates() const { return candidates_; }
  Result<Selection> select(const GemmProblem& problem, std::size_t top_k = 5);

  static constexpr std::size_t kNoVendorPick = static_cast<std::size_t>(-1);

 private:
  // A problem class's per-candidate constants, and the distinct ones among them: `distinct`
  // holds the first of each group of equal prepared candidates, `distinct_of[i]` the group of
  // candidate i (empty when all are distinct). Only the distinct ones are predicted.
  // The AMD model's lists keep `runs` instead: where each run of one macro tile and split begins
  // and its head's tile fields, so a selection bounds one head per run and scans only the runs
  // predicted exactly. `tile_of[i]`: candidate i's macro tile as a dense id below `tile_count`
  // (`distinct_tile_of` the same for `distinct`), `max_tile_configs` the most candidates of one
  // tile (TopKList::kDistinctTiles only; a per-tile list then needs no hashing per selection).
  struct PreparedClass {
    std::vector<PreparedCandidate> prepared;
    std::vector<PreparedCandidate> distinct;
    std::vector<std::uint32_t> distinct_of;
    std::shared_ptr<const OrigamiRunIndex> runs;
    std::vector<std::uint32_t> tile_of, distinct_tile_of;
    std::uint32_t tile_count = 0;
    std::uint32_t max_tile_configs = 1;
    // The Hopper model's TMA lists: the cluster shapes of each macro tile and split as one group,
    // bounded together by the pruned search.
    std::shared_ptr<const HopperGroupIndex> hopper_groups;
  };
  static PreparedClass group_equal(std::vector<PreparedCandidate> prepared);
  static void index_tiles(PreparedClass& prepared_class);
  // The best prediction of a near-top search and its cutoff (+infinity: every candidate is
  // exact, so no wider search can add one).
  struct NearTop {
    double best_us, cutoff_us;
  };
  // Fills scratch_ with the candidates at or below the model's cutoff (exact predictions): that
  // cutoff is at or above the `keep`-th best prediction (of distinct macro tiles when
  // `per_tile`, which only the AMD run search honours).
  NearTop predict_near_top(const GemmProblem& problem, std::size_t count,
                          const PreparedClass& prepared_class, std::size_t keep, bool per_tile);
  Result<Selection> select_prepared(const GemmProblem& problem, std::span<const Candidate> candidates,
                                    const PreparedClass& prepared, std::size_t vendor_index,
                                    std::size_t top_k);
  // TopKList::kConfigs (and any list of one): orders scratch_'s near-tie group and its top-k.
  Result<Selection> order_configs(const GemmProblem& problem, std::span<const Candidate> candidates,
                                  const std::vector<PreparedCandidate>& prepared,
                                  std::size_t vendor_index, std::size_t top_k, double best_us);
  static Selection finish(const GemmProblem& problem, std::span<const Candidate> candidates,
                          Selection selection);
  std::vector<PreparedCandidate> prepare_all(const GemmProblem& problem,
                                             std::span<const Candidate> candidates) const;
  // The index of the vendor's top-1 when the confidence rule takes it over the model's best
  // prediction `best_us`; kNoVendorPick otherwise.
  std::size_t vendor_pick(const GemmProblem& problem, const std::vector<PreparedCandidate>& prepared,
                          std::size_t vendor_index, double best_us) const;
  GemmModel model_;
  SelectorOptions options_;
  std::vector<Candidate> candidates_;
  std::size_t vendor_index_ = kNoVendorPick;  // the vendor's top-1 in candidates_, if any
  std::unordered_map<std::uint64_t, PreparedClass> prepared_by_class_;
  std::vector<RankedCandidate> scratch_, tile_best_;
  std::vector<std::uint32_t> tile_slot_;  // per tile id: its place in tile_best_, or kNoSlot
  std::vector<double> predicted_, distinct_predicted_;
};

// True when `a` should rank before `b` among near-tied candidates (the tie-break chain above).
bool tie_break_before(const PreparedCandidate& a, const PreparedCandidate& b, const GemmProblem& problem);

}  // namespace parity::gemm
