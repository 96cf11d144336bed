// The model interface after the Hopper / Origami split: make_model picks by vendor, explain()'s
// terms add up to the prediction, run epilogues are priced by their extra bytes, kernels without
// TMA gain from co-resident CTAs, pay a pipeline fill per CTA and hold as many CTAs as their stage
// count leaves room for, and calibration refuses degenerate fits.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "common/test_support.hpp"

#include "parity/gemm/calibration.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/gemm.hpp"
#include "parity/gemm/model.hpp"
#include "parity/gemm/workflow.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

DeviceParams device_named(const char* name) {
  auto spec = hw::find_hardware(name);
  EXPECT_TRUE(spec.is_ok()) << spec.status().to_string();
  return device_params_from_spec(spec.value()).value();
}

GemmProblem shape(std::int64_t m, std::int64_t n, std::int64_t k, int alignment = 0) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.alignment_bytes = alignment;
  return p;
}

double sum_of_terms(const TimeBreakdown& b) {
  return b.compute_us + b.memory_us + b.l2_us + b.launch_wave_us + b.reduction_us + b.epilogue_us;
}

TEST(GemmModelSplit, MakeModelPicksTheBackEndByVendor) {
  EXPECT_EQ(make_model(device_named("h200"), ModelScalars{})->device().kind, ModelKind::kHopper);
  EXPECT_EQ(make_model(device_named("mi300x"), ModelScalars{})->device().kind, ModelKind::kOrigami);
}

// The breakdown is the model's own accounting: its terms sum to the prediction. Sums of up to ~10
// positive terms, each rounded once: 1e-12 relative is far above the rounding (~1e-15).
TEST(GemmModelSplit, ExplainTermsAddUpToThePrediction) {
  for (const char* name : {"h200", "mi300x"}) {
    const DeviceParams device = device_named(name);
    const GemmModel model(device, default_scalars(device));
    const auto space = modelled_space(ProblemClass{}, device);
    for (const GemmProblem& p : {shape(4096, 4096, 4096), shape(777, 1234, 4321, 2),
                                 shape(64, 8192, 512), shape(8192, 128, 16384)}) {
      for (std::size_t i = 0; i < space.size(); i += space.size() / 23 + 1) {
        const double predicted = model.predict_us(p, space[i]);
        if (!std::isfinite(predicted)) continue;
        const TimeBreakdown b = model.explain(p, space[i], RunEpilogue::kNone);
        EXPECT_NEAR(b.total_us, predicted, 1e-12 * predicted) << name << " " << space[i].short_name();
        EXPECT_NEAR(sum_of_terms(b), b.total_us, 1e-9 * b.total_us)
            << name << " " << p.describe() << " " << space[i].short_name();
        EXPECT_GT(b.compute_us, 0.0);
        EXPECT_GT(b.waves, 0.0);  // stream-K timesteps are fractional
      }
    }
  }
}

// `gemm select --explain`: every listed candidate carries its breakdown, summing to its prediction.
TEST(GemmModelSplit, SelectReportExplainsEachTopCandidate) {
  ModelSource source;
  source.hw = "h200";
  const auto model = load_model(source);
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  const auto report = select_report(*model, shape(4096, 4096, 4096), 5, true);
  ASSERT_TRUE(report.is_ok()) << report.status().to_string();
  ASSERT_EQ(report->top.size(), 5u);
  EXPECT_TRUE(report->is_explained);
  for (const SelectionRow& row : report->top) {
    EXPECT_NEAR(sum_of_terms(row.breakdown), row.predicted_us, 1e-9 * row.predicted_us) << row.config;
    EXPECT_GT(row.breakdown.compute_us, 0.5 * row.predicted_us) << "4096^3 is compute bound";
  }
  EXPECT_NE(to_text(*report).find("compute "), std::string::npos);
}

TEST(GemmModelSplit, EpiloguesArePricedByTheirExtraBytes) {
  const GemmProblem p = shape(4096, 2048, 1024);
  const double m = 4096, n = 2048;
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kNone, p), 0.0);
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kRelu, p), 0.0);
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kBias, p), m * 2);
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kBiasReluAux, p), m * 2 + m * n / 8);
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kBiasGeluAux, p), m * 2 + m * n * 2);
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kDGeluBgrad, p), m * n * 2 + m * 4);
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kBgradB, p), n * 4);
  GemmProblem batched = p;
  batched.batch = 3;
  EXPECT_EQ(epilogue_extra_bytes(RunEpilogue::kBias, batched), 3 * m * 2);
  const DeviceParams device = device_named("h200");
  const ModelScalars scalars = default_scalars(device);
  const GemmModel model(device, scalars);
  const Candidate c = hopper_modelled_space(ProblemClass{}).front();
  const double extra_us = model.predict_us(p, c, RunEpilogue::kBiasGeluAux) - model.predict_us(p, c);
  const double expected_us = (m * 2 + m * n * 2) / (device.hbm_bytes_per_s * scalars.dram_efficiency * 1e-6);
  EXPECT_NEAR(extra_us, expected_us, 1e-9 * expected_us);
  EXPECT_NEAR(model.explain(p, c, RunEpilogue::kBiasGeluAux).epilogue_us, expected_us, 1e-9 * expected_us);
}

// Kernels without TMA hide load latency through co-resident CTAs: doubling the tiles of a wave
// that fits one CTA per SM costs less than double (a second CTA per SM raises the rate), while the
// TMA kernels (one persistent CTA per SM) pay at least the second wave in full.
TEST(GemmModelSplit, LegacyKernelsGainFromCoResidentCtas) {
  const DeviceParams device = device_named("h200");
  const GemmModel model(device, default_scalars(device));
  Candidate c;
  c.tile_m = 64;
  c.tile_n = 128;
  c.tile_k = 64;
  const std::int64_t sms = device.num_sms;
  const auto doubling = [&](int alignment) {
    return model.predict_us(shape(64 * 2 * sms, 128, 8192, alignment), c) /
           model.predict_us(shape(64 * sms, 128, 8192, alignment), c);
  };
  // TMA: the second wave costs nearly a whole first one (the last-wave clock boost is the only
  // difference); without TMA a second co-resident CTA per SM raises the SM's rate.
  EXPECT_GT(doubling(16), 1.8);
  EXPECT_LT(doubling(2), 1.7);
  EXPECT_LT(doubling(2), doubling(16) - 0.2);
}

// A wave of CTAs without TMA exposes one output tile's store per SM (the other co-resident CTAs
// overlap the rest): in the breakdown, memory time of tm tn x 2 bytes x SMs at the model's DRAM
// bandwidth per wave, on top of a K-loop that costs the same per iteration from the first one
// (no separate pipeline fill). So a one-iteration wave of 128x128 tiles (one CTA per SM) carries
// 4x the exposed store of four co-resident 64x64 CTAs' wave, at the same work per SM. The terms
// are sums of a few products of doubles: 1e-9 relative is far above their rounding (~1e-15).
TEST(GemmModelSplit, LegacyWavesExposeOneTileStorePerSm) {
  const DeviceParams device = device_named("h200");
  const ModelScalars scalars = default_scalars(device);
  const GemmModel model(device, scalars);
  const std::int64_t sms = device.num_sms;
  const auto breakdown = [&](int tile_m, int tile_n, std::int64_t m, std::int64_t k) {
    Candidate c;
    c.tile_m = tile_m;
    c.tile_n = tile_n;
    c.tile_k = 64;
    return model.explain(shape(m, tile_n, k, 2), c, RunEpilogue::kNone);
  };
  const double one_iteration_us = breakdown(64, 64, 64 * sms, 64).compute_us;
  const double two_iterations_us = breakdown(64, 64, 64 * sms, 128).compute_us;
  EXPECT_NEAR(two_iterations_us, 2.0 * one_iteration_us, 1e-9 * two_iterations_us);
  const double dram_bytes_per_us = device.hbm_bytes_per_s * scalars.dram_efficiency * 1e-6;
  const double store_us = 64.0 * 64.0 * 2.0 * static_cast<double>(sms) / dram_bytes_per_us;
  const TimeBreakdown small = breakdown(64, 64, 64 * sms, 64);
  EXPECT_EQ(small.waves, 1.0);
  EXPECT_GE(small.memory_us, store_us * (1.0 - 1e-9));
  // Four co-resident 64x64 CTAs per SM (shared memory holds four at 2-byte rows) against one
  // 128x128 CTA per SM: the same work per SM and wave, 4x the exposed store.
  const TimeBreakdown four = breakdown(64, 64, 4 * 64 * sms, 64);
  const TimeBreakdown large = breakdown(128, 128, 128 * sms, 64);
  EXPECT_EQ(four.waves, 1.0);
  EXPECT_EQ(large.waves, 1.0);
  EXPECT_GE(large.memory_us, 4.0 * store_us * (1.0 - 1e-9));
  EXPECT_GT(large.memory_us, four.memory_us + 2.5 * store_us);
}

// The load latency a CTA without TMA exposes per K-iteration is a time: a 32-deep stage carries half
// the multiplies of a 64-deep one to hide the same latency, so its K-loop pays that time twice as
// often (measured: 256x128x32 ran 27-36% slower than 256x128x64 on the same problems, which the
// per-work latency the model charged before could not show). With one CTA per SM one more
// iteration costs c (1 + h): c proportional to tk and h = L / tk (L the latency in multiply-time
// units: legacy_latency_ctas reference tile-iterations at the reference tile's rate, fixed for the
// tile's M x N), so the step is affine in tk, a (tk + L): the 128-deep step exceeds the 64-deep one
// by twice what the 64-deep one exceeds the 32-deep one, and L > 0 (the 32-deep step is more than
// half the 64-deep one). The same holds for a 16x16 tile, whose lower rate no longer inflates L.
TEST(GemmModelSplit, LegacyLatencyPerIterationIsATime) {
  const DeviceParams device = device_named("h200");
  const ModelScalars scalars = default_scalars(device);
  ASSERT_GT(scalars.legacy_latency_ctas, 0.1);
  const GemmModel model(device, scalars);
  const std::int64_t sms = device.num_sms;
  for (const int tile : {64, 16}) {
    SCOPED_TRACE("tile " + std::to_string(tile) + "x" + std::to_string(tile));
    const auto step_us = [&](int tile_k) {
      Candidate c;
      c.tile_m = tile;
      c.tile_n = tile;
      c.tile_k = tile_k;
      const auto compute_us = [&](std::int64_t k) {
        return model.explain(shape(tile * sms, tile, k, 2), c, RunEpilogue::kNone).compute_us;
      };
      return compute_us(4 * 128 + tile_k) - compute_us(4 * 128);
    };
    const double step_32_us = step_us(32), step_64_us = step_us(64), step_128_us = step_us(128);
    EXPECT_NEAR(step_128_us - step_64_us, 2.0 * (step_64_us - step_32_us), 1e-9 * step_128_us);
    EXPECT_GT(step_32_us, 0.5 * step_64_us * (1.0 + 1e-6));
  }
}

// A small tile's latency is the reference tile's time, not its own iterations' (which run at the
// small tile's lower rate): with one CTA per SM, the exposed latency per iteration (a step less
// its multiply time, the step being affine in tk) is the same for 16x16 and 128x128 tiles
// (measured: a 319488 x 10 x 10 layer ran in 21 us on 16x16x32 tiles, for which the rate-scaled
// latency predicted 151 us).
TEST(GemmModelSplit, SmallLegacyTilesPayTheReferenceLatency) {
  const DeviceParams device = device_named("h200");
  const GemmModel model(device, default_scalars(device));
  const std::int64_t sms = device.num_sms;
  const auto latency_us = [&](int tile) {
    Candidate c;
    c.tile_m = tile;
    c.tile_n = tile;
    const auto step_us = [&](int tile_k) {
      c.tile_k = tile_k;
      const auto compute_us = [&](std::int64_t k) {
        return model.explain(shape(tile * sms, tile, k, 2), c, RunEpilogue::kNone).compute_us;
      };
      return compute_us(4 * 128 + tile_k) - compute_us(4 * 128);
    };
    const double step_32_us = step_us(32);
    const double multiply_us_per_k = (step_us(64) - step_32_us) / 32.0;
    return step_32_us - 32.0 * multiply_us_per_k;
  };
  const double reference_us = latency_us(128);
  EXPECT_GT(reference_us, 0.0);
  EXPECT_NEAR(latency_us(16), reference_us, 1e-6 * reference_us);
  EXPECT_NEAR(latency_us(64), reference_us, 1e-6 * reference_us);
}

// The cp.async families name their pipeline depth, and shared memory for it bounds the CTAs an
// SM holds: 128x128x64 bf16 tiles take 32 KiB a stage, so 2 stages leave room for two CTAs per SM
// (registers allow two) and 4 stages for one. Two such tiles per SM then run as one wave at
// stages 2 and as two at stages 4. Stages 0 (chosen by the kernel) counts as 3.
TEST(GemmModelSplit, LegacyResidencyFollowsTheCandidatesStages) {
  const DeviceParams device = device_named("h200");
  const GemmModel model(device, default_scalars(device));
  const auto with_stages = [](int stages) {
    Candidate c;
    c.stages = stages;
    c.kernel_family = 23;
    return c;
  };
  const GemmProblem p = shape(128 * 2 * device.num_sms, 128, 4096, 4);
  EXPECT_LT(model.predict_us(p, with_stages(2)), model.predict_us(p, with_stages(4)));
  EXPECT_EQ(model.predict_us(p, with_stages(0)), model.predict_us(p, with_stages(3)));
  EXPECT_EQ(model.explain(p, with_stages(2), RunEpilogue::kNone).waves, 1.0);
  EXPECT_EQ(model.explain(p, with_stages(4), RunEpilogue::kNone).waves, 2.0);
}

// The 132-SM Hopper parts hold 30 clusters of 4 at once: 31 clusters of 128x128 tiles take a second
// wave, where 30 fit one; pairs keep every SM. A part without the count keeps the formula.
TEST(GemmModelSplit, ClustersOfFourPastThirtyTakeASecondWaveOnFullHopperParts) {
  const DeviceParams device = device_named("h200");
  EXPECT_EQ(device.max_active_clusters_of_4, 30);
  const GemmModel model(device, default_scalars(device));
  Candidate quad;
  quad.cluster_m = quad.cluster_n = 2;
  const auto waves = [&](const GemmModel& m, std::int64_t clusters) {
    // clusters x 4 tiles of 128 x 128: 2 x clusters tile rows, 2 tile columns.
    return m.explain(shape(128 * 2 * clusters, 256, 4096, 16), quad, RunEpilogue::kNone).waves;
  };
  EXPECT_EQ(waves(model, 30), 1.0);
  EXPECT_EQ(waves(model, 31), 2.0);
  DeviceParams unknown = device;
  unknown.max_active_clusters_of_4 = 0;  // one cluster's worth lost: 128 SMs, 32 clusters
  const GemmModel formula(unknown, default_scalars(unknown));
  EXPECT_EQ(waves(formula, 31), 1.0);
  EXPECT_EQ(waves(formula, 33), 2.0);
}

// Split-K partials of kernels without TMA cost the same whether kept in the output type or in
// fp32: on the recorded suites the two measured alike where the byte count had predicted the
// output type 4-7% faster (docs/gemm_model.md). The in-place scheme (atomics, no reduction
// kernel) stays priced apart.
TEST(GemmModelSplit, LegacySplitPartialsCostTheSameInEitherType) {
  const DeviceParams device = device_named("h200");
  const GemmModel model(device, default_scalars(device));
  const auto split = [](ReductionScheme reduction) {
    Candidate c;
    c.kernel_family = 24;
    c.split_k = 4;
    c.reduction = reduction;
    return c;
  };
  const GemmProblem p = shape(4096, 4096, 8192, 2);
  const double output_type_us = model.predict_us(p, split(ReductionScheme::kOutputType));
  EXPECT_EQ(output_type_us, model.predict_us(p, split(ReductionScheme::kComputeType)));
  EXPECT_NE(output_type_us, model.predict_us(p, split(ReductionScheme::kInPlace)));
}

// The AMD model's hierarchical pruning: bounds never exceed the exact predictions, and the top-k
// and near-tie group are exact (what the selector orders).
TEST(GemmModelSplit, OrigamiPrunedPredictionsAreLowerBoundsAndTheTopIsExact) {
  const std::uint64_t seed = testing::test_seed(31);
  SCOPED_TRACE(testing::seed_trace(seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(0.0, std::log(65536.0));
  for (const char* name : {"mi300x", "mi350x"}) {
    const DeviceParams device = device_named(name);
    const GemmModel model(device, default_scalars(device));
    const auto space = modelled_space(ProblemClass{}, device);
    std::vector<PreparedCandidate> prepared;
    for (const Candidate& c : space) prepared.push_back(model.prepare(ProblemClass{}, c));
    std::vector<double> exact(space.size()), pruned(space.size());
    constexpr std::size_t kKeep = 5;
    for (int trial = 0; trial < 40; ++trial) {
      const auto size = [&] { return 1 + static_cast<std::int64_t>(std::exp(log_size(rng))); };
      const GemmProblem p = shape(size(), size(), size());
      model.predict_all_us(p, prepared.data(), prepared.size(), exact.data());
      double cutoff = 0.0;
      const std::size_t computed =
          model.predict_top_us(p, prepared.data(), prepared.size(), kKeep, 0.01, pruned.data(), &cutoff);
      EXPECT_GE(computed, kKeep) << name << " " << p.describe();
      EXPECT_EQ(cutoff, exact_cutoff_us(exact.data(), exact.size(), kKeep, 0.01)) << p.describe();
      for (std::size_t i = 0; i < exact.size(); ++i) {
        ASSERT_LE(pruned[i], exact[i]) << name << " " << p.describe() << " candidate " << i;
        if (exact[i] <= cutoff) EXPECT_EQ(pruned[i], exact[i]) << p.describe() << " candidate " << i;
        else EXPECT_GT(pruned[i], cutoff) << p.describe() << " candidate " << i;
      }
    }
  }
}

std::vector<MeasuredShape> one_measured_shape(double median_ms) {
  MeasuredShape s;
  s.name = "s";
  s.problem = shape(1024, 1024, 1024);
  MeasuredCandidate m;
  m.candidate = hopper_modelled_space(ProblemClass{}).front();
  m.median_ms = median_ms;
  s.candidates.push_back(m);
  return {s};
}

TEST(GemmCalibrationRefusals, DegenerateFitsAreErrors) {
  const DeviceParams device = device_named("h200");
  const ModelScalars start = default_scalars(device);
  const auto message = [&](const std::vector<MeasuredShape>& shapes, const FitOptions& options) {
    const auto fit = fit_scalars(device, start, shapes, options);
    EXPECT_FALSE(fit.is_ok());
    return fit.is_ok() ? std::string() : fit.status().to_string();
  };
  FitOptions zero_evals;
  zero_evals.max_evaluations = 0;
  EXPECT_NE(message(one_measured_shape(0.1), zero_evals).find("max_evaluations: 0"), std::string::npos);
  FitOptions negative_regret;
  negative_regret.regret_weight = -1.0;
  EXPECT_NE(message(one_measured_shape(0.1), negative_regret).find("regret_weight: -1"),
            std::string::npos);
  FitOptions bad_bounds;
  bad_bounds.scalar_bounds[0] = {0.9, 0.3};
  EXPECT_NE(message(one_measured_shape(0.1), bad_bounds).find("mma_efficiency"), std::string::npos);
  auto empty = one_measured_shape(0.1);
  empty.front().candidates.clear();
  EXPECT_NE(message(empty, FitOptions{}).find("0 measured candidates"), std::string::npos);
  // A measured time of 0 makes the log loss infinite.
  EXPECT_NE(message(one_measured_shape(0.0), FitOptions{}).find("loss"), std::string::npos);
  EXPECT_FALSE(fit_scalars(device, start, {}, FitOptions{}).is_ok());
  FitOptions fine;
  fine.max_evaluations = 50;
  EXPECT_TRUE(fit_scalars(device, start, one_measured_shape(0.1), fine).is_ok());
}

TEST(GemmCalibrationRefusals, MeasurementsOfAnotherDevice) {
  MeasurementSet h200_set;
  h200_set.device = "h200";
  const std::vector<LabelledMeasurements> sets = {{"run.json", &h200_set}};
  EXPECT_TRUE(check_measurement_device(sets, "h200").is_ok());
  const Status other = check_measurement_device(sets, "mi300x");
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.to_string().find("'h200'"), std::string::npos) << other.to_string();
  EXPECT_NE(other.to_string().find("'mi300x'"), std::string::npos) << other.to_string();
}

TEST(GemmCalibrationRefusals, FileWithoutEveryScalarIsNotFitted) {
  const auto path = std::filesystem::temp_directory_path() / "parity_gemm_calibration_empty.json";
  for (const char* scalars : {"{}", R"({"launch_us": 4.0})"}) {
    std::ofstream(path) << R"({"schema": "parity.gemm.calibration/1", "device": "h200", "scalars": )"
                        << scalars << "}";
    const auto read = read_gemm_calibration(path);
    ASSERT_FALSE(read.is_ok()) << scalars;
    EXPECT_NE(read.status().to_string().find("mma_efficiency"), std::string::npos)
        << read.status().to_string();
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace parity::gemm
