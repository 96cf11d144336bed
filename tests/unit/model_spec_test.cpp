// ModelSpec: presets, validation messages, JSON round trip, learning-rate schedule, memory estimate.
#include <gtest/gtest.h>

#include "parity/model/spec.hpp"

namespace parity::model {
namespace {

TEST(ModelSpec, PresetsValidateWithTheDocumentedSizes) {
  for (const auto& name : preset_names()) {
    auto spec = preset(name);
    ASSERT_TRUE(spec.is_ok()) << name << ": " << spec.status().to_string();
    EXPECT_TRUE(spec->validate().is_ok()) << name;
  }
  auto kaggle = preset("dlrm-kaggle");
  ASSERT_TRUE(kaggle.is_ok());
  EXPECT_EQ(kaggle->num_features(), 26);
  // 26 features + the bottom output: 27 * 26 / 2 = 351 dots, plus D = 128.
  EXPECT_EQ(kaggle->interaction_output_dim(), 128 + 351);
  for (const auto& table : kaggle->embedding.tables) EXPECT_LE(table.num_rows, 4'000'000);

  auto v2 = preset("dlrm-v2");
  ASSERT_TRUE(v2.is_ok());
  EXPECT_EQ(v2->embedding_row_count(), 204'184'588);  // recsys.md 3.2
  EXPECT_EQ(v2->interaction_output_dim(), 27 * 128);
  int hots = 0;
  for (const auto& feature : v2->embedding.features) hots += feature.ids_per_sample;
  EXPECT_EQ(hots, 214);
  // fp32 tables + row-wise Adagrad state: 204,184,588 x (128 + 1) x 4 bytes = 105.4 GB.
  const MemoryEstimate memory = estimate_memory(*v2, 1);
  EXPECT_EQ(memory.embedding_weight_bytes + memory.embedding_state_bytes,
            std::int64_t{204'184'588} * 129 * 4);
}

TEST(ModelSpec, UnknownPresetListsTheKnownOnes) {
  auto spec = preset("dlrm-huge");
  ASSERT_FALSE(spec.is_ok());
  EXPECT_EQ(spec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(spec.status().message().find("dlrm-huge"), std::string::npos);
  EXPECT_NE(spec.status().message().find("dlrm-kaggle"), std::string::npos);
}

TEST(ModelSpec, TableCapLimitsEveryTable) {
  auto spec = preset("dlrm-v2");
  ASSERT_TRUE(spec.is_ok());
  cap_table_rows(*spec, 100'000);
  for (const auto& table : spec->embedding.tables) EXPECT_LE(table.num_rows, 100'000);
  EXPECT_EQ(spec->embedding.tables[5].num_rows, 3);
}

TEST(ModelSpec, JsonRoundTripKeepsEveryField) {
  for (const auto& name : preset_names()) {
    auto spec = preset(name);
    ASSERT_TRUE(spec.is_ok());
    spec->lr_schedule = {10, 20, 30, LrDecayKind::kPoly, 2.0, 1e-6};
    const std::string text = spec_to_json(*spec);
    auto back = parse_spec_json(text);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(spec_to_json(*back), text) << name;
  }
}

TEST(ModelSpec, JsonErrorsNameTheKeyAndValue) {
  const std::string base = R"({"bottom_mlp": [8], "top_mlp": [4, 1], "interaction": {"kind": "dot"},
      "embedding": {"tables": [{"rows": 10, "dim": 8}]} %s})";
  const auto with = [&](const std::string& extra) {
    std::string text = base;
    text.replace(text.find("%s"), 2, extra);
    return parse_spec_json(text, "my.json");
  };
  ASSERT_TRUE(with("").is_ok()) << with("").status().to_string();
  struct Case {
    std::string extra;
    std::string expected;
  };
  const Case cases[] = {
      {R"(, "precision": "fp8")", "precision"},
      {R"(, "precison": "fp32")", "precision"},  // typo: suggests the known key
      {R"(, "dense_optimizer": {"kind": "lamb"})", "lamb"},
      {R"(, "dense_optimizer": {"lr": -1})", "dense_optimizer.lr=-1"},
      {R"(, "lr_schedule": {"decay": "cosine"})", "cosine"},
      {R"(, "activation_checkpointing": "yes")", "activation_checkpointing"},
  };
  for (const auto& test_case : cases) {
    auto spec = with(test_case.extra);
    ASSERT_FALSE(spec.is_ok()) << test_case.extra;
    EXPECT_NE(spec.status().message().find(test_case.expected), std::string::npos)
        << spec.status().message();
    EXPECT_NE(spec.status().message().find("my.json"), std::string::npos) << spec.status().message();
  }
  auto bad_dim = parse_spec_json(R"({"bottom_mlp": [8], "top_mlp": [4, 1], "interaction": {"kind": "dot"},
      "embedding": {"tables": [{"rows": 10, "dim": 6}]}})");
  ASSERT_FALSE(bad_dim.is_ok());
  EXPECT_NE(bad_dim.status().message().find("embedding.tables[0].dim=6"), std::string::npos);
  auto mismatch = parse_spec_json(R"({"bottom_mlp": [8], "top_mlp": [4, 1], "interaction": {"kind": "dot"},
      "embedding": {"tables": [{"rows": 10, "dim": 16}]}})");
  ASSERT_FALSE(mismatch.is_ok());
  EXPECT_NE(mismatch.status().message().find("dot interaction"), std::string::npos);
  auto last = parse_spec_json(R"({"bottom_mlp": [8], "top_mlp": [4, 2], "interaction": {"kind": "dot"},
      "embedding": {"tables": [{"rows": 10, "dim": 8}]}})");
  ASSERT_FALSE(last.is_ok());
  EXPECT_NE(last.status().message().find("top_mlp[1]=2"), std::string::npos);
  EXPECT_FALSE(parse_spec_json("{ not json").is_ok());
}

TEST(ModelSpec, SharedTablesByName) {
  auto spec = parse_spec_json(R"({"bottom_mlp": [8], "top_mlp": [1], "interaction": {"kind": "dcnv2", "layers": 2, "rank": 4},
      "embedding": {"tables": [{"name": "users", "rows": 10, "dim": 8}],
                    "features": [{"table": "users", "ids_per_sample": 3}, {"table": 0}]}})");
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  EXPECT_EQ(spec->num_features(), 2);
  EXPECT_EQ(spec->embedding.features[0].ids_per_sample, 3);
  EXPECT_EQ(spec->interaction_output_dim(), 24);
  auto layout = spec->tbe_layout();
  ASSERT_TRUE(layout.is_ok());
  EXPECT_EQ(layout->num_tables(), 1);
  EXPECT_EQ(layout->num_features(), 2);
  auto unknown = parse_spec_json(R"({"bottom_mlp": [8], "top_mlp": [1], "interaction": {"kind": "dot"},
      "embedding": {"tables": [{"rows": 10, "dim": 8}], "features": [{"table": "items"}]}})");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_NE(unknown.status().message().find("items"), std::string::npos);
}

TEST(ModelSpec, LearningRateScheduleFollowsMlperf) {
  LrSchedule schedule{4, 10, 5, LrDecayKind::kPoly, 2.0, 1e-7};
  EXPECT_DOUBLE_EQ(schedule.learning_rate(1.0, 0), 0.25);  // warm-up: (step + 1) / 4
  EXPECT_DOUBLE_EQ(schedule.learning_rate(1.0, 2), 0.75);
  EXPECT_DOUBLE_EQ(schedule.learning_rate(1.0, 3), 1.0);
  EXPECT_DOUBLE_EQ(schedule.learning_rate(1.0, 8), 1.0);  // between warm-up and decay
  EXPECT_DOUBLE_EQ(schedule.learning_rate(1.0, 11), 0.36);  // ((5 - 2) / 5)^2
  EXPECT_DOUBLE_EQ(schedule.learning_rate(1.0, 100), 1e-7);  // floor after decay
  schedule.decay = LrDecayKind::kLinear;
  EXPECT_DOUBLE_EQ(schedule.learning_rate(1.0, 11), 0.6);
  LrSchedule constant;
  EXPECT_DOUBLE_EQ(constant.learning_rate(0.5, 1000), 0.5);
}

TEST(ModelSpec, DoesNotFitSaysByHowMuch) {
  auto spec = preset("dlrm-v2");
  ASSERT_TRUE(spec.is_ok());
  const MemoryEstimate estimate = estimate_memory(*spec, 65536);
  EXPECT_TRUE(check_fits(estimate, estimate.total_bytes(), "test device").is_ok());
  Status status = check_fits(estimate, 80'000'000'000, "an 80 GB device");
  ASSERT_EQ(status.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(status.message().find("does not fit"), std::string::npos);
  EXPECT_NE(status.message().find("an 80 GB device has 80.00 GB"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("short by"), std::string::npos);
}

}  // namespace
}  // namespace parity::model
