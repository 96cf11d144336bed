#include "parity/core/op.hpp"

namespace parity {

std::string_view device_kind_name(DeviceKind kind) {
  return kind == DeviceKind::kGpu ? "gpu" : "cpu";
}

Result<DeviceKind> parse_device_kind(std::string_view text) {
  if (text == "cpu") return DeviceKind::kCpu;
  if (text == "gpu" || text == "cuda") return DeviceKind::kGpu;
  return invalid_argument("device: unknown value '", text, "' (expected cpu, gpu or cuda)");
}

std::string_view gemm_choice_name(GemmChoice choice) {
  switch (choice) {
    case GemmChoice::kModel: return "model";
    case GemmChoice::kVendorHeuristic: return "heuristic";
    case GemmChoice::kMeasured: return "measured";
    case GemmChoice::kAuto: break;
  }
  return "auto";
}

Result<GemmChoice> parse_gemm_choice(std::string_view text) {
  if (text == "auto") return GemmChoice::kAuto;
  if (text == "model") return GemmChoice::kModel;
  if (text == "heuristic") return GemmChoice::kVendorHeuristic;
  if (text == "measured") return GemmChoice::kMeasured;
  return invalid_argument("gemm_choice: unknown value '", text,
                          "' (expected auto, model, heuristic or measured)");
}

}  // namespace parity
