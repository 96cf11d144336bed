// Strict JSON reading shared by the catalogue and calibration parsers (internal to src/hw).
// Every error names where it happened as "<origin>: key '<dotted.path>': <what is wrong>".
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>

#include "parity/core/status.hpp"

namespace parity::hw::detail {

using nlohmann::json;

// "<origin>: key '<path>'" — the prefix of every message about one key.
std::string key_context(std::string_view origin, std::string_view key_path);

// A short, single-line rendering of a value for messages: `string "abc"`, `number -4.8`.
std::string describe(const json& value);

// kInvalidArgument unless `value` is an object; `where` names it.
Status expect_object(const json& value, std::string_view where, std::string_view expected_shape);

// Rejects keys of `object` not in `known_keys`, suggesting the nearest known key (typos).
Status check_known_keys(const json& object, std::span<const std::string_view> known_keys,
                        std::string_view origin, std::string_view parent_path);

// Joins a parent path and a key: ("", "a") -> "a", ("a", "b") -> "a.b".
std::string join_key(std::string_view parent_path, std::string_view key);

enum class Emptiness : std::uint8_t { kAllowEmpty, kRequireNonEmpty };

// Required members of a given type; errors name origin, key path and the offending value.
Result<std::string> read_string(const json& object, std::string_view key, std::string_view origin,
                                std::string_view parent_path, Emptiness emptiness);
Result<double> read_number(const json& object, std::string_view key, std::string_view origin,
                           std::string_view parent_path);
// A whole number in [minimum, maximum] (a JSON integer or an integral float such as 132.0;
// at most 2^53 in magnitude, where a double stops holding every integer).
Result<std::int64_t> read_integer(const json& object, std::string_view key, std::string_view origin,
                                  std::string_view parent_path, std::int64_t minimum,
                                  std::int64_t maximum = INT64_MAX);

// Optional members: `fallback` when the key is absent, else the same checks as the reads above
// (an explicit null is a wrong type, not an absent key).
Result<std::string> read_optional_string(const json& object, std::string_view key,
                                         std::string_view origin, std::string_view parent_path,
                                         std::string fallback);
Result<double> read_optional_number(const json& object, std::string_view key,
                                    std::string_view origin, std::string_view parent_path,
                                    double fallback);
Result<std::int64_t> read_optional_integer(const json& object, std::string_view key,
                                           std::string_view origin, std::string_view parent_path,
                                           std::int64_t minimum, std::int64_t maximum,
                                           std::int64_t fallback);
// A finite number in [minimum, maximum]; the message names the range.
Result<double> read_number_in(const json& object, std::string_view key, std::string_view origin,
                              std::string_view parent_path, double minimum, double maximum);

// Requires "schema_version" to be the integer `expected`.
Status check_schema_version(const json& object, std::string_view origin, std::int64_t expected);

// YYYY-MM or YYYY-MM-DD with a real month and day; with `allow_time`, "YYYY-MM-DDT..." too.
enum class DateForm : std::uint8_t { kDateOnly, kDateOrTimestamp };
bool is_valid_date(std::string_view date, DateForm form);

// Parses JSON text; kInvalidArgument naming `origin` and the parser's position when malformed
// (including numbers too large for a double). Never throws.
Result<json> parse_json_text(std::string_view text, std::string_view origin);
// Reads a whole file as text: kNotFound if absent, kIoError if unreadable, kInvalidArgument for
// a directory.
Result<std::string> read_text_file(const std::filesystem::path& path, std::string_view what);
// read_text_file, then parse_json_text with the path as origin.
Result<json> read_json_file(const std::filesystem::path& path);

}  // namespace parity::hw::detail
