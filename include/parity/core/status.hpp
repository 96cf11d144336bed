// Status and Result<T>: how every library function reports failure. The library never exits,
// aborts or throws across its API; only tools/parity turns a Status into text and an exit code.
#pragma once

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace parity {

enum class StatusCode : std::uint8_t {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong (names parameter, actual, expected)
  kUnsupported,      // valid input this build/hardware cannot run (CLI exit code 3)
  kOutOfMemory,
  kDeviceError,  // a CUDA/HIP runtime or library call failed
  kCommError,
  kIoError,
  kNotFound,
  kInternal,  // a broken invariant inside the library
};

std::string_view status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: <message>"
  std::string to_string() const;

  // Adds context in front of the message, keeping the code: "tbe_forward: <message>".
  Status with_context(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

namespace detail {
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}
}  // namespace detail

template <typename... Args>
Status invalid_argument(Args&&... args) {
  return {StatusCode::kInvalidArgument, detail::concat(std::forward<Args>(args)...)};
}
template <typename... Args>
Status unsupported(Args&&... args) {
  return {StatusCode::kUnsupported, detail::concat(std::forward<Args>(args)...)};
}
template <typename... Args>
Status io_error(Args&&... args) {
  return {StatusCode::kIoError, detail::concat(std::forward<Args>(args)...)};
}
template <typename... Args>
Status not_found(Args&&... args) {
  return {StatusCode::kNotFound, detail::concat(std::forward<Args>(args)...)};
}
template <typename... Args>
Status device_error(Args&&... args) {
  return {StatusCode::kDeviceError, detail::concat(std::forward<Args>(args)...)};
}
template <typename... Args>
Status internal_error(Args&&... args) {
  return {StatusCode::kInternal, detail::concat(std::forward<Args>(args)...)};
}

// A value or the Status explaining why there is none (std::expected is C++23).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : storage_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : storage_(std::move(status)) {
    if (std::get<Status>(storage_).is_ok()) {
      storage_ = Status(StatusCode::kInternal, "Result constructed from an ok Status without a value");
    }
  }

  bool is_ok() const { return std::holds_alternative<T>(storage_); }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<Status>(storage_);
  }
  T& value() & { return std::get<T>(storage_); }
  const T& value() const& { return std::get<T>(storage_); }
  T&& value() && { return std::get<T>(std::move(storage_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> storage_;
};

}  // namespace parity

#define PARITY_CONCAT_INNER(a, b) a##b
#define PARITY_CONCAT(a, b) PARITY_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not ok.
#define PARITY_RETURN_IF_ERROR(expr)                        \
  do {                                                      \
    ::parity::Status parity_status_ = (expr);               \
    if (!parity_status_.is_ok()) return parity_status_;     \
  } while (0)

// `PARITY_ASSIGN_OR_RETURN(auto x, make_x())`: unwraps a Result or returns its Status.
#define PARITY_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto PARITY_CONCAT(parity_result_, __LINE__) = (expr);                     \
  if (!PARITY_CONCAT(parity_result_, __LINE__).is_ok())                      \
    return PARITY_CONCAT(parity_result_, __LINE__).status();                 \
  lhs = std::move(PARITY_CONCAT(parity_result_, __LINE__)).value()

// Argument check: returns kInvalidArgument with the streamed message when `cond` fails.
#define PARITY_CHECK_ARG(cond, ...)                                       \
  do {                                                                    \
    if (!(cond)) return ::parity::invalid_argument(__VA_ARGS__);          \
  } while (0)
