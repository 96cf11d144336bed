// The Origami port: hand-checked consequences of Origami's grid and tile latency on its harness
// hardware (gfx942: 228 CUs at 1.7 GHz, gfx950: 304 at 2.1 GHz), the rules of the ported revision
// (docs/gemm_model.md), the agreement computation against a known ranking, and the hierarchical
// selection (pruned top-k equals the exhaustive one).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

#include "common/gemm_top_k.hpp"
#include "gemm/model_origami.hpp"
#include "parity/gemm/model.hpp"
#include "parity/gemm/origami_agreement.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

DeviceParams reference(const char* catalogue_name) {
  auto spec = hw::find_hardware(catalogue_name);
  EXPECT_TRUE(spec.is_ok());
  return origami_reference_device(device_params_from_spec(spec.value()).value()).value();
}

DeviceParams reference_gfx942() { return reference("mi300x"); }

GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

Candidate tile(int m, int n, int k, Decomposition decomposition) {
  Candidate c;
  c.tile_m = m;
  c.tile_n = n;
  c.tile_k = k;
  c.mi_m = c.mi_n = 16;
  c.mi_k = 16;
  c.stages = 2;
  c.occupancy = 1;
  c.group_size = 1;
  c.xcd_mapping = XcdMapping::kContiguous;
  c.decomposition = decomposition;
  return c;
}

TimeBreakdown explain(const GemmModel& model, const GemmProblem& p, const Candidate& c) {
  return model.impl().explain(p, model.prepare(problem_class(p), c));
}

// 256 tiles of 256x256 on 228 CUs: more tiles than CUs, so the k-split-aware grid is fractional
// (round(256 / 1) = 256 <= 228 fails, f = 1/2 gives round(256 / 1.5) = 171 <= 228), and Origami
// charges whole timesteps of max(grid, tiles): ceil(256 / 228) = 2 waves.
TEST(GemmOrigamiModel, FractionalStreamKGridStillCountsTheTileWaves) {
  const GemmModel model(reference_gfx942(), default_scalars(reference_gfx942()));
  const auto b = explain(model, shape(4096, 4096, 4096), tile(256, 256, 64, Decomposition::kStreamK));
  EXPECT_EQ(b.waves, 2.0);
  EXPECT_EQ(b.reduction_us, 0.0);  // splits = ceil(171 / 256) = 1: no partials are charged
}

// One 16x16 tile over K = 65536 (1024 iterations of 64): tiles <= CUs / 4 and >= 64 iterations,
// so Origami splits K min(228 / 1, 1024 / 8) = 128 ways and reduces in a separate kernel. The
// data-parallel tile pays at least 1024 x 500 loop cycles (~301 us at 1.7 GHz); each split runs 8
// iterations, so the stream-K prediction must be far (> 10x) below it and carry a reduction term.
TEST(GemmOrigamiModel, DeepKFewTilesSplitsKWithASeparateReduction) {
  const GemmModel model(reference_gfx942(), default_scalars(reference_gfx942()));
  const GemmProblem p = shape(16, 16, 65536);
  const auto split = explain(model, p, tile(16, 16, 64, Decomposition::kStreamK));
  const auto data_parallel = explain(model, p, tile(16, 16, 64, Decomposition::kDataParallel));
  EXPECT_GT(data_parallel.total_us, 1024 * 500 / 1.7e3);
  EXPECT_LT(split.total_us * 10.0, data_parallel.total_us);
  EXPECT_GT(split.reduction_us, 0.0);
  EXPECT_EQ(data_parallel.reduction_us, 0.0);
}

// K < MT_K: no full iteration runs (Origami's k_iters = 0), only the tail and the depth-unroll
// waste; a tile of MT_K = 1024 on K = 64 must cost more than the same tile at MT_K = 64.
TEST(GemmOrigamiModel, DepthUnrollBeyondKIsWaste) {
  const GemmModel model(reference_gfx942(), default_scalars(reference_gfx942()));
  const GemmProblem p = shape(2048, 2048, 64);
  const double fit = model.predict_us(p, tile(128, 128, 64, Decomposition::kStreamK));
  const double waste = model.predict_us(p, tile(128, 128, 1024, Decomposition::kStreamK));
  EXPECT_GT(waste, fit);
}

// Agreement against a ranking made from our own selection is perfect on every top-1 and overlap
// figure; against a ranking whose top-1 is a config we rank outside our top-5, those are zero.
TEST(GemmOrigamiAgreement, ScoresOwnRankingAsFullAgreementAndAForeignTopAsNone) {
  const DeviceParams device = reference_gfx942();
  const auto space = origami_reference_space(device);
  Selector selector(GemmModel(device, default_scalars(device)));
  const GemmProblem p = shape(4096, 4096, 4096);
  OrigamiRanking ours;
  ours.problem_text = "4096x4096x4096x1";
  ours.problem = p;
  {
    std::vector<Candidate> comparable;
    for (const Candidate& c : space) {
      if ((c.tile_m + c.tile_n) * c.tile_k * 2.0 <= kOrigamiTileFootprintBytes) comparable.push_back(c);
    }
    // Our 10 best configurations (Origami's lists are of configurations, not one per tile).
    Selector configs(selector.model(), SelectorOptions{.top_k_list = TopKList::kConfigs});
    configs.set_candidates(comparable);
    const auto selection = configs.select(p, 10);
    ASSERT_TRUE(selection.is_ok());
    for (const RankedCandidate& r : selection.value().top) {
      ours.top.push_back(comparable[r.index]);
      ours.latency.push_back(r.predicted_us);
    }
  }
  const AgreementReport same = compare_with_origami(selector, {ours}, space);
  EXPECT_EQ(same.problems, 1);
  EXPECT_EQ(same.top1_exact, 1.0);
  EXPECT_EQ(same.top1_macro_tile, 1.0);
  EXPECT_EQ(same.their_top1_in_our_top5, 1.0);
  EXPECT_EQ(same.top10_overlap_exact, 1.0);
  EXPECT_EQ(same.rank_of_their_top1, 0.0);

  OrigamiRanking foreign = ours;
  foreign.top = {tile(16, 16, 16, Decomposition::kStreamK)};  // tiny tiles on a large problem
  foreign.latency = {1.0};
  const AgreementReport other = compare_with_origami(selector, {foreign}, space);
  EXPECT_EQ(other.top1_exact, 0.0);
  EXPECT_EQ(other.top1_macro_tile, 0.0);
  EXPECT_EQ(other.their_top1_in_our_top5, 0.0);
  EXPECT_GT(other.rank_of_their_top1, 5.0);
}

Candidate config(int m, int n, int k, int mi_m, int mi_k, int occupancy) {
  Candidate c;
  c.tile_m = m;
  c.tile_n = n;
  c.tile_k = k;
  c.mi_m = c.mi_n = mi_m;
  c.mi_k = mi_k;
  c.stages = 2;
  c.occupancy = occupancy;
  c.group_size = 1;
  c.xcd_mapping = XcdMapping::kContiguous;
  c.decomposition = Decomposition::kStreamK;
  return c;
}

double cycles(const GemmModel& model, const GemmProblem& p, const Candidate& c) {
  return model.predict_us(p, c) * model.device().clock_ghz * 1e3;
}

// D is column-major (M contiguous): a tile stores MT_N column segments of MT_M elements, each
// rounded up to whole 128-byte lines. On a square problem a 32x128 tile (64-byte segments) stores
// twice the bytes of the transposed 128x32 one; 64x128 and 128x64 (128-byte segments) store the
// same. The epilogue is the only term that differs (same tile counts, MFMA count, iterations).
TEST(GemmOrigamiRules, StoresChargeWhole128ByteLinesOfOutputColumns) {
  const GemmModel gfx942(reference("mi300x"), default_scalars(reference("mi300x")));
  const GemmProblem square = shape(512, 512, 64);
  const auto epilogue_us = [&](int m, int n) {
    return explain(gfx942, square, config(m, n, 64, 16, 16, 1)).launch_wave_us;
  };
  EXPECT_GT(epilogue_us(32, 128), epilogue_us(128, 32) * 1.01);
  EXPECT_NEAR(epilogue_us(64, 128), epilogue_us(128, 64), 1e-9 * epilogue_us(128, 64));
}

// Origami's own latencies (data/reference/origami, its model's output in cycles) for three of
// its top-1 configurations. The CSV prints 6 significant digits; the port reproduces these to
// within 1e-4 relative (the residual is below the 1% near-tie band by two orders of magnitude).
TEST(GemmOrigamiRules, ReproducesPublishedLatencies) {
  constexpr double kRelative = 1e-4;
  const GemmModel gfx942(reference("mi300x"), default_scalars(reference("mi300x")));
  const GemmModel gfx950(reference("mi355x"), default_scalars(reference("mi355x")));
  EXPECT_NEAR(cycles(gfx942, shape(31104, 2496, 61968), config(256, 192, 64, 32, 8, 2)),
              2.44376e7, 2.44376e7 * kRelative);
  EXPECT_NEAR(cycles(gfx942, shape(2304, 7712, 830352), config(128, 336, 64, 16, 16, 2)),
              8.29044e7, 8.29044e7 * kRelative);
  EXPECT_NEAR(cycles(gfx950, shape(6256, 2704, 68128), config(256, 256, 64, 16, 32, 1)),
              3.34703e6, 3.34703e6 * kRelative);
}

GemmProblem batched(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch) {
  GemmProblem p = shape(m, n, k);
  p.batch = batch;
  return p;
}

// With >= 2 x CUs tiles only the interior and the edge along the longer grid dimension count; a
// square grid (here one tile per batch) counts its N edge, or its M edge when it has no N edge.
// gfx950's rankings: on 224x128x96 x 98666 the exact 224x128 tile is Origami's top-1 and both
// padded tiles (a lone N edge 224x192, a lone M edge 256x128) rank outside its top-10 (10th:
// 5.47391e6 cycles); on 384x384x240 x 22154 its top-1 448x448 (N edge, M edge and corner) is priced
// at its N edge (at its scalar M edge it would be 22% above Origami's latency). The port does not
// reproduce these batched latencies exactly (0.9% and 2.1% below, the batched memory terms): the
// tolerance is 3%, well inside the 20% a wrong edge costs.
TEST(GemmOrigamiRules, SquareGridsOfManyTilesChargeTheirNEdgeElseTheirMEdge) {
  constexpr double kRelative = 0.03;
  const GemmModel gfx950(reference("mi355x"), default_scalars(reference("mi355x")));
  const GemmProblem exact_tile = batched(224, 128, 96, 98666);
  EXPECT_NEAR(cycles(gfx950, exact_tile, config(224, 128, 32, 16, 32, 2)), 5.27492e6, 5.27492e6 * kRelative);
  EXPECT_GT(cycles(gfx950, exact_tile, config(224, 192, 32, 16, 32, 2)), 5.47391e6);
  EXPECT_GT(cycles(gfx950, exact_tile, config(256, 128, 32, 16, 32, 2)), 5.47391e6);
  EXPECT_NEAR(cycles(gfx950, batched(384, 384, 240, 22154), config(448, 448, 32, 16, 32, 2)), 8.90713e6,
              8.90713e6 * kRelative);
}

// With >= 2 x CUs tiles the M edge (the only edge a 3 x 7 grid counts) is charged on the vector
// path: for Origami's top-1 512x224x16 on 1488x1568x16 x 2773 (an M edge of 464 rows in every
// batch) the scalar path (bounds checks per element, 1.1x stores) was 1.53x Origami's latency on
// both arches; the vector path is 3.7% (gfx942) and 7.3% (gfx950) above it, hence 10%.
TEST(GemmOrigamiRules, ManyTilesChargeTheMEdgeOnTheVectorPath) {
  constexpr double kRelative = 0.10;
  const GemmModel gfx942(reference("mi300x"), default_scalars(reference("mi300x")));
  const GemmModel gfx950(reference("mi355x"), default_scalars(reference("mi355x")));
  const GemmProblem p = batched(1488, 1568, 16, 2773);
  EXPECT_NEAR(cycles(gfx942, p, config(512, 224, 16, 32, 8, 2)), 9.38295e6, 9.38295e6 * kRelative);
  EXPECT_NEAR(cycles(gfx950, p, config(512, 224, 16, 32, 16, 2)), 7.70577e6, 7.70577e6 * kRelative);
}

// The occupancy amortises prologue and epilogue (0.95 per resident workgroup) only up to the
// workgroups a CU actually receives: 4096x4096 in 256x256 tiles is 256 tiles on 228 CUs
// (2 per CU), so occupancy 2 is cheaper than 1; 1024x1024 is 16 tiles (1 per CU), so the
// occupancy cap makes both the same.
TEST(GemmOrigamiRules, OccupancyAmortisesOnlyTheWorkgroupsACuReceives) {
  const GemmModel model(reference("mi300x"), default_scalars(reference("mi300x")));
  const GemmProblem two_waves = shape(4096, 4096, 4096);
  EXPECT_LT(model.predict_us(two_waves, config(256, 256, 64, 32, 8, 2)),
            model.predict_us(two_waves, config(256, 256, 64, 32, 8, 1)));
  const GemmProblem one_wave = shape(1024, 1024, 4096);
  EXPECT_EQ(model.predict_us(one_wave, config(256, 256, 64, 32, 8, 2)),
            model.predict_us(one_wave, config(256, 256, 64, 32, 8, 1)));
}

// Origami's short circuit wants a non-temporal B when K and MT_K are whole 128-byte rows,
// M <= 2 MT_M and N / M > 5: M = 256, N = 4096 (ratio 16), K = 4096 with MT_K = 64 (128 bytes of
// bf16) is rejected; MT_K = 32 (64 bytes) and K = 4000 (8000 bytes, not whole rows) are not.
TEST(GemmOrigamiRules, RejectsTemporalOperandsWhereOrigamiWantsANonTemporalOne) {
  const GemmModel model(reference("mi300x"), default_scalars(reference("mi300x")));
  EXPECT_TRUE(std::isinf(model.predict_us(shape(256, 4096, 4096), config(256, 128, 64, 32, 8, 1))));
  EXPECT_TRUE(std::isfinite(model.predict_us(shape(256, 4096, 4096), config(256, 128, 32, 32, 8, 1))));
  EXPECT_TRUE(std::isfinite(model.predict_us(shape(256, 4096, 4000), config(256, 128, 64, 32, 8, 1))));
}

// No launch term in this revision: a one-tile problem's latency is its tile alone. 48x32x16 on
// 608x432x32 has two K-iterations (so one main iteration), far below the old 9900-cycle launch.
TEST(GemmOrigamiRules, NoLaunchOverhead) {
  const GemmModel model(reference("mi300x"), default_scalars(reference("mi300x")));
  EXPECT_LT(cycles(model, shape(608, 432, 32), config(48, 32, 16, 16, 16, 1)), 4.5 * 2200.0);
}

// The harness's instruction order (the ties in the baselines keep it): 32x32x8 before 16x16x16
// on gfx942; 32x32x8, 16x16x32, 32x32x16, 16x16x16 on gfx950.
TEST(GemmOrigamiRules, ReferenceSpaceFollowsOrigamisInstructionOrder) {
  const auto gfx942 = origami_reference_space(reference("mi300x"));
  ASSERT_GE(gfx942.size(), 12u);
  EXPECT_EQ(gfx942[0].mi_m, 32);
  EXPECT_EQ(gfx942[0].mi_k, 8);
  EXPECT_EQ(gfx942[6].mi_m, 16);
  EXPECT_EQ(gfx942[6].mi_k, 16);
  const auto gfx950 = origami_reference_space(reference("mi355x"));
  ASSERT_GE(gfx950.size(), 24u);
  const int expected[][2] = {{32, 8}, {16, 32}, {32, 16}, {16, 16}};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(gfx950[static_cast<std::size_t>(6 * i)].mi_m, expected[i][0]) << i;
    EXPECT_EQ(gfx950[static_cast<std::size_t>(6 * i)].mi_k, expected[i][1]) << i;
  }
}

// Hierarchical selection (bounds per macro-tile run, exact only below the cutoff) returns the
// same top-10, in the same order and with the same predictions, as ranking every candidate
// exactly, on every problem of the port half, on both arches.
TEST(GemmOrigamiRules, PrunedTopTenEqualsExhaustiveOnThePortHalf) {
  for (const auto& [name, arch] : {std::pair{"mi300x", "gfx942"}, std::pair{"mi355x", "gfx950"}}) {
    const DeviceParams device = reference(name);
    const auto path = std::filesystem::path(PARITY_SOURCE_DIR) / "data/reference/origami" /
                      (std::string(arch) + "_bf16.csv");
    const auto rankings = read_origami_rankings(path);
    ASSERT_TRUE(rankings.is_ok()) << rankings.status().message();
    std::vector<Candidate> comparable;
    for (const Candidate& c : origami_reference_space(device)) {
      if ((c.tile_m + c.tile_n) * c.tile_k * 2.0 <= kOrigamiTileFootprintBytes) comparable.push_back(c);
    }
    for (const TopKList list : {TopKList::kDistinctTiles, TopKList::kConfigs}) {
      Selector selector(GemmModel(device, default_scalars(device)), SelectorOptions{.top_k_list = list});
      selector.set_candidates(comparable);
      for (const OrigamiRanking& r : select_half(*rankings, RankingHalf::kPort)) {
        const auto pruned = selector.select(r.problem, 10);
        const auto exhaustive = selector.rank(r.problem, comparable);
        ASSERT_TRUE(pruned.is_ok() && exhaustive.is_ok()) << r.problem_text;
        const auto expected = testing::expected_top_k(*exhaustive, comparable, 10, list);
        ASSERT_EQ(pruned->top.size(), 10u);
        ASSERT_EQ(expected.size(), 10u);
        for (std::size_t i = 0; i < 10; ++i) {
          EXPECT_EQ(pruned->top[i].index, expected[i].index) << name << " " << r.problem_text << " #" << i;
          EXPECT_EQ(pruned->top[i].predicted_us, expected[i].predicted_us) << name << " " << r.problem_text;
        }
      }
    }
  }
}

// With the runs known in advance (a caller keeping the prepared list), the selection predicts
// exactly every candidate the walk over every candidate finds at or below its cutoff: the same
// cutoff, every such candidate inside a reported exact range, and every candidate of a reported
// range at its exact prediction (the hierarchical search may predict a run the walk only bounds);
// on every problem of the port half, on both arches. With fewer feasible candidates than `keep`,
// all of them are exact.
TEST(GemmOrigamiRules, KnownRunsSelectWhatTheWalkSelects) {
  for (const auto& [name, arch] : {std::pair{"mi300x", "gfx942"}, std::pair{"mi355x", "gfx950"}}) {
    const DeviceParams device = reference(name);
    const auto rankings = read_origami_rankings(std::filesystem::path(PARITY_SOURCE_DIR) /
                                                "data/reference/origami" / (std::string(arch) + "_bf16.csv"));
    ASSERT_TRUE(rankings.is_ok()) << rankings.status().message();
    const GemmModel handle(device, default_scalars(device));
    const auto* model = dynamic_cast<const OrigamiModel*>(&handle.impl());
    ASSERT_NE(model, nullptr);
    std::vector<Candidate> comparable;
    for (const Candidate& c : origami_reference_space(device)) {
      if ((c.tile_m + c.tile_n) * c.tile_k * 2.0 <= kOrigamiTileFootprintBytes) comparable.push_back(c);
    }
    constexpr std::size_t kKeep = 10;
    constexpr double kTie = 0.01;
    for (const OrigamiRanking& r : select_half(*rankings, RankingHalf::kPort)) {
      std::vector<PreparedCandidate> prepared;
      for (const Candidate& c : comparable) prepared.push_back(model->prepare(problem_class(r.problem), c));
      const OrigamiRunIndex runs = OrigamiModel::index_runs(prepared.data(), prepared.size());
      ASSERT_LT(runs.heads.size(), prepared.size());
      std::vector<double> walk(prepared.size()), known(prepared.size(), -1.0);
      double walk_cutoff = 0, known_cutoff = 0;
      model->predict_top_us(r.problem, prepared.data(), prepared.size(), kKeep, kTie, walk.data(), &walk_cutoff);
      std::vector<OrigamiModel::CandidateRange> ranges;
      model->predict_top_runs_us(r.problem, prepared.data(), runs, kKeep, false, kTie,
                                 known.data(), &known_cutoff, ranges);
      EXPECT_EQ(known_cutoff, walk_cutoff) << name << " " << r.problem_text;
      std::vector<bool> is_exact(prepared.size(), false);
      for (const auto& range : ranges) {
        for (std::size_t i = range.begin; i < range.end; ++i) is_exact[i] = true;
      }
      for (std::size_t i = 0; i < prepared.size(); ++i) {
        if (walk[i] <= walk_cutoff) {
          ASSERT_TRUE(is_exact[i]) << name << " " << r.problem_text << " candidate " << i;
        }
        if (is_exact[i]) {
          EXPECT_EQ(known[i], model->predict_us(r.problem, prepared[i])) << name << " " << r.problem_text << " candidate " << i;
        }
        if (walk[i] <= walk_cutoff) {
          EXPECT_EQ(known[i], walk[i]) << name << " " << r.problem_text << " candidate " << i;
        }
      }
    }
  }
  // Two candidates, keep 10: no finite cutoff, both predicted exactly in one range.
  const DeviceParams device = reference("mi300x");
  const GemmModel handle(device, default_scalars(device));
  const auto* model = dynamic_cast<const OrigamiModel*>(&handle.impl());
  ASSERT_NE(model, nullptr);
  const GemmProblem p = shape(4096, 4096, 4096);
  const std::vector<PreparedCandidate> two = {
      model->prepare(problem_class(p), tile(256, 256, 64, Decomposition::kStreamK)),
      model->prepare(problem_class(p), tile(128, 128, 64, Decomposition::kStreamK))};
  const OrigamiRunIndex runs = OrigamiModel::index_runs(two.data(), two.size());
  EXPECT_EQ(runs.heads.size(), 2u);
  std::vector<double> predicted(2, -1.0);
  double cutoff = 0;
  std::vector<OrigamiModel::CandidateRange> ranges;
  model->predict_top_runs_us(p, two.data(), runs, 10, false, 0.01, predicted.data(), &cutoff, ranges);
  EXPECT_EQ(cutoff, std::numeric_limits<double>::infinity());
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].begin, 0u);
  EXPECT_EQ(ranges[0].end, 2u);
  EXPECT_EQ(predicted[0], model->predict_us(p, two[0]));
  EXPECT_EQ(predicted[1], model->predict_us(p, two[1]));
}

}  // namespace
}  // namespace parity::gemm
