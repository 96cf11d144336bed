// TBE on the GPU (portable kernels in src/backends/gpu/embedding, built with nvcc and checked
// with hipcc). Pointers are device pointers; every call is asynchronous on `stream` and returns
// launch errors only. Only builds with PARITY_HAS_CUDA link the implementation.
#pragma once

#include <cstdint>

#include "parity/core/gpu.hpp"
#include "parity/embedding/tbe.hpp"

namespace parity::embedding::gpu {

using parity::gpu::DeviceBuffer;
using parity::gpu::StreamHandle;

/// The layout's per-feature arrays, uploaded once and reused by every call.
class DeviceTbeLayout {
 public:
  static Result<DeviceTbeLayout> create(const TbeLayout& layout);
  const void* data() const { return buffer_.data(); }
  int num_features() const { return num_features_; }

 private:
  DeviceBuffer buffer_;
  int num_features_ = 0;
};

struct DeviceBatch {
  const void* indices = nullptr;               // index_dtype, N
  const void* offsets = nullptr;               // index_dtype, F*B+1
  const float* per_sample_weights = nullptr;   // N or null
};

/// The forward kernels. kGroupPerBag: a group of lanes per bag, any shape; a layout whose tables
/// fall in different row-width classes (docs/embedding.md) runs one launch per contiguous run of
/// features of one class, each sized to its own widest row (and its own 16-byte alignment), so a
/// narrow table beside a wide one does not leave lanes idle. kGroupPerBagOneLaunch: the same kernel
/// in one launch sized to the widest row of all (the behaviour before the runs; kept to measure).
/// kNarrowRows: rows of <= kNarrowRowMaxBytes, several bags per warp with each lane one 16-byte
/// piece of a row and several rows in flight per lane (docs/embedding.md). kFittedGroups: group per
/// bag with groups of 4-16 lanes holding 3 or 5 16-byte units each, for widest rows of exactly that
/// many units (192-1280 bytes, e.g. D=96 fp32 or D=160 fp16; no idle lanes). kAuto
/// (select_forward_kernel): the warp-tile kernel select_warp_tile_kernel picks wherever
/// mixed_wide_short_bags_forward_fits, wide_one_hot_forward_fits, short_bags_forward_fits or
/// many_bags_forward_fits holds (kWarpTileOneHotWideRows for the mixed-width, one-hot wide, fp32
/// short-bag and many-bag rules; else kWarpTileOneHot for one-hot batches, kWarpTileShortBagsLight
/// for other short bags), else narrow rows wherever narrow_rows_forward_fits, else fitted groups
/// where they fit, else group per bag.
/// Candidates for narrow rows (the narrow-rows rule; 16-bit rows must start on 16-byte
/// boundaries), selectable for measurement (`parity bench tbe --forward-variant`):
/// kNarrowRowsDeep (4 bags x 4 rows in flight per group; also 16-bit rows off 16-byte boundaries,
/// as 8-byte pieces), kNarrowRowsLight (2 x 2 rows at twice the
/// resident warps), kWarpTileOneHot (a warp per tile of kWarpSize bags: offsets and the first index
/// read lane-per-bag, coalesced, then shuffled; every lead row of the tile loaded at once;
/// streaming output stores), kWarpTileOneHotPrefetch (the same, software-pipelined: the next tile's
/// offsets and indices load while this tile's rows do), kWarpTileShortBags (the same tiles with four
/// lead rows per bag), kWarpTileShortBagsPrefetch (short-bag tiles, software-pipelined as the
/// prefetching one-hot tiles), kWarpTileShortBagsLight (short-bag tiles with one pass of four rows
/// in flight per lane at three blocks per SM instead of two passes at two).
/// The warp tiles take rows up to kWarpTileMaxBytes (16-byte pieces, at most one per lane; the
/// one-hot and light short-bag tiles also 16-bit rows off 16-byte boundaries, two 8-byte pieces
/// per lane).
/// kWarpTileOneHotWideRows (pooling sum or mean; rows up to kWarpTileWideMaxBytes, half that for
/// 16-bit rows off 16-byte boundaries): the one-hot tiles with four pieces per lane and two passes
/// in flight, so one launch covers every width of a mixed layout (each tile sizes its group to its
/// own widest row) and a warp has two wide one-hot rows in flight where a group per bag has one.
/// kLaneRows (the narrow-rows rule; rows on 16-byte boundaries): a lane owns whole rows, 4 bags per
/// lane for rows up to 32 bytes, 2 up to 64, 1 up to 128, every bag's next row loaded at once, so a
/// warp has up to 128 rows in flight; each lane sizes its loads to its own bag's row (mixed dims in
/// one launch). For D=16/32 16-bit rows, one-hot or short bags.
/// kNarrowRowsSplitBags (the narrow-rows rule): narrow rows with a team of 2-32 groups sharing one
/// bag (part k of the team adds positions k, k + parts, ...; the parts' sums combined by shuffles
/// in a fixed order), for batches with too few bags to fill the GPU with a group per bag. kAuto
/// takes it instead of kNarrowRows where narrow_rows_split_parts > 1; forced, it splits at least
/// in two. Sums are deterministic for a given device (parts follow its SM count).
/// kWarpTileOneHot runs 4 passes in flight at 4 blocks per SM where the widest row needs at most 4
/// lanes (rows up to 64 bytes: every pass of a tile at once, a third more tiles resident), else 8
/// passes at 3 blocks; kWarpTileOneHotEightPasses forces the latter (same sums).
/// kGroupPerBagDedup (any row size; pooling sum or mean; 16-bit rows on 16-byte boundaries): group
/// per bag with whole-warp groups that read each distinct row of a chunk of kWarpSize positions
/// once and add it scaled by its repeats' summed weight (skewed bags; sums differ by rounding).
enum class ForwardKernel : std::uint8_t {
  kAuto,
  kGroupPerBag,
  kNarrowRows,
  kFittedGroups,
  kNarrowRowsDeep,
  kNarrowRowsLight,
  kWarpTileOneHot,
  kWarpTileOneHotPrefetch,
  kWarpTileShortBags,
  kWarpTileShortBagsPrefetch,
  kWarpTileShortBagsLight,
  kGroupPerBagDedup,
  kGroupPerBagOneLaunch,
  kWarpTileOneHotWideRows,
  kLaneRows,
  kNarrowRowsSplitBags,
  kWarpTileOneHotEightPasses,
};
inline constexpr int kNarrowRowMaxBytes = 128;
/// The warp tiles' widest row: 32 pieces of 16 bytes, one per lane of a 32-lane warp (a 64-lane
/// wavefront could take 1024, kept at 512 so both vendors select alike).
inline constexpr int kWarpTileMaxBytes = 512;
/// kWarpTileOneHotWideRows' widest row: four 16-byte pieces per lane of a 32-lane warp.
inline constexpr int kWarpTileWideMaxBytes = 2048;

/// Which bags a warp tile of the warp-tile kernels holds. kFeatureMajor: 32 consecutive bags of
/// the feature-major batch (one feature, consecutive samples). kSampleMajor: 32 consecutive
/// (sample, feature) pairs, so one store instruction writes adjacent features' columns of one
/// output row. kAuto: sample-major where every feature has one dim and either some feature's
/// output columns end inside a 32-byte sector or the batch is one-hot (sample_major_tiles_pay).
/// Where a feature's output columns end inside a 32-byte sector, feature-major tiles leave each
/// such sector half written by two tiles far apart in time, which costs the DRAM a
/// read-modify-write (ncu, run 77: a one-hot bf16 D=28 forward over 31 features read 215 MB and
/// wrote 141 MB for 130 MB of rows and 114 MB of output, 2.1x D=32's time; sample-major 2.4x
/// faster); on whole sectors one-hot batches still gained 9-12% and short bags of fp32 D=32 lost
/// 17%. Over mixed dims a tile's group is sized to its widest feature, and sample-major tiles ran
/// 12-48% slower there (run 77).
enum class TileOrder : std::uint8_t { kAuto, kFeatureMajor, kSampleMajor };

struct ForwardOptions {
  ForwardKernel kernel = ForwardKernel::kAuto;
  TileOrder tile_order = TileOrder::kAuto;
};

/// kAuto's tile order: sample-major when there are several features, all of one dim, and either
/// some feature's output columns end inside a 32-byte sector or no bag holds more than one index
/// on average (num_indices <= bags).
bool sample_major_tiles_pay(const TbeProblem& problem);

/// The narrow-rows rule: ok when the widest table's row (max_dim x weight bytes) is at most
/// kNarrowRowMaxBytes, pooling is sum or mean and F*B < 2^32; otherwise kUnsupported with the reason.
Status narrow_rows_forward_fits(const TbeProblem& problem);

/// The warp tiles' rule: the narrow-rows rule with rows up to kWarpTileMaxBytes instead of
/// kNarrowRowMaxBytes; otherwise kUnsupported with the reason.
Status warp_tile_forward_fits(const TbeProblem& problem);

/// The short-bags rule: the warp tiles' rule and at most kShortBagMeanIndices indices per bag on
/// average (num_indices <= kShortBagMeanIndices x bags); otherwise kUnsupported with the reason. There a warp per tile of bags
/// (kWarpTileOneHot) keeps more rows in flight than a group per bag, whose lanes idle on short bags
/// (docs/embedding.md: D1, D2 and D4 of the TBE issue, bag lengths 1, U[0, 10] and 4; and one-hot
/// rows of 129-512 bytes, where a group per bag has one row in flight per 16 or 32 lanes).
inline constexpr std::int64_t kShortBagMeanIndices = 6;
Status short_bags_forward_fits(const TbeProblem& problem);

/// The wide one-hot tiles' rule (kAuto's kWarpTileOneHotWideRows): one-hot (num_indices <= bags),
/// pooling sum or mean, 32-bit bag maths, and the widest row past kNarrowRowMaxBytes and at most
/// kWarpTileWideMaxBytes (half that for 16-bit tables off 16-byte boundaries, read as 8-byte
/// pieces); otherwise kUnsupported with the reason. One launch covers a mixed layout where the
/// group per bag runs one launch per width class (docs/embedding.md: dev s2_05 76.2% of copy
/// against 42.7%, s2_04 D=164 bf16 50.1% against the one-hot tiles' 43.9%).
Status wide_one_hot_forward_fits(const TbeProblem& problem);

/// The one-hot tiles' rule for 16-bit rows past kNarrowRowMaxBytes (select_warp_tile_kernel takes
/// kWarpTileOneHot where it holds, ahead of the wide tiles): one-hot, every feature of one dim, 16-bit
/// weights and output, rows of at most kWarpTileMaxBytes read as 16-byte pieces; otherwise
/// kUnsupported with the reason. There a warp per 32 bags beat the wide one-hot tiles (fp16 D=128
/// 0.82-0.87x the time, bf16 D=256 0.89x, bf16 D=192 1.01x; an fp32 output kept the wide tiles
/// ahead, 1.03x: docs/embedding.md).
Status one_hot_16_bit_tiles_forward_fits(const TbeProblem& problem);

/// The mixed-width short-bags rule (kAuto's kWarpTileOneHotWideRows ahead of every other rule):
/// tables of more than one dim, the widest row past kNarrowRowMaxBytes and within the wide one-hot
/// tiles' reach, at least kMixedWideShortBagsMinBags bags averaging at most
/// kMixedWideShortBagsMeanIndices indices; otherwise kUnsupported with the reason. The tiles'
/// tail walks such bags a row pair at a time, and one launch sizes each tile to its own row where
/// the group per bag runs a launch per width class (development sets 1-5, run 70: 1.2-1.5x on five
/// such layouts of 131k-655k bags; slower on uniform dims, 2-6x slower below ~25k bags, and 1.8x
/// slower on test set 6's 05, 49k bags of fp16 D 32/64/480, run 71: the rule starts at 65536).
inline constexpr std::int64_t kMixedWideShortBagsMinBags = 65536;
inline constexpr std::int64_t kMixedWideShortBagsMeanIndices = 16;
Status mixed_wide_short_bags_forward_fits(const TbeProblem& problem);

/// The fp32 short-bags rule (kAuto's kWarpTileOneHotWideRows inside the short-bags rule): fp32
/// weights, short_bags_forward_fits, more than kFp32ShortBagsMinMeanIndices indices per bag on
/// average, and the wide tiles' reach; otherwise kUnsupported with the reason. The light
/// short-bag tiles hold four rows in flight per lane in one pass, so bags past four rows take a
/// second pass; the wide tiles walk them without one. Development A/B (run 72, one call): fp32
/// bags of 5 (s3_04, s4_01) and U[0, 10] (C7) 1.21-1.50x faster on the wide tiles, bags of 4
/// (s2_00, D4) 7-10% slower; 16-bit short bags were 0.95-1.63x slower on them, so they keep the
/// light tiles.
inline constexpr std::int64_t kFp32ShortBagsMinMeanIndices = 4;
Status fp32_short_bags_forward_fits(const TbeProblem& problem);

/// The mixed 16-bit short-bags rule (kAuto's kWarpTileOneHotWideRows inside the short-bags rule):
/// 16-bit weights over tables of more than one dim, the widest row past kNarrowRowMaxBytes,
/// short_bags_forward_fits and more than kFp32ShortBagsMinMeanIndices indices per bag on average,
/// and the wide tiles' reach; otherwise kUnsupported with the reason. Bags past four rows take a
/// second pass of the light tiles, and one launch of the wide tiles sizes each tile to its own
/// row. Run 93 (H100, spent set 15's 00: fp16 D 16/64/240, bags of 6, 49k bags, weighted): 52.6
/// against 80.8 us. 16-bit short bags of one dim (run 72: bags of 3-4, or rows of 64 bytes) stay
/// on the light tiles.
Status mixed_16_bit_short_bags_forward_fits(const TbeProblem& problem);

/// The many-bags rule (kAuto's kWarpTileOneHotWideRows where the group per bag would run): rows
/// past kNarrowRowMaxBytes within the wide tiles' reach that do not fit the fitted groups, at
/// least kManyBagsMinBags bags, and TbeProblem::max_bag_length_hint known and at most
/// kManyBagsMaxBagLength; otherwise kUnsupported with the reason. One launch sizes each tile to
/// its own row and keeps a warp's bags' rows in flight where a group per bag idles lanes
/// (development sweep, run 74: 72 synthetic layouts of fp32 / fp16 / bf16 D 68-200, 131k-524k
/// bags of 8-40: 0.35-1.01x the group per bag's time, 16-bit off 16-byte boundaries gaining most;
/// C2 0.88x, C6 0.38x). Long bags are walked a row pair at a time: C3 (DLRMv2 multi-hot sizes up
/// to 100) ran 1.6x slower, and 33k bags of 20-40 1.1-1.35x slower, hence the bounds; the fitted
/// groups (D3, D5) stay faster. Bags known to hold at most kManyShortBagsMaxBagLength rows take
/// the tiles from kManyShortBagsMinBags bags (the mixed-width short-bags rule's bounds): spent test
/// set 13's 06 (98k bags of fp32 D=128, U[0, 12]) ran 0.73x the group per bag's time there (run 92).
inline constexpr std::int64_t kManyBagsMinBags = 131072;
inline constexpr std::int64_t kManyBagsMaxBagLength = 40;
inline constexpr std::int64_t kManyShortBagsMinBags = 65536;
inline constexpr std::int64_t kManyShortBagsMaxBagLength = 16;
Status many_bags_forward_fits(const TbeProblem& problem);

/// Where mixed_wide_short_bags_forward_fits: kWarpTileOneHotWideRows; where
/// one_hot_16_bit_tiles_forward_fits: kWarpTileOneHot; where many_bags_forward_fits,
/// wide_one_hot_forward_fits, fp32_short_bags_forward_fits or mixed_16_bit_short_bags_forward_fits:
/// kWarpTileOneHotWideRows. Else, where short_bags_forward_fits:
/// one-hot batches (num_indices <= bags) take kWarpTileOneHot, longer short bags
/// kWarpTileShortBagsLight (run 46: D4 56.4% of copy against 43.6%, D2 55.8% against 51.9%).
ForwardKernel select_warp_tile_kernel(const TbeProblem& problem);

/// The fitted-groups rule: ok when the widest table's row is exactly G x V units of 16 bytes
/// (G in {4, 8, 16}, V in {3, 5}: 192-1280-byte rows) and, for 16-bit weights, every table's rows
/// start on 16-byte boundaries (the weights pointer's own alignment is checked by tbe_forward);
/// otherwise kUnsupported with the reason.
Status fitted_groups_forward_fits(const TbeProblem& problem);

/// The split-bags rule (docs/embedding.md, "Split bags"): the parts (groups of lanes per bag, a
/// power of two) kNarrowRowsSplitBags gives a bag on a device of sm_count SMs; 1 where the
/// narrow-rows rule fails or no split pays (bags fill two waves of resident groups, or bags average
/// at most 8 rows, one pass, per part). kAuto (tbe_forward) and the op's narrow-rows variant
/// take kNarrowRowsSplitBags over kNarrowRows where this is > 1.
int narrow_rows_split_parts(const TbeProblem& problem, int sm_count);

/// The forward's selection rule, the one place it is written (kAuto and the TBE op's variant
/// order both follow it): the warp tiles (select_warp_tile_kernel) where wide_one_hot_forward_fits
/// or short_bags_forward_fits, else narrow rows where narrow_rows_forward_fits, else fitted groups
/// where fitted_groups_forward_fits, else group per bag.
ForwardKernel select_forward_kernel(const TbeProblem& problem);

/// output: output_rows() x output_cols() of output_dtype. A forced kernel that does not fit the
/// problem returns kUnsupported.
Status tbe_forward(const TbeProblem& problem, const DeviceTbeLayout& layout, const void* weights,
                   const DeviceBatch& batch, void* output, StreamHandle stream = nullptr);
Status tbe_forward(const TbeProblem& problem, const DeviceTbeLayout& layout, const void* weights,
                   const DeviceBatch& batch, void* output, const ForwardOptions& options,
                   StreamHandle stream = nullptr);

/// The backward's chunk kernels. kWarpPerChunk: one warp per chunk of sorted positions, any shape.
/// kNarrowRows: rows of <= kNarrowRowMaxBytes, one chunk per group of lanes sized to the row, so a
/// warp works several chunks (docs/embedding.md). kAuto: narrow rows wherever
/// narrow_rows_backward_fits, else warp per chunk. Both are deterministic; their sums of squares
/// (row-wise Adagrad) reduce over different lane trees, so they agree to rounding, not bitwise.
/// kAtomicSgd (only where atomic_sgd_backward_fits): no sort, one launch adding -lr x each
/// occurrence's gradient to its row with atomic adds; not bitwise reproducible; 16-bit rows round
/// at every add. kAuto takes it for fp32 weights wherever the rule holds, i.e. only with
/// BackwardOptions::deterministic false (the default, true, keeps the sorted paths).
enum class BackwardKernel : std::uint8_t { kAuto, kWarpPerChunk, kNarrowRows, kAtomicSgd };

/// Ok when the widest table's row is at most kNarrowRowMaxBytes; otherwise kUnsupported with the reason.
Status narrow_rows_backward_fits(const TbeProblem& problem);

struct BackwardOptions {
  /// The sorted paths are deterministic by construction (stable sort, fixed chunking, partials
  /// combined in chunk order); kAtomicSgd is not and needs this false. With false, kAuto takes
  /// kAtomicSgd for SGD on fp32 weights (atomic_sgd_backward_fits; 16-bit weights only when forced).
  bool deterministic = true;
  /// Upper bound on blocks per launch (0 = a few per SM); results do not depend on it.
  int max_grid_blocks = 0;
  /// Wider chunk-kernel window: true = each warp loads 4 positions' grad (and finished runs'
  /// weight) rows at a time for rows of one vec per lane, false (default) = 2; rows of two vecs
  /// per lane always take 2, wider rows 1. Same results either way. The default measured faster on
  /// C2 and slower on C4 (L = 1); figures in docs/embedding.md.
  bool batch_row_updates = false;
  BackwardKernel kernel = BackwardKernel::kAuto;
  /// Chunk length from the batch as well as the rows: C = max(32, max_dim/4, min(max(128,
  /// max_dim), N/8192)), so a batch of few indices per wide row still spreads over ~8192 chunks
  /// (the default C = max(128, max_dim) cuts test set 2's 05, 262k one-hot indices with D up to
  /// 488, into 538 chunks: one warp each, ~3000 warps resident). Depends on the problem only, so as
  /// deterministic; partials <= 32 B per index; size the workspace with the options. The default:
  /// it measured faster on small batches of wide rows and the same on C2 (docs/embedding.md);
  /// false keeps C = max(128, max_dim).
  bool short_chunks = true;
  /// With short_chunks: on batches of fewer than 2^20 indices the chunks may be shorter than a
  /// quarter of the widest row, their partials taking up to 32 MiB in all instead of 32 B per index
  /// (BackwardChunkLength::kShort), so a small batch of wide rows still spreads over many warps.
  /// Deterministic either way (the length depends on the problem only); false (the default)
  /// keeps 32 B per index (kShortPerIndexPartials): the shorter chunks measured slower on two of
  /// the three small batches they change (docs/embedding.md). Size the workspace with the options.
  bool small_batch_short_chunks = false;
  /// Adagrad / Adam on the sorted paths: a finished run's per-element state is loaded together
  /// with its weight row (before the sums) instead of after them, so each update waits on one
  /// memory latency instead of two. Same results either way; other optimisers ignore it. The
  /// default: it measured 3-6% faster steps (docs/embedding.md); false keeps the late loads.
  bool prefetch_element_state = true;
  /// Sorted paths: the radix sort of a batch of at most 2^20 indices in tiles of 1024 keys (one
  /// block each) instead of 4096, so a small batch's sort fills the GPU (a 200k-index batch made
  /// 49 blocks). The sort is stable, so the results are the same bit for bit; false keeps 4096.
  bool small_sort_tiles = true;
  /// Sorted paths: the keys are written by sort tile, counting the sort's first digit per tile on
  /// the way, so the sort skips its first histogram pass (a read of every key); false writes them
  /// by bag and keeps that pass. The same keys, so the same results bit for bit.
  bool sort_histogram_in_linearize = true;
  /// Sorted paths, portable sort: each radix pass's scatter counts the next pass's digits per
  /// output tile as it writes (integer atomic adds into a second count buffer), so no pass after
  /// the first launches a histogram (6 launches instead of 8 for a three-pass sort). The same
  /// counts, so the same results bit for bit. Off by default: slower on the H200 (the atomic adds
  /// cost more than the launches they remove; docs/embedding.md).
  bool sort_counts_in_scatter = false;
  /// Sorted paths: the keys sorted by the vendor's radix sort (CUB's DeviceRadixSort on NVIDIA; on
  /// Hopper one histogram pass for every digit, then one pass per 8-bit digit) instead of the
  /// portable one (three launches per 9-bit digit). Both sort stably on the same bits, so the results are the
  /// same bit for bit; sort_histogram_in_linearize does not apply. Not built for AMD (kUnsupported
  /// there). Off by default: timed against the portable sort on the H200 it won on one layout and
  /// lost on another (docs/embedding.md). Size
  /// the workspace with the options.
  bool vendor_sort = false;
};

/// The atomic SGD rule: optimizer SGD, pooling sum or mean, and options.deterministic false
/// (repeated rows add in arrival order); otherwise kUnsupported with the reason. Any weights dtype
/// (16-bit rows: each occurrence's term is added in the row's precision). Needs no workspace.
Status atomic_sgd_backward_fits(const TbeProblem& problem, const OptimizerParams& optimizer,
                                const BackwardOptions& options);

/// Workspace for either backward: sort keys (2 x 8 B), the bag of each position (4 B; only with
/// per-sample weights or pooling none, otherwise the key holds the bag) and the chunk partials of
/// runs that cross chunk boundaries (<= 8 B per index). Rejected (kUnsupported) when a global row
/// id and a bag (or position) do not fit 64 bits together.
Result<std::int64_t> tbe_backward_workspace_bytes(const TbeProblem& problem);
/// The same for these options (BackwardOptions::short_chunks needs more partial slots).
Result<std::int64_t> tbe_backward_workspace_bytes(const TbeProblem& problem, const BackwardOptions& options);

struct TrainingState {
  void* weights = nullptr;   // weight_dtype, updated in place
  float* state1 = nullptr;   // optimizer_state1_elements
  float* state2 = nullptr;   // optimizer_state2_elements
};

/// Backward fused with the optimiser: one update per unique row. grad_output fp32,
/// output_rows() x output_cols().
Status tbe_backward_fused(const TbeProblem& problem, const DeviceTbeLayout& layout,
                          const OptimizerParams& optimizer, const TrainingState& state,
                          const DeviceBatch& batch, const float* grad_output, void* workspace,
                          std::int64_t workspace_bytes, const BackwardOptions& options = {},
                          StreamHandle stream = nullptr);

/// Plain backward: per-unique-row gradients laid out by sorted position. For each position i of
/// the sorted order, `row_at_position[i]` is the global row whose run starts at i, or -1; its
/// gradient is `grads[i, 0:D]` (grads is N x max_dim fp32). `tbe_compact_dense_gradients` turns
/// that into (unique_rows, grads U x max_dim) on the host.
Status tbe_backward_dense(const TbeProblem& problem, const DeviceTbeLayout& layout,
                          const DeviceBatch& batch, const float* grad_output, std::int64_t* row_at_position,
                          float* grads, void* workspace, std::int64_t workspace_bytes,
                          const BackwardOptions& options = {}, StreamHandle stream = nullptr);

/// Per-block slots of the bounds check (no global atomics): size it with this.
std::int64_t bounds_check_workspace_bytes(const TbeProblem& problem);

/// Launches the check (and in fix mode the repairs) on indices/offsets in place. In error mode
/// nothing is written to indices or offsets. Read the outcome with read_bounds_check_report.
Status bounds_check(const TbeProblem& problem, const DeviceTbeLayout& layout, BoundsCheckMode mode,
                    void* indices, void* offsets, void* workspace, std::int64_t workspace_bytes,
                    StreamHandle stream = nullptr);

/// Synchronises `stream`, sums the per-block slots and fills in the first bad entry (table, bag,
/// position, value). Use bounds_check_status(report, mode) to turn error mode into a Status.
Result<BoundsCheckReport> read_bounds_check_report(const TbeProblem& problem, BoundsCheckMode mode,
                                                   const void* indices, const void* offsets,
                                                   const void* workspace, StreamHandle stream = nullptr);

}  // namespace parity::embedding::gpu

namespace parity::embedding::gpu {

/// Fills `count` elements of a weights buffer with seeded values uniform in [-scale, scale) (a
/// counter hash, so no host copy of a multi-GB table is needed for benchmarks).
Status fill_uniform(void* values, DType dtype, std::int64_t count, std::uint64_t seed, float scale,
                    StreamHandle stream = nullptr);

}  // namespace parity::embedding::gpu
