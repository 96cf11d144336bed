// The device benchmarks' settings turned into checked requests (src/bench/bench_requests.cpp,
// src/bench/gemm_inputs.cpp): CPU code, so every error names the command and the flag before any
// device is touched; defaults pass through unchanged.
#include <gtest/gtest.h>

#include <string>

#include "parity/bench/attention_bench.hpp"
#include "parity/bench/gemm_run_bench.hpp"
#include "parity/bench/hbm.hpp"
#include "parity/bench/hw_probe.hpp"
#include "parity/bench/interaction_bench.hpp"
#include "parity/bench/tbe_bench.hpp"
#include "parity/bench/gemm_timing.hpp"

namespace parity::bench {
namespace {

template <typename T>
std::string error_of(const Result<T>& result) {
  EXPECT_FALSE(result.is_ok());
  return result.status().message();
}

TEST(BenchRequests, HbmAndProbeParseTheCopySize) {
  HbmBenchSettings hbm;
  hbm.total_bytes = "512MiB";
  hbm.out = "hbm.json";
  auto request = hbm_bench_request_from_settings(hbm);
  ASSERT_TRUE(request.is_ok()) << request.status().to_string();
  EXPECT_EQ(request->total_bytes, std::int64_t{512} << 20);
  EXPECT_EQ(request->out, "hbm.json");
  EXPECT_EQ(request->timing.repetitions, 50);
  EXPECT_EQ(hbm_bench_request_from_settings(HbmBenchSettings{})->total_bytes, kDefaultHbmTotalBytes);

  hbm.total_bytes = "3";
  EXPECT_NE(error_of(hbm_bench_request_from_settings(hbm)).find("bench hbm --bytes"), std::string::npos);
  hbm.total_bytes = "4GiB";
  hbm.timing.reps = 0;
  EXPECT_NE(error_of(hbm_bench_request_from_settings(hbm)).find("bench hbm"), std::string::npos);

  HwProbeSettings probe;
  probe.results = "probe.json";
  auto probe_request = hw_probe_request_from_settings(probe);
  ASSERT_TRUE(probe_request.is_ok()) << probe_request.status().to_string();
  EXPECT_EQ(probe_request->copy_total_bytes, kDefaultHbmTotalBytes);
  EXPECT_EQ(probe_request->timing.warmup_iterations, 10);
  EXPECT_EQ(probe_request->timing.repetitions, 30);
  EXPECT_EQ(probe_request->results, "probe.json");
  probe.copy_total_bytes = "1x";
  EXPECT_NE(error_of(hw_probe_request_from_settings(probe)).find("--bytes"), std::string::npos);
}

TEST(BenchRequests, GemmNeedsAShapeAndAKnownLibrary) {
  gemm::GemmBenchSettings settings;
  EXPECT_NE(error_of(gemm::gemm_bench_request_from_settings(settings)).find("bench gemm: --m=0"), std::string::npos);
  settings.m = settings.n = settings.k = 256;
  settings.library = "cublas";
  auto request = gemm::gemm_bench_request_from_settings(settings);
  ASSERT_TRUE(request.is_ok()) << request.status().to_string();
  EXPECT_TRUE(request->use_cublas);
  ASSERT_EQ(request->shapes.size(), 1u);
  EXPECT_EQ(request->shapes[0].problem.m, 256);
  EXPECT_EQ(request->cublas_workspace_bytes, 32ull << 20);
  settings.library = "rocblas";
  EXPECT_NE(error_of(gemm::gemm_bench_request_from_settings(settings)).find("--library='rocblas'"), std::string::npos);
  settings.library = "cublaslt";
  settings.dtype = "int8";
  EXPECT_FALSE(gemm::gemm_bench_request_from_settings(settings).is_ok());
}

TEST(BenchRequests, TbeBuildsTheSpecAndTheForwardVariants) {
  TbeBenchSettings settings;
  settings.config = "C1";
  settings.forward_variants = "auto,wide_rows";
  auto request = tbe_bench_request_from_settings(settings);
  ASSERT_TRUE(request.is_ok()) << request.status().to_string();
  EXPECT_EQ(request->spec.name, "C1");
  EXPECT_EQ(request->forward_variants, (std::vector<std::string>{"auto", "wide_rows"}));
  settings.forward_variants = "auto,nope";
  EXPECT_NE(error_of(tbe_bench_request_from_settings(settings)).find("'nope' is not one of " +
                                                                     tbe_forward_variant_list_text()),
            std::string::npos);
  settings.forward_variants.clear();
  settings.config = "ZZ";
  EXPECT_FALSE(tbe_bench_request_from_settings(settings).is_ok());
}

TEST(BenchRequests, TbeForwardVariantListIsTheNamesCommaSeparated) {
  const std::string text = tbe_forward_variant_list_text();
  std::string expected;
  for (const auto& name : tbe_forward_variant_names()) expected += (expected.empty() ? "" : ", ") + name;
  EXPECT_EQ(text, expected);
  EXPECT_EQ(text.rfind("auto, narrow_rows, ", 0), 0u);
}

TEST(BenchRequests, InteractionAndGemmRunNameTheirFlags) {
  InteractionBenchSettings interaction;
  interaction.dtype = "fp32";
  auto request = interaction_bench_request_from_settings(interaction);
  ASSERT_TRUE(request.is_ok()) << request.status().to_string();
  EXPECT_EQ(request->dtype, DType::kF32);
  interaction.dtype = "fp99";
  EXPECT_EQ(error_of(interaction_bench_request_from_settings(interaction)).rfind("bench interaction: --dtype: ", 0),
            0u);

  GemmRunBenchSettings gemm_run;
  gemm_run.skip_oracle = true;
  auto run_request = gemm_run_bench_request_from_settings(gemm_run);
  ASSERT_TRUE(run_request.is_ok()) << run_request.status().to_string();
  EXPECT_FALSE(run_request->options.measure_oracle);
  EXPECT_EQ(run_request->options.timing.repetitions, 30);
  EXPECT_EQ(run_request->options.gemm_choice, GemmChoice::kMeasured);
  // The library's defaults unless the flags say otherwise.
  EXPECT_EQ(run_request->options.measured_candidates_per_source, gemm::GemmOptions{}.measured_candidates_per_source);
  EXPECT_EQ(run_request->options.measured_distinct_tiles, gemm::GemmOptions{}.measured_distinct_tiles);
  gemm_run.measured_per_source = 3;
  gemm_run.measured_model_list = "configs";
  run_request = gemm_run_bench_request_from_settings(gemm_run);
  ASSERT_TRUE(run_request.is_ok()) << run_request.status().to_string();
  EXPECT_EQ(run_request->options.measured_candidates_per_source, 3);
  EXPECT_FALSE(run_request->options.measured_distinct_tiles);
  gemm_run.measured_model_list = "tiles";
  run_request = gemm_run_bench_request_from_settings(gemm_run);
  ASSERT_TRUE(run_request.is_ok()) << run_request.status().to_string();
  EXPECT_TRUE(run_request->options.measured_distinct_tiles);
  EXPECT_EQ(run_request->options.measured_flush_l2, gemm::GemmOptions{}.measured_flush_l2);
  gemm_run.measured_timing = "back-to-back";
  run_request = gemm_run_bench_request_from_settings(gemm_run);
  ASSERT_TRUE(run_request.is_ok()) << run_request.status().to_string();
  EXPECT_FALSE(run_request->options.measured_flush_l2);
  gemm_run.measured_timing = "flushed";
  run_request = gemm_run_bench_request_from_settings(gemm_run);
  ASSERT_TRUE(run_request.is_ok()) << run_request.status().to_string();
  EXPECT_TRUE(run_request->options.measured_flush_l2);
  gemm_run.measured_timing = "Flushed";
  EXPECT_NE(error_of(gemm_run_bench_request_from_settings(gemm_run)).find("--measured-timing=Flushed;"),
            std::string::npos);
  gemm_run.measured_timing = "flushed";
  gemm_run.measured_model_list = "tile";
  EXPECT_NE(error_of(gemm_run_bench_request_from_settings(gemm_run)).find("--measured-model-list=tile;"),
            std::string::npos);
  gemm_run.measured_model_list = "configs";
  gemm_run.measured_per_source = 0;
  EXPECT_NE(error_of(gemm_run_bench_request_from_settings(gemm_run)).find("--measured-per-source=0"),
            std::string::npos);
  gemm_run.measured_per_source = 4;
  gemm_run.request.model = "dlrm-v9";
  EXPECT_NE(error_of(gemm_run_bench_request_from_settings(gemm_run)).find("dlrm-v9"), std::string::npos);
}

TEST(BenchRequests, AttentionNeedsAShape) {
  AttentionBenchSettings settings;
  settings.config = "H1";
  auto request = attention_bench_request_from_settings(settings);
  ASSERT_TRUE(request.is_ok()) << request.status().to_string();
  EXPECT_FALSE(request->cases.empty());
  settings.request.checked_rows = 0;
  EXPECT_NE(error_of(attention_bench_request_from_settings(settings)).find("--check-rows"), std::string::npos);
}

}  // namespace
}  // namespace parity::bench
