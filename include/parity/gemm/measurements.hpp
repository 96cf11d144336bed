// Measured GEMM timings: the file `parity gemm measure` writes on the GPU and `gemm calibrate` /
// `gemm eval` read anywhere. One entry per shape, one row per timed candidate. Candidates travel
// as Candidate::describe() strings, so every feature the models read survives the round trip.
//
// {
//   "schema": "parity.gemm.measurements/1",
//   "device": "h200",                       // catalogue name of the GPU measured
//   "provenance": { ... },                  // free-form: versions, clocks, date, method
//   "shapes": [ {
//     "name": "llama70b_qkv", "m": 16384, "n": 8192, "k": 1280, "batch": 1,
//     "dtype": "bf16", "layout": "TN",
//     "heuristic_us": 250.0,                // host time of the vendor heuristic call (optional)
//     "candidates": [ { "config": "tile=... hrank=0 ...", "median_ms": 0.461,
//                       "heuristic_rank": 0, "spread_ms": 0.004, "screen_ms": 0.44 } ],
//                                                        // rank -1: not a heuristic pick
//     "screened": [ { "config": "...", "screen_ms": 0.45, "heuristic_rank": -1 } ]  // optional:
//        every screened candidate; those absent from "candidates" are read as screened-only
//   } ]
// }
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parity/core/status.hpp"
#include "parity/gemm/candidate.hpp"
#include "parity/gemm/problem.hpp"

namespace parity::gemm {

inline constexpr const char* kMeasurementsSchema = "parity.gemm.measurements/1";

struct MeasuredCandidate {
  Candidate candidate;      // candidate.heuristic_rank mirrors heuristic_rank below
  double median_ms = 0.0;
  double spread_ms = 0.0;   // e.g. interquartile range of the repetitions; 0 when unknown
  int heuristic_rank = -1;  // 0 = the vendor heuristic's top-1; -1 = not among its picks
  // Only screened (a few flushed repetitions), never timed in full: median_ms is the screened
  // median scaled by the shape's median full/screened ratio over its fully timed candidates.
  bool is_screened_only = false;
};

struct MeasuredShape {
  std::string name;
  GemmProblem problem;
  double heuristic_us = 0.0;  // 0 when not recorded
  std::vector<MeasuredCandidate> candidates;
};

struct MeasurementSet {
  std::string device;
  std::string provenance_json = "{}";  // kept verbatim (a JSON object as text)
  std::vector<MeasuredShape> shapes;
};

// Strict: wrong types, missing keys, non-finite or out-of-range values and shapes that fail
// GemmProblem::validate are kInvalidArgument naming `origin`, the key path
// ("shapes[3].candidates[1].median_ms") and the value. Unknown keys are ignored (gemm measure
// records more than the models read). Never throws.
Result<MeasurementSet> parse_measurements_json(std::string_view text,
                                               std::string_view origin = "measurements");
Result<MeasurementSet> read_measurements_file(const std::string& path);
std::string measurements_to_json(const MeasurementSet& set);  // pretty-printed, schema included
Status write_measurements_file(const MeasurementSet& set, const std::string& path);

}  // namespace parity::gemm
