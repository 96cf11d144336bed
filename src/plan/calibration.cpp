#include "parity/plan/calibration.hpp"

#include <nlohmann/json.hpp>

#include "hw/json_checks.hpp"
#include "plan/plan_json.hpp"
#include "parity/hw/catalogue.hpp"

namespace parity::plan {

using nlohmann::json;
namespace detail = hw::detail;

std::vector<PlannerCalibration::Field> PlannerCalibration::fields() {
  using C = PlannerCalibration;
  return {
      {"tbe_forward_efficiency", &C::tbe_forward_efficiency},
      {"tbe_backward_efficiency", &C::tbe_backward_efficiency},
      {"tbe_forward_bag_ns", &C::tbe_forward_bag_ns},
      {"tbe_forward_fixed_us", &C::tbe_forward_fixed_us},
      {"tbe_backward_bag_ns", &C::tbe_backward_bag_ns},
      {"tbe_backward_fixed_us", &C::tbe_backward_fixed_us},
      {"interaction_efficiency", &C::interaction_efficiency},
      {"interaction_fast_efficiency", &C::interaction_fast_efficiency},
      {"interaction_fast_efficiency_16bit", &C::interaction_fast_efficiency_16bit},
      {"bias_gradient_ns_per_sample", &C::bias_gradient_ns_per_sample},
      {"tf32_tn_gemm_time_factor", &C::tf32_tn_gemm_time_factor},
      {"tf32_nn_gemm_time_factor", &C::tf32_nn_gemm_time_factor},
      {"tf32_nt_gemm_time_factor", &C::tf32_nt_gemm_time_factor},
      {"elementwise_efficiency", &C::elementwise_efficiency},
      {"kernel_launch_us", &C::kernel_launch_us},
      {"scale_up_efficiency", &C::scale_up_efficiency},
      {"scale_out_efficiency", &C::scale_out_efficiency},
      {"collective_base_us", &C::collective_base_us},
      {"scale_up_step_us", &C::scale_up_step_us},
      {"scale_out_step_us", &C::scale_out_step_us},
      {"in_switch_reduction_speedup", &C::in_switch_reduction_speedup},
      {"allocator_reserve_fraction", &C::allocator_reserve_fraction},
      {"runtime_reserve_gb", &C::runtime_reserve_gb},
      {"comm_library_buffer_gb", &C::comm_library_buffer_gb},
      {"input_batches_in_flight", &C::input_batches_in_flight},
      {"allreduce_overlap_fraction", &C::allreduce_overlap_fraction},
      {"embedding_a2a_overlap_fraction", &C::embedding_a2a_overlap_fraction},
      {"input_dist_overlap_fraction", &C::input_dist_overlap_fraction},
      {"step_overhead_us", &C::step_overhead_us},
  };
}

namespace {

// Fractions live in [0, 1]; efficiencies and the reduction speedup must be > 0.
Status check_range(std::string_view key, double value, std::string_view where) {
  const bool is_fraction = key.find("fraction") != std::string_view::npos;
  const bool is_efficiency = key.find("efficiency") != std::string_view::npos;
  if (is_fraction && (value < 0.0 || value > 1.0)) {
    return invalid_argument(where, ": value ", value, " must be in [0, 1]");
  }
  if (is_efficiency && (value <= 0.0 || value > 1.0)) {
    return invalid_argument(where, ": value ", value, " must be in (0, 1]");
  }
  if (key == "in_switch_reduction_speedup" && value < 1.0) {
    return invalid_argument(where, ": value ", value, " must be >= 1 (1 = no in-switch reduction)");
  }
  if (value < 0.0) return invalid_argument(where, ": value ", value, " must be >= 0");
  return Status::ok();
}

}  // namespace

Result<PlannerCalibration> overlay_planner_calibration(const PlannerCalibration& base,
                                                       const json& document,
                                                       std::string_view origin) {
  PARITY_RETURN_IF_ERROR(detail::expect_object(document, origin, "a planner calibration object"));
  static constexpr std::string_view kTopKeys[] = {"schema", "device", "values"};
  PARITY_RETURN_IF_ERROR(detail::check_known_keys(document, kTopKeys, origin, ""));
  PARITY_ASSIGN_OR_RETURN(const std::string schema,
                          detail::read_string(document, "schema", origin, "",
                                              detail::Emptiness::kRequireNonEmpty));
  PARITY_CHECK_ARG(schema == kPlannerCalibrationSchema, origin, ": key 'schema': '", schema,
                   "' is not ", kPlannerCalibrationSchema);
  PARITY_CHECK_ARG(document.contains("values"), origin, ": missing required key 'values'");
  const json& values = document.at("values");
  PARITY_RETURN_IF_ERROR(detail::expect_object(values, detail::key_context(origin, "values"),
                                               "{\"<name>\": {\"value\", \"kind\", \"source\"}}"));
  std::vector<std::string_view> known;
  for (const auto& field : PlannerCalibration::fields()) known.push_back(field.key);
  PARITY_RETURN_IF_ERROR(detail::check_known_keys(values, known, origin, "values"));

  PlannerCalibration out = base;
  out.files.emplace_back(origin);
  static constexpr std::string_view kValueKeys[] = {"value", "kind", "source"};
  for (const auto& field : PlannerCalibration::fields()) {
    if (!values.contains(std::string(field.key))) continue;
    const std::string path = detail::join_key("values", field.key);
    const json& entry = values.at(std::string(field.key));
    PARITY_RETURN_IF_ERROR(detail::expect_object(entry, detail::key_context(origin, path),
                                                 "{\"value\": ..., \"kind\": ..., \"source\": ...}"));
    PARITY_RETURN_IF_ERROR(detail::check_known_keys(entry, kValueKeys, origin, path));
    CalibratedValue value;
    PARITY_ASSIGN_OR_RETURN(value.value, detail::read_number(entry, "value", origin, path));
    PARITY_RETURN_IF_ERROR(
        check_range(field.key, value.value, detail::key_context(origin, path + ".value")));
    PARITY_ASSIGN_OR_RETURN(const std::string kind,
                            detail::read_string(entry, "kind", origin, path,
                                                detail::Emptiness::kRequireNonEmpty));
    PARITY_CHECK_ARG(kind == "measured" || kind == "modelled", detail::key_context(origin, path),
                     ".kind: '", kind, "' must be measured or modelled");
    value.is_measured = kind == "measured";
    PARITY_ASSIGN_OR_RETURN(value.source, detail::read_string(entry, "source", origin, path,
                                                              detail::Emptiness::kRequireNonEmpty));
    out.*field.member = std::move(value);
  }
  return out;
}

json planner_calibration_to_json(const PlannerCalibration& calibration, std::string_view device) {
  json values = json::object();
  for (const auto& field : PlannerCalibration::fields()) {
    const CalibratedValue& value = calibration.*field.member;
    values[std::string(field.key)] = {{"value", value.value},
                                      {"kind", value.is_measured ? "measured" : "modelled"},
                                      {"source", value.source}};
  }
  return {{"schema", kPlannerCalibrationSchema}, {"device", device}, {"values", values}};
}

Result<PlannerCalibration> overlay_planner_calibration_text(const PlannerCalibration& base,
                                                            std::string_view text,
                                                            std::string_view origin) {
  PARITY_ASSIGN_OR_RETURN(const json document, detail::parse_json_text(text, origin));
  try {
    return overlay_planner_calibration(base, document, origin);
  } catch (const std::exception& error) {  // a type error the checks missed
    return invalid_argument(origin, ": ", error.what());
  }
}

std::string planner_calibration_to_json_text(const PlannerCalibration& calibration,
                                             std::string_view device) {
  return planner_calibration_to_json(calibration, device).dump(2) + "\n";
}

Result<PlannerCalibration> load_planner_calibration(
    const hw::HardwareSpec& gpu, const std::optional<std::filesystem::path>& data_dir) {
  const std::filesystem::path folder = hw::resolve_data_dir(data_dir) / "calibration";
  const std::filesystem::path vendor_file =
      folder / ("planner_" + std::string(hw::vendor_name(gpu.vendor)) + ".json");
  PARITY_ASSIGN_OR_RETURN(const json vendor_json, detail::read_json_file(vendor_file));
  PARITY_ASSIGN_OR_RETURN(
      PlannerCalibration calibration,
      overlay_planner_calibration(PlannerCalibration{}, vendor_json, vendor_file.string()));
  const std::filesystem::path device_file = folder / ("planner_" + gpu.name + ".json");
  std::error_code error;
  if (std::filesystem::exists(device_file, error)) {
    PARITY_ASSIGN_OR_RETURN(const json device_json, detail::read_json_file(device_file));
    PARITY_ASSIGN_OR_RETURN(calibration, overlay_planner_calibration(calibration, device_json,
                                                                     device_file.string()));
  }
  return calibration;
}

}  // namespace parity::plan
