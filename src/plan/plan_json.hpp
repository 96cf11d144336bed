// Plans and planner calibrations as nlohmann JSON values: private to the library (the public
// headers speak JSON text only).
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "parity/plan/calibration.hpp"
#include "parity/plan/plan_io.hpp"

namespace parity::plan {

nlohmann::json plan_to_json(const Plan& plan);
// Never throws: nlohmann type errors become kInvalidArgument naming `origin`.
Result<Plan> plan_from_json(const nlohmann::json& json, std::string_view origin);

Result<PlannerCalibration> overlay_planner_calibration(const PlannerCalibration& base,
                                                       const nlohmann::json& json,
                                                       std::string_view origin);
nlohmann::json planner_calibration_to_json(const PlannerCalibration& calibration,
                                           std::string_view device);

}  // namespace parity::plan
