#include "parity/core/parse.hpp"

#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

namespace parity {

Result<std::int64_t> parse_int64(std::string_view text, std::string_view field_name,
                                 std::int64_t min_value, std::int64_t max_value) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    return invalid_argument(field_name, ": '", text, "' is not an integer");
  }
  if (ec == std::errc::result_out_of_range || value < min_value || value > max_value) {
    return invalid_argument(field_name, ": ", text, " is out of range [", min_value, ", ", max_value, "]");
  }
  return value;
}

Result<std::uint64_t> parse_uint64(std::string_view text, std::string_view field_name) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  if (!text.empty() && text.front() == '-') {
    return invalid_argument(field_name, ": ", text, " is negative (expected an unsigned integer)");
  }
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    return invalid_argument(field_name, ": '", text, "' is not an unsigned integer");
  }
  if (ec == std::errc::result_out_of_range) {
    return invalid_argument(field_name, ": ", text, " does not fit 64 bits");
  }
  return value;
}

Result<double> parse_double(std::string_view text, std::string_view field_name) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (text.empty() || ec == std::errc::invalid_argument || ptr != end) {
    return invalid_argument(field_name, ": '", text, "' is not a number");
  }
  if (ec == std::errc::result_out_of_range || !std::isfinite(value)) {
    return invalid_argument(field_name, ": ", text, " is not a finite number");
  }
  return value;
}

}  // namespace parity
