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
// A whole number >= minimum (given as JSON integer or an integral float such as 132.0).
Result<std::int64_t> read_integer(const json& object, std::string_view key, std::string_view origin,
                                  std::string_view parent_path, std::int64_t minimum);

// Requires "schema_version" to be the integer `expected`.
Status check_schema_version(const json& object, std::string_view origin, std::int64_t expected);

// YYYY-MM or YYYY-MM-DD with a real month and day; with `allow_time`, "YYYY-MM-DDT..." too.
enum class DateForm : std::uint8_t { kDateOnly, kDateOrTimestamp };
bool is_valid_date(std::string_view date, DateForm form);

// Reads and parses a JSON file: kNotFound if absent, kIoError if unreadable, kInvalidArgument
// with the parser's line/column if malformed.
Result<json> read_json_file(const std::filesystem::path& path);

}  // namespace parity::hw::detail
