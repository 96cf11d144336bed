// One pass over a Criteo line, no allocation: each field is checked as it is converted, character
// by character. Hot spots: log1p of the 13 counts (a table for counts below 4096) and the modulo
// of the 26 ids (32-bit when the table has fewer than 2^32 + 1 rows; none when it has more).
#include <cmath>
#include <cstring>
#include <limits>

#include "parity/data/criteo.hpp"

namespace parity::data {
namespace {

constexpr int kLog1pTableSize = 4096;

constexpr int hex_value(char c) {
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
  PARITY_CHECK_ARG(schema.num_dense == kCriteoDenseColumns, "criteo schema: num_dense ",
                   schema.num_dense, ", expected ", kCriteoDenseColumns);
  PARITY_CHECK_ARG(schema.tables.size() == kCriteoCategoricalColumns,
                   "criteo schema: ", schema.tables.size(), " tables, expected ",
                   kCriteoCategoricalColumns);
  CriteoLineParser parser;
  for (std::size_t t = 0; t < schema.tables.size(); ++t) {
    PARITY_CHECK_ARG(schema.tables[t].ids_per_sample == 1, "criteo schema: table ", t,
                     " ids_per_sample ", schema.tables[t].ids_per_sample,
                     ", expected 1 (Criteo is one-hot)");
    PARITY_CHECK_ARG(schema.tables[t].num_rows >= 2, "criteo schema: table ", t, " num_rows ",
                     schema.tables[t].num_rows,
                     " is out of range [2, ...] (id 0 is reserved for empty values)");
    parser.hashed_rows_.push_back(static_cast<std::uint64_t>(schema.tables[t].num_rows - 1));
  }
  parser.log1p_table_.resize(kLog1pTableSize);
  for (int x = 0; x < kLog1pTableSize; ++x)
    parser.log1p_table_[x] = static_cast<float>(std::log1p(double(x)));
  return parser;
}

namespace {

// Scans a decimal field from p up to a tab or the line end; *field_end gets where it stopped.
// Returns nullptr on success (x = the value, 0 for an empty field), else the reason.
const char* scan_integer(const char* p, const char* end, const char** field_end, std::uint64_t* x,
                         bool* is_negative) {
  *is_negative = p < end && *p == '-';
  const char* digits = p + (*is_negative ? 1 : 0);
  const char* q = digits;
  std::uint64_t value = 0;
  for (; q < end; ++q) {
    const unsigned d = static_cast<unsigned char>(*q) - static_cast<unsigned>('0');
    if (d > 9) break;
    value = value * 10 + d;  // may wrap on overlong fields, which are rejected below
  }
  *field_end = q;
  if (q < end && *q != '\t') return "integer has a non-digit character";
  if (q == digits && *is_negative) return "integer has no digits";
  if (q - digits > kCriteoMaxIntegerDigits) return "integer is overlong (more than 18 digits)";
  *x = value;
  return nullptr;
}

// Hex digit values, -1 for anything else.
struct HexTable {
  std::int8_t value[256];
  constexpr HexTable() : value() {
    for (int c = 0; c < 256; ++c)
      value[c] = static_cast<std::int8_t>(hex_value(static_cast<char>(c)));
  }
};
constexpr HexTable kHex;

const char* scan_hex(const char* p, const char* end, const char** field_end, std::uint32_t* v) {
  std::uint32_t value = 0;
  const char* q = p;
  for (; q < end && *q != '\t'; ++q) {
    const int h = kHex.value[static_cast<unsigned char>(*q)];
    if (h < 0) return "categorical has a non-hex character";
    value = (value << 4) | static_cast<std::uint32_t>(h);
  }
  *field_end = q;
  if (q - p > kCriteoMaxHexDigits) return "categorical is overlong (more than 8 hex digits)";
  *v = value;
  return nullptr;
}

}  // namespace

bool CriteoLineParser::parse(std::string_view line, float* label, float* dense, std::int64_t* ids,
                             std::int64_t ids_stride, Error* error) const {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty()) {
    *error = {-1, "empty line", 0};
    return false;
  }
  const char* p = line.data();
  const char* const end = p + line.size();
  if ((*p != '0' && *p != '1') || (p + 1 < end && p[1] != '\t')) {
    *error = {0, "label is not 0 or 1"};
    return false;
  }
  *label = *p == '1' ? 1.0f : 0.0f;
  const char* field_end = p + 1;
  for (int column = 1; column < kCriteoColumns; ++column) {
    if (field_end == end) {  // the previous field ended the line
      *error = {-1, "too few columns", column};
      return false;
    }
    p = field_end + 1;  // past the tab
    if (column <= kCriteoDenseColumns) {
      std::uint64_t x = 0;
      bool is_negative = false;
      if (const char* why = scan_integer(p, end, &field_end, &x, &is_negative)) {
        *error = {column, why};
        return false;
      }
      float value = 0;  // empty and negative counts are 0
      if (!is_negative && x > 0) {
        value = x < kLog1pTableSize ? log1p_table_[x]
                                    : static_cast<float>(std::log1p(static_cast<double>(x)));
      }
      dense[column - 1] = value;
    } else {
      const int table = column - 1 - kCriteoDenseColumns;
      std::uint32_t v = 0;
      if (const char* why = scan_hex(p, end, &field_end, &v)) {
        *error = {column, why};
        return false;
      }
      std::int64_t id = 0;  // reserved for empty values
      if (field_end != p) {
        const std::uint64_t rows = hashed_rows_[table];
        id = 1 + static_cast<std::int64_t>(rows > std::numeric_limits<std::uint32_t>::max()
                                               ? v
                                               : v % static_cast<std::uint32_t>(rows));
      }
      ids[table * ids_stride] = id;
    }
  }
  if (field_end != end) {  // a tab after column 40
    int found = kCriteoColumns + 1;
    for (const char* c = field_end + 1; c < end; ++c) found += *c == '\t' ? 1 : 0;
    *error = {-1, "too many columns", found};
    return false;
  }
  return true;
}

std::string CriteoLineParser::describe(const Error& error) {
  if (error.column < 0)
    return detail::concat(error.what, " (found ", error.found_columns, ", expected ",
                          kCriteoColumns, ")");
  return detail::concat("column ", error.column + 1, " (", column_name(error.column),
                        "): ", error.what);
}

}  // namespace parity::data
