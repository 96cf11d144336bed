// Which measured shapes a GEMM calibration may see: the extra calibration CSV stays disjoint from
// the dev suite, evaluation rows are refused by name and by size, and the cross-validation inside
// the calibration shapes holds every shape out once.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_support.hpp"
#include "parity/gemm/calibration.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::gemm {
namespace {

ShapeSuite suite_at(const std::string& relative) {
  const auto suite = read_shape_suite(std::string(PARITY_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(suite.is_ok()) << relative << ": " << suite.status().to_string();
  return suite.is_ok() ? suite.value() : ShapeSuite{};
}

MeasuredShape measured(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k) {
  MeasuredShape s;
  s.name = name;
  s.problem.m = m;
  s.problem.n = n;
  s.problem.k = k;
  return s;
}

using Size = std::tuple<std::int64_t, std::int64_t, std::int64_t>;

// Every extra CSV: no dev-suite name or size, no size repeated within or across the extra files,
// and every row a calibration shape (the extra files together are the calibration list).
TEST(GemmCalibrationShapes, ExtraCsvsShareNoShapeOrNameWithTheDevSuiteOrEachOther) {
  const ShapeSuite dev = suite_at("bench/shapes/gemm_shapes_dev.csv");
  ASSERT_GE(dev.names.size(), 30u);
  std::set<Size> dev_sizes;
  std::set<std::string> dev_names(dev.names.begin(), dev.names.end());
  for (const auto& p : dev.problems) dev_sizes.emplace(p.m, p.n, p.k);
  ShapeSuite all_extra;
  for (const char* file : {"bench/shapes/gemm_shapes_calibration_extra.csv",
                           "bench/shapes/gemm_shapes_calibration_extra2.csv"}) {
    const ShapeSuite extra = suite_at(file);
    EXPECT_GE(extra.names.size(), 20u) << file;
    all_extra.names.insert(all_extra.names.end(), extra.names.begin(), extra.names.end());
    all_extra.problems.insert(all_extra.problems.end(), extra.problems.begin(),
                              extra.problems.end());
  }
  std::set<Size> extra_sizes;
  std::set<std::string> extra_names;
  for (std::size_t i = 0; i < all_extra.names.size(); ++i) {
    const auto& p = all_extra.problems[i];
    const std::string& name = all_extra.names[i];
    EXPECT_EQ(p.batch, 1) << name;
    EXPECT_EQ(dev_sizes.count({p.m, p.n, p.k}), 0u)
        << name << " (" << p.m << "x" << p.n << "x" << p.k << ") is a dev-suite size";
    EXPECT_EQ(dev_names.count(name), 0u) << name << " is a dev-suite name";
    EXPECT_TRUE(extra_sizes.emplace(p.m, p.n, p.k).second) << name << " repeats a size";
    EXPECT_TRUE(extra_names.insert(name).second) << name << " repeats a name";
    // Every extra shape is a calibration shape, never an evaluation one.
    EXPECT_EQ(split_of(measured(name, p.m, p.n, p.k), dev, &all_extra), ShapeSplit::kCalibration)
        << name;
  }
}

// The second extra file (what `gemm measure --shapes` reads on the device) parses to the rows it
// targets: 24-30 bf16 TN shapes with 16-byte rows, so the TMA kernels the model ranks run.
TEST(GemmCalibrationShapes, SecondExtraCsvParsesToAlignedTallSkinnyAndSmallKShapes) {
  const ShapeSuite extra = suite_at("bench/shapes/gemm_shapes_calibration_extra2.csv");
  ASSERT_GE(extra.names.size(), 24u);
  ASSERT_LE(extra.names.size(), 30u);
  int tall_skinny = 0, small_k = 0, off_128 = 0;
  for (std::size_t i = 0; i < extra.names.size(); ++i) {
    const auto& p = extra.problems[i];
    EXPECT_TRUE(p.validate().is_ok()) << extra.names[i] << ": " << p.validate().to_string();
    EXPECT_EQ(p.alignment_class_bytes(), 16) << extra.names[i];
    if (std::max(p.m, p.n) >= 32768 && std::min(p.m, p.n) <= 1024) ++tall_skinny;
    if (p.k <= 128) ++small_k;
    if (p.m % 128 != 0 && p.n % 128 != 0) ++off_128;
  }
  EXPECT_GE(tall_skinny, 12);
  EXPECT_GE(small_k, 6);
  EXPECT_GE(off_128, 5);
}

// A test suite (scored once, at the end of one model change) shares no size and no name with any
// suite that steered or scored a model before it, and keeps its design: ~75 valid shapes, a 25-40%
// misaligned share (rows not 16-byte aligned: the non-TMA kernels).
void expect_disjoint_test_suite(int number) {
  const std::string suite_file = "bench/shapes/gemm_shapes_test" + std::to_string(number) + ".csv";
  // Every suite before it: the dev suite, both calibration extras, test, then test2 .. test<number - 1>.
  std::vector<std::string> earlier_files = {"bench/shapes/gemm_shapes_dev.csv",
                                            "bench/shapes/gemm_shapes_calibration_extra.csv",
                                            "bench/shapes/gemm_shapes_calibration_extra2.csv",
                                            "bench/shapes/gemm_shapes_test.csv"};
  for (int earlier = 2; earlier < number; ++earlier) {
    earlier_files.push_back("bench/shapes/gemm_shapes_test" + std::to_string(earlier) + ".csv");
  }
  const ShapeSuite suite = suite_at(suite_file);
  ASSERT_GE(suite.names.size(), 70u);
  ASSERT_LE(suite.names.size(), 90u);
  std::set<Size> earlier_sizes;
  std::set<std::string> earlier_names;
  for (const std::string& file : earlier_files) {
    const ShapeSuite earlier = suite_at(file);
    EXPECT_GE(earlier.names.size(), 20u) << file;
    earlier_names.insert(earlier.names.begin(), earlier.names.end());
    for (const auto& p : earlier.problems) earlier_sizes.emplace(p.m, p.n, p.k);
  }
  std::set<Size> own_sizes;
  int misaligned = 0;
  for (std::size_t i = 0; i < suite.names.size(); ++i) {
    const auto& p = suite.problems[i];
    const std::string& name = suite.names[i];
    EXPECT_TRUE(p.validate().is_ok()) << name << ": " << p.validate().to_string();
    EXPECT_EQ(earlier_sizes.count({p.m, p.n, p.k}), 0u)
        << name << " (" << p.m << "x" << p.n << "x" << p.k << ") is in an earlier suite";
    EXPECT_EQ(earlier_names.count(name), 0u) << name << " is an earlier suite's name";
    EXPECT_TRUE(own_sizes.emplace(p.m, p.n, p.k).second) << name << " repeats a size";
    if (p.alignment_class_bytes() < 16) ++misaligned;
  }
  const double misaligned_share =
      static_cast<double>(misaligned) / static_cast<double>(suite.names.size());
  EXPECT_GE(misaligned_share, 0.25) << suite_file;
  EXPECT_LE(misaligned_share, 0.40) << suite_file;
}

// Each test suite (scored once, at the end of one model change: the third for the change after run
// 30, the fourth after run 47, the fifth after run 55, the sixth after run 85, the seventh the H200
// score of the model then, the eighth the legacy latency as a time, the ninth the H100 calibration,
// the tenth to fourteenth the changes after it) is disjoint from every suite before it.
TEST(GemmCalibrationShapes, EveryTestSuiteIsDisjointFromEveryEarlierSuite) {
  for (int number = 3; number <= 14; ++number) {
    SCOPED_TRACE("gemm_shapes_test" + std::to_string(number) + ".csv");
    expect_disjoint_test_suite(number);
  }
}

TEST(GemmCalibrationShapes, EvaluationRowsAreRefusedByNameAndBySize) {
  ShapeSuite suite;
  // Row 0 calibrates, rows 1 and 2 evaluate; row 1 repeats row 0's size under another name.
  suite.names = {"cal_a", "eval_same_size", "eval_b"};
  suite.problems = {measured("", 4096, 1024, 512).problem, measured("", 4096, 1024, 512).problem,
                    measured("", 2048, 2048, 2048).problem};
  ShapeSuite extra;
  extra.names = {"extra_x"};
  extra.problems = {measured("", 8192, 256, 64).problem};
  MeasurementSet first, second;
  first.shapes = {measured("cal_a", 4096, 1024, 512),       // refused: an evaluation row's size
                  measured("eval_b", 2048, 2048, 2048),     // refused: an evaluation row
                  measured("renamed", 2048, 2048, 2048),    // refused: that row's size, other name
                  measured("extra_x", 8192, 256, 64)};      // kept: extra calibration shape
  second.shapes = {measured("extra_x", 8192, 256, 64)};      // kept again (another run)
  const auto admitted =
      select_calibration_shapes({{"first.json", &first}, {"second.json", &second}}, suite, &extra);
  ASSERT_EQ(admitted.shapes.size(), 2u);
  EXPECT_EQ(admitted.shapes[0].name, "extra_x");
  EXPECT_EQ(admitted.origins[1], "second.json: extra calibration shape");
  ASSERT_EQ(admitted.ignored.size(), 3u);
  EXPECT_NE(admitted.ignored[0].find("first.json: cal_a (4096x1024x512) ignored: evaluation row 1"),
            std::string::npos)
      << admitted.ignored[0];
  EXPECT_NE(admitted.ignored[2].find("renamed"), std::string::npos) << admitted.ignored[2];
  // Without the extra list, a shape in neither file falls to the hash split (not always kept).
  const auto without = select_calibration_shapes({{"first.json", &first}}, suite);
  EXPECT_EQ(without.shapes.size() + without.ignored.size(), first.shapes.size());
  // A plain calibration row is kept.
  MeasurementSet third;
  ShapeSuite clean = suite;
  clean.problems[0] = measured("", 1024, 1024, 1024).problem;
  third.shapes = {measured("cal_a", 1024, 1024, 1024)};
  const auto kept = select_calibration_shapes({{"third.json", &third}}, clean);
  ASSERT_EQ(kept.shapes.size(), 1u);
  EXPECT_EQ(kept.origins[0], "third.json: suite row 0");
}

TEST(GemmCalibrationShapes, CrossValidationHoldsEveryShapeOutOnce) {
  auto spec = hw::find_hardware("h200");
  ASSERT_TRUE(spec.is_ok());
  const DeviceParams device = device_params_from_spec(spec.value()).value();
  // Timings generated by a known model: the held-out picks of a refit are near the oracle.
  ModelScalars truth = default_scalars(device);
  truth.launch_us = 4.0;
  const GemmModel model(device, truth);
  const auto space = hopper_modelled_space(ProblemClass{});
  std::vector<MeasuredShape> shapes;
  const std::int64_t sizes[][3] = {{8192, 8192, 1024}, {1024, 1024, 16384}, {65536, 512, 256},
                                   {4096, 2048, 4096}, {512, 8192, 2048}, {16384, 256, 64}};
  for (const auto& size : sizes) {
    MeasuredShape s = measured("s", size[0], size[1], size[2]);
    for (std::size_t i = 0; i < space.size(); i += 5) {
      MeasuredCandidate c;
      c.candidate = space[i];
      c.median_ms = model.predict_us(s.problem, space[i]) * 1e-3;
      s.candidates.push_back(c);
    }
    shapes.push_back(s);
  }
  FitOptions options;
  options.max_evaluations = 300;
  const auto cv = cross_validate(device, default_scalars(device), shapes, 3, options);
  ASSERT_TRUE(cv.is_ok()) << cv.status().to_string();
  EXPECT_EQ(cv->shapes, 6);
  EXPECT_EQ(cv->fold_geomean.size(), 3u);
  EXPECT_GT(cv->geomean, 0.9);
  EXPECT_LE(cv->geomean, 1.0);
  EXPECT_LE(cv->worst, cv->geomean);
  const auto bad = cross_validate(device, default_scalars(device), shapes, 1, options);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--cv-folds=1"), std::string::npos)
      << bad.status().to_string();
  const auto too_many = cross_validate(device, default_scalars(device), shapes, 7, options);
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace parity::gemm
