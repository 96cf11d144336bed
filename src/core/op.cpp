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

}  // namespace parity
