#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "common/gemm_top_k.hpp"
#include "common/test_support.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/evaluation.hpp"
#include "parity/gemm/measurements.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/gemm/workflow.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

DeviceParams h200() {
  auto spec = hw::find_hardware("h200");
  EXPECT_TRUE(spec.is_ok()) << spec.status().to_string();
  return device_params_from_spec(spec.value()).value();
}

GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

Candidate tile(int m, int n, int k = 64, int split = 1) {
  Candidate c;
  c.tile_m = m;
  c.tile_n = n;
  c.tile_k = k;
  c.split_k = split;
  c.reduction = split > 1 ? ReductionScheme::kComputeType : ReductionScheme::kNone;
  return c;
}

TEST(GemmTieBreak, OrderFollowsOrigami) {
  const GemmModel model(h200(), ModelScalars{});
  const ProblemClass key;
  const auto p = [&](const Candidate& c) { return model.prepare(key, c); };
  const GemmProblem tall = shape(8192, 1024, 4096), wide = shape(1024, 8192, 4096);
  // Higher arithmetic intensity first.
  EXPECT_TRUE(tie_break_before(p(tile(256, 128)), p(tile(128, 128)), tall));
  EXPECT_FALSE(tie_break_before(p(tile(128, 128)), p(tile(256, 128)), tall));
  // Equal intensity: follow the problem's aspect.
  EXPECT_TRUE(tie_break_before(p(tile(256, 128)), p(tile(128, 256)), tall));
  EXPECT_TRUE(tie_break_before(p(tile(128, 256)), p(tile(256, 128)), wide));
  // Same tile, other 2-CTA clusters: the one multicasting the larger operand (fewer L2 -> SM bytes)
  // first: c1x2 shares the 176-row A tile, c2x1 the 128-row B tile; for 128x256 the reverse; a
  // square tile reads the same bytes either way and is not ordered by it.
  const auto clustered = [&](int m, int n, int cluster_m, int cluster_n) {
    Candidate c = tile(m, n);
    c.cluster_m = cluster_m;
    c.cluster_n = cluster_n;
    return p(c);
  };
  EXPECT_TRUE(tie_break_before(clustered(176, 128, 1, 2), clustered(176, 128, 2, 1), tall));
  EXPECT_FALSE(tie_break_before(clustered(176, 128, 2, 1), clustered(176, 128, 1, 2), tall));
  EXPECT_TRUE(tie_break_before(clustered(128, 256, 2, 1), clustered(128, 256, 1, 2), wide));
  EXPECT_FALSE(tie_break_before(clustered(128, 128, 2, 1), clustered(128, 128, 1, 2), tall));
  EXPECT_FALSE(tie_break_before(clustered(128, 128, 1, 2), clustered(128, 128, 2, 1), tall));
  // Same tile: fewer split-K partials first; identical candidates are not ordered.
  EXPECT_TRUE(tie_break_before(p(tile(128, 128, 64, 1)), p(tile(128, 128, 64, 2)), tall));
  EXPECT_FALSE(tie_break_before(p(tile(128, 128)), p(tile(128, 128)), tall));
}

TEST(GemmSelector, NearTieGoesToTheTileFollowingTheAspect) {
  Selector selector(GemmModel(h200(), ModelScalars{}));
  const std::vector<Candidate> candidates = {tile(128, 256), tile(256, 128)};
  for (const bool is_tall : {true, false}) {
    const GemmProblem p = is_tall ? shape(8192, 4096, 4096) : shape(4096, 8192, 4096);
    const double a = selector.model().predict_us(p, candidates[0]);
    const double b = selector.model().predict_us(p, candidates[1]);
    ASSERT_LE(std::abs(a - b), kTieEpsilon * std::min(a, b)) << "precondition: a near-tie";
    const auto selection = selector.select(p, candidates, 2);
    ASSERT_TRUE(selection.is_ok()) << selection.status().to_string();
    EXPECT_EQ(selection->choice.tile_m, is_tall ? 256 : 128);
    EXPECT_EQ(selection->top.size(), 2u);
  }
}

// The confidence rule: the vendor heuristic's top-1 (heuristic_rank 0) is chosen when the model
// predicts it within its error band of the model's best, the model's pick otherwise; without TMA
// the vendor's top-1 is always taken; a negative band turns the rule off. select (both paths) and
// rank agree.
TEST(GemmSelector, VendorTopOneWinsWithinTheModelsErrorBand) {
  Candidate model_best = tile(128, 128), vendor = tile(128, 128);
  model_best.cluster_n = vendor.cluster_n = 2;
  vendor.variant = 1;
  vendor.heuristic_rank = 0;
  const std::vector<Candidate> candidates = {model_best, vendor};
  GemmProblem p = shape(8192, 8192, 8192);  // compute bound: the variant factor sets the gap
  const auto choose = [&](double vendor_efficiency, double band, int alignment,
                          SelectionMode mode = SelectionMode::kHybrid) {
    ModelScalars s;
    s.variant_efficiency[1] = vendor_efficiency;
    SelectorOptions options;
    options.mode = mode;
    options.vendor_band = band;
    options.top_k_list = TopKList::kConfigs;  // the two candidates share one macro tile
    Selector selector(GemmModel(h200(), s), options);
    p.alignment_bytes = alignment;
    const auto picked = selector.select(p, candidates, 2);
    const auto ranked = selector.rank(p, candidates);
    selector.set_candidates(candidates);
    const auto cached = selector.select(p, 2);
    EXPECT_TRUE(picked.is_ok() && ranked.is_ok() && cached.is_ok());
    EXPECT_EQ(picked->top.front().index, ranked->front().index);
    EXPECT_EQ(picked->top.front().index, cached->top.front().index);
    EXPECT_EQ(picked->is_vendor_pick, picked->top.front().index == 1);
    EXPECT_EQ(picked->top.size(), 2u);
    EXPECT_NE(picked->top[0].index, picked->top[1].index);
    return picked->top.front().index;
  };
  // ~2% slower: past the 1% tie group, inside a 3% band.
  EXPECT_EQ(choose(0.98, 0.03, 16), 1u);
  EXPECT_EQ(choose(0.98, -1.0, 16), 0u);
  // ~10% slower: the model overrides the vendor, except without TMA.
  EXPECT_EQ(choose(0.90, 0.03, 16), 0u);
  EXPECT_EQ(choose(0.90, 0.03, 8), 1u);
  // The analytical mode never consults the vendor's rank.
  EXPECT_EQ(choose(0.98, 0.03, 16, SelectionMode::kAnalytical), 0u);
  EXPECT_EQ(choose(0.90, 0.03, 8, SelectionMode::kAnalytical), 0u);
}

TEST(GemmSelector, ModeNamesRoundTrip) {
  for (const SelectionMode mode : {SelectionMode::kAnalytical, SelectionMode::kHybrid}) {
    const auto parsed = parse_selection_mode(selection_mode_name(mode));
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed.value(), mode);
  }
  EXPECT_FALSE(parse_selection_mode("Hybrid").is_ok());
  EXPECT_FALSE(parse_selection_mode("").is_ok());
  EXPECT_EQ(SelectorOptions{}.mode, SelectionMode::kAnalytical);
  for (const TopKList list : {TopKList::kDistinctTiles, TopKList::kConfigs}) {
    const auto parsed = parse_top_k_list(top_k_list_name(list));
    ASSERT_TRUE(parsed.is_ok());
    EXPECT_EQ(parsed.value(), list);
  }
  EXPECT_EQ(parse_top_k_list("tile").status().code(), StatusCode::kInvalidArgument);
}

TEST(GemmSelector, SelectMatchesFullRankingAndReportsThroughput) {
  const DeviceParams device = h200();
  Selector selector(GemmModel(device, default_scalars(device)));
  const auto space = hopper_modelled_space(ProblemClass{});
  Selector cached_selector(selector.model());
  cached_selector.set_candidates(space);
  const std::uint64_t seed = testing::test_seed(11);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(0.0, std::log(32768.0));
  for (int trial = 0; trial < 50; ++trial) {
    const GemmProblem p = shape(static_cast<std::int64_t>(std::exp(log_size(rng))),
                                static_cast<std::int64_t>(std::exp(log_size(rng))),
                                static_cast<std::int64_t>(std::exp(log_size(rng))));
    const auto selection = selector.select(p, space, 5);
    const auto ranking = selector.rank(p, space);
    const auto cached = cached_selector.select(p, 5);
    ASSERT_TRUE(selection.is_ok() && ranking.is_ok() && cached.is_ok());
    EXPECT_EQ(cached->top.front().index, selection->top.front().index) << p.describe();
    const auto expected = testing::expected_top_k(*ranking, space, 5, TopKList::kDistinctTiles);
    ASSERT_EQ(selection->top.size(), expected.size()) << p.describe();
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(selection->top[i].index, expected[i].index) << p.describe() << " place " << i;
    }
    EXPECT_NEAR(selection->predicted_tflops * 1e12 * selection->predicted_us * 1e-6, p.flop_count(),
                1e-9 * p.flop_count());
  }
}

// The fast path (per-class constants, equal candidates predicted once, pruning by the bounds)
// returns the exhaustive ranking's top-k, indices and predictions, on every shape of every suite
// (development, calibration extras and the four test suites), at the shipped calibration and at
// the defaults, for the TMA and the non-TMA classes the shapes fall in.
TEST(GemmSelector, FastPathEqualsTheExhaustiveRankingOnEverySuiteShape) {
  ModelSource source;
  source.hw = "h200";
  source.data_dir = std::string(PARITY_SOURCE_DIR) + "/data";
  const auto shipped = load_model(source);
  ASSERT_TRUE(shipped.is_ok()) << shipped.status().to_string();
  const DeviceParams device = h200();
  const auto space = hopper_modelled_space(ProblemClass{});
  for (const bool calibrated : {true, false}) {
    const GemmModel model = calibrated ? make_selector(*shipped).model()
                                       : GemmModel(device, default_scalars(device));
    Selector exhaustive(model);
    Selector fast(model);
    fast.set_candidates(space);
    Selector fast_configs(model, SelectorOptions{.top_k_list = TopKList::kConfigs});
    fast_configs.set_candidates(space);
    int shapes = 0, misaligned = 0;
    for (const char* file : {"dev", "calibration_extra", "calibration_extra2", "test", "test2",
                             "test3", "test4"}) {
      const auto suite = read_shape_suite(std::string(PARITY_SOURCE_DIR) +
                                          "/bench/shapes/gemm_shapes_" + file + ".csv");
      ASSERT_TRUE(suite.is_ok()) << file << ": " << suite.status().to_string();
      for (const GemmProblem& p : suite->problems) {
        const auto ranking = exhaustive.rank(p, space);
        ASSERT_TRUE(ranking.is_ok()) << p.describe();
        for (const std::size_t top_k : {std::size_t{1}, std::size_t{5}}) {
          for (const TopKList list : {TopKList::kDistinctTiles, TopKList::kConfigs}) {
            Selector& selector = list == TopKList::kConfigs ? fast_configs : fast;
            const auto selection = selector.select(p, top_k);
            ASSERT_TRUE(selection.is_ok()) << p.describe();
            const auto expected = testing::expected_top_k(*ranking, space, top_k, list);
            ASSERT_EQ(selection->top.size(), expected.size()) << p.describe();
            for (std::size_t i = 0; i < expected.size(); ++i) {
              EXPECT_EQ(selection->top[i].index, expected[i].index)
                  << file << " " << p.describe() << " place " << i << " calibrated " << calibrated;
              EXPECT_EQ(selection->top[i].predicted_us, expected[i].predicted_us)
                  << file << " " << p.describe() << " place " << i;
            }
          }
        }
        ++shapes;
        if (p.alignment_class_bytes() < 16) ++misaligned;
      }
    }
    EXPECT_GT(shapes, 400);
    EXPECT_GT(misaligned, 100);
  }
}

// Ad-hoc lists are prepared per call: two lists of equal size (that may reuse one allocation)
// must each be ranked on their own features.
TEST(GemmSelector, AdHocListsNeverShareCachedConstants) {
  Selector selector(GemmModel(h200(), ModelScalars{}));
  const GemmProblem p = shape(8192, 8192, 8192);
  for (int round = 0; round < 2; ++round) {
    const std::vector<Candidate> small_tiles = {tile(64, 64), tile(64, 128)};
    EXPECT_EQ(selector.select(p, small_tiles, 1)->choice.tile_n, 128);
  }
  const std::vector<Candidate> big_tiles = {tile(256, 128), tile(64, 64)};
  EXPECT_EQ(selector.select(p, big_tiles, 1)->choice.tile_m, 256);
}

TEST(GemmSelector, RejectsEmptyCandidatesAndBadProblems) {
  Selector selector(GemmModel(h200(), ModelScalars{}));
  const std::vector<Candidate> none;
  auto r = selector.select(shape(64, 64, 64), none);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("no candidates"), std::string::npos);
  const std::vector<Candidate> one = {tile(128, 128)};
  r = selector.select(shape(0, 64, 64), one);
  EXPECT_NE(r.status().message().find("m=0"), std::string::npos);
}

// Synthetic measurements: timings generated by the model with known scalars; the fit, started
// from the defaults, must find scalars that reproduce them and the well-determined scalars.
TEST(GemmCalibration, RecoversKnownScalarsFromSyntheticData) {
  const DeviceParams device = h200();
  ModelScalars truth;
  truth.mma_efficiency = 0.78;
  truth.launch_us = 4.0;
  truth.dram_efficiency = 0.80;
  truth.feed_intensity = 12.0;
  const GemmModel true_model(device, truth);
  const auto space = hopper_modelled_space(ProblemClass{});
  const std::uint64_t seed = testing::test_seed(5);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(std::log(64.0), std::log(16384.0));
  std::vector<MeasuredShape> shapes;
  for (int s = 0; s < 16; ++s) {
    MeasuredShape shape_entry;
    shape_entry.name = "synthetic" + std::to_string(s);
    // Sizes in multiples of 8 elements: 16-byte rows, the TMA kernels the scalars below describe.
    const auto size = [&] { return 8 * static_cast<std::int64_t>(std::exp(log_size(rng)) / 8.0); };
    shape_entry.problem = shape(size(), size(), size());
    for (std::size_t i = 0; i < space.size(); i += 5) {
      MeasuredCandidate m;
      m.candidate = space[i];
      m.median_ms = true_model.predict_us(shape_entry.problem, space[i]) * 1e-3;
      shape_entry.candidates.push_back(m);
    }
    shapes.push_back(std::move(shape_entry));
  }
  FitOptions options;
  options.regret_weight = 0.0;
  options.max_evaluations = 6000;
  const auto fit = fit_scalars(device, default_scalars(device), shapes, options);
  ASSERT_TRUE(fit.is_ok()) << fit.status().to_string();
  EXPECT_GT(fit->rms_log_error_before, 0.05);
  // Noise-free data: a 2% rms residual leaves ranking unaffected at the 1% tie level.
  EXPECT_LT(fit->rms_log_error_after, 0.02);
  EXPECT_NEAR(fit->scalars.launch_us, truth.launch_us, 0.15 * truth.launch_us);
  EXPECT_NEAR(fit->scalars.dram_efficiency, truth.dram_efficiency, 0.1 * truth.dram_efficiency);
  // mma_efficiency, feed_intensity and the cluster-shape factors trade off; the sustained rate of a
  // single-CTA tile at I=64 is what the timings fix.
  const auto eta = [](const ModelScalars& s) {
    return s.mma_efficiency * s.single_cta_efficiency * 64.0 / (64.0 + s.feed_intensity);
  };
  EXPECT_NEAR(eta(fit->scalars), eta(truth), 0.03 * eta(truth));
}

TEST(GemmCalibration, FileRoundTripAndSplit) {
  GemmCalibration c;
  c.device = "h200";
  c.scalars.launch_us = 3.5;
  c.scalars.variant_efficiency[3] = 1.1;
  c.is_default = false;
  c.provenance_json = R"({"source":"test"})";
  const auto path = std::filesystem::temp_directory_path() / "parity_gemm_calibration_test.json";
  ASSERT_TRUE(write_gemm_calibration(c, path).is_ok());
  const auto read = read_gemm_calibration(path);
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  EXPECT_EQ(scalars_to_array(read->scalars), scalars_to_array(c.scalars));
  EXPECT_EQ(read->scalars.variant_efficiency, c.scalars.variant_efficiency);
  // A more efficient variant is predicted faster on a compute-bound shape.
  const GemmModel model(h200(), read->scalars);
  Candidate plain = tile(256, 128), faster = tile(256, 128);
  faster.variant = 3;
  EXPECT_LT(model.predict_us(shape(8192, 8192, 8192), faster),
            model.predict_us(shape(8192, 8192, 8192), plain));
  EXPECT_EQ(read->device, "h200");
  EXPECT_FALSE(read->is_default);
  std::filesystem::remove(path);
  EXPECT_EQ(read_gemm_calibration(path).status().code(), StatusCode::kNotFound);

  const auto suite = read_shape_suite(std::string(PARITY_SOURCE_DIR) + "/bench/shapes/gemm_shapes_dev.csv");
  ASSERT_TRUE(suite.is_ok()) << suite.status().to_string();
  ASSERT_GE(suite->names.size(), 30u);
  int calibration = 0;
  for (std::size_t i = 0; i < suite->names.size(); ++i) {
    MeasuredShape s;
    s.name = suite->names[i];
    s.problem = suite->problems[i];
    const bool is_calibration = split_of(s, *suite) == ShapeSplit::kCalibration;
    EXPECT_EQ(is_calibration, i % 3 == 0) << s.name;
    calibration += is_calibration ? 1 : 0;
  }
  EXPECT_EQ(calibration, static_cast<int>((suite->names.size() + 2) / 3));
}

TEST(GemmEvaluation, RatiosAgainstOracleAndHeuristic) {
  const DeviceParams device = h200();
  Selector selector(GemmModel(device, default_scalars(device)));
  MeasuredShape s;
  s.name = "toy";
  s.problem = shape(4096, 4096, 4096);
  // Candidate times: the model's own order, except the heuristic's top-1 measured slowest.
  const auto space = hopper_modelled_space(ProblemClass{});
  for (std::size_t i = 0; i < 12; ++i) {
    MeasuredCandidate m;
    m.candidate = space[i * 7];
    m.median_ms = selector.model().predict_us(s.problem, m.candidate) * 1e-3;
    m.heuristic_rank = i == 0 ? 0 : -1;
    s.candidates.push_back(m);
  }
  s.candidates[0].median_ms *= 10.0;
  const auto report = evaluate_selector(selector, {s});
  ASSERT_EQ(report.shapes.size(), 1u);
  EXPECT_DOUBLE_EQ(report.selector.geomean, 1.0);  // the model ranks its own timings perfectly
  EXPECT_LT(report.heuristic.geomean, 0.2);
  EXPECT_DOUBLE_EQ(report.selector_within_noise, 1.0);
  EXPECT_DOUBLE_EQ(report.heuristic_within_noise, 0.0);
  // A spread as wide as the gap puts the heuristic's pick within the noise floor.
  s.candidates[0].spread_ms = s.candidates[0].median_ms;
  EXPECT_DOUBLE_EQ(evaluate_selector(selector, {s}).heuristic_within_noise, 1.0);
  EXPECT_NE(evaluation_to_json(report).find("\"heuristic_top1\""), std::string::npos);
  EXPECT_NE(evaluation_to_markdown(report).find("| toy |"), std::string::npos);
  EXPECT_NE(evaluation_to_svg(report).find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace parity::gemm

namespace parity::gemm {
namespace {

// gemm measure's "screened" list: candidates never timed in full are read at their screened
// median times the shape's median full/screened ratio; timed ones are not duplicated; failed
// screens (screen_ms 0) are skipped; the writer keeps them apart, so the round trip is exact.
TEST(GemmMeasurements, ScreenedOnlyCandidatesAreScaledAndMarked) {
  const auto config = [](int tile_m) {
    Candidate c;
    c.tile_m = tile_m;
    return c.describe();
  };
  // Full/screened ratios 1.1, 1.2, 1.0 -> median 1.1.
  const std::string text = R"({"schema": "parity.gemm.measurements/1", "device": "h200",
    "shapes": [{"name": "s", "m": 512, "n": 512, "k": 512, "candidates": [
      {"config": ")" + config(64) + R"(", "median_ms": 1.1, "screen_ms": 1.0},
      {"config": ")" + config(128) + R"(", "median_ms": 2.4, "screen_ms": 2.0},
      {"config": ")" + config(192) + R"(", "median_ms": 3.0, "screen_ms": 3.0}],
     "screened": [
      {"config": ")" + config(64) + R"(", "screen_ms": 1.0},
      {"config": ")" + config(256) + R"(", "screen_ms": 0.5, "heuristic_rank": 3},
      {"config": ")" + config(32) + R"(", "screen_ms": 0.0}]}]})";
  const auto set = parse_measurements_json(text);
  ASSERT_TRUE(set.is_ok()) << set.status().to_string();
  const auto& candidates = set->shapes.at(0).candidates;
  ASSERT_EQ(candidates.size(), 4u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(candidates[i].is_screened_only);
  EXPECT_TRUE(candidates[3].is_screened_only);
  EXPECT_EQ(candidates[3].candidate.tile_m, 256);
  EXPECT_EQ(candidates[3].heuristic_rank, 3);
  // 0.5 * 1.1, exact up to one rounding of each operand (a few ulps).
  EXPECT_NEAR(candidates[3].median_ms, 0.55, 4 * std::numeric_limits<double>::epsilon());

  const auto again = parse_measurements_json(measurements_to_json(*set));
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  const auto& round = again->shapes.at(0).candidates;
  ASSERT_EQ(round.size(), 4u);
  EXPECT_TRUE(round[3].is_screened_only);
  EXPECT_DOUBLE_EQ(round[3].median_ms, candidates[3].median_ms);

  // A malformed screened row names its place.
  const std::string bad = R"({"schema": "parity.gemm.measurements/1", "device": "h200",
    "shapes": [{"m": 8, "n": 8, "k": 8, "candidates": [], "screened": [{"screen_ms": 1.0}]}]})";
  const auto failed = parse_measurements_json(bad);
  EXPECT_EQ(failed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(failed.status().message().find("shapes[0].screened[0].config"), std::string::npos)
      << failed.status().message();
}

}  // namespace
}  // namespace parity::gemm
