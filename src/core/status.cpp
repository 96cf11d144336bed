#include "parity/core/status.hpp"

namespace parity {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid_argument";
    case StatusCode::kUnsupported: return "unsupported";
    case StatusCode::kOutOfMemory: return "out_of_memory";
    case StatusCode::kDeviceError: return "device_error";
    case StatusCode::kCommError: return "comm_error";
    case StatusCode::kIoError: return "io_error";
    case StatusCode::kNotFound: return "not_found";
    case StatusCode::kInternal: return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

Status Status::with_context(std::string_view context) const {
  if (is_ok()) return *this;
  return {code_, std::string(context) + ": " + message_};
}

}  // namespace parity
