#include "hw/json_checks.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

namespace parity::hw::detail {

std::string key_context(std::string_view origin, std::string_view key_path) {
  return ::parity::detail::concat(origin, ": key '", key_path, "'");
}

std::string join_key(std::string_view parent_path, std::string_view key) {
  if (parent_path.empty()) return std::string(key);
  return ::parity::detail::concat(parent_path, ".", key);
}

std::string describe(const json& value) {
  constexpr std::size_t kMaxChars = 60;
  std::string text = value.dump();
  if (text.size() > kMaxChars) text = text.substr(0, kMaxChars) + "...";
  return ::parity::detail::concat(value.type_name(), " ", text);
}

Status expect_object(const json& value, std::string_view where, std::string_view expected_shape) {
  if (value.is_object()) return Status::ok();
  return invalid_argument(where, ": expected ", expected_shape, ", got ", describe(value));
}

namespace {

// Levenshtein distance, for "did you mean" on unknown keys.
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({above + 1, row[j - 1] + 1, substitution});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

Status check_known_keys(const json& object, std::span<const std::string_view> known_keys,
                        std::string_view origin, std::string_view parent_path) {
  for (const auto& item : object.items()) {
    const std::string& key = item.key();
    if (std::find(known_keys.begin(), known_keys.end(), key) != known_keys.end()) continue;
    std::string_view nearest;
    std::size_t nearest_distance = std::numeric_limits<std::size_t>::max();
    for (std::string_view candidate : known_keys) {
      const std::size_t distance = edit_distance(key, candidate);
      if (distance < nearest_distance) {
        nearest_distance = distance;
        nearest = candidate;
      }
    }
    std::ostringstream message;
    message << origin << ": unknown key '" << join_key(parent_path, key) << "' (value "
            << describe(item.value()) << ")";
    // Only suggest when the key is plausibly a typo of the candidate.
    if (nearest_distance <= std::max<std::size_t>(2, nearest.size() / 4)) {
      message << "; did you mean '" << join_key(parent_path, nearest) << "'?";
    } else {
      message << "; known keys:";
      for (std::string_view candidate : known_keys) message << " " << candidate;
    }
    return {StatusCode::kInvalidArgument, message.str()};
  }
  return Status::ok();
}

namespace {

Result<const json*> find_member(const json& object, std::string_view key, std::string_view origin,
                                std::string_view parent_path) {
  const auto it = object.find(std::string(key));
  if (it == object.end()) {
    return invalid_argument(origin, ": missing required key '", join_key(parent_path, key), "'");
  }
  return &*it;
}

}  // namespace

Result<std::string> read_string(const json& object, std::string_view key, std::string_view origin,
                                std::string_view parent_path, Emptiness emptiness) {
  PARITY_ASSIGN_OR_RETURN(const json* value, find_member(object, key, origin, parent_path));
  // Messages are built only on failure: readers run in tight fuzz loops and on every load.
  const auto where = [&] { return key_context(origin, join_key(parent_path, key)); };
  if (!value->is_string())
    return invalid_argument(where(), ": expected a string, got ", describe(*value));
  std::string text = value->get<std::string>();
  if (emptiness == Emptiness::kRequireNonEmpty && text.empty()) {
    return invalid_argument(where(), ": expected a non-empty string, got \"\"");
  }
  return text;
}

Result<double> read_number(const json& object, std::string_view key, std::string_view origin,
                           std::string_view parent_path) {
  PARITY_ASSIGN_OR_RETURN(const json* value, find_member(object, key, origin, parent_path));
  const auto where = [&] { return key_context(origin, join_key(parent_path, key)); };
  if (!value->is_number())
    return invalid_argument(where(), ": expected a number, got ", describe(*value));
  const double number = value->get<double>();
  if (!std::isfinite(number))
    return invalid_argument(where(), ": expected a finite number, got ", number);
  return number;
}

Result<std::int64_t> read_integer(const json& object, std::string_view key, std::string_view origin,
                                  std::string_view parent_path, std::int64_t minimum,
                                  std::int64_t maximum) {
  PARITY_ASSIGN_OR_RETURN(const double number, read_number(object, key, origin, parent_path));
  const auto where = [&] { return key_context(origin, join_key(parent_path, key)); };
  // 2^53: beyond it a double no longer holds every integer, so "integral" means nothing.
  constexpr double kMaxExactInteger = 9007199254740992.0;
  if (number != std::floor(number) || std::fabs(number) > kMaxExactInteger) {
    return invalid_argument(where(), ": expected a whole number, got ",
                            describe(*object.find(std::string(key))));
  }
  const auto integer = static_cast<std::int64_t>(number);
  if (integer < minimum || integer > maximum) {
    if (maximum == INT64_MAX) {
      return invalid_argument(where(), ": value ", integer, " must be >= ", minimum);
    }
    return invalid_argument(where(), ": value ", integer, " is out of range [", minimum, ", ",
                            maximum, "]");
  }
  return integer;
}

Result<double> read_number_in(const json& object, std::string_view key, std::string_view origin,
                              std::string_view parent_path, double minimum, double maximum) {
  PARITY_ASSIGN_OR_RETURN(const double number, read_number(object, key, origin, parent_path));
  if (number < minimum || number > maximum) {
    return invalid_argument(key_context(origin, join_key(parent_path, key)), ": value ", number,
                            " is out of range [", minimum, ", ", maximum, "]");
  }
  return number;
}

Result<std::string> read_optional_string(const json& object, std::string_view key,
                                         std::string_view origin, std::string_view parent_path,
                                         std::string fallback) {
  if (!object.contains(std::string(key))) return fallback;
  return read_string(object, key, origin, parent_path, Emptiness::kAllowEmpty);
}

Result<double> read_optional_number(const json& object, std::string_view key,
                                    std::string_view origin, std::string_view parent_path,
                                    double fallback) {
  if (!object.contains(std::string(key))) return fallback;
  return read_number(object, key, origin, parent_path);
}

Result<std::int64_t> read_optional_integer(const json& object, std::string_view key,
                                           std::string_view origin, std::string_view parent_path,
                                           std::int64_t minimum, std::int64_t maximum,
                                           std::int64_t fallback) {
  if (!object.contains(std::string(key))) return fallback;
  return read_integer(object, key, origin, parent_path, minimum, maximum);
}

Status check_schema_version(const json& object, std::string_view origin, std::int64_t expected) {
  PARITY_ASSIGN_OR_RETURN(const std::int64_t version,
                          read_integer(object, "schema_version", origin, "", 1));
  if (version != expected) {
    return invalid_argument(key_context(origin, "schema_version"), ": value ", version,
                            " is not supported; expected ", expected);
  }
  return Status::ok();
}

bool is_valid_date(std::string_view date, DateForm form) {
  const auto digits = [&](std::size_t begin, std::size_t count) {
    if (date.size() < begin + count) return false;
    for (std::size_t i = begin; i < begin + count; ++i) {
      if (!std::isdigit(static_cast<unsigned char>(date[i]))) return false;
    }
    return true;
  };
  const auto number = [&](std::size_t begin, std::size_t count) {
    int value = 0;
    for (std::size_t i = begin; i < begin + count; ++i) value = value * 10 + (date[i] - '0');
    return value;
  };
  if (!digits(0, 4) || date.size() < 7 || date[4] != '-' || !digits(5, 2)) return false;
  const int month = number(5, 2);
  if (month < 1 || month > 12) return false;
  if (date.size() == 7) return true;
  if (date.size() < 10 || date[7] != '-' || !digits(8, 2)) return false;
  const int day = number(8, 2);
  if (day < 1 || day > 31) return false;
  if (date.size() == 10) return true;
  return form == DateForm::kDateOrTimestamp && date[10] == 'T';
}

Result<json> parse_json_text(std::string_view text, std::string_view origin) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    // parse_error carries "at line L, column C"; out_of_range 406 is a number too large.
    return invalid_argument(origin, ": malformed JSON: ", e.what());
  }
}

Result<std::string> read_text_file(const std::filesystem::path& path, std::string_view what) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return not_found(path.string(), ": no such file");
  if (std::filesystem::is_directory(path, error)) {
    return invalid_argument(path.string(), ": expected ", what, ", got a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path.string(), ": cannot open for reading");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return io_error(path.string(), ": read failed");
  return text.str();
}

Result<json> read_json_file(const std::filesystem::path& path) {
  PARITY_ASSIGN_OR_RETURN(const std::string text, read_text_file(path, "a JSON file"));
  return parse_json_text(text, path.string());
}

}  // namespace parity::hw::detail
