// gemm::Gemm on the GPU (cuBLASLt) against the fp64 reference: every epilogue x layout x dtype,
// strided batches, the row-major linear layer chain the trainer runs, the ReLU mask round trip,
// and the GPU-only argument checks (pointer alignment). Skips without a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "common/test_support.hpp"
#include "parity/core/gpu.hpp"
#include "unit/gemm_run_test_util.hpp"

namespace parity::gemm {
namespace {

constexpr testing::DtypePair kDtypes[] = {{DType::kBF16, DType::kBF16},
                                          {DType::kBF16, DType::kF32},
                                          {DType::kF16, DType::kF16},
                                          {DType::kF32, DType::kF32}};

ExecutionContext gpu_context(GemmChoice choice = GemmChoice::kAuto) {
  ExecutionContext context;
  context.device = DeviceKind::kGpu;
  context.gemm_choice = choice;
  return context;
}

// The GPU's error model: TF32 rounds fp32 operands to 11 significant bits; the MMA's truncating
// alignment doubles the accumulation bound; tanh.approx.f32 has a relative error of 2^-10.987
// (PTX ISA), taken as 2^-10.
testing::GemmRunErrorModel gpu_model(const GemmRunProblem& p) {
  testing::GemmRunErrorModel model;
  model.operand_roundoff =
      p.shape.a_dtype == DType::kF32 && p.allow_tf32 ? std::ldexp(1.0, -11) : 0.0;
  model.activation_roundoff = std::ldexp(1.0, -10);
  model.accumulation_factor = 2.0;
  return model;
}

// What one GPU run returns to the host.
struct GpuResult {
  std::vector<std::uint8_t> d, aux;
  std::vector<float> bias_grad;
};

// Uploads the case, runs it through Gemm (created here), downloads D, aux and the bias gradient.
// kUnsupported from create() is returned as is (cuBLASLt lacks the combination).
Result<GpuResult> run_on_gpu(testing::GemmRunCase& c, std::string* configuration = nullptr,
                             GemmChoice choice = GemmChoice::kAuto, const GemmOptions& options = {}) {
  PARITY_ASSIGN_OR_RETURN(Gemm gemm, Gemm::create(c.problem, gpu_context(choice), options));
  if (configuration != nullptr) *configuration = gemm.configuration();
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer a, gpu::upload(c.a.bytes));
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer b, gpu::upload(c.b.bytes));
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer d, gpu::upload(c.c.bytes));
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer bias, gpu::upload(c.bias.bytes));
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer aux,
                          gpu::upload(c.aux.empty() ? std::vector<std::uint8_t>(16) : c.aux));
  const auto grad_length = static_cast<std::size_t>(c.problem.bias_grad_length());
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer bias_grad,
                          gpu::upload(std::vector<float>(grad_length + 4, -7.0f)));
  PARITY_ASSIGN_OR_RETURN(gpu::DeviceBuffer workspace,
                          gpu::DeviceBuffer::allocate(static_cast<std::size_t>(
                              std::max<std::int64_t>(gemm.workspace_bytes(), 16))));
  GemmArgs args;
  args.a = a.data();
  args.b = b.data();
  args.d = d.data();
  args.bias = bias.data();
  args.aux = aux.data();
  args.aux_ld = c.aux_ld;
  args.bias_grad = bias_grad.data();
  args.alpha = static_cast<float>(c.inputs.alpha);
  args.beta = static_cast<float>(c.inputs.beta);
  args.workspace = workspace.data();
  args.workspace_bytes = gemm.workspace_bytes();
  PARITY_RETURN_IF_ERROR(gemm.run(args, gpu_context()));
  PARITY_RETURN_IF_ERROR(gpu::synchronize());
  GpuResult result;
  PARITY_ASSIGN_OR_RETURN(result.d, gpu::download<std::uint8_t>(d, c.c.bytes.size()));
  PARITY_ASSIGN_OR_RETURN(result.aux, gpu::download<std::uint8_t>(aux, c.aux.size()));
  PARITY_ASSIGN_OR_RETURN(result.bias_grad, gpu::download<float>(bias_grad, grad_length));
  return result;
}

// Runs and compares; returns false (with the message in `unsupported`) when cuBLASLt cannot run it.
bool check_gpu_case(const GemmRunProblem& problem, std::uint64_t seed, double alpha, double beta,
                    std::string* unsupported = nullptr, GemmChoice choice = GemmChoice::kAuto,
                    std::string* configuration_out = nullptr, const GemmOptions& options = {}) {
  const std::string label = testing::seed_trace(seed) + " " + problem.shape.describe() +
                            " run_epilogue=" + std::string(run_epilogue_name(problem.epilogue));
  SCOPED_TRACE(label);
  auto c = testing::make_gemm_run_case(problem, seed, alpha, beta);
  std::string configuration;
  auto result = run_on_gpu(c, &configuration, choice, options);
  if (configuration_out != nullptr) *configuration_out = configuration;
  if (!result.is_ok() && result.status().code() == StatusCode::kUnsupported &&
      unsupported != nullptr) {
    *unsupported = label + ": " + result.status().message();
    return false;
  }
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  if (!result.is_ok()) return true;
  SCOPED_TRACE("configuration: " + configuration);
  testing::expect_matches_reference(c, result->d, result->aux, result->bias_grad,
                                    gpu_model(problem));
  return true;
}

TEST(GemmRunGpu, EveryEpilogueLayoutAndDtypeMatchesReference) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t base_seed = testing::test_seed(2201);
  std::uint64_t index = 0;
  std::vector<std::string> unsupported;
  int ran = 0;
  for (const RunEpilogue epilogue : testing::kAllRunEpilogues) {
    for (const GemmLayout layout : testing::kAllLayouts) {
      for (const testing::DtypePair dtypes : kDtypes) {
        // Sizes with 16-byte rows in every type (m, k multiples of 8), none a tile multiple.
        const GemmRunProblem p = testing::make_run_problem(200, 136, 264, layout, dtypes, epilogue);
        std::string reason;
        const bool operand_grad =
            epilogue == RunEpilogue::kBgradA || epilogue == RunEpilogue::kBgradB;
        if (check_gpu_case(p, base_seed + index, operand_grad ? 1.0 : 1.5,
                           index % 2 == 0 ? 0.0 : 0.5, &reason)) {
          ++ran;
        } else {
          unsupported.push_back(reason);
        }
        ++index;
      }
    }
  }
  // cuBLASLt does not offer every epilogue in every layout; what it lacks is listed, not failed.
  std::string listed;
  for (const auto& line : unsupported) listed += line + "\n";
  std::cout << ran << " combinations ran; " << unsupported.size() << " unsupported by cuBLASLt:\n"
            << listed;
  EXPECT_GT(ran, 0);
}

TEST(GemmRunGpu, StridedBatchAndPaddedLeadingDimensions) {
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = testing::test_seed(2202);
  for (const RunEpilogue epilogue :
       {RunEpilogue::kNone, RunEpilogue::kBias, RunEpilogue::kBiasGelu}) {
    for (const testing::DtypePair dtypes : {kDtypes[0], kDtypes[3]}) {
      GemmRunProblem p = testing::make_run_problem(64, 48, 96, GemmLayout::kTN, dtypes, epilogue);
      p.shape.batch = 3;
      p.shape.lda = 104;  // K = 96 rows plus padding, rows still 16-byte aligned
      p.shape.ldc = 72;
      p.stride_a = 104 * 64 + 64;
      p.stride_b = 96 * 48 + 32;
      p.stride_c = 72 * 48 + 16;
      check_gpu_case(p, seed, 1.0, 0.25);
    }
  }
}

TEST(GemmRunGpu, LinearLayerChainIsSupportedAndCorrect) {
  // The trainer's GEMMs per layer (src/nn/linear.cpp): forward with bias + ReLU + mask, the data
  // gradient with the fused dReLU, the weight gradient with the bias gradient (fp32 D), and the
  // plain weight gradient; all must be supported in bf16. (kDReluBgrad with a 16-bit D is not:
  // cuBLASLt's bias gradients are fp32 there, EveryEpilogueLayoutAndDtypeMatchesReference lists it.)
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = testing::test_seed(2203);
  const std::int64_t batch = 512, in = 256, out = 128;
  for (const GemmRunProblem& p : {testing::make_run_problem(out, batch, in, GemmLayout::kTN,
                                                            kDtypes[0], RunEpilogue::kBiasReluAux),
                                  testing::make_run_problem(in, batch, out, GemmLayout::kNN,
                                                            kDtypes[0], RunEpilogue::kDRelu),
                                  testing::make_run_problem(in, out, batch, GemmLayout::kNT,
                                                            kDtypes[1], RunEpilogue::kBgradB),
                                  testing::make_run_problem(in, out, batch, GemmLayout::kNT,
                                                            kDtypes[1], RunEpilogue::kNone)}) {
    std::string reason;
    EXPECT_TRUE(check_gpu_case(p, seed, 1.0, 0.0, &reason)) << reason;
  }
}

TEST(GemmRunGpu, MeasuredChoiceMatchesReferenceAndSaysSo) {
  // GemmChoice::kMeasured times candidates on scratch operands, then runs on the caller's: the
  // result must still match the reference (the descriptor's bias/aux pointers are the caller's),
  // and the configuration names the measurement. Aligned and misaligned rows, epilogues with
  // bias, aux and bias gradient; the model's list as configurations and as distinct tiles.
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = testing::test_seed(2205);
  GemmRunProblem problems[] = {
      testing::make_run_problem(256, 384, 192, GemmLayout::kTN, kDtypes[0], RunEpilogue::kBiasReluAux),
      testing::make_run_problem(192, 256, 384, GemmLayout::kNT, kDtypes[1], RunEpilogue::kBgradB),
      testing::make_run_problem(136, 200, 264, GemmLayout::kNN, kDtypes[3], RunEpilogue::kBias),
      testing::make_run_problem(479, 128, 512, GemmLayout::kNT, kDtypes[3], RunEpilogue::kNone)};
  problems[2].allow_tf32 = problems[3].allow_tf32 = true;  // fp32 without TF32 is never measured
  std::uint64_t index = 0;
  for (const bool distinct_tiles : {false, true}) {
    GemmOptions options;
    options.measured_distinct_tiles = distinct_tiles;
    SCOPED_TRACE(distinct_tiles ? "measured_distinct_tiles" : "measured configurations");
    for (const GemmRunProblem& p : problems) {
      std::string reason, configuration;
      EXPECT_TRUE(check_gpu_case(p, seed + index++, 1.0, 0.0, &reason, GemmChoice::kMeasured,
                                 &configuration, options))
          << reason;
      EXPECT_NE(configuration.find("measured"), std::string::npos) << configuration;
    }
  }
}

TEST(GemmRunGpu, ReluMaskRoundTrip) {
  // The forward's mask, read back by the dReLU of the next GEMM, zeroes exactly the elements
  // whose forward output is 0 (format-independent: whatever bit layout cuBLASLt uses).
  PARITY_REQUIRE_GPU();
  const std::uint64_t seed = testing::test_seed(2204);
  const GemmRunProblem forward = testing::make_run_problem(256, 128, 64, GemmLayout::kTN,
                                                           kDtypes[1], RunEpilogue::kBiasReluAux);
  auto c = testing::make_gemm_run_case(forward, seed, 1.0, 0.0);
  auto fwd = run_on_gpu(c);
  ASSERT_TRUE(fwd.is_ok()) << fwd.status().to_string();
  // alpha = 0, beta = 1 and C = ones: the backward's D is relu'(aux) itself.
  GemmRunProblem backward =
      testing::make_run_problem(256, 128, 8, GemmLayout::kNN, kDtypes[1], RunEpilogue::kDRelu);
  auto b = testing::make_gemm_run_case(backward, seed + 1, 0.0, 1.0);
  b.aux = fwd->aux;
  std::fill(b.c.values.begin(), b.c.values.end(), 1.0f);
  b.c.bytes.assign(b.c.values.size() * 4, 0);
  std::memcpy(b.c.bytes.data(), b.c.values.data(), b.c.bytes.size());
  auto bwd = run_on_gpu(b);
  ASSERT_TRUE(bwd.is_ok()) << bwd.status().to_string();
  int mismatches = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(256 * 128); ++i) {
    const float forward_out = testing::load_from(DType::kF32, fwd->d.data() + i * 4);
    const float gate = testing::load_from(DType::kF32, bwd->d.data() + i * 4);
    if (gate != (forward_out > 0.0f ? 1.0f : 0.0f) && mismatches++ < 5) {
      ADD_FAILURE() << "element " << i << ": forward " << forward_out << " gate " << gate;
    }
  }
}

TEST(GemmRunGpu, DeterministicContextGivesBitwiseEqualRuns) {
  // Small M x N with a long K invites split-K; a deterministic context refuses in-place
  // (atomic) reductions, so two runs agree bit for bit.
  PARITY_REQUIRE_GPU();
  ExecutionContext context = gpu_context();
  context.deterministic = true;
  const GemmRunProblem p =
      testing::make_run_problem(64, 64, 16384, GemmLayout::kTN, kDtypes[1], RunEpilogue::kNone);
  auto gemm = Gemm::create(p, context);
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().to_string();
  auto c = testing::make_gemm_run_case(p, testing::test_seed(2205), 1.0, 0.0);
  auto a = gpu::upload(c.a.bytes);
  auto b = gpu::upload(c.b.bytes);
  auto d = gpu::upload(c.c.bytes);
  auto workspace = gpu::DeviceBuffer::allocate(
      static_cast<std::size_t>(std::max<std::int64_t>(gemm->workspace_bytes(), 16)));
  ASSERT_TRUE(a.is_ok() && b.is_ok() && d.is_ok() && workspace.is_ok());
  GemmArgs args;
  args.a = a->data();
  args.b = b->data();
  args.d = d->data();
  args.workspace = workspace->data();
  args.workspace_bytes = gemm->workspace_bytes();
  std::vector<std::vector<std::uint8_t>> outputs;
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(gemm->run(args, context).is_ok());
    ASSERT_TRUE(gpu::synchronize().is_ok());
    auto out = gpu::download<std::uint8_t>(*d, c.c.bytes.size());
    ASSERT_TRUE(out.is_ok());
    outputs.push_back(std::move(*out));
  }
  EXPECT_EQ(outputs[0], outputs[1]) << gemm->configuration();
}

TEST(GemmRunGpu, RejectsMisalignedPointers) {
  PARITY_REQUIRE_GPU();
  const GemmRunProblem p =
      testing::make_run_problem(64, 64, 64, GemmLayout::kTN, kDtypes[0], RunEpilogue::kNone);
  auto gemm = Gemm::create(p, gpu_context());
  ASSERT_TRUE(gemm.is_ok()) << gemm.status().to_string();
  auto buffer = gpu::DeviceBuffer::allocate(64 * 64 * 2 + 64);
  ASSERT_TRUE(buffer.is_ok());
  auto workspace = gpu::DeviceBuffer::allocate(
      static_cast<std::size_t>(std::max<std::int64_t>(gemm->workspace_bytes(), 16)));
  ASSERT_TRUE(workspace.is_ok());
  GemmArgs args;
  args.a = buffer->as<std::uint8_t>() + 2;  // 2-byte aligned only
  args.b = buffer->data();
  args.d = buffer->data();
  args.workspace = workspace->data();
  args.workspace_bytes = gemm->workspace_bytes();
  const Status status = gemm->run(args, gpu_context());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("a="), std::string::npos) << status.message();
  EXPECT_NE(gemm->configuration().find("["), std::string::npos) << gemm->configuration();
}

// 16-bit GEMMs compute in fp32 (CUBLAS_COMPUTE_32F) like fp32 without TF32 does; only the latter
// is outside the model, so with gemm_choice=model a bf16 or fp16 problem must be chosen by the
// model (its choice carries the model's predicted time), never by the heuristic fallback. (bf16 inputs with an fp32 output
// are left out: when none of the model's ranked candidates passes cuBLASLt's check for that mixed
// class, the heuristic fallback is the designed behaviour.)
TEST(GemmRunGpu, SixteenBitProblemsFollowTheGemmChoice) {
  PARITY_REQUIRE_GPU();
  for (const auto& dtypes : {kDtypes[0], kDtypes[2]}) {
    SCOPED_TRACE(std::string(dtype_name(dtypes.in)) + " -> " + std::string(dtype_name(dtypes.out)));
    const GemmRunProblem aligned =
        testing::make_run_problem(1024, 512, 768, GemmLayout::kTN, dtypes, RunEpilogue::kNone);
    // kModel ranks 16-bit problems with the model (bf16 computes in fp32, which is not "fp32
    // without TF32"), and so does kAuto where rows are 16-byte aligned.
    for (const GemmChoice choice : {GemmChoice::kModel, GemmChoice::kAuto}) {
      auto gemm = Gemm::create(aligned, gpu_context(choice));
      ASSERT_TRUE(gemm.is_ok()) << gemm.status().to_string();
      EXPECT_EQ(gemm->configuration().find("outside the model"), std::string::npos)
          << gemm->configuration();
      EXPECT_NE(gemm->configuration().find("predicted"), std::string::npos) << gemm->configuration();
    }
    // kAuto gives rows below 16 bytes (k = 765: 1530-byte rows) to the heuristic, and says so.
    const GemmRunProblem misaligned =
        testing::make_run_problem(1024, 512, 765, GemmLayout::kTN, dtypes, RunEpilogue::kNone);
    auto automatic = Gemm::create(misaligned, gpu_context());
    ASSERT_TRUE(automatic.is_ok()) << automatic.status().to_string();
    EXPECT_NE(automatic->configuration().find("gemm_choice=auto"), std::string::npos)
        << automatic->configuration();
  }
}

}  // namespace
}  // namespace parity::gemm
