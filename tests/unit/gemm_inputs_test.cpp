// The GEMM input readers, case by case (the fuzz tests cover the rest): the GEMM calibration JSON,
// the shape-suite CSV, the Origami rankings CSV and the measurements JSON refuse wrong types,
// near-numbers, missing keys and out-of-range values with a message naming the file, the key or
// line and the value; GemmProblem::validate refuses sizes whose element counts overflow, so no
// accepted shape can make the model predict above the catalogue's peak.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <memory>
#include <nlohmann/json.hpp>
#include <source_location>
#include <sstream>
#include <string>

#include "parity/gemm/calibration_file.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/measurements.hpp"
#include "parity/gemm/origami_agreement.hpp"
#include "parity/gemm/selector.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

using nlohmann::json;

std::string shipped_text(const std::string& relative) {
  std::ifstream in(std::filesystem::path(PARITY_SOURCE_DIR) / relative);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

template <typename T>
void expect_invalid(const Result<T>& result, std::initializer_list<std::string> fragments,
                    std::source_location where = std::source_location::current()) {
  SCOPED_TRACE(::testing::Message() << "expect_invalid called from line " << where.line());
  ASSERT_FALSE(result.is_ok()) << "accepted";
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument) << result.status().to_string();
  for (const std::string& fragment : fragments) {
    EXPECT_NE(result.status().message().find(fragment), std::string::npos)
        << "'" << fragment << "' not in: " << result.status().message();
  }
}

// ---- GEMM calibration JSON ----

json shipped_gemm_calibration() {
  return json::parse(shipped_text("data/calibration/h200_gemm.json"));
}

TEST(GemmCalibrationFile, ShippedFileParsesAsFitted) {
  const auto parsed =
      parse_gemm_calibration(shipped_text("data/calibration/h200_gemm.json"), "h200_gemm.json");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed->device, "h200");
  EXPECT_FALSE(parsed->is_default);
  const json file = shipped_gemm_calibration();
  EXPECT_EQ(parsed->scalars.tail_boost, file["scalars"]["tail_boost"].get<double>());
  EXPECT_EQ(parsed->scalars.variant_efficiency[3], file["variant_efficiency"][3].get<double>());
}

TEST(GemmCalibrationFile, WrongTypesAndValuesNameTheKey) {
  const auto parse = [](const json& document) {
    return parse_gemm_calibration(document.dump(), "cal.json");
  };
  json bad = shipped_gemm_calibration();
  bad["schema"] = 5;  // aborted with nlohmann::type_error before
  expect_invalid(parse(bad), {"cal.json", "key 'schema'", "expected a string", "number 5"});
  bad = shipped_gemm_calibration();
  bad["device"] = 5;
  expect_invalid(parse(bad), {"key 'device'", "expected a string"});
  bad = shipped_gemm_calibration();
  bad["schema"] = "parity.gemm.calibration/9";
  expect_invalid(parse(bad), {"key 'schema'", "parity.gemm.calibration/9", "not supported"});
  bad = shipped_gemm_calibration();
  bad["scalars"] = json::object();  // was read as "fitted" with every scalar at its default
  expect_invalid(parse(bad), {"missing required key 'scalars.", "'"});
  bad = shipped_gemm_calibration();
  bad["scalars"]["tail_boost"] = "0.3";
  expect_invalid(parse(bad), {"key 'scalars.tail_boost'", "expected a number", "string \"0.3\""});
  bad = shipped_gemm_calibration();
  bad["scalars"]["launch_us"] = -1.0;
  expect_invalid(parse(bad), {"key 'scalars.launch_us'", "-1", "out of range"});
  bad = shipped_gemm_calibration();
  bad["scalars"]["tail_bost"] = 0.3;
  expect_invalid(parse(bad),
                 {"unknown key 'scalars.tail_bost'", "did you mean 'scalars.tail_boost'"});
  bad = shipped_gemm_calibration();
  bad["variant_efficiency"] = {1, 1, 1};
  expect_invalid(parse(bad), {"key 'variant_efficiency'", "array of 8"});
  bad = shipped_gemm_calibration();
  bad["variant_efficiency"][2] = 0;
  expect_invalid(parse(bad), {"key 'variant_efficiency[2]'", "value 0", "out of range"});
  bad = shipped_gemm_calibration();
  bad["provenance"] = "run 17";
  expect_invalid(parse(bad), {"key 'provenance'", "a JSON object"});
  expect_invalid(parse_gemm_calibration("{\"schema\": 1e400}", "cal.json"),
                 {"cal.json", "malformed JSON"});
  expect_invalid(parse_gemm_calibration("", "cal.json"), {"cal.json", "malformed JSON"});
  expect_invalid(parse_gemm_calibration("[]", "cal.json"),
                 {"cal.json", "expected a GEMM calibration"});
}

// ---- Shape suite CSV ----

TEST(ShapeSuiteCsv, ShippedSuitesParse) {
  for (const char* file :
       {"bench/shapes/gemm_shapes_dev.csv", "bench/shapes/gemm_shapes_calibration_extra.csv",
        "bench/shapes/gemm_shapes_calibration_extra2.csv"}) {
    const auto suite = parse_shape_suite(shipped_text(file), file);
    ASSERT_TRUE(suite.is_ok()) << suite.status().to_string();
    EXPECT_GT(suite->problems.size(), 20u) << file;
  }
}

TEST(ShapeSuiteCsv, NearNumbersEmptyFilesAndBadRowsAreErrors) {
  const std::string header = "# comment\nname,m,n,k,family\n";
  const auto parse = [](const std::string& text) { return parse_shape_suite(text, "s.csv"); };
  const auto ok = parse(header + "a, 64 ,128,256,llm\r\n\nb,1,1,1,x\n");
  ASSERT_TRUE(ok.is_ok()) << ok.status().to_string();
  EXPECT_EQ(ok->problems.at(0).m, 64);
  EXPECT_EQ(ok->names.at(1), "b");
  // std::stoll read these as 64, 1 and 64.
  expect_invalid(parse(header + "a,64x,128,256,llm\n"),
                 {"s.csv: line 3: m", "'64x'", "not an integer"});
  expect_invalid(parse(header + "a,64,1e3,256,llm\n"), {"line 3: n", "'1e3'"});
  expect_invalid(parse(header + "a,64,128,64.5,llm\n"), {"line 3: k", "'64.5'"});
  expect_invalid(parse(header + "a,0,128,256,llm\n"), {"line 3: m", "0", "out of range"});
  expect_invalid(parse(header + "a,-64,128,256,llm\n"), {"line 3: m", "-64"});
  expect_invalid(parse(header + "a,99999999999999999999,1,1,llm\n"), {"line 3: m", "out of range"});
  expect_invalid(parse(header + "a,4398046511104,4398046511104,4398046511104,llm\n"),
                 {"line 3", "2^48"});
  expect_invalid(parse(header + "a,64,128,256\n"), {"line 3 has 4 fields", "header has 5"});
  expect_invalid(parse(header + ",64,128,256,llm\n"), {"line 3: name is empty"});
  expect_invalid(parse("name,n,m,k\na,1,1,1\n"), {"s.csv: line 1: header 'name,n,m,k'"});
  // An empty or header-only suite used to drop the calibration/evaluation split guard.
  expect_invalid(parse(""), {"s.csv", "empty shape suite"});
  expect_invalid(parse("# only a comment\n\n"), {"empty shape suite"});
  expect_invalid(parse(header), {"s.csv", "header but no shapes"});
}

// ---- Origami rankings CSV ----

constexpr const char* kOrigamiHeader =
    "problem,rank,latency,mt_m,mt_n,mt_k,mi_m,mi_n,mi_k,occ,wgm\n";

TEST(OrigamiRankingsCsv, ShippedListsParseIntoTwoHundredProblemsOfTen) {
  for (const char* file :
       {"data/reference/origami/gfx942_bf16.csv", "data/reference/origami/gfx950_bf16.csv"}) {
    const auto rankings = parse_origami_rankings(shipped_text(file), file);
    ASSERT_TRUE(rankings.is_ok()) << rankings.status().to_string();
    ASSERT_EQ(rankings->size(), 200u) << file;
    for (const auto& r : *rankings) {
      EXPECT_EQ(r.top.size(), 10u);
      EXPECT_EQ(r.latency.size(), 10u);
    }
  }
  const auto rankings =
      parse_origami_rankings(std::string(kOrigamiHeader) +
                                 "36912x62832x4448x1,0,5.12164e+07,448,512,32,32,32,8,2,1\r\n"
                                 "36912x62832x4448x1,1,6e7,256,256,64,16,16,16,1,8\n"
                                 "64x32x16,0,10,16,16,16,16,16,16,1,1\n",
                             "o.csv");
  ASSERT_TRUE(rankings.is_ok()) << rankings.status().to_string();
  ASSERT_EQ(rankings->size(), 2u);
  const OrigamiRanking& first = rankings->front();
  EXPECT_EQ(first.problem.m, 36912);
  EXPECT_EQ(first.problem.n, 62832);
  EXPECT_EQ(first.problem.k, 4448);
  EXPECT_EQ(first.problem.batch, 1);
  EXPECT_EQ(first.top[1].tile_k, 64);
  EXPECT_EQ(first.top[1].mi_k, 16);
  EXPECT_EQ(first.top[1].group_size, 8);
  EXPECT_DOUBLE_EQ(first.latency[0], 5.12164e7);
  EXPECT_EQ(rankings->back().problem.batch, 1);  // MxNxK without a batch
}

TEST(OrigamiRankingsCsv, NonNumericAndOutOfOrderRowsAreErrors) {
  const auto parse = [](const std::string& rows) {
    return parse_origami_rankings(std::string(kOrigamiHeader) + rows, "o.csv");
  };
  const std::string good_tail = ",32,32,8,2,1\n";
  expect_invalid(parse("64x64x64x1,0,10,128x,128,64" + good_tail),
                 {"o.csv: line 2: mt_m", "'128x'"});
  expect_invalid(parse("64x64x64x1,0,1e3x,128,128,64" + good_tail), {"line 2: latency", "'1e3x'"});
  expect_invalid(parse("64x64x64x1,0,nan,128,128,64" + good_tail), {"line 2: latency"});
  expect_invalid(parse("64x64x64x1,0,-5,128,128,64" + good_tail),
                 {"line 2: latency -5 must be > 0"});
  expect_invalid(parse("64x64x64x1,0.5,10,128,128,64" + good_tail), {"line 2: rank", "'0.5'"});
  expect_invalid(parse("64x64x64x1,1,10,128,128,64" + good_tail), {"line 2: rank 1", "expected 0"});
  expect_invalid(parse("64x64.5x64x1,0,10,128,128,64" + good_tail),
                 {"line 2: problem n", "'64.5'"});
  expect_invalid(parse("64x64,0,10,128,128,64" + good_tail),
                 {"line 2: problem '64x64' is not MxNxK"});
  expect_invalid(parse("64x64x64x1x2,0,10,128,128,64" + good_tail), {"more than 4 sizes"});
  expect_invalid(parse("64x64x8796093022208x1,0,10,128,128,64" + good_tail), {"line 2", "2^48"});
  expect_invalid(parse("64x64x64x1,0,10,128,128,0" + good_tail), {"line 2: mt_k", "0"});
  expect_invalid(parse("64x64x64x1,0,10,128,128,64,32,32,8,2\n"), {"line 2 has 10 fields"});
  expect_invalid(parse("64x64x64x1,0,10,128,128,64" + good_tail + "8x8x8,0,10,16,16,16" +
                       good_tail + "64x64x64x1,0,10,128,128,64" + good_tail),
                 {"line 4: problem '64x64x64x1' appears again"});
  expect_invalid(parse_origami_rankings("", "o.csv"), {"o.csv: no rankings"});
  expect_invalid(parse(""), {"o.csv: no rankings"});
  expect_invalid(parse_origami_rankings("problem,rank\n", "o.csv"), {"o.csv: line 1: header"});
}

// ---- Measurements JSON ----

std::string one_shape(const std::string& fields) {
  Candidate c;
  return R"({"schema": "parity.gemm.measurements/1", "shapes": [{"m": 64, "n": 64, "k": 64, )" +
         fields + R"(, "candidates": [{"config": ")" + c.describe() + R"(", "median_ms": 0.5}]}]})";
}

TEST(MeasurementsJson, WronglyTypedOptionalFieldsAreErrorsNotAborts) {
  const auto parse = [](const std::string& text) {
    return parse_measurements_json(text, "m.json");
  };
  ASSERT_TRUE(parse(one_shape(R"("batch": 2)")).is_ok());
  // Each of these aborted with nlohmann::type_error before.
  expect_invalid(parse(one_shape(R"("name": 5)")),
                 {"m.json: key 'shapes[0].name'", "expected a string"});
  expect_invalid(parse(one_shape(R"("batch": "2")")),
                 {"key 'shapes[0].batch'", "expected a number"});
  expect_invalid(parse(one_shape(R"("dtype": 16)")), {"key 'shapes[0].dtype'"});
  expect_invalid(parse(one_shape(R"("layout": null)")), {"key 'shapes[0].layout'"});
  expect_invalid(parse(one_shape(R"("heuristic_us": [1])")), {"key 'shapes[0].heuristic_us'"});
  expect_invalid(parse(one_shape(R"("screened": {})")),
                 {"key 'shapes[0].screened'", "expected an array"});
  expect_invalid(parse(one_shape(R"("batch": 2.5)")), {"key 'shapes[0].batch'", "whole number"});
  expect_invalid(parse(one_shape(R"("batch": 4611686018427387904)")), {"shapes[0]"});
  expect_invalid(parse(one_shape(R"("heuristic_us": -1)")),
                 {"key 'shapes[0].heuristic_us'", "must be >= 0"});
  expect_invalid(parse(one_shape(R"("dtype": "fp8")")), {"key 'shapes[0].dtype'", "fp8"});
  expect_invalid(parse(R"({"schema": 1, "shapes": []})"), {"key 'schema'", "expected a string"});
  expect_invalid(parse(R"({"schema": "parity.gemm.measurements/1", "device": 5, "shapes": []})"),
                 {"key 'device'"});
  expect_invalid(parse(R"({"schema": "parity.gemm.measurements/1", "shapes": {}})"),
                 {"key 'shapes'"});
  expect_invalid(parse(R"({"schema": "parity.gemm.measurements/1", "shapes": [{"m": 1e400}]})"),
                 {"m.json", "malformed JSON"});
  Candidate c;
  const std::string row_prefix =
      R"({"schema": "parity.gemm.measurements/1", "shapes": [{"m": 8, "n": 8, "k": 8, "candidates": [{"config": ")" +
      c.describe() + R"(", )";
  expect_invalid(parse(row_prefix + R"("median_ms": "0.5"}]}]})"),
                 {"key 'shapes[0].candidates[0].median_ms'", "expected a number"});
  expect_invalid(parse(row_prefix + R"("median_ms": 0}]}]})"),
                 {"candidates[0].median_ms'", "must be > 0"});
  expect_invalid(parse(row_prefix + R"("median_ms": 1, "spread_ms": "x"}]}]})"),
                 {"candidates[0].spread_ms'"});
  expect_invalid(parse(row_prefix + R"("median_ms": 1, "heuristic_rank": -2}]}]})"),
                 {"candidates[0].heuristic_rank'", "-2"});
  expect_invalid(parse(row_prefix + R"("median_ms": 1, "screen_ms": "x"}], "screened": []}]})"),
                 {"candidates[0].screen_ms'"});
}

// Strict must not mean "refuses real data": every recorded measurement file parses. (Read through
// gzip -dc here; the library's own gzip reader can replace it once there is one.)
TEST(MeasurementsJson, EveryRecordedRunParses) {
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           std::filesystem::path(PARITY_SOURCE_DIR) / "bench/results")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("gemm_measurements", 0) != 0 || entry.path().extension() != ".gz") continue;
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(
        popen(("gzip -dc '" + entry.path().string() + "'").c_str(), "r"), pclose);
    ASSERT_NE(pipe, nullptr);
    std::string text;
    std::array<char, 1 << 16> buffer{};
    for (std::size_t got; (got = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0;) {
      text.append(buffer.data(), got);
    }
    const auto set = parse_measurements_json(text, entry.path().string());
    ASSERT_TRUE(set.is_ok()) << set.status().to_string();
    EXPECT_FALSE(set->shapes.empty()) << entry.path();
    ++files;
  }
  EXPECT_GE(files, 1) << "no recorded measurement files found under bench/results";
}

// ---- Problem size bounds ----

TEST(GemmProblemBounds, OverflowingSizesAreRefusedWithTheProduct) {
  GemmProblem huge;
  huge.m = huge.n = huge.k = std::int64_t{1} << 42;
  const Status cube = huge.validate();
  EXPECT_EQ(cube.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(
      cube.message().find("gemm: A holds lda x m x batch = 4398046511104 x 4398046511104 x 1"),
      std::string::npos)
      << cube.message();
  EXPECT_NE(cube.message().find("overflows 64 bits"), std::string::npos) << cube.message();
  GemmProblem batched;
  batched.m = batched.n = batched.k = 1;
  batched.batch = std::int64_t{1} << 62;
  EXPECT_NE(batched.validate().message().find("above the limit of 2^48"), std::string::npos)
      << batched.validate().message();
  GemmProblem wide_ld;
  wide_ld.m = wide_ld.n = wide_ld.k = 1024;
  wide_ld.ldc = std::int64_t{1} << 40;  // C: ldc x n = 2^50
  EXPECT_NE(wide_ld.validate().message().find("C holds ldc x n"), std::string::npos);
  GemmProblem at_limit;
  at_limit.m = at_limit.n = at_limit.k = std::int64_t{1} << 24;  // every operand exactly 2^48
  EXPECT_TRUE(at_limit.validate().is_ok()) << at_limit.validate().to_string();
  at_limit.batch = 2;
  EXPECT_FALSE(at_limit.validate().is_ok());
}

// Every accepted size, up to the limit, predicts at most the catalogue's dense peak on every GPU.
TEST(GemmProblemBounds, NoAcceptedSizePredictsAboveThePeak) {
  const auto catalogue = hw::load_catalogue(hw::catalogue_dir(std::nullopt));
  ASSERT_TRUE(catalogue.is_ok()) << catalogue.status().to_string();
  for (const hw::HardwareSpec& spec : *catalogue) {
    const auto device = device_params_from_spec(spec);
    ASSERT_TRUE(device.is_ok()) << device.status().to_string();
    Selector selector(GemmModel(*device, default_scalars(*device)));
    const auto space = modelled_space(ProblemClass{}, *device);
    const std::int64_t big = std::int64_t{1} << 24;
    for (const auto& [m, n, k, batch] : {std::array<std::int64_t, 4>{big, big, big, 1},
                                         std::array<std::int64_t, 4>{1, big, big, 1},
                                         std::array<std::int64_t, 4>{1 << 20, 1 << 20, 256, 256},
                                         std::array<std::int64_t, 4>{8192, 8192, 8192, 1}}) {
      GemmProblem p;
      p.m = m, p.n = n, p.k = k, p.batch = batch;
      ASSERT_TRUE(p.validate().is_ok()) << p.describe();
      const auto selection = selector.select(p, space, 1);
      ASSERT_TRUE(selection.is_ok())
          << spec.name << " " << p.describe() << ": " << selection.status().to_string();
      EXPECT_GT(selection->predicted_us, 0.0);
      EXPECT_LE(selection->predicted_tflops, spec.dense_bf16_tflops.value)
          << spec.name << " " << p.describe();
    }
  }
}

}  // namespace
}  // namespace parity::gemm
