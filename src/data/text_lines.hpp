// Lines of a text file, plain or gzip (zlib reads both), through one large buffer; tracks the
// 1-based line number and flags lines longer than kCriteoMaxLineBytes instead of growing without
// bound. Also the bad-line bookkeeping shared by the TSV reader and the converter.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "parity/data/dataset.hpp"

namespace parity::data {

class TextLineSource {
 public:
  static Result<std::unique_ptr<TextLineSource>> open(const std::string& path);
  ~TextLineSource();
  TextLineSource(const TextLineSource&) = delete;
  TextLineSource& operator=(const TextLineSource&) = delete;
  /// The next line without its '\n'; false at the end. An overlong line comes back empty with
  /// *is_overlong set, and is skipped.
  Result<bool> next(std::string_view* line, bool* is_overlong);
  std::int64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }

 private:
  TextLineSource() = default;
  Status refill();
  Status skip_rest_of_line();

  std::string path_;
  gzFile file_ = nullptr;
  std::vector<char> buffer_;
  std::size_t begin_ = 0, end_ = 0;
  bool is_eof_ = false;
  std::int64_t line_number_ = 0;
};

/// Counts bad lines, keeps the first few, and fails once there are more than max_bad_lines.
class BadLineTracker {
 public:
  static constexpr std::size_t kKeptLines = 20;
  explicit BadLineTracker(std::int64_t max_bad_lines) : max_bad_lines_(max_bad_lines) {}
  Status add(const std::string& path, std::int64_t line_number, const std::string& reason);
  std::int64_t count() const { return count_; }
  const std::vector<BadLine>& first_lines() const { return first_; }

 private:
  std::int64_t max_bad_lines_;
  std::int64_t count_ = 0;
  std::vector<BadLine> first_;
};

}  // namespace parity::data
