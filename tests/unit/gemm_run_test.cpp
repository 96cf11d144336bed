// gemm::Gemm on the CPU (OpenBLAS) against the fp64 reference: every epilogue x layout x dtype,
// strided batches, alpha/beta, and the argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <string>
#include <vector>

#include "parity/bench/gemm_run_bench.hpp"
#include "unit/gemm_run_test_util.hpp"

namespace parity::gemm {
namespace {

constexpr testing::DtypePair kDtypes[] = {{DType::kF32, DType::kF32},
                                          {DType::kBF16, DType::kBF16},
                                          {DType::kBF16, DType::kF32},
                                          {DType::kF16, DType::kF16}};

// Runs one case on the CPU and compares with the reference (libm tanhf: activation roundoff of
// a few fp32 ulps, taken as 4 u_fp32).
void check_cpu_case(GemmRunProblem problem, std::uint64_t seed, double alpha, double beta) {
  SCOPED_TRACE(testing::seed_trace(seed) + " " + problem.shape.describe() +
               " run_epilogue=" + std::string(run_epilogue_name(problem.epilogue)));
  auto gemm = Gemm::create(problem, ExecutionContext{});
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().to_string();
  EXPECT_EQ(gemm->configuration(), "openblas sgemm");
  auto c = testing::make_gemm_run_case(problem, seed, alpha, beta);
  std::vector<std::uint8_t> d = c.c.bytes;
  std::vector<float> bias_grad(static_cast<std::size_t>(problem.bias_grad_length()), -7.0f);
  std::vector<std::uint8_t> workspace(static_cast<std::size_t>(gemm->workspace_bytes()));
  const GemmArgs args = testing::host_args(c, d, bias_grad, workspace);
  const Status status = gemm->run(args, ExecutionContext{});
  ASSERT_TRUE(status.is_ok()) << status.to_string();
  testing::GemmRunErrorModel model;
  model.activation_roundoff = 4.0 * unit_roundoff(DType::kF32);
  testing::expect_matches_reference(c, d, c.aux, bias_grad, model);
}

TEST(GemmRunCpu, EveryEpilogueLayoutAndDtypeMatchesReference) {
  const std::uint64_t base_seed = testing::test_seed(1201);
  std::uint64_t case_index = 0;
  for (const RunEpilogue epilogue : testing::kAllRunEpilogues) {
    for (const GemmLayout layout : testing::kAllLayouts) {
      for (const testing::DtypePair dtypes : kDtypes) {
        // Odd sizes (no multiple of 8 or 128) and padded leading dimensions.
        GemmRunProblem p = testing::make_run_problem(37, 29, 45, layout, dtypes, epilogue);
        p.shape.lda = (layout == GemmLayout::kTN || layout == GemmLayout::kTT ? 45 : 37) + 3;
        p.shape.ldb = (layout == GemmLayout::kNT || layout == GemmLayout::kTT ? 29 : 45) + 5;
        p.shape.ldc = 37 + 2;
        const double beta = case_index % 2 == 0 ? 0.0 : 0.5;
        const bool operand_grad =
            epilogue == RunEpilogue::kBgradA || epilogue == RunEpilogue::kBgradB;
        check_cpu_case(p, base_seed + case_index, operand_grad ? 1.0 : 1.5, beta);
        ++case_index;
      }
    }
  }
}

TEST(GemmRunCpu, StridedBatchMatchesReference) {
  const std::uint64_t seed = testing::test_seed(1202);
  for (const RunEpilogue epilogue :
       {RunEpilogue::kNone, RunEpilogue::kBiasReluAux, RunEpilogue::kBiasGeluAux,
        RunEpilogue::kDRelu, RunEpilogue::kDGelu}) {
    for (const testing::DtypePair dtypes : {kDtypes[0], kDtypes[1]}) {
      GemmRunProblem p = testing::make_run_problem(24, 17, 33, GemmLayout::kNT, dtypes, epilogue);
      p.shape.batch = 3;
      p.stride_a = 24 * 33 + 11;  // gaps between the matrices
      p.stride_b = 17 * 33 + 5;
      p.stride_c = 24 * 17 + 7;
      check_cpu_case(p, seed, 1.0, 0.25);
    }
  }
}

TEST(GemmRunCpu, LinearLayerForwardAndBackwardChain) {
  // A row-major layer as the header maps it: forward TN with the ReLU mask, data-gradient NN
  // reading it, weight-gradient NT with the bias gradient of dY.
  const std::uint64_t seed = testing::test_seed(1203);
  const std::int64_t batch = 300, in = 70, out = 150;
  check_cpu_case(testing::make_run_problem(out, batch, in, GemmLayout::kTN, kDtypes[1],
                                           RunEpilogue::kBiasReluAux),
                 seed, 1, 0);
  check_cpu_case(testing::make_run_problem(in, batch, out, GemmLayout::kNN, kDtypes[1],
                                           RunEpilogue::kDReluBgrad),
                 seed, 1, 0);
  check_cpu_case(
      testing::make_run_problem(in, out, batch, GemmLayout::kNT, kDtypes[2], RunEpilogue::kBgradB),
      seed, 1, 0);
}

TEST(GemmRunCpu, ColumnPanelsMatchReference) {
  // 16-bit operands run in panels of 2048 columns: N = 4500 crosses two panel edges, and the
  // bias-gradient blocks straddle them.
  const std::uint64_t seed = testing::test_seed(1207);
  for (const RunEpilogue epilogue : {RunEpilogue::kBiasReluAux, RunEpilogue::kDReluBgrad,
                                     RunEpilogue::kDGelu, RunEpilogue::kBgradB}) {
    for (const GemmLayout layout : {GemmLayout::kNN, GemmLayout::kNT}) {
      GemmRunProblem p = testing::make_run_problem(24, 4500, 16, layout, kDtypes[1], epilogue);
      p.shape.ldc = 30;
      check_cpu_case(p, seed, 1.0, epilogue == RunEpilogue::kBgradB ? 0.0 : 0.5);
    }
  }
}

TEST(GemmRunCpu, BiasGradientIsIndependentOfThreadPartition) {
  // The partial sums use fixed column blocks (bf16: across two panels): one thread and all
  // threads give bitwise equal gradients.
  GemmRunProblem p = testing::make_run_problem(64, 4096, 16, GemmLayout::kNN, kDtypes[1],
                                               RunEpilogue::kDReluBgrad);
  auto gemm = Gemm::create(p, ExecutionContext{});
  ASSERT_TRUE(gemm.is_ok());
  auto c = testing::make_gemm_run_case(p, testing::test_seed(1204), 1, 0);
  std::vector<float> first, second;
#ifdef _OPENMP
  const int threads = omp_get_max_threads();
#endif
  for (auto* grad : {&first, &second}) {
#ifdef _OPENMP
    omp_set_num_threads(grad == &first ? 1 : std::max(threads, 3));
#endif
    std::vector<std::uint8_t> d = c.c.bytes,
                              workspace(static_cast<std::size_t>(gemm->workspace_bytes()));
    grad->assign(64, 0.0f);
    ASSERT_TRUE(gemm->run(testing::host_args(c, d, *grad, workspace), ExecutionContext{}).is_ok());
  }
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  EXPECT_EQ(first, second);
}

TEST(GemmRunEpilogue, NamesRoundTrip) {
  for (const RunEpilogue e : testing::kAllRunEpilogues) {
    auto parsed = parse_run_epilogue(run_epilogue_name(e));
    ASSERT_TRUE(parsed.is_ok()) << run_epilogue_name(e);
    EXPECT_EQ(*parsed, e);
  }
  const auto bad = parse_run_epilogue("relu6");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("epilogue: unknown value 'relu6'"), std::string::npos);
  EXPECT_EQ(*parse_run_epilogue("DRELU_BGRAD"), RunEpilogue::kDReluBgrad);
}

TEST(GemmRunEpilogue, AuxSizes) {
  GemmRunProblem p =
      testing::make_run_problem(37, 10, 8, GemmLayout::kTN, kDtypes[1], RunEpilogue::kBiasReluAux);
  EXPECT_EQ(p.default_aux_ld(), 128);
  EXPECT_EQ(p.aux_bytes(), 128 * 10 / 8);
  p.epilogue = RunEpilogue::kBiasGeluAux;
  EXPECT_EQ(p.default_aux_ld(), 40);
  EXPECT_EQ(p.aux_bytes(), 40 * 10 * 2);
  p.epilogue = RunEpilogue::kBias;
  EXPECT_EQ(p.aux_bytes(), 0);
  p.epilogue = RunEpilogue::kBgradB;
  EXPECT_EQ(p.bias_grad_length(), 10);
}

// Expects `status` to be kInvalidArgument with `needle` in its message.
void expect_invalid(const Status& status, const std::string& needle) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find(needle), std::string::npos) << status.message();
}

TEST(GemmRunCpu, RejectsBadProblems) {
  GemmRunProblem p =
      testing::make_run_problem(16, 16, 16, GemmLayout::kTN, kDtypes[0], RunEpilogue::kNone);
  p.shape.batch = 2;
  p.stride_a = 100;  // one A is 16 * 16 = 256 elements
  expect_invalid(Gemm::create(p, ExecutionContext{}).status(),
                 "stride_a=100 is smaller than one matrix");
  p.stride_a = -1;
  expect_invalid(Gemm::create(p, ExecutionContext{}).status(), "stride_a=-1");
  p.stride_a = 0;
  p.epilogue = RunEpilogue::kDReluBgrad;
  expect_invalid(Gemm::create(p, ExecutionContext{}).status(), "needs batch=1");
  GemmRunProblem mixed =
      testing::make_run_problem(16, 16, 16, GemmLayout::kTN,
                                testing::DtypePair{DType::kF16, DType::kBF16}, RunEpilogue::kNone);
  expect_invalid(Gemm::create(mixed, ExecutionContext{}).status(), "c_dtype=bf16");
  GemmRunProblem small_ld =
      testing::make_run_problem(16, 16, 16, GemmLayout::kTN, kDtypes[0], RunEpilogue::kNone);
  small_ld.shape.lda = 8;
  expect_invalid(Gemm::create(small_ld, ExecutionContext{}).status(), "lda=8");
}

TEST(GemmRunCpu, RejectsMissingArguments) {
  const std::uint64_t seed = testing::test_seed(1205);
  struct Case {
    RunEpilogue epilogue;
    const char* needle;
  } cases[] = {{RunEpilogue::kBiasRelu, "bias is null but epilogue bias_relu"},
               {RunEpilogue::kBiasReluAux, "aux is null but epilogue bias_relu_aux writes"},
               {RunEpilogue::kDGelu, "aux is null but epilogue dgelu reads"},
               {RunEpilogue::kDReluBgrad, "bias_grad is null but epilogue drelu_bgrad"},
               {RunEpilogue::kBgradB, "bias_grad is null"}};
  for (const auto& test : cases) {
    const GemmRunProblem p =
        testing::make_run_problem(16, 8, 8, GemmLayout::kTN, kDtypes[0], test.epilogue);
    auto gemm = Gemm::create(p, ExecutionContext{});
    ASSERT_TRUE(gemm.is_ok());
    auto c = testing::make_gemm_run_case(p, seed, 1, 0);
    std::vector<std::uint8_t> d = c.c.bytes,
                              workspace(static_cast<std::size_t>(gemm->workspace_bytes()));
    std::vector<float> bias_grad(16);
    GemmArgs args = testing::host_args(c, d, bias_grad, workspace);
    // Leave out exactly the argument the message must name.
    const std::string needle = test.needle;
    if (needle.starts_with("bias is")) args.bias = nullptr;
    if (needle.starts_with("aux is")) args.aux = nullptr;
    if (needle.starts_with("bias_grad is")) args.bias_grad = nullptr;
    expect_invalid(gemm->run(args, ExecutionContext{}), test.needle);
  }
}

TEST(GemmRunCpu, RejectsSmallWorkspaceAndBadAuxLd) {
  const GemmRunProblem p =
      testing::make_run_problem(40, 8, 8, GemmLayout::kTN, kDtypes[1], RunEpilogue::kBiasReluAux);
  auto gemm = Gemm::create(p, ExecutionContext{});
  ASSERT_TRUE(gemm.is_ok());
  ASSERT_GT(gemm->workspace_bytes(), 0);  // bf16 operands are converted in the workspace
  auto c = testing::make_gemm_run_case(p, testing::test_seed(1206), 1, 0);
  std::vector<std::uint8_t> d = c.c.bytes;
  std::vector<std::uint8_t> workspace(static_cast<std::size_t>(gemm->workspace_bytes() - 1));
  std::vector<float> bias_grad;
  GemmArgs args = testing::host_args(c, d, bias_grad, workspace);
  expect_invalid(gemm->run(args, ExecutionContext{}),
                 "workspace_bytes=" + std::to_string(workspace.size()));
  workspace.resize(static_cast<std::size_t>(gemm->workspace_bytes()));
  args = testing::host_args(c, d, bias_grad, workspace);
  args.aux_ld = 64;  // the ReLU mask needs a multiple of 128
  expect_invalid(gemm->run(args, ExecutionContext{}), "aux_ld=64");
  args.aux_ld = 0;
  EXPECT_TRUE(gemm->run(args, ExecutionContext{}).is_ok());
  auto bgrad = Gemm::create(
      testing::make_run_problem(40, 8, 8, GemmLayout::kNT, kDtypes[0], RunEpilogue::kBgradB),
      ExecutionContext{});
  ASSERT_TRUE(bgrad.is_ok());
  std::vector<float> grad(8);
  args.bias_grad = grad.data();
  args.alpha = 2.0f;
  expect_invalid(bgrad->run(args, ExecutionContext{}), "alpha=2 with epilogue bgradb");
  ExecutionContext gpu;
  gpu.device = DeviceKind::kGpu;
  expect_invalid(gemm->run(args, gpu), "context.device=gpu");
}

TEST(GemmRunCpu, GpuContextWithoutGpuBackendIsUnsupported) {
  // This test binary links only the CPU library, so no GPU backend is registered.
  ExecutionContext gpu;
  gpu.device = DeviceKind::kGpu;
  const auto gemm = Gemm::create(
      testing::make_run_problem(16, 16, 16, GemmLayout::kTN, kDtypes[1], RunEpilogue::kNone), gpu);
  EXPECT_EQ(gemm.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(gemm.status().message().find("no GPU backend"), std::string::npos);
}

}  // namespace
}  // namespace parity::gemm

namespace parity::bench {
namespace {

TEST(GemmRunBenchProblems, DlrmLayersMapToTheDocumentedCalls) {
  const auto problems = dlrm_gemm_run_problems(65536, DType::kBF16);
  auto kaggle = select_models(problems, "dlrm-kaggle");
  ASSERT_TRUE(kaggle.is_ok());
  // 8 forward + 7 forward_aux (the ReLU layers) + 7 data_grad (not the first bottom layer) + 6
  // data_grad_drelu (inputs after a ReLU) + 8 weight_grad.
  EXPECT_EQ(kaggle->size(), 8u + 7u + 7u + 6u + 8u);
  const auto& top0 =
      *std::find_if(kaggle->begin(), kaggle->end(), [](const GemmRunBenchProblem& p) {
        return p.layer == "top0 479->1024" && p.pass == "forward";
      });
  EXPECT_EQ(top0.problem.shape.m, 1024);
  EXPECT_EQ(top0.problem.shape.n, 65536);
  EXPECT_EQ(top0.problem.shape.k, 479);
  EXPECT_EQ(top0.problem.epilogue, gemm::RunEpilogue::kBiasRelu);
  const auto& top1_fused =
      *std::find_if(kaggle->begin(), kaggle->end(), [](const GemmRunBenchProblem& p) {
        return p.layer == "top1 1024->1024" && p.pass == "data_grad_drelu";
      });
  EXPECT_EQ(top1_fused.problem.epilogue, gemm::RunEpilogue::kDRelu);
  EXPECT_EQ(top1_fused.problem.shape.layout, gemm::GemmLayout::kNN);
  auto v2 = select_models(problems, "dlrm-v2");
  ASSERT_TRUE(v2.is_ok());
  for (const auto& p : *v2) {
    EXPECT_TRUE(p.problem.validate().is_ok()) << p.layer << " " << p.pass;
    if (p.pass == "weight_grad") {
      EXPECT_EQ(p.problem.shape.layout, gemm::GemmLayout::kNT);
      EXPECT_EQ(p.problem.shape.k, 65536);
    }
  }
  EXPECT_FALSE(select_models(problems, "dlrm-v3").is_ok());
}

}  // namespace
}  // namespace parity::bench
