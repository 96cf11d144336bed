// Fuzz tests of the readers the trainer and the planner added: the model spec (JSON), a Criteo
// TSV line, a plan file and a planner calibration. Each gets kMutatedInputsPerReader mutants of a
// small valid input; none may throw, every rejection must carry a message, and whatever is
// accepted must keep the reader's invariants (a spec validates, a parsed Criteo line has a 0/1
// label, finite dense values and ids inside their tables, a plan re-serialises and re-reads).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "parity/data/criteo.hpp"
#include "parity/model/spec.hpp"
#include "parity/plan/calibration.hpp"
#include "parity/plan/plan_io.hpp"
#include "unit/fuzz_support.hpp"
#include "unit/plan_test_support.hpp"

namespace parity {
namespace {

using nlohmann::json;
using testing::FuzzVerdict;
using testing::Mutator;
using testing::fuzz_json;
using testing::verdict_of;

TEST(FuzzReaders, ModelSpecJson) {
  const auto tiny = model::preset("tiny");
  ASSERT_TRUE(tiny.is_ok()) << tiny.status().to_string();
  fuzz_json(0x5BEC1, json::parse(model::spec_to_json(*tiny)), [](const std::string& text) {
    return verdict_of(model::parse_spec_json(text, "spec.json"),
                      [](const model::ModelSpec& spec) -> std::string {
                        const Status status = spec.validate();
                        return status.is_ok() ? "" : "a spec that fails validate(): " +
                                                         status.message();
                      });
  });
}

data::DatasetSchema criteo_schema() {
  data::DatasetSchema schema;
  schema.num_dense = data::kCriteoDenseColumns;
  for (int t = 0; t < data::kCriteoCategoricalColumns; ++t) {
    schema.tables.push_back({1000 + t, 1});
  }
  return schema;
}

std::string criteo_line() {
  std::string line = "1";
  for (int j = 1; j <= data::kCriteoDenseColumns; ++j) line += "\t" + std::to_string(j * 7 - 20);
  for (int t = 0; t < data::kCriteoCategoricalColumns; ++t) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%x", 0x9e3779b1u * static_cast<unsigned>(t + 1));
    line += std::string("\t") + (t == 3 ? "" : hex);
  }
  return line;
}

// Criteo lines are tab-separated: byte edits plus the number mutations of the CSV mutator.
TEST(FuzzReaders, CriteoLine) {
  const data::DatasetSchema schema = criteo_schema();
  const auto parser = data::CriteoLineParser::create(schema);
  ASSERT_TRUE(parser.is_ok()) << parser.status().to_string();
  const std::string valid = criteo_line();
  testing::fuzz_from_valid(
      0xC217E0, valid,
      [&](Mutator& mutator) {
        return mutator.below(2) == 0 ? mutator.mutate_bytes(valid)
                                     : mutator.replace_number_text(valid);
      },
      [&](const std::string& text) {
        FuzzVerdict verdict;
        float label = -1;
        float dense[data::kCriteoDenseColumns] = {};
        std::int64_t ids[data::kCriteoCategoricalColumns] = {};
        data::CriteoLineParser::Error error;
        if (!parser->parse(text, &label, dense, ids, 1, &error)) {
          if (data::CriteoLineParser::describe(error).empty()) {
            verdict.problem = "rejected with an empty description";
          }
          return verdict;
        }
        verdict.is_accepted = true;
        if (label != 0.0f && label != 1.0f) verdict.problem = "label " + std::to_string(label);
        for (float value : dense) {
          if (!std::isfinite(value) || value < 0) verdict.problem = "dense " + std::to_string(value);
        }
        for (int t = 0; t < data::kCriteoCategoricalColumns; ++t) {
          if (ids[t] < 0 || ids[t] >= schema.tables[t].num_rows) {
            verdict.problem = "id " + std::to_string(ids[t]) + " outside table " + std::to_string(t);
          }
        }
        return verdict;
      });
}

TEST(FuzzReaders, PlanFile) {
  auto owned = plan::testing::make_context("h200", 2, 0, plan::testing::hand_model());
  const auto searched = plan::search(owned.context, plan::testing::fixed_batch(2 * 1024));
  ASSERT_TRUE(searched.is_ok()) << searched.status().to_string();
  fuzz_json(0x91A4, json::parse(plan::plan_to_json_text(searched->best)),
            [](const std::string& text) {
              return verdict_of(plan::parse_plan_text(text, "plan.json"),
                                [](const plan::Plan& plan) -> std::string {
                                  const auto again = plan::parse_plan_text(
                                      plan::plan_to_json_text(plan), "again");
                                  if (!again.is_ok()) return "does not re-read: " + again.status().message();
                                  return again.value() == plan ? "" : "re-reads as another plan";
                                });
            });
}

TEST(FuzzReaders, PlannerCalibration) {
  std::ifstream in(std::filesystem::path(PARITY_SOURCE_DIR) / "data/calibration/planner_nvidia.json");
  std::stringstream text;
  text << in.rdbuf();
  const plan::PlannerCalibration base;
  fuzz_json(0xCA11B, json::parse(text.str()), [&](const std::string& mutated) {
    return verdict_of(plan::overlay_planner_calibration_text(base, mutated, "planner.json"),
                      [](const plan::PlannerCalibration& calibration) -> std::string {
                        for (const auto& field : plan::PlannerCalibration::fields()) {
                          const double value = (calibration.*field.member).value;
                          if (!std::isfinite(value) || value < 0) {
                            return std::string(field.key) + " = " + std::to_string(value);
                          }
                        }
                        return "";
                      });
  });
}

}  // namespace
}  // namespace parity
