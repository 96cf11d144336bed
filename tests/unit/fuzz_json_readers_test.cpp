// Fuzz tests of the JSON readers: the hardware catalogue entry, the hardware calibration, the GEMM
// calibration and the GEMM measurements. Each reader gets kMutatedInputsPerReader mutants of a
// small valid file (small so the loop stays within the CI budget); none may throw, every
// rejection must carry a message, and whatever is accepted must keep the reader's invariants.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "parity/gemm/calibration_file.hpp"
#include "parity/gemm/candidate_space.hpp"
#include "parity/gemm/measurements.hpp"
#include "parity/hw/calibration.hpp"
#include "parity/hw/catalogue.hpp"
#include "unit/fuzz_support.hpp"

namespace parity {
namespace {

using nlohmann::json;
using testing::FuzzVerdict;
using testing::Mutator;
using testing::fuzz_json;
using testing::verdict_of;

json shipped_json(const std::string& relative) {
  std::ifstream in(std::filesystem::path(PARITY_SOURCE_DIR) / relative);
  return json::parse(in);
}

bool is_finite_in(double value, double low, double high) {
  return std::isfinite(value) && value >= low && value <= high;
}

// What an accepted catalogue entry feeds: the GEMM model. Its predictions for a few candidates of
// one shape must be finite, positive and no faster than the entry's own dense peak.
std::string predictions_problem(const hw::HardwareSpec& spec) {
  const auto device = gemm::device_params_from_spec(spec);
  if (!device.is_ok()) return device.status().message().empty() ? "an empty model message" : "";
  const gemm::GemmModel model(*device, gemm::default_scalars(*device));
  gemm::GemmProblem problem;
  problem.m = problem.n = problem.k = 4096;
  const auto space = gemm::modelled_space(gemm::problem_class(problem), *device);
  for (std::size_t i = 0; i < space.size(); i += space.size() / 8 + 1) {
    const double us = model.predict_us(problem, space[i]);
    if (!std::isfinite(us) && model.prepare(gemm::problem_class(problem), space[i]).is_feasible) {
      return "a non-finite prediction for a feasible candidate";
    }
    if (std::isfinite(us) && (us <= 0 || problem.flop_count() / (us * 1e6) >
                                             spec.dense_bf16_tflops.value * (1 + 1e-9))) {
      return "a prediction of " + std::to_string(us) + " us, above the peak or not positive";
    }
  }
  return "";
}

// h200.json with one-letter provenance sources: the same structure, a third of the bytes.
json small_catalogue_entry() {
  json spec = shipped_json("data/hardware/h200.json");
  for (auto& [key, value] : spec.items()) {
    if (value.is_object() && value.contains("provenance")) {
      value["provenance"]["source"] = "s";
      value["provenance"].erase("note");
    }
  }
  for (auto& instruction : spec["matrix_instructions"]) {
    instruction["provenance"]["source"] = "s";
    instruction["provenance"].erase("note");
  }
  return spec;
}

TEST(FuzzReaders, HardwareCatalogueEntry) {
  fuzz_json(0xC47A1, small_catalogue_entry(), [](const std::string& text) {
    return verdict_of(hw::parse_hardware_spec_text(text, "h200.json"),
                      [](const hw::HardwareSpec& spec) -> std::string {
                        for (const hw::QuantityField& field : hw::hardware_quantity_fields()) {
                          const double value = (spec.*field.member).value;
                          if (!is_finite_in(value, 1e-3, 1e6)) {
                            return std::string(field.key) + " = " + std::to_string(value);
                          }
                        }
                        if (spec.matrix_instructions.empty()) return "no matrix instructions";
                        return predictions_problem(spec);
                      });
  });
}

TEST(FuzzReaders, HardwareCalibration) {
  fuzz_json(0xCA11B, shipped_json("data/calibration/h200.json"), [](const std::string& text) {
    return verdict_of(
        hw::parse_calibration_text(text, "h200.json"), [](const hw::Calibration& c) -> std::string {
          // 0 (not measured) or within the reader's range.
          const auto measured = [](double v, double low, double high) {
            return v == 0.0 || is_finite_in(v, low, high);
          };
          if (!measured(c.copy_bandwidth_tbps, 1e-3, 100) ||
              !measured(c.bf16_gemm_tflops, 1e-3, 1e5) || c.sm_count < 0 || c.l2_bytes < 0 ||
              !measured(c.sm_clock_before_mhz, 1, 1e4) || !measured(c.sm_clock_after_mhz, 1, 1e4)) {
            return "a measurement out of range";
          }
          if (c.device_name.empty() || c.provenance.date.size() < 10) {
            return "empty device or short date";
          }
          return "";
        });
  });
}

// Accepted scalars drive the H200 model: its predictions must stay finite, positive and below
// the catalogue's dense peak whatever in-bounds values the file holds.
std::string scalar_predictions_problem(const gemm::ModelScalars& scalars) {
  static const hw::HardwareSpec h200 = *hw::find_hardware("h200");
  static const gemm::DeviceParams device = *gemm::device_params_from_spec(h200);
  const gemm::GemmModel model(device, scalars);
  gemm::GemmProblem problem;
  problem.m = problem.n = problem.k = 8192;
  static const auto space = gemm::hopper_modelled_space(gemm::problem_class(problem));
  for (std::size_t i = 0; i < space.size(); i += 37) {
    const double us = model.predict_us(problem, space[i]);
    if (!std::isfinite(us) || us <= 0 ||
        problem.flop_count() / (us * 1e6) > h200.dense_bf16_tflops.value * (1 + 1e-9)) {
      return "a prediction of " + std::to_string(us) + " us for " + space[i].short_name() +
             " (not positive, not finite or above the peak)";
    }
  }
  return "";
}

json small_gemm_calibration() {
  json calibration = shipped_json("data/calibration/h200_gemm.json");
  calibration["provenance"] = {{"source", "fuzz seed"}};
  return calibration;
}

TEST(FuzzReaders, GemmCalibration) {
  fuzz_json(0x6E33C, small_gemm_calibration(), [](const std::string& text) {
    return verdict_of(
        gemm::parse_gemm_calibration(text, "h200_gemm.json"),
        [](const gemm::GemmCalibration& c) -> std::string {
          const auto values = gemm::scalars_to_array(c.scalars);
          for (int i = 0; i < gemm::kNumModelScalars; ++i) {
            const auto bounds = gemm::scalar_bounds(i);
            if (!is_finite_in(values[static_cast<std::size_t>(i)], bounds[0], bounds[1])) {
              return std::string(gemm::scalar_name(i)) + " out of its bounds";
            }
          }
          for (const double e : c.scalars.variant_efficiency) {
            if (!is_finite_in(e, 0.5, 1.5)) return "variant efficiency out of range";
          }
          if (c.is_default || c.device.empty()) return "labelled default or no device";
          return scalar_predictions_problem(c.scalars);
        });
  });
}

// Two shapes, timed and screened candidates: every branch of the reader, in ~1.5 KB.
json small_measurements() {
  const auto config = [](int tile_m, int rank) {
    gemm::Candidate c;
    c.tile_m = tile_m;
    c.heuristic_rank = rank;
    return c.describe();
  };
  json shape = {{"name", "s0"}, {"m", 512},        {"n", 256},       {"k", 1024},
                {"batch", 1},   {"dtype", "bf16"}, {"layout", "TN"}, {"heuristic_us", 120.5}};
  shape["candidates"] = {
      {{"config", config(128, 0)},
       {"median_ms", 0.25},
       {"spread_ms", 0.01},
       {"screen_ms", 0.24},
       {"heuristic_rank", 0}},
      {{"config", config(256, -1)}, {"median_ms", 0.3}, {"spread_ms", 0.02}, {"screen_ms", 0.31}}};
  shape["screened"] = {{{"config", config(64, -1)}, {"screen_ms", 0.5}, {"heuristic_rank", -1}},
                       {{"config", config(128, 0)}, {"screen_ms", 0.24}}};
  json second = shape;
  second["name"] = "s1";
  second["m"] = 64;
  second["batch"] = 4;
  second["layout"] = "NN";
  return {{"schema", gemm::kMeasurementsSchema},
          {"device", "h200"},
          {"provenance", {{"commit", "abc"}}},
          {"shapes", {shape, second}}};
}

TEST(FuzzReaders, GemmMeasurements) {
  fuzz_json(0x3EA5, small_measurements(), [](const std::string& text) {
    return verdict_of(gemm::parse_measurements_json(text, "measurements.json"),
                      [](const gemm::MeasurementSet& set) -> std::string {
                        for (const auto& shape : set.shapes) {
                          if (!shape.problem.validate().is_ok()) return "an invalid problem";
                          if (!is_finite_in(shape.heuristic_us, 0, 1e10)) return "heuristic_us";
                          for (const auto& c : shape.candidates) {
                            if (!is_finite_in(c.median_ms, 1e-6, 1e7) ||
                                !is_finite_in(c.spread_ms, 0, 1e7) || c.heuristic_rank < -1) {
                              return "a candidate with a bad time or rank";
                            }
                          }
                        }
                        return "";
                      });
  });
}

}  // namespace
}  // namespace parity
