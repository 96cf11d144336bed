// Plan files: JSON round trip, strict reading (unknown keys, bad shards), plan/model checks,
// calibration overlay, and the report/SVG writers' content.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "parity/plan/plan_io.hpp"
#include "plan/plan_json.hpp"
#include "unit/plan_test_support.hpp"

namespace parity::plan {
namespace {

using nlohmann::json;
using testing::fixed_batch;
using testing::make_context;

Plan planned(const std::string& gpu, int ranks) {
  auto owned = make_context(gpu, ranks, 0, testing::dlrm_v2_like_model());
  auto result = search(owned.context, fixed_batch(ranks * 2048));
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  return result.is_ok() ? result->best : Plan{};
}

TEST(PlanIo, JsonRoundTripIsExact) {
  const Plan plan = planned("mi350x", 8);
  const auto parsed = plan_from_json(plan_to_json(plan), "test");
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().to_string();
  EXPECT_EQ(parsed.value(), plan);
  const auto path = std::filesystem::temp_directory_path() / "parity_plan_io_test" / "plan.json";
  ASSERT_TRUE(write_plan_file(path, plan).is_ok());
  const auto read = read_plan_file(path);
  ASSERT_TRUE(read.is_ok()) << read.status().to_string();
  EXPECT_EQ(read.value(), plan);
  std::filesystem::remove_all(path.parent_path());
}

TEST(PlanIo, StrictReaderNamesTheKey) {
  const json good = plan_to_json(planned("h200", 2));
  json typo = good;
  typo["config"]["per_rank_bach"] = 1;
  auto result = plan_from_json(typo, "p.json");
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find("per_rank_bach"), std::string::npos) << result.status().message();

  json bad_rank = good;
  bad_rank["tables"][0]["shards"][0]["rank"] = 7;
  result = plan_from_json(bad_rank, "p.json");
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find("outside the plan's 2 GPUs"), std::string::npos)
      << result.status().message();

  json bad_batch = good;
  bad_batch["config"]["global_batch"] = 3;
  EXPECT_FALSE(plan_from_json(bad_batch, "p.json").is_ok());

  json bad_range = good;
  bad_range["tables"][0]["shards"][0]["rows"] = json::array({5, 5});
  result = plan_from_json(bad_range, "p.json");
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find("0 <= begin < end"), std::string::npos);

  json bad_type = good;
  bad_type["tables"][0]["sharding"] = "diagonal";
  EXPECT_FALSE(plan_from_json(bad_type, "p.json").is_ok());
  EXPECT_FALSE(plan_from_json(json::array(), "p.json").is_ok());
  EXPECT_EQ(read_plan_file("/nonexistent/plan.json").status().code(), StatusCode::kNotFound);
}

TEST(PlanIo, PlanMustTileTheModelsTables) {
  const PlannerModel model = testing::dlrm_v2_like_model();
  Plan plan = planned("h200", 2);
  EXPECT_TRUE(check_plan_matches_model(plan, model).is_ok());
  Plan gap = plan;
  gap.tables[0] = {"C1", ShardingType::kRowWise, {{0, 0, 100, 0, 128}, {1, 200, 40000000, 0, 128}}};
  const Status status = check_plan_matches_model(gap, model);
  ASSERT_FALSE(status.is_ok());
  EXPECT_NE(status.message().find("do not tile"), std::string::npos) << status.message();
  Plan renamed = plan;
  renamed.tables[1].table = "other";
  EXPECT_FALSE(check_plan_matches_model(renamed, model).is_ok());
}

TEST(PlanIo, PlanAppliesToTheTrainersSpec) {
  auto spec = model::preset("dlrm-v2");
  ASSERT_TRUE(spec.is_ok());
  auto model = planner_model_from_spec(spec.value());
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  EXPECT_EQ(model->tables.size(), 26u);
  EXPECT_DOUBLE_EQ(model->tables[20].ids_per_sample, 100.0);
  EXPECT_EQ(model->interaction_output_width(), spec->interaction_output_dim());
  EXPECT_EQ(model->dense_parameter_count(), spec->dense_parameter_count());
  auto owned = make_context("h200", 2, 0, model.value());
  auto result = search(owned.context, fixed_batch(2 * 2048));
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  Plan plan = result->best;
  plan.config.precision = Precision::kBf16Fp16Tables;
  plan.config.checkpointing = Checkpointing::kFull;
  model::ModelSpec applied = spec.value();
  ASSERT_TRUE(apply_plan_to_spec(plan, applied).is_ok());
  EXPECT_EQ(applied.precision, model::DensePrecision::kBf16);
  EXPECT_EQ(applied.embedding.weight_dtype, DType::kF16);
  EXPECT_EQ(applied.activation_checkpointing, model::ActivationCheckpointing::kOn);
  model::ModelSpec other = spec.value();
  other.embedding.tables[3].num_rows += 1;  // the plan no longer tiles table C4
  EXPECT_FALSE(apply_plan_to_spec(plan, other).is_ok());
}

TEST(PlanIo, CalibrationOverlayIsStrict) {
  const PlannerCalibration base;
  json overlay = {{"schema", kPlannerCalibrationSchema},
                  {"device", "x"},
                  {"values", {{"tbe_forward_efficiency", {{"value", 0.5}, {"kind", "measured"}, {"source", "s"}}}}}};
  auto result = overlay_planner_calibration(base, overlay, "x.json");
  ASSERT_TRUE(result.is_ok()) << result.status().to_string();
  EXPECT_DOUBLE_EQ(result->tbe_forward_efficiency.value, 0.5);
  EXPECT_TRUE(result->tbe_forward_efficiency.is_measured);
  EXPECT_DOUBLE_EQ(result->tbe_backward_efficiency.value, base.tbe_backward_efficiency.value);
  overlay["values"]["tbe_forward_efficiency"]["value"] = 1.5;
  EXPECT_FALSE(overlay_planner_calibration(base, overlay, "x.json").is_ok());
  overlay["values"]["tbe_forward_efficency"] = overlay["values"]["tbe_forward_efficiency"];
  result = overlay_planner_calibration(base, overlay, "x.json");
  ASSERT_FALSE(result.is_ok());
  EXPECT_NE(result.status().message().find("tbe_forward_efficency"), std::string::npos);
  // Every shipped calibration file parses, and H200's TBE figures are measured.
  auto h200 = load_planner_calibration(testing::catalogue_gpu("h200"), std::nullopt);
  ASSERT_TRUE(h200.is_ok()) << h200.status().to_string();
  EXPECT_TRUE(h200->tbe_forward_efficiency.is_measured);
  auto mi350x = load_planner_calibration(testing::catalogue_gpu("mi350x"), std::nullopt);
  ASSERT_TRUE(mi350x.is_ok()) << mi350x.status().to_string();
  EXPECT_FALSE(mi350x->tbe_forward_efficiency.is_measured);
  EXPECT_DOUBLE_EQ(mi350x->in_switch_reduction_speedup.value, 1.0);
}

TEST(PlanIo, ReportAndSvgShowThePlan) {
  auto owned = make_context("b200", 8, 0, testing::dlrm_v2_like_model());
  PlanOptions options;
  options.min_global_batch = 8 * 1024;
  options.max_global_batch = 8 * 8192;
  const auto result = search(owned.context, options);
  ASSERT_TRUE(result.is_ok());
  const std::string report = plan_report(result->best, owned.context.model);
  EXPECT_NE(report.find("MODELLED"), std::string::npos);
  EXPECT_NE(report.find("C21"), std::string::npos);  // every table is listed
  EXPECT_NE(report.find("per rank"), std::string::npos);
  const std::string svg = pareto_svg(result.value(), "dlrm-v2 on 8 x b200");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("HBM capacity"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(plan_differences(result->best, result->best), std::vector<std::string>{"no change"});
}

}  // namespace
}  // namespace parity::plan
