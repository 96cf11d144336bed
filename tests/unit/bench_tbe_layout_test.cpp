// Table-layout files for `bench tbe --layout`: a valid file becomes a spec (shared tables,
// per-table draws), every broken field is an error naming the table or feature, the field and the
// value, and mutated files never crash the reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "parity/bench/tbe_bench.hpp"
#include "unit/fuzz_support.hpp"

namespace parity::bench {
namespace {

using nlohmann::json;

json valid_layout() {
  return json::parse(R"({
    "schema_version": 1,
    "name": "two_towers",
    "batch_size": 64,
    "tables": [
      {"name": "user", "rows": 1000, "dim": 64, "weights_dtype": "fp16", "pooling": "sum",
       "bag_length": 20, "zipf_alpha": 1.05},
      {"name": "item", "rows": 500, "dim": 16, "weights_dtype": "fp16",
       "bag_length": {"uniform": [0, 10]}},
      {"name": "country", "rows": 200, "dim": 32, "weights_dtype": "fp16", "bag_length": "one-hot",
       "zipf_alpha": 0.8}
    ],
    "features": [
      {"name": "user_id", "table": "user"},
      {"name": "item_id", "table": "item"},
      {"name": "clicked_items", "table": "item", "bag_length": {"fixed": 30}, "zipf_alpha": 1.3},
      {"name": "country", "table": "country"}
    ]
  })");
}

TEST(TbeLayoutFile, ValidFileGivesSharedTablesAndPerFeatureDraws) {
  auto spec = tbe_bench_spec_from_layout_json(valid_layout().dump(), "layout.json");
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  EXPECT_EQ(spec->name, "two_towers");
  EXPECT_EQ(spec->batch, 64);
  ASSERT_EQ(spec->tables.size(), 3u);
  EXPECT_EQ(spec->table_names[2], "country");
  EXPECT_EQ(spec->table_of_feature, (std::vector<int>{0, 1, 1, 2}));
  EXPECT_EQ(spec->weight_dtype, DType::kF16);
  const auto draws = spec->feature_draws();
  ASSERT_EQ(draws.size(), 4u);
  EXPECT_EQ(draws[0].bag_lengths.describe(), "fixed 20");
  EXPECT_EQ(draws[1].bag_lengths.describe(), "uniform 0..10");
  EXPECT_EQ(draws[2].bag_lengths.describe(), "fixed 30");
  EXPECT_EQ(draws[2].zipf_alpha, 1.3);
  EXPECT_EQ(draws[3].bag_lengths.describe(), "one-hot");
  EXPECT_EQ(spec->max_zipf(), 1.3);
  auto problem = tbe_bench_problem(*spec);
  ASSERT_TRUE(problem.is_ok()) << problem.status().to_string();
  EXPECT_EQ(problem->layout.num_features(), 4);
  const auto batch = tbe_bench_batch(*spec, problem->layout, 3);
  ASSERT_EQ(batch.offsets.size(), 4u * 64u + 1u);
  EXPECT_EQ(batch.offsets[3 * 64] - batch.offsets[2 * 64], 30 * 64);  // clicked_items: fixed 30
  EXPECT_EQ(batch.offsets[4 * 64] - batch.offsets[3 * 64], 64);       // country: one-hot
}

TEST(TbeLayoutFile, FileThroughTheBenchFlags) {
  const auto path = std::filesystem::temp_directory_path() / "parity_tbe_layout_test.json";
  {
    std::ofstream out(path);
    out << valid_layout().dump(2);
  }
  TbeBenchOverrides o;
  o.layout_file = path.string();
  o.batch = "128";
  o.optimizer = "adam";
  auto spec = tbe_bench_spec("", o, 1);
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  EXPECT_EQ(spec->batch, 128);
  EXPECT_EQ(spec->optimizer, embedding::OptimizerKind::kAdam);
  o.dim = "32";
  auto conflict = tbe_bench_spec("", o, 1);
  ASSERT_FALSE(conflict.is_ok());
  EXPECT_NE(conflict.status().message().find("--dim='32' conflicts with --layout"),
            std::string::npos);
  o.dim.clear();
  EXPECT_FALSE(tbe_bench_spec("C2", o, 1).is_ok());  // --config and --layout
  o.layout_file = (std::filesystem::temp_directory_path() / "parity_no_such_layout.json").string();
  auto missing = tbe_bench_spec("", o, 1);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("parity_no_such_layout.json"), std::string::npos);
  std::filesystem::remove(path);
}

TEST(TbeLayoutFile, ErrorsNameTheTableTheFieldAndTheValue) {
  struct Case {
    const char* what;
    void (*edit)(json&);
    const char* needle;
  };
  const Case cases[] = {
      {"negative rows", [](json& j) { j["tables"][1]["rows"] = -5; }, "tables[1].rows"},
      {"rows as text", [](json& j) { j["tables"][0]["rows"] = "1000"; }, "tables[0].rows"},
      {"dim not a multiple of 4", [](json& j) { j["tables"][2]["dim"] = 6; }, "dim=6"},
      {"missing dim", [](json& j) { j["tables"][0].erase("dim"); }, "dim"},
      {"missing bag length", [](json& j) { j["tables"][0].erase("bag_length"); }, "table 'user'"},
      {"bad bag length",
       [](json& j) {
         j["tables"][1]["bag_length"] = {{"uniform", {5, 2}}};
       },
       "uniform=[5, 2]"},
      {"bag length text", [](json& j) { j["tables"][1]["bag_length"] = "20"; }, "table 'item'"},
      {"negative zipf", [](json& j) { j["tables"][0]["zipf_alpha"] = -1; }, "tables[0].zipf_alpha"},
      {"dtype", [](json& j) { j["tables"][2]["weights_dtype"] = "int8"; }, "weights_dtype='int8'"},
      {"mixed dtypes", [](json& j) { j["tables"][2]["weights_dtype"] = "fp32"; },
       "table 'country' has weights_dtype"},
      {"pooling", [](json& j) { j["tables"][0]["pooling"] = "max"; }, "pooling='max'"},
      {"duplicate name", [](json& j) { j["tables"][2]["name"] = "user"; }, "'user' is already"},
      {"typo", [](json& j) { j["tables"][0]["dimm"] = 4; }, "dimm"},
      {"unknown table", [](json& j) { j["features"][1]["table"] = "items"; },
       "no table named 'items'"},
      {"feature bag length", [](json& j) { j["features"][2]["bag_length"] = -2; }, "features[2]"},
      {"no tables", [](json& j) { j["tables"] = json::array(); }, "tables"},
      {"schema", [](json& j) { j["schema_version"] = 2; }, "schema_version"},
      {"batch", [](json& j) { j["batch_size"] = 0; }, "batch_size"},
  };
  for (const auto& c : cases) {
    json doc = valid_layout();
    c.edit(doc);
    auto spec = tbe_bench_spec_from_layout_json(doc.dump(), "layout.json");
    ASSERT_FALSE(spec.is_ok()) << c.what;
    EXPECT_NE(spec.status().message().find(c.needle), std::string::npos)
        << c.what << ": " << spec.status().message();
    EXPECT_NE(spec.status().message().find("layout.json"), std::string::npos) << c.what;
  }
  EXPECT_FALSE(tbe_bench_spec_from_layout_json("{\"tables\": [", "layout.json").is_ok());
  EXPECT_FALSE(tbe_bench_spec_from_layout_json("", "layout.json").is_ok());
}

// Mutated layouts: never a throw, every rejection has a message, every accepted one builds a
// problem (or is rejected by it with a message) and has bag lengths and alphas in range.
TEST(TbeLayoutFile, MutatedFilesNeverCrash) {
  const json valid = valid_layout();
  const std::string valid_text = valid.dump();
  testing::fuzz_from_valid(
      20261201, valid_text, [&](testing::Mutator& m) { return m.mutate_json(valid, valid_text); },
      [](const std::string& text) {
        return testing::verdict_of(
            tbe_bench_spec_from_layout_json(text, "fuzz.json"),
            [](const TbeBenchSpec& spec) -> std::string {
              if (spec.tables.empty()) return "no tables";
              for (const auto& draw : spec.feature_draws()) {
                if (!(draw.zipf_alpha >= 0)) return "a negative alpha";
                if (draw.bag_lengths.min_length < 0 ||
                    draw.bag_lengths.min_length > draw.bag_lengths.max_length) {
                  return "bad bag lengths";
                }
              }
              auto problem = tbe_bench_problem(spec);
              if (!problem.is_ok() && problem.status().message().empty()) {
                return "a problem error without a message";
              }
              return std::string();
            });
      });
}

// The example in docs/embedding.md is a valid layout file (the page and the reader agree).
TEST(TbeLayoutFile, TheDocumentedExampleReads) {
  std::ifstream in(std::filesystem::path(PARITY_SOURCE_DIR) / "docs" / "embedding.md");
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t section = page.find("## Table-layout files");
  ASSERT_NE(section, std::string::npos);
  const std::size_t begin = page.find("```json\n", section);
  ASSERT_NE(begin, std::string::npos);
  const std::size_t end = page.find("```", begin + 8);
  ASSERT_NE(end, std::string::npos);
  auto spec = tbe_bench_spec_from_layout_json(page.substr(begin + 8, end - begin - 8), "docs/embedding.md");
  ASSERT_TRUE(spec.is_ok()) << spec.status().to_string();
  EXPECT_EQ(spec->table_of_feature, (std::vector<int>{0, 1, 1}));
  EXPECT_TRUE(tbe_bench_problem(*spec).is_ok());
}

}  // namespace
}  // namespace parity::bench
