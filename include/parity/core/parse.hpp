// Strict text-to-number parsing for every reader and the CLI: the whole field must be the number
// ("64x", "1e3" and "64.5" are not 64), in range, and finite. Errors name the field and the text.
#pragma once

#include <cstdint>
#include <string_view>

#include "parity/core/status.hpp"

namespace parity {

// Decimal integer, optional leading '-', no spaces, within [min_value, max_value].
Result<std::int64_t> parse_int64(std::string_view text, std::string_view field_name,
                                 std::int64_t min_value = INT64_MIN, std::int64_t max_value = INT64_MAX);
Result<std::uint64_t> parse_uint64(std::string_view text, std::string_view field_name);
// Finite decimal or scientific floating-point value (no "nan", "inf", hex floats or spaces).
Result<double> parse_double(std::string_view text, std::string_view field_name);

}  // namespace parity
