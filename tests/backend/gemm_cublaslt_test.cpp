// The cuBLASLt provider against the fp64 reference GEMM: every candidate the selector returns, every
// heuristic pick and a random sample of the enumerated space, on random shapes (odd sizes, m or n
// of 1, misaligned rows), all layouts, fp16 and TF32, batch and epilogues; plus the provider's
// error paths, the enumeration cache, time_cublaslt_heuristic and measure_shape.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/gpu.hpp"
#include "parity/core/rng.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/cublaslt.hpp"
#include "parity/bench/gemm_timing.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"
#include "reference/gemm.hpp"

namespace parity::gemm {
namespace {

// Error bound of one output relative to sum_k |a||b| (+|bias|), inputs exact in their type:
// rounding to the output type u_out; TF32 rounds each operand to 11 significant bits inside the
// tensor cores, 2*2^-11 per product; fp32 accumulation of k products and the split-K partials,
// gamma_{k+2} ~ (k+2)*2^-24, doubled for the truncating alignment inside an MMA.
double derived_tolerance(const GemmProblem& p) {
  const double u_out = unit_roundoff(p.c_dtype);
  const double u_tf32 = p.a_dtype == DType::kF32 ? std::ldexp(1.0, -11) : 0.0;
  return u_out + 2.0 * u_tf32 + 2.0 * static_cast<double>(p.k + 2) * std::ldexp(1.0, -24);
}

// Host operands in the storage layout of `p`, values normal(0,1) rounded to the type, and the
// device copies.
struct HostGemm {
  GemmProblem problem;
  std::vector<float> a, b, bias;
  gpu::DeviceBuffer a_dev, b_dev, d_dev, bias_dev, workspace;
  std::vector<ref::GemmElement> want;
};

std::vector<std::uint8_t> to_bytes(const std::vector<float>& values, DType dtype) {
  const std::size_t size = dtype_size_bytes(dtype);
  std::vector<std::uint8_t> bytes(values.size() * size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (dtype == DType::kF32) {
      std::memcpy(bytes.data() + i * 4, &values[i], 4);
    } else {
      const std::uint16_t bits =
          dtype == DType::kBF16 ? float_to_bf16_bits(values[i]) : float_to_fp16_bits(values[i]);
      std::memcpy(bytes.data() + i * 2, &bits, 2);
    }
  }
  return bytes;
}

float round_to(DType dtype, double value) {
  const auto f = static_cast<float>(value);
  if (dtype == DType::kBF16) return bf16_bits_to_float(float_to_bf16_bits(f));
  if (dtype == DType::kF16) return fp16_bits_to_float(float_to_fp16_bits(f));
  return f;
}

void make_host_gemm(HostGemm& g, Rng& rng) {
  const GemmProblem& p = g.problem;
  g.a.resize(static_cast<std::size_t>(ref::gemm_a_storage(p)));
  g.b.resize(static_cast<std::size_t>(ref::gemm_b_storage(p)));
  for (auto& v : g.a) v = round_to(p.a_dtype, rng.normal());
  for (auto& v : g.b) v = round_to(p.b_dtype, rng.normal());
  if (p.epilogue == Epilogue::kBias) {
    g.bias.resize(static_cast<std::size_t>(p.m));
    for (auto& v : g.bias) v = round_to(p.c_dtype, rng.normal());
  }
  auto a = gpu::upload(to_bytes(g.a, p.a_dtype));
  auto b = gpu::upload(to_bytes(g.b, p.b_dtype));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  g.a_dev = std::move(*a);
  g.b_dev = std::move(*b);
  if (!g.bias.empty()) {
    auto bias = gpu::upload(to_bytes(g.bias, p.c_dtype));
    ASSERT_TRUE(bias.is_ok());
    g.bias_dev = std::move(*bias);
  }
  auto d = gpu::DeviceBuffer::allocate(static_cast<std::size_t>(ref::gemm_d_storage(p)) *
                                       dtype_size_bytes(p.c_dtype));
  ASSERT_TRUE(d.is_ok());
  g.d_dev = std::move(*d);
  auto workspace = gpu::DeviceBuffer::allocate(64u << 20);
  ASSERT_TRUE(workspace.is_ok());
  g.workspace = std::move(*workspace);
  g.want = ref::gemm(p, g.a, g.b, g.bias);
}

double output_value(const std::vector<std::uint8_t>& bytes, DType dtype, std::size_t index) {
  if (dtype == DType::kF32) {
    float v = 0.0f;
    std::memcpy(&v, bytes.data() + index * 4, 4);
    return v;
  }
  std::uint16_t bits = 0;
  std::memcpy(&bits, bytes.data() + index * 2, 2);
  return dtype == DType::kBF16 ? bf16_bits_to_float(bits) : fp16_bits_to_float(bits);
}

// Runs `candidate` on poisoned output and compares every element with the fp64 reference.
void expect_matches_reference(CublasLtProvider& provider, HostGemm& g, const Candidate& candidate,
                              const std::string& label) {
  const GemmProblem& p = g.problem;
  ASSERT_TRUE(g.d_dev.fill_bytes(0xff).is_ok());  // NaN in every type: unwritten stays NaN
  GemmOperands ops;
  ops.a = g.a_dev.data();
  ops.b = g.b_dev.data();
  ops.d = g.d_dev.data();
  ops.bias = g.bias_dev.data();
  ops.workspace = g.workspace.data();
  ops.workspace_bytes = g.workspace.size_bytes();
  const Status ran = provider.run(p, candidate, ops);
  ASSERT_TRUE(ran.is_ok()) << label << ": " << ran.to_string();
  ASSERT_TRUE(gpu::synchronize().is_ok()) << label;
  auto got = gpu::download<std::uint8_t>(g.d_dev, g.d_dev.size_bytes());
  ASSERT_TRUE(got.is_ok());
  const double tolerance = derived_tolerance(p);
  double worst = 0.0;
  std::int64_t worst_row = 0, worst_col = 0;
  for (std::int64_t batch = 0; batch < p.batch; ++batch) {
    for (std::int64_t col = 0; col < p.n; ++col) {
      for (std::int64_t row = 0; row < p.m; ++row) {
        const auto index = static_cast<std::size_t>(ref::gemm_d_index(p, batch, row, col));
        const double value = output_value(*got, p.c_dtype, index);
        const auto& want = g.want[index];
        const double error = std::isfinite(value)
                                 ? std::abs(value - want.value) / std::max(want.abs_sum, 1e-30)
                                 : INFINITY;
        if (!(error <= worst)) {
          worst = error;
          worst_row = row;
          worst_col = col;
        }
      }
    }
  }
  EXPECT_LE(worst, tolerance) << label << " on " << p.describe() << ": worst at (" << worst_row
                              << ", " << worst_col << ")";
}

Result<Selector> h200_selector() {
  PARITY_ASSIGN_OR_RETURN(const hw::HardwareSpec spec, hw::find_hardware("h200"));
  PARITY_ASSIGN_OR_RETURN(const DeviceParams device, device_params_from_spec(spec));
  PARITY_ASSIGN_OR_RETURN(const GemmCalibration calibration,
                          load_gemm_calibration_or_default(device, std::nullopt));
  return Selector(GemmModel(device, calibration.scalars));
}

GemmProblem bf16_problem(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

TEST(CublasLtProvider, SelectorHeuristicAndSampledCandidatesMatchFp64OnRandomShapes) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(2026);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok()) << provider.status().to_string();
  auto selector = h200_selector();
  ASSERT_TRUE(selector.is_ok()) << selector.status().to_string();
  std::vector<GemmProblem> shapes = {bf16_problem(1, 1, 1), bf16_problem(1, 257, 33),
                                     bf16_problem(129, 1, 64), bf16_problem(1000, 17, 999),
                                     bf16_problem(256, 256, 4096)};
  for (int i = 0; i < 4; ++i) {
    shapes.push_back(bf16_problem(rng.uniform_int(1, 300), rng.uniform_int(1, 300), rng.uniform_int(1, 300)));
  }
  for (const GemmProblem& problem : shapes) {
    SCOPED_TRACE(problem.describe());
    HostGemm g;
    g.problem = problem;
    make_host_gemm(g, rng);
    auto candidates = (*provider)->enumerate(problem);
    ASSERT_TRUE(candidates.is_ok()) << candidates.status().to_string();
    ASSERT_FALSE(candidates->empty());
    auto selection = selector->select(problem, *candidates, 5);
    ASSERT_TRUE(selection.is_ok()) << selection.status().to_string();
    std::set<std::size_t> indices;
    for (const auto& ranked : selection->top) indices.insert(ranked.index);
    for (std::size_t i = 0; i < candidates->size(); ++i) {
      if ((*candidates)[i].heuristic_rank >= 0) indices.insert(i);
    }
    for (int s = 0; s < 6; ++s) {
      indices.insert(static_cast<std::size_t>(rng.uniform_int(0, static_cast<std::int64_t>(candidates->size()) - 1)));
    }
    for (std::size_t index : indices) {
      const Candidate& c = (*candidates)[index];
      expect_matches_reference(**provider, g, c, (*provider)->configuration(c));
    }
  }
}

TEST(CublasLtProvider, HeuristicTop1MatchesFp64OnLayoutsTypesBatchAndEpilogues) {
  PARITY_REQUIRE_GPU();
  const auto seed = testing::test_seed(7);
  SCOPED_TRACE(testing::seed_trace(seed));
  Rng rng(seed);
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok()) << provider.status().to_string();
  std::vector<GemmProblem> problems;
  for (GemmLayout layout : {GemmLayout::kTN, GemmLayout::kNN, GemmLayout::kNT, GemmLayout::kTT}) {
    for (DType dtype : {DType::kBF16, DType::kF16, DType::kF32}) {
      GemmProblem p = bf16_problem(97, 130, 203);
      p.layout = layout;
      p.a_dtype = p.b_dtype = p.c_dtype = dtype;
      problems.push_back(p);
    }
  }
  GemmProblem batched = bf16_problem(64, 48, 80);
  batched.batch = 3;
  problems.push_back(batched);
  GemmProblem padded = bf16_problem(40, 24, 72);
  padded.lda = 80;  // rows longer than K: the provider must honour leading dimensions
  padded.ldc = 48;
  problems.push_back(padded);
  for (Epilogue epilogue : {Epilogue::kBias, Epilogue::kRelu}) {
    GemmProblem p = bf16_problem(128, 64, 96);
    p.epilogue = epilogue;
    problems.push_back(p);
  }
  for (const GemmProblem& problem : problems) {
    SCOPED_TRACE(problem.describe());
    HostGemm g;
    g.problem = problem;
    make_host_gemm(g, rng);
    auto picks = (*provider)->heuristic(problem, 8);
    ASSERT_TRUE(picks.is_ok()) << picks.status().to_string();
    ASSERT_FALSE(picks->empty());
    EXPECT_EQ(picks->front().heuristic_rank, 0);
    for (const Candidate& c : *picks) expect_matches_reference(**provider, g, c, (*provider)->configuration(c));
  }
}

TEST(CublasLtProvider, EnumerationIsCachedPerClassAndExplicit) {
  PARITY_REQUIRE_GPU();
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok());
  auto first = (*provider)->enumerate(bf16_problem(4096, 4096, 4096));
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  auto second = (*provider)->enumerate(bf16_problem(1024, 2048, 512));
  ASSERT_TRUE(second.is_ok());
  const auto reports = (*provider)->enumeration_reports();
  ASSERT_EQ(reports.size(), 1u) << "same class must reuse the cached space";
  EXPECT_GT(reports[0].configs_passed_check, 50);
  EXPECT_LE(reports[0].configs_passed_check, reports[0].configs_built);
  EXPECT_GT(reports[0].family_algo_id, 0);
  EXPECT_GT(reports[0].enumerate_ms, 0.0);
  int heuristic_picks = 0;
  for (const Candidate& c : *first) {
    EXPECT_TRUE(c.has_payload);
    EXPECT_TRUE(validate_candidate(c).is_ok()) << c.describe();
    // Built by hand: never AUTO (cluster 0x0 would fail AlgoCheck on Hopper).
    EXPECT_GE(c.cluster_m, 1);
    heuristic_picks += c.heuristic_rank >= 0 ? 1 : 0;
  }
  EXPECT_GE(heuristic_picks, 1);
  // A second class (odd K: 2-byte rows) is enumerated separately.
  ASSERT_TRUE((*provider)->enumerate(bf16_problem(512, 512, 511)).is_ok());
  EXPECT_EQ((*provider)->enumeration_reports().size(), 2u);
  // Text round trip: describe() -> parse_candidate keeps the payload, and it still runs the check.
  auto parsed = parse_candidate(first->front().describe());
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_TRUE((*provider)->check(bf16_problem(4096, 4096, 4096), *parsed).is_ok());
}

TEST(CublasLtProvider, RejectsBadCandidatesAndOperandsWithReasons) {
  PARITY_REQUIRE_GPU();
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok());
  const GemmProblem problem = bf16_problem(256, 256, 256);
  Candidate no_payload;
  const Status run = (*provider)->run(problem, no_payload, GemmOperands{});
  EXPECT_EQ(run.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(run.message().find("payload"), std::string::npos) << run.message();
  auto picks = (*provider)->heuristic(problem, 1);
  ASSERT_TRUE(picks.is_ok() && !picks->empty());
  const Status null_operands = (*provider)->run(problem, picks->front(), GemmOperands{});
  EXPECT_EQ(null_operands.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(null_operands.message().find("device pointers"), std::string::npos);
  Candidate bad_tile;
  bad_tile.tile_m = 100;
  bad_tile.tile_n = 100;
  auto built = (*provider)->candidate_from_features(problem, bad_tile);
  ASSERT_FALSE(built.is_ok());
  EXPECT_EQ(built.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(built.status().message().find("tile=100x100"), std::string::npos);
  GemmProblem bad = problem;
  bad.m = 0;
  EXPECT_EQ((*provider)->enumerate(bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(CublasLtProvider, CandidateFromFeaturesRunsCorrectly) {
  PARITY_REQUIRE_GPU();
  Rng rng(testing::test_seed(5));
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok());
  HostGemm g;
  g.problem = bf16_problem(300, 200, 512);
  make_host_gemm(g, rng);
  Candidate features;
  features.tile_m = 128;
  features.tile_n = 128;
  features.cluster_m = 1;
  features.cluster_n = 2;
  features.split_k = 2;
  features.reduction = ReductionScheme::kComputeType;
  auto built = (*provider)->candidate_from_features(g.problem, features);
  ASSERT_TRUE(built.is_ok()) << built.status().to_string();
  EXPECT_EQ(built->split_k, 2);
  EXPECT_GT(built->workspace_bytes, 0u);  // split-K partials live in the workspace
  expect_matches_reference(**provider, g, *built, (*provider)->configuration(*built));
}

TEST(CublasLtTiming, HeuristicTimingIsCheckedAndSane) {
  PARITY_REQUIRE_GPU();
  bench::TimingOptions options;
  options.warmup_iterations = 2;
  options.repetitions = 7;
  auto timing = time_cublaslt_heuristic(1024, 768, 520, DType::kBF16, options);
  ASSERT_TRUE(timing.is_ok()) << timing.status().to_string();
  EXPECT_EQ(timing->stats.count, 7);
  EXPECT_GT(timing->stats.median_ms, 0.0);
  EXPECT_GT(timing->median_tflops, 0.0);
  EXPECT_LT(timing->median_tflops, 2000.0);  // above any Hopper dense peak: a broken timer
  GemmProblem p = bf16_problem(1024, 768, 520);
  EXPECT_LE(timing->max_relative_error, derived_tolerance(p));
  EXPECT_NE(timing->configuration.find("tile="), std::string::npos);
  auto bad = time_cublaslt_heuristic(0, 768, 520, DType::kBF16, options);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  auto bad_type = time_cublaslt_heuristic(64, 64, 64, DType::kI32, options);
  EXPECT_FALSE(bad_type.is_ok());
}

TEST(CublasLtTiming, SampledCheckCatchesUnwrittenOutput) {
  PARITY_REQUIRE_GPU();
  const GemmProblem p = bf16_problem(333, 129, 257);
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok());
  // The heuristic may pick split-K for this small shape: give the operands its full workspace.
  auto operands = RandomGemmOperands::create(p, 3, (*provider)->max_workspace_bytes());
  ASSERT_TRUE(operands.is_ok()) << operands.status().to_string();
  auto poisoned = operands->max_relative_error(16, 4);  // D is poisoned, nothing ran
  ASSERT_TRUE(poisoned.is_ok());
  EXPECT_TRUE(std::isinf(*poisoned));
  auto picks = (*provider)->heuristic(p, 1);
  ASSERT_TRUE(picks.is_ok() && !picks->empty());
  const Status ran = (*provider)->run(p, picks->front(), operands->operands());
  ASSERT_TRUE(ran.is_ok()) << ran.to_string();
  ASSERT_TRUE(gpu::synchronize().is_ok());
  auto error = operands->max_relative_error(64, 4);
  ASSERT_TRUE(error.is_ok());
  EXPECT_LE(*error, derived_tolerance(p));
  EXPECT_DOUBLE_EQ(RandomGemmOperands::tolerance(p), derived_tolerance(p));
}

// Few repetitions and samples: the tests check the method's bookkeeping, not the timings.
MeasureOptions quick_measure_options(int repetitions, int top_k, int noise_top) {
  MeasureOptions options;
  options.repetitions = repetitions;
  options.warmup_iterations = 1;
  options.screen_repetitions = 1;
  options.top_k = top_k;
  options.noise_top = noise_top;
  options.check_samples = 16;
  return options;
}

// The oracle must be the fastest *timed* row (not a screened estimate, not a failed row): found
// here by an independent scan. (Comparing it with the heuristic's row alone could never fail: the
// heuristic's row is one of those the oracle is the minimum of.)
TEST(CublasLtMeasure, OracleIsTheFastestTimedRowAndEveryTimedRowChecked) {
  PARITY_REQUIRE_GPU();
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok());
  MeasureOptions options = quick_measure_options(5, 3, 2);
  const GemmProblem p = bf16_problem(768, 512, 1000);
  auto m = measure_shape(**provider, p, {}, options);
  ASSERT_TRUE(m.is_ok()) << m.status().to_string();
  ASSERT_GE(m->oracle, 0);
  ASSERT_GE(m->heuristic_top1, 0);
  int fastest_timed = -1;
  for (std::size_t i = 0; i < m->candidates.size(); ++i) {
    const auto& c = m->candidates[i];
    if (!c.is_timed || !c.error.empty()) continue;
    if (fastest_timed < 0 ||
        c.stats.median_ms < m->candidates[static_cast<std::size_t>(fastest_timed)].stats.median_ms) {
      fastest_timed = static_cast<int>(i);
    }
  }
  ASSERT_GE(fastest_timed, 0);
  EXPECT_DOUBLE_EQ(m->candidates[static_cast<std::size_t>(m->oracle)].stats.median_ms,
                   m->candidates[static_cast<std::size_t>(fastest_timed)].stats.median_ms);
  EXPECT_TRUE(m->candidates[static_cast<std::size_t>(m->oracle)].is_timed);
  // The heuristic's top-1 row is the candidate the heuristic ranked 0, and it was timed.
  const auto& heuristic = m->candidates[static_cast<std::size_t>(m->heuristic_top1)];
  EXPECT_EQ(heuristic.candidate.heuristic_rank, 0);
  EXPECT_TRUE(heuristic.is_timed);
  int timed = 0;
  for (const auto& c : m->candidates) {
    if (!c.is_timed) continue;
    ++timed;
    EXPECT_EQ(c.stats.count, 5);
    EXPECT_GE(c.max_relative_error, 0.0);
    EXPECT_LE(c.max_relative_error, m->tolerance);
  }
  EXPECT_GE(timed, 3);  // the top-3 screened, plus every heuristic pick (which may overlap)
  EXPECT_EQ(m->noise.size(), 2u);
  EXPECT_EQ(m->rounds, 5);  // min_timed_ms = 0: exactly `repetitions`
  MeasureOptions bad = options;
  bad.repetitions = 0;
  EXPECT_EQ(measure_shape(**provider, p, {}, bad).status().code(), StatusCode::kInvalidArgument);
  bad = options;
  bad.max_repetitions = 4;  // below repetitions
  EXPECT_EQ(measure_shape(**provider, p, {}, bad).status().code(), StatusCode::kInvalidArgument);
  bad = options;
  bad.min_timed_ms = -1.0;
  EXPECT_EQ(measure_shape(**provider, p, {}, bad).status().code(), StatusCode::kInvalidArgument);
}

TEST(CublasLtMeasure, ShortKernelsGetMoreRoundsUpToTheCap) {
  PARITY_REQUIRE_GPU();
  auto provider = CublasLtProvider::create();
  ASSERT_TRUE(provider.is_ok());
  MeasureOptions options = quick_measure_options(3, 2, 1);
  const GemmProblem p = bf16_problem(256, 256, 256);  // a few microseconds per run
  // 1 s of kernel time is far beyond the cap: every timed candidate and the re-timing run the
  // cap's rounds.
  options.min_timed_ms = 1000.0;
  options.max_repetitions = 7;
  auto capped = measure_shape(**provider, p, {}, options);
  ASSERT_TRUE(capped.is_ok()) << capped.status().to_string();
  EXPECT_EQ(capped->rounds, 7);
  for (const auto& c : capped->candidates) {
    if (c.is_timed) {
      EXPECT_EQ(c.stats.count, 7);
    }
  }
  // 1 us of kernel time is below one run: the floor `repetitions` holds.
  options.min_timed_ms = 0.001;
  auto floored = measure_shape(**provider, p, {}, options);
  ASSERT_TRUE(floored.is_ok()) << floored.status().to_string();
  EXPECT_EQ(floored->rounds, 3);
}

}  // namespace
}  // namespace parity::gemm
