// One pass over a Criteo line, no allocation: each field is found with memchr and checked as it
// is converted. Hot spots: log1p of the 13 counts (a table for counts below 4096) and the modulo
// of the 26 ids (32-bit when the table has fewer than 2^32 + 1 rows; none when it has more).
#include <cmath>
#include <cstring>
#include <limits>

#include "parity/data/criteo.hpp"

namespace parity::data {
namespace {

constexpr int kLog1pTableSize = 4096;

const char* find_tab(const char* begin, const char* end) {
  const void* tab = std::memchr(begin, '\t', static_cast<std::size_t>(end - begin));
  return tab != nullptr ? static_cast<const char*>(tab) : end;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string column_name(int column) {
  if (column == 0) return "label";
  if (column <= kCriteoDenseColumns) return detail::concat('I', column);
  return detail::concat('C', column - kCriteoDenseColumns);
}

}  // namespace

Result<CriteoLineParser> CriteoLineParser::create(const DatasetSchema& schema) {
  PARITY_RETURN_IF_ERROR(schema.validate());
  PARITY_CHECK_ARG(schema.num_dense == kCriteoDenseColumns, "criteo schema: num_dense ", schema.num_dense,
                   ", expected ", kCriteoDenseColumns);
  PARITY_CHECK_ARG(schema.tables.size() == kCriteoCategoricalColumns, "criteo schema: ", schema.tables.size(),
                   " tables, expected ", kCriteoCategoricalColumns);
  CriteoLineParser parser;
  for (std::size_t t = 0; t < schema.tables.size(); ++t) {
    PARITY_CHECK_ARG(schema.tables[t].ids_per_sample == 1, "criteo schema: table ", t, " ids_per_sample ",
                     schema.tables[t].ids_per_sample, ", expected 1 (Criteo is one-hot)");
    PARITY_CHECK_ARG(schema.tables[t].num_rows >= 2, "criteo schema: table ", t, " num_rows ",
                     schema.tables[t].num_rows, " is out of range [2, ...] (id 0 is reserved for empty values)");
    parser.hashed_rows_.push_back(static_cast<std::uint64_t>(schema.tables[t].num_rows - 1));
  }
  parser.log1p_table_.resize(kLog1pTableSize);
  for (int x = 0; x < kLog1pTableSize; ++x) parser.log1p_table_[x] = static_cast<float>(std::log1p(double(x)));
  return parser;
}

bool CriteoLineParser::parse(std::string_view line, float* label, float* dense, std::int64_t* ids,
                             std::int64_t ids_stride, Error* error) const {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const char* p = line.data();
  const char* const end = p + line.size();
  if (line.empty()) {
    *error = {-1, "empty line", 0};
    return false;
  }
  bool is_line_done = false;
  for (int column = 0; column < kCriteoColumns; ++column) {
    if (is_line_done) {  // the previous field ended the line
      *error = {-1, "too few columns", column};
      return false;
    }
    const char* field_end = find_tab(p, end);
    const auto length = field_end - p;
    if (column == 0) {
      if (length != 1 || (*p != '0' && *p != '1')) {
        *error = {0, "label is not 0 or 1"};
        return false;
      }
      *label = *p == '1' ? 1.0f : 0.0f;
    } else if (column <= kCriteoDenseColumns) {
      float value = 0;
      if (length > 0) {
        const bool negative = *p == '-';
        const char* digit = p + (negative ? 1 : 0);
        const auto digits = field_end - digit;
        if (digits == 0 || digits > kCriteoMaxIntegerDigits) {
          *error = {column, digits == 0 ? "integer has no digits" : "integer is overlong (more than 18 digits)"};
          return false;
        }
        std::int64_t x = 0;
        for (; digit < field_end; ++digit) {
          const unsigned d = static_cast<unsigned>(*digit - '0');
          if (d > 9) {
            *error = {column, "integer has a non-digit character"};
            return false;
          }
          x = x * 10 + d;
        }
        if (!negative && x > 0) {  // negative counts clamp to 0
          value = x < kLog1pTableSize ? log1p_table_[x] : static_cast<float>(std::log1p(static_cast<double>(x)));
        }
      }
      dense[column - 1] = value;
    } else {
      const int table = column - 1 - kCriteoDenseColumns;
      std::int64_t id = 0;  // reserved for empty values
      if (length > 0) {
        if (length > kCriteoMaxHexDigits) {
          *error = {column, "categorical is overlong (more than 8 hex digits)"};
          return false;
        }
        std::uint32_t v = 0;
        for (const char* c = p; c < field_end; ++c) {
          const int h = hex_value(*c);
          if (h < 0) {
            *error = {column, "categorical has a non-hex character"};
            return false;
          }
          v = (v << 4) | static_cast<std::uint32_t>(h);
        }
        const std::uint64_t rows = hashed_rows_[table];
        const std::uint64_t hashed = rows > std::numeric_limits<std::uint32_t>::max()
                                         ? v
                                         : v % static_cast<std::uint32_t>(rows);
        id = 1 + static_cast<std::int64_t>(hashed);
      }
      ids[table * ids_stride] = id;
    }
    is_line_done = field_end == end;
    if (!is_line_done) p = field_end + 1;
  }
  if (!is_line_done) {  // a tab after column 40
    int found = kCriteoColumns + 1;
    for (const char* c = p; c < end; ++c) found += *c == '\t' ? 1 : 0;
    *error = {-1, "too many columns", found};
    return false;
  }
  return true;
}

std::string CriteoLineParser::describe(const Error& error) {
  if (error.column < 0) return detail::concat(error.what, " (found ", error.found_columns, ", expected ", kCriteoColumns, ")");
  return detail::concat("column ", error.column + 1, " (", column_name(error.column), "): ", error.what);
}

}  // namespace parity::data
