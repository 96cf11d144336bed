// The Origami port: hand-checked consequences of Origami's grid and tile latency on its harness
// hardware (gfx942: 228 CUs at 1.7 GHz), and the agreement computation against a known ranking.
#include <gtest/gtest.h>

#include <string>

#include "parity/gemm/model.hpp"
#include "parity/gemm/origami_agreement.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

DeviceParams reference_gfx942() {
  auto spec = hw::find_hardware("mi300x");
  EXPECT_TRUE(spec.is_ok());
  return origami_reference_device(device_params_from_spec(spec.value()).value()).value();
}

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
    selector.set_candidates(comparable);
    const auto selection = selector.select(p, 10);
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

}  // namespace
}  // namespace parity::gemm
