#include <gtest/gtest.h>

#include "parity/gemm/candidate.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::gemm {
namespace {

GemmProblem square(std::int64_t size) {
  GemmProblem p;
  p.m = p.n = p.k = size;
  return p;
}

TEST(GemmProblem, ValidPackedProblem) {
  const GemmProblem p = square(4096);
  EXPECT_TRUE(p.validate().is_ok());
  EXPECT_EQ(p.lda_or_packed(), 4096);
  EXPECT_EQ(p.alignment_class_bytes(), 16);
  EXPECT_DOUBLE_EQ(p.flop_count(), 2.0 * 4096.0 * 4096.0 * 4096.0);
}

TEST(GemmProblem, RejectsNonPositiveSizes) {
  for (const char* field : {"m", "n", "k", "batch"}) {
    for (const std::int64_t bad : {std::int64_t{0}, std::int64_t{-3}}) {
      GemmProblem p = square(64);
      if (field[0] == 'm') p.m = bad;
      if (field[0] == 'n') p.n = bad;
      if (field[0] == 'k') p.k = bad;
      if (field[0] == 'b') p.batch = bad;
      const Status s = p.validate();
      EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << field;
      EXPECT_NE(s.message().find(std::string(field) + "=" + std::to_string(bad)), std::string::npos)
          << s.message();
    }
  }
}

TEST(GemmProblem, RejectsUnsupportedAndMixedDtypes) {
  GemmProblem p = square(64);
  p.a_dtype = DType::kI32;
  Status s = p.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("a_dtype=int32"), std::string::npos) << s.message();
  p = square(64);
  p.b_dtype = DType::kF16;
  s = p.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("b_dtype=fp16"), std::string::npos) << s.message();
  EXPECT_FALSE(parse_gemm_dtype("int8").is_ok());
  EXPECT_NE(parse_gemm_dtype("int8").status().message().find("dtype"), std::string::npos);
  EXPECT_EQ(parse_gemm_dtype("tf32").value(), DType::kF32);
}

TEST(GemmProblem, RejectsTooSmallLeadingDimensions) {
  GemmProblem p = square(128);
  p.layout = GemmLayout::kTN;  // A stored K x M: lda >= K
  p.k = 256;
  p.lda = 200;
  Status s = p.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("lda=200"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("k=256"), std::string::npos) << s.message();
  p = square(128);
  p.layout = GemmLayout::kNT;  // B stored N x K: ldb >= N
  p.ldb = 100;
  s = p.validate();
  EXPECT_NE(s.message().find("ldb=100"), std::string::npos) << s.message();
  p = square(128);
  p.ldc = 64;
  EXPECT_NE(p.validate().message().find("ldc=64"), std::string::npos);
  p = square(128);
  p.lda = -1;
  EXPECT_NE(p.validate().message().find("lda=-1"), std::string::npos);
}

TEST(GemmProblem, RejectsMisalignedLeadingDimensions) {
  GemmProblem p = square(64);
  p.k = 1001;  // TN packed lda = 1001 bf16 = 2002 bytes: not a multiple of 16
  p.alignment_bytes = 16;
  const Status s = p.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("lda=1001"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("misaligned"), std::string::npos) << s.message();
  p.alignment_bytes = 2;  // what the rows do guarantee
  EXPECT_TRUE(p.validate().is_ok());
  EXPECT_EQ(p.alignment_class_bytes(), 2);
  p.alignment_bytes = 3;
  EXPECT_NE(p.validate().message().find("alignment_bytes=3"), std::string::npos);
}

TEST(GemmProblem, LayoutAndEpilogueNamesRoundTrip) {
  for (const auto layout : {GemmLayout::kTN, GemmLayout::kNN, GemmLayout::kNT, GemmLayout::kTT}) {
    EXPECT_EQ(parse_layout(layout_name(layout)).value(), layout);
  }
  EXPECT_NE(parse_layout("XY").status().message().find("layout"), std::string::npos);
  for (const auto e : {Epilogue::kNone, Epilogue::kBias, Epilogue::kRelu}) {
    EXPECT_EQ(parse_epilogue(epilogue_name(e)).value(), e);
  }
}

TEST(GemmProblem, ProblemClassIgnoresSizes) {
  const GemmProblem a = square(4096), b = square(1024);
  EXPECT_EQ(problem_class(a), problem_class(b));
  EXPECT_EQ(problem_class_hash(problem_class(a)), problem_class_hash(problem_class(b)));
  GemmProblem c = a;
  c.layout = GemmLayout::kNN;
  EXPECT_NE(problem_class_hash(problem_class(a)), problem_class_hash(problem_class(c)));
}

TEST(GemmCandidate, DescribeParseRoundTrip) {
  Candidate c;
  c.tile_m = 256;
  c.tile_n = 128;
  c.tile_k = 64;
  c.cluster_m = 1;
  c.cluster_n = 2;
  c.split_k = 4;
  c.reduction = ReductionScheme::kComputeType;
  c.decomposition = Decomposition::kStreamK;
  c.stream_k_grid = 132;
  c.kernel_family = 66;
  c.variant = 7;
  c.occupancy = 2;
  c.group_size = 8;
  c.raster = RasterOrder::kAlongN;
  c.xcd_mapping = XcdMapping::kContiguous;
  c.workspace_bytes = 8388624;
  c.heuristic_rank = 3;
  c.has_payload = true;
  c.payload = {1, 2, 0xdeadbeefULL, 4, 5, 6, 7, 0xffffffffffffffffULL};
  const auto parsed = parse_candidate(c.describe());
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed.value(), c) << c.describe() << "\n" << parsed->describe();
  EXPECT_EQ(parse_candidate(Candidate{}.describe()).value(), Candidate{});
}

TEST(GemmCandidate, ParseRejectsBadInput) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {{"tile=128x128", "tile"},         {"tile=0x128x64", "tile"},
               {"splitk=two", "splitk"},         {"splitk=2 red=none", "reduction"},
               {"bogus=1", "unknown key"},       {"tile", "key=value"},
               {"payload=1,2", "payload"},       {"red=fast", "red"},
               {"cluster=2x0", "cluster"}};
  for (const auto& c : cases) {
    const auto r = parse_candidate(c.text);
    ASSERT_FALSE(r.is_ok()) << c.text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos)
        << c.text << ": " << r.status().message();
  }
}

}  // namespace
}  // namespace parity::gemm
